"""Which test checks each supported NKI name (against numpy, or the documented value or example): recorded on the
registry's entries (registry.checked_by) for the coverage table, docs/nki-api.md. tests/python/test_nki_api_coverage.py
fails when a supported name has no test here, or when the named test does not exist or does not use the name.
Imported by coverage.py, after every API module has registered its names. A definition that replaces a refusal
adds its line here."""
from . import registry

_ALLOC = "placed as written, the placement checked (docs/nki-lowering.md 2)"
_AUTO = "placed by neuronsim's allocator, by liveness (docs/nki-lowering.md 2)"
_NO_PASSES = "accepted; neuronsim's lowering has no such compiler pass"

_TESTS = {
    # tests/python/test_nki_language.py: nl calls against numpy
    "test_nki_language.py::test_unary": ("nki.language", "cos floor ceil negative"),
    "test_nki_language.py::test_binary": ("nki.language", "add subtract multiply divide maximum minimum equal not_equal "
                                          "greater greater_equal less less_equal logical_and logical_or logical_xor "
                                          "bitwise_and bitwise_or bitwise_xor left_shift right_shift"),
    "test_nki_language.py::test_power": ("nki.language", "power"),
    "test_nki_language.py::test_reductions_keepdims": ("nki.language", "sum max min prod mean"),
    "test_nki_language.py::test_creation_zeros_ones_full_and_likes": ("nki.language", "zeros full zeros_like "
                                                                      "ones_like"),
    "test_nki_language.py::test_copy_with_dtype_rounds_to_bf16": ("nki.language", "copy"),
    "test_nki_language.py::test_matmul_transpose_x_and_plain": ("nki.language", "matmul"),
    "test_nki_language.py::test_transpose_on_pe": ("nki.language", "transpose"),
    "test_nki_language.py::test_load_transpose2d": ("nki.language", "load_transpose2d"),
    "test_nki_language.py::test_broadcast_to_free_and_partitions": ("nki.language", "broadcast_to"),
    "test_nki_language.py::test_where": ("nki.language", "where"),
    "test_nki_language.py::test_arange_mgrid_ds_indexing_and_mask": ("nki.language", "arange ds"),
    "test_nki_language.py::test_static_and_python_ranges_unroll_sequential_range_loops":
        ("nki.language", "static_range sequential_range"),
    ("test_nki_language.py::test_a_loop_mask_that_always_holds_clips_nothing_one_that_does_not_peels_the_trips_it_"
     "clips"): ("nki.language", "affine_range"),
    # tests/python/test_nki_lowering.py: the lowering of masks, split loops, reductions over loops, DMA transposes
    "test_nki_lowering.py::test_loop_reduce_into_a_tile_nothing_initialised": ("nki.language", "loop_reduce"),
    "test_nki_language.py::test_device_print_prints_the_tile": ("nki.language", "device_print"),
    "test_nki_language.py::test_launch_grid_program_id_runs_each_instance": ("nki.language", "program_id "
                                                                             "num_programs"),
    "test_nki_language.py::test_shared_constant_data_reaches_the_run": ("nki.language", "shared_constant"),
    "test_nki_language.py::test_low_precision_dtypes_round_as_the_simulator_does": ("nki.language", "int8"),
    "test_nki_language.py::test_fori_loop_is_one_bir_loop": ("nki.language", "fori_loop"),
    # tests/python/test_nki_activations.py: every activation function, as a value and lowered
    "test_nki_activations.py::test_every_activation_function_lowers_and_matches_numpy":
        ("nki.language", "exp log tanh sigmoid relu sqrt rsqrt erf sin arctan sign square abs softplus mish silu gelu "
                         "gelu_apprx_tanh gelu_apprx_sigmoid gelu_dx gelu_apprx_sigmoid_dx erf_dx silu_dx reciprocal"),
    "test_nki_activations.py::test_prelu_bypass_average_are_operator_values_not_calls": ("nki.language",
                                                                                         "prelu bypass average"),
    # tests/python/test_nki_names.py: values
    "test_nki_names.py::test_dtypes_are_names_hashable_and_numpy_compatible":
        ("nki.language", "float32 float16 bfloat16 int32 bool_ float8_e4m3 float8_e4m3fn float8_e5m2 load store "
                         "ndarray shared_hbm"),
    "test_nki_names.py::test_every_dtype_has_its_bir_type_and_size":
        ("nki.language", "tfloat32 uint32 uint16 uint8 int16 float8_e8m0fnu float8_e5m2_x4 float8_e4m3fn_x4 "
                         "float4_e2m1fn_x4"),
    "test_nki_names.py::test_nki_dtype_is_the_type_of_the_dtypes_for_annotations": ("nki.language", "DType"),
    "test_nki_names.py::test_tile_size_has_the_documented_values": ("nki.language", "tile_size _TileSize"),
    "test_nki_names.py::test_nkiobject_subclasses_are_built_like_dataclasses": ("nki.language", "NKIObject"),
    "test_nki_names.py::test_memory_regions_legacy_constants_and_finfo":
        ("nki.language", "MemoryRegion sbuf psum hbm is_hbm is_sbuf is_on_chip fp32 bfp16 finfo static_cast mgrid"),
    "test_nki_names.py::test_legacy_tensor_members_nkitensor_and_validation_errors": ("nki.language",
                                                                                      "NkiTensor"),
    "test_nki_names.py::test_more_creation_logic_and_grid_calls":
        ("nki.language", "logical_not invert bitwise_not shared_identity_matrix empty_like program_ndim par_dim all "
                         "any private_hbm is_psum ones full_like"),
    "test_nki_names.py::test_jit_options_and_compiler_directives_leave_the_result_alone": ("nki.language",
                                                                                           "no_reorder"),
}
_TESTS_OTHER = [
    ("test_nki_names.py::test_all_reduce_across_the_cores_of_a_logical_core", "nki.language", "nc"),
    ("test_nki_names.py::test_all_reduce_across_the_cores_of_a_logical_core", "nki.collectives",
     "all_reduce ReplicaGroup"),
    ("test_nki_isa.py::test_select", "nki.isa", "select"),
    ("test_nki_lowering.py::test_dma_transpose", "nki.isa", "dma_transpose"),
    ("test_nki_names.py::test_nkiobject_subclasses_are_built_like_dataclasses", "nki.collectives", "NKIObject"),
    ("test_nki_names.py::test_nkiobject_subclasses_are_built_like_dataclasses", "nki.isa", "NKIObject"),
    # nki.isa: the dst-first positional form of every lowered function, and the enums and values
    ("test_nki_dst_first.py::test_dma_copy_tensor_copy_memset_and_reciprocal", "nki.isa",
     "dma_copy tensor_copy memset reciprocal"),
    ("test_nki_dst_first.py::test_tensor_tensor_tensor_scalar_and_scalar_tensor_tensor", "nki.isa",
     "tensor_tensor tensor_scalar scalar_tensor_tensor"),
    ("test_nki_dst_first.py::test_activation_activation_reduce_and_tensor_scalar_reduce", "nki.isa",
     "activation activation_reduce tensor_scalar_reduce"),
    ("test_nki_dst_first.py::test_tensor_reduce_tensor_tensor_scan_and_nc_transpose", "nki.isa",
     "tensor_reduce tensor_tensor_scan nc_transpose"),
    ("test_nki_dst_first.py::test_nc_matmul_bn_stats_and_bn_aggr", "nki.isa", "nc_matmul bn_stats bn_aggr"),
    ("test_nki_dst_first.py::test_iota_and_affine_select_with_patterns", "nki.isa", "iota affine_select"),
    ("test_nki_names.py::test_enums_have_the_reference_members_and_values_per_generation", "nki.isa",
     "engine reduce_cmd dge_mode oob_mode matmul_perf_mode nc_version dma_engine"),
    ("test_nki_names.py::test_dge_mode_follows_each_generation_and_constants_submodules_import", "nki.isa",
     "tensor_engine vector_engine"),
    ("test_nki_isa.py::test_tensor_tensor", "nki.isa", "gpsimd_engine"),
    ("test_nki_isa.py::test_tensor_copy", "nki.isa", "scalar_engine"),
    ("test_nki_names.py::test_dge_mode_follows_each_generation_and_constants_submodules_import", "nki.isa",
     "unknown_engine"),
    ("test_nki_names.py::test_memory_regions_legacy_constants_and_finfo", "nki.isa", "fp32"),
    ("test_nki_names.py::test_get_nc_version_is_the_traced_architecture_and_nc_version_is_ordered", "nki.isa",
     "get_nc_version"),
    ("test_nki_names.py::test_legacy_tensor_members_nkitensor_and_validation_errors", "nki.isa",
     "NkiValidationError"),
    # issue 37's instructions: tests/python/test_nki_isa_<topic>.py and test_nki_nl_more.py against numpy
    ("test_nki_isa_mx.py::test_nc_matmul_mx_of_two_quantized_tiles", "nki.isa", "quantize_mx nc_matmul_mx"),
    ("test_nki_isa_accum.py::test_activate2_stages_relu_param_and_reduce", "nki.isa", "activate2"),
    ("test_nki_isa_accum.py::test_exponential_with_a_running_sum_over_two_tiles_and_load_reduce", "nki.isa",
     "exponential"),
    ("test_nki_isa_accum.py::test_tensor_scalar_cumulative_reset_load_and_continue", "nki.isa",
     "tensor_scalar_cumulative"),
    ("test_nki_isa_select.py::test_max8_both_forms", "nki.isa", "max8"),
    ("test_nki_isa_select.py::test_find_index8_and_match_replace8_pair_duplicates_as_the_pages_say", "nki.isa",
     "nc_find_index8 nc_match_replace8"),
    ("test_nki_isa_select.py::test_range_select_and_a_chained_reduce", "nki.isa", "range_select"),
    ("test_nki_isa_select.py::test_select_reduce_with_a_column_on_false_and_reverse_pred", "nki.isa",
     "select_reduce"),
    ("test_nki_isa_select.py::test_tensor_copy_predicated_of_a_tile_and_of_a_number", "nki.isa",
     "tensor_copy_predicated"),
    ("test_nki_isa_select.py::test_sequence_bounds_the_pages_example", "nki.isa", "sequence_bounds"),
    ("test_nki_isa_select.py::test_nonzero_with_count_reads_and_writes_every_16th_partition", "nki.isa",
     "nonzero_with_count"),
    ("test_nki_isa_move.py::test_nc_stream_shuffle_per_quadrant_and_broadcast", "nki.isa", "nc_stream_shuffle"),
    ("test_nki_isa_move.py::test_nc_n_gather_and_gather_flattened", "nki.isa", "nc_n_gather"),
    ("test_nki_isa_move.py::test_nc_n_gather_and_gather_flattened", "nki.language", "gather_flattened"),
    ("test_nki_isa_move.py::test_local_gather_the_pages_numpy_semantics", "nki.isa", "local_gather"),
    ("test_nki_isa_move.py::test_tensor_partition_reduce", "nki.isa", "tensor_partition_reduce",
     "float data (PE transposes around a TensorReduce)"),
    ("test_nki_isa_move.py::test_dma_compute_adds_hbm_sources", "nki.isa", "dma_compute"),
    ("test_nki_isa_random.py::test_rand2_rng_and_get_state_follow_the_state_set", "nki.isa",
     "rand2 rng rand_set_state rand_get_state", "the simulator's XORWOW stream; engine=vector only"),
    ("test_nki_isa_random.py::test_dropout_zeroes_where_the_draw_is_below_the_probability", "nki.isa", "dropout",
     "the simulator's XORWOW stream"),
    ("test_nki_isa_random.py::test_dropout_zeroes_where_the_draw_is_below_the_probability", "nki.language",
     "dropout", "the simulator's XORWOW stream"),
    ("test_nki_isa_random.py::test_nl_rand_is_uniform_in_0_1", "nki.language", "rand",
     "the simulator's XORWOW stream"),
    ("test_nki_nl_more.py::test_abs_max_and_abs_min_keep_the_sign_and_break_ties_to_y", "nki.language",
     "abs_max abs_min"),
    ("test_nki_nl_more.py::test_fmod_mod_trunc", "nki.language", "fmod mod trunc"),
    ("test_nki_nl_more.py::test_tan", "nki.language", "tan"),
    ("test_nki_nl_more.py::test_softmax_and_var_along_the_free_axis", "nki.language", "softmax var"),
    ("test_nki_nl_more.py::test_rms_norm", "nki.language", "rms_norm"),
    # nki.typing, nki.compiler, nki
    ("test_nki_names.py::test_simulate_callable_form_and_typing_placeholders", "nki.typing", "tensor"),
    ("test_nki_names.py::test_legacy_tensor_members_nkitensor_and_validation_errors", "nki.typing", "mutable_tensor"),
    ("test_nki_names.py::test_jit_options_and_compiler_directives_leave_the_result_alone", "nki.compiler",
     "skip_middle_end_transformations enable_stack_allocator no_reorder allocation_scope", _NO_PASSES),
    ("test_nki_names.py::test_jit_options_and_compiler_directives_leave_the_result_alone", "nki.compiler", "sbuf",
     _AUTO),
    ("test_nki_alloc.py::test_explicit_placement_is_where_the_kernel_says", "nki.compiler.sbuf", "mod_alloc", _ALLOC),
    ("test_nki_alloc.py::test_force_auto_alloc_ignores_the_placement", "nki.compiler", "force_auto_alloc",
     "the kernel's explicit placements are ignored: the allocator places every tile (docs/nki-lowering.md 2)"),
    ("test_nki_names.py::test_compiler_allocations_of_both_memories_are_placed_by_neuronsim", "nki.compiler",
     "multi_buffer", "accepted; neuronsim's allocator chooses each loop's buffers (docs/nki-lowering.md 2)"),
    ("test_nki_names.py::test_compiler_allocations_of_both_memories_are_placed_by_neuronsim", "nki.compiler", "psum",
     _AUTO),
    ("test_nki_names.py::test_compiler_allocations_of_both_memories_are_placed_by_neuronsim", "nki.compiler.sbuf",
     "auto_alloc", _AUTO),
    ("test_nki_alloc.py::test_alloc_function_places_each_block", "nki.compiler.sbuf", "alloc", _ALLOC),
    ("test_nki_names.py::test_compiler_allocations_of_both_memories_are_placed_by_neuronsim", "nki.compiler.psum",
     "auto_alloc", _AUTO),
    ("test_nki_alloc.py::test_alloc_function_places_each_block", "nki.compiler.psum", "alloc", _ALLOC),
    ("test_nki_alloc.py::test_explicit_placement_is_where_the_kernel_says", "nki.compiler.psum", "mod_alloc", _ALLOC),
    ("test_nki_names.py::test_jit_options_and_compiler_directives_leave_the_result_alone", "nki",
     "jit:mode jit:debug_kernel jit:show_compiler_tb jit:experimental_flags", "accepted; changes nothing here"),
    ("test_nki_names.py::test_jit_options_and_compiler_directives_leave_the_result_alone", "nki", "baremetal"),
    ("test_nki_names.py::test_platform_target_option_picks_the_architecture", "nki", "jit"),
    ("test_nki_names.py::test_platform_target_option_picks_the_architecture", "nki", "jit:platform_target",
     "the architecture of the run and the trace (simulate, benchmark, to_bir; the CLI takes --arch)"),
    ("test_nki_language.py::test_launch_grid_program_id_runs_each_instance", "nki", "jit:kernel[grid]",
     "@nki.jit (current): kernel[g0, g1] a tuple grid, instances one after the other; neuronxcc.nki.jit (legacy): "
     "kernel[n] too"),
    ("test_nki_multicore.py::test_shard_branches_do_different_work_per_shard", "nki", "jit:kernel[lnc]",
     "@nki.jit: kernel[n] runs on n cores of one logical core, nl.program_id a plain int per shard"),
    # tests/python/test_nki_multicore.py: shards, barriers and collectives against numpy
    ("test_nki_multicore.py::test_core_barrier_orders_writes_then_reads_of_shared_hbm", "nki.isa", "core_barrier"),
    ("test_nki_multicore.py::test_sendrecv_ring_swaps_the_shards_tiles", "nki.isa", "sendrecv"),
    ("test_nki_multicore.py::test_sbuf_collectives_over_ranks_against_numpy", "nki.collectives",
     "all_gather reduce_scatter"),
    ("test_nki_multicore.py::test_all_to_all_on_hbm_over_ranks", "nki.collectives", "all_to_all"),
    ("test_nki_multicore.py::test_variable_count_all_to_all_and_all_gather", "nki.collectives",
     "all_to_all_v all_gather_v"),
    ("test_nki_multicore.py::test_permutes_over_a_ring_of_ranks", "nki.collectives",
     "collective_permute collective_permute_implicit collective_permute_implicit_reduce"),
    ("test_nki_multicore.py::test_spmd_dim_mixes_cores_and_instances", "nki.language", "spmd_dim"),
    ("test_nki_multicore.py::test_rank_ids_in_registers", "nki.collectives",
     "rank_id collective_permute_implicit_current_processing_rank_id"),
    ("test_nki_names.py::test_simulate_callable_form_and_typing_placeholders", "nki",
     "simulate simulate_kernel benchmark"),
    ("test_nki_run.py::test_benchmark_profile_names_the_kernel_lines", "nki", "profile"),
    ("test_nki_isa.py::test_index_out_of_range_is_a_kernel_error", "nki", "tensor",
     "neuronsim's nki.tensor(shape, dtype) is a placeholder argument; the kernel's tensor class is nl.NkiTensor"),
    ("test_nki_names.py::test_legacy_tensor_members_nkitensor_and_validation_errors", "nki",
     "tensor.dtype tensor.itemsize tensor.ndim tensor.shape tensor.reshape"),
    ("test_nki_language.py::test_reshape_of_an_hbm_tensor", "nki.language", "reshape"),
    ("test_nki_language.py::test_broadcast_to_free_and_partitions", "nki", "tensor.broadcast_to"),
    ("test_nki_names.py::test_nki_dtype_is_the_type_of_the_dtypes_for_annotations", "nki", "dtype"),
    # registers, dynamic loops and the access-pattern API (tests/python/test_nki_dynamic.py, test_nki_access_patterns.py)
    ("test_nki_dynamic.py::test_register_alloc_move_load_store", "nki.isa",
     "register_alloc register_move register_load register_store VirtualRegister"),
    ("test_nki_dynamic.py::test_a_dynamic_range_reads_its_trip_count_from_a_tensor", "nki.language", "dynamic_range"),
    ("test_nki_dynamic.py::test_a_while_loop_runs_until_its_register_is_zero_and_not_at_all_from_zero",
     "nki.language", "while_loop"),
    ("test_nki_access_patterns.py::test_an_hbm_pattern_walks_the_flattened_tensor", "nki.language", "NkiTensor.ap"),
    ("test_nki_access_patterns.py::test_a_dtype_view_reinterprets_the_bytes", "nki.language",
     "NkiTensor.view NkiTensor.reinterpret_cast"),
    ("test_nki_access_patterns.py::test_a_dtype_view_reinterprets_the_bytes", "nki", "tensor.view"),
    ("test_nki_access_patterns.py::test_get_pattern_gives_the_pairs", "nki.language", "NkiTensor.get_pattern"),
    ("test_nki_access_patterns.py::test_an_indirect_view_is_not_sliced_or_indirected_again", "nki.language",
     "NkiTensor.is_indirect"),
    ("test_nki_access_patterns.py::test_view_primitives_compose_patterns", "nki.language",
     "NkiTensor.slice NkiTensor.select NkiTensor.permute NkiTensor.broadcast NkiTensor.expand_dim "
     "NkiTensor.squeeze_dim NkiTensor.reshape_dim NkiTensor.flatten_dims NkiTensor.strides NkiTensor.offset "
     "NkiTensor.is_contiguous"),
    ("test_nki_access_patterns.py::test_run_time_select_and_vector_select", "nki.language", "NkiTensor.vector_select"),
    # tensor methods and copies at a run-time offset (tests/python/test_nki_tensor_methods.py)
    ("test_nki_tensor_methods.py::test_rearrange_splits_reorders_and_merges", "nki.language", "NkiTensor.rearrange"),
    ("test_nki_tensor_methods.py::test_expand_dims_assert_shape_and_astype", "nki.language", "expand_dims"),
    ("test_nki_tensor_methods.py::test_expand_dims_assert_shape_and_astype", "nki",
     "tensor.expand_dims tensor.assert_shape tensor.astype"),
    ("test_nki_tensor_methods.py::test_tensor_copy_dynamic_src_and_dst_follow_the_run_time_offset", "nki.isa",
     "tensor_copy_dynamic_src tensor_copy_dynamic_dst"),
    ("test_nki_tensor_methods.py::test_atomic_rmw_adds_every_update_of_a_repeated_row", "nki.language", "atomic_rmw"),
    ("test_nki_names.py::test_legacy_all_reduce_over_an_nc_axis_reduces_across_its_cores", "nki.language",
     "all_reduce"),
    ("test_nki_indirect.py::test_indirect_gathers_columns_in_groups_of_16_on_vector_scalar_gpsimd", "nki.language",
     "NkiTensor.indirect"),
]

for _test, (_module, _names) in _TESTS.items():
    registry.checked_by(_test, _module, _names)
for _test, _module, _names, *_note in _TESTS_OTHER:
    registry.checked_by(_test, _module, _names, *_note)
