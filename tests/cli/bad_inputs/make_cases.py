#!/usr/bin/env python3
"""Writes the malformed BIR JSON / .npy inputs of tests/cli/bad_inputs and catalogue.json.

Every BIR case is workloads/kernel1/kernel1.bir.json (real compiler output: Load I-2, TensorScalarPtr I-4,
Save I-6 = instructions 0, 1, 2) with one hand-picked mutation, so each file isolates one mistake. The files
are committed; rerun this script (python3 tests/cli/bad_inputs/make_cases.py) only to change the set; the cases
are written by topic in cases/ (a new case goes in its topic's module, a new topic in TOPICS below). The
bundle cases (bundle_*/) are written by make_bundles.cpp (how to build it: its header comment).

Catalogue placeholders, substituted by tests/cli/test_bad_inputs.cpp: {dir} = this folder, {out} = a fresh
empty --outdir per case, {kernel1} = workloads/kernel1, {workloads} = workloads/, {scratch} = the case's scratch
folder.
"""
import importlib
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed cases

# The case modules, run in this order: the catalogue lists their cases in it.
TOPICS = ["bir_json", "bir_semantics", "npy_and_cli", "bundles", "required_keys", "pe_and_shapes", "cli_outputs",
          "arithmetic", "nesting", "files_and_archs", "outputs_multicore", "declarations_names", "compare_sweep",
          "report_inputs", "nki_front_end"]
for topic in TOPICS:
    importlib.import_module("cases." + topic)
from cases.common import HERE, cases  # noqa: E402 - the list the modules above filled

with open(os.path.join(HERE, "catalogue.json"), "w") as f:
    json.dump({"about": "Malformed inputs and the one-line error neuronsim must give for each; written by "
                        "make_cases.py, run by tests/cli/test_bad_inputs.cpp. Placeholders: {dir} this folder, "
                        "{out} a fresh --outdir, {kernel1} workloads/kernel1, {workloads} workloads/, {scratch} the "
                        "case's scratch folder; \"stdout\": where stdout goes; \"python\": a sweep (the Python "
                        "package).",
               "cases": cases}, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
