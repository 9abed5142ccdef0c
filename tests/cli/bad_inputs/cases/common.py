"""What every case module uses: workloads/kernel1's BIR (BASE), the catalogue's list of cases, and the helpers that
write a BIR case file and its catalogue entry."""
import copy
import json
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/cli/bad_inputs
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
with open(os.path.join(ROOT, "workloads", "kernel1", "kernel1.bir.json")) as f:
    BASE = json.load(f)

cases = []


def fn(m):
    return m["functions"][0]


def insts(m):
    return fn(m)["blocks"][0]["instructions"]


def alloc(m, name):
    return next(a for a in fn(m)["allocations"] if a["name"] == name)


def strip_tensor_scalar_ptr(i):
    """Drops I-4's TensorScalarPtr keys, so the instruction can become another opcode (without keys that type
    does not have: they would be warned about, isa/tables/inst_keys.def)."""
    for k in ["op0", "op1", "reverse0", "reverse1", "is_scalar_tensor_tensor", "is_tensor_scalar_addr",
              "is_tensor_tensor_scan", "duplicate", "can_read_uninit"]:
        i.pop(k)


def dump(m):
    return json.dumps(m, separators=(",", ":")) + "\n"


def bir_case(name, why, mutate, stderr, exit_code=3, text=None, extra_args=()):
    path = name + ".bir.json"
    if text is None:
        m = copy.deepcopy(BASE)
        mutate(m)
        text = dump(m)
    with open(os.path.join(HERE, path), "w") as f:
        f.write(text)
    cases.append({"name": name, "why": why,
                  "args": ["run", "{dir}/" + path, "--outdir", "{out}"] + list(extra_args),
                  "exit": exit_code, "stderr": [path] + stderr})


VALID = dump(BASE)
