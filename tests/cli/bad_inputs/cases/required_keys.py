"""Issue 14 (no silent wrong answers): required instruction keys and engine legality."""
import copy

from .common import bir_case, insts, strip_tensor_scalar_ptr
from .bir_json import set_field


# ======================================================================================== issue 14: no silent
# wrong answers. Every case below ran to exit 0 with a wrong result, crashed, hung or touched a file it must not
# before; each now gets its one-line error.

def mutate_i4(opcode, keys, engine=None, ins=None):
    """I-4 (TensorScalarPtr) turned into `opcode` with exactly the op-specific `keys` (None = leave out)."""
    def f(m):
        i = insts(m)[1]
        strip_tensor_scalar_ptr(i)
        i["opcode"] = opcode
        for k, v in keys.items():
            i[k] = v
        if engine:
            i["engine"] = engine
        if ins is not None:
            i["ins"] = ins(i)
    return f


ACT_KEYS = {"scale": 1.0, "alpha": 0.0, "func": "Identity", "acc": "Idle", "op0": "bypass", "op1": "bypass",
            "reduce_op": "bypass"}


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def first_in(i):
    return [copy.deepcopy(i["ins"][0])]


def two_ins(i):
    return [copy.deepcopy(i["ins"][0]), copy.deepcopy(i["ins"][0])]


# ---------------------------------------------------------------------------------------- required keys
# reference neuronx-cc/bir/json-schema-catalog.md "Required vs optional": the compiler's loader reads these with
# json.at() and throws; the simulator used to run the instruction with the key's default.
REQUIRED = [
    ("req_tensor_tensor_missing_op", "TensorTensor without op (ran as bypass, returning ins[0])",
     mutate_i4("TensorTensor", {}, ins=two_ins), "op", []),
    ("req_tensor_tensor_misspelt_op", "TensorTensor with 'opp' for 'op'",
     mutate_i4("TensorTensor", {"opp": "add"}, ins=two_ins), "op", ["'opp'", "misspelt"]),
    ("req_tensor_tensor_null_op", "TensorTensor with op null", mutate_i4("TensorTensor", {"op": None}, ins=two_ins),
     "op", ["is null"]),
    ("req_tsp_missing_op1", "TensorScalarPtr without op1", lambda m: insts(m)[1].pop("op1"), "op1", []),
    ("req_tsp_missing_reverse0", "TensorScalarPtr without reverse0", lambda m: insts(m)[1].pop("reverse0"),
     "reverse0", []),
    ("req_activation_missing_scale", "Activation without scale",
     mutate_i4("Activation", without(ACT_KEYS, "scale"), ins=first_in), "scale", []),
    ("req_activation_missing_acc", "Activation without acc",
     mutate_i4("Activation", without(ACT_KEYS, "acc"), ins=first_in), "acc", []),
    ("req_activation_missing_func", "Activation without func (ran as Identity)",
     mutate_i4("Activation", without(ACT_KEYS, "func"), ins=first_in), "func", []),
    ("req_tensor_reduce_missing_axis", "TensorReduce without axis",
     mutate_i4("TensorReduce", {"op": "add"}, ins=first_in), "axis", []),
    ("req_memset_missing_constant", "Memset without constant", mutate_i4("Memset", {"mode": "Const"}, ins=lambda i: []),
     "constant", []),
    ("req_memset_missing_mode", "Memset without mode", mutate_i4("Memset", {"constant": 0}, ins=lambda i: []),
     "mode", []),
    ("req_tensor_scalar_missing_const1", "TensorScalar without const1",
     mutate_i4("TensorScalar", {"op0": "add", "const0": 1.0, "reverse0": False, "op1": "bypass", "reverse1": False},
               ins=first_in), "const1", []),
    ("req_iota_missing_pattern", "Iota without pattern", mutate_i4("Iota", {"base": 0}, ins=lambda i: []), "pattern", []),
    ("req_affine_select_missing_compare_op", "TensorScalarAffineSelect without compare_op",
     mutate_i4("TensorScalarAffineSelect", {"base": 0, "pattern": [[1, 10]]}, ins=first_in), "compare_op", []),
    ("req_pool_missing_func", "Pool without func (ran as Max)", mutate_i4("Pool", {}, ins=first_in), "func", []),
    ("req_bnstats_missing_apply_transpose", "BNStats without apply_transpose", mutate_i4("BNStats", {}, ins=first_in),
     "apply_transpose", []),
    ("req_match_replace_missing_imm_value", "MatchReplace without imm_value",
     mutate_i4("MatchReplace", {}, ins=two_ins), "imm_value", []),
    ("req_exponential_missing_reduce_cmd", "Exponential without reduce_cmd",
     mutate_i4("Exponential", {}, ins=first_in), "reduce_cmd", []),
    ("req_set_rand_state_missing_rng_engine", "SetRandState without rng_engine",
     mutate_i4("SetRandState", {}, ins=first_in), "rng_engine", []),
    ("req_rand_missing_params", "Rand without params",
     mutate_i4("Rand", {"random_algorithm": "LFSR", "rand_num_steps": 1, "distribution": "Uniform"}, ins=lambda i: []),
     "params", []),
    ("req_indirect_copy_missing_num_valid_indices", "IndirectCopy without num_valid_indices",
     mutate_i4("IndirectCopy", {}, ins=two_ins), "num_valid_indices", []),
    ("req_collective_send_missing_peer_id", "CollectiveSend without peer_id",
     mutate_i4("CollectiveSend", {}, ins=first_in), "peer_id", []),
    ("req_get_global_rank_id_missing_world_size", "GetGlobalRankId without world_size",
     mutate_i4("GetGlobalRankId", {}, ins=lambda i: []), "world_size", []),
    ("req_stream_shuffle_missing_mask", "StreamShuffle without mask", mutate_i4("StreamShuffle", {}, ins=first_in),
     "mask", []),
    ("req_bnbackprop_missing_total_elements", "BNBackprop without total_elements",
     mutate_i4("BNBackprop", {}, ins=first_in), "total_elements", []),
]
for name, why, mutate, key, extra in REQUIRED:
    what = ["is null"] if "is null" in extra else ["missing required key '" + key + "'"]
    bir_case(name, why, mutate, ["instruction 1 'I-4'", "field '" + key + "'"] + what + [e for e in extra if e != "is null"])

# ---------------------------------------------------------------------------------------- engine legality
# isa/tables/instruction_wire.def + engines_allowed.def: an engine the type's row does not list.
bir_case("engine_tensor_tensor_on_pe", "TensorTensor assigned to the PE array",
         mutate_i4("TensorTensor", {"op": "add"}, engine="PE", ins=two_ins),
         ["instruction 1 'I-4'", "field 'engine'", "TensorTensor cannot run on PE", "DVE"])
bir_case("engine_matmult_on_dve", "Matmult assigned to the vector engine",
         mutate_i4("Matmult", {}, engine="DVE", ins=two_ins),
         ["instruction 1 'I-4'", "field 'engine'", "Matmult cannot run on DVE", "(it runs on PE)"])
bir_case("engine_activation_on_pool", "Activation assigned to GpSimd",
         mutate_i4("Activation", ACT_KEYS, engine="Pool", ins=first_in),
         ["instruction 1 'I-4'", "field 'engine'", "Activation cannot run on Pool"])
bir_case("engine_tensor_scalar_ptr_on_pe", "TensorScalarPtr (real compiler output) assigned to PE",
         set_field(1, "engine", "PE"), ["instruction 1 'I-4'", "field 'engine'", "TensorScalarPtr cannot run on PE"])
