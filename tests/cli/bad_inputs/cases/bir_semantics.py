"""BIR JSON that reads but does not run: access patterns out of bounds, memory capacities, undeclared names, loops,
casts, calls, DMA triggers and semaphores."""
import copy

from .common import alloc, bir_case, fn, insts, strip_tensor_scalar_ptr
from .bir_json import set_field


# ---------------------------------------------------------------------------------------- semantic errors
bir_case("negative_count", "negative count in an access pattern",
         lambda m: insts(m)[1]["ins"][0].update(ap=[[10, 10], [10, 1], [1, -10]]),
         ["instruction 1 'I-4'", "field 'ins[0].ap[2]'", "negative count"])
bir_case("ap_outside_tensor", "Load writes 11 partitions of a 10-partition tile",
         lambda m: insts(m)[0]["outs"][0].update(ap=[[10, 11], [10, 1], [1, 10]]),
         ["instruction 0 'I-2'", "field 'outs[0]'", "out of bounds", "tile.9"])
bir_case("ap_offset_outside", "Save reads from element 5 on: the last row runs past the tile",
         lambda m: insts(m)[2]["ins"][0]["addrs"][1].update(c=5),
         ["instruction 2 'I-6'", "field 'ins[0]'", "out of bounds", "tile.7"])
bir_case("sbuf_over_capacity", "an SBUF tile of 400000 bytes per partition (the core has 192 KiB)",
         lambda m: (alloc(m, "tile.9_set").update(tensor_shape=[10, 100000]),
                    alloc(m, "tile.9_set")["memorylocations"][0].update(dims=[10, 400000])),
         ["tile.9", "does not fit in SB", "400000 bytes per partition"])
bir_case("sbuf_too_many_partitions", "an SBUF tile of 200 partitions (the core has 128)",
         lambda m: (alloc(m, "tile.7_set").update(tensor_shape=[200, 10]),
                    alloc(m, "tile.7_set")["memorylocations"][0].update(dims=[200, 40])),
         ["tile.7", "200 partitions"])
bir_case("psum_over_capacity", "a PSUM tile of 32 KiB per partition (PSUM has 16 KiB)",
         lambda m: (alloc(m, "tile.7_set").update(tensor_shape=[10, 8192], tensor_class="NeuronPSUMTensor"),
                    alloc(m, "tile.7_set")["memorylocations"][0].update(dims=[10, 32768], type="PSUM")),
         ["tile.7", "does not fit in PSUM"])
bir_case("base_partition_outside", "an unplaced SBUF tile asking for base partition 2^31-1 (was a segfault)",
         lambda m: alloc(m, "tile.9_set")["memorylocations"][0].update(base=2**31 - 1),
         ["tile.9", "base partition 2147483647", "exceed the core's 128"])
bir_case("ap_too_large", "a step-0 broadcast of 10^10 elements: in bounds, but would walk for hours",
         lambda m: insts(m)[1]["ins"][0].update(ap=[[10, 10], [0, 100000], [0, 100000], [1, 10]]),
         ["instruction 1 'I-4'", "field 'ins[0]'", "too large to simulate"])
bir_case("dram_size_overflow", "a DRAM tensor whose byte size overflows 64 bits",
         lambda m: (alloc(m, "a_set").update(tensor_shape=[2**40, 2**40]),
                    alloc(m, "a_set")["memorylocations"][0].update(dims=[2**40, 2**22])),
         ["overflows"])
bir_case("undeclared_tensor", "memsetref names an allocation that is not declared",
         lambda m: insts(m)[1]["ins"][0].update(memsetref="tile.8_set"),
         ["instruction 1 'I-4'", "field 'ins[0].memsetref'", "tile.8_set"])
bir_case("duplicate_allocation", "two allocations with the same name",
         lambda m: fn(m)["allocations"].append(copy.deepcopy(alloc(m, "tile.7_set"))),
         ["field 'allocations[4].name'", "duplicate", "tile.7_set"])
bir_case("unknown_dependency", "dependency on an instruction that does not exist",
         set_field(2, "dependencies", ["I-99"]), ["instruction 2 'I-6'", "field 'dependencies[0]'", "I-99"])
bir_case("dependency_on_itself", "an instruction whose dependencies name itself (ran with exit 0)",
         set_field(1, "dependencies", ["I-4"]),
         ["instruction 1 'I-4'", "field 'dependencies[0]'", "'I-4' is this instruction", "dependency cycle"])


def mutual_dependencies(m):
    insts(m)[0]["dependencies"] = ["I-6"]
    insts(m)[2]["dependencies"] = ["I-2"]


bir_case("dependency_cycle_two_loads", "the load and the save naming each other as dependencies (ran with exit 0)",
         mutual_dependencies, ["instruction 2 'I-6'", "field 'dependencies[0]'",
                               "a dependency cycle: 'I-2' -> 'I-6' -> 'I-2'"])


def indirect_copy(num_valid):
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = "IndirectCopy"
        i["num_valid_indices"] = num_valid
        i["ins"] = [copy.deepcopy(i["ins"][0]), copy.deepcopy(i["ins"][0])]
    return f


bir_case("indirect_copy_num_valid_beyond", "IndirectCopy num_valid_indices 1000 with 100 indices (was clamped to 100)",
         indirect_copy(1000), ["instruction 1 'I-4'", "field 'num_valid_indices'",
                               "num_valid_indices 1000 is not within the 100 indices ins[1] holds"])
bir_case("indirect_copy_num_valid_negative", "IndirectCopy num_valid_indices -1", indirect_copy(-1),
         ["instruction 1 'I-4'", "field 'num_valid_indices'", "-1 is not within"], extra_args=("--timing-only",))


def loop(stride, axis_ref="i0", ub=2):
    def f(m):
        body = insts(m)
        # the TensorScalarPtr runs twice over the same tile inside a loop
        inner = [copy.deepcopy(body[1])]
        if axis_ref:
            inner[0]["ins"][0]["addrs"][0] = {"c": 0, "kind": "AffExprKind",
                                              "terms": [{"coeff": 0, "idx": {"axis": axis_ref, "kind": "AffIVKind"}}]}
        body[1] = {"opcode": "Loop", "name": "Loop-i0", "LoopAxis": {"name": "i0", "lb": 0, "ub": ub, "stride": stride},
                   "blocks": [{"name": "Block2", "instructions": inner}]}
    return f


bir_case("loop_zero_step", "a loop whose stride is 0 never ends", loop(0),
         ["Loop 'i0'", "field 'LoopAxis.stride'", "stride is 0"])
bir_case("loop_unknown_axis", "an address uses a loop variable no enclosing loop defines", loop(1, axis_ref="j"),
         ["instruction 1 'I-4'", "field 'ins[0].addrs[0].terms[0].idx.axis'", "'j'"])
bir_case("expr_div_zero", "FloorDiv by zero in an address expression",
         lambda m: insts(m)[1]["ins"][0]["addrs"].__setitem__(0, {"kind": "FloorDivKind", "numer": {"c": 0, "kind": "AffExprKind", "terms": []}, "denom": 0}),
         ["instruction 1 'I-4'", "field 'ins[0].addrs[0].denom'", "division by zero"])


def copy_predicated_cast(m):
    # CopyPredicated moves bits, so it cannot cast (engines/ops/select.cpp; reference
    # sim-elementwise-datamove.md asserts dst dtype == src dtype for the copy-only DVE ops).
    i = insts(m)[1]
    strip_tensor_scalar_ptr(i)
    i["opcode"] = "CopyPredicated"
    i["ins"] = [copy.deepcopy(i["ins"][0]), copy.deepcopy(i["ins"][0])]
    t7 = alloc(m, "tile.7_set")
    t7["dtype"] = "bfloat16"
    t7["memorylocations"][0]["dims"] = [10, 20]
    i["outs"][0]["dtype"] = "bfloat16"
    insts(m)[2]["ins"][0]["dtype"] = "bfloat16"


bir_case("dtype_mismatch_copy_predicated", "CopyPredicated from float32 into bfloat16 (a copy cannot cast)",
         copy_predicated_cast, ["instruction 1 'I-4'", "field 'outs[0]'", "dtypes differ"])


def call_unknown_target(m):
    i = insts(m)[1]
    strip_tensor_scalar_ptr(i)
    i["opcode"] = "Call"
    i["target"] = "kernel_body"
    i["ins"] = [i["ins"][0]]


bir_case("call_unknown_target", "a Call to a function the module does not have", call_unknown_target,
         ["instruction 1 'I-4'", "field 'target'", "no function named 'kernel_body'"])
bir_case("dma_trigger_unknown_block", "a DMATrigger naming a DMABlock that is not defined",
         lambda m: insts(m).append({"opcode": "DMATrigger", "name": "I-8", "queue": "q0", "dma_blocks": ["blk9"],
                                    "ins": [], "outs": []}),
         ["instruction 3 'I-8'", "field 'dma_blocks[0]'", "no DMABlock named 'blk9'"])
bir_case("group_reset_out_of_range", "GroupResetSemaphores naming semaphore 256 (there are 256: 0..255)",
         lambda m: insts(m).append({"opcode": "GroupResetSemaphores", "name": "I-8", "sema_group": [1, 256]}),
         ["instruction 3 'I-8'", "field 'sema_group[1]'", "out of range"])
