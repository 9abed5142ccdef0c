"""A kernel in the legacy namespace and NKI's older style (the output is an argument the kernel writes; nl.mgrid
indices): c_out = a + b."""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def add_inplace(a_in, b_in, c_out):
    i_p, i_f = nl.mgrid[0:128, 0:a_in.shape[1]]
    for t in nl.affine_range(a_in.shape[0] // 128):
        x = nl.load(a_in[t * 128 + i_p, i_f])
        y = nl.load(b_in[t * 128 + i_p, i_f])
        nl.store(c_out[t * 128 + i_p, i_f], value=x + y)
