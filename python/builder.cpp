// neuronsim._core.builder and neuronsim._core.lowering: the BIR builder (neuronsim/builder.hpp) and the
// lowering library (neuronsim/lowering.hpp) for Python, so that the NKI front end (python/neuronsim/nki/)
// emits its BIR through the same builder and the same compiler-like rules as the workload generator
// (workloads/gen/).
#include <tuple>
#include <type_traits>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "api.hpp"
#include "convert.hpp"
#include "errors.hpp"

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/lowering.hpp"

namespace py = pybind11;

namespace neuronsim::python {

namespace {

using builder::Aff;
using builder::Ap;
using builder::Builder;
using builder::InstRef;
using builder::TensorHandle;

// The ONLY column of inst_fields.def: an InstructionType ordinal, or -1 for a key every type shares.
namespace only_sel {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_sel

std::vector<isa::ApDim> dims_arg(py::handle v) {
  std::vector<isa::ApDim> out;
  for (auto d : v) {
    auto pair = d.cast<std::pair<int64_t, int64_t>>();
    out.push_back(isa::ApDim{pair.first, pair.second});
  }
  return out;
}

py::list dims_list(const std::vector<isa::ApDim> &dims) {
  py::list l;
  for (const auto &d : dims)
    l.append(py::make_tuple(d.step, d.num));
  return l;
}

// One value of an inst_fields.def row from Python: enums and ALU ops by their BIR names, patterns as [(step,
// num)].
template <typename T> void field_from_python(py::handle v, T &out, const std::string &key) {
  const ErrorContext ctx{"builder", -1, "", key};
  if constexpr (std::is_same_v<T, isa::AluOp>)
    out = isa::parse_alu(v.cast<std::string>(), ctx);
  else if constexpr (std::is_enum_v<T>)
    out = isa::parse_enum<T>(v.cast<std::string>(), ctx);
  else if constexpr (std::is_same_v<T, std::vector<isa::ApDim>>)
    out = dims_arg(v);
  else
    out = v.cast<T>();
}

// InstRef.set("key", value): the field of the instruction's type under that BIR JSON key.
void set_field(InstRef &r, const std::string &key, py::handle v) {
  isa::Inst &inst = r.inst();
  const int type = static_cast<int>(inst.type);
  (void)type;
#define NS_FIELD(member, json_key, kind, ctype, def, only, ...)                                              \
  if ((only_sel::only < 0 || only_sel::only == type) && key == json_key) {                                   \
    field_from_python(v, inst.f.member, key);                                                                \
    inst.given.set(static_cast<int>(isa::Field::member));                                                    \
    return;                                                                                                  \
  }
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  throw py::key_error("instruction type " + std::string(isa::inst_type_name(inst.type)) + " has no field '" +
                      key + "' (isa/tables/inst_fields.def)");
}

isa::Dtype dtype_of(const std::string &name) {
  return guarded([&] { return isa::parse_dtype(name); });
}

std::string text(const Aff &a) {
  std::string s = std::to_string(a.c);
  for (const auto &[v, k] : a.terms)
    s +=
        " + " + std::to_string(k) + "*" + (v == Aff::kShard ? std::string("shard") : "v" + std::to_string(v));
  for (const auto &[r, k] : a.regs)
    s += " + " + std::to_string(k) + "*" + r;
  return s;
}

} // namespace

void bind_builder(py::module_ &m) {
  py::module_ b =
      m.def_submodule("builder", "The BIR builder (include/neuronsim/builder.hpp), for the NKI front end.");
  py::class_<Aff>(b, "Aff", "An affine expression of loop variables: c + sum coef * var.")
      .def(py::init<int64_t>(), py::arg("c") = 0)
      .def_static("shard", &Aff::shard, py::arg("shards"),
                  "The running core's shard id on a logical core of `shards` physical cores (ShardIDKind).")
      .def_static("reg", &Aff::reg, py::arg("name"),
                  "The value a register holds when the instruction runs (an IntRuntimeValueKind term).")
      .def_readonly("c", &Aff::c)
      .def_property_readonly("regs", [](const Aff &a) { return a.regs; })
      .def_property_readonly("terms", [](const Aff &a) { return a.terms; })
      .def("__add__", [](const Aff &a, const Aff &o) { return a + o; })
      .def("__radd__", [](const Aff &a, int64_t o) { return Aff(o) + a; })
      .def("__mul__", [](const Aff &a, int64_t k) { return a * k; })
      .def("__rmul__", [](const Aff &a, int64_t k) { return a * k; })
      .def("__repr__", [](const Aff &a) { return "Aff(" + text(a) + ")"; });
  py::implicitly_convertible<int64_t, Aff>();

  py::class_<Ap>(b, "Ap", "An access pattern: tensor, start element, [(step, num)] pairs (partition first).")
      .def_readonly("tensor", &Ap::tensor)
      .def_readonly("start", &Ap::start)
      .def_property_readonly("dims", [](const Ap &a) { return dims_list(a.dims); })
      .def_property_readonly("dtype", [](const Ap &a) { return std::string(isa::enum_name(a.dtype)); });

  py::class_<TensorHandle>(b, "TensorHandle")
      .def_readonly("id", &TensorHandle::id)
      .def_readonly("shape", &TensorHandle::shape)
      .def("row", &TensorHandle::row)
      .def("all", &TensorHandle::all)
      .def("tile", &TensorHandle::tile, py::arg("p0"), py::arg("np"), py::arg("f0"), py::arg("nf"))
      .def(
          "at",
          [](const TensorHandle &t, const Aff &start, py::handle dims) {
            return t.at(start, dims_arg(dims));
          },
          py::arg("start"), py::arg("dims"))
      .def("at_dtype", [](const TensorHandle &t, const Aff &start, py::handle dims, const std::string &dt) {
        Ap a = t.at(start, dims_arg(dims));
        a.dtype = dtype_of(dt); // a view of the tensor's bytes as another dtype (NKI bitcast / dtype=)
        return a;
      });

  py::class_<isa::Arg>(b, "Arg", "An instruction operand (Builder.ap / Builder.imm).");

  py::class_<InstRef>(b, "InstRef", "An emitted instruction; set(key, value) sets a BIR JSON field.")
      .def_property_readonly("index", &InstRef::index)
      .def(
          "set",
          [](InstRef &r, const std::string &key, py::handle v) -> InstRef & {
            guarded([&] { set_field(r, key, v); });
            return r;
          },
          py::return_value_policy::reference_internal)
      .def(
          "engine",
          [](InstRef &r, const std::string &e) -> InstRef & {
            return r.engine(guarded([&] { return isa::parse_enum<isa::Engine>(e); }));
          },
          py::return_value_policy::reference_internal)
      .def(
          "set_expr",
          [](InstRef &r, const std::string &key, const Aff &e) -> InstRef & {
            // The QuasiAffineExpr-valued keys (isa::Inst::recv_from_rank, send_to_rank, iter_id_expr): constants
            // and the shard id (the reader refuses loop variables in them).
            isa::Inst &inst = r.inst();
            if (key == "recv_from_rank") inst.recv_from_rank.push_back(e.to_expr());
            else if (key == "send_to_rank") inst.send_to_rank = {e.to_expr()};
            else if (key == "iter_id") inst.iter_id_expr = {e.to_expr()};
            else throw py::key_error("set_expr sets recv_from_rank (appends), send_to_rank or iter_id, got '" + key + "'");
            return r;
          },
          py::return_value_policy::reference_internal, py::arg("key"), py::arg("expr"),
          "A QuasiAffineExpr key of a collective: recv_from_rank (each call appends one), send_to_rank, iter_id.")
      .def("source", &InstRef::source, py::return_value_policy::reference_internal)
      .def(
          "nki",
          [](InstRef &r,
             const std::vector<std::tuple<int, std::string, int, std::string, int64_t, int64_t, Aff>> &loops,
             std::vector<int> local, const std::string &reduce, int reduce_in) -> InstRef & {
            isa::NkiInfo info;
            for (const auto &[id, kind, line, var, start, step, trip] : loops) {
              isa::NkiLoop l;
              l.id = id;
              l.kind = kind == "affine"       ? isa::NkiLoop::Kind::Affine
                       : kind == "sequential" ? isa::NkiLoop::Kind::Sequential
                                              : isa::NkiLoop::Kind::Static;
              l.line = line;
              l.var = var;
              l.start = start;
              l.step = step;
              l.trip = trip.to_expr();
              info.loops.push_back(std::move(l));
            }
            info.local = std::move(local);
            info.reduce = reduce;
            info.reduce_in = reduce_in;
            return r.nki(std::move(info));
          },
          py::arg("loops"), py::arg("local") = std::vector<int>{}, py::arg("reduce") = "", py::arg("reduce_in") = -1,
          py::return_value_policy::reference_internal,
          "debug.nki: [(id, kind, line, var, start, step, trip Aff)] outermost first, per-operand local depths, "
          "reduction op.")
      .def("name", &InstRef::name, py::return_value_policy::reference_internal);

  py::class_<Builder>(b, "Builder", "Writes a BIR module (include/neuronsim/builder.hpp).")
      .def(py::init<std::string>(), py::arg("file") = "builder")
      .def(
          "input",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.input(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "output",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.output(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "inout",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.inout(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "dram",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.dram(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "sbuf",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.sbuf(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "psum",
          [](Builder &bb, const std::string &n, std::vector<int64_t> s, const std::string &dt) {
            return bb.psum(n, std::move(s), dtype_of(dt));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def(
          "tensor_nki",
          [](Builder &bb, int id, std::vector<int64_t> shape, int pdim, int64_t buffers, int64_t cols, bool argument) {
            bb.tensor_nki(id, isa::NkiTile{std::move(shape), pdim, buffers, cols, argument});
          },
          py::arg("id"), py::arg("shape") = std::vector<int64_t>{}, py::arg("pdim") = 0, py::arg("buffers") = 1,
          py::arg("cols") = 0, py::arg("argument") = false,
          "The NKI tile tensor `id` holds (its allocation's debug.nki).")
      .def_static("ap", &Builder::ap)
      .def_static(
          "reg", [](const std::string &n, const std::string &dt) { return Builder::reg(n, dtype_of(dt)); },
          py::arg("name"), py::arg("dtype") = "int32", "A register operand (register_access).")
      .def_static(
          "imm", [](double v, const std::string &dt) { return Builder::imm(v, dtype_of(dt)); },
          py::arg("value"), py::arg("dtype") = "float32")
      .def(
          "add",
          [](Builder &bb, const std::string &type, std::vector<isa::Arg> ins, std::vector<isa::Arg> outs) {
            const isa::InstructionType t = guarded([&] { return isa::parse_inst_type(type); });
            return bb.add(t, std::move(ins), std::move(outs));
          },
          py::arg("type"), py::arg("ins"), py::arg("outs"))
      .def_static("shard_id", &Builder::shard_id, py::arg("shards"),
                  "The running core's shard id as an immediate (selected by ShardIDKind), for CompareAndBranch.")
      .def(
          "block", [](Builder &bb, const std::string &name) { guarded([&] { bb.block(name); }); }, py::arg("name"),
          "Starts a top-level basic block named `name` (a branch target).")
      .def("loop", &Builder::loop, py::arg("var"), py::arg("lb"), py::arg("ub"), py::arg("stride"),
           py::arg("body"))
      .def(
          "place",
          [](Builder &bb, int tensor, int64_t addr, int64_t base, int64_t bank) {
            auto &ts = bb.program().tensors;
            if (tensor < 0 || static_cast<size_t>(tensor) >= ts.size())
              throw py::index_error("no tensor " + std::to_string(tensor));
            // An allocated SBUF/PSUM tensor (reference bir-json.md 1.5: addr, base, bank, allocated): the simulator
            // places it there instead of choosing an address itself.
            isa::Tensor &t = ts[static_cast<size_t>(tensor)];
            t.addr = addr, t.base_partition = base, t.bank = bank, t.allocated = true;
          },
          py::arg("tensor"), py::arg("addr"), py::arg("base") = 0, py::arg("bank") = 0,
          "Places an SBUF/PSUM tensor at byte addr of partitions base.. (PSUM: addr within bank `bank`).")
      .def("dynamic_loop",
           py::overload_cast<const std::string &, const Aff &, const Aff &, int64_t,
                             const std::function<void(Aff)> &>(&Builder::dynamic_loop),
           py::arg("var"), py::arg("lb"), py::arg("ub"), py::arg("stride"), py::arg("body"),
           "DynamicForLoop: for var in range(lb, ub, stride), the bounds (registers too) read when it starts.")
      .def("do_while", &Builder::do_while, py::arg("cond_reg"), py::arg("body"),
           "DoWhile: do { body() } while (register cond_reg != 0).")
      .def_property_readonly("instruction_count",
                             [](Builder &bb) { return static_cast<int64_t>(bb.program().insts.size()); })
      .def(
          "to_bir", [](Builder &bb) { return to_python(isa::to_bir_json(bb.program())); },
          "The module as BIR JSON (a dict), as isa::to_bir_json writes it.")
      .def(
          "to_bir_text", [](Builder &bb) { return isa::to_bir_json(bb.program()).dump(1) + "\n"; },
          "The module as BIR JSON text, as the workload generator writes its files.")
      .def(
          "kernel",
          [](Builder &bb, const std::string &label, const std::vector<std::string> &sources) {
            // Through the BIR reader, as a file written by to_bir_text would be read: the same checks and the
            // same program `neuronsim run` gets from --emit-bir (isa::reread_program: one instruction's JSON at
            // a time).
            return guarded([&] {
              auto k = std::make_shared<sim::Kernel>();
              k->path = label;
              k->label = label;
              k->program = isa::reread_program(bb.program(), label);
              k->files = sources;  // no output of its runs may replace them
              return KernelInfo{std::move(k)};
            });
          },
          py::arg("label"), py::arg("sources") = std::vector<std::string>{},
          "A Kernel run() takes, read from the module's BIR; sources: the files it was made from (an NKI\n"
          "kernel's .py), which no output of its runs may replace.");

  b.def(
      "default_engine",
      [](const std::string &type) {
        return std::string(isa::enum_name(engines::default_engine(guarded([&] { return isa::parse_inst_type(type); }))));
      },
      py::arg("type"),
      "The engine an Unassigned instruction of this BIR type runs on (engines/ops/engine_policy.cpp).");

  py::module_ l = m.def_submodule("lowering", "The lowering library (include/neuronsim/lowering.hpp).");
  l.attr("USABLE_SBUF_BYTES") = lowering::kUsableSbufBytes;
  l.def("sbuf_buffers", &lowering::sbuf_buffers, py::arg("trips"), py::arg("slot_bytes_per_partition"),
        py::arg("fixed_bytes_per_partition"));
  l.def("psum_buffers", &lowering::psum_buffers, py::arg("trips"), py::arg("banks_per_tile"),
        py::arg("other_banks") = 0);
  py::class_<lowering::Rotating>(l, "Rotating", "A loop-local tile with B rotating buffers.")
      .def_readonly("t", &lowering::Rotating::t)
      .def_readonly("rows", &lowering::Rotating::rows)
      .def_readonly("cols", &lowering::Rotating::cols)
      .def_readonly("buffers", &lowering::Rotating::buffers)
      .def("slot", py::overload_cast<int64_t>(&lowering::Rotating::slot, py::const_))
      .def("slot", py::overload_cast<int64_t, Aff, int64_t>(&lowering::Rotating::slot, py::const_));
  l.def(
      "rotating_sbuf",
      [](Builder &bb, const std::string &n, int64_t rows, int64_t cols, const std::string &dt,
         int64_t buffers) { return lowering::rotating_sbuf(bb, n, rows, cols, dtype_of(dt), buffers); },
      py::arg("b"), py::arg("name"), py::arg("rows"), py::arg("cols"), py::arg("dtype"), py::arg("buffers"));
  l.def(
      "rotating_psum",
      [](Builder &bb, const std::string &n, int64_t rows, int64_t cols, const std::string &dt,
         int64_t buffers) { return lowering::rotating_psum(bb, n, rows, cols, dtype_of(dt), buffers); },
      py::arg("b"), py::arg("name"), py::arg("rows"), py::arg("cols"), py::arg("dtype"), py::arg("buffers"));
  l.def("pipelined_loop", &lowering::pipelined_loop, py::arg("b"), py::arg("var"), py::arg("trips"),
        py::arg("buffers"), py::arg("load"), py::arg("body"));
  l.def("pipelined_loop_first", &lowering::pipelined_loop_first, py::arg("b"), py::arg("var"),
        py::arg("trips"), py::arg("buffers"), py::arg("load"), py::arg("body"));
  l.def("load", &lowering::load, py::arg("b"), py::arg("src"), py::arg("dst"));
  l.def("store", &lowering::store, py::arg("b"), py::arg("src"), py::arg("dst"));
}

} // namespace neuronsim::python
