"""Helpers in the style of a kernel library built on the current NKI API (written here): configuration objects on
nl.NKIObject, an enum of the library's own activation names with a table to nl functions built when the module is
imported, fp8 ranges keyed by dtype, enum constants from nki.isa.constants, and dst-first nki.isa calls."""
from enum import Enum

import nki
import nki.isa as nisa
import nki.language as nl
from nki.isa.constants import dge_mode, oob_mode


class Act(Enum):
    SILU = 0
    GELU = 1
    GELU_TANH = 2
    SWISH = 3


ACT_FN = {Act.SILU: nl.silu, Act.GELU: nl.gelu, Act.GELU_TANH: nl.gelu_apprx_tanh, Act.SWISH: nl.gelu_apprx_sigmoid}
FP8_RANGE = {nl.float8_e4m3: 240.0, nl.float8_e4m3fn: 448.0, nl.float8_e5m2: 57344.0}


class TileCfg(nl.NKIObject):
    rows: int = nl.tile_size.pmax
    cols: int
    act: Act = Act.SILU
    dtype: nki.dtype = nl.float32


def row_tiles(n, cfg):
    return (n + cfg.rows - 1) // cfg.rows


def load_tile(src, cfg):
    t = nl.ndarray((cfg.rows, cfg.cols), dtype=cfg.dtype, buffer=nl.sbuf)
    nisa.dma_copy(t, src, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown)
    return t


def act_then_scale(dst, src, cfg, scale, bias=None):
    """dst = act(src) * scale (+ bias, a [rows, 1] column, when given)."""
    a = nl.ndarray(src.shape, dtype=cfg.dtype, buffer=nl.sbuf)
    nisa.activation(a, ACT_FN[cfg.act], src)
    if bias:
        nisa.tensor_scalar(dst, a, nl.multiply, scale, False, nl.add, bias)
    else:
        nisa.tensor_scalar(dst, a, nl.multiply, scale)
    return dst
