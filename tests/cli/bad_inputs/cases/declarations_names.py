"""Declarations (allocations, dims, dtypes) and names (duplicates, option typos)."""
from .common import alloc, bir_case, cases, insts
from .bir_json import arg_dtype, set_field, to_activation
from .npy_and_cli import cli_case
from .cli_outputs import K1
from .files_and_archs import arch_case


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
cli_case("name_run_set_key_typo", "--set dma_latency_nss=425", ["run", K1, "--outdir", "{out}", "--set",
                                                              "dma_latency_nss=425"],
         ["unknown architecture parameter", "did you mean 'dma_latency_ns'?"])
cli_case("name_compare_arch_b_typo", "compare --arch-c", ["compare", K1, "--arch-c", "trn2"],
         ["unknown option '--arch-c'", "did you mean '--arch-b'?"])
cli_case("arch_two_actions", "arch --list --keys", ["arch", "--list", "--keys"], ["arch takes --list, --keys or --show"])
