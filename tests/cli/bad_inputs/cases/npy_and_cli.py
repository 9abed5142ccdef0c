"""Malformed .npy inputs and command lines."""
import os
import struct

from .common import HERE, cases


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
