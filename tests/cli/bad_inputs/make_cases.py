#!/usr/bin/env python3
"""Writes the malformed BIR JSON / .npy inputs of tests/cli/bad_inputs and catalogue.json.

Every BIR case is workloads/kernel1/kernel1.bir.json (real compiler output: Load I-2, TensorScalarPtr I-4,
Save I-6 = instructions 0, 1, 2) with one hand-picked mutation, so each file isolates one mistake. The files
are committed; rerun this script (python3 tests/cli/bad_inputs/make_cases.py) only to change the set. The
bundle cases (bundle_*/) are written by make_bundles.cpp (how to build it: its header comment).

Catalogue placeholders, substituted by tests/cli/test_bad_inputs.cpp: {dir} = this folder, {out} = a fresh
empty --outdir per case, {kernel1} = workloads/kernel1, {workloads} = workloads/, {scratch} = the case's scratch
folder.
"""
import copy
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
with open(os.path.join(ROOT, "workloads", "kernel1", "kernel1.bir.json")) as f:
    BASE = json.load(f)

cases = []


def fn(m):
    return m["functions"][0]


def insts(m):
    return fn(m)["blocks"][0]["instructions"]


def alloc(m, name):
    return next(a for a in fn(m)["allocations"] if a["name"] == name)


def strip_tensor_scalar_ptr(i):
    """Drops I-4's TensorScalarPtr keys, so the instruction can become another opcode (without keys that type
    does not have: they would be warned about, isa/tables/inst_keys.def)."""
    for k in ["op0", "op1", "reverse0", "reverse1", "is_scalar_tensor_tensor", "is_tensor_scalar_addr",
              "is_tensor_tensor_scan", "duplicate", "can_read_uninit"]:
        i.pop(k)


def dump(m):
    return json.dumps(m, separators=(",", ":")) + "\n"


def bir_case(name, why, mutate, stderr, exit_code=3, text=None, extra_args=()):
    path = name + ".bir.json"
    if text is None:
        m = copy.deepcopy(BASE)
        mutate(m)
        text = dump(m)
    with open(os.path.join(HERE, path), "w") as f:
        f.write(text)
    cases.append({"name": name, "why": why,
                  "args": ["run", "{dir}/" + path, "--outdir", "{out}"] + list(extra_args),
                  "exit": exit_code, "stderr": [path] + stderr})


VALID = dump(BASE)

# ---------------------------------------------------------------------------------------- JSON syntax
bir_case("syntax_truncated", "file cut off in the middle (an interrupted copy)", None,
         ["malformed JSON"], text=VALID[: len(VALID) // 2])
bir_case("syntax_trailing_comma", "a trailing comma after the last instruction", None,
         ["malformed JSON"], text=VALID.rstrip().rstrip("}") + ",}\n")
bir_case("syntax_empty", "an empty file", None, ["malformed JSON"], text="")
bir_case("syntax_binary", "not text at all (a .npy given as the kernel)", None, ["malformed JSON"],
         text="\x93NUMPY\x01\x00v\x00{'descr': '<f4'}")
bir_case("top_level_array", "a JSON array instead of the module object", None, ["expected an object"], text="[]\n")

# ---------------------------------------------------------------------------------------- unknown names
def set_field(i, key, value):
    def f(m):
        insts(m)[i][key] = value
    return f


bir_case("unknown_opcode", "opcode misspelt", set_field(1, "opcode", "TensorScalarPointer"),
         ["instruction 1 'I-4'", "field 'opcode'", "TensorScalarPointer"])
bir_case("unknown_alu_op", "AluOpType misspelt (substract)", set_field(1, "op0", "substract"),
         ["instruction 1 'I-4'", "field 'op0'", "substract"])
bir_case("unknown_engine", "engine that does not exist", set_field(1, "engine", "GPU"),
         ["instruction 1 'I-4'", "field 'engine'", "GPU"])


def arg_dtype(i, side, k, dt):
    def f(m):
        insts(m)[i][side][k]["dtype"] = dt
    return f


bir_case("unknown_dtype_operand", "operand dtype misspelt", arg_dtype(1, "ins", 0, "float33"),
         ["instruction 1 'I-4'", "field 'ins[0].dtype'", "float33"])
bir_case("unknown_dtype_allocation", "allocation dtype in numpy spelling", lambda m: alloc(m, "a_set").update(dtype="fp32"),
         ["field 'allocations[0].dtype'", "fp32"])


def to_activation(func):
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = "Activation"
        i["func"] = func
        i["ins"] = i["ins"][:1]
    return f


bir_case("unknown_activation_func", "ActivationFunctionType in NKI spelling (relu for Relu)", to_activation("relu"),
         ["instruction 1 'I-4'", "field 'func'", "relu"])
bir_case("unknown_memory_type", "memory location type HBM (no such MemoryType)",
         lambda m: alloc(m, "tile.9_set")["memorylocations"][0].update(type="HBM"),
         ["field 'allocations[3].memorylocations[0].type'", "HBM"])
bir_case("unknown_arg_kind", "argument kind misspelt", lambda m: insts(m)[0]["ins"][0].update(kind="symbolic"),
         ["instruction 0 'I-2'", "field 'ins[0].kind'", "symbolic"])

# ---------------------------------------------------------------------------------------- missing fields
def drop(i, key):
    def f(m):
        del insts(m)[i][key]
    return f


bir_case("missing_opcode", "instruction without opcode", drop(1, "opcode"),
         ["instruction 1 'I-4'", "field 'opcode'", "missing"])
bir_case("missing_ins", "Load without ins", drop(0, "ins"), ["instruction 0 'I-2'", "field 'ins'", "missing"])
bir_case("missing_memsetref", "operand naming no tensor", lambda m: insts(m)[2]["outs"][0].pop("memsetref"),
         ["instruction 2 'I-6'", "field 'outs[0]'", "memsetref"])
bir_case("missing_ap", "access pattern without ap", lambda m: insts(m)[1]["ins"][0].pop("ap"),
         ["instruction 1 'I-4'", "field 'ins[0]'", "'ap'"])
bir_case("missing_functions", "module without functions", lambda m: m.pop("functions"),
         ["field 'functions'", "missing"])
bir_case("missing_imm_value", "symbolic_imm_value with an empty value_list",
         lambda m: insts(m)[1]["ins"][1].update(value_list=[]),
         ["instruction 1 'I-4'", "field 'ins[1].value_list'", "empty"])

# ---------------------------------------------------------------------------------------- wrong JSON types
bir_case("type_opcode_number", "opcode given as its ordinal", set_field(1, "opcode", 41),
         ["instruction 1 'I-4'", "field 'opcode'", "expected a string"])
bir_case("type_ap_string", "ap written as a string", lambda m: insts(m)[0]["outs"][0].update(ap="[[10,10],[1,10]]"),
         ["instruction 0 'I-2'", "field 'outs[0].ap'", "expected an array"])
bir_case("type_ins_object", "ins as an object instead of an array", lambda m: insts(m)[0].update(ins=insts(m)[0]["ins"][0]),
         ["instruction 0 'I-2'", "field 'ins'", "expected an array"])
bir_case("type_imm_string", "immediate given as a string", lambda m: insts(m)[1]["ins"][1]["value_list"][0].update(value="one"),
         ["instruction 1 'I-4'", "field 'ins[1].value_list[0].value'", "one"])
bir_case("type_bool_string", "boolean flag given as a string", set_field(1, "reverse0", "false"),
         ["instruction 1 'I-4'", "field 'reverse0'", "expected true/false"])
bir_case("type_ap_pair_triple", "access-pattern pair with three numbers",
         lambda m: insts(m)[1]["outs"][0].update(ap=[[10, 10, 1], [1, 10]]),
         ["instruction 1 'I-4'", "field 'outs[0].ap[0]'", "[step, num]"])
bir_case("type_fraction", "tensor_shape with a fraction", lambda m: alloc(m, "b_set").update(tensor_shape=[10, 2.5]),
         ["field 'allocations[1].tensor_shape[1]'", "expected an integer"])
bir_case("version_3", "a BIR JSON version this reader does not know", lambda m: m.update(version=3),
         ["field 'version'", "version must be 1 or 2"])

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

# ---------------------------------------------------------------------------------------- .npy inputs
def npy_bytes(descr, shape, data, major=1, fortran=False):
    shp = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shp)
    pre = 10 if major == 1 else 12
    d += " " * ((64 - (pre + len(d) + 1) % 64) % 64) + "\n"
    head = b"\x93NUMPY" + bytes([major, 0]) + (struct.pack("<H", len(d)) if major == 1 else struct.pack("<I", len(d)))
    return head + d.encode() + data


def npy_case(name, why, content, stderr, exit_code=3, tensor="a"):
    path = name + ".npy"
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(content)
    cases.append({"name": name, "why": why,
                  "args": ["run", "{kernel1}/kernel1.bir.json", "--input", tensor + "={dir}/" + path, "--outdir", "{out}"],
                  "exit": exit_code, "stderr": [path] + stderr})


f32 = struct.pack("<100f", *[float(i) for i in range(100)])
npy_case("npy_float64", "float64 data for a float32 tensor (np.save of a default array)",
         npy_bytes("<f8", (10, 10), struct.pack("<100d", *range(100))), ["unsupported .npy dtype '<f8'"])
npy_case("npy_int32", "int32 data for a float32 tensor", npy_bytes("<i4", (10, 10), struct.pack("<100i", *range(100))),
         ["int32", "cannot be used for a float32 tensor"])
npy_case("npy_big_endian", "big-endian float32", npy_bytes(">f4", (10, 10), struct.pack(">100f", *range(100))),
         ["unsupported .npy dtype '>f4'"])
npy_case("npy_wrong_shape", "5x5 data for a 10x10 tensor", npy_bytes("<f4", (5, 5), f32[:100]),
         ["input 'a'", "shape [5, 5]", "declares [10, 10]"])
npy_case("npy_truncated_header", "file ends inside the header dict", npy_bytes("<f4", (10, 10), f32)[:40],
         ["truncated .npy header"])
npy_case("npy_truncated_data", "header promises 100 floats, file holds 60", npy_bytes("<f4", (10, 10), f32[:240]),
         ["truncated .npy data"])
npy_case("npy_bad_magic", "a text file named .npy", b"a,b,c\n1.0,2.0,3.0\n4.0,5.0,6.0\n", ["not a .npy file"])
npy_case("npy_fortran_order", "Fortran-ordered array", npy_bytes("<f4", (10, 10), f32, fortran=True),
         ["fortran_order True"])
npy_case("npy_bad_header_dict", "header dict with an unknown key", npy_bytes("<f4", (10, 10), f32).replace(b"'shape'", b"'shapE'"),
         ["malformed .npy header", "shapE"])
npy_case("npy_unknown_tensor", "--input for a tensor the kernel does not have",
         npy_bytes("<f4", (10, 10), f32), ["no input tensor named 'z'"], tensor="z")

# ---------------------------------------------------------------------------------------- command line
def cli_case(name, why, args, stderr, exit_code=2):
    cases.append({"name": name, "why": why, "args": args, "exit": exit_code, "stderr": stderr})


cli_case("cli_unknown_option", "an option run does not have", ["run", "{kernel1}", "--outdir", "{out}", "--frobnicate"],
         ["unknown option '--frobnicate'"])
cli_case("cli_bad_arch", "an architecture that does not exist", ["run", "{kernel1}", "--outdir", "{out}", "--arch", "trn9"],
         ["--arch", "trn9"])
cli_case("cli_arch_missing_value", "--arch as the last word", ["run", "{kernel1}", "--outdir", "{out}", "--arch"],
         ["--arch needs a value"])
cli_case("cli_input_no_equals", "--input without NAME=", ["run", "{kernel1}", "--outdir", "{out}", "--input", "a.npy"],
         ["--input takes NAME=FILE.npy"])
cli_case("cli_bad_rtol", "--rtol that is not a number", ["run", "{kernel1}", "--outdir", "{out}", "--rtol", "1e-3x"],
         ["--rtol needs a number"])
cli_case("cli_bad_max_instructions", "--max-instructions 0", ["run", "{kernel1}", "--outdir", "{out}", "--max-instructions", "0"],
         ["--max-instructions needs a whole number >= 1, got '0'"])
cli_case("cli_unknown_command", "a command neuronsim does not have", ["simulate", "{kernel1}"], ["unknown command 'simulate'"])
cli_case("cli_two_kernels", "two kernels on one command line", ["run", "{kernel1}", "{kernel1}", "--outdir", "{out}"],
         ["more than one KERNEL"])
cli_case("cli_missing_kernel", "a kernel path that does not exist", ["run", "{dir}/no_such_kernel.bir.json", "--outdir", "{out}"],
         ["no_such_kernel.bir.json", "no such file"], exit_code=3)
cli_case("cli_empty_workload_dir", "a workload folder without a *.bir.json", ["run", "{dir}/empty_workload", "--outdir", "{out}"],
         ["empty_workload", "exactly one *.bir.json"], exit_code=3)
os.makedirs(os.path.join(HERE, "empty_workload"), exist_ok=True)
with open(os.path.join(HERE, "empty_workload", "README"), "w") as f:
    f.write("A workload folder with no *.bir.json in it (case cli_empty_workload_dir).\n")

# ---------------------------------------------------------------------------------------- bundle streams
# `neuronsim run DIR` runs the per-engine streams of a folder written by `neuronsim encode` (manifest.json +
# <engine>.bin). The folders are made by make_bundles.cpp: a valid v3 stream of Load, TensorTensor add (DVE,
# instruction 1 'I-2'), Save, then one mistake each. BIR JSON cannot carry explicit semaphores (bir_json.hpp:
# sync_info is not read), so the deadlock is a bundle stream.
def bundle_case(name, why, stderr, exit_code=3):
    cases.append({"name": name, "why": why, "args": ["run", "{dir}/" + name, "--outdir", "{out}"],
                  "exit": exit_code, "stderr": stderr})


bundle_case("bundle_truncated", "DVE.bin cut to 100 bytes (1 bundle + 36 bytes)", ["DVE.bin", "truncated", "byte offset 64"])
bundle_case("bundle_unknown_opcode", "opcode byte 0xEE in the header word 0x10EE",
            ["DVE.bin", "instruction 1 'I-2'", "field 'opcode (+0x00)'", "unknown opcode byte 0xee"])
bundle_case("bundle_alu_unmapped", "TensorTensor ALU byte 0xFF, which no AluOpType maps to on v3",
            ["DVE.bin", "instruction 1 'I-2'", "field 'op (+0x0e)'", "maps to no AluOpType"])
bundle_case("bundle_deadlock", "an instruction waiting for semaphore 7 >= 1, which nothing increments",
            ["bundle_deadlock", "deadlock", "I-2", "semaphore 7", ">= 1"], exit_code=4)


# average / elemwise_mul have no ALU byte on any generation (spec 000): encoding them on the ALU path must be
# refused, not written as their L1 ordinals 24/25 (0x18 is not_equal on the wire).
def to_tensor_tensor(op):
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = "TensorTensor"
        i["engine"] = "DVE"
        i["op"] = op
        i["ins"] = [copy.deepcopy(i["ins"][0]), copy.deepcopy(i["ins"][0])]
    return f


for op in ["average", "elemwise_mul"]:
    path = "encode_alu_" + op + ".bir.json"
    m = copy.deepcopy(BASE)
    to_tensor_tensor(op)(m)
    with open(os.path.join(HERE, path), "w") as f:
        f.write(dump(m))
    cases.append({"name": "encode_alu_" + op, "why": op + " on the TensorTensor ALU byte (no wire value)",
                  "args": ["encode", "{dir}/" + path, "--gen", "v3", "-o", "{out}"], "exit": 3,
                  "stderr": [path, "instruction 1 'I-4'", "field 'op", op]})

# ======================================================================================== issue 14: no silent
# wrong answers. Every case below ran to exit 0 with a wrong result, crashed, hung or touched a file it must not
# before; each now gets its one-line error.

def mutate_i4(opcode, keys, engine=None, ins=None):
    """I-4 (TensorScalarPtr) turned into `opcode` with exactly the op-specific `keys` (None = leave out)."""
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = opcode
        for k, v in keys.items():
            i[k] = v
        if engine:
            i["engine"] = engine
        if ins is not None:
            i["ins"] = ins(i)
    return f


ACT_KEYS = {"scale": 1.0, "alpha": 0.0, "func": "Identity", "acc": "Idle", "op0": "bypass", "op1": "bypass",
            "reduce_op": "bypass"}


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def first_in(i):
    return [copy.deepcopy(i["ins"][0])]


def two_ins(i):
    return [copy.deepcopy(i["ins"][0]), copy.deepcopy(i["ins"][0])]


# ---------------------------------------------------------------------------------------- required keys
# reference neuronx-cc/bir/json-schema-catalog.md "Required vs optional": the compiler's loader reads these with
# json.at() and throws; the simulator used to run the instruction with the key's default.
REQUIRED = [
    ("req_tensor_tensor_missing_op", "TensorTensor without op (ran as bypass, returning ins[0])",
     mutate_i4("TensorTensor", {}, ins=two_ins), "op", []),
    ("req_tensor_tensor_misspelt_op", "TensorTensor with 'opp' for 'op'",
     mutate_i4("TensorTensor", {"opp": "add"}, ins=two_ins), "op", ["'opp'", "misspelt"]),
    ("req_tensor_tensor_null_op", "TensorTensor with op null", mutate_i4("TensorTensor", {"op": None}, ins=two_ins),
     "op", ["is null"]),
    ("req_tsp_missing_op1", "TensorScalarPtr without op1", lambda m: insts(m)[1].pop("op1"), "op1", []),
    ("req_tsp_missing_reverse0", "TensorScalarPtr without reverse0", lambda m: insts(m)[1].pop("reverse0"),
     "reverse0", []),
    ("req_activation_missing_scale", "Activation without scale",
     mutate_i4("Activation", without(ACT_KEYS, "scale"), ins=first_in), "scale", []),
    ("req_activation_missing_acc", "Activation without acc",
     mutate_i4("Activation", without(ACT_KEYS, "acc"), ins=first_in), "acc", []),
    ("req_activation_missing_func", "Activation without func (ran as Identity)",
     mutate_i4("Activation", without(ACT_KEYS, "func"), ins=first_in), "func", []),
    ("req_tensor_reduce_missing_axis", "TensorReduce without axis",
     mutate_i4("TensorReduce", {"op": "add"}, ins=first_in), "axis", []),
    ("req_memset_missing_constant", "Memset without constant", mutate_i4("Memset", {"mode": "Const"}, ins=lambda i: []),
     "constant", []),
    ("req_memset_missing_mode", "Memset without mode", mutate_i4("Memset", {"constant": 0}, ins=lambda i: []),
     "mode", []),
    ("req_tensor_scalar_missing_const1", "TensorScalar without const1",
     mutate_i4("TensorScalar", {"op0": "add", "const0": 1.0, "reverse0": False, "op1": "bypass", "reverse1": False},
               ins=first_in), "const1", []),
    ("req_iota_missing_pattern", "Iota without pattern", mutate_i4("Iota", {"base": 0}, ins=lambda i: []), "pattern", []),
    ("req_affine_select_missing_compare_op", "TensorScalarAffineSelect without compare_op",
     mutate_i4("TensorScalarAffineSelect", {"base": 0, "pattern": [[1, 10]]}, ins=first_in), "compare_op", []),
    ("req_pool_missing_func", "Pool without func (ran as Max)", mutate_i4("Pool", {}, ins=first_in), "func", []),
    ("req_bnstats_missing_apply_transpose", "BNStats without apply_transpose", mutate_i4("BNStats", {}, ins=first_in),
     "apply_transpose", []),
    ("req_match_replace_missing_imm_value", "MatchReplace without imm_value",
     mutate_i4("MatchReplace", {}, ins=two_ins), "imm_value", []),
    ("req_exponential_missing_reduce_cmd", "Exponential without reduce_cmd",
     mutate_i4("Exponential", {}, ins=first_in), "reduce_cmd", []),
    ("req_set_rand_state_missing_rng_engine", "SetRandState without rng_engine",
     mutate_i4("SetRandState", {}, ins=first_in), "rng_engine", []),
    ("req_rand_missing_params", "Rand without params",
     mutate_i4("Rand", {"random_algorithm": "LFSR", "rand_num_steps": 1, "distribution": "Uniform"}, ins=lambda i: []),
     "params", []),
    ("req_indirect_copy_missing_num_valid_indices", "IndirectCopy without num_valid_indices",
     mutate_i4("IndirectCopy", {}, ins=two_ins), "num_valid_indices", []),
    ("req_collective_send_missing_peer_id", "CollectiveSend without peer_id",
     mutate_i4("CollectiveSend", {}, ins=first_in), "peer_id", []),
    ("req_get_global_rank_id_missing_world_size", "GetGlobalRankId without world_size",
     mutate_i4("GetGlobalRankId", {}, ins=lambda i: []), "world_size", []),
    ("req_stream_shuffle_missing_mask", "StreamShuffle without mask", mutate_i4("StreamShuffle", {}, ins=first_in),
     "mask", []),
    ("req_bnbackprop_missing_total_elements", "BNBackprop without total_elements",
     mutate_i4("BNBackprop", {}, ins=first_in), "total_elements", []),
]
for name, why, mutate, key, extra in REQUIRED:
    what = ["is null"] if "is null" in extra else ["missing required key '" + key + "'"]
    bir_case(name, why, mutate, ["instruction 1 'I-4'", "field '" + key + "'"] + what + [e for e in extra if e != "is null"])

# ---------------------------------------------------------------------------------------- engine legality
# isa/tables/instruction_wire.def + engines_allowed.def: an engine the type's row does not list.
bir_case("engine_tensor_tensor_on_pe", "TensorTensor assigned to the PE array",
         mutate_i4("TensorTensor", {"op": "add"}, engine="PE", ins=two_ins),
         ["instruction 1 'I-4'", "field 'engine'", "TensorTensor cannot run on PE", "DVE"])
bir_case("engine_matmult_on_dve", "Matmult assigned to the vector engine",
         mutate_i4("Matmult", {}, engine="DVE", ins=two_ins),
         ["instruction 1 'I-4'", "field 'engine'", "Matmult cannot run on DVE", "(it runs on PE)"])
bir_case("engine_activation_on_pool", "Activation assigned to GpSimd",
         mutate_i4("Activation", ACT_KEYS, engine="Pool", ins=first_in),
         ["instruction 1 'I-4'", "field 'engine'", "Activation cannot run on Pool"])
bir_case("engine_tensor_scalar_ptr_on_pe", "TensorScalarPtr (real compiler output) assigned to PE",
         set_field(1, "engine", "PE"), ["instruction 1 'I-4'", "field 'engine'", "TensorScalarPtr cannot run on PE"])


# ---------------------------------------------------------------------------------------- PE size limits
def pe_module(st_free=128, mv_free=512, ps_shape=(128, 512), out_ap=None, out_offset=0):
    """One Matmult on PE: stationary SB [128, st_free], moving SB [128, mv_free] -> PSUM ps_shape (fp32)."""
    def alloc_(name, mem, shape, kind="Internal"):
        return {"Skind": "memory_location_set", "name": name + "_set", "kind": kind, "dtype": "float32",
                "tensor_shape": list(shape),
                "memorylocations": [{"Skind": "memory_location", "name": name, "type": mem,
                                     "dims": [shape[0], shape[1] * 4]}]}
    def ap(name, pattern, offset=0):
        return {"kind": "physical_ap", "memsetref": name + "_set", "dtype": "float32", "ap": pattern, "offset": offset}
    inst = {"opcode": "Matmult", "name": "I-1", "engine": "PE", "start_tensor_calc": True,
            "ins": [ap("st", [[st_free, 128], [1, st_free]]), ap("mv", [[mv_free, 128], [1, mv_free]])],
            "outs": [ap("ps", out_ap or [[ps_shape[1], ps_shape[0]], [1, ps_shape[1]]], out_offset)]}
    return {"version": 2, "functions": [{"name": "main", "allocations": [
        alloc_("st", "SB", (128, st_free)), alloc_("mv", "SB", (128, mv_free)), alloc_("ps", "PSUM", ps_shape)],
        "blocks": [{"name": "b0", "instructions": [inst]}]}]}


def module_case(name, why, module, stderr, exit_code=3, extra_args=()):
    bir_case(name, why, None, stderr, exit_code=exit_code, text=json.dumps(module) + "\n", extra_args=extra_args)


module_case("pe_stationary_free_over_128", "a stationary operand of 129 columns (the PE array has 128)",
            pe_module(st_free=129), ["instruction 0 'I-1'", "field 'ins[0]'", "129 elements per partition", "at most 128"])
module_case("pe_moving_free_over_512", "a moving operand of 513 columns on trn1 (one PSUM bank holds 512 fp32)",
            pe_module(mv_free=513, ps_shape=(128, 513)), ["instruction 0 'I-1'", "field 'ins[1]'",
                                                           "513 elements per partition", "at most 512"])
module_case("pe_output_spans_two_psum_banks", "a [128, 512] fp32 matmul output starting 1 KiB into a bank",
            pe_module(ps_shape=(128, 1024), out_ap=[[1024, 128], [1, 512]], out_offset=256),
            ["instruction 0 'I-1'", "field 'outs[0]'", "across banks 0 and 1", "one 2048-byte PSUM bank"])


# ---------------------------------------------------------------------------------------- shapes and dtypes
npy_case("input_same_count_other_shape", "a [100] array for the [10, 10] tensor (matched by count before)",
         npy_bytes("<f4", (100,), f32), ["input 'a'", "shape [100]", "declares [10, 10]"])
npy_case("input_transposed_shape", "a [5, 20] array for the [10, 10] tensor", npy_bytes("<f4", (5, 20), f32),
         ["input 'a'", "shape [5, 20]", "declares [10, 10]"])
npy_case("input_float64_hint", "float64 data (np.save of a default array): the conversion is named",
         npy_bytes("<f8", (10, 10), struct.pack("<100d", *range(100))), ["'<f8'", "a.astype(np.float32)"])
npy_case("input_name_is_output", "--input for the kernel's output tensor", npy_bytes("<f4", (10, 10), f32),
         ["'b' is an output", "its inputs: 'a'"], tensor="b")
npy_case("input_unknown_lists_inputs", "--input for a misspelt name: the valid inputs are listed",
         npy_bytes("<f4", (10, 10), f32), ["no input tensor named 'aa'", "its inputs: 'a'"], tensor="aa")

# expected files of the wrong shape / dtype
for name, why, content, stderr in [
        ("expect_wrong_shape", "an expected [100] array for the [10, 10] output", npy_bytes("<f4", (100,), f32),
         ["expected 'b'", "shape [100]", "declares [10, 10]"]),
        ("expect_wrong_dtype", "an expected int32 array for the float32 output",
         npy_bytes("<i4", (10, 10), struct.pack("<100i", *range(100))), ["expected 'b'", "int32", "float32 tensor"])]:
    path = name + ".npy"
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(content)
    cases.append({"name": name, "why": why, "setup": [{"mkdir": "{scratch}/exp"},
                                                    {"copy": ["{dir}/" + path, "{scratch}/exp/b.npy"]}],
                  "args": ["run", "{kernel1}/kernel1.bir.json", "--expect", "{scratch}/exp", "--outdir", "{out}"],
                  "exit": 3, "stderr": ["exp/b.npy"] + stderr})

cli_case("cli_duplicate_input", "the same input given twice",
         ["run", "{kernel1}/kernel1.bir.json", "--input", "a={kernel1}/inputs/a.npy", "--input",
          "a={kernel1}/inputs/a.npy", "--outdir", "{out}"], ["--input a is given twice"])
cli_case("cli_input_empty_path", "--input a= (no file)", ["run", "{kernel1}", "--input", "a=", "--outdir", "{out}"],
         ["--input a= needs a file name"])
cli_case("cli_inputs_missing_dir", "--inputs naming no directory",
         ["run", "{kernel1}", "--inputs", "{scratch}/no_such_dir", "--outdir", "{out}"],
         ["--inputs", "no_such_dir", "no such directory"])
cli_case("cli_inputs_is_a_file", "--inputs naming a file",
         ["run", "{kernel1}", "--inputs", "{kernel1}/kernel1.bir.json", "--outdir", "{out}"],
         ["--inputs", "not a directory"])
cli_case("cli_expect_missing_dir", "--expect naming no directory",
         ["run", "{kernel1}", "--expect", "{scratch}/no_such_dir", "--outdir", "{out}"],
         ["--expect", "no such directory"])
cli_case("cli_outdir_empty", "--outdir ''", ["run", "{kernel1}", "--outdir", ""], ["--outdir needs a path"])
cli_case("cli_stats_empty", "--stats ''", ["run", "{kernel1}", "--outdir", "{out}", "--stats", ""],
         ["--stats needs a path"])

# ---------------------------------------------------------------------------------------- CLI values
cli_case("cli_rtol_nan", "--rtol nan would pass every comparison", ["run", "{kernel1}", "--outdir", "{out}", "--rtol", "nan"],
         ["--rtol needs a finite number >= 0", "nan"])
cli_case("cli_atol_negative", "a negative tolerance", ["run", "{kernel1}", "--outdir", "{out}", "--atol", "-1e-3"],
         ["--atol needs a finite number >= 0"])
cli_case("cli_rtol_inf", "an infinite tolerance", ["run", "{kernel1}", "--outdir", "{out}", "--rtol", "inf"],
         ["--rtol needs a finite number >= 0"])
cli_case("cli_timing_only_with_expect", "--timing-only computes nothing to compare",
         ["run", "{kernel1}", "--timing-only", "--expect", "{kernel1}/expected"], ["--timing-only", "--expect"])
cli_case("cli_timing_only_with_input", "--timing-only would ignore the data",
         ["run", "{kernel1}/kernel1.bir.json", "--timing-only", "--input", "a={kernel1}/inputs/a.npy"],
         ["--timing-only", "--input"])
bir_case("json_number_overflows_double", "1e400 in an immediate (a double cannot hold it)", None,
         ["field 'functions[0].blocks[0].instructions[1].ins[1].value_list[0].value'", "'1e400' overflows a double"],
         text=VALID.replace('"value":1.0', '"value":1e400', 1))
cases.append({"name": "tolerance_file_negative", "why": "a workload's tolerance.json with rtol -1",
              "setup": [{"copy": ["{kernel1}", "{scratch}/w"]}, {"write": ["{scratch}/w/tolerance.json", "{\"rtol\": -1, \"atol\": 0}\n"]}],
              "args": ["run", "{scratch}/w", "--outdir", "{out}"], "exit": 3,
              "stderr": ["tolerance.json", "field 'rtol'", "finite number >= 0"]})

# ---------------------------------------------------------------------------------------- output paths
K1 = "{kernel1}/kernel1.bir.json"
cases.append({"name": "out_expect_is_outdir", "why": "--expect equal to --outdir: b.npy would overwrite the expectation",
              "setup": [{"copy": ["{kernel1}/expected", "{scratch}/exp"]}],
              "args": ["run", K1, "--expect", "{scratch}/exp", "--outdir", "{scratch}/exp"], "exit": 3,
              "stderr": ["exp/b.npy", "overwrite the input file"]})
cases.append({"name": "out_stats_is_kernel", "why": "--stats naming the kernel being run",
              "setup": [{"copy": [K1, "{scratch}/k.bir.json"]}],
              "args": ["run", "{scratch}/k.bir.json", "--outdir", "{out}", "--stats", "{scratch}/k.bir.json"], "exit": 3,
              "stderr": ["k.bir.json", "overwrite the input file"]})
cases.append({"name": "out_trace_is_input", "why": "--trace naming an input .npy",
              "setup": [{"copy": ["{kernel1}/inputs/a.npy", "{scratch}/a.npy"]}],
              "args": ["run", K1, "--input", "a={scratch}/a.npy", "--outdir", "{out}", "--trace", "{scratch}/a.npy"],
              "exit": 3, "stderr": ["a.npy", "overwrite the input file"]})
cases.append({"name": "out_device_print_is_kernel", "why": "--device-print naming the kernel (was truncated at once)",
              "setup": [{"copy": [K1, "{scratch}/k.bir.json"]}],
              "args": ["run", "{scratch}/k.bir.json", "--outdir", "{out}", "--device-print", "{scratch}/k.bir.json"],
              "exit": 3, "stderr": ["k.bir.json", "overwrite the input file"]})
cases.append({"name": "out_stats_through_symlink_to_kernel", "why": "--stats naming a symlink to the kernel",
              "setup": [{"copy": [K1, "{scratch}/k.bir.json"]}, {"symlink": ["{scratch}/k.bir.json", "{scratch}/s.json"]}],
              "args": ["run", "{scratch}/k.bir.json", "--outdir", "{out}", "--stats", "{scratch}/s.json"], "exit": 3,
              "stderr": ["s.json", "overwrite the input file"]})
cases.append({"name": "out_outdir_under_a_file", "why": "an --outdir that cannot be created (its parent is a file)",
              "setup": [{"write": ["{scratch}/f", "x"]}],
              "args": ["run", K1, "--outdir", "{scratch}/f/out"], "exit": 3,
              "stderr": ["f/out", "cannot create the output directory"]})
cases.append({"name": "out_stats_under_a_file", "why": "a --stats path whose directory cannot exist (checked before the run)",
              "setup": [{"write": ["{scratch}/f", "x"]}],
              "args": ["run", K1, "--outdir", "{out}", "--stats", "{scratch}/f/s.json"], "exit": 3,
              "stderr": ["f/s.json", "is not a directory"]})
cases.append({"name": "out_trace_dir_missing", "why": "a --trace path in a directory that does not exist (failed after the run)",
              "args": ["run", K1, "--outdir", "{out}", "--trace", "{scratch}/no/such/t.json"], "exit": 3,
              "stderr": ["no/such/t.json", "does not exist"]})
cases.append({"name": "out_trace_is_a_directory", "why": "--trace naming a directory",
              "setup": [{"mkdir": "{scratch}/t"}],
              "args": ["run", K1, "--outdir", "{out}", "--trace", "{scratch}/t"], "exit": 3,
              "stderr": ["t", "is a directory"]})
cases.append({"name": "out_device_print_kept_when_run_fails", "why": "an existing --device-print file stays as it was when the run fails",
              "setup": [{"write": ["{scratch}/prints.txt", "earlier prints\n"]}],
              "args": ["run", "{dir}/ap_outside_tensor.bir.json", "--outdir", "{out}", "--device-print",
                       "{scratch}/prints.txt"], "exit": 3,
              "stderr": ["ap_outside_tensor.bir.json", "instruction 0 'I-2'", "out of bounds"]})
cases.append({"name": "out_stats_kept_when_run_fails", "why": "an existing --stats file stays as it was when the run fails",
              "setup": [{"write": ["{scratch}/s.json", "{\"old\": 1}\n"]}],
              "args": ["run", "{dir}/ap_outside_tensor.bir.json", "--outdir", "{out}", "--stats", "{scratch}/s.json"],
              "exit": 3, "stderr": ["ap_outside_tensor.bir.json", "out of bounds"]})


def two_outputs(a, b):
    def f(m):
        o1 = copy.deepcopy(alloc(m, "b_set"))
        o1["name"] = a + "_set"
        o1["memorylocations"][0]["name"] = a
        o2 = copy.deepcopy(alloc(m, "b_set"))
        o2["name"] = b + "_set"
        o2["memorylocations"][0]["name"] = b
        fn(m)["allocations"] += [o1, o2]
    return f


bir_case("out_names_collide_after_sanitizing", "outputs 'x/y' and 'x_y' would both be written as x_y.npy",
         two_outputs("x/y", "x_y"), ["'x/y' and 'x_y'", "both be written as x_y.npy"])
bir_case("out_name_too_long", "an output tensor name of 300 bytes (no file name can hold it)",
         two_outputs("n" * 300, "m"), ["too long for a file name"])

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

# ---------------------------------------------------------------------------------------- nesting depth
# Deep documents are made by the test from a template (kernel1 with "@NEST@" in one place), so that thousands of
# levels need not be committed: nest_template (I-4 replaced), nest_expr_template (I-4's immediate selector
# expression replaced), nest_key_template (an extra key "x" on I-4).
I4 = json.dumps(insts(BASE)[1], separators=(",", ":"))


def write_template(name, mutate):
    m = copy.deepcopy(BASE)
    mutate(m)
    with open(os.path.join(HERE, name), "w") as f:
        f.write(dump(m).replace('"@NEST@"', "@NEST@"))


write_template("nest_template.bir.json", lambda m: insts(m).__setitem__(1, "@NEST@"))
write_template("nest_expr_template.bir.json", lambda m: insts(m)[1]["ins"][1].update(expr="@NEST@"))
write_template("nest_key_template.bir.json", lambda m: insts(m)[1].update(x="@NEST@"))


def nest_case(name, why, template, open_, core, close, n, stderr):
    cases.append({"name": name, "why": why,
                  "setup": [{"nest": ["{dir}/" + template, "{scratch}/deep.bir.json", open_, core, close, n]}],
                  "args": ["run", "{scratch}/deep.bir.json", "--outdir", "{out}"], "exit": 3,
                  "stderr": ["deep.bir.json"] + stderr})


LOOP_OPEN = '{"opcode":"Loop","name":"L","LoopAxis":{"name":"i","lb":0,"ub":1,"stride":1},"blocks":[{"name":"B","instructions":['
EXPR_OPEN = '{"kind":"MultKind","scale":1,"var":'
ZERO = '{"c":0,"kind":"AffExprKind","terms":[]}'
nest_case("depth_loops_10000", "10^4 nested loops (overflowed the native stack)", "nest_template.bir.json",
          LOOP_OPEN, I4, "]}]}", 10000, ["JSON nested deeper than 512 levels"])
nest_case("depth_loops_100", "100 nested loops: within the JSON limit, past the reader's", "nest_template.bir.json",
          LOOP_OPEN, I4, "]}]}", 100, ["nested deeper than 64 levels"])
nest_case("depth_blocks_10000", "10^4 nested blocks", "nest_template.bir.json", '{"instructions":[', I4, "]}", 10000,
          ["JSON nested deeper than 512 levels"])
nest_case("depth_expression_10000", "an address expression nested 10^4 levels", "nest_expr_template.bir.json",
          EXPR_OPEN, ZERO, "}", 10000, ["JSON nested deeper than 512 levels"])
nest_case("depth_expression_100", "an expression nested 100 levels: within the JSON limit, past the reader's",
          "nest_expr_template.bir.json", EXPR_OPEN, ZERO, "}", 100,
          ["instruction 1 'I-4'", "expression nested deeper than 64 levels"])
nest_case("depth_arrays_100000", "10^5 nested arrays under a key nobody reads", "nest_key_template.bir.json",
          "[", "0", "]", 100000, ["JSON nested deeper than 512 levels"])


def call_chain(n, fanout=1):
    """main calls f0; f_k calls f_{k+1} `fanout` times; the last function holds one NoOp."""
    m = copy.deepcopy(BASE)
    funcs = []
    for k in range(n):
        body = [{"opcode": "Call", "name": "c%d_%d" % (k, j), "target": "f%d" % (k + 1)} for j in range(fanout)]
        funcs.append({"name": "f%d" % k, "blocks": [{"name": "b", "instructions": body}]})
    funcs.append({"name": "f%d" % n, "blocks": [{"name": "b", "instructions": [{"opcode": "NoOp", "name": "n"}]}]})
    fn(m)["name"] = "main"
    insts(m).insert(1, {"opcode": "Call", "name": "I-3", "target": "f0"})
    m["functions"] += funcs
    return m


bir_case("depth_call_chain_2000", "a chain of 2000 calls (overflowed the native stack)", None,
         ["function 'f63'", "calls nested deeper than 64 levels"],
         text=json.dumps(call_chain(2000), separators=(",", ":")))
bir_case("calls_expand_exponentially", "each of 24 functions calls the next twice: 2^24 instructions", None,
         ["instruction 1 'I-3'", "field 'target'", "expands to more than 250000 instructions"],
         text=json.dumps(call_chain(24, 2), separators=(",", ":")))

# ---------------------------------------------------------------------------------------- regular files only
cases.append({"name": "fifo_kernel", "why": "a FIFO as the kernel (open() blocked forever)",
              "setup": [{"mkfifo": "{scratch}/k.bir.json"}],
              "args": ["run", "{scratch}/k.bir.json", "--outdir", "{out}"], "exit": 3,
              "stderr": ["k.bir.json", "kernel is a FIFO (named pipe), not a regular file"]})
cases.append({"name": "fifo_input", "why": "a FIFO as an input .npy",
              "setup": [{"mkfifo": "{scratch}/a.npy"}],
              "args": ["run", K1, "--input", "a={scratch}/a.npy", "--outdir", "{out}"], "exit": 3,
              "stderr": ["a.npy", "is a FIFO"]})
cases.append({"name": "devzero_input", "why": "an input .npy that is a symlink to /dev/zero (endless)",
              "setup": [{"symlink": ["/dev/zero", "{scratch}/a.npy"]}],
              "args": ["run", K1, "--input", "a={scratch}/a.npy", "--outdir", "{out}"], "exit": 3,
              "stderr": ["a.npy", "is a character device"]})
cases.append({"name": "directory_input", "why": "a directory as an input .npy",
              "setup": [{"mkdir": "{scratch}/a.npy"}],
              "args": ["run", K1, "--input", "a={scratch}/a.npy", "--outdir", "{out}"], "exit": 3,
              "stderr": ["a.npy", "is a directory"]})
cases.append({"name": "fifo_in_inputs_dir", "why": "a FIFO found in --inputs DIR",
              "setup": [{"mkdir": "{scratch}/in"}, {"mkfifo": "{scratch}/in/a.npy"}],
              "args": ["run", K1, "--inputs", "{scratch}/in", "--outdir", "{out}"], "exit": 3,
              "stderr": ["in/a.npy", "is a FIFO"]})
cases.append({"name": "fifo_expected", "why": "a FIFO as an expected file",
              "setup": [{"mkdir": "{scratch}/exp"}, {"mkfifo": "{scratch}/exp/b.npy"}],
              "args": ["run", K1, "--expect", "{scratch}/exp", "--outdir", "{out}"], "exit": 3,
              "stderr": ["exp/b.npy", "is a FIFO"]})
for name, why, step, stderr in [
        ("bundle_stream_devzero", "a bundle stream that is a symlink to /dev/zero (endless: internal error before)",
         {"symlink": ["/dev/zero", "{scratch}/b/DVE.bin"]}, ["DVE.bin", "is a character device"]),
        ("bundle_stream_directory", "a bundle stream that is a directory", {"mkdir": "{scratch}/b/DVE.bin"},
         ["DVE.bin", "is a directory"]),
        ("bundle_stream_longer_than_manifest", "a stream holding more bundles than its manifest declares",
         {"write": ["{scratch}/b/DVE.bin", "\u0000" * 192]}, ["DVE.bin", "holds 3 bundles, the manifest declares 1"]),
        ("bundle_manifest_fifo", "a FIFO as the bundle manifest", {"mkfifo": "{scratch}/b/manifest.json"},
         ["manifest.json", "is a FIFO"])]:
    setup = [{"copy": ["{dir}/bundle_deadlock", "{scratch}/b"]}, {"remove": step.get("symlink", [0, 0])[1]
                                                                   if "symlink" in step else
                                                                   step.get("mkdir") or step.get("mkfifo") or
                                                                   step["write"][0]}, step]
    cases.append({"name": name, "why": why, "setup": setup, "args": ["run", "{scratch}/b", "--outdir", "{out}"],
                  "exit": 3, "stderr": stderr})

# ---------------------------------------------------------------------------------------- architecture files
# `--arch FILE.json` (README "Architectures"): sim/arch/trn2.json, as `neuronsim arch --show trn2` prints it, with
# one mistake each. The loader (engines/arch.cpp) checks every key of arch_params.def, its type and its range.
with open(os.path.join(ROOT, "sim", "arch", "trn2.json")) as f:
    ARCH_TEXT = f.read()
ARCH = json.loads(ARCH_TEXT)


def arch_case(name, why, mutate, stderr, text=None):
    path = name + ".json"
    if text is None:
        a = copy.deepcopy(ARCH)
        mutate(a)
        text = json.dumps(a, indent=1) + "\n"
    with open(os.path.join(HERE, path), "w") as f:
        f.write(text)
    cases.append({"name": name, "why": why,
                  "args": ["run", "{kernel1}", "--outdir", "{out}", "--arch", "{dir}/" + path],
                  "exit": 3, "stderr": [path] + stderr})


def set_value(key, value):
    def mutate(a):
        a[key]["value"] = value
    return mutate


arch_case("arch_malformed", "an architecture file cut off in the middle", None, ["parse error"],
          text=ARCH_TEXT[:200])
arch_case("arch_missing_key", "an architecture file without dma_fixed_ns", lambda a: a.pop("dma_fixed_ns"),
          ["field 'dma_fixed_ns'", "missing"])
arch_case("arch_unknown_key", "a parameter the simulator does not have (a typo: dma_fixed_us)",
          lambda a: a.update(dma_fixed_us=a.pop("dma_fixed_ns")), ["field 'dma_fixed_us'", "unknown parameter"])
arch_case("arch_wrong_type", "partitions given as a string", set_value("partitions", "128"),
          ["field 'partitions'", "must be an integer", "\"128\""])
arch_case("arch_float_for_integer", "dma_engines given as 16.5", set_value("dma_engines", 16.5),
          ["field 'dma_engines'", "must be an integer", "16.5"])
arch_case("arch_negative_clock", "a negative PE clock", set_value("pe_ghz", -2.4),
          ["field 'pe_ghz'", "must be in [0.01, 100]", "-2.4"])
arch_case("arch_zero_partitions", "zero SBUF partitions", set_value("partitions", 0),
          ["field 'partitions'", "must be in [1, 128]", "got 0"])
arch_case("arch_zero_bandwidth", "a DMA engine that moves no bytes", set_value("dma_engine_bytes_per_ns", 0),
          ["field 'dma_engine_bytes_per_ns'", "must be in [0.001, 1e+06]", "got 0"])
arch_case("arch_efficiency_over_one", "a DMA transpose faster than a copy", set_value("dma_transpose_dram_efficiency", 1.5),
          ["field 'dma_transpose_dram_efficiency'", "must be in (0, 1]", "1.5"])
arch_case("arch_too_many_psum_banks", "16 PSUM banks (the simulator tracks 8)", set_value("psum_banks", 16),
          ["field 'psum_banks'", "must be in [1, 8]", "16"])
arch_case("arch_psum_banks_not_dividing", "3 PSUM banks of 16384 bytes", set_value("psum_banks", 3),
          ["field 'psum_banks'", "do not divide psum_bytes_per_partition 16384"])
arch_case("arch_missing_source", "a value without its source", lambda a: a["hbm_bytes_per_ns"].pop("source"),
          ["field 'hbm_bytes_per_ns'", "expected {\"value\": ..., \"source\": \"...\"}"])
cli_case("arch_file_missing", "an architecture file that does not exist",
         ["run", "{kernel1}", "--outdir", "{out}", "--arch", "{dir}/no_such_arch.json"],
         ["no_such_arch.json", "No such file"], exit_code=3)

# ======================================================================================== issue 28: no silent
# wrong answers, round 2 -- outputs that are devices, multi-core configuration, declarations, names, compare, sweep.
# Cases whose error comes after the run has simulated are named after_run_* (.ci/run leaves them out of the ASan
# suite: an exception after SystemC has run is misreported there); sweep cases run the Python package ("python").

# ---------------------------------------------------------------------------------------- outputs
NOT_AN_OUTPUT = "an output is a regular file"
for opt, name in [("--stats", "s.json"), ("--trace", "t.json"), ("--device-print", "p.txt")]:
    tag = opt[2:].replace("-", "_")
    cases.append({"name": f"out_{tag}_fifo", "why": f"{opt} naming a FIFO (blocked, or renamed over the node)",
                  "setup": [{"mkfifo": "{scratch}/" + name}],
                  "args": ["run", K1, "--outdir", "{out}", opt, "{scratch}/" + name], "exit": 3,
                  "stderr": [name, "the output path is a FIFO (named pipe)", NOT_AN_OUTPUT]})
cases.append({"name": "out_stats_socket", "why": "--stats naming a Unix socket",
              "setup": [{"mksocket": "{scratch}/s.sock"}],
              "args": ["run", K1, "--outdir", "{out}", "--stats", "{scratch}/s.sock"], "exit": 3,
              "stderr": ["s.sock", "the output path is a socket", NOT_AN_OUTPUT]})
cases.append({"name": "out_stats_symlink_to_fifo", "why": "--stats naming a symlink to a FIFO",
              "setup": [{"mkfifo": "{scratch}/f"}, {"symlink": ["{scratch}/f", "{scratch}/s.json"]}],
              "args": ["run", K1, "--outdir", "{out}", "--stats", "{scratch}/s.json"], "exit": 3,
              "stderr": ["s.json", "a FIFO"]})
cases.append({"name": "out_stats_dangling_symlink", "why": "--stats naming a symlink to nothing",
              "setup": [{"symlink": ["{scratch}/nowhere/x", "{scratch}/s.json"]}],
              "args": ["run", K1, "--outdir", "{out}", "--stats", "{scratch}/s.json"], "exit": 3,
              "stderr": ["s.json", "a symbolic link to nothing"]})
cases.append({"name": "out_trace_symlink_to_directory", "why": "--trace naming a symlink to a directory",
              "setup": [{"mkdir": "{scratch}/d"}, {"symlink": ["{scratch}/d", "{scratch}/t.json"]}],
              "args": ["run", K1, "--outdir", "{out}", "--trace", "{scratch}/t.json"], "exit": 3,
              "stderr": ["t.json", "the output path is a directory"]})
cases.append({"name": "out_npy_output_is_fifo", "why": "an output .npy in --outdir that is a FIFO",
              "setup": [{"mkdir": "{out}"}, {"mkfifo": "{out}/b.npy"}],
              "args": ["run", K1, "--outdir", "{out}"], "exit": 3, "stderr": ["out/b.npy", "a FIFO"]})
cases.append({"name": "out_save_inputs_fifo", "why": "--save-inputs DIR whose a.npy is a FIFO",
              "setup": [{"mkdir": "{scratch}/saved"}, {"mkfifo": "{scratch}/saved/a.npy"}],
              "args": ["run", K1, "--outdir", "{out}", "--save-inputs", "{scratch}/saved"], "exit": 3,
              "stderr": ["saved/a.npy", "a FIFO"]})
cases.append({"name": "out_save_inputs_socket", "why": "--save-inputs DIR whose a.npy is a socket",
              "setup": [{"mkdir": "{scratch}/sv"}, {"mksocket": "{scratch}/sv/a.npy"}],
              "args": ["run", K1, "--outdir", "{out}", "--save-inputs", "{scratch}/sv"], "exit": 3,
              "stderr": ["sv/a.npy", "a socket"]})
cases.append({"name": "out_encode_manifest_fifo", "why": "encode -o DIR holding a FIFO manifest.json",
              "setup": [{"mkdir": "{scratch}/enc"}, {"mkfifo": "{scratch}/enc/manifest.json"}],
              "args": ["encode", K1, "--gen", "v3", "-o", "{scratch}/enc"], "exit": 3,
              "stderr": ["enc", "not a previous `neuronsim encode` output"]})
for opt in ["--stats", "--trace"]:
    cases.append({"name": f"after_run_{opt[2:]}_dev_full", "why": f"{opt} /dev/full: every write error is an error",
                  "args": ["run", K1, "--outdir", "{out}", opt, "/dev/full"], "exit": 3,
                  "stderr": ["/dev/full", "write failed", "No space left on device"]})
for name, args in [("isa_json", ["isa", "--json"]), ("isa_keys", ["isa", "--keys"]), ("isa_roles", ["isa", "--roles"]),
                   ("arch_show", ["arch", "--show", "trn2"]), ("arch_list", ["arch", "--list"]),
                   ("explain", ["isa", "--explain", "Activation"]), ("help", ["run", "--help"]),
                   ("arch_keys", ["arch", "--keys"]), ("report_help", ["report", "--help"]),
                   ("nki_help", ["nki", "--help"]), ("compare_help", ["compare", "--help"])]:
    cases.append({"name": "stdout_full_" + name, "why": f"`neuronsim {' '.join(args)}` into a full device",
                  "stdout": "/dev/full", "args": args, "exit": 3, "stderr": ["stdout: write failed"]})
cases.append({"name": "after_run_stdout_full_run_json", "why": "`run --json` into a full device",
              "stdout": "/dev/full", "args": ["run", K1, "--outdir", "{out}", "--json"], "exit": 3,
              "stderr": ["stdout: write failed"]})

# ---------------------------------------------------------------------------------------- multi-core
def with_inst(extra):
    """kernel1 with `extra` (an instruction over tile.7, the TensorScalarPtr's output) after I-4."""
    def f(m):
        e = copy.deepcopy(extra)
        for side in ("ins", "outs"):
            if side in e:
                e[side] = [copy.deepcopy(insts(m)[1]["outs"][0]) for _ in e[side]]
        insts(m).insert(2, e)
    return f


def collective(groups, kind="AllReduce", **kw):
    i = {"opcode": "CollectiveCompute", "name": "I-5", "kind": kind, "op": "add", "ins": [0], "outs": [0]}
    if groups is not None:
        i["replica_groups"] = groups
    i.update(kw)
    return with_inst(i)


def mc_case(name, why, mutate, extra, stderr, exit_code=3):
    bir_case(name, why, mutate, ["instruction 2 'I-5'"] + stderr, exit_code=exit_code, extra_args=extra)


mc_case("mc_groups_beyond_cores", "replica groups [[0,1],[2,3]] on --cores 2 (cores 2 and 3 were ignored)",
        collective([[0, 1], [2, 3]]), ("--cores", "2"),
        ["field 'replica_groups'", "names core 3", "the run has 2 cores", "--cores 4"])
mc_case("mc_group_of_core1_on_one_core", "replica group [[1]] on one core (answered as if core 0 were in it)",
        collective([[1]]), ("--cores", "1"), ["field 'replica_groups'", "names core 1", "the run has 1 core"])
mc_case("mc_timing_only_fewer_cores", "a 4-core collective timed on 2 cores (single-core time, another bottleneck)",
        collective([[0, 1, 2, 3]]), ("--timing-only", "--cores", "2"), ["names core 3", "--cores 4"])
mc_case("mc_core_in_no_group", "replica groups [[0,1]] on 4 cores: cores 2 and 3 would skip the collective",
        collective([[0, 1]]), ("--cores", "4"), ["core 2 is in none of the replica groups", "--cores 2"])
mc_case("mc_core_in_two_groups", "core 1 in two replica groups of one collective",
        collective([[0, 1], [1, 0]]), ("--cores", "2"), ["core 1 is in two replica groups"])
mc_case("mc_negative_core", "a replica group naming core -1", collective([[-1, 0]]), ("--cores", "2"),
        ["names core -1"])
mc_case("mc_group_core_2_63", "a replica group naming core 2^63 - 1 (its + 1 overflowed the needed count)",
        collective([[0, 2**63 - 1]]), (), ["names core 9223372036854775807", "a run has at most 8 cores"])
mc_case("mc_peer_beyond_cores", "CollectiveSend to peer 3 on 2 cores",
        with_inst({"opcode": "CollectiveSend", "name": "I-5", "peer_id": 3, "ins": [0], "outs": []}), ("--cores", "2"),
        ["field 'peer_id'", "names core 3"])
mc_case("mc_barrier_beyond_cores", "CoreBarrier waiting for core 5 on 2 cores",
        with_inst({"opcode": "CoreBarrier", "name": "I-5", "cores": [0, 5]}), ("--cores", "2"),
        ["field 'cores'", "names core 5"])
mc_case("mc_permute_rank_beyond", "Permute to rank 3 on 2 ranks",
        collective([[0, 1]], kind="Permute", src_target_pairs=[[0, 3]]), ("--cores", "2"),
        ["field 'src_target_pairs'", "names rank 3", "which has 2 ranks"])
mc_case("mc_numeric_fewer_cores", "a 4-core collective run numerically on 2 cores",
        collective([[0, 1, 2, 3]]), ("--cores", "2"), ["names core 3"])
MC = "{workloads}/multicore"
cli_case("mc_lnc_contradicts_shard_ub", "an LNC=2 kernel (ShardIDKind ub 2) run as LNC=1 (half its output NaN)",
         ["run", MC + "/matmul_lnc2", "--outdir", "{out}", "--cores", "2", "--lnc", "1"],
         ["matmul_lnc2.bir.json", "ShardIDKind with ub 2", "LNC=1", "--lnc 2"], exit_code=3)
cli_case("mc_lnc2_kernel_on_trn1", "an LNC=2 kernel's BIR file run on trn1 (no logical cores there)",
         ["run", MC + "/matmul_lnc2/matmul_lnc2.bir.json", "--outdir", "{out}"],
         ["ShardIDKind with ub 2", "trn1 does not have", "--arch trn2"], exit_code=3)
cli_case("mc_timing_only_lnc_contradicts", "an LNC=2 kernel timed as LNC=1",
         ["run", MC + "/matmul_lnc2", "--timing-only", "--lnc", "1", "--cores", "2"], ["ShardIDKind", "LNC=1"],
         exit_code=3)
cli_case("mc_compare_fewer_cores", "compare of a 4-core kernel on 2 cores (+0.0% for a -42% change)",
         ["compare", MC + "/tp_mlp_4ranks", MC + "/tp_mlp_4ranks", "--cores", "2"],
         ["tp_mlp_4ranks.bir.json", "names core 3", "--cores 4"], exit_code=3)
cli_case("mc_compare_lnc_contradicts", "compare of an LNC=2 kernel as LNC=1",
         ["compare", MC + "/matmul_lnc2", MC + "/matmul_lnc2", "--lnc", "1", "--cores", "2"], ["ShardIDKind"],
         exit_code=3)
cli_case("mc_encode_one_core", "encode of a 2-core kernel as one core's streams (they cannot run)",
         ["encode", MC + "/tp_mlp_2ranks", "--gen", "v3", "-o", "{out}"], ["names core 1", "--cores 2"],
         exit_code=3)
cli_case("mc_encode_fewer_cores", "encode --cores 2 of a 4-core kernel",
         ["encode", MC + "/tp_mlp_4ranks", "--gen", "v3", "-o", "{out}", "--cores", "2"], ["names core 3"],
         exit_code=3)
cli_case("cli_cores_zero", "--cores 0", ["run", K1, "--outdir", "{out}", "--cores", "0"],
         ["--cores needs a whole number from 1 to 8, got '0'"])
cli_case("cli_cores_nine", "--cores 9 (a device has at most 8)", ["run", K1, "--outdir", "{out}", "--cores", "9"],
         ["--cores needs a whole number from 1 to 8"])
cli_case("cli_lnc_text", "--lnc two", ["run", K1, "--outdir", "{out}", "--lnc", "two"], ["--lnc needs a whole number"])


def run_json_case(name, why, text, stderr, base="{kernel1}", extra=(), exit_code=3, more_setup=()):
    cases.append({"name": name, "why": why,
                  "setup": [{"copy": [base, "{scratch}/w"]}, {"write": ["{scratch}/w/run.json", text]}] +
                           list(more_setup),
                  "args": ["run", "{scratch}/w", "--outdir", "{out}"] + list(extra), "exit": exit_code,
                  "stderr": stderr})


run_json_case("runjson_unknown_key", "run.json with 'core' for 'cores'", '{"core": 2}\n',
              ["run.json", "field 'core'", "did you mean 'cores'?"])
run_json_case("runjson_cores_string", "run.json cores as a string", '{"cores": "2"}\n',
              ["run.json", "field 'cores'", "whole number from 1 to 8", "\"2\""])
run_json_case("runjson_cores_nine", "run.json cores 9", '{"cores": 9}\n', ["run.json", "field 'cores'", "got 9"])
run_json_case("runjson_lnc_not_dividing", "run.json cores 3 with lnc 2", '{"cores": 3, "lnc": 2}\n',
              ["run.json", "field 'lnc'", "3 cores do not make logical cores of 2"])
run_json_case("runjson_bad_arch", "run.json arch trn22", '{"arch": "trn22"}\n',
              ["run.json", "field 'arch'", "did you mean 'trn2'?"])
run_json_case("runjson_tolerance_twice", "run.json and tolerance.json both give the tolerance",
              '{"tolerance": {"rtol": 0, "atol": 0}}\n', ["run.json", "tolerance twice"],
              more_setup=[{"write": ["{scratch}/w/tolerance.json", '{"rtol": 0, "atol": 0}\n']}])
run_json_case("runjson_tolerance_negative", "run.json atol -1", '{"tolerance": {"rtol": 0, "atol": -1}}\n',
              ["run.json", "field 'tolerance.atol'", "finite number >= 0"])
run_json_case("runjson_tolerance_unknown_key", "run.json tolerance with 'rtl'", '{"tolerance": {"rtl": 0, "atol": 0}}\n',
              ["run.json", "field 'tolerance.rtl'", "did you mean 'rtol'?"])
run_json_case("runjson_not_object", "run.json holding a list", '[2, 1]\n', ["run.json", "is a JSON object"])
run_json_case("runjson_malformed", "run.json cut short", '{"cores": 2,', ["run.json", "malformed JSON"])
run_json_case("runjson_contradicts_kernel", "run.json cores 2 for a kernel whose replica group names 4",
              '{"arch": "trn2", "cores": 2, "lnc": 1}\n', ["tp_mlp_4ranks.bir.json", "names core 3", "--cores 4"],
              base=MC + "/tp_mlp_4ranks")
run_json_case("runjson_lnc_contradicts_kernel", "run.json lnc 1 for an LNC=2 kernel",
              '{"arch": "trn2", "cores": 2, "lnc": 1}\n', ["ShardIDKind with ub 2", "LNC=1"], base=MC + "/matmul_lnc2")
cases.append({"name": "runjson_fifo", "why": "a workload whose run.json is a FIFO",
              "setup": [{"copy": ["{kernel1}", "{scratch}/w"]}, {"mkfifo": "{scratch}/w/run.json"}],
              "args": ["run", "{scratch}/w", "--outdir", "{out}"], "exit": 3, "stderr": ["run.json", "is a FIFO"]})


def half_save(m):
    """Save writes only partitions 0-4 of b: the other 50 elements keep the 0xFF fill (NaN)."""
    for side in ("ins", "outs"):
        insts(m)[2][side][0]["ap"] = [[10, 5], [10, 1], [1, 10]]


bir_case("strict_unwritten_output", "--strict: 50 of b's 100 elements written by no instruction",
         half_save, ["output 'b': 50 of 100 elements were written by no instruction", "--strict"], exit_code=4,
         extra_args=("--strict",))

# ---------------------------------------------------------------------------------------- declarations
def dims(set_name, d, dtype=None):
    def f(m):
        alloc(m, set_name)["memorylocations"][0]["dims"] = d
        if dtype:
            alloc(m, set_name)["dtype"] = dtype
    return f


bir_case("decl_output_dims_disagree", "output declared [10, 10] float32 in a location of [10, 80] bytes (a .npy "
         "truncated to one and placed as the other)", dims("b_set", [10, 80]),
         ["allocations[1].memorylocations[0].dims", "tensor 'b' is declared [10, 10] float32", "[10, 80]"])
bir_case("decl_input_dims_disagree", "input a declared [10, 10] in [10, 20] bytes (refused with no file or tensor)",
         dims("a_set", [10, 20]), ["tensor 'a' is declared [10, 10] float32", "[10, 20]"])
bir_case("decl_partitions_disagree", "a tile declared 10 partitions in a location of 5", dims("tile.9_set", [5, 40]),
         ["tensor 'tile.9'", "10 partitions x 40 bytes", "[5, 40]"])
bir_case("decl_dtype_disagrees", "a tile declared bfloat16 in float32's bytes", dims("tile.7_set", [10, 40], "bfloat16"),
         ["tensor 'tile.7' is declared [10, 10] bfloat16", "10 partitions x 20 bytes", "[10, 40]"])


def rename_key(path, old, new):
    def f(m):
        o = m
        for k in path:
            o = o[k]
        o[new] = o.pop(old)
    return f


bir_case("decl_misspelt_allocations", "'allocatons' for 'allocations' (was: a misleading 'no allocation named')",
         rename_key(["functions", 0], "allocations", "allocatons"),
         ["no allocation named", "the unknown key 'allocatons' of a function was ignored",
          "did you mean 'allocations'?"])
bir_case("decl_misspelt_blocks", "'blcoks' for 'blocks'", rename_key(["functions", 0], "blocks", "blcoks"),
         ["missing required key 'blocks'", "did you mean 'blocks'?"])
bir_case("decl_misspelt_memorylocations", "'memorylocation' for 'memorylocations'",
         lambda m: rename_key([], "memorylocations", "memorylocation")(alloc(m, "a_set")),
         ["missing required key 'memorylocations'", "did you mean 'memorylocations'?"])
bir_case("decl_misspelt_instructions", "'instuctions' for 'instructions' in a block",
         rename_key(["functions", 0, "blocks", 0], "instructions", "instuctions"),
         ["missing required key 'instructions'", "did you mean 'instructions'?"])
bir_case("decl_misspelt_functions", "'function' for 'functions' in the module", rename_key([], "functions", "function"),
         ["missing required key 'functions'", "did you mean 'functions'?"])

# ---------------------------------------------------------------------------------------- names
bir_case("name_activation_lowercase", "Activation func 'relu' (the reader takes 'Relu')", to_activation("relu"),
         ["field 'func'", "did you mean 'Relu'?", "valid: Identity,"])
bir_case("name_alu_mul", "op0 'mul' for 'mult'", set_field(1, "op0", "mul"), ["field 'op0'", "did you mean 'mult'?"])
bir_case("name_dtype_fp32", "an operand dtype 'fp32' (numpy's word)", arg_dtype(1, "ins", 0, "fp32"),
         ["field 'ins[0].dtype'", "did you mean 'float32'?"])
bir_case("name_dtype_bf16", "an allocation dtype 'bf16'", lambda m: alloc(m, "tile.9_set").update(dtype="bf16"),
         ["field 'allocations[3].dtype'", "did you mean 'bfloat16'?"])
bir_case("name_engine_lowercase", "engine 'dve' for 'DVE'", set_field(1, "engine", "dve"),
         ["field 'engine'", "did you mean 'DVE'?", "valid:"])
bir_case("name_opcode_lowercase", "opcode 'tensorscalarptr'", set_field(1, "opcode", "tensorscalarptr"),
         ["field 'opcode'", "did you mean 'TensorScalarPtr'?"])
bir_case("name_memory_type_sbuf", "memory type 'SBUF' (BIR says SB)",
         lambda m: alloc(m, "tile.9_set")["memorylocations"][0].update(type="SBUF"),
         ["unknown MemoryType 'SBUF'", "did you mean 'SB'?", "valid:"])
bir_case("name_memory_type_hbm", "memory type 'HBM' (NKI's nl.hbm; BIR says DRAM)",
         lambda m: alloc(m, "a_set")["memorylocations"][0].update(type="HBM"),
         ["unknown MemoryType 'HBM'", "did you mean 'DRAM'?"])
bir_case("name_engine_nki_vector", "engine 'Vector' (nki.isa's vector engine is DVE)", set_field(1, "engine", "Vector"),
         ["field 'engine'", "did you mean 'DVE'?"])
bir_case("name_engine_nki_gpsimd", "engine 'GpSimd' (nki.isa's gpsimd engine is Pool)", set_field(1, "engine", "GpSimd"),
         ["field 'engine'", "did you mean 'Pool'?"])
bir_case("name_alu_multiply", "op0 'multiply' (nl.multiply) for 'mult'", set_field(1, "op0", "multiply"),
         ["field 'op0'", "did you mean 'mult'?"])
bir_case("name_alu_maximum", "op0 'maximum' (nl.maximum) for 'max'", set_field(1, "op0", "maximum"),
         ["field 'op0'", "did you mean 'max'?"])
cli_case("name_arch_option_typo", "arch --lsit for --list", ["arch", "--lsit"],
         ["unknown option '--lsit'", "did you mean '--list'?"])
cli_case("name_arch_show_typo", "arch --show trn22", ["arch", "--show", "trn22"],
         ["unknown architecture 'trn22'", "did you mean 'trn2'?"], exit_code=3)
bir_case("name_tensor_kind_case", "allocation kind 'externaloutput'", lambda m: alloc(m, "b_set").update(kind="externaloutput"),
         ["field 'allocations[1].kind'", "did you mean 'ExternalOutput'?"])
bir_case("name_arg_kind_listed", "argument kind 'physical'", lambda m: insts(m)[0]["ins"][0].update(kind="physical"),
         ["unknown argument kind 'physical'", "valid: physical_ap, symbolic_ap"])
bir_case("name_memsetref_typo", "memsetref 'tile.9_sett'", lambda m: insts(m)[1]["ins"][0].update(memsetref="tile.9_sett"),
         ["no allocation named 'tile.9_sett'", "did you mean 'tile.9_set'?"])
cli_case("name_cli_arch_case", "--arch TRN2", ["run", K1, "--outdir", "{out}", "--arch", "TRN2"],
         ["--arch takes trn1, trn2, trn3", "did you mean 'trn2'?"])
cli_case("name_cli_option_typo", "--outdri for --outdir", ["run", K1, "--outdri", "{out}"],
         ["unknown option '--outdri'", "did you mean '--outdir'?"])
cli_case("name_cli_schedule_typo", "--schedule stream", ["run", K1, "--outdir", "{out}", "--schedule", "stream"],
         ["--schedule takes auto, whole or streamed", "did you mean 'streamed'?"])
cli_case("name_cli_gen_trn", "encode --gen trn2 (the generation is v3)", ["encode", K1, "--gen", "trn2", "-o", "{out}"],
         ["--gen takes v2, v3 or v4", "did you mean 'v3'?"])
cli_case("name_cli_command_typo", "'rnu' for 'run'", ["rnu", K1], ["unknown command 'rnu'", "did you mean 'run'?"])
cli_case("name_isa_explain_case", "isa --explain activation", ["isa", "--explain", "activation"],
         ["unknown instruction type 'activation'", "did you mean 'Activation'?"])
cli_case("name_compare_option_typo", "compare --fail-if-slowr", ["compare", K1, K1, "--fail-if-slowr", "5"],
         ["unknown option '--fail-if-slowr'", "did you mean '--fail-if-slower'?"])
arch_case("name_arch_file_key_typo", "an architecture file with pe_ghzz", lambda a: a.update(pe_ghzz=a.pop("pe_ghz")),
          ["field 'pe_ghzz'", "did you mean 'pe_ghz'?"])

# Every subcommand parses by one option table (sim/cli/cli.hpp): the nearest of an unknown option, and every new
# output path (run --report, report -o, nki --emit-bir) under the output rule (isa::output_target).
cli_case("name_nki_option_typo", "nki --timing-olny (run's option, forwarded)",
         ["nki", "{scratch}/k.py::f", "--timing-olny"], ["unknown option '--timing-olny'", "did you mean '--timing-only'?"])
cli_case("name_nki_own_option_typo", "nki --emit-bri", ["nki", "{scratch}/k.py::f", "--emit-bri", "{scratch}/k.json"],
         ["unknown option '--emit-bri'", "did you mean '--emit-bir'?"])
cli_case("nki_emit_bir_empty", "nki --emit-bir ''", ["nki", "{scratch}/k.py::f", "--emit-bir", ""],
         ["--emit-bir needs a path"])
cases.append({"name": "out_nki_emit_bir_fifo", "why": "nki --emit-bir naming a FIFO: refused before tracing",
              "setup": [{"mkfifo": "{scratch}/k.bir.json"}],
              "args": ["nki", "{scratch}/k.py::f", "--emit-bir", "{scratch}/k.bir.json"], "exit": 3,
              "stderr": ["k.bir.json", "a FIFO"]})
cli_case("name_report_option_typo", "report --baselin", ["report", "{scratch}/s.json", "-o", "{scratch}/r.html",
                                                         "--baselin", "trn1"],
         ["unknown option '--baselin'", "did you mean '--baseline'?"])
cli_case("report_empty_input", "report '' -o r.html", ["report", "", "-o", "{scratch}/r.html"],
         ["an empty path"])
cases.append({"name": "out_report_fifo", "why": "report -o naming a FIFO",
              "setup": [{"write": ["{scratch}/s.json", "{}"]}, {"mkfifo": "{scratch}/r.html"}],
              "args": ["report", "{scratch}/s.json", "-o", "{scratch}/r.html"], "exit": 3,
              "stderr": ["r.html", "a FIFO"]})
cases.append({"name": "out_run_report_fifo", "why": "run --report naming a FIFO: refused before the run",
              "setup": [{"mkfifo": "{scratch}/r.html"}],
              "args": ["run", K1, "--outdir", "{out}", "--report", "{scratch}/r.html"], "exit": 3,
              "stderr": ["r.html", "a FIFO"]})
cli_case("name_run_set_key_typo", "--set dma_fixed_nss=650", ["run", K1, "--outdir", "{out}", "--set",
                                                              "dma_fixed_nss=650"],
         ["unknown architecture parameter", "did you mean 'dma_fixed_ns'?"])
cli_case("name_compare_arch_b_typo", "compare --arch-c", ["compare", K1, "--arch-c", "trn2"],
         ["unknown option '--arch-c'", "did you mean '--arch-b'?"])
cli_case("arch_two_actions", "arch --list --keys", ["arch", "--list", "--keys"], ["arch takes --list, --keys or --show"])

# ---------------------------------------------------------------------------------------- compare
def stats_doc(total, kernel="kernel1.bir.json", **extra):
    d = {"tool": {"name": "neuronsim"}, "arch": "trn1", "kernel": kernel, "total_ns": total,
         "engines": {"DVE": {"busy_ns": 57.1, "utilization": 0.013}}, "dma": {"busy_ns": 2894.6, "utilization": 0.04},
         "bottleneck": "DMA"}
    d.update(extra)
    return json.dumps(d) + "\n"


def compare_case(name, why, a, b, stderr, extra=(), exit_code=3):
    cases.append({"name": name, "why": why,
                  "setup": [{"write": ["{scratch}/a.json", a]}, {"write": ["{scratch}/b.json", b]}],
                  "args": ["compare", "{scratch}/a.json", "{scratch}/b.json"] + list(extra), "exit": exit_code,
                  "stderr": stderr})


compare_case("compare_total_zero", "a baseline of 0 ns passed --fail-if-slower", stats_doc(0), stats_doc(100),
             ["a.json", "field 'total_ns'", "above 0", "got 0"], extra=("--fail-if-slower", "5"))
compare_case("compare_total_negative", "a negative total", stats_doc(100), stats_doc(-5),
             ["b.json", "field 'total_ns'", "got -5"])
compare_case("compare_total_string", "total_ns as a string", stats_doc(100), stats_doc("fast"),
             ["b.json", "field 'total_ns'", "needs a number", "\"fast\""])
compare_case("compare_engine_wrong_type", "an engine row that is a number", stats_doc(100),
             stats_doc(100, engines={"DVE": 5}), ["b.json", "field 'engines.DVE'", "needs an object"])
compare_case("compare_busy_wrong_type", "busy_ns as a string", stats_doc(100),
             stats_doc(100, engines={"DVE": {"busy_ns": "57", "utilization": 0.1}}),
             ["b.json", "field 'engines.DVE.busy_ns'", "needs a number"])
compare_case("compare_profile_row_wrong_type", "critical_path_ns as a list", stats_doc(100),
             stats_doc(100, profile={"instructions": [{"name": "I-4", "critical_path_ns": [1]}]}),
             ["b.json", "field 'profile.instructions[0].critical_path_ns'", "needs a number"])
compare_case("compare_line_wrong_type", "a source line as text", stats_doc(100),
             stats_doc(100, profile={"source_lines": [{"file": "k.py", "line": "ten", "critical_path_ns": 1}]}),
             ["b.json", "field 'profile.source_lines[0].line'", "whole number"])
compare_case("compare_other_kernel", "two documents of different kernels (no --force)", stats_doc(100),
             stats_doc(90, kernel="softmax.bir.json"), ["b.json", "not the same run to compare", "kernel1.bir.json",
                                                        "softmax.bir.json", "--force"])
compare_case("compare_other_cores", "a 4-core document against a 1-core one", stats_doc(100),
             stats_doc(60, device={"cores": 4, "lnc": 1, "total_ns": 60}), ["b.json", "A ran on 1 cores", "B on 4",
                                                                            "--force"])
compare_case("compare_cores_for_documents", "--cores with two --stats documents", stats_doc(100), stats_doc(90),
             ["--cores / --lnc are for kernels run here"], extra=("--cores", "2"), exit_code=2)
compare_case("compare_device_total_zero", "a device total of 0", stats_doc(100, device={"cores": 2, "total_ns": 0}),
             stats_doc(100, device={"cores": 2, "total_ns": 5}), ["a.json", "field 'device.total_ns'"])

cases.append({"name": "workload_fifo_beside_the_kernel", "why": "a workload folder whose second *.bir.json is a FIFO "
              "(ran the other one, and a sweep lost the FIFO's row)",
              "setup": [{"copy": ["{kernel1}", "{scratch}/w"]}, {"mkfifo": "{scratch}/w/other.bir.json"}],
              "args": ["run", "{scratch}/w", "--outdir", "{out}"], "exit": 3,
              "stderr": ["exactly one *.bir.json file (found 2: kernel1.bir.json, other.bir.json)"]})

# ---------------------------------------------------------------------------------------- sweep (Python package)
def sweep_case(name, why, args, stderr, exit_code=2, setup=()):
    cases.append({"name": name, "why": why, "python": True, "setup": list(setup), "args": ["sweep"] + args,
                  "exit": exit_code, "stderr": stderr})


sweep_case("sweep_empty_label_path", "label= with an empty path (ran whatever the current folder held)",
           ["mine=", "-o", "{scratch}/r.csv"], ["sweep: kernel mine='' has an empty path"])
sweep_case("sweep_workers_too_many", "--workers 100000 (hung growing memory)",
           ["{kernel1}", "--workers", "100000"], ["sweep: workers 100000", "this machine holds at most"])
sweep_case("sweep_ambiguous_folder", "a folder with one *.bir.json beside a kernel folder",
           ["{scratch}/v"], ["is ambiguous", "kernel folders (k1)"], exit_code=3,
           setup=[{"mkdir": "{scratch}/v"}, {"copy": [K1, "{scratch}/v/a.bir.json"]},
                  {"copy": ["{kernel1}", "{scratch}/v/k1"]}])
sweep_case("sweep_out_fifo", "-o naming a FIFO", ["{kernel1}", "-o", "{scratch}/r.csv"],
           ["r.csv", "a FIFO"], exit_code=3, setup=[{"mkfifo": "{scratch}/r.csv"}])
sweep_case("sweep_arch_typo", "--arch trn22", ["{kernel1}", "--arch", "trn22"],
           ["arch 'trn22' is not one of", "did you mean 'trn2'?"])
sweep_case("sweep_rank_by_typo", "--rank-by total_n", ["{kernel1}", "--rank-by", "total_n"],
           ["cannot rank by 'total_n'", "did you mean 'total_ns'?"])
sweep_case("sweep_cores_zero", "--cores 0", ["{kernel1}", "--cores", "0"], ["cores must be at least 1"])

with open(os.path.join(HERE, "catalogue.json"), "w") as f:
    json.dump({"about": "Malformed inputs and the one-line error neuronsim must give for each; written by "
                        "make_cases.py, run by tests/cli/test_bad_inputs.cpp. Placeholders: {dir} this folder, "
                        "{out} a fresh --outdir, {kernel1} workloads/kernel1, {workloads} workloads/, {scratch} the "
                        "case's scratch folder; \"stdout\": where stdout goes; \"python\": a sweep (the Python "
                        "package).",
               "cases": cases}, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
