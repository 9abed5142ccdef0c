"""Ranking a sweep's rows: rank() within each arch by a numeric column, best() variant per group, and the tables
`neuronsim sweep` prints (--rank-by, and the plain table without -o)."""
from . import _core
from ._errors import error as _error
from .sweep_rows import NUMERIC_COLUMNS


def rank(rows, by="total_ns"):
    """The rows with a value in column `by` sorted by it (ascending; "-COLUMN" descending) within each arch (archs
    in order of appearance), then the rows without one (failed runs) in their order."""
    column, descending = (by[1:], True) if by.startswith("-") else (by, False)
    if column not in NUMERIC_COLUMNS:
        raise _error("UsageError", f"cannot rank by {by!r}: one of {', '.join(NUMERIC_COLUMNS)} (- before it: "
                                   f"descending){_core.did_you_mean(column, NUMERIC_COLUMNS)}")
    archs = list(dict.fromkeys(r["arch"] for r in rows))
    ranked = [r for r in rows if r[column] is not None and r["status"] != "error"]
    ranked.sort(key=lambda r: (archs.index(r["arch"]), -r[column] if descending else r[column]))
    return ranked + [r for r in rows if r[column] is None or r["status"] == "error"]


def best(rows, by="total_ns"):
    """For each group with two or more ranked variants on an arch: (group, arch, best row, runner-up row), in
    order of first appearance."""
    column = by.lstrip("-")
    ranked = [r for r in rank(rows, by) if r[column] is not None and r["status"] != "error"]
    groups = {}
    for r in ranked:
        groups.setdefault((r["group"], r["arch"]), []).append(r)
    return [(g, a, rs[0], rs[1]) for (g, a), rs in groups.items() if len(rs) > 1]


def _cell(column, value):
    if value is None:
        return "-"
    if column.endswith("_util"):
        return f"{100 * value:.1f}%"
    if column == "wall_s":
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def format_ranking(rows, by="total_ns"):
    """The table --rank-by prints: rank within its arch, kernel, arch, the column, bottleneck, status; then the
    best variant of each group."""
    column = by.lstrip("-")
    ordered = rank(rows, by)
    shown = [(str(i), r) for i, r in _numbered(ordered, column)]
    header = ["rank", "kernel", "arch", column, "bottleneck", "status"]
    table = [header] + [[n, r["kernel"], r["arch"], _cell(column, r[column]), r["bottleneck"] or "-",
                         r["status"] if r["status"] != "error" else f"error ({r['error_type']})"]
                        for n, r in shown]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    right = {0, 3}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()
             for line in table]
    winners = best(rows, by)
    if winners:
        lines.append("")
        lines.append(f"best variant per group ({'highest' if by.startswith('-') else 'lowest'} {column}):")
        for g, a, first, second in winners:
            ratio = (second[column] / first[column]) if first[column] else float("inf")
            if by.startswith("-"):
                ratio = 1 / ratio if ratio else float("inf")
            lines.append(f"  {g} {a}: {first['variant']} {_cell(column, first[column])} "
                         f"(next {second['variant']} {_cell(column, second[column])}, {ratio:.2f}x)")
    return "\n".join(lines) + "\n"


def _numbered(ordered, column):
    counts = {}
    for r in ordered:
        if r[column] is None or r["status"] == "error":
            yield "-", r
            continue
        counts[r["arch"]] = counts.get(r["arch"], 0) + 1
        yield counts[r["arch"]], r


def _plain_table(rows):
    header = ["kernel", "arch", "status", "total_ns", "bottleneck", "error"]
    table = [header] + [[r["kernel"], r["arch"], r["status"], _cell("total_ns", r["total_ns"]), r["bottleneck"] or "-",
                         r["error"] or ""] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() + "\n" for line in table)
