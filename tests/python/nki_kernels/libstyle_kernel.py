"""A kernel over libstyle_helpers (the library style, current NKI API): out = act(x) * scale (+ bias), row tile by
row tile; on NeuronCore-v3 and later (trn2, trn3) the scale is doubled, as a kernel may specialise by generation."""
import nki
import nki.isa as nisa
import nki.language as nl

from libstyle_helpers import Act, TileCfg, act_then_scale, load_tile, row_tiles


@nki.jit
def act_scale(x, bias=None, act_index=0, scale=0.5):
    n, cols = x.shape
    cfg = TileCfg(cols=cols, act=Act(act_index))
    if nisa.get_nc_version() >= nisa.nc_version.gen3:
        scale = scale * 2
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    b = None
    if bias:
        b = nl.ndarray((cfg.rows, 1), dtype=cfg.dtype, buffer=nl.sbuf)
        nisa.dma_copy(b, bias)
    for i in nl.affine_range(row_tiles(n, cfg)):
        t = load_tile(x[i * cfg.rows:(i + 1) * cfg.rows, :], cfg)
        y = nl.ndarray(t.shape, dtype=cfg.dtype, buffer=nl.sbuf)
        act_then_scale(y, t, cfg, scale, b)
        nisa.dma_copy(out[i * cfg.rows:(i + 1) * cfg.rows, :], y)
    return out
