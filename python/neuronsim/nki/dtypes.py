"""NKI's data types (public NKI docs, nki.language "Data Types") and their BIR names.

float32, float16, the integer types and bool_ are numpy's own scalar types, as in NKI, so that test code may write
np.zeros(shape, dtype=nl.float32). bfloat16 and the fp8 types are ml_dtypes' when that package is importable (as
NKI's are); without it they are markers that kernels can pass around but numpy arrays cannot take (arrays of them are
then given as float32 values or as their raw bits, uint16 / uint8, neuronsim's .npy convention).
"""
import numpy as np

try:  # pragma: no cover - depends on the environment
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover
    _ml = None


class _Marker:
    """A dtype numpy does not have (without ml_dtypes): its NKI name, its BIR name and its size."""

    def __init__(self, name, bir, itemsize):
        self.name, self.bir, self.itemsize = name, bir, itemsize

    def __repr__(self):
        return f"nki.language.{self.name}"


def _ml_or_marker(attr, name, bir, size):
    if _ml is not None and hasattr(_ml, attr):
        return getattr(_ml, attr)
    return _Marker(name, bir, size)


float32 = np.float32
float16 = np.float16
int32, int16, int8 = np.int32, np.int16, np.int8
uint32, uint16, uint8 = np.uint32, np.uint16, np.uint8
bool_ = np.bool_
bfloat16 = _ml_or_marker("bfloat16", "bfloat16", "bfloat16", 2)
float8_e4m3 = _ml_or_marker("float8_e4m3", "float8_e4m3", "float8e4", 1)
float8_e5m2 = _ml_or_marker("float8_e5m2", "float8_e5m2", "float8e5", 1)
float8_e4m3fn = _ml_or_marker("float8_e4m3fn", "float8_e4m3fn", "float8_e4m3fn", 1)
# The OCP MX types (public NKI docs, nki.isa.quantize_mx / nc_matmul_mx): x4 containers of four fp8 values (4 bytes)
# or four fp4 values (2 bytes), and the E8M0 block scale. numpy has no such types: arrays of them are given as raw
# bits (uint32 / uint16 / uint8, neuronsim's .npy convention: engines/npy_dtype.cpp).
float8_e4m3fn_x4 = _Marker("float8_e4m3fn_x4", "float8_e4m3fn_x4", 4)
float8_e5m2_x4 = _Marker("float8_e5m2_x4", "float8_e5m2_x4", 4)
float4_e2m1fn_x4 = _Marker("float4_e2m1fn_x4", "float4_e2m1fn_x4", 2)
float8_e8m0fnu = _ml_or_marker("float8_e8m0fnu", "float8_e8m0fnu", "float8_e8m0fnu", 1)
MX_X4 = ("float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4")
# tfloat32: fp32 storage with a reduced-precision PE operand: BIR's float32r (reference neuronx-cc/arch/pe-engine.md,
# "float32r (Dtype 17) ... single-pass reduced-precision"; INFERRED to be what NKI's tfloat32 lowers to).
tfloat32 = _Marker("tfloat32", "float32r", 4)

_BIR = {
    np.dtype(np.float32): "float32", np.dtype(np.float16): "float16", np.dtype(np.int32): "int32",
    np.dtype(np.int16): "int16", np.dtype(np.int8): "int8", np.dtype(np.uint32): "uint32",
    np.dtype(np.uint16): "uint16", np.dtype(np.uint8): "uint8", np.dtype(np.bool_): "uint8",
    np.dtype(np.int64): "int32",  # NKI: "INT64 is auto-converted to 32-bit" (reference neuron-arch.md 3.6 [DT])
}
if _ml is not None:  # pragma: no cover
    _BIR[np.dtype(_ml.bfloat16)] = "bfloat16"
    for _a, _b in (("float8_e4m3", "float8e4"), ("float8_e5m2", "float8e5"), ("float8_e4m3fn", "float8_e4m3fn"),
                   ("float8_e8m0fnu", "float8_e8m0fnu")):
        if hasattr(_ml, _a):
            _BIR[np.dtype(getattr(_ml, _a))] = _b

_BY_NAME = {"float32": float32, "float16": float16, "bfloat16": bfloat16, "int32": int32, "int16": int16,
            "int8": int8, "uint32": uint32, "uint16": uint16, "uint8": uint8, "tfloat32": tfloat32,
            "float8_e4m3": float8_e4m3, "float8_e5m2": float8_e5m2, "float8_e4m3fn": float8_e4m3fn,
            "bool": bool_, "float8_e4m3fn_x4": float8_e4m3fn_x4, "float8_e5m2_x4": float8_e5m2_x4,
            "float4_e2m1fn_x4": float4_e2m1fn_x4, "float8_e8m0fnu": float8_e8m0fnu}
_SIZE = {"float32": 4, "float32r": 4, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int16": 2, "uint16": 2,
         "int8": 1, "uint8": 1, "float8e4": 1, "float8e5": 1, "float8_e4m3fn": 1, "float8_e4m3fn_x4": 4,
         "float8_e5m2_x4": 4, "float4_e2m1fn_x4": 2, "float8_e8m0fnu": 1}
_FLOAT_RANK = {"float8e4": 1, "float8e5": 1, "float8_e4m3fn": 1, "bfloat16": 2, "float16": 2, "float32r": 3,
               "float32": 4}


def is_dtype(x):
    if isinstance(x, _Marker):
        return True
    try:
        return np.dtype(x) in _BIR
    except TypeError:
        return False


def bir_name(dt):
    """The BIR dtype name of an NKI dtype (a numpy type, an ml_dtypes type, a marker or a name); None if not one."""
    if isinstance(dt, _Marker):
        return dt.bir
    if isinstance(dt, str):
        dt = _BY_NAME.get(dt, dt)
        if isinstance(dt, _Marker):
            return dt.bir
    try:
        return _BIR.get(np.dtype(dt))
    except TypeError:
        return None


def from_bir(name):
    """The NKI dtype of a BIR dtype name."""
    for k, v in _BY_NAME.items():
        if bir_name(v) == name:
            return v
    return float32


def size(bir):
    return _SIZE[bir]


def is_float(bir):
    return bir in _FLOAT_RANK


def promote(a, b):
    """The result dtype of a binary op without dtype= (public NKI docs, nki.language "Data Type Promotion": the wider
    float wins; a float with an integer gives the float; two integers give the wider integer)."""
    if a == b:
        return a
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b
    if fa or fb:
        return a if fa else b
    return a if _SIZE[a] >= _SIZE[b] else b


def numpy_of(bir):
    """The numpy dtype arrays of a BIR dtype are held in by neuronsim (bf16 as uint16, fp8 as uint8 raw bits)."""
    return {"float32": np.float32, "float32r": np.float32, "float16": np.float16, "int32": np.int32,
            "int16": np.int16, "int8": np.int8, "uint32": np.uint32, "uint16": np.uint16, "uint8": np.uint8,
            "bfloat16": np.uint16, "float8e4": np.uint8, "float8e5": np.uint8, "float8_e4m3fn": np.uint8,
            "float8_e4m3fn_x4": np.uint32, "float8_e5m2_x4": np.uint32, "float4_e2m1fn_x4": np.uint16,
            "float8_e8m0fnu": np.uint8}[bir]
