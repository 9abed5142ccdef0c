"""nki.language: random numbers -- nl.rand (one Rand2 on VectorE, uniform in [0, 1)) and nl.dropout (one Dropout);
nl.random_seed is refused (refusals.py). The values are the simulator's XORWOW generator (engines/ops/random.cpp;
nki.isa's rand2 page names XORWOW): the hardware's stream is not documented, so a kernel gets the distribution NKI
documents and the simulator's own stream (isa_random.py says how it is seeded)."""
from . import registry
from .errors import KernelError, Unsupported, source_location
from .nl_common import _bir, _emit, _imm, _is_num, _mask, _new_tile, _tile

_api = registry.api("nki.language")


@_api
def rand(shape, dtype=None, *, buffer=None, name="", **kw):
    """A new tile of shape filled with uniform random values in [0, 1) (one Rand2 on VectorE, min 0, max 1)."""
    b = buffer if isinstance(buffer, str) or buffer is None else getattr(buffer, "name", str(buffer))
    t = _new_tile(tuple(int(s) for s in shape), _bir(dtype, "float32"), b or "sbuf", name=name or None)
    if t.storage.buffer == "hbm":
        raise Unsupported("nl.rand in HBM: create the tile in SBUF and nl.store it", source_location())
    _emit("Rand2", [_imm(0.0), _imm(1.0)], [t], "nl.rand", engine="DVE")
    return t


@_api
def dropout(x, rate, *, dtype=None, mask=None, **kw):
    """x with each element set to 0 with probability rate (a number or [P, 1] tile), no rescaling (one Dropout on
    VectorE)."""
    x = _tile(x, "nl.dropout", "x")
    (x,) = _mask([x], mask, "nl.dropout")
    if _is_num(rate):
        r = _imm(rate)
    else:
        r = _tile(rate, "nl.dropout", "rate")
        if r.shape[0] != x.shape[0] or any(n != 1 for n in r.shape[1:]):
            raise KernelError(f"nl.dropout: rate {r.name} must be a number or a [{x.shape[0]}, 1] tile")
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    _emit("Dropout", [x, r], [out], "nl.dropout")
    return out
