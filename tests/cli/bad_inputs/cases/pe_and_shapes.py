"""PE size limits, operand shapes and dtypes, expected files of the wrong shape / dtype."""
import json
import os
import struct

from .common import HERE, bir_case, cases
from .npy_and_cli import cli_case, f32, npy_bytes, npy_case


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
