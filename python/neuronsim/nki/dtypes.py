"""NKI's data types (public NKI docs, nki.language "Data Types") and their BIR names.

Each dtype is a DType: a str holding its NKI name, as the current API has them (its stub declares `DType = str`), so
str(nl.bfloat16) == 'bfloat16' and a dtype is hashable, comparable and storable in a table built at import
(`{nl.float8_e4m3: 240.0}`). Numpy takes a name as a dtype, so the legacy API's use of its dtypes as numpy's
(`np.dtype(nl.float32)`, `np.zeros(shape, dtype=nl.float16)`, `x.astype(nl.int32)`) works for every type numpy has;
a DType also compares equal to numpy's (`nl.float32 == np.float32`). numpy itself has no bfloat16, fp8 or tfloat32.
With the ml_dtypes package installed its types are used. Without it, bfloat16 and the three fp8 types are
neuronsim's own numpy dtypes (neuronsim._core._bfloat16() and _float8_types(), python/bf16_dtype.cpp and
python/fp8_dtypes.cpp: kind 'V', ml_dtypes' names, itemsize 2 / 1, the simulator's own rounding from float32,
arithmetic in float32 rounded once, as ml_dtypes'), registered when this module is imported: `np.dtype(nl.bfloat16)`,
`x.astype(nl.float8_e4m3)`, bf16 / fp8 arrays as kernel arguments (passed as their bits) and bf16 / fp8 kernel
outputs (their bits unchanged) work as with ml_dtypes. fp8 arguments may also be given as float32 values through
neuronsim.nki.array(values, nl.float8_e4m3), or as their raw bits, uint8 (neuronsim's .npy convention).
"""
import numpy as np

try:  # pragma: no cover - depends on the environment
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover
    _ml = None

# numpy's bfloat16 and fp8 dtypes: ml_dtypes' when it is installed, else neuronsim's (one of each name per process).
_FP8_NAMES = ("float8_e4m3", "float8_e5m2", "float8_e4m3fn")
if _ml is not None:  # pragma: no cover
    BFLOAT16 = np.dtype(_ml.bfloat16)
    FLOAT8 = {n: np.dtype(getattr(_ml, n)) for n in _FP8_NAMES if hasattr(_ml, n)}
else:
    from .. import _core
    BFLOAT16 = np.dtype(_core._bfloat16())
    FLOAT8 = {n: np.dtype(t) for n, t in _core._float8_types().items()}

class DType(str):
    """An NKI dtype: its name (a str), its BIR name (.bir) and its size in bytes (.itemsize)."""
    __slots__ = ()

    @property
    def name(self):
        return str(self)

    @property
    def bir(self):
        return _BIR_OF_NAME[str(self)]

    @property
    def itemsize(self):
        return _SIZE[self.bir]

    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, other)
        try:
            o = np.dtype(other)
        except TypeError:
            return NotImplemented
        mine = numpy_type(self)
        return o == mine if mine is not None else o.name == str(self)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__

    def __reduce__(self):
        return (DType, (str(self),))


# name -> BIR name (isa/tables/enums.def Dtype); the order of public NKI docs' dtype table.
_BIR_OF_NAME = {
    "bool_": "uint8", "int8": "int8", "int16": "int16", "int32": "int32", "uint8": "uint8", "uint16": "uint16",
    "uint32": "uint32", "float16": "float16", "float32": "float32", "bfloat16": "bfloat16",
    # tfloat32: fp32 storage with a reduced-precision PE operand: BIR's float32r (reference neuronx-cc/arch/
    # pe-engine.md, "float32r (Dtype 17) ... single-pass reduced-precision"; INFERRED to be what NKI's tfloat32 is).
    "tfloat32": "float32r",
    "float8_e4m3": "float8e4", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8e5",
    # The MX types (current API; reference neuron-arch.md 3.6): packed containers of 4 elements, and the scale.
    "float8_e5m2_x4": "float8_e5m2_x4", "float8_e4m3fn_x4": "float8_e4m3fn_x4", "float8_e8m0fnu": "float8_e8m0fnu",
    "float4_e2m1fn_x4": "float4_e2m1fn_x4",
}
_SIZE = {"float32": 4, "float32r": 4, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int16": 2, "uint16": 2,
         "int8": 1, "uint8": 1, "float8e4": 1, "float8e5": 1, "float8_e4m3fn": 1, "float8_e8m0fnu": 1,
         # x4 containers: 4 fp8 in 4 bytes, 4 fp4 in 2 bytes (engines/ops/mx.cpp)
         "float8_e5m2_x4": 4, "float8_e4m3fn_x4": 4, "float4_e2m1fn_x4": 2}
_FLOAT_RANK = {"float8e4": 1, "float8e5": 1, "float8_e4m3fn": 1, "bfloat16": 2, "float16": 2, "float32r": 3,
               "float32": 4}

bool_, int8, int16, int32 = DType("bool_"), DType("int8"), DType("int16"), DType("int32")
uint8, uint16, uint32 = DType("uint8"), DType("uint16"), DType("uint32")
float16, float32, bfloat16, tfloat32 = DType("float16"), DType("float32"), DType("bfloat16"), DType("tfloat32")
float8_e4m3, float8_e4m3fn, float8_e5m2 = DType("float8_e4m3"), DType("float8_e4m3fn"), DType("float8_e5m2")
float8_e5m2_x4, float8_e4m3fn_x4 = DType("float8_e5m2_x4"), DType("float8_e4m3fn_x4")
float8_e8m0fnu, float4_e2m1fn_x4 = DType("float8_e8m0fnu"), DType("float4_e2m1fn_x4")
MX_X4 = ("float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4")  # the BIR names of the x4 containers
ALL = {str(d): d for d in (bool_, int8, int16, int32, uint8, uint16, uint32, float16, float32, bfloat16, tfloat32,
                           float8_e4m3, float8_e4m3fn, float8_e5m2, float8_e5m2_x4, float8_e4m3fn_x4, float8_e8m0fnu,
                           float4_e2m1fn_x4)}

# numpy dtypes -> BIR names, for arrays given to a kernel and dtypes given as numpy's.
_BIR = {
    np.dtype(np.float32): "float32", np.dtype(np.float16): "float16", np.dtype(np.int32): "int32",
    np.dtype(np.int16): "int16", np.dtype(np.int8): "int8", np.dtype(np.uint32): "uint32",
    np.dtype(np.uint16): "uint16", np.dtype(np.uint8): "uint8", np.dtype(np.bool_): "uint8",
    np.dtype(np.int64): "int32",  # NKI: "INT64 is auto-converted to 32-bit" (reference neuron-arch.md 3.6 [DT])
    BFLOAT16: "bfloat16",
}
_BIR.update((d, _BIR_OF_NAME[n]) for n, d in FLOAT8.items())

def numpy_type(dt):
    """numpy's dtype for an NKI dtype, None when numpy has none (tfloat32, the MX types; an fp8 type an old ml_dtypes
    lacks)."""
    name = str(dt)
    if name == "bool_":
        return np.dtype(np.bool_)
    if name == "bfloat16":
        return BFLOAT16
    if name in FLOAT8:
        return FLOAT8[name]
    try:
        return np.dtype(name)
    except TypeError:
        return None


def is_dtype(x):
    return bir_name(x) is not None


def bir_name(dt):
    """The BIR dtype name of an NKI dtype (a DType or its name, a numpy type or dtype); None if it is not one."""
    if isinstance(dt, str):
        return _BIR_OF_NAME.get(str(dt))
    try:
        return _BIR.get(np.dtype(dt))
    except TypeError:
        return None


def from_bir(name):
    """The NKI dtype of a BIR dtype name."""
    for k, v in ALL.items():
        if _BIR_OF_NAME[k] == name and k != "bool_":
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
            "float8_e8m0fnu": np.uint8, "float8_e5m2_x4": np.uint32, "float8_e4m3fn_x4": np.uint32,
            "float4_e2m1fn_x4": np.uint16}[bir]
