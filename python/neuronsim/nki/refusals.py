"""The documented NKI names neuronsim's front end does not serve yet, each with the reason: registered as refusals
(registry.refuse), so that a kernel may still import a name, store it in a table and compare it, and calling it
raises Unsupported naming it and the reason. A definition registered anywhere under the same name replaces its
refusal (registry.register)."""
from . import registry

# Reasons shared by several names.
_INSTR = "the instruction has no lowering in the front end yet (issue 37, new nki.isa instructions)"
_REG = "comes with registers and dynamic loops (issue 37)"
_MULTI = ("listed but commented out in the legacy reference: a collective over launch-grid program axes with no "
          "signature to lower (nl.all_reduce over an nl.nc(n) axis is lowered, as are nki.collectives' all_reduce, "
          "all_gather, reduce_scatter and all_to_all)")
_SEED = ("how the engine expands a 32-bit seed into its generator state is not documented (the pages say only that "
         "the same seed gives the same sequence); nisa.rand_set_state(src_seeds, engine=nisa.engine.vector) sets the "
         "state itself")

registry.refuse_all("nki.isa", {
    "topk": "the BIR instruction the compiler emits for it is not documented: it is none of the 110 BIR instruction "
            "types neuronsim's ISA tables hold (reference neuronx-cc/bir/instruction-type.md), so there is nothing to "
            "lower it to without inventing one (its page now gives the 16-partition snake layout of the results; the "
            "order of equal values it leaves open)",
    "set_rng_seed": _SEED,
    "get_nc_sub_version": "the NeuronCore sub-version has no documented values",
    **{n: _REG for n in ("register_alloc", "register_load", "register_move", "register_store", "VirtualRegister")},
    "NkiInstruction": "nki.isa calls return their destination tile here, not an instruction handle",
    "NkiInstruction.depends_on": "nki.isa calls return their destination tile here, not an instruction handle; the "
                                 "simulator orders instructions by their data dependencies",
    "attention_kernel": "a call into the compiler's built-in attention kernel, whose behaviour the reference does "
                        "not document (legacy, listed by no page of the latest reference)",
    "attention_kernel_cache": "a call into the compiler's built-in attention kernel, whose behaviour the reference "
                              "does not document (legacy, listed by no page of the latest reference)",
    "builtin_custom_op": "runs a custom-operator library compiled for the device, which has no documented "
                         "semantics a simulator could follow",
})

registry.refuse_all("nki.language", {
    "random_seed": _SEED,
    "gemm_grid": "the legacy gemm grid helpers have no documented semantics (their reference page has no text)",
    "gemm_stationary_grid": "the legacy gemm grid helpers have no documented semantics (their reference page has "
                            "no text)",
    "dynamic_range": _REG, "while_loop": _REG,
    **{n: _MULTI for n in ("all_gather", "all_to_all", "reduce_scatter")},
})

_FRAMEWORK = "integration with a framework's tensors (PyTorch, JAX): neuronsim runs kernels on numpy arrays"
registry.refuse_all("nki", {
    "FrameworkKernel": _FRAMEWORK,
    **{f"FrameworkKernel.{n}": _FRAMEWORK for n in ("dump_config", "is_framework_tensor", "map_framework_tensor",
                                                   "translate_to_neuron_dtype")},
})

_SAMPLE = ("a sample kernel the compiler package shipped (SDK 2.20-2.21), not API: its source is published in "
           "nki-samples, which neuronsim runs as published")
registry.refuse_all("nki.kernels", {n: _SAMPLE for n in (
    "add_kernel_nx8x128x512", "allocated_fused_rms_norm_qkv", "allocated_fused_self_attn_for_SD_small_head_size",
    "flash_attn_bwd", "flash_fwd", "fused_self_attn_for_SD_small_head_size", "resize_nearest_fixed_dma_kernel",
    "select_and_scatter_kernel")})

registry.refuse_all("nki.language", {
    f"tile_size.{n}": "the NKI documentation gives no value for it (reading it raises)"
    for n in ("psum_min_align", "sbuf_min_align")})
