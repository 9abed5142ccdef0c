// Values a bundle holds by reference: POOL and ARGS rows index the per-stream pool (manifest.json "pool":
// strings, lists and whole operand lists no bundle holds inline), BLOCK rows the stream's block table
// (manifest.json "blocks", Program::blocks). Also the pool itself: its entries, their JSON form and reading
// it back. Both are this project's own (neuronsim, docs/bundle-layout.md "Stream pool").
#include <nlohmann/json.hpp>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa {
namespace codec {
namespace {

// An operand list as a pool entry: access patterns on tensors of the program with constant starts.
PoolEntry operands_entry(const Ctx &c, const Inst &in) {
  PoolEntry e;
  e.kind = PoolEntry::Kind::Operands;
  auto take = [&](const std::vector<Arg> &v, std::vector<Arg> &out, int base) {
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string what = role_name(base + static_cast<int>(i));
      const Arg &a = v[i];
      (void)tensor_of(c, a, what);
      Arg x;
      x.kind = ArgKind::AccessPattern;
      x.tensor = a.tensor;
      x.dtype = a.dtype;
      x.start = Expr::constant(const_start(c, a, what));
      x.ap = a.ap;
      out.push_back(x);
    }
  };
  take(in.ins, e.ins, 0);
  take(in.outs, e.outs, kOut);
  return e;
}
const PoolEntry &pool_at(const Ctx &c, uint64_t idx, const std::string &what) {
  if (!c.cpool)
    throw InputError(c.at(what), "pool index " + std::to_string(idx) + " but the stream has no pool");
  if (idx >= c.cpool->entries.size())
    throw InputError(c.at(what), "pool index " + std::to_string(idx) + " past the stream pool (" +
                                     std::to_string(c.cpool->entries.size()) + " entries)");
  return c.cpool->entries[static_cast<size_t>(idx)];
}
const char *pool_kind_name(PoolEntry::Kind k) {
  switch (k) {
  case PoolEntry::Kind::Text:
    return "a string";
  case PoolEntry::Kind::TextList:
    return "a string list";
  case PoolEntry::Kind::IntList:
    return "an integer list";
  case PoolEntry::Kind::IntListList:
    return "a list of integer lists";
  case PoolEntry::Kind::Operands:
    return "an operand list";
  }
  return "?";
}

} // namespace

// ------------------------------------------------------------------------------------------- POOL
// A STRING / STRLIST / INTLIST / INTLISTLIST field out of line: the index of its pool entry; all ones = the
// field's default value.
void enc_pool(const EncodeRow &e) {
  const Row &r = e.r;
  const InstFields dflt;
  if (field_same(e.in.f, dflt, *r.field)) {
    put(e.b, r.off, r.width, all_ones(r.width));
    return;
  }
  if (!e.c.pool)
    throw SemanticError(
        e.c.at(field_key(*r.field)),
        "this value lives in the stream pool: encode with a pool (write_bundle_dir keeps one)");
  const size_t idx = e.c.pool->add(*field_to_pool(e.in.f, *r.field));
  if (idx >= all_ones(r.width))
    throw SemanticError(e.c.at(e.what), "stream pool past " + std::to_string(all_ones(r.width)) + " entries");
  put(e.b, r.off, r.width, idx);
}
void dec_pool(const DecodeRow &d) {
  const Row &r = d.r;
  const uint64_t idx = get(d.b, r.off, r.width);
  if (idx == all_ones(r.width))
    return; // the field's default
  const PoolEntry &e = pool_at(d.c, idx, d.what);
  if (!field_from_pool(d.in.f, *r.field, e))
    throw InputError(d.c.at(d.what), "pool entry " + std::to_string(idx) + " is " + pool_kind_name(e.kind) +
                                         ", not a value of field " + field_key(*r.field));
}
void dis_pool(const DisasmRow &d) {
  const uint64_t v = get(d.b, d.r.off, std::min(d.r.width, 8));
  d.os << (v == all_ones(d.r.width) ? std::string("default") : "pool[" + std::to_string(v) + "]");
}

// ------------------------------------------------------------------------------------------- ARGS
// Every operand of the instruction (ins, then outs: access patterns with constant starts) as one pool entry.
void enc_args(const EncodeRow &e) {
  if (!e.c.pool)
    throw SemanticError(
        e.c.at(e.what),
        "the operand list lives in the stream pool: encode with a pool (write_bundle_dir keeps one)");
  const size_t idx = e.c.pool->add(operands_entry(e.c, e.in));
  if (idx >= all_ones(e.r.width))
    throw SemanticError(e.c.at(e.what),
                        "stream pool past " + std::to_string(all_ones(e.r.width)) + " entries");
  put(e.b, e.r.off, e.r.width, idx);
}
void dec_args(const DecodeRow &d) {
  const uint64_t idx = get(d.b, d.r.off, d.r.width);
  const PoolEntry &e = pool_at(d.c, idx, d.what);
  if (e.kind != PoolEntry::Kind::Operands)
    throw InputError(d.c.at(d.what), "pool entry " + std::to_string(idx) + " is " + pool_kind_name(e.kind) +
                                         ", not an operand list");
  for (const auto *v : {&e.ins, &e.outs})
    for (const Arg &a : *v)
      if (a.tensor < 0 || a.tensor >= static_cast<int>(d.c.prog.tensors.size()))
        throw InputError(d.c.at(d.what), "pool entry " + std::to_string(idx) + " names tensor " +
                                             std::to_string(a.tensor) + ", not a tensor of the stream");
  d.in.ins = e.ins;
  d.in.outs = e.outs;
}
void dis_args(const DisasmRow &d) {
  d.os << "pool[" << get(d.b, d.r.off, std::min(d.r.width, 8)) << "]";
}

// ------------------------------------------------------------------------------------------- BLOCK
// A STRING field naming a basic block: 1 + the block's index in the block table; 0 = no block named (the edge
// falls through, as the reference's implicit edge does).
void enc_block(const EncodeRow &e) {
  const Row &r = e.r;
  const std::string &name = str_field(e.in.f, *r.field);
  uint64_t v = 0;
  if (!name.empty()) {
    const auto &blocks = e.c.prog.blocks;
    size_t k = 0;
    while (k < blocks.size() && blocks[k].name != name)
      ++k;
    if (k == blocks.size())
      throw SemanticError(e.c.at(field_key(*r.field)),
                          "no basic block named '" + name + "' in the program's block table");
    v = k + 1;
  }
  put(e.b, r.off, r.width, v);
}
void dec_block(const DecodeRow &d) {
  const uint64_t v = get(d.b, d.r.off, d.r.width);
  std::string &name = str_field(d.in.f, *d.r.field);
  if (v == 0) {
    name.clear();
    return;
  }
  const auto &blocks = d.c.prog.blocks;
  if (v - 1 >= blocks.size())
    throw InputError(d.c.at(d.what), "block index " + std::to_string(v - 1) + " past the block table (" +
                                         std::to_string(blocks.size()) + " blocks)");
  name = blocks[static_cast<size_t>(v - 1)].name;
}
void dis_block(const DisasmRow &d) {
  const uint64_t v = get(d.b, d.r.off, std::min(d.r.width, 8));
  d.os << (v == 0 ? std::string("next") : "block[" + std::to_string(v - 1) + "]");
}

} // namespace codec

// ------------------------------------------------------------------------------------------- the pool
namespace {
using nlohmann::json;
json entry_json(const PoolEntry &e) {
  auto args = [](const std::vector<Arg> &v) {
    json a = json::array();
    for (const Arg &x : v) {
      json dims = json::array();
      for (const auto &d : x.ap)
        dims.push_back({d.step, d.num});
      a.push_back({{"tensor", x.tensor}, {"dtype", enum_name(x.dtype)}, {"start", x.start.c}, {"ap", dims}});
    }
    return a;
  };
  switch (e.kind) {
  case PoolEntry::Kind::Text:
    return {{"text", e.text}};
  case PoolEntry::Kind::TextList:
    return {{"texts", e.texts}};
  case PoolEntry::Kind::IntList:
    return {{"ints", e.ints.empty() ? std::vector<int64_t>{} : e.ints[0]}};
  case PoolEntry::Kind::IntListList:
    return {{"int_lists", e.ints}};
  case PoolEntry::Kind::Operands:
    return {{"ins", args(e.ins)}, {"outs", args(e.outs)}};
  }
  return json();
}
} // namespace

size_t BundlePool::add(const PoolEntry &e) {
  const json key = entry_json(e);
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].kind == e.kind && entry_json(entries[i]) == key)
      return i;
  entries.push_back(e);
  return entries.size() - 1;
}

std::string pool_to_json(const BundlePool &pool) {
  json a = json::array();
  for (const auto &e : pool.entries)
    a.push_back(entry_json(e));
  return a.dump();
}

BundlePool pool_from_json(const std::string &text, const Program &prog, const ErrorContext &where) {
  BundlePool pool;
  json a;
  try {
    a = json::parse(text);
  } catch (const json::exception &e) {
    throw InputError(where, std::string("pool: invalid JSON: ") + e.what());
  }
  if (!a.is_array())
    throw InputError(where, "pool: not a JSON array");
  for (size_t i = 0; i < a.size(); ++i) {
    ErrorContext c = where;
    c.field = "pool[" + std::to_string(i) + "]";
    const json &j = a[i];
    PoolEntry e;
    try {
      if (!j.is_object() || j.size() < 1)
        throw InputError(c, "not an object with one value");
      if (j.contains("text")) {
        e.kind = PoolEntry::Kind::Text, e.text = j.at("text").get<std::string>();
      } else if (j.contains("texts")) {
        e.kind = PoolEntry::Kind::TextList, e.texts = j.at("texts").get<std::vector<std::string>>();
      } else if (j.contains("ints")) {
        e.kind = PoolEntry::Kind::IntList, e.ints = {j.at("ints").get<std::vector<int64_t>>()};
      } else if (j.contains("int_lists")) {
        e.kind = PoolEntry::Kind::IntListList,
        e.ints = j.at("int_lists").get<std::vector<std::vector<int64_t>>>();
      } else if (j.contains("ins") && j.contains("outs")) {
        e.kind = PoolEntry::Kind::Operands;
        for (const char *side : {"ins", "outs"})
          for (const json &ja : j.at(side)) {
            Arg x;
            x.kind = ArgKind::AccessPattern;
            x.tensor = ja.at("tensor").get<int>();
            if (x.tensor < 0 || x.tensor >= static_cast<int>(prog.tensors.size()))
              throw InputError(c, std::string(side) + ": tensor " + std::to_string(x.tensor) +
                                      " is not a tensor of the stream");
            x.dtype = parse_dtype(ja.at("dtype").get<std::string>(), c);
            x.start = Expr::constant(ja.at("start").get<int64_t>());
            for (const json &d : ja.at("ap")) {
              const auto p = d.get<std::vector<int64_t>>();
              if (p.size() != 2)
                throw InputError(c, std::string(side) + ": an access-pattern dimension is [step, num]");
              x.ap.push_back({p[0], p[1]});
            }
            (std::string(side) == "ins" ? e.ins : e.outs).push_back(x);
          }
      } else {
        throw InputError(c, "unknown entry (text, texts, ints, int_lists or ins/outs)");
      }
    } catch (const json::exception &ex) {
      throw InputError(c, std::string("malformed entry: ") + ex.what());
    }
    pool.entries.push_back(std::move(e));
  }
  return pool;
}

} // namespace neuronsim::isa
