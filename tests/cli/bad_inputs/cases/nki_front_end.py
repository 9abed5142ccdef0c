"""`neuronsim nki FILE.py::FUNCTION` (issue 39 items 2, 4, 6, 7): the output rule before any work, inputs that are
no regular file, unrolling and launch grids bounded by --max-instructions, messages in the kernel's terms, and the
working directory never shadowing the NKI names. Each kernel file is written by the case's setup; the cases run the
Python package ("python": skipped in the sanitizer build, which cannot load it)."""
from .common import cases

# y = x + 1 over one tile: the kernel every case alters one thing of.
ADD1 = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def f(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.add(t, 1.0))
    return out
"""
A = "{kernel1}/inputs/a.npy"  # float32 [10, 10]


def nki_case(name, why, args, stderr, kernel=ADD1, setup=(), exit_code=3, cwd=None, at="{scratch}/k.py"):
    case = {"name": name, "why": why, "python": True,
            "setup": list(setup) + [{"write": [at, kernel]}],
            "args": ["nki", at + "::f"] + args, "exit": exit_code, "stderr": stderr}
    if cwd:
        case["cwd"] = cwd
        case["args"][1] = at.replace(cwd + "/", "") + "::f"
    cases.append(case)


# ---------------------------------------------------------------------------------------- one output rule
nki_case("nki_emit_bir_is_input", "--emit-bir naming the --input .npy (overwritten, then the run failed)",
         ["--input", "a={scratch}/a.npy", "--emit-bir", "{scratch}/a.npy", "--outdir", "{out}"],
         ["a.npy", "an output would overwrite the input file"], setup=[{"copy": [A, "{scratch}/a.npy"]}])
nki_case("nki_stats_is_kernel", "--stats naming the kernel file (its source replaced by JSON, exit 0)",
         ["--shape", "a=10x10", "--stats", "{scratch}/k.py", "--outdir", "{out}"],
         ["k.py", "an output would overwrite the input file"])
nki_case("nki_report_is_kernel", "--report naming the kernel file", ["--shape", "a=10x10", "--timing-only",
                                                                     "--report", "{scratch}/k.py"],
         ["k.py", "an output would overwrite the input file"])

# ---------------------------------------------------------------------------------------- bounded work
nki_case("nki_input_fifo", "--input naming a FIFO (the tracer's np.load blocked forever, temp folder left)",
         ["--input", "a={scratch}/a.npy", "--outdir", "{out}"], ["a.npy", "--input a is a FIFO"],
         setup=[{"mkfifo": "{scratch}/a.npy"}])
nki_case("nki_unrolled_loop_10_12_trips", "a 10^12-trip affine_range whose variable is a Python value (unrolled in "
         "Python until killed)", ["--shape", "a=10x10", "--outdir", "{out}"],
         ["k.py:10: nl.affine_range of 1,000,000,000,000 trips, unrolled", "more than the 1,000,000,000 instructions",
          "--max-instructions"],
         kernel=ADD1.replace("    t = nl.load(a)\n", "    t = nl.load(a)\n    for i in nl.affine_range(10**12):\n"
                                                     "        if i == 0:\n            nl.store(out, value=t)\n"))
nki_case("nki_grid_10_6_by_10_6", "a 10^6 x 10^6 launch grid (grew to 3 GB, then MemoryError)",
         ["--shape", "a=10x10", "--grid", "1000000x1000000", "--outdir", "{out}"],
         ["k.py:6: launch grid [1000000, 1000000] of f", "more than the 1,000,000,000 instructions"])
nki_case("nki_grid_over_max_instructions", "a 4x4 grid with --max-instructions 10",
         ["--shape", "a=10x10", "--grid", "4x4", "--max-instructions", "10", "--outdir", "{out}"],
         ["k.py:6: launch grid [4, 4] of f: 16", "more than the 10 instructions"])

# ---------------------------------------------------------------------------------------- the kernel's terms
nki_case("nki_max_instructions_names_kernel", "the run's --max-instructions error named neuronsim's temporary "
         "kernel.bir.json", ["--shape", "a=10x10", "--max-instructions", "1", "--outdir", "{out}"],
         ["k.py::f:", "more than the 1 one run may execute"])
nki_case("nki_kernel_sys_exit", "a kernel calling sys.exit(1) (exit 1, 'outputs differ', silently)",
         ["--shape", "a=10x10", "--outdir", "{out}"], ["k.py:9: SystemExit: the kernel exits (1)"],
         kernel=ADD1.replace("    out = nl.ndarray", "    import sys\n    sys.exit(1)\n    out = nl.ndarray"))
nki_case("nki_kernel_raises_system_exit", "a kernel raising SystemExit('...') (printed bare, exit 1)",
         ["--shape", "a=10x10", "--outdir", "{out}"], ["k.py:8: SystemExit: this kernel takes 128 rows"],
         kernel=ADD1.replace("    out = nl.ndarray", "    raise SystemExit('this kernel takes 128 rows')\n"
                                                    "    out = nl.ndarray"))
nki_case("nki_input_float64", "a float64 --input ('__main__.py:11: unknown dtype')",
         ["--input", "a={dir}/npy_float64.npy", "--outdir", "{out}"],
         ["--input a=", "npy_float64.npy: dtype float64 is not one neuronsim takes", "astype(np.float32)"])
nki_case("nki_shape_dtype_typo", "--shape a=10x10:float33", ["--shape", "a=10x10:float33"],
         ["--shape a: unknown dtype 'float33'"], exit_code=2)

# ---------------------------------------------------------------------------------------- imports
# Run from a folder holding nki/ (workloads/ does): the kernel's `import nki.isa` reached that folder ("No module
# named 'nki.isa'"). Now the imports resolve and the kernel's own assert is what stops it.
nki_case("nki_cwd_folder_named_nki", "nki/k.py run from its parent folder (the folder nki/ shadowed the nki package)",
         ["--shape", "a=10x10", "--timing-only"], ["nki/k.py:8: AssertionError: the imports resolved"],
         kernel=ADD1.replace("def f(a):\n", "def f(a):\n    assert False, 'the imports resolved'\n"),
         setup=[{"mkdir": "{scratch}/w/nki"}], cwd="{scratch}/w", at="{scratch}/w/nki/k.py")
nki_case("nki_cwd_folder_named_neuronxcc", "a kernel importing neuronxcc.nki run beside a folder named neuronxcc/",
         ["--shape", "a=10x10", "--timing-only"], ["k.py:8: AssertionError: the imports resolved"],
         kernel=ADD1.replace("import nki\nimport nki.isa as nisa\nimport nki.language as nl\n",
                             "from neuronxcc import nki\nimport neuronxcc.nki.isa as nisa\n"
                             "import neuronxcc.nki.language as nl\n")
         .replace("def f(a):\n", "def f(a):\n    assert False, 'the imports resolved'\n"),
         setup=[{"mkdir": "{scratch}/w/neuronxcc"}], cwd="{scratch}/w", at="{scratch}/w/k.py")
