"""neuronsim's errors raised by its pure-Python modules (the sweeps, the Dask runner), as the C++ side raises them."""
from . import _core


def error(kind, message, what="sweep"):
    """A neuronsim error of class `kind` (InvalidInput, UsageError) as the C++ side raises them, its message led by
    the command it comes from (`what`: "sweep: ...")."""
    cls = getattr(_core, kind)
    e = cls(f"{what}: " + message)
    e.exit_code = {"InvalidInput": 3, "UsageError": 2}[kind]
    e.file = e.inst_index = e.inst_name = e.field = None
    return e


def one_line(text):
    return " ".join(str(text).split())
