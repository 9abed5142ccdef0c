"""Nesting depth: deep documents made by the test from templates, and call chains."""
import copy
import json
import os

from .common import BASE, HERE, bir_case, cases, dump, fn, insts


# ---------------------------------------------------------------------------------------- nesting depth
# Deep documents are made by the test from a template (kernel1 with "@NEST@" in one place), so that thousands of
# levels need not be committed: nest_template (I-4 replaced), nest_expr_template (I-4's immediate selector
# expression replaced), nest_key_template (an extra key "x" on I-4).
I4 = json.dumps(insts(BASE)[1], separators=(",", ":"))


def write_template(name, mutate):
    m = copy.deepcopy(BASE)
    mutate(m)
    with open(os.path.join(HERE, name), "w") as f:
        f.write(dump(m).replace('"@NEST@"', "@NEST@"))


write_template("nest_template.bir.json", lambda m: insts(m).__setitem__(1, "@NEST@"))
write_template("nest_expr_template.bir.json", lambda m: insts(m)[1]["ins"][1].update(expr="@NEST@"))
write_template("nest_key_template.bir.json", lambda m: insts(m)[1].update(x="@NEST@"))


def nest_case(name, why, template, open_, core, close, n, stderr):
    cases.append({"name": name, "why": why,
                  "setup": [{"nest": ["{dir}/" + template, "{scratch}/deep.bir.json", open_, core, close, n]}],
                  "args": ["run", "{scratch}/deep.bir.json", "--outdir", "{out}"], "exit": 3,
                  "stderr": ["deep.bir.json"] + stderr})


LOOP_OPEN = '{"opcode":"Loop","name":"L","LoopAxis":{"name":"i","lb":0,"ub":1,"stride":1},"blocks":[{"name":"B","instructions":['
EXPR_OPEN = '{"kind":"MultKind","scale":1,"var":'
ZERO = '{"c":0,"kind":"AffExprKind","terms":[]}'
nest_case("depth_loops_10000", "10^4 nested loops (overflowed the native stack)", "nest_template.bir.json",
          LOOP_OPEN, I4, "]}]}", 10000, ["JSON nested deeper than 512 levels"])
nest_case("depth_loops_100", "100 nested loops: within the JSON limit, past the reader's", "nest_template.bir.json",
          LOOP_OPEN, I4, "]}]}", 100, ["nested deeper than 64 levels"])
nest_case("depth_blocks_10000", "10^4 nested blocks", "nest_template.bir.json", '{"instructions":[', I4, "]}", 10000,
          ["JSON nested deeper than 512 levels"])
nest_case("depth_expression_10000", "an address expression nested 10^4 levels", "nest_expr_template.bir.json",
          EXPR_OPEN, ZERO, "}", 10000, ["JSON nested deeper than 512 levels"])
nest_case("depth_expression_100", "an expression nested 100 levels: within the JSON limit, past the reader's",
          "nest_expr_template.bir.json", EXPR_OPEN, ZERO, "}", 100,
          ["instruction 1 'I-4'", "expression nested deeper than 64 levels"])
nest_case("depth_arrays_100000", "10^5 nested arrays under a key nobody reads", "nest_key_template.bir.json",
          "[", "0", "]", 100000, ["JSON nested deeper than 512 levels"])


def call_chain(n, fanout=1):
    """main calls f0; f_k calls f_{k+1} `fanout` times; the last function holds one NoOp."""
    m = copy.deepcopy(BASE)
    funcs = []
    for k in range(n):
        body = [{"opcode": "Call", "name": "c%d_%d" % (k, j), "target": "f%d" % (k + 1)} for j in range(fanout)]
        funcs.append({"name": "f%d" % k, "blocks": [{"name": "b", "instructions": body}]})
    funcs.append({"name": "f%d" % n, "blocks": [{"name": "b", "instructions": [{"opcode": "NoOp", "name": "n"}]}]})
    fn(m)["name"] = "main"
    insts(m).insert(1, {"opcode": "Call", "name": "I-3", "target": "f0"})
    m["functions"] += funcs
    return m


bir_case("depth_call_chain_2000", "a chain of 2000 calls (overflowed the native stack)", None,
         ["function 'f63'", "calls nested deeper than 64 levels"],
         text=json.dumps(call_chain(2000), separators=(",", ":")))
bir_case("calls_expand_exponentially", "each of 24 functions calls the next twice: 2^24 instructions", None,
         ["instruction 1 'I-3'", "field 'target'", "expands to more than 250000 instructions"],
         text=json.dumps(call_chain(24, 2), separators=(",", ":")))
