"""`neuronsim tune --report FILE.html` (tune(report=...)): one self-contained page -- a bar chart of every candidate's
time (inline SVG, coloured by status), the ranking as a table, and the best candidate's profile: its run's own report
page (`neuronsim nki --timing-only --report`: verdict, timeline, critical path, top instructions), embedded."""
import html
import os
import tempfile

from . import _core
from .tune import rank, speedups
from .tune_work import _time

_COLOURS = {"ok": "#3b7dd8", "wrong": "#d89a3b", "refused": "#999999", "error": "#c0392b"}


def _label(row, names):
    return ", ".join(f"{p}={row[p]!r}" for p in names)


def chart_svg(rows, names):
    """Horizontal bars, one per candidate in grid order, length total_ns; untimed candidates are a grey stub."""
    timed = [r["total_ns"] for r in rows if r["total_ns"] is not None]
    top = max(timed) if timed else 1.0
    bar_h, gap, left, width = 18, 6, 260, 520
    height = len(rows) * (bar_h + gap) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120}" height="{height}" '
           'font-family="sans-serif" font-size="12">']
    for i, r in enumerate(rows):
        y = 10 + i * (bar_h + gap)
        t = r["total_ns"]
        w = max(2.0, width * t / top) if t is not None else 2.0
        colour = _COLOURS.get(r["status"], "#999999")
        out.append(f'<text x="{left - 8}" y="{y + 13}" text-anchor="end">{html.escape(_label(r, names))}</text>')
        why = html.escape(r["message"] or r["verdict"] or "")
        out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}">'
                   f'<title>{html.escape(r["status"])}: {why}</title></rect>')
        text = f"{t:.1f} ns" if t is not None else r["status"]
        if r["status"] not in ("ok",) and t is not None:
            text += f" ({r['status']})"
        out.append(f'<text x="{left + w + 6:.1f}" y="{y + 13}">{html.escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def page(title, rows, names, profile_html, best):
    slowest, first = speedups(rows)
    trs = []
    for i, r in enumerate(rank(rows), start=1):
        t = r["total_ns"]
        timed = t is not None and r["status"] in ("ok", "wrong")
        cells = [str(i)] + [repr(r[p]) for p in names] + [
            f"{t:.1f}" if timed else "-", f"{slowest / t:.2f}x" if timed and slowest else "-",
            f"{first / t:.2f}x" if timed and first else "-", r["status"],
            f"{r['max_abs_err']:.3g}" if r["max_abs_err"] is not None else "",
            (r["verdict"] or "") if r["status"] == "ok" else (r["message"] or "")]
        trs.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["#"] + list(names) + [
        "total_ns", "vs slowest", "vs first", "status", "max_abs_err", "verdict / message"])
    if profile_html is not None:
        profile = (f"<h2>Profile of the best candidate ({html.escape(_label(best, names))})</h2>\n"
                   f'<iframe style="width:100%;height:1400px;border:1px solid #ccc" '
                   f'srcdoc="{html.escape(profile_html, quote=True)}"></iframe>')
    else:
        profile = "<h2>Profile</h2><p>No candidate is ok: there is no best one to profile.</p>"
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p>{len(rows)} candidates; simulated time of each (timing-only run), in grid order. Colours: ok (blue), wrong
(orange), refused (grey), error (red).</p>
{chart_svg(rows, names)}
<h2>Ranking</h2>
<table><tr>{head}</tr>
{chr(10).join(trs)}
</table>
{profile}
</body></html>
"""


def write_report(path, spec, rows, names):
    """Writes the page to path: the best ok candidate is traced and run again here, timing-only, with its report."""
    ranked = rank(rows)
    best = ranked[0] if ranked and ranked[0]["status"] == "ok" else None
    profile = None
    if best is not None:
        kwargs = dict(spec.fixed)
        kwargs.update((p, best[p]) for p in names)
        with tempfile.TemporaryDirectory(prefix="neuronsim-tune-") as tmp:
            inner = os.path.join(tmp, "best.html")
            _time(spec, kwargs, report=inner)
            with open(inner) as f:
                profile = f.read()
    reads = [r.path for r in (spec.kernel, spec.reference) if r is not None and r.path]
    text = page(f"neuronsim tune: {spec.kernel.label}", rows, names, profile, best)
    _core.write_output(os.fspath(path), text, reads)
    return path
