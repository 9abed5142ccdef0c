// `debug.nki`: what the NKI front end records beside an instruction's source line (isa::NkiInfo: the kernel's
// loops around it, its trip of each, the tiles declared inside them, an associative reduction) and beside an
// allocation (isa::NkiTile: the tile's own shape and its rotating buffers). The simulator reads both only for the
// sanitizer and its messages (docs/sanitizer.md); the writer writes them back (writer.cpp).
#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

namespace {
const char *const kReduceOps[] = {"add", "max", "min", "mult"};
} // namespace

std::shared_ptr<const NkiInfo> Reader::read_nki_info(const json &nki, const Inst &inst) const {
  const std::string f = "debug.nki";
  as_obj(nki, f);
  auto info = std::make_shared<NkiInfo>();
  if (const json *loops = get(nki, "loops")) {
    const json &a = as_arr(*loops, f + ".loops");
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string lf = f + ".loops[" + std::to_string(i) + "]";
      const json &l = as_obj(a[i], lf);
      NkiLoop loop;
      loop.id = static_cast<int>(as_int(need(l, "id", lf + ".id"), lf + ".id"));
      const std::string kind = as_str(need(l, "kind", lf + ".kind"), lf + ".kind");
      if (kind == "affine") loop.kind = NkiLoop::Kind::Affine;
      else if (kind == "sequential") loop.kind = NkiLoop::Kind::Sequential;
      else if (kind == "static") loop.kind = NkiLoop::Kind::Static;
      else fail(lf + ".kind", "unknown NKI loop kind '" + kind + "' (affine, sequential or static)");
      if (const json *ln = get(l, "lineno")) loop.line = static_cast<int>(as_int(*ln, lf + ".lineno"));
      if (const json *v = get(l, "var")) loop.var = as_str(*v, lf + ".var");
      if (const json *v = get(l, "start")) loop.start = as_int(*v, lf + ".start");
      if (const json *v = get(l, "step")) loop.step = as_int(*v, lf + ".step");
      const json &trip = need(l, "trip", lf + ".trip");
      loop.trip = trip.is_number() ? Expr::constant(as_int(trip, lf + ".trip")) : read_expr(trip, lf + ".trip");
      info->loops.push_back(std::move(loop));
    }
  }
  const size_t operands = inst.ins.size() + inst.outs.size();
  if (const json *local = get(nki, "local")) {
    const std::vector<int64_t> v = as_int_list(*local, f + ".local");
    if (v.size() > operands)
      fail(f + ".local", std::to_string(v.size()) + " entries for " + std::to_string(operands) + " operands");
    for (int64_t d : v) {
      if (d < 0 || d > static_cast<int64_t>(info->loops.size()))
        fail(f + ".local", "an entry of " + std::to_string(d) + " outside [0, " +
                               std::to_string(info->loops.size()) + "] (the loops listed)");
      info->local.push_back(static_cast<int>(d));
    }
  }
  if (const json *r = get(nki, "reduce")) {
    info->reduce = as_str(*r, f + ".reduce");
    bool known = false;
    for (const char *op : kReduceOps) known = known || info->reduce == op;
    if (!known) fail(f + ".reduce", "unknown reduction '" + info->reduce + "' (add, max, min or mult)");
    if (inst.outs.empty()) fail(f + ".reduce", "a reduction writes outs[0]; the instruction has no outs");
    if (const json *ri = get(nki, "reduce_in")) {
      const int64_t k = as_int(*ri, f + ".reduce_in");
      if (k < -1 || k >= static_cast<int64_t>(inst.ins.size()))
        fail(f + ".reduce_in", "ins[" + std::to_string(k) + "] does not exist (" + std::to_string(inst.ins.size()) +
                                   " ins)");
      info->reduce_in = static_cast<int>(k);
    }
  }
  return info;
}

std::shared_ptr<const NkiTile> Reader::read_nki_tile(const json &nki, const std::string &field) const {
  as_obj(nki, field);
  auto t = std::make_shared<NkiTile>();
  if (const json *a = get(nki, "argument")) t->argument = as_bool(*a, field + ".argument");
  if (const json *s = get(nki, "shape")) t->shape = as_int_list(*s, field + ".shape");
  for (int64_t d : t->shape)
    if (d <= 0) fail(field + ".shape", "a tile dimension of " + std::to_string(d));
  if (const json *p = get(nki, "pdim")) t->pdim = static_cast<int>(as_int(*p, field + ".pdim"));
  if (t->pdim < 0 || (!t->shape.empty() && t->pdim >= static_cast<int>(t->shape.size())))
    fail(field + ".pdim", "partition dim " + std::to_string(t->pdim) + " of a " + std::to_string(t->shape.size()) +
                              "-dim tile");
  if (const json *b = get(nki, "buffers")) t->buffers = as_int(*b, field + ".buffers");
  if (const json *c = get(nki, "cols")) t->cols = as_int(*c, field + ".cols");
  if (t->buffers < 1) fail(field + ".buffers", "at least 1 buffer, got " + std::to_string(t->buffers));
  if (t->cols < 0) fail(field + ".cols", "a negative column count");
  return t;
}

} // namespace neuronsim::isa::bir
