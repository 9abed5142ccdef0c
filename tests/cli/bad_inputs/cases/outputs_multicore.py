"""Issue 28 (no silent wrong answers, round 2): outputs that are devices, multi-core configuration."""
import copy

from .common import bir_case, cases, insts
from .npy_and_cli import cli_case
from .cli_outputs import K1


# ======================================================================================== issue 28: no silent
# wrong answers, round 2 -- outputs that are devices, multi-core configuration, declarations, names, compare, sweep.
# Cases whose error comes after the run has simulated are named after_run_*; sweep cases run the Python package
# ("python").

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
