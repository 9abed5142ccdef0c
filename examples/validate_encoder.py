#!/usr/bin/python3
"""Validate an encoder: encode a kernel to 64-byte bundle streams, check that the streams compute what the BIR
computes, then plant an encoder bug (a wrong ALU byte) and see the first divergence named.

    PYTHONPATH=build/python python3 examples/validate_encoder.py

Another encoder's output is checked the same way: neuronsim.validate(kernel, "its/bundle/folder").
"""
import json
import pathlib

import neuronsim

ROOT = pathlib.Path(__file__).resolve().parents[1]
kernel = ROOT / "workloads/softmax"  # neg_max = -max(x), exp(x + neg_max), / sum, row by row

for gen in ("v2", "v3", "v4"):
    streams = neuronsim.encode(kernel, gen)  # {"manifest.json": ..., "<engine>.bin": ...}
    report = neuronsim.validate(kernel, streams)
    print(f"{gen}: {report.summary}")

# The first TensorReduce (the row max) carries its ALU op in byte +0x24 (isa/tables/bundle_fields.def, form TR).
# An encoder that wrote `min` there computes another softmax.
streams = neuronsim.encode(kernel, "v3")
manifest = json.loads(streams["manifest.json"])
reduce = next(i for i in manifest["instructions"] if i["type"] == "TensorReduce")
alu = {op["name"]: op["wire"]["v3"] for op in neuronsim.isa()["alu_ops"]}
data = bytearray(streams[reduce["file"]])
assert data[reduce["offset"] + 0x24] == alu["max"]
data[reduce["offset"] + 0x24] = alu["min"]
report = neuronsim.validate(kernel, {**streams, reduce["file"]: bytes(data)})
print(f"{reduce['name']} encoded with min instead of max:")
print(report, end="")
raise SystemExit(0 if not report.ok and report.divergence else 1)
