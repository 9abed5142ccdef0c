"""BIR JSON that does not read: syntax, unknown names, missing fields, wrong JSON types."""
from .common import VALID, alloc, bir_case, insts, strip_tensor_scalar_ptr


# ---------------------------------------------------------------------------------------- JSON syntax
bir_case("syntax_truncated", "file cut off in the middle (an interrupted copy)", None,
         ["malformed JSON"], text=VALID[: len(VALID) // 2])
bir_case("syntax_trailing_comma", "a trailing comma after the last instruction", None,
         ["malformed JSON"], text=VALID.rstrip().rstrip("}") + ",}\n")
bir_case("syntax_empty", "an empty file", None, ["malformed JSON"], text="")
bir_case("syntax_binary", "not text at all (a .npy given as the kernel)", None, ["malformed JSON"],
         text="\x93NUMPY\x01\x00v\x00{'descr': '<f4'}")
bir_case("top_level_array", "a JSON array instead of the module object", None, ["expected an object"], text="[]\n")

# ---------------------------------------------------------------------------------------- unknown names
def set_field(i, key, value):
    def f(m):
        insts(m)[i][key] = value
    return f


bir_case("unknown_opcode", "opcode misspelt", set_field(1, "opcode", "TensorScalarPointer"),
         ["instruction 1 'I-4'", "field 'opcode'", "TensorScalarPointer"])
bir_case("unknown_alu_op", "AluOpType misspelt (substract)", set_field(1, "op0", "substract"),
         ["instruction 1 'I-4'", "field 'op0'", "substract"])
bir_case("unknown_engine", "engine that does not exist", set_field(1, "engine", "GPU"),
         ["instruction 1 'I-4'", "field 'engine'", "GPU"])


def arg_dtype(i, side, k, dt):
    def f(m):
        insts(m)[i][side][k]["dtype"] = dt
    return f


bir_case("unknown_dtype_operand", "operand dtype misspelt", arg_dtype(1, "ins", 0, "float33"),
         ["instruction 1 'I-4'", "field 'ins[0].dtype'", "float33"])
bir_case("unknown_dtype_allocation", "allocation dtype in numpy spelling", lambda m: alloc(m, "a_set").update(dtype="fp32"),
         ["field 'allocations[0].dtype'", "fp32"])


def to_activation(func):
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = "Activation"
        i["func"] = func
        i["ins"] = i["ins"][:1]
    return f


bir_case("unknown_activation_func", "ActivationFunctionType in NKI spelling (relu for Relu)", to_activation("relu"),
         ["instruction 1 'I-4'", "field 'func'", "relu"])
bir_case("unknown_memory_type", "memory location type HBM (no such MemoryType)",
         lambda m: alloc(m, "tile.9_set")["memorylocations"][0].update(type="HBM"),
         ["field 'allocations[3].memorylocations[0].type'", "HBM"])
bir_case("unknown_arg_kind", "argument kind misspelt", lambda m: insts(m)[0]["ins"][0].update(kind="symbolic"),
         ["instruction 0 'I-2'", "field 'ins[0].kind'", "symbolic"])

# ---------------------------------------------------------------------------------------- missing fields
def drop(i, key):
    def f(m):
        del insts(m)[i][key]
    return f


bir_case("missing_opcode", "instruction without opcode", drop(1, "opcode"),
         ["instruction 1 'I-4'", "field 'opcode'", "missing"])
bir_case("missing_ins", "Load without ins", drop(0, "ins"), ["instruction 0 'I-2'", "field 'ins'", "missing"])
bir_case("missing_memsetref", "operand naming no tensor", lambda m: insts(m)[2]["outs"][0].pop("memsetref"),
         ["instruction 2 'I-6'", "field 'outs[0]'", "memsetref"])
bir_case("missing_ap", "access pattern without ap", lambda m: insts(m)[1]["ins"][0].pop("ap"),
         ["instruction 1 'I-4'", "field 'ins[0]'", "'ap'"])
bir_case("missing_functions", "module without functions", lambda m: m.pop("functions"),
         ["field 'functions'", "missing"])
bir_case("missing_imm_value", "symbolic_imm_value with an empty value_list",
         lambda m: insts(m)[1]["ins"][1].update(value_list=[]),
         ["instruction 1 'I-4'", "field 'ins[1].value_list'", "empty"])

# ---------------------------------------------------------------------------------------- wrong JSON types
bir_case("type_opcode_number", "opcode given as its ordinal", set_field(1, "opcode", 41),
         ["instruction 1 'I-4'", "field 'opcode'", "expected a string"])
bir_case("type_ap_string", "ap written as a string", lambda m: insts(m)[0]["outs"][0].update(ap="[[10,10],[1,10]]"),
         ["instruction 0 'I-2'", "field 'outs[0].ap'", "expected an array"])
bir_case("type_ins_object", "ins as an object instead of an array", lambda m: insts(m)[0].update(ins=insts(m)[0]["ins"][0]),
         ["instruction 0 'I-2'", "field 'ins'", "expected an array"])
bir_case("type_imm_string", "immediate given as a string", lambda m: insts(m)[1]["ins"][1]["value_list"][0].update(value="one"),
         ["instruction 1 'I-4'", "field 'ins[1].value_list[0].value'", "one"])
bir_case("type_bool_string", "boolean flag given as a string", set_field(1, "reverse0", "false"),
         ["instruction 1 'I-4'", "field 'reverse0'", "expected true/false"])
bir_case("type_ap_pair_triple", "access-pattern pair with three numbers",
         lambda m: insts(m)[1]["outs"][0].update(ap=[[10, 10, 1], [1, 10]]),
         ["instruction 1 'I-4'", "field 'outs[0].ap[0]'", "[step, num]"])
bir_case("type_fraction", "tensor_shape with a fraction", lambda m: alloc(m, "b_set").update(tensor_shape=[10, 2.5]),
         ["field 'allocations[1].tensor_shape[1]'", "expected an integer"])
bir_case("version_3", "a BIR JSON version this reader does not know", lambda m: m.update(version=3),
         ["field 'version'", "version must be 1 or 2"])
