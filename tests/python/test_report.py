"""`neuronsim report`, `run --report` and Result.report (docs/profiling.md), loaded in a real headless browser:
Debian's chromium (scripts/bootstrap installs it). Each page must load with no script error and no console message,
show every engine, and render to a screenshot that is not blank. Every browser process is started and waited for
here (a time limit each), with a fresh profile folder removed afterwards."""
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

import neuronsim
from conftest import CLI, ROOT, cli

CHROMIUM = shutil.which("chromium")
ENGINES = ["PE", "ACT", "POOL", "DVE", "SP"]
pytestmark = pytest.mark.skipif(os.environ.get("NEURONSIM_SANITIZE") == "1",
                                reason="the browser runs no project code; the normal build's suite loads the pages")


def chromium(tmp, page, *args):
    """Runs headless chromium on `page` with `args`; returns (stdout, stderr). The flags are those known to work on
    this machine with no network (machines/cpp.md): no background networking, no component updates, no sync."""
    assert CHROMIUM, "chromium is not installed: scripts/bootstrap installs it (apt-get install chromium)"
    profile = tmp / "chromium-profile"
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args,
                            page.as_uri()], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


def console_messages(stderr):
    """What the page's scripts said: chromium logs console messages and uncaught errors as CONSOLE lines."""
    return [line for line in stderr.splitlines() if ":CONSOLE(" in line or "Uncaught" in line]


def dom(tmp, page):
    out, err = chromium(tmp, page, "--dump-dom")
    assert console_messages(err) == [], console_messages(err)
    assert 'data-errors="0"' in out and 'data-ready="1"' in out, out[:2000]
    return out


def png_pixels(path, max_rows=400):
    """The first max_rows RGB(A) rows of an 8-bit PNG (what chromium writes: colour type 2 or 6, no interlace),
    unfiltered (a row's filter reads only the rows above it, so the top of the picture decodes alone)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, kind = 8, b"", 0, 0, 0
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            width, height, depth, kind = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and kind in (2, 6)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if kind == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(min(height, max_rows)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def assert_not_blank(path):
    width, height, bpp, rows = png_pixels(path)
    colours, ink = set(), 0
    for row in rows[::4]:
        for x in range(0, width * bpp, 4 * bpp):
            px = row[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    # The page's top draws the title, the verdict box and the timeline's engine colours on white: many colours and
    # a fair share of ink.
    assert len(colours) > 20 and ink > 0.02 * (width // 4) * (len(rows) // 4), (len(colours), ink)


def test_a_run_page_loads_with_every_engine_and_renders(tmp):
    page = tmp / "k1.html"
    out = cli("run", "workloads/kernel1", "--timing-only", "--report", page).stdout
    assert f"report: {page}" in out
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html  # no fetch
    d = dom(tmp, page)
    for e in ENGINES:
        assert f'data-engine="{e}"' in d, e  # the busy / wait / idle row of every engine
    assert re.search(r"tracks: PE, ACT, POOL, DVE, SP, qSyncIO0 ring 0", d)  # the timeline's tracks
    assert "verdict: DMA latency-bound (fixed latency" in d
    assert "kernel1.py:9" in d  # the top instructions with their source lines
    shot = tmp / "k1.png"
    chromium(tmp, page, "--window-size=1000,700", f"--screenshot={shot}")
    assert_not_blank(shot)


def test_a_sweep_page_shows_speedups_against_the_baseline(tmp):
    csv = tmp / "results.csv"
    # Two kernels on two archs, times chosen so that the speed-ups are exact: 1000 / 500 = 2.00x, 300 / 400 = 0.75x.
    csv.write_text("kernel,arch,status,total_ns,bottleneck\n"
                   "a,trn1,ok,1000.0,DMA\na,trn2,ok,500.0,DMA\n"
                   "\"b,odd\",trn1,ok,300.0,PE\n\"b,odd\",trn2,ok,400.0,PE\n")
    page = tmp / "sweep.html"
    cli("report", csv, "-o", page)
    d = dom(tmp, page)
    assert "500.0 ns (2.00x)" in d and "400.0 ns (0.75x)" in d and "b,odd" in d
    assert d.count("<rect") == 4  # one bar per (kernel, arch)
    cli("report", csv, "-o", page, "--baseline", "trn2")
    assert "1.00 us (0.50x)" in dom(tmp, page)


def test_report_refuses_what_it_cannot_draw(tmp):
    bad = tmp / "bad.csv"
    bad.write_text("kernel,arch\na,trn1\n")
    r = cli("report", bad, "-o", tmp / "x.html", check=False)
    assert r.returncode == 3 and "field 'status': missing column" in r.stderr
    s = tmp / "s.json"
    cli("run", "workloads/kernel1", "--timing-only", "--stats", s)
    r = cli("report", s, "-o", s, check=False)  # never over an input
    assert r.returncode == 3 and s.read_text().startswith("{")
    assert cli("report", s, check=False).returncode == 2  # no -o


def test_python_pages(tmp):
    r = neuronsim.run(ROOT / "workloads/kernel1", timing_only=True, report=tmp / "a.html", trace=tmp / "t.json")
    r.report(tmp / "b.html")
    for name in ("a.html", "b.html"):
        html = (tmp / name).read_text()
        assert '"tracks":["PE","ACT","POOL","DVE","SP"' in html, name
        assert r.verdict in html
    d = dom(tmp, tmp / "b.html")
    assert all(f'data-engine="{e}"' in d for e in ENGINES)
