"""How the module is reached (docs/python.md): `cmake --install` puts it where Debian's python3 looks, and a virtual
environment finds the build tree's module through a .pth file."""
import os
import pathlib
import re
import subprocess
import sys

from conftest import BUILD, CLI, ROOT, SANITIZER_ENV

PYTHON = "/usr/bin/python3" if pathlib.Path("/usr/bin/python3").exists() else sys.executable
SITE = f"lib/python3.{sys.version_info.minor}/dist-packages"  # NEURONSIM_PYTHON_INSTALL_DIR's default
PROBE = "import neuronsim; print(neuronsim.__file__); print(neuronsim.run({!r}).ok)".format(
    str(ROOT / "workloads/kernel1"))


def test_cmake_install_puts_the_module_on_debian_pythons_path(tmp):
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(tmp)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # The package: the extension and the pure-Python modules beside it (sweeps, __main__).
    module = tmp / SITE / "neuronsim/__init__.py"
    assert (tmp / SITE / "neuronsim/sweeps.py").is_file() and (tmp / SITE / "neuronsim/__main__.py").is_file()
    assert len(list((tmp / SITE / "neuronsim").glob("_core*.so"))) == 1
    # With the default prefix /usr/local, that folder is on the Debian interpreter's path.
    path = subprocess.run([PYTHON, "-c", "import sys; print('\\n'.join(sys.path))"], capture_output=True,
                          text=True, env={}).stdout.split()
    assert f"/usr/local/{SITE}" in path
    # The installed file imports and runs (nothing else from the build tree on its path).
    out = subprocess.run([PYTHON, "-c", PROBE], capture_output=True, text=True, cwd=tmp,
                         env={"PYTHONPATH": str(tmp / SITE), **SANITIZER_ENV})
    assert out.stdout.split() == [str(module), "True"], out.stderr


def test_the_pages_virtual_environment_commands(tmp):
    """docs/python.md's commands as written, from a folder laid out like the checkout (build/, workloads/), but for
    --without-pip: installing pip into the environment is ensurepip's work, not the module's, and takes most of
    the time."""
    page = (ROOT / "docs/python.md").read_text()
    (block,) = re.findall(r"```sh tested-by=tests/python/test_install.py\n(.*?)```", page, re.S)
    assert block.startswith("/usr/bin/python3 -m venv --system-site-packages .venv\n")
    block = block.replace("/usr/bin/python3 -m venv", f"{PYTHON} -m venv --without-pip", 1)
    (tmp / "build").symlink_to(BUILD)
    (tmp / "workloads").symlink_to(ROOT / "workloads")
    env = {**os.environ, "PATH": f"{CLI.resolve().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)  # the environment finds the module through its .pth file alone
    r = subprocess.run(["bash", "-e", "-c", block], cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True"], r.stdout + r.stderr
