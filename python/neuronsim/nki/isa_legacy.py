"""neuronxcc.nki.isa, the legacy namespace, as install() serves it: nki.isa's names (isa.py), except the one enum the
two generations number differently, dge_mode (legacy reference: none 0, swdge 1, hwdge 2, unknown 3; the current
one: unknown 0 ... none 3). Every other name is nki.isa's own object."""
import sys

from . import isa as _isa
from . import isa_constants as _c

__neuronsim__ = True
dge_mode = _c.legacy_dge_mode
constants = _c
__path__ = []
sys.modules.setdefault(__name__ + ".constants", _c)


def __getattr__(name):
    return getattr(_isa, name)


def __dir__():
    return sorted(set(dir(_isa)) | {"dge_mode"})
