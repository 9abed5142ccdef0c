"""Bundle streams (folders made by make_bundles.cpp) and encoding refusals."""
import copy
import json
import os

from .common import BASE, HERE, cases, dump, insts, strip_tensor_scalar_ptr


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



# A manifest naming a stream no engine has (the folder is bundle_deadlock's, copied, with its manifest altered).
def manifest_case(name, why, alter, stderr):
    with open(os.path.join(HERE, "bundle_deadlock", "manifest.json")) as f:
        m = json.load(f)
    alter(m)
    cases.append({"name": name, "why": why,
                  "setup": [{"copy": ["{dir}/bundle_deadlock", "{scratch}/b"]},
                            {"write": ["{scratch}/b/manifest.json", json.dumps(m, indent=1) + "\n"]}],
                  "args": ["run", "{scratch}/b", "--outdir", "{out}"], "exit": 3,
                  "stderr": ["b/manifest.json"] + stderr})


manifest_case("bundle_manifest_unknown_engine_file", "files naming GPU.bin, a stream of no engine (was accepted)",
              lambda m: m["files"].update({"GPU.bin": 1}),
              ["field 'files.GPU.bin'", "'GPU.bin' is no engine's stream", "DVE.bin"])
manifest_case("bundle_manifest_other_engines_file", "the DVE instruction read from SP.bin (decoded SP's bundle as DVE's)",
              lambda m: m["instructions"][1].update(file="SP.bin"),
              ["instruction 1 'I-2'", "field 'file'", "'SP.bin' is not the stream of the instruction's engine DVE"])

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
