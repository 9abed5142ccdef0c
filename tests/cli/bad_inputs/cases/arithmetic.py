"""Checked arithmetic: values near 2^63 in access patterns, addresses, shapes and loop bounds; --max-instructions;
an address that overflows at run time and a block that branches to itself."""
from .common import alloc, bir_case, fn, insts
from .bir_semantics import loop


# ---------------------------------------------------------------------------------------- checked arithmetic
def physical(i, side, k, **kw):
    def f(m):
        a = insts(m)[i][side][k]
        a.pop("addrs", None)
        a.pop("access_shape", None)
        a["kind"] = "physical_ap"
        a.update(kw)
    return f


bir_case("overflow_ap_offset_near_2_63", "a physical_ap offset of 2^63 - 10 (overflowed the bounds check: heap corruption)",
         physical(0, "outs", 0, offset=2**63 - 10), ["instruction 0 'I-2'", "field 'outs[0]'", "out of bounds"])
bir_case("overflow_ap_step_near_2_63", "a partition step of 2^62 over 10 partitions",
         physical(0, "outs", 0, ap=[[2**62, 10], [1, 10]]), ["instruction 0 'I-2'", "field 'outs[0]'", "out of bounds"])
bir_case("overflow_ap_count", "an access pattern of 2^40 x 2^40 elements",
         lambda m: insts(m)[1]["ins"][0].update(ap=[[10, 10], [1, 2**40], [1, 2**40]]),
         ["instruction 1 'I-4'", "field 'ins[0].ap'", "element count overflows 64 bits"])
bir_case("overflow_addr_coefficient", "an address coefficient of 2^62 times the row stride 10",
         lambda m: insts(m)[1]["ins"][0]["addrs"].__setitem__(0, {"c": 2**62, "kind": "AffExprKind", "terms": []}),
         ["instruction 1 'I-4'", "field 'ins[0].addrs[0]'", "overflows 64 bits"])
bir_case("overflow_tensor_shape", "a tensor_shape of 2^32 x 2^32 elements",
         lambda m: alloc(m, "a_set").update(tensor_shape=[2**32, 2**32]),
         ["field 'allocations[0].tensor_shape'", "overflows 64 bits"])
bir_case("overflow_sbuf_addr_allocated", "an allocated SBUF tile at byte address 2^63 - 8",
         lambda m: (alloc(m, "tile.9_set")["memorylocations"][0].update(addr=2**63 - 8, allocated=True)),
         ["tile.9", "exceed the capacity"])
bir_case("overflow_base_partition_allocated", "an allocated SBUF tile at base partition 2^63 - 1",
         lambda m: (alloc(m, "tile.9_set")["memorylocations"][0].update(base=2**63 - 1, allocated=True)),
         ["tile.9", "base partition 9223372036854775807"])
bir_case("overflow_psum_bank", "a PSUM tile in bank 2^60",
         lambda m: (alloc(m, "tile.7_set").update(tensor_class="NeuronPSUMTensor"),
                    alloc(m, "tile.7_set")["memorylocations"][0].update(type="PSUM", bank=2**60, allocated=True)),
         ["tile.7", "bank 1152921504606846976 does not exist"])
bir_case("overflow_loop_trip_count", "a loop from 0 to 2^63 - 1 (its trip count overflowed past the limit)",
         loop(1, ub=2**63 - 1), ["field 'LoopAxis'", "dynamic instructions, more than"])
bir_case("loop_negative_stride", "a loop with stride -1", loop(-1), ["Loop 'i0'", "field 'LoopAxis.stride'", "must be positive"])


def empty_loop(m):
    insts(m).insert(1, {"opcode": "Loop", "name": "Loop-e", "LoopAxis": {"name": "e", "lb": 0, "ub": 2**62, "stride": 1},
                        "blocks": [{"name": "Be", "instructions": []}]})


bir_case("loop_empty_body_2_62_trips", "a loop of 2^62 trips with an empty body (spun forever)", empty_loop,
         ["Loop", "more than 1000000000 trips in all (--max-instructions)"])
# --max-instructions (default 10^9) bounds the dynamic instructions of a run: a static program's count is known
# before the run (Load + 100 trips of TensorScalarPtr + Save = 102).
bir_case("max_instructions_static_loop", "a loop of 102 dynamic instructions under --max-instructions 50", loop(1, ub=100),
         ["field 'LoopAxis'", "102 dynamic instructions, more than the 50 one run may execute (--max-instructions)"],
         extra_args=("--max-instructions", "50"))


def spin_forever(m):
    """Load; r = 1; block spin: r = r + 0; CompareAndBranch r > 0 -> spin (a run-time branch that never exits)."""
    reg = {"kind": "register_access", "regref": "r", "dtype": "int32"}
    one = {"kind": "imm_value", "value": 1, "dtype": "int32"}
    zero = {"kind": "imm_value", "value": 0, "dtype": "int32"}
    body = insts(m)
    fn(m)["blocks"] = [
        {"name": "Block1", "instructions": [body[0], {"opcode": "RegisterMove", "name": "I-mv", "ins": [one], "outs": [reg]}]},
        {"name": "spin", "instructions": [
            {"opcode": "RegisterAlu", "name": "I-add", "op": "add", "ins": [reg, zero], "outs": [reg]},
            {"opcode": "CompareAndBranch", "name": "I-cb", "comp_op": "IS_GTIMM", "on_true": "spin", "ins": [reg, zero],
             "outs": []}]},
        {"name": "end", "instructions": body[1:]}]


bir_case("max_instructions_runaway_branch", "a run-time branch that loops forever stops at --max-instructions 1000",
         spin_forever, ["instruction", "more than 1000 dynamic instructions (--max-instructions)", "loop forever"],
         extra_args=("--max-instructions", "1000"))


def runtime_overflow(m):
    loop(1, axis_ref="i0", ub=2)(m)
    insts(m)[1]["LoopAxis"]["lb"] = 1
    body = insts(m)[1]["blocks"][0]["instructions"][0]
    # addrs[1] (innermost, stride 1) = 2^62 + 2^62 * i0: each part reads, their sum at i0 = 1 is 2^63.
    body["ins"][0]["addrs"][1] = {"c": 2**62, "kind": "AffExprKind",
                                  "terms": [{"coeff": 2**62, "idx": {"axis": "i0", "kind": "AffIVKind"}}]}


bir_case("overflow_address_at_run_time", "an address 2^62 + 2^62 * i that overflows in the loop's first trip",
         runtime_overflow, ["instruction 1 'I-4'", "field 'ins[0]'", "address expression overflows 64 bits"])


def self_branch(m):
    fn(m)["blocks"][0]["name"] = "B0"
    insts(m).append({"opcode": "UnconditionalBranch", "name": "I-8", "target": "B0"})


bir_case("branch_to_itself_forever", "a block that branches back to itself (filled 5 GB before the limit)",
         self_branch, ["instruction 3 'I-8'", "field 'target'", "branches back to block 'B0' forever"])
