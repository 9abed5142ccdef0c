"""Inputs that are not regular files, and architecture files with one mistake each."""
import copy
import json
import os

from .common import HERE, ROOT, cases
from .npy_and_cli import cli_case
from .cli_outputs import K1


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
# `--arch FILE.json` (docs/architectures.md): sim/arch/trn2.json, as `neuronsim arch --show trn2` prints it, with
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
arch_case("arch_missing_key", "an architecture file without dma_latency_ns", lambda a: a.pop("dma_latency_ns"),
          ["field 'dma_latency_ns'", "missing"])
arch_case("arch_unknown_key", "a parameter the simulator does not have (a typo: dma_latency_us)",
          lambda a: a.update(dma_latency_us=a.pop("dma_latency_ns")), ["field 'dma_latency_us'", "unknown parameter"])
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
