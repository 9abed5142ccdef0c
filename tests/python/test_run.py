"""neuronsim.run and neuronsim.load on kernel1 (real compiler output computing b = a - 1.0 on a [10, 10] fp32 tile,
workloads/kernel1/make_data.py) and tensor_add (c = a + b, [256, 64] fp32, workloads/tensor_add/README.md)."""
import json
import os
import pathlib

import numpy as np
import pytest

import neuronsim
from conftest import KERNEL_SIM, ROOT

K1 = "workloads/kernel1"
K1_BIR = f"{K1}/kernel1.bir.json"


@pytest.fixture(autouse=True)
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_the_readme_line():
    # python3 -c "import neuronsim; print(neuronsim.run('workloads/kernel1').total_ns)"
    assert neuronsim.run(K1).total_ns > 0


def test_workload_inputs_and_expected_are_used():
    r = neuronsim.run(K1)
    a = np.load(ROOT / K1 / "inputs/a.npy")
    np.testing.assert_array_equal(r.outputs["b"], a - np.float32(1.0))  # b = a - 1.0, exact in fp32 for |a| < 4
    assert r.outputs["b"].dtype == np.float32 and r.outputs["b"].shape == (10, 10)
    assert r.mismatches == [] and r.ok  # compared with workloads/kernel1/expected/b.npy
    assert r.arch == "trn1" and r.kernel == K1_BIR and r.dynamic_instructions == 3
    assert r.trace_path is None and r.device_prints == []


def test_given_inputs_take_precedence():
    a = np.arange(100, dtype=np.float32).reshape(10, 10)
    r = neuronsim.run(K1, {"a": a})
    np.testing.assert_array_equal(r.outputs["b"], a - 1)  # 0 - 1 = -1, ..., 99 - 1 = 98
    # The workload's expected/b.npy belongs to its own inputs: every element differs, the worst is reported.
    assert len(r.mismatches) == 1 and not r.ok
    m = r.mismatches[0]
    want = np.load(ROOT / K1 / "expected/b.npy").ravel()
    got = (a - 1).ravel()
    worst = int(np.argmax(np.abs(got - want)))  # tolerance 1e-5 / 1e-6 is negligible next to these errors
    assert (m.tensor, m.index, m.got, m.want) == ("b", worst, got[worst], pytest.approx(want[worst]))
    assert str(m) == f"MISMATCH b[{worst}]: got {got[worst]:g}, expected {want[worst]:.6g} (rtol 1e-05, atol 1e-06)"


def test_outputs_are_owned_by_python():
    r = neuronsim.run(K1)
    b = r.outputs["b"]
    assert b.flags.owndata and b.flags.writeable and b.flags.c_contiguous
    b[0, 0] = 123.0  # a fresh array: changing it changes nothing else
    assert neuronsim.run(K1).outputs["b"][0, 0] != 123.0


def test_generated_inputs_match_the_cli(tmp):
    # A BIR file alone: inputs generated from the tensor name, as the CLI does (its file in --outdir).
    from conftest import cli
    cli("run", K1_BIR, "--outdir", tmp)
    r = neuronsim.run(K1_BIR)
    assert r.mismatches is None  # nothing to compare with
    assert r.outputs["b"].tobytes() == np.load(tmp / "b.npy").tobytes()


def test_inputs_from_a_folder_and_pathlike(tmp):
    a = np.full((10, 10), 2.5, np.float32)
    np.save(tmp / "a.npy", a)
    r = neuronsim.run(pathlib.Path(ROOT / K1_BIR), tmp)
    np.testing.assert_array_equal(r.outputs["b"], np.full((10, 10), 1.5, np.float32))  # 2.5 - 1.0


def test_expect_arrays_and_folder(tmp):
    a = np.ones((10, 10), np.float32)
    zeros = np.zeros((10, 10), np.float32)
    assert neuronsim.run(K1, {"a": a}, expect={"b": zeros}).mismatches == []  # 1 - 1 = 0 exactly
    near = zeros.copy()
    near[3, 4] = 1e-3
    r = neuronsim.run(K1, {"a": a}, expect={"b": near}, rtol=0, atol=1e-4)
    assert [(m.tensor, m.index, m.got, m.want) for m in r.mismatches] == [("b", 34, 0.0, pytest.approx(1e-3))]
    assert neuronsim.run(K1, {"a": a}, expect={"b": near}, atol=1e-3).mismatches == []  # |0 - 1e-3| <= 1e-3
    np.save(tmp / "b.npy", zeros)
    assert neuronsim.run(K1, {"a": a}, expect=str(tmp)).mismatches == []
    # A folder must hold every output; a dict compares the outputs it names.
    os.remove(tmp / "b.npy")
    (m,) = neuronsim.run(K1, {"a": a}, expect=tmp).mismatches
    assert (m.index, m.message) == (-1, f"no expected file {tmp / 'b.npy'}")
    assert str(m) == f"MISMATCH b: no expected file {tmp / 'b.npy'}"


def test_workload_tolerance_json_applies():
    # tensor_add states rtol = atol = 0 (tolerance.json): c = a + b rounds as numpy's fp32 add does.
    r = neuronsim.run("workloads/tensor_add")
    a, b = (np.load(ROOT / f"workloads/tensor_add/inputs/{n}.npy") for n in "ab")
    assert r.outputs["c"].tobytes() == (a + b).tobytes() and r.mismatches == []
    off = r.outputs["c"].copy()
    off[0, 0] = np.nextafter(off[0, 0], np.float32(np.inf))
    (m,) = neuronsim.run("workloads/tensor_add", expect={"c": off}).mismatches
    assert (m.index, str(m).endswith("(rtol 0, atol 0)")) == (0, True)


def test_timing_only():
    full = neuronsim.run(K1)
    r = neuronsim.run(K1, timing_only=True)
    assert r.outputs == {} and r.mismatches is None
    assert r.total_ns == full.total_ns  # the same timeline without the numerics
    assert r.stats["engines"]["DVE"]["instructions"] == 1


def test_arch_and_stats():
    runs = {a: neuronsim.run(K1, arch=a) for a in ("trn1", "trn2", "trn3")}
    for a, r in runs.items():
        assert r.arch == a and r.stats["arch"] == a and r.stats["total_ns"] == r.total_ns
        assert set(r.stats) >= {"engines", "dma", "critical_path", "bottleneck", "dynamic_instructions"}
    assert len({r.total_ns for r in runs.values()}) > 1  # the architectures' clocks differ


def test_trace(tmp):
    r = neuronsim.run(K1, trace=tmp / "t.json")
    assert r.trace_path == str(tmp / "t.json")
    events = json.load(open(tmp / "t.json"))["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    slices = [(tracks[e["pid"], e["tid"]], e["name"]) for e in events if e.get("ph") == "X"]
    # kernel1.bir.json's three instructions, one slice each on their queue, and each DMA's trigger on the engine that
    # issues it: the Load's on SP, the Save's on POOL (no engine named: docs/timing-model.md 2.4)
    assert sorted(name for track, name in slices if not track.startswith("DMA engine")) == [
        "I-2 Load", "I-2 Load (trigger)", "I-4 TensorScalarPtr", "I-6 Save", "I-6 Save (trigger)"]
    assert [track for track, name in slices if name.endswith("(trigger)")] == ["SP", "POOL"]
    # and the DMA engines' activity, each slice naming the transfer it serves
    assert {name for track, name in slices if track.startswith("DMA engine")} == {"I-2 Load", "I-6 Save"}


def test_max_instructions():
    # kernel1 runs 3 dynamic instructions (Load, TensorScalarPtr, Save): a limit of 3 runs it, 2 refuses it before
    # the run, naming the limit as --max-instructions does; below 1 is a usage error
    assert neuronsim.run(K1, max_instructions=3).dynamic_instructions == 3
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, max_instructions=2)
    assert "3 dynamic instructions, more than the 2 one run may execute (--max-instructions)" in str(e.value)
    with pytest.raises(neuronsim.UsageError) as e:
        neuronsim.run(K1, max_instructions=0)
    assert "max_instructions needs an integer >= 1, got 0" in str(e.value)


def test_kernel_objects():
    k = neuronsim.load(K1)
    assert k.path == K1 and k.label == K1_BIR and k.streams is None
    assert [(t.name, t.shape, t.dtype, t.bir_dtype, t.kind, t.memory) for t in k.inputs] == [
        ("a", (10, 10), np.dtype(np.float32), "float32", "ExternalInput", "DRAM")]
    assert [(t.name, t.kind) for t in k.outputs] == [("b", "ExternalOutput")]
    # and the two SBUF tiles of its allocations (tile.9 = a loaded, tile.7 = a - 1)
    assert [(t.name, t.memory, t.kind) for t in k.tensors] == [
        ("a", "DRAM", "ExternalInput"), ("b", "DRAM", "ExternalOutput"), ("tile.7", "SB", "Internal"),
        ("tile.9", "SB", "Internal")]
    # The opcodes of kernel1.bir.json, counted here from the JSON itself.
    bir = json.load(open(ROOT / K1_BIR))
    counts = {}
    for block in bir["functions"][0]["blocks"]:
        for inst in block["instructions"]:
            counts[inst["opcode"]] = counts.get(inst["opcode"], 0) + 1
    assert k.instructions == counts == {"Load": 1, "TensorScalarPtr": 1, "Save": 1}
    assert k.dynamic_instructions == 3
    assert neuronsim.run(k).outputs["b"].tobytes() == neuronsim.run(K1).outputs["b"].tobytes()


def test_kernel_tensors_of_a_tiled_workload():
    k = neuronsim.load("workloads/tensor_add")
    # workloads/tensor_add/README.md: a, b, c [256, 64] fp32 in DRAM, tiles [128, 64] in SBUF, a loop of 2.
    assert [(t.name, t.shape, t.memory) for t in k.inputs] == [("a", (256, 64), "DRAM"), ("b", (256, 64), "DRAM")]
    assert {t.name: t.memory for t in k.tensors if t.memory == "SB"} == {"a_tile": "SB", "b_tile": "SB", "c_tile": "SB"}
    assert k.dynamic_instructions == 8  # 4 instructions x 2 iterations


def test_bf16_tensors_are_raw_bits():
    # matmul_tiled (workloads/matmul_tiled/README.md): result[128, 256] fp32 = lhsT[128, 128]^T @ rhs[128, 256], bf16
    k = neuronsim.load("workloads/matmul_tiled")
    assert [(t.name, t.dtype, t.bir_dtype) for t in k.inputs] == [
        ("lhsT", np.dtype(np.uint16), "bfloat16"), ("rhs", np.dtype(np.uint16), "bfloat16")]
    ones = {t.name: neuronsim.from_float32(np.ones(t.shape), "bfloat16") for t in k.inputs}
    assert all(a.dtype == np.uint16 and (a == 0x3F80).all() for a in ones.values())  # 1.0 in bf16 is 0x3F80
    r = neuronsim.run(k, ones, expect={})
    # each output element sums K = 128 products 1 * 1; the result is bf16 (raw bits), 128 = 0x4300
    assert r.outputs["result"].dtype == np.uint16 and (r.outputs["result"] == 0x4300).all()
    assert (neuronsim.to_float32(r.outputs["result"], "bfloat16") == 128).all()
    assert r.mismatches == []  # expect={}: nothing to compare, and not the workload's expected/


def test_bundle_stream_folder_runs_on_its_generation(tmp):
    neuronsim.encode(K1, "v3", outdir=tmp / "s")
    k = neuronsim.load(tmp / "s")
    assert k.streams == "v3" and k.label == f"{tmp / 's'} (bundle streams, v3)"
    r = neuronsim.run(tmp / "s", {"a": np.load(ROOT / K1 / "inputs/a.npy")})
    assert r.arch == "trn2"  # v3 = trn2
    assert r.outputs["b"].tobytes() == neuronsim.run(K1).outputs["b"].tobytes()


def custom_op_kernel(path):
    """kernel1 with its TensorScalarPtr replaced by CustomOp add_one (tests/support/kernel_sim: out = in + 1) and a
    DevicePrint of the loaded tile before it."""
    bir = json.load(open(ROOT / K1_BIR))
    insts = bir["functions"][0]["blocks"][0]["instructions"]
    load, op, save = insts
    # Only the keys every instruction has: TensorScalarPtr's own (op0, reverse0, can_read_uninit, ...) would be
    # warned about as unknown for a CustomOp.
    op = {k: v for k, v in op.items()
          if k in ("debug", "dependencies", "descendants", "engine", "ins", "loopnest", "name", "order", "outs")}
    op.update(opcode="CustomOp", opFunctionName="add_one", ins=op["ins"][:1])
    show = {"name": "I-3", "opcode": "DevicePrint", "engine": "Unassigned", "prefix": "a =", "ins": load["outs"],
            "outs": []}
    bir["functions"][0]["blocks"][0]["instructions"] = [load, show, op, save]
    json.dump(bir, open(path, "w"))
    return path


def test_kernel_sim_and_device_prints(tmp):
    k = custom_op_kernel(tmp / "k.bir.json")
    a = (np.arange(100) % 7).astype(np.float32).reshape(10, 10)  # 0 1 2 3 4 5 6 0 1 2, 3 4 5 ...
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(k, {"a": a})
    # The CustomOp is built from kernel1's TensorScalarPtr, whose debug information names kernel1.py line 10.
    assert str(e.value) == (f"{k}: instruction 2 'I-4' field 'opFunctionName': CustomOp 'add_one' runs an external "
                            "kernel: pass --kernel-sim PROG (/home/ec2-user/bug/kernel1.py:10)")
    r = neuronsim.run(k, {"a": a}, kernel_sim=str(KERNEL_SIM))
    np.testing.assert_array_equal(r.outputs["b"], a + 1)  # add_one
    # The tile as loaded, nested by the access pattern's counts [10, 1, 10] (kernel1's ap).
    rows = ", ".join("[[" + ", ".join(str((10 * i + j) % 7) for j in range(10)) + "]]" for i in range(10))
    assert r.device_prints == [f"a = [{rows}] (I-3: float32 [10, 1, 10])"]


def test_runs_from_threads_take_turns_and_agree():
    import threading
    want = neuronsim.run("workloads/softmax").outputs
    got = [None] * 4

    def work(i):
        got[i] = neuronsim.run("workloads/softmax").outputs

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g in got:
        assert {k: v.tobytes() for k, v in g.items()} == {k: v.tobytes() for k, v in want.items()}


def test_repr():
    assert repr(neuronsim.run(K1)).startswith(f"<neuronsim.Result {K1_BIR} on trn1: ")
    assert repr(neuronsim.load(K1)) == f"<neuronsim.Kernel {K1_BIR}: 3 instructions>"
    assert repr(neuronsim.load(K1).inputs[0]) == (
        "TensorInfo(name='a', shape=(10, 10), dtype=float32, bir_dtype='float32', kind='ExternalInput', memory='DRAM')")


# cores= / lnc= (docs/multicore.md): workloads/multicore/collectives on a logical core of 2 (trn2). The
# numpy reference: gathered = x (the two row shards concatenated in rank order), scattered = y[:64] + y[64:]
# (the ReduceScatter sum, each core's half of its rows).
def test_cores_and_lnc():
    kernel = "workloads/multicore/collectives"
    r = neuronsim.run(kernel, arch="trn2", lnc=2)
    x = np.load(ROOT / kernel / "inputs/x.npy")
    y = np.load(ROOT / kernel / "inputs/y.npy")
    np.testing.assert_array_equal(r.outputs["gathered"], x)
    np.testing.assert_array_equal(r.outputs["scattered"], y[:64] + y[64:])
    assert r.mismatches == []
    assert [c["core"] for c in r.stats["cores"]] == [0, 1]
    assert [c["shard"] for c in r.stats["cores"]] == [0, 1]
    assert r.stats["device"]["collectives"] == 2 and r.stats["device"]["lnc"] == 2
    assert r.total_ns == r.stats["device"]["total_ns"]
    with pytest.raises(neuronsim.InvalidInput, match="LNC=2"):
        neuronsim.run(kernel, arch="trn1", lnc=2)
    with pytest.raises(neuronsim.UsageError, match="^cores takes 1 to 8, got 0$"):
        neuronsim.run(kernel, arch="trn2", cores=0)


# The tensor-parallel MLP of workloads/multicore/tp_mlp against numpy: y = relu(x W1) W2 computed in float64, the
# two cores' partial products summed by the AllReduce. Its expected/ holds the workload's bound (atol ~0.04, the
# worst case); numpy's value is within 1e-3 of y (fp32 rounding of values up to ~100).
def test_tensor_parallel_mlp_matches_numpy():
    kernel = ROOT / "workloads/multicore/tp_mlp"
    r = neuronsim.run(kernel, arch="trn2", lnc=2)
    x = np.load(kernel / "inputs/xT.npy").astype(np.float64).T
    w1 = np.load(kernel / "inputs/w1.npy").astype(np.float64)
    w2 = np.load(kernel / "inputs/w2.npy").astype(np.float64)
    np.testing.assert_allclose(r.outputs["y"], np.maximum(x @ w1, 0) @ w2, rtol=0, atol=1e-3)
    assert r.mismatches == []


# The same MLP on 2, 4 and 8 ranks (workloads/multicore/tp_mlp_<N>ranks, --cores N --lnc 1): each rank has its
# own DRAM holding its W1 column block and W2 row block (inputs/rank<r>/) and the replicated xT (inputs/); the
# AllReduce gives every rank the full y = relu(x W1) W2, computed here in float64 from the concatenated blocks.
# outputs["y"] stacks the ranks' y on a leading axis. Values are up to ~30: fp32 rounding stays below 1e-3.
@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_tensor_parallel_mlp_on_ranks_matches_numpy(ranks):
    kernel = ROOT / f"workloads/multicore/tp_mlp_{ranks}ranks"
    r = neuronsim.run(kernel, arch="trn2", cores=ranks)
    x = np.load(kernel / "inputs/xT.npy").astype(np.float64).T
    w1 = np.concatenate([np.load(kernel / f"inputs/rank{k}/w1.npy") for k in range(ranks)], axis=1)
    w2 = np.concatenate([np.load(kernel / f"inputs/rank{k}/w2.npy") for k in range(ranks)], axis=0)
    y = np.maximum(x @ w1.astype(np.float64), 0) @ w2.astype(np.float64)
    assert r.outputs["y"].shape == (ranks,) + y.shape
    for k in range(ranks):
        np.testing.assert_allclose(r.outputs["y"][k], y, rtol=0, atol=1e-3)
    assert r.mismatches == []


# inputs= as a list gives each rank its own dict; with the two blocks of rank 0 and rank 1 swapped the sum is the
# same (the AllReduce adds both partials), while giving both ranks rank 0's blocks gives 2 relu(x W1_0) W2_0 on
# each rank: a rank reads its own inputs, not another's. A list of the wrong length is refused.
def test_inputs_per_rank_as_a_list():
    kernel = ROOT / "workloads/multicore/tp_mlp_2ranks"
    x = np.load(kernel / "inputs/xT.npy")
    blk = [{n: np.load(kernel / f"inputs/rank{k}/{n}.npy") for n in ("w1", "w2")} for k in range(2)]
    swapped = neuronsim.run(kernel, [dict(blk[1], xT=x), dict(blk[0], xT=x)], arch="trn2", cores=2)
    assert swapped.mismatches == []
    same = neuronsim.run(kernel, [blk[0], blk[0]], arch="trn2", cores=2, expect={})
    x64 = x.astype(np.float64).T
    y0 = np.maximum(x64 @ blk[0]["w1"].astype(np.float64), 0) @ blk[0]["w2"].astype(np.float64)
    for k in range(2):
        np.testing.assert_allclose(same.outputs["y"][k], 2 * y0, rtol=0, atol=1e-3)
    with pytest.raises(neuronsim.UsageError, match="gives 3 input sets .one per rank., the run has 2 ranks"):
        neuronsim.run(kernel, [blk[0]] * 3, arch="trn2", cores=2)
    # A folder with per-rank folders for 2 ranks on a run of 4 (tp_mlp_2ranks itself on 4 cores is refused before:
    # its replica group holds cores 0 and 1).
    with pytest.raises(neuronsim.InvalidInput, match="inputs/rank2: no such directory"):
        neuronsim.run(ROOT / "workloads/multicore/tp_mlp_4ranks", kernel / "inputs")


def test_schedule():
    # schedule= is --schedule (docs/cli.md "Long kernels"): the same run whichever way the schedule is held, so the
    # same total and the same stats document (matmul_tiled at trn1: 1,120 dynamic instructions; the default, auto,
    # streams a timing-only run without a trace)
    runs = {mode: neuronsim.run("workloads/matmul_tiled", timing_only=True, schedule=mode)
            for mode in ("whole", "streamed", "auto")}
    runs["default"] = neuronsim.run("workloads/matmul_tiled", timing_only=True)
    for mode, r in runs.items():
        assert r.total_ns == runs["whole"].total_ns, mode
        assert r.stats == runs["whole"].stats, mode
    with pytest.raises(neuronsim.UsageError) as e:
        neuronsim.run(K1, timing_only=True, schedule="lazy")
    assert str(e.value) == "schedule takes auto, whole or streamed, got 'lazy'"
    # The option reaches the run: a program that branches on run-time values cannot be streamed, and says so,
    # while the whole schedule runs it into the instruction limit.
    branchy = str(ROOT / "tests/cli/bad_inputs/max_instructions_runaway_branch.bir.json")
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(branchy, timing_only=True, schedule="streamed", max_instructions=100)
    assert "--schedule=streamed needs a program whose structure fixes its path" in str(e.value)
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(branchy, timing_only=True, schedule="whole", max_instructions=100)
    assert "more than 100 dynamic instructions (--max-instructions)" in str(e.value)


def test_the_python_guide_example(tmp):
    # The example block of docs/python.md, as written, from a folder holding the checkout's workloads/ (it writes
    # t.json there).
    section = (ROOT / "docs/python.md").read_text()
    opening = "```python tested-by=tests/python/test_run.py\n"
    block = section[section.index(opening) + len(opening):]
    block = block[:block.index("```")]
    assert 'schedule="whole"' in block
    (tmp / "workloads").symlink_to(ROOT / "workloads")
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        exec(compile(block, "docs/python.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert (tmp / "t.json").is_file()
