"""nki.language's values that are no call: the dtypes (dtypes.py), the memory regions (MemoryRegion, nl.sbuf...,
is_hbm / is_sbuf / is_psum / is_on_chip), the base classes kernels build on (NKIObject, NkiTensor), the legacy
constants fp32 / bfp16 and finfo, static_cast, and nki.language.constants (sizeinbytes). Each is an ordinary Python
value: importable, storable in a table built at import time, hashable and comparable."""
import enum

import numpy as np

from . import dtypes, registry
from .errors import KernelError, Unsupported, source_location
from .tracer import View

__neuronsim__ = True
_L = "nki.language"

for _name, _dt in dtypes.ALL.items():
    registry.value(_L, _name, _dt)
DType = registry.value(_L, "DType", dtypes.DType)


# ---------------------------------------------------------------------------------------------------- memory
class MemoryRegion(str, enum.Enum):
    """Where a tensor lives (the current reference's MemoryRegion); each member equals its name as a str, so that
    `t.buffer == nl.sbuf` holds for the strings the front end keeps. nl.hbm is private_hbm (the reference: an
    alias)."""
    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"

    def __str__(self):
        return self.value

    __format__ = str.__format__


registry.value(_L, "MemoryRegion", MemoryRegion)
sbuf = registry.value(_L, "sbuf", MemoryRegion.sbuf)
psum = registry.value(_L, "psum", MemoryRegion.psum)
private_hbm = registry.value(_L, "private_hbm", MemoryRegion.private_hbm)
shared_hbm = registry.value(_L, "shared_hbm", MemoryRegion.shared_hbm)
hbm = registry.value(_L, "hbm", MemoryRegion.private_hbm)
_HBM = ("hbm", "private_hbm", "shared_hbm")


def _region(buffer):
    return str(getattr(buffer, "buffer", buffer))  # a tensor's buffer, or a buffer


@registry.api(_L)
def is_hbm(buffer):
    """Whether buffer (a memory region, or a tensor's) is HBM, private or shared."""
    return _region(buffer) in _HBM


@registry.api(_L)
def is_sbuf(buffer):
    return _region(buffer) == "sbuf"


@registry.api(_L)
def is_psum(buffer):
    return _region(buffer) == "psum"


@registry.api(_L)
def is_on_chip(buffer):
    return _region(buffer) in ("sbuf", "psum")


# ---------------------------------------------------------------------------------------------------- base classes
class NKIObject:
    """The base of NKI's kernel-side classes (configuration objects, helpers): constructed like a dataclass from its
    annotated fields -- positionally in the order the class and its bases declare them, or by keyword (any keyword,
    as NKI's NKIObject(**kwargs)); a field not given keeps its class default, if any; __post_init__ runs after, when
    the class has one. A subclass decorated with
    @dataclass gets dataclass's own constructor instead."""

    def __init__(self, *args, **kwargs):
        fields = _fields(type(self))
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} positional arguments "
                            f"({', '.join(fields) or 'no fields'}), got {len(args)}")
        for name, v in zip(fields, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__} got two values for field {name!r}")
            kwargs[name] = v
        for name, v in kwargs.items():
            setattr(self, name, v)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __init_subclass__(cls, **kwargs):
        """A plain class attribute of a subclass (`section_idx = None`) is a field too, with that default, so that a
        @dataclass subclass that declares its fields that way takes them as keywords (NKI constructs such classes
        so; the NKI Library's attention kernels rely on it). Functions, classes, properties and mutable values
        stay class attributes."""
        super().__init_subclass__(**kwargs)
        ann = cls.__dict__.get("__annotations__")
        if ann is None:
            ann = {}
            cls.__annotations__ = ann
        for name, v in list(cls.__dict__.items()):
            if name.startswith("_") or name in ann or callable(v) or isinstance(v, (property, classmethod,
                                                                                    staticmethod, list, dict, set)):
                continue
            ann[name] = "typing.Any"

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({shown})"


def _fields(cls):
    """The annotated fields of cls and its bases, bases first, each once (a dataclass's order)."""
    out = []
    for c in reversed(cls.__mro__):
        for name in c.__dict__.get("__annotations__", {}):
            if name not in out:
                out.append(name)
    return out


registry.value(_L, "NKIObject", NKIObject)
# nl.NkiTensor: the class of every tensor a kernel holds (isinstance(t, nl.NkiTensor)) -- the tracer's View.
NkiTensor = registry.value(_L, "NkiTensor", View)


# ---------------------------------------------------------------------------------------------------- constants
class fp32:
    """Legacy nl.fp32: fp32.min, the most negative fp32 value (bit pattern 0xff7fffff)."""
    min = float(np.finfo(np.float32).min)


class bfp16:
    """Legacy nl.bfp16: bfp16.min, the value of the bit pattern 0xff80 the reference names (bfloat16's -inf)."""
    min = float("-inf")


registry.value(_L, "fp32", fp32)
registry.value(_L, "bfp16", bfp16)


class _Finfo:
    """The limits of a float dtype, as numpy's finfo gives them: bits, max, min, tiny, eps."""

    def __init__(self, dtype, bits, max_, tiny, eps):
        self.dtype, self.bits, self.max, self.min, self.tiny, self.eps = dtype, bits, max_, -max_, tiny, eps

    def __repr__(self):
        return f"finfo(dtype={self.dtype}, max={self.max}, tiny={self.tiny}, eps={self.eps})"


@registry.api(_L)
def finfo(dtype):
    """Legacy nl.finfo(dtype): numpy's finfo for the types numpy has; for bfloat16 and the fp8 types the limits are
    read off the simulator's own codecs (neuronsim.to_float32 of every bit pattern), so they are the values the
    simulator rounds to."""
    dt = dtypes.ALL.get(str(dtype)) if isinstance(dtype, str) else None
    bir = dtypes.bir_name(dtype)
    if bir is None or not dtypes.is_float(bir):
        raise KernelError(f"nl.finfo takes a float dtype, got {dtype!r}")
    np_t = dtypes.numpy_type(dt if dt is not None else dtype)
    if np_t is not None and np_t.kind == "f":
        return np.finfo(np_t)
    from .. import _core
    n = 1 << (8 * dtypes.size(bir))
    bits = np.arange(n, dtype=np.uint32).astype(np.uint16 if n > 256 else np.uint8)
    with np.errstate(invalid="ignore"):  # the NaN patterns
        vals = _core.to_float32(bits, bir).astype(np.float64)
    fin = vals[np.isfinite(vals)]
    eps = float(np.min(fin[fin > 1.0])) - 1.0  # the step after 1: 2^-mantissa bits
    # the smallest normal: the smallest subnormal, 2^(1 - bias - mantissa bits), times 2^mantissa bits
    tiny = float(np.min(fin[fin > 0])) / eps
    return _Finfo(dtypes.from_bir(bir), 8 * dtypes.size(bir), float(fin.max()), tiny, eps)


@registry.api(_L)
def static_cast(input_data, dtype):
    """Legacy nl.static_cast: a Python scalar or numpy array converted to dtype (numpy's rounding) when the kernel is
    traced; a tile is converted with nl.copy(x, dtype=...)."""
    if isinstance(input_data, View):
        raise Unsupported("nl.static_cast of a tile: convert it with nl.copy(x, dtype=...)", source_location())
    t = dtypes.numpy_type(dtype)
    if t is None:
        raise Unsupported(f"nl.static_cast to {dtype}: numpy has no such type (nor has ml_dtypes)",
                          source_location())
    a = np.asarray(input_data).astype(t)
    return a.item() if a.ndim == 0 else a
