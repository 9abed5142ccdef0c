"""Every activation function of the NKI reference's table (reference neuron-arch.md 3.5) as a value -- stored in a
table when a module is imported, as the NKI Library's kernel helpers do -- that lowers, called as nl.<fn>(x) or given
as nisa.activation's op, to one Activation with its ActivationFunctionType, against numpy. The closed forms are the
simulator's (reference neuronx-cc/bir/sim-activation-pwp.md 5, engines/ops/activation.cpp), rounded once to fp32."""
import math

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(37)
X = RNG.uniform(-3, 3, (128, 24)).astype(np.float32)
POS = RNG.uniform(0.25, 3, (128, 24)).astype(np.float32)
ERF = np.vectorize(math.erf)


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _silu_dx_closed_form(v):
    # The reference's closed form of Derivative_silu, (x e^x + 1) e^x / (e^x + 1)^2 (sim-activation-pwp.md 5). It is
    # not d/dx silu = e^x (x + e^x + 1) / (e^x + 1)^2 (0.25 against 0.5 at x = 0): the simulator follows the
    # reference and this test checks the lowering against it.
    e = np.exp(v)
    return (v * e + 1) * e / (e + 1) ** 2


# (function, BIR ActivationFunctionType, numpy reference, input, rtol, atol); float64 references rounded once to fp32.
ACTIVATIONS = [
    (nl.exp, "Exp", np.exp, X, 2 ** -23, 0), (nl.log, "Ln", np.log, POS, 2 ** -23, 1e-7),
    (nl.tanh, "Tanh", np.tanh, X, 2 ** -23, 1e-7), (nl.sigmoid, "Sigmoid", _sig, X, 2 ** -23, 1e-7),
    (nl.relu, "Relu", lambda v: np.maximum(v, 0), X, 0, 0), (nl.sqrt, "Sqrt", np.sqrt, POS, 2 ** -23, 0),
    (nl.rsqrt, "Rsqrt", lambda v: 1 / np.sqrt(v), POS, 2 ** -23, 0), (nl.erf, "Erf", ERF, X, 2 ** -23, 1e-7),
    (nl.sin, "Sin", np.sin, X, 2 ** -23, 1e-7), (nl.arctan, "Arctan", np.arctan, X, 2 ** -23, 1e-7),
    (nl.sign, "Sign", np.sign, X, 0, 0), (nl.square, "Square", np.square, X, 2 ** -23, 0),
    (nl.abs, "Abs", np.abs, X, 0, 0),
    (nl.softplus, "Softplus", lambda v: np.log1p(np.exp(v)), X, 2 ** -22, 1e-7),
    (nl.mish, "Mish", lambda v: v * np.tanh(np.log1p(np.exp(v))), X, 2 ** -21, 1e-7),
    (nl.silu, "Silu", lambda v: v * _sig(v), X, 2 ** -22, 1e-7),
    (nl.gelu, "Gelu", lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2))), X, 2 ** -22, 1e-7),
    (nl.gelu_apprx_tanh, "Gelu_apprx_tanh",
     lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))), X, 2 ** -21, 1e-7),
    (nl.gelu_apprx_sigmoid, "Gelu_apprx_sigmoid", lambda v: v * _sig(1.702 * v), X, 2 ** -22, 1e-7),
    (nl.gelu_dx, "Derivative_Gelu",
     lambda v: 0.5 * (1 + ERF(v / math.sqrt(2))) + v * np.exp(-v * v / 2) / math.sqrt(2 * math.pi), X, 2 ** -21,
     2e-7),
    (nl.gelu_apprx_sigmoid_dx, "Derivative_Gelu_apprx_sigmoid",
     lambda v: _sig(1.702 * v) * (1 + 1.702 * v * (1 - _sig(1.702 * v))), X, 2 ** -21, 2e-7),
    (nl.erf_dx, "Derivative_Erf", lambda v: 2 / math.sqrt(math.pi) * np.exp(-v * v), X, 2 ** -21, 2e-7),
    (nl.silu_dx, "Derivative_silu", _silu_dx_closed_form, X, 2 ** -21, 1e-7),
    (nl.reciprocal, None, np.reciprocal, POS, 2 ** -23, 0),
]

# The NKI Library's idiom: a table from the library's own activation names to nl functions, built at import.
ACT_BY_NAME = {"SiLU": nl.silu, "GELU": nl.gelu, "GELU_Tanh_Approx": nl.gelu_apprx_tanh,
               "Swish": nl.gelu_apprx_sigmoid, "GELU_dx": nl.gelu_dx}


def _call_kernel(fn):
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(x)))
        return out
    return kernel


def _isa_kernel(fn):
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.activation(t, fn, nl.load(x))  # the current reference's dst-first form
        nl.store(out, t)
        return out
    return kernel


def _bir_funcs(doc):
    return [i.get("func") for f in doc["functions"] for b in f["blocks"] for i in b["instructions"]
            if i["opcode"] == "Activation"]


@pytest.mark.parametrize("fn,func,ref,x,rtol,atol", ACTIVATIONS, ids=[a[0].__name__ for a in ACTIVATIONS])
def test_every_activation_function_lowers_and_matches_numpy(fn, func, ref, x, rtol, atol):
    want = ref(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(_call_kernel(fn), x), want, rtol=rtol, atol=atol)
    if func is None:
        return  # nl.reciprocal is the Reciprocal instruction (VectorE), not an Activation
    assert _bir_funcs(nki.to_bir(_call_kernel(fn), x)) == [func]
    np.testing.assert_allclose(nki.simulate(_isa_kernel(fn), x), want, rtol=rtol, atol=atol)


def test_activation_functions_are_values_in_a_table_built_at_import():
    assert ACT_BY_NAME["Swish"] is nl.gelu_apprx_sigmoid
    assert {v: k for k, v in ACT_BY_NAME.items()}[nl.gelu_dx] == "GELU_dx"  # hashable, comparable
    x = X[:, :8].copy()
    for name, fn in ACT_BY_NAME.items():
        ref = {"SiLU": lambda v: v * _sig(v), "GELU": lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2))),
               "GELU_Tanh_Approx": lambda v: 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))),
               "Swish": lambda v: v * _sig(1.702 * v),
               "GELU_dx": lambda v: 0.5 * (1 + ERF(v / math.sqrt(2))) + v * np.exp(-v * v / 2) / math.sqrt(2 * math.pi)
               }[name]
        np.testing.assert_allclose(nki.simulate(_call_kernel(fn), x), ref(x.astype(np.float64)), rtol=2e-6,
                                   atol=2e-7, err_msg=name)


def test_prelu_bypass_average_are_operator_values_not_calls():
    assert {nl.bypass: "bypass", nl.average: "average", nl.prelu: "prelu"}[nl.average] == "average"
    with pytest.raises(nki.Unsupported, match="nl.bypass is the ALU's pass-through operator"):
        nl.bypass(1)

    def mean_kernel(x):
        out = nl.ndarray((x.shape[0], 1), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_reduce(nl.average, nl.load(x), axis=1, keepdims=True))
        return out
    np.testing.assert_allclose(nki.simulate(mean_kernel, X), X.mean(axis=1, keepdims=True), rtol=1e-6, atol=1e-6)

    def bypass_kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        # (x bypass 5) + 2: bypass passes x through, ignoring its operand
        nl.store(out, nisa.tensor_scalar(nl.load(x), nl.bypass, 5.0, op1=nl.add, operand1=2.0))
        return out
    np.testing.assert_array_equal(nki.simulate(bypass_kernel, X), X + np.float32(2))

    def prelu_kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.activation(op=nl.prelu, data=nl.load(x)))
        return out
    with pytest.raises(nki.Unsupported, match="relu_param"):
        nki.to_bir(prelu_kernel, X)
