// The HTML, CSS and JavaScript of `neuronsim report` pages (sim/report.cpp puts the data where @DATA@ stands; the
// script sets the title from data.title, so no text from a document is ever part of the markup).
// Plain JavaScript written for this page, no library: the run page draws its timeline on a canvas (wheel
// zooms about the pointer, drag pans, the buttons zoom and reset) and its bars as HTML; the sweep page draws
// its chart as SVG. An error in the script is shown on the page and recorded on <body data-errors>
// (tests/python/test_report.py loads the page in headless Chromium and reads it).
#pragma once

namespace neuronsim::sim {

inline constexpr const char *kReportPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>neuronsim report</title>
<style>
body { font: 14px/1.4 sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: #555; } .verdict { font-size: 17px; font-weight: bold; margin: 12px 0; padding: 8px 12px;
  background: #fff4d6; border-left: 4px solid #e0a000; }
table { border-collapse: collapse; }
td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f2f2f2; } td.l, th.l { text-align: left; }
.bar { display: flex; height: 16px; width: 480px; background: #eee; }
.bar span { display: block; height: 100%; }
.legend span { display: inline-block; margin-right: 12px; } .legend i { display: inline-block; width: 12px;
  height: 12px; margin-right: 4px; vertical-align: middle; }
#timeline-wrap { position: relative; border: 1px solid #ccc; overflow: hidden; } #timeline { display: block; }
#tip { position: absolute; pointer-events: none; background: #333; color: #fff; padding: 3px 6px;
  font-size: 12px; display: none; white-space: nowrap; }
button { margin-right: 4px; } .err { color: #b00; font-weight: bold; } .note { color: #666; font-size: 12px; }
</style>
</head>
<body data-errors="0">
<div id="errors" class="err"></div>
<div id="app"></div>
<script type="application/json" id="data">@DATA@</script>
<script>
"use strict";
var errors = 0;
function fail(msg) {
  errors += 1;
  document.body.setAttribute("data-errors", String(errors));
  document.getElementById("errors").textContent += "report error: " + msg + " ";
}
window.addEventListener("error", function (e) { fail(e.message); });

var COLORS = { busy: "#3a7bd5", dependency: "#f0a030", semaphore: "#b05cc6", shared_port: "#d04040",
  psum_bank: "#40a080", dma_ring: "#8a6d3b", dma_engine: "#607d8b", idle: "#e4e4e4" };
var ENGINE_COLORS = { PE: "#3a7bd5", ACT: "#2e9e5b", POOL: "#c0392b", DVE: "#8e44ad", SP: "#7f8c8d",
  DMA: "#e67e22" };

function el(tag, attrs, children) {
  var e = document.createElement(tag);
  for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
  (children || []).forEach(function (c) {
    e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  });
  return e;
}
function fmtTime(ns) {
  var a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(1) + " ns";
  if (a < 1e6) return (ns / 1e3).toFixed(2) + " us";
  if (a < 1e9) return (ns / 1e6).toFixed(3) + " ms";
  return (ns / 1e9).toFixed(3) + " s";
}
function pct(x) { return (100 * x).toFixed(0) + "%"; }
function table(head, rows, left) {
  var t = el("table");
  t.appendChild(el("tr", {}, head.map(function (h, i) { return el("th",
      { "class": left[i] ? "l" : "" }, [h]); })));
  rows.forEach(function (r) {
    t.appendChild(el("tr", {}, r.map(function (c, i) { return el("td", { "class": left[i] ? "l" : "" },
        [String(c)]); })));
  });
  return t;
}

// A bar of segments [[name, ns], ...] over `total` ns.
function stackedBar(parts, total) {
  var bar = el("div", { "class": "bar" });
  parts.forEach(function (p) {
    if (p[1] <= 0 || total <= 0) return;
    var s = el("span", { title: p[0] + " " + fmtTime(p[1]) + " (" + pct(p[1] / total) + ")" });
    s.style.width = (100 * p[1] / total) + "%";
    s.style.background = COLORS[p[0]] || "#999";
    bar.appendChild(s);
  });
  return bar;
}
function legend(names) {
  return el("div", { "class": "legend" }, names.map(function (n) {
    var i = el("i"); i.style.background = COLORS[n];
    return el("span", {}, [i, n]);
  }));
}

function runPage(d, app) {
  var a = d.analysis || {};
  app.appendChild(el("h1", {}, ["neuronsim report: " + d.kernel]));
  app.appendChild(el("div", { "class": "sub" }, ["arch " + d.arch + ", simulated time " +
      fmtTime(d.total_ns) +
    " (" + d.total_ns + " ns), bottleneck " + d.bottleneck + " - " + d.tool]));
  app.appendChild(el("div", { "class": "verdict", id: "verdict" },
      ["verdict: " + ((a.verdict || {}).text || "none")]));

  // The engine timeline.
  app.appendChild(el("h2", {}, ["Engine timeline"]));
  var fit = null;
  if (d.timeline) fit = timeline(d, app);
  else app.appendChild(el("p", { "class": "note" },
      ["no trace given: neuronsim report STATS.json TRACE.json, or run --report"]));

  // Utilization and wait reasons.
  app.appendChild(el("h2", {}, ["Where each engine's time goes: busy, waiting by reason, idle"]));
  var reasons = ["dependency", "semaphore", "shared_port", "psum_bank", "dma_ring", "dma_engine"];
  var rows = el("table", { id: "engines" });
  rows.appendChild(el("tr", {}, [el("th", { "class": "l" }, ["engine"]), el("th", { "class": "l" }, ["time"]),
    el("th", {}, ["busy"]), el("th", {}, ["rate of peak"])]));
  var engines = a.engines || {};
  ["PE", "ACT", "POOL", "DVE", "SP"].forEach(function (name) {
    var e = engines[name] || { busy_ns: 0, idle_ns: d.total_ns, work: {} };
    var parts = [["busy", e.busy_ns]];
    reasons.forEach(function (r) { parts.push([r, (e.wait_ns || {})[r] || 0]); });
    parts.push(["idle", e.idle_ns]);
    var w = e.work || {};
    rows.appendChild(el("tr", { "data-engine": name }, [el("td", { "class": "l" }, [name]),
      el("td", { "class": "l" }, [stackedBar(parts, d.total_ns)]), el("td", {},
          [pct(e.busy_ns / (d.total_ns || 1))]),
      el("td", {}, [w.amount ? pct(w.of_peak) + " of peak " + w.unit + "/s" : "-"])]));
  });
  app.appendChild(rows);
  app.appendChild(legend(["busy"].concat(reasons).concat(["idle"])));
  var q = a.dma_queues || [];
  if (q.length) {
    app.appendChild(el("h2", {}, ["DMA queues"]));
    app.appendChild(table(["queue", "transfers", "bytes", "active", "idle", "achieved", "allowed",
        "fixed latency",
      "per-row", "transfer", "waiting (dep / sem / ring / engine)"], q.map(function (x) {
      var w = x.wait_ns || {};
      var waits = ["dependency", "semaphore", "dma_ring",
          "dma_engine"].map(function (r) { return fmtTime(w[r] || 0); });
      return [x.name, x.transfers, x.bytes, fmtTime(x.active_ns), fmtTime(x.idle_ns),
        x.achieved_gbps.toFixed(2) + " GB/s", x.allowed_gbps.toFixed(1) + " GB/s",
            fmtTime(x.fixed_latency_ns),
        fmtTime(x.per_row_ns), fmtTime(x.transfer_ns), waits.join(" / ")];
    }), [true]));
    app.appendChild(el("p", { "class": "note" },
        ["achieved: bytes over the time from the queue's first transfer " +
      "entering its ring to its last one's end; allowed: the rate the arch gives its transfers' engines " +
      "(within " +
      "the HBM share). Fixed latency, per-row cost and transfer are summed over the queue's transfers."]));
  }

  // The critical path.
  app.appendChild(el("h2", {}, ["Critical path"]));
  var shares = d.critical_path_ns || {};
  var cp = el("table", { id: "critical" });
  Object.keys(shares).sort(function (x, y) { return shares[y] - shares[x]; }).forEach(function (name) {
    var b = el("div", { "class": "bar" }), s = el("span");
    s.style.width = (100 * shares[name] / (d.total_ns || 1)) + "%";
    s.style.background = ENGINE_COLORS[name] || "#999";
    b.appendChild(s);
    cp.appendChild(el("tr", {}, [el("td", { "class": "l" }, [name]), el("td", { "class": "l" }, [b]),
      el("td", {}, [fmtTime(shares[name]) + " (" + pct(shares[name] / (d.total_ns || 1)) + ")"])]));
  });
  app.appendChild(cp);
  if ((d.top || []).length) {
    app.appendChild(el("h2", {}, ["Instructions holding the critical path longest"]));
    app.appendChild(table(["path", "path %", "execs", "busy", "wait", "engine", "instruction", "source"],
      d.top.map(function (r) {
        return [fmtTime(r.critical_path_ns), pct(r.critical_path_ns / (d.total_ns || 1)), r.executions,
          fmtTime(r.busy_ns), fmtTime(r.wait_ns), r.engine,
          r.name + " (" + r.opcode + (r.trigger ? ", trigger" : "") + ")",
          r.line >= 0 ? (r.file ? r.file + ":" : "line ") + r.line : r.file];
      }), [false, false, false, false, false, true, true, true]));
  }
  if (fit) fit();
}

function timeline(d, app) {
  var t = d.timeline, tracks = t.tracks, H = 18, LEFT = 150;
  var W = 1100;  // set to the frame's width once it is on the page
  var end = d.total_ns;
  t.slices.forEach(function (s) { end = Math.max(end, s[1] + s[2]); });
  var view = { from: 0, to: end > 0 ? end : 1 };
  var bar = el("div");
  var info = el("span", { "class": "note" });
  [["zoom in", 0.5], ["zoom out", 2], ["reset", 0]].forEach(function (b) {
    var btn = el("button", { type: "button" }, [b[0]]);
    btn.addEventListener("click", function () {
      if (b[1] === 0) { view.from = 0; view.to = end; } else zoom(b[1], (view.from + view.to) / 2);
      draw();
    });
    bar.appendChild(btn);
  });
  bar.appendChild(info);
  app.appendChild(bar);
  var wrap = el("div", { id: "timeline-wrap" });
  var canvas = el("canvas", { id: "timeline", width: String(W), height: String(tracks.length * H + 24) });
  var tip = el("div", { id: "tip" });
  wrap.appendChild(canvas); wrap.appendChild(tip);
  app.appendChild(wrap);

  // The track names as text too, so that they can be read (and found) without the canvas.
  var names = el("div", { id: "tracks", "class": "note" }, ["tracks: " + tracks.join(", ")]);
  app.appendChild(names);
  if (t.total_slices > t.slices.length)
    app.appendChild(el("p", { "class": "note" }, ["the first " + t.slices.length + " of " + t.total_slices +
      " slices are drawn"]));
  var ctx = canvas.getContext("2d");
  function x(ns) { return LEFT + (ns - view.from) / (view.to - view.from) * (W - LEFT - 8); }
  function zoom(f, at) {
    var span = Math.max(1e-3, (view.to - view.from) * f);
    var frac = (at - view.from) / (view.to - view.from);
    view.from = Math.max(0, at - frac * span); view.to = view.from + span;
  }
  function colorOf(track) {
    var n = tracks[track];
    for (var k in ENGINE_COLORS) if (n.indexOf(k) === 0) return ENGINE_COLORS[k];
    return ENGINE_COLORS.DMA;
  }
  function draw() {
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.font = "12px sans-serif";
    tracks.forEach(function (n, i) {
      ctx.fillStyle = i % 2 ? "#f7f7f7" : "#fff"; ctx.fillRect(0, i * H, W, H);
      ctx.fillStyle = "#222"; ctx.fillText(n.length > 22 ? n.slice(0, 21) + "~" : n, 4, i * H + 13);
    });
    t.slices.forEach(function (s) {
      if (s[1] + s[2] < view.from || s[1] > view.to) return;
      var x0 = Math.max(LEFT, x(s[1])), x1 = Math.min(W - 8, x(s[1] + s[2]));
      ctx.fillStyle = colorOf(s[0]);
      ctx.fillRect(x0, s[0] * H + 3, Math.max(1, x1 - x0), H - 6);
    });
    var y = tracks.length * H + 16;
    ctx.fillStyle = "#444";
    for (var k = 0; k <= 4; ++k) {
      var ns = view.from + k * (view.to - view.from) / 4;
      ctx.fillText(fmtTime(ns), Math.min(W - 70, x(ns)), y);
    }
    info.textContent = " showing " + fmtTime(view.from) + " to " + fmtTime(view.to) +
      " (wheel: zoom at the pointer; drag: pan)";
  }
  function nsAt(evt) {
    var r = canvas.getBoundingClientRect();
    return view.from + (evt.clientX - r.left - LEFT) / (W - LEFT - 8) * (view.to - view.from);
  }
  canvas.addEventListener("wheel", function (evt) {
    evt.preventDefault(); zoom(evt.deltaY < 0 ? 0.8 : 1.25, nsAt(evt)); draw();
  });
  var drag = null;
  canvas.addEventListener("mousedown", function (evt) { drag = { x: evt.clientX, from: view.from,
      to: view.to }; });
  window.addEventListener("mouseup", function () { drag = null; });
  canvas.addEventListener("mousemove", function (evt) {
    if (drag) {
      var dns = (evt.clientX - drag.x) / (W - LEFT - 8) * (drag.to - drag.from);
      view.from = Math.max(0, drag.from - dns); view.to = view.from + (drag.to - drag.from); draw();
      return;
    }
    var r = canvas.getBoundingClientRect(), track = Math.floor((evt.clientY - r.top) / H),
        at = nsAt(evt), hit = null;
    t.slices.forEach(function (s) { if (s[0] === track && s[1] <= at && at <= s[1] + s[2]) hit = s; });
    if (!hit) { tip.style.display = "none"; return; }
    tip.textContent = t.labels[hit[3]] + ": " + fmtTime(hit[1]) + " + " + fmtTime(hit[2]);
    tip.style.left = (evt.clientX - r.left + 12) + "px"; tip.style.top = (evt.clientY - r.top + 12) + "px";
    tip.style.display = "block";
  });
  // The canvas is as wide as its frame: measured once the whole page is laid out (a scroll bar may have
  // come), and again when the window is resized.
  function fit() {
    W = Math.max(600, Math.min(1600, wrap.clientWidth || W));
    canvas.setAttribute("width", String(W));
    draw();
  }
  window.addEventListener("resize", fit);
  return fit;
}

function sweepPage(d, app) {
  app.appendChild(el("h1", {}, ["neuronsim sweep report"]));
  app.appendChild(el("div", { "class": "sub" }, [d.file + " - " + d.runs.length + " runs - " + d.tool]));
  var kernels = [], times = {};
  d.runs.forEach(function (r) {
    if (kernels.indexOf(r.kernel) < 0) kernels.push(r.kernel);
    times[r.kernel + "\u0000" + r.arch] = r.status === "error" ? null : r.total_ns;
  });
  var pick = el("select", { id: "baseline" }, d.archs.map(function (a) { return el("option",
      { value: a }, [a]); }));
  pick.value = d.baseline;
  app.appendChild(el("p", {}, ["speed-ups against ", pick]));
  var holder = el("div"), chart = el("div", { id: "chart" });
  app.appendChild(holder); app.appendChild(el("h2", {},
      ["Speed-up against the baseline"])); app.appendChild(chart);
  function render() {
    var base = pick.value;
    holder.innerHTML = ""; chart.innerHTML = "";
    var rows = kernels.map(function (k) {
      return [k].concat(d.archs.map(function (a) {
        var t = times[k + "\u0000" + a], b = times[k + "\u0000" + base];
        if (t === null || t === undefined) return "error";
        return fmtTime(t) + (b ? " (" + (b / t).toFixed(2) + "x)" : "");
      }));
    });
    var tab = table(["kernel"].concat(d.archs), rows, [true]);
    tab.id = "sweep-table";
    holder.appendChild(tab);
    var NS = "http://www.w3.org/2000/svg", BH = 14, gap = 8, LEFT = 220, W = 900;
    var height = kernels.length * (d.archs.length * BH + gap) + 30, max = 1;
    kernels.forEach(function (k) { d.archs.forEach(function (a) {
      var t = times[k + "\u0000" + a], b = times[k + "\u0000" + base];
      if (t && b) max = Math.max(max, b / t);
    }); });
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", height);
    function text(xp, yp, s, anchor) {
      var e = document.createElementNS(NS, "text");
      e.setAttribute("x", xp); e.setAttribute("y", yp); e.setAttribute("font-size", "12");
      if (anchor) e.setAttribute("text-anchor", anchor);
      e.textContent = s; svg.appendChild(e);
    }
    var palette = ["#3a7bd5", "#2e9e5b", "#c0392b", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d"];
    var y = 10;
    kernels.forEach(function (k) {
      text(4, y + BH, k.length > 30 ? "~" + k.slice(-29) : k);
      d.archs.forEach(function (a, i) {
        var t = times[k + "\u0000" + a], b = times[k + "\u0000" + base], s = t && b ? b / t : 0;
        var r = document.createElementNS(NS, "rect");
        r.setAttribute("x", LEFT); r.setAttribute("y", y); r.setAttribute("height", BH - 2);
        r.setAttribute("width", Math.max(1, s / max * (W - LEFT - 260)));
        r.setAttribute("fill", palette[i % palette.length]);
        svg.appendChild(r);
        text(LEFT + s / max * (W - LEFT - 260) + 4, y + BH - 3, (s ? s.toFixed(2) + "x " : "error ") + a);
        y += BH;
      });
      y += gap;
    });
    chart.appendChild(svg);
  }
  pick.addEventListener("change", render);
  render();
}

try {
  var data = JSON.parse(document.getElementById("data").textContent);
  document.title = data.title;
  var app = document.getElementById("app");
  if (data.kind === "sweep") sweepPage(data, app); else runPage(data, app);
  document.body.setAttribute("data-ready", "1");
} catch (e) {
  fail(e && e.message ? e.message : String(e));
}
</script>
</body>
</html>
)PAGE";

} // namespace neuronsim::sim
