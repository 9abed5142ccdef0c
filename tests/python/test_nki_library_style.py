"""A kernel file and its helper module in the style of a kernel library on the current NKI API (tests/python/
nki_kernels/libstyle_*.py, written here): an activation table built at import, configuration objects on NKIObject,
enum constants from nki.isa.constants, dst-first nki.isa calls, `if bias:` on a tensor argument and a branch on
nisa.get_nc_version() -- run unmodified, against numpy, for each activation and architecture."""
import importlib
import math
import pathlib
import sys

import numpy as np
import pytest

import neuronsim.nki as nki
from conftest import cli

KERNELS = pathlib.Path(__file__).resolve().parent / "nki_kernels"
RNG = np.random.default_rng(40)
X = RNG.uniform(-3, 3, (256, 32)).astype(np.float32)
BIAS = RNG.uniform(-1, 1, (128, 1)).astype(np.float32)
ERF = np.vectorize(math.erf)
REF = [lambda v: v / (1 + np.exp(-v)), lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2))),
       lambda v: 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))),
       lambda v: v / (1 + np.exp(-1.702 * v))]


@pytest.fixture(scope="module")
def lib():
    nki.install()
    sys.path.insert(0, str(KERNELS))
    try:
        yield importlib.import_module("libstyle_kernel")
    finally:
        sys.path.remove(str(KERNELS))


@pytest.mark.parametrize("act", range(4), ids=["silu", "gelu", "gelu_tanh", "swish"])
def test_library_style_kernel_matches_numpy(lib, act):
    want = REF[act](X.astype(np.float64)) * 0.5
    got = nki.simulate(lib.act_scale, X, act_index=act)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=4e-7, atol=4e-7)


@pytest.mark.parametrize("arch, factor", [("trn1", 0.5), ("trn2", 1.0), ("trn3", 1.0)])
def test_library_style_kernel_with_bias_per_architecture(lib, arch, factor):
    want = REF[0](X.astype(np.float64)) * factor + np.tile(BIAS, (2, 1))
    got = nki.simulate(lib.act_scale, X, BIAS, arch=arch)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=4e-7, atol=4e-7)
    helpers = sys.modules["libstyle_helpers"]
    assert helpers.FP8_RANGE[helpers.nl.float8_e4m3fn] == 448.0 and helpers.TileCfg(cols=8).rows == 128


@pytest.mark.parametrize("arch, factor", [("trn1", 0.5), ("trn3", 1.0)])
def test_cli_traces_the_kernel_for_the_run_s_arch(tmp, arch, factor):
    """`neuronsim nki ... --arch A`: the kernel is traced for A (nisa.get_nc_version()) and runs on A."""
    np.save(tmp / "x.npy", X)
    (tmp / "want").mkdir()
    np.save(tmp / "want" / "out.npy", (REF[0](X.astype(np.float64)) * factor).astype(np.float32))
    r = cli("nki", f"{KERNELS / 'libstyle_kernel.py'}::act_scale", "--input", f"x={tmp / 'x.npy'}", "--arch", arch,
            "--expect", tmp / "want", "--rtol", "4e-7", "--atol", "4e-7")
    assert "outputs match" in r.stdout, r.stdout + r.stderr
