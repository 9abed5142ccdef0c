"""The commands and code of README "Run an NKI kernel" and docs/nki-lowering.md run, and print what the text says."""
import os
import re
import subprocess
import sys

from conftest import CLI, ROOT


def blocks(text, lang):
    return re.findall(r"```" + lang + r"[^\n]*\n(.*?)```", text, re.S)


def section(text, title):
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end >= 0 else len(text)]


def run_sh(block, cwd):
    out = []
    for line in block.strip().splitlines():
        cmd = line.split("  #")[0].strip()
        assert cmd.startswith("build/neuronsim "), cmd
        args = cmd.split()[1:]
        r = subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (cmd, r.stdout, r.stderr)
        out.append(r.stdout)
    return "\n".join(out)


def with_workloads(tmp):
    (tmp / "workloads").symlink_to(ROOT / "workloads")
    return tmp


def test_readme_nki_section_commands(tmp):
    sec = section((ROOT / "README.md").read_text(), "## Run an NKI kernel")
    (sh,) = blocks(sec, "sh")
    out = run_sh(sh, with_workloads(tmp))
    assert "neuronsim nki: workloads/nki/softmax.py::softmax" in out
    assert "top 3 instructions on the critical path" in out and "softmax.py:20" in out


def test_readme_nki_section_python(tmp):
    sec = section((ROOT / "README.md").read_text(), "## Run an NKI kernel")
    (py,) = blocks(sec, "python")
    (tmp / "example.py").write_text(py)
    r = subprocess.run([sys.executable, str(tmp / "example.py")], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    err = float(re.search(r"max error (\S+)", r.stdout).group(1))
    assert err < 1e-7  # the text says about 3.3e-08
    assert "5867.9 ns; [20, 17, 15]" in r.stdout  # as the text says


def test_lowering_doc_command_writes_bir_that_runs(tmp):
    (sh,) = blocks((ROOT / "docs" / "nki-lowering.md").read_text(), "sh")
    run_sh(sh, with_workloads(tmp))
    assert (tmp / "matmul_tiled.bir.json").is_file()
    # The traced BIR times as the generator's BIR of the same kernel does (docs/nki-lowering.md says so).
    times = []
    for kernel in ("matmul_tiled.bir.json", str(ROOT / "workloads" / "matmul_tiled")):
        r = subprocess.run([str(CLI), "run", kernel, "--timing-only"], cwd=tmp, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        times.append(re.search(r"simulated time: .*\((\S+) ns\)", r.stdout).group(1))
    assert times[0] == times[1]


def test_nki_workloads_readme_command(tmp):
    (sh,) = blocks((ROOT / "workloads" / "nki" / "README.md").read_text(), "sh")
    assert "outputs match workloads/softmax/expected" in run_sh(sh, with_workloads(tmp))
