// The 64-byte bundle codec's drivers: encode, decode and disassemble one bundle by walking the rows of its
// form (isa/tables/bundle_fields.def); each row goes to its kind's encoder / decoder / disassembler through
// the row-kind table below (the kinds live in the files codec.hpp lists). reference
// neuronx-cc/isa/instruction-bundle.md: zero-filled 64 bytes, header {opcode, 0x10, 0, 0}.
#include <set>
#include <sstream>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa {
namespace codec {

// ------------------------------------------------------------------------------------------- row kinds
// One entry per kind, in K order (checked at compile time): encoder, decoder, disassembler (null: the bytes
// as hex), decoding pass.
namespace {
constexpr RowCodec kRowCodecs[] = {
    {K::AP, enc_ap, dec_ap, dis_ap, 1},
    {K::DT, enc_dtype, dec_dtype, dis_dtype, 0},
    {K::DTLO, enc_dtype, dec_dtype, dis_dtype, 0},
    {K::DTHI, enc_dtype, dec_dtype, dis_dtype, 0},
    {K::NPART, enc_npart, dec_npart, nullptr, 1},
    {K::ALU, enc_alu, dec_alu, dis_alu, 1},
    {K::VMAP, enc_vmap, dec_vmap, dis_vmap, 1},
    {K::BOOL, enc_bool, dec_bool, nullptr, 1},
    {K::UINT, enc_int, dec_uint, nullptr, 1},
    {K::INT, enc_int, dec_int, dis_int, 1},
    {K::F32, enc_f32, dec_f32, dis_f32, 1},
    {K::BIT, enc_bit, dec_bit, dis_bit, 1},
    {K::CONST, enc_const, dec_nothing, nullptr, 1},
    {K::DER, enc_derived, dec_nothing, nullptr, 1},
    {K::PAT, enc_pattern, dec_pattern, nullptr, 1},
    {K::D2SIDE, enc_d2, dec_d2, dis_d2, 1},
    {K::WMODE, enc_wait, dec_wait_mode, nullptr, 1},
    {K::WIDX, enc_wait, dec_wait_idx, nullptr, 1},
    {K::WVAL, enc_wait, dec_wait_val, nullptr, 1},
    {K::UMODE, enc_update, dec_update_mode, dis_update_mode, 1},
    {K::UIDX, enc_update, dec_update_idx, nullptr, 1},
    {K::UVAL, enc_update, dec_update_val, nullptr, 1},
    {K::SVAL, enc_sync_value, dec_sync_value, nullptr, 1},
    {K::SCAL, enc_scal, dec_scal, dis_scal, 1},
    {K::FILL, enc_fill, dec_fill, nullptr, 1},
    {K::ILIST, enc_ilist, dec_ilist, nullptr, 1},
    {K::STR, enc_str, dec_str, dis_str, 1},
    {K::POOL, enc_pool, dec_pool, dis_pool, 1},
    {K::ARGS, enc_args, dec_args, dis_args, 1},
    {K::BLOCK, enc_block, dec_block, dis_block, 1},
    {K::REG, enc_reg, dec_reg, dis_reg, 1},
    {K::IMMI, enc_immi, dec_immi, dis_immi, 1},
    {K::SENUM, enc_senum, dec_senum, dis_senum, 1},
    {K::SRANGE, enc_sema_set, dec_sema_set, dis_sema_range, 1},
    {K::SMASK, enc_sema_set, dec_sema_set, dis_sema_mask, 1},
};
constexpr bool in_kind_order() {
  if (sizeof(kRowCodecs) / sizeof(kRowCodecs[0]) != kNumRowKinds)
    return false;
  for (int i = 0; i < kNumRowKinds; ++i)
    if (kRowCodecs[i].kind != static_cast<K>(i))
      return false;
  return true;
}
static_assert(in_kind_order(), "kRowCodecs: one entry per row kind, in K order");
} // namespace

const RowCodec &row_codec(K kind) {
  return kRowCodecs[static_cast<int>(kind)];
}

namespace {

// ------------------------------------------------------------------------------------------- rows
void encode_rows(const Ctx &c, const Inst &in, const Form &f, const std::vector<Row> &rows, uint8_t *b,
                 int64_t npart_default, const std::vector<SemWait> &waits,
                 const std::vector<SemUpdate> &updates) {
  for (const Row &r : rows) {
    const std::string what = r.name + " (+" + hex(r.off) + ")";
    const Arg *a = r.role >= 0 ? role_arg(in, r.role) : nullptr;
    row_codec(r.kind).enc(EncodeRow{c, in, f, r, b, a, npart_default, waits, updates, what});
  }
}

// Pass 0 sets the operands' dtypes; pass 1 the rest (descriptors and scalars read the dtypes).
void decode_rows(const Ctx &c, const uint8_t *b, const std::vector<Row> &rows, Inst &in,
                 std::vector<int> &npart_role, std::vector<int64_t> &npart_val) {
  const size_t w0 = in.waits.size(), u0 = in.updates.size();
  for (int pass = 0; pass < 2; ++pass) {
    for (const Row &r : rows) {
      const RowCodec &rc = row_codec(r.kind);
      if (rc.pass != pass)
        continue;
      const std::string what = r.name + " (+" + hex(r.off) + ")";
      rc.dec(DecodeRow{c, b, r, in, w0, u0, npart_role, npart_val, what});
    }
  }
}

// Picks the forms (one per bundle) for an instruction: the first form of each part whose conditions hold.
std::vector<const Form *> pick_forms(const Inst &in, CoreGen gen, const ErrorContext &ectx) {
  std::vector<const Form *> out;
  bool any_type = false;
  // Part 0: the first form (table order) whose conditions hold; later parts: the first form of that part with
  // the same bundle count (a drain part may be declared before the forms it follows).
  for (int part = 0; out.empty() || part < out[0]->nparts; ++part) {
    const Form *pick = nullptr;
    for (const Form &f : tables().forms) {
      if (!f.has(in.type) || !f.on(gen))
        continue;
      any_type = true;
      if (f.part != part || (!out.empty() && f.nparts != out[0]->nparts))
        continue;
      if (!std::all_of(f.conds.begin(), f.conds.end(), [&](const Cond &c) { return cond_holds(c, in); }))
        continue;
      pick = &f;
      break;
    }
    if (!pick)
      break;
    out.push_back(pick);
  }
  if (!out.empty() && static_cast<int>(out.size()) == out[0]->nparts)
    return out;
  const auto &info = inst_type_info(in.type);
  if (!info.encoded_on(gen))
    throw SemanticError(ectx, std::string(inst_type_name(in.type)) + " is not encoded on " +
                                  core_gen_name(gen) + " (instruction_wire.def)");
  if (!any_type)
    throw SemanticError(ectx, std::string("the bundle codec has no layout for ") + inst_type_name(in.type) +
                                  " (bundle_fields.def)");
  throw SemanticError(ectx, std::string("no bundle form of ") + inst_type_name(in.type) + " on " +
                                core_gen_name(gen) +
                                " matches these fields (e.g. a transposed bit-vector op)");
}

} // namespace
} // namespace codec

using namespace codec;

std::vector<Bundle> encode(const Inst &in, const Program &prog, CoreGen gen, const CodecOptions &opt,
                           BundlePool *pool) {
  ErrorContext ectx{prog.file, in.index, in.name.empty() ? inst_type_name(in.type) : in.name, ""};
  Ctx c{prog, gen, opt, ectx, pool, nullptr};
  auto forms = pick_forms(in, gen, ectx);

  // Every field the instruction sets must be carried by one of its forms (rows or FIELD conditions), so that
  // decode(encode(x)) == x whenever encode succeeds.
  std::set<int> declared;
  std::set<int> roles, ap_roles, npart_roles;
  bool all_operands = false; // an ARGS row carries every operand (through the pool)
  for (const Form *f : forms) {
    for (const Row &r : f->rows) {
      if (r.kind == K::ARGS)
        all_operands = true;
      if (r.field)
        declared.insert(static_cast<int>(*r.field));
      if (r.role >= 0)
        roles.insert(r.role);
      if (r.kind == K::AP)
        ap_roles.insert(r.role);
      if (r.kind == K::NPART)
        npart_roles.insert(r.role);
    }
    for (const Cond &cd : f->conds)
      if (cd.kind == CK::FIELD)
        declared.insert(static_cast<int>(cd.fields[0]));
  }
  dma_check_encodable(c, in);
  // The rank expressions (CollectiveCompute recv_from_rank / send_to_rank, GetCurProcessingRankID iter_id given
  // as an expression) live beside InstFields and no bundle form has bytes for them: refuse rather than let the
  // encoded stream run with the form's plain value (iter_id 0) and part silently from the BIR.
  for (const auto &[key, list] : {std::pair<const char *, const std::vector<Expr> *>{"recv_from_rank", &in.recv_from_rank},
                                  {"send_to_rank", &in.send_to_rank},
                                  {"iter_id", &in.iter_id_expr}})
    if (!list->empty())
      throw SemanticError(c.at(key), std::string("an expression-valued ") + key + " has no bundle form (" +
                                         forms[0]->name + " carries plain values only)");
  const InstFields defaults;
  for (int k = 0; k < kNumFields; ++k) {
    const Field fk = static_cast<Field>(k);
    if (declared.count(k) || is_metadata_field(fk))
      continue;
    if (!field_same(in.f, defaults, fk))
      throw SemanticError(c.at(field_key(fk)), std::string("not representable in bundle form ") +
                                                   forms[0]->name +
                                                   " (only the default value can be encoded)");
  }
  for (size_t i = 0; i < in.ins.size() && !all_operands; ++i)
    if (!roles.count(static_cast<int>(i)))
      throw SemanticError(c.at(role_name(static_cast<int>(i))),
                          std::string("operand not carried by form ") + forms[0]->name);
  for (size_t i = 0; i < in.outs.size() && !all_operands; ++i)
    if (!roles.count(kOut + static_cast<int>(i)))
      throw SemanticError(c.at(role_name(kOut + static_cast<int>(i))),
                          std::string("operand not carried by form ") + forms[0]->name);
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.role >= 0 && r.kind != K::SCAL && !role_arg(in, r.role))
        throw SemanticError(c.at(role_name(r.role)), std::string("missing operand for ") + r.name);
  // Operands whose partition count has no byte of its own share the form's first one.
  int64_t npart_default = -1;
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.kind == K::NPART && npart_default < 0)
        npart_default = role_arg(in, r.role)->partitions();
  for (int role : ap_roles)
    if (!npart_roles.count(role) && role_arg(in, role)->partitions() != npart_default)
      throw SemanticError(c.at(role_name(role)), "partition count differs from the one the bundle carries (" +
                                                     std::to_string(npart_default) + ")");
  // Operands without a dtype byte must use the tensor's dtype.
  std::set<int> dt_roles;
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.kind == K::DT || r.kind == K::DTLO || r.kind == K::DTHI)
        dt_roles.insert(r.role);
  for (int role : ap_roles)
    if (!dt_roles.count(role)) {
      const Arg *a = role_arg(in, role);
      if (a->tensor >= 0 && a->tensor < static_cast<int>(prog.tensors.size()) &&
          a->dtype != prog.tensors[static_cast<size_t>(a->tensor)].dtype)
        throw SemanticError(c.at(role_name(role)),
                            "operand dtype differs from its tensor's and no byte carries it");
    }
  // Sync (reference isa/sp-sync-encoding.md): SHARED band = one wait + one update; EventSemaphore = 2 + 1.
  const SyncKind sk = forms[0]->sync;
  const size_t max_w = sk == SyncKind::OWN ? 2 : sk == SyncKind::SHARED ? 1 : 0;
  const size_t max_u = sk == SyncKind::NONE ? 0 : 1;
  if (in.waits.size() > max_w || in.updates.size() > max_u)
    throw SemanticError(c.at("sync"), "at most " + std::to_string(max_w) + " wait(s) and " +
                                          std::to_string(max_u) + " update(s) fit this bundle");

  std::vector<Bundle> out;
  for (size_t p = 0; p < forms.size(); ++p) {
    const Form &f = *forms[p];
    Bundle b{};
    // spec 003 INV-1: header word (0x10 << 8) | L2, bytes {opcode, 0x10, 0, 0}.
    const uint16_t word = l3_word(f.l2);
    b[0] = static_cast<uint8_t>(word & 0xFF);
    b[1] = static_cast<uint8_t>(word >> 8);
    const std::vector<SemWait> none_w;
    const std::vector<SemUpdate> none_u;
    encode_rows(c, in, f, rows_for(f), b.data(), npart_default, p == 0 ? in.waits : none_w,
                p + 1 == forms.size() ? in.updates : none_u);
    out.push_back(b);
  }
  return out;
}

DecodedBundle decode(const uint8_t *b, CoreGen gen, int engine_id, const Program &prog, DecodeState *state,
                     std::optional<InstructionType> hint, const CodecOptions &opt, const ErrorContext &where,
                     const BundlePool *pool) {
  Ctx c{prog, gen, opt, where, nullptr, pool};
  DecodeState local;
  DecodeState &st = state ? *state : local;
  const uint16_t word = static_cast<uint16_t>(b[0] | (b[1] << 8));
  auto hdr = parse_l3_word(word);
  if (!hdr || b[2] != 0 || b[3] != 0)
    throw InputError(c.at("header (+0x00)"), "header word " + hex(word, 4) + " " + hex(b[2]) +
                                                 hex(b[3]).substr(2) +
                                                 " is not (0x10 << 8) | L2 followed by 0x0000");
  const uint8_t l2 = hdr->l2;
  std::vector<const Form *> cand;
  for (const Form &f : tables().forms)
    if (f.l2 == l2 && f.on(gen))
      cand.push_back(&f);
  if (cand.empty()) {
    auto its = inst_types_for_l2(l2, gen);
    std::string known;
    for (auto t : its)
      known += std::string(known.empty() ? "" : ", ") + inst_type_name(t);
    throw InputError(c.at("opcode (+0x00)"),
                     "unknown opcode byte " + hex(l2) + " on " + core_gen_name(gen) +
                         (known.empty() ? "" : " (" + known + ": no bundle layout yet)"));
  }
  const int want_part = st.pending ? tables().forms[static_cast<size_t>(st.form)].part + 1 : 0;
  std::vector<const Form *> sel;
  for (const Form *f : cand) {
    if (f->part != want_part)
      continue;
    if (st.pending && !f->has(st.inst.type))
      continue;
    if (hint && !f->has(*hint))
      continue;
    sel.push_back(f);
  }
  if (sel.empty()) {
    if (st.pending)
      throw InputError(c.at("opcode (+0x00)"), std::string("opcode ") + hex(l2) +
                                                   " does not continue the pending " +
                                                   inst_type_name(st.inst.type) + " bundles");
    throw InputError(c.at("opcode (+0x00)"),
                     std::string("opcode ") + hex(l2) + " does not start an instruction" +
                         (hint ? std::string(" of type ") + inst_type_name(*hint) : ""));
  }
  // [col] separation inside the bundle: a form whose engine condition names another engine, or whose constant
  // bytes (CONST rows, e.g. a "drain follows" flag) differ from the bundle, is not this bundle's form.
  if (sel.size() > 1) {
    std::vector<const Form *> keep;
    for (const Form *f : sel) {
      bool ok = true;
      for (const Cond &cd : f->conds)
        if (cd.kind == CK::ENGINE && cd.value != engine_id)
          ok = false;
      for (const Row &r : f->rows) {
        if (r.kind == K::CONST && r.width <= 8 && get(b, r.off, r.width) != static_cast<uint64_t>(r.arg))
          ok = false;
        if (r.kind == K::VMAP && !map_back(r.map, b[r.off]))
          ok = false; // e.g. accum vs accum_d (drain follows)
      }
      if (ok)
        keep.push_back(f);
    }
    if (!keep.empty())
      sel = keep;
  }
  if (sel.size() > 1) {
    std::string names;
    for (const Form *f : sel)
      for (auto t : f->types)
        names += std::string(names.empty() ? "" : ", ") + inst_type_name(t);
    throw InputError(c.at("opcode (+0x00)"), "opcode " + hex(l2) + " is shared by " + names +
                                                 " ([col]); the bundle alone cannot tell them apart");
  }
  const Form &f = *sel[0];
  Inst fresh;
  Inst &in = st.pending ? st.inst : fresh;
  if (!st.pending) {
    in.type = hint ? *hint : f.types[0];
    in.engine = static_cast<Engine>(engine_id);
  }
  for (const Cond &cd : f.conds)
    if (cd.kind == CK::FIELD)
      set_i(in.f, cd.fields[0], cd.value);
  std::vector<int> np_role;
  std::vector<int64_t> np_val;
  decode_rows(c, b, rows_for(f), in, np_role, np_val);
  // Partition counts: each NPART row sets its operand; operands without one take the first.
  auto fix = [&](int role, int64_t v) {
    Arg *a = role_arg(in, role);
    if (a && a->kind == ArgKind::AccessPattern && !a->ap.empty())
      a->ap[0].num = v;
  };
  for (size_t i = 0; i < np_role.size(); ++i)
    fix(np_role[i], np_val[i]);
  int64_t dflt = -1;
  for (const Row &r : f.rows)
    if (r.kind == K::AP || r.kind == K::SCAL) {
      Arg *a = role_arg(in, r.role);
      if (a && !a->ap.empty() && a->ap[0].num < 0) {
        if (dflt < 0) {
          // first NPART of this instruction (for multi-bundle ops, possibly from an earlier bundle)
          for (size_t i = 0; i < np_val.size() && dflt < 0; ++i)
            dflt = np_val[i];
          if (dflt < 0)
            dflt = 1;
        }
        a->ap[0].num = dflt;
      }
    }
  dma_resolve_type(c, f, hint.has_value(), in);
  DecodedBundle out;
  out.form = f.name;
  out.part = f.part;
  out.parts = f.nparts;
  if (f.part + 1 < f.nparts) {
    if (!st.pending)
      st.inst = in;
    st.pending = true;
    st.form = static_cast<int>(&f - tables().forms.data());
    return out;
  }
  out.complete = true;
  // `given` bits: ops read some keys only when present (TensorScalarAffineSelect's compare_op defaults to
  // is_equal when absent); a decoded field is present when it differs from the InstFields default.
  {
    const InstFields defaults;
    for (int k = 0; k < kNumFields; ++k)
      if (!field_same(in.f, defaults, static_cast<Field>(k)))
        in.given.set(static_cast<size_t>(k));
  }
  out.inst = in;
  st = DecodeState{};
  return out;
}

std::string disasm_line(const uint8_t *b, CoreGen gen, const CodecOptions &opt) {
  std::ostringstream os;
  const uint16_t word = static_cast<uint16_t>(b[0] | (b[1] << 8));
  os << hex(word, 4);
  // The first form of this opcode whose constant bytes and value maps read the bundle (the decoder's [col]
  // separation: CompareAndBranch vs UnconditionalBranch by comp_op, ...), else the first form of the opcode.
  const Form *form = nullptr, *first = nullptr;
  for (const Form &f : tables().forms) {
    if (f.l2 != b[0] || !f.on(gen))
      continue;
    if (!first)
      first = &f;
    bool ok = true;
    for (const Row &r : f.rows) {
      if (r.kind == K::CONST && r.width <= 8 && get(b, r.off, r.width) != static_cast<uint64_t>(r.arg))
        ok = false;
      if (r.kind == K::VMAP && !map_back(r.map, b[r.off]))
        ok = false;
    }
    if (ok) {
      form = &f;
      break;
    }
  }
  if (!form)
    form = first;
  if (!form || !parse_l3_word(word)) {
    os << " ?";
    for (int i = 4; i < 64; ++i)
      if (b[i])
        os << " +" << hex(i) << "=" << hex(b[i]);
    return os.str();
  }
  os << " " << form->name;
  if (form->types.size() == 1)
    os << " (" << inst_type_name(form->types[0]) << ")";
  for (const Row &r : rows_for(*form)) {
    os << " " << r.name << "=";
    if (const DisasmFn dis = row_codec(r.kind).dis) {
      dis(DisasmRow{os, b, r, gen, opt});
    } else {
      const uint64_t v = get(b, r.off, std::min(r.width, 8));
      os << (r.width == 1 ? hex(v) : hex(v, 2 * r.width));
    }
  }
  return os.str();
}

bool same_bundle_content(const Inst &a, const Inst &b, std::string *diff) {
  auto fail = [&](const std::string &m) {
    if (diff)
      *diff = m;
    return false;
  };
  if (a.type != b.type)
    return fail(std::string("type ") + inst_type_name(a.type) + " vs " + inst_type_name(b.type));
  if (a.engine != b.engine)
    return fail(std::string("engine ") + enum_name(a.engine) + " vs " + enum_name(b.engine));
  auto args = [&](const std::vector<Arg> &x, const std::vector<Arg> &y, const char *what) -> bool {
    if (x.size() != y.size())
      return fail(std::string(what) + " count " + std::to_string(x.size()) + " vs " +
                  std::to_string(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const Arg &p = x[i], &q = y[i];
      const std::string w = std::string(what) + "[" + std::to_string(i) + "]";
      if (p.kind != q.kind)
        return fail(w + " kind");
      if (p.dtype != q.dtype)
        return fail(w + " dtype " + enum_name(p.dtype) + " vs " + enum_name(q.dtype));
      if (p.kind == ArgKind::AccessPattern) {
        if (p.tensor != q.tensor)
          return fail(w + " tensor");
        if (!p.start.is_const() || !q.start.is_const() || p.start.c != q.start.c)
          return fail(w + " start");
        if (!same_dims(p.ap, q.ap)) {
          std::string s = w + " ap";
          for (auto d : p.ap)
            s += " [" + std::to_string(d.step) + "," + std::to_string(d.num) + "]";
          s += " vs";
          for (auto d : q.ap)
            s += " [" + std::to_string(d.step) + "," + std::to_string(d.num) + "]";
          return fail(s);
        }
      } else if (p.kind == ArgKind::Immediate) {
        if (p.imm != q.imm)
          return fail(w + " immediate");
      }
    }
    return true;
  };
  if (!args(a.ins, b.ins, "ins") || !args(a.outs, b.outs, "outs"))
    return false;
  for (int k = 0; k < kNumFields; ++k) {
    const Field fk = static_cast<Field>(k);
    if (is_metadata_field(fk) && !bundle_carries(a.type, fk))
      continue;
    if (fk == Field::sema_group) { // a set: the bitmask / range keep no order
      auto x = a.f.sema_group, y = b.f.sema_group;
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      if (x != y)
        return fail("field sema_group");
      continue;
    }
    if (!field_same(a.f, b.f, fk))
      return fail(std::string("field ") + field_key(fk));
  }
  if (a.waits.size() != b.waits.size())
    return fail("wait count");
  for (size_t i = 0; i < a.waits.size(); ++i)
    if (a.waits[i].sem != b.waits[i].sem || a.waits[i].mode != b.waits[i].mode ||
        a.waits[i].value != b.waits[i].value || a.waits[i].reg != b.waits[i].reg)
      return fail("wait " + std::to_string(i));
  if (a.updates.size() != b.updates.size())
    return fail("update count");
  for (size_t i = 0; i < a.updates.size(); ++i)
    if (a.updates[i].sem != b.updates[i].sem || a.updates[i].mode != b.updates[i].mode ||
        a.updates[i].value != b.updates[i].value)
      return fail("update " + std::to_string(i));
  return true;
}

} // namespace neuronsim::isa
