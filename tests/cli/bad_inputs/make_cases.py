#!/usr/bin/env python3
"""Writes the malformed BIR JSON / .npy inputs of tests/cli/bad_inputs and catalogue.json.

Every BIR case is workloads/kernel1/kernel1.bir.json (real compiler output: Load I-2, TensorScalarPtr I-4,
Save I-6 = instructions 0, 1, 2) with one hand-picked mutation, so each file isolates one mistake. The files
are committed; rerun this script (python3 tests/cli/bad_inputs/make_cases.py) only to change the set. The
bundle cases (bundle_*/) are written by make_bundles.cpp (how to build it: its header comment).

Catalogue placeholders, substituted by tests/cli/test_bad_inputs.cpp: {dir} = this folder, {out} = a fresh
empty --outdir per case, {kernel1} = workloads/kernel1.
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
    """Drops I-4's TensorScalarPtr keys, so the instruction can become another opcode."""
    for k in ["op0", "op1", "reverse0", "reverse1", "is_scalar_tensor_tensor", "is_tensor_scalar_addr",
              "is_tensor_tensor_scan"]:
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
         ["int32", "cannot be loaded into a float32 tensor"])
npy_case("npy_big_endian", "big-endian float32", npy_bytes(">f4", (10, 10), struct.pack(">100f", *range(100))),
         ["unsupported .npy dtype '>f4'"])
npy_case("npy_wrong_shape", "5x5 data for a 10x10 tensor", npy_bytes("<f4", (5, 5), f32[:100]),
         ["'a'", "shape 5x5", "10x10"])
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

with open(os.path.join(HERE, "catalogue.json"), "w") as f:
    json.dump({"about": "Malformed inputs and the one-line error neuronsim must give for each; written by "
                        "make_cases.py, run by tests/cli/test_bad_inputs.cpp. Placeholders: {dir} this folder, "
                        "{out} a fresh --outdir, {kernel1} workloads/kernel1.",
               "cases": cases}, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
