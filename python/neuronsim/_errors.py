"""neuronsim's errors raised by its pure-Python modules (the sweeps, the Dask runner), as the C++ side raises them,
and how the commands written in Python (`neuronsim sweep`, `neuronsim tune`) end on them."""
import os
import sys

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


def command_exit(e, command, rows_at=None):
    """How a command run in Python (sweep, tune) ends on exception e, after saying why on stderr: 130 for Ctrl-C
    (naming `rows_at`, where the rows so far are, when given), a neuronsim error's exit_code (its one-line message);
    None for any other exception, which the caller re-raises (an internal error, with its traceback)."""
    if isinstance(e, KeyboardInterrupt):
        where = f"; the rows so far are in {rows_at} (--resume continues)" if rows_at else ""
        sys.stderr.write(f"neuronsim: {command} interrupted{where}\n")
        return 130
    code = getattr(e, "exit_code", None)
    if code is not None:
        sys.stderr.write(f"neuronsim: {one_line(e)}\n")
    return code


def stdout_failed(e, rows_at):
    """Exit 3 for a failed write to stdout, which is an output like the results files: said on stderr with where the
    rows are, and stdout replaced by a sink so that Python's own report at exit stays silent."""
    sys.stdout = open(os.devnull, "w")
    sys.stderr.write(f"neuronsim: stdout: write failed: {e.strerror or e} ({rows_at})\n")
    return 3
