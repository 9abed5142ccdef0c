"""CLI option values and output paths."""
import copy

from .common import VALID, alloc, bir_case, cases, fn
from .npy_and_cli import cli_case


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
