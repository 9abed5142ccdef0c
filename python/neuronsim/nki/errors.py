"""The NKI front end's errors, in the kernel's terms: each names the kernel file and line (and the tensor) it is about.

KernelError is a neuronsim.InvalidInput (the kernel cannot run as written: CLI exit 3); Unsupported is a KernelError
for a call or construct of NKI that the front end does not lower (it never approximates one silently).
"""
import linecache
import os
import re
import sys

from .. import _core

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class KernelError(_core.InvalidInput):
    """The kernel cannot run as written: a shape mismatch, an index out of range, a tile in the wrong buffer, an SBUF
    or PSUM overflow... str(e) names the kernel's file:line and the tensor; e.file and e.line say where."""

    def __init__(self, message, where=None):
        where = where if where is not None else source_location()
        self.line = where[1] if where else None
        text = f"{where[0]}:{where[1]}: {message}" if where else message
        super().__init__(text)
        self.exit_code = 3
        self.file = where[0] if where else None
        self.inst_index = None
        self.inst_name = None
        self.field = None
        self.source = f"{where[0]}:{where[1]}" if where else None


class Unsupported(KernelError):
    """A call or construct of NKI that neuronsim's front end does not lower; str(e) names the call and the kernel's
    file:line."""


class UnknownName(Unsupported, AttributeError):
    """A name an NKI module does not have (nl.no_such_call): Unsupported naming it, and an AttributeError, so that
    hasattr() and `from nki.language import submodule` behave as on any module."""


_OURS = {}  # code filename -> whether it is a file of this package


def _ours(name):
    r = _OURS.get(name)
    if r is None:
        r = _OURS[name] = os.path.abspath(name).startswith(_PACKAGE_DIR + os.sep) or name.startswith("<frozen")
    return r


def source_location():
    """(file, line) of the innermost frame outside this package: the kernel's line that made the current call."""
    f = sys._getframe(1)
    while f is not None:
        if not _ours(f.f_code.co_filename):
            return (f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def name_from_source(where, default):
    """The variable a line assigns (`x_tile = nl.load(...)` -> x_tile), for tensor names in BIR and messages."""
    if where:
        text = linecache.getline(where[0], where[1])
        name = _ASSIGNS.get(text)
        if name is None:
            m = re.match(r"\s*([A-Za-z_]\w*)\s*(\[[^=]*\])?\s*(\+|-|\*)?=(?!=)", text)
            name = _ASSIGNS[text] = m.group(1) if m else ""
        if name:
            return name
    return default


_ASSIGNS = {}  # a source line's text -> the variable it assigns ("" for none)
