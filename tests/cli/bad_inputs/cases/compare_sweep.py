"""`neuronsim compare` inputs, and `neuronsim sweep` arguments (the Python package)."""
import json

from .common import cases
from .cli_outputs import K1


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
compare_case("compare_set_b_on_documents", "--set-b with two --stats documents (ignored: +0.0%)", stats_doc(100),
             stats_doc(100), ["--set-b is for kernels run here", "B (", "b.json) is a --stats document"],
             extra=("--set-b", "dma_latency_ns=425"), exit_code=2)
compare_case("compare_arch_on_documents", "--arch with two --stats documents (ignored)", stats_doc(100),
             stats_doc(100), ["--arch is for kernels run here", "a.json) is a --stats document"],
             extra=("--arch", "trn2"), exit_code=2)
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
