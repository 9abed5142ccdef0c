"""neuronxcc.nki, the legacy namespace's package, as install() serves it: neuronsim.nki's names, except .isa, the
legacy nki.isa (isa_legacy.py: the legacy numbering of dge_mode). `import neuronxcc.nki.isa as nisa` reads the isa
attribute of this package, so the two generations need two package objects."""
import functools
import sys

from . import api
from . import isa_legacy as isa  # noqa: F401

__neuronsim__ = True
__path__ = []

# neuronxcc.nki.jit: kernel[n] is the legacy launch grid (n instances one after the other), nki.jit's the LNC degree.
jit = baremetal = functools.partial(api.jit, generation="legacy")


def __getattr__(name):
    return getattr(sys.modules["neuronsim.nki"], name)
