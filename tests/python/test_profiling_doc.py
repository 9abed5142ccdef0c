"""docs/profiling.md stays true: every ```sh command on the page runs (as `neuronsim ...`, from a folder holding
workloads/), every ```text block is lines of what the command before it printed, and the ```python block runs."""
import os
import re
import subprocess

from conftest import CLI, ROOT

DOC = ROOT / "docs/profiling.md"


def blocks(kind):
    """The page's blocks of this kind this test runs (the others are tests/python/test_docs.py's)."""
    mark = "" if kind == "text" else " tested-by=tests/python/test_profiling_doc.py"
    return re.findall(r"```" + kind + mark + r"\n(.*?)```", DOC.read_text(), re.S)


def test_every_command_runs_and_prints_what_the_page_shows(tmp):
    os.symlink(ROOT / "workloads", tmp / "workloads")
    text = DOC.read_text()
    shown = {m.start(): b for m, b in zip(re.finditer(r"```text\n", text), blocks("text"))}
    commands = [(m.start(), b) for m, b in zip(re.finditer(r"```sh tested-by=tests/python/test_profiling_doc.py\n", text),
                                               blocks("sh"))]
    assert len(commands) >= 5
    for at, block in commands:
        out = ""
        for line in block.strip().splitlines():
            assert line.startswith("neuronsim "), line
            r = subprocess.run([str(CLI.resolve()), *line.split()[1:]], cwd=tmp, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, (line, r.stderr)
            out += r.stdout
        # The text block right after this command block (only blank lines between), if any, shows lines of its output.
        end = text.index("```\n", at + 3) + 4
        after = end + len(text[end:]) - len(text[end:].lstrip("\n"))
        if after in shown:
            for expected in shown[after].strip().splitlines():
                assert expected in out, (expected, out)
    assert (tmp / "k1.html").exists() and (tmp / "k1-again.html").exists()


def test_the_python_block_runs(tmp, monkeypatch):
    os.symlink(ROOT / "workloads", tmp / "workloads")
    monkeypatch.chdir(tmp)
    (code,) = blocks("python")
    exec(compile(code, str(DOC), "exec"), {})
    assert (tmp / "k1-py.html").exists()


def test_the_screenshot_is_on_the_page():
    assert "](report-kernel1.png)" in DOC.read_text() and (ROOT / "docs/report-kernel1.png").stat().st_size > 1000


def test_the_architectures_page_block_runs():
    """docs/architectures.md: its command block, from a folder that looks like the checkout."""
    import tempfile, shutil, pathlib
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="neuronsim-pytest-"))
    try:
        os.symlink(ROOT / "workloads", tmp / "workloads")
        (tmp / "build").mkdir()
        os.symlink(CLI.resolve(), tmp / "build" / "neuronsim")
        page = (ROOT / "docs/architectures.md").read_text()
        block = re.search(r"```sh tested-by=tests/python/test_profiling_doc.py\n(.*?)```", page, re.S).group(1)
        r = subprocess.run(block, shell=True, cwd=tmp, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "B: workloads/kernel1 (trn2+{dma_engine_bytes_per_ns=54.4})" in r.stdout
        assert re.search(r"total .* -\d+\.\d%", r.stdout) and "+0.0%" not in r.stdout, r.stdout
        assert (tmp / "my_part.json").stat().st_size > 1000
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
