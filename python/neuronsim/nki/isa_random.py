"""nki.isa: random numbers on VectorE -- rng (BIR Rng), rand2 (Rand2), dropout (Dropout), rand_set_state /
rand_get_state (RandSetState / RandGetState with VectorE's 24-word XORWOW state); set_rng_seed is refused
(refusals.py). Public NKI docs, the nki.isa page of each.

The values are the simulator's generator (engines/ops/random.cpp): XORWOW, the algorithm the public rand2 page
names, per partition from a state of 4 lanes x 6 u32 that starts at all ones (lane 0 drives every element: the
hardware's lane interleave is not documented, INFERRED). A kernel that sets the state with rand_set_state gets the
XORWOW stream of that state; the hardware's own stream after a reset or a seed is not documented, so values, not
just distributions, are the simulator's model. GpSimd's generator (6-word state) has no modelled stream: engine=
gpsimd is refused."""
from . import registry
from .errors import KernelError, Unsupported, source_location
from .isa_common import column, engine_name, out_tile
from .nl_common import _bir, _emit, _is_num, _mask, _tile
from .tracer import View

_api = registry.api("nki.isa")

_INTS = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def _vector_only(engine, what):
    e = engine_name(engine, what, ("DVE", "Pool"))
    if e == "Pool":
        raise Unsupported(f"{what} on the GpSimd engine: its generator (a 6-word XORWOW state) has no modelled stream "
                          "in neuronsim; use engine=nisa.engine.vector", source_location())


@_api
def rng(dst=None, engine=None, *, name=None, **kw):
    """32 random bits per element of dst, truncated to dst's integer dtype (one Rng on VectorE)."""
    what = "nisa.rng"
    _vector_only(engine, what)
    d = _tile(dst, what, "dst")
    if d.bir_dtype not in _INTS:
        raise KernelError(f"{what}: dst {d.name} is {d.bir_dtype}; rng writes an integer dtype")
    _emit("Rng", [], [d], what, engine="DVE")
    return d


@_api
def rand2(dst=None, min=0.0, max=1.0, *, name=None, **kw):  # noqa: A002 - NKI's names
    """Uniform random fp32 values in [min, max) (numbers or [P, 1] tiles) cast to dst (one Rand2 on VectorE)."""
    what = "nisa.rand2"
    d = _tile(dst, what, "dst")
    P = d.shape[0]
    if _is_num(min) and _is_num(max) and not float(min) < float(max):
        raise KernelError(f"{what}: min {min} must be below max {max}")
    _emit("Rand2", [column(min, P, what, "min"), column(max, P, what, "max")], [d], what, engine="DVE")
    return d


@_api
def dropout(dst=None, data=None, prob=None, *, mask=None, dtype=None, name=None, **kw):
    """data with each element replaced by 0 with probability prob (a number or [P, 1] tile of drop probabilities),
    one uniform draw per element (one Dropout on VectorE). The older form dropout(data, prob) returns a new tile."""
    what = "nisa.dropout"
    if prob is None and isinstance(dst, View) and data is not None:  # the older form: dropout(data, prob)
        dst, data, prob = None, dst, data
    x = _tile(data, what, "data")
    (x,) = _mask([x], mask, what)
    out = out_tile(dst, x.shape, _bir(dtype, x.bir_dtype), what)
    if out.bir_dtype != x.bir_dtype:
        raise KernelError(f"{what}: dst {out.name} is {out.bir_dtype}; it has data's dtype {x.bir_dtype}")
    _emit("Dropout", [x, column(prob, x.shape[0], what, "prob")], [out], what)
    return out


def _state(t, what, arg):
    v = _tile(t, what, arg)
    if v.bir_dtype != "uint32":
        raise KernelError(f"{what}: {arg} {v.name} is {v.bir_dtype}; a generator state is uint32")
    n = 1
    for d in v.shape[1:]:
        n *= d
    if n != 24:
        raise KernelError(f"{what}: {arg} {v.name} {list(v.shape)}: VectorE's XORWOW state is 24 uint32 per "
                          "partition")
    return v


@_api
def rand_set_state(src_seeds=None, engine=None, *, name=None, **kw):
    """Loads VectorE's generator state from src_seeds [P, 24] uint32 (partition p: lane p's 4 x 6 words; one
    RandSetState on VectorE). engine defaults to gpsimd on the page; only engine=vector is lowered."""
    what = "nisa.rand_set_state"
    _vector_only(engine if engine is not None else "Pool", what)
    s = _state(src_seeds, what, "src_seeds")
    if s.storage.buffer != "sbuf":
        raise KernelError(f"{what}: src_seeds {s.name} must be in SBUF")
    _emit("RandSetState", [s], [], what, engine="DVE")


@_api
def rand_get_state(dst=None, engine=None, *, name=None, **kw):
    """Stores VectorE's generator state into dst [P, 24] uint32 (one RandGetState on VectorE)."""
    what = "nisa.rand_get_state"
    _vector_only(engine if engine is not None else "Pool", what)
    d = _state(dst, what, "dst")
    _emit("RandGetState", [], [d], what, engine="DVE")
    return d
