"""`neuronsim report` inputs (issue 39 item 5): a stats or trace document the page cannot be drawn from is refused
naming the file and the key (each read past the document before: valgrind "invalid read" in run_report_html /
timeline_of), and a results.csv time that is not wholly a number is refused, not read as its leading digits."""
import json

from .common import cases


def stats(**extra):
    d = {"kernel": "k.bir.json", "arch": "trn1", "total_ns": 100.0, "bottleneck": "DVE",
         "analysis": {"verdict": {"text": "compute-bound"}},
         "profile": {"critical_path": {"instructions": [{"name": "I-4", "critical_path_ns": 60.0}]}}}
    d.update(extra)
    return json.dumps(d) + "\n"


def trace(thread_event):
    return json.dumps({"traceEvents": [thread_event, {"ph": "X", "name": "I-4", "pid": 1, "tid": 3, "ts": 0.0,
                                                      "dur": 0.06}]}) + "\n"


def report_case(name, why, files, stderr, args=None):
    cases.append({"name": name, "why": why,
                  "setup": [{"write": ["{scratch}/" + f, text]} for f, text in files],
                  "args": ["report"] + (args or ["{scratch}/" + f for f, _ in files]) + ["-o", "{scratch}/r.html"],
                  "exit": 3, "stderr": stderr})


report_case("report_stats_without_critical_path", "a --stats profile lacking critical_path (read past the document)",
            [("s.json", stats(profile={"instructions": []}))],
            ["s.json", "field 'profile.critical_path'", "missing"])
report_case("report_stats_row_wrong_type", "a critical-path row whose line is text",
            [("s.json", stats(profile={"critical_path": {"instructions": [{"name": "I-4", "line": "ten"}]}}))],
            ["s.json", "field 'profile.critical_path.instructions[0].line'", "needs a whole number", "\"ten\""])
report_case("report_trace_thread_name_without_args", "a thread_name event lacking args (read past the document)",
            [("s.json", stats()), ("t.json", trace({"ph": "M", "name": "thread_name", "pid": 1, "tid": 3}))],
            ["t.json", "field 'traceEvents[0].args'", "missing"])
report_case("report_trace_tid_text", "a trace event whose tid is text",
            [("s.json", stats()), ("t.json", trace({"ph": "M", "name": "thread_name", "pid": 1, "tid": "3",
                                                    "args": {"name": "DVE"}}))],
            ["t.json", "field 'traceEvents[0].tid'", "needs a whole number"])
report_case("report_sweep_total_12abc", "a results.csv total_ns of 12abc (drawn as 12 on the sweep page)",
            [("r.csv", "kernel,arch,status,total_ns\nk,trn1,ok,12abc\n")],
            ["r.csv", "field 'total_ns'", "row 2: '12abc' is not a time in ns"])
