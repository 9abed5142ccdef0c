"""neuronxcc.nki, the legacy namespace's package, as install() serves it: neuronsim.nki's names, except .isa, the
legacy nki.isa (isa_legacy.py: the legacy numbering of dge_mode). `import neuronxcc.nki.isa as nisa` reads the isa
attribute of this package, so the two generations need two package objects."""
import sys

from . import isa_legacy as isa  # noqa: F401

__neuronsim__ = True
__path__ = []


def __getattr__(name):
    return getattr(sys.modules["neuronsim.nki"], name)
