// `neuronsim validate`: the BIR and its bundle streams, run side by side (validate.hpp).
#include "neuronsim/sim/validate.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/ranks.hpp"
#include "neuronsim/sim/run_settings.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stream_form.hpp"

namespace neuronsim::sim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string hex(uint64_t v, int digits = 2) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setfill('0') << std::setw(digits) << v;
  return os.str();
}

std::string num(double v) {
  std::ostringstream os;
  os << std::setprecision(9) << v;
  return os.str();
}

// Where an instruction sits in the streams, for messages: "DVE #3 (DVE.bin +0xc0, opcode 0x43)".
struct StreamPos {
  std::string engine, file;
  int index = 0;        // position among the instructions of its engine stream
  size_t offset = 0;    // byte offset of its first bundle
  int opcode = -1;      // first bundle's opcode byte
  std::string type;
  std::string where() const {
    std::string s = engine + " #" + std::to_string(index) + " (" + file + " +" + hex(offset, 4);
    if (opcode >= 0) s += ", opcode " + hex(static_cast<uint64_t>(opcode));
    return s + ") " + type;
  }
};

struct Manifest {
  isa::CoreGen gen = isa::CoreGen::V3;
  isa::CodecOptions codec;
  isa::Program tensors_only;  // the placement, for decoding addresses, and the block table (branch targets)
  isa::BundlePool pool;       // the stream pool (names and lists no bundle holds inline)
  struct Entry {
    std::string name, type, engine, file;
    size_t offset = 0, bundles = 0;
    bool has_offset = false;
  };
  std::vector<Entry> insts;
};

Manifest read_manifest(const std::string &dir) {
  const std::string mpath = (fs::path(dir) / "manifest.json").string();
  const ErrorContext ctx{mpath, -1, "", ""};
  std::ifstream is(mpath);
  if (!is) throw InputError(ctx, "cannot open the bundle manifest");
  json m;
  try {
    is >> m;
    Manifest out;
    bool found = false;
    for (isa::CoreGen g : isa::kCoreGens)
      if (m.at("generation").get<std::string>() == isa::core_gen_name(g)) out.gen = g, found = true;
    if (!found) throw InputError(ctx, "unknown generation");
    if (m.value("update_mode_reading", std::string("lut")) == "raw")
      out.codec.update_mode = isa::UpdateModeReading::Raw;
    out.tensors_only.file = dir;
    for (const json &jt : m.at("tensors")) {
      isa::Tensor t;
      t.name = jt.at("name").get<std::string>();
      t.set_name = jt.value("set_name", "");
      t.kind = isa::parse_enum<isa::TensorKind>(jt.at("kind").get<std::string>(), ctx);
      t.mem = isa::parse_enum<isa::MemoryType>(jt.at("memory").get<std::string>(), ctx);
      t.dtype = isa::parse_dtype(jt.at("dtype").get<std::string>(), ctx);
      t.shape = jt.at("shape").get<std::vector<int64_t>>();
      t.partitions = jt.at("partitions").get<int64_t>();
      t.bytes_per_partition = jt.at("bytes_per_partition").get<int64_t>();
      t.addr = jt.at("addr").get<int64_t>();
      t.base_partition = jt.at("base_partition").get<int64_t>();
      t.bank = jt.value("bank", int64_t(0));
      t.allocated = jt.value("allocated", false);
      out.tensors_only.tensors.push_back(t);
    }
    if (m.contains("blocks"))
      for (const json &jb : m.at("blocks"))
        out.tensors_only.blocks.push_back({jb.at("name").get<std::string>(), jb.at("first").get<size_t>()});
    if (m.contains("pool")) out.pool = isa::pool_from_json(m.at("pool").dump(), out.tensors_only, ctx);
    for (const json &ji : m.at("instructions")) {
      Manifest::Entry e;
      e.name = ji.value("name", "");
      e.type = ji.at("type").get<std::string>();
      e.engine = ji.at("engine").get<std::string>();
      e.file = ji.value("file", e.engine + ".bin");
      e.has_offset = ji.contains("offset");
      if (e.has_offset) e.offset = ji.at("offset").get<size_t>();
      e.bundles = ji.at("bundles").get<size_t>();
      out.insts.push_back(e);
    }
    return out;
  } catch (const json::exception &e) {
    throw InputError(ctx, std::string("invalid manifest: ") + e.what());
  }
}

// An AluOp field that decodes to another op than the BIR's. spec 000: the wire bytes are not the L1 ordinals
// (comparisons are reordered: is_gt is L1 20 but wire 0x13; 0x14 is is_ge), and average/elemwise_mul (L1 24/25)
// have no ALU byte at all.
template <class T>
void alu_lint(const char *key, const T &got, const T &want, isa::CoreGen gen, const std::string &where,
              std::vector<std::string> &out) {
  if constexpr (std::is_same_v<T, isa::AluOp>) {
    if (got == want) return;
    const auto wire = isa::alu_wire(got, gen);
    const unsigned byte = wire ? (*wire & 0xFFu) : 0u;
    const int ord = static_cast<int>(want);
    const auto want_wire = isa::alu_wire(want, gen);
    std::string s = "lint: " + where + " field " + key + ": ALU byte " + hex(byte) + " decodes to " +
                    isa::alu_name(got) + " but the BIR says " + isa::alu_name(want);
    s += want_wire ? " (wire " + hex(*want_wire & 0xFFu) + ")" : std::string(" (no ALU byte)");
    if (static_cast<int>(byte) == ord) {
      if (want == isa::AluOp::average || want == isa::AluOp::elemwise_mul)
        s += "; " + std::to_string(ord) + " is its L1 ordinal: average/elemwise_mul (24/25) have no ALU byte and "
                                          "must not reach the ALU path (spec 000)";
      else
        s += std::string("; ") + hex(byte) + " is " + isa::alu_name(want) + "'s L1 ordinal, not its wire byte" +
             (ord >= 18 && ord <= 23 ? " (comparison written as its L1 ordinal)" : "") +
             " (spec 000)";
    } else if (byte == 24 || byte == 25) {
      s += "; 24/25 on the ALU path are the L1 ordinals of average/elemwise_mul, which have no ALU byte (spec 000)";
    }
    out.push_back(s);
  } else {
    (void)key, (void)got, (void)want, (void)gen, (void)where, (void)out;
  }
}

void lint_alu_fields(const isa::Inst &got, const isa::Inst &want, isa::CoreGen gen, const std::string &where,
                     std::vector<std::string> &out) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  alu_lint(key, got.f.member, want.f.member, gen, where, out);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
}

struct Lint {
  std::vector<std::string> lines;
  int errors = 0;
  std::map<std::string, StreamPos> pos;  // by instruction name
};

// Walks every bundle the manifest names: header word, opcode against the BIR's, decodability, ALU bytes.
Lint lint_streams(const std::string &dir, const Manifest &m, const isa::Program &expected) {
  Lint L;
  std::map<std::string, const isa::Inst *> want;
  for (const auto &in : expected.insts) want[in.name] = &in;
  std::map<std::string, std::vector<uint8_t>> files;
  std::map<std::string, int> per_file_index;
  std::map<std::string, size_t> cursor;
  auto add = [&](const std::string &s) {
    L.lines.push_back(s);
    ++L.errors;
  };
  for (size_t i = 0; i < m.insts.size(); ++i) {
    const auto &e = m.insts[i];
    auto it = files.find(e.file);
    if (it == files.end()) {
      std::ifstream is(fs::path(dir) / e.file, std::ios::binary);
      std::vector<uint8_t> bytes;
      if (is) bytes.assign(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
      else add("lint: " + e.file + ": cannot open the stream the manifest names");
      it = files.emplace(e.file, std::move(bytes)).first;
    }
    const auto &bytes = it->second;
    size_t &cur = cursor[e.file];
    if (e.has_offset) cur = e.offset;
    StreamPos sp;
    sp.engine = e.engine, sp.file = e.file, sp.index = per_file_index[e.file]++, sp.offset = cur, sp.type = e.type;
    if (cur < bytes.size()) sp.opcode = bytes[cur];
    const std::string where = sp.where() + " '" + e.name + "'";
    L.pos[e.name] = sp;

    const isa::Inst *exp = nullptr;
    if (auto w = want.find(e.name); w != want.end()) exp = w->second;
    std::vector<isa::Bundle> exp_bundles;
    if (exp) {
      try {
        exp_bundles = isa::encode(*exp, expected, m.gen, m.codec);
      } catch (const Error &) {
        // The BIR instruction has no bundle form (e.g. average on the ALU path); the decode below still
        // compares its fields.
      }
    }
    std::optional<isa::InstructionType> hint;
    try {
      hint = isa::parse_inst_type(e.type);
    } catch (const Error &ex) {
      add("lint: " + where + ": " + ex.message());
    }
    isa::DecodeState st;
    bool ok = true;
    for (size_t k = 0; k < e.bundles && ok; ++k, cur += 64) {
      const std::string at = e.file + " +" + hex(cur, 4);
      if (cur + 64 > bytes.size()) {
        add("lint: " + where + ": stream ends before bundle " + std::to_string(k) + " at " + at);
        ok = false;
        break;
      }
      const uint8_t *b = bytes.data() + cur;
      const unsigned word = b[0] | (b[1] << 8);
      // spec 003 INV-1: the header word is (0x10 << 8) | opcode, followed by 0x0000.
      if (b[1] != 0x10 || b[2] != 0 || b[3] != 0) {
        add("lint: " + where + ": bundle at " + at + ": header word " + hex(word, 4) + " " +
            hex(static_cast<unsigned>(b[2] | (b[3] << 8)), 4) + " is not (0x10 << 8) | opcode, 0x0000 (spec 003 INV-1)");
        ok = false;
        break;
      }
      if (k < exp_bundles.size() && b[0] != exp_bundles[k][0])
        add("lint: " + where + ": bundle at " + at + ": opcode " + hex(b[0]) + " where the BIR's " +
            isa::inst_type_name(exp->type) + " encodes as " + hex(exp_bundles[k][0]));
      try {
        ErrorContext ectx{at, static_cast<long>(i), e.name, ""};
        const int eng = static_cast<int>(isa::parse_enum<isa::Engine>(e.engine, ectx));
        auto d = isa::decode(b, m.gen, eng, m.tensors_only, &st, hint, m.codec, ectx, &m.pool);
        if (d.complete && exp) {
          const size_t before = L.lines.size();
          lint_alu_fields(d.inst, *exp, m.gen, where, L.lines);
          L.errors += static_cast<int>(L.lines.size() - before);
        }
      } catch (const Error &ex) {
        std::string msg = ex.message();
        if (msg.find("maps to no AluOpType") != std::string::npos) msg += " (a byte no op maps to)";
        add("lint: " + where + ": bundle at " + at + " field '" + ex.context().field + "': " + msg);
        ok = false;
      }
    }
    if (!ok) cur = (e.has_offset ? e.offset : cur) + 64 * e.bundles;
  }
  return L;
}

// What one dynamic instruction wrote: per output access, the raw bytes and their values.
// Beyond a budget only a hash of the bytes is kept (the instruction is still compared, without an element).
struct Written {
  int tensor = -1;
  int64_t free = 1, count = 0;
  uint64_t hash = 0;          // FNV-1a of the raw bytes
  std::vector<uint8_t> raw;   // empty once over budget
  std::vector<float> vals;
};
struct Capture {
  std::vector<std::vector<Written>> by_seq;
  std::vector<std::string> names;
  int64_t kept_bytes = 0;
};
constexpr int64_t kCaptureBudget = int64_t(256) << 20;  // bytes of copies per run

uint64_t fnv1a(const std::vector<uint8_t> &b) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

RunOptions capture_options(const std::string &arch, Capture &cap) {
  RunOptions o;
  o.arch = arch;
  o.after_instruction = [&cap](const ScheduledInst &si, const engines::Memory &mem) {
    // A program with data-dependent control is scheduled when it runs: the list grows with it.
    if (static_cast<size_t>(si.d.seq) >= cap.by_seq.size()) cap.by_seq.resize(static_cast<size_t>(si.d.seq) + 1);
    auto &w = cap.by_seq[static_cast<size_t>(si.d.seq)];
    w.clear();
    for (const auto &a : si.d.outs) {
      if (a.tensor < 0) continue;
      Written x;
      x.tensor = a.tensor;
      x.free = a.free_elements();
      x.count = a.partitions() * a.free_elements();
      x.raw.resize(static_cast<size_t>(x.count * isa::dtype_size(a.dtype)));
      mem.read_raw(a, x.raw.data());
      x.hash = fnv1a(x.raw);
      const int64_t cost = static_cast<int64_t>(x.raw.size()) + 4 * x.count;
      if (cap.kept_bytes + cost <= kCaptureBudget) {
        cap.kept_bytes += cost;
        x.vals.resize(static_cast<size_t>(x.count));
        mem.read_f32(a, x.vals.data());
      } else {
        x.raw = {};
      }
      w.push_back(std::move(x));
    }
  };
  return o;
}

bool close(float got, float want, double rtol, double atol) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (got == want) return true;
  return std::fabs(static_cast<double>(got) - want) <= atol + rtol * std::fabs(static_cast<double>(want));
}

} // namespace

namespace {

// Per instruction, in the BIR's program order: the first whose written data differ ("" when none). `prefix` names
// the core in a multi-core report. Counts the instructions compared and those the bundles have no namesake of.
std::string compare_instructions(const isa::Program &bir, const Capture &cb, const isa::Program &sp,
                                 const Capture &cs, const Schedule &ss, const Lint &L, const ValidateOptions &opt,
                                 const std::string &prefix, int64_t &compared, int64_t &missing) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < ss.insts.size(); ++i) by_name[ss.insts[i].d.inst->name] = i;
  for (size_t i = 0; i < cb.by_seq.size(); ++i) {
    const auto &want = cb.by_seq[i];
    if (want.empty()) continue;
    const std::string &name = cb.names[i];
    auto it = by_name.find(name);
    if (it == by_name.end() || it->second >= cs.by_seq.size()) {
      ++missing;
      continue;
    }
    const auto &got = cs.by_seq[it->second];
    ++compared;
    std::string where = name;
    if (auto p = L.pos.find(name); p != L.pos.end()) where = p->second.where() + " '" + name + "'";
    where = prefix + where;
    if (got.size() != want.size())
      return "first divergence after " + where + ": it wrote " + std::to_string(got.size()) +
             " outputs, the BIR's " + std::to_string(want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      const Written &g = got[o], &w = want[o];
      const std::string tname = bir.tensors[static_cast<size_t>(w.tensor)].name;
      if (g.hash == w.hash && g.count == w.count && sp.tensors[static_cast<size_t>(g.tensor)].name == tname)
        continue;
      if (sp.tensors[static_cast<size_t>(g.tensor)].name != tname || g.count != w.count)
        return "first divergence after " + where + ": it writes '" + sp.tensors[static_cast<size_t>(g.tensor)].name +
               "' (" + std::to_string(g.count) + " elements), the BIR '" + tname + "' (" + std::to_string(w.count) +
               ")";
      if (g.vals.empty() || w.vals.empty())
        return "first divergence after " + where + ": outs[" + std::to_string(o) + "] '" + tname +
               "' bytes differ (not kept: over the capture budget)";
      for (size_t e = 0; e < w.vals.size(); ++e)
        if (!close(g.vals[e], w.vals[e], opt.rtol, opt.atol)) {
          const int64_t fr = std::max<int64_t>(1, w.free);
          return "first divergence after " + where + ": outs[" + std::to_string(o) + "] '" + tname + "' element [" +
                 std::to_string(static_cast<int64_t>(e) / fr) + ", " + std::to_string(static_cast<int64_t>(e) % fr) +
                 "] of the access: bundles wrote " + num(g.vals[e]) + ", the BIR " + num(w.vals[e]);
        }
    }
  }
  return "";
}

// Every output tensor of the BIR against the bundles' ("" when all agree). `prefix` names the rank.
std::string compare_output_tensors(const isa::Program &bir, const engines::Memory &bm, const isa::Program &sp,
                                   const engines::Memory &sm, const ValidateOptions &opt, const std::string &prefix,
                                   int64_t &outputs) {
  for (size_t t = 0; t < bir.tensors.size(); ++t) {
    if (!bir.tensors[t].is_output()) continue;
    const std::string name = prefix + bir.tensors[t].name;
    const int st = sp.find_tensor(bir.tensors[t].name);
    if (st < 0) return "output '" + name + "' is not a tensor of the bundles";
    ++outputs;
    const auto w = tensor_f32(bir, bm, static_cast<int>(t));
    const auto g = tensor_f32(sp, sm, st);
    if (w.size() != g.size())
      return "output '" + name + "' has " + std::to_string(g.size()) + " elements in the bundles, " +
             std::to_string(w.size()) + " in the BIR";
    for (size_t e = 0; e < w.size(); ++e)
      if (!close(g[e], w[e], opt.rtol, opt.atol))
        return "output '" + name + "'[" + std::to_string(e) + "]: bundles " + num(g[e]) + ", BIR " + num(w[e]);
  }
  return "";
}

void summarize(ValidateReport &R, bool ran, int64_t compared, int64_t outputs) {
  R.agree = R.lint_errors == 0 && R.divergence.empty() && ran;
  if (R.agree) {
    R.summary = "validate: OK: the bundles agree with the BIR (" + std::to_string(compared) + " instructions and " +
                std::to_string(outputs) + " outputs compared, no lint findings)";
  } else {
    std::string first = !R.lint.empty() ? R.lint.front().substr(6) : R.divergence;
    if (first.empty()) first = R.notes.empty() ? "the bundles did not run" : R.notes.front();
    R.summary = "validate: DIFFER: " + first + " [" + std::to_string(R.lint_errors) + " lint finding(s)" +
                (!ran ? ", bundles not run" : R.divergence.empty() ? ", data agree" : ", data diverge") + "]";
  }
}

} // namespace

ValidateReport validate_bundles(const isa::Program &bir, const std::string &dir, const ValidateOptions &opt) {
  ValidateReport R;
  const Manifest m = read_manifest(dir);
  const std::string arch =
      with_arch_sets(opt.arch.empty() ? arch_for_gen(m.gen) : opt.arch, opt.arch_sets, "--set");
  const engines::ArchParams ap = engines::load_arch(arch);

  // The BIR as `neuronsim encode` would write it: what each bundle should carry.
  // (with data-dependent control: along the path these inputs take, as `encode` lowers it)
  const isa::Program expected = to_stream_form(bir, ap, {}, nullptr, &opt.inputs);
  Lint L = lint_streams(dir, m, expected);
  R.lint = L.lines;
  R.lint_errors = L.errors;

  // Run 1: the BIR.
  Capture cb;
  Simulator sb(bir, capture_options(arch, cb));
  cb.by_seq.resize(sb.schedule().insts.size());
  load_inputs(bir, sb.memory(), opt.inputs);
  const RunResult rb = sb.run();
  cb.names = dynamic_names(bir, sb.schedule());  // after the run: a data-dependent schedule is built by it
  cb.by_seq.resize(sb.schedule().insts.size());

  // Run 2: the streams (skipped when they do not decode: the lint lines say why).
  std::optional<isa::Program> sp;
  try {
    sp = isa::read_bundle_dir(dir);
  } catch (const Error &e) {
    R.notes.push_back("bundle run skipped: the streams do not decode (" + e.message() + ")");
  }
  int64_t compared = 0, outputs = 0;
  if (sp) {
    Capture cs;
    Simulator ss(*sp, capture_options(arch, cs));
    cs.by_seq.resize(ss.schedule().insts.size());
    load_inputs(*sp, ss.memory(), opt.inputs);
    std::optional<RunResult> rs;
    try {
      rs = ss.run();
    } catch (const SimulationError &e) {
      R.divergence = "the bundle run failed: " + e.message();
    }
    cs.by_seq.resize(ss.schedule().insts.size());
    if (rs) {
      R.notes.push_back("simulated time: BIR " + num(rb.total_ns) + " ns, bundles " + num(rs->total_ns) + " ns");
      int64_t missing = 0;
      R.divergence = compare_instructions(bir, cb, *sp, cs, ss.schedule(), L, opt, "", compared, missing);
      if (missing) R.notes.push_back(std::to_string(missing) + " BIR instructions have no namesake in the bundles");
      if (R.divergence.empty())
        R.divergence = compare_output_tensors(bir, sb.memory(), *sp, ss.memory(), opt, "", outputs);
    }
  }
  summarize(R, sp.has_value(), compared, outputs);
  return R;
}

ValidateReport validate_device_bundles(const isa::Program &bir, const std::string &dir, int cores, int lnc,
                                       const ValidateOptions &opt) {
  ValidateReport R;
  const size_t n = static_cast<size_t>(cores);
  const int ranks = cores / lnc;
  auto core_dir = [&](size_t i) { return (fs::path(dir) / ("core" + std::to_string(i))).string(); };
  std::vector<Manifest> ms;
  for (size_t i = 0; i < n; ++i) ms.push_back(read_manifest(core_dir(i)));
  const std::string arch =
      with_arch_sets(opt.arch.empty() ? arch_for_gen(ms[0].gen) : opt.arch, opt.arch_sets, "--set");
  const engines::ArchParams ap = engines::load_arch(arch);

  // Each core's streams against the BIR lowered for that core (its shard and rank), as `encode --cores` does.
  std::vector<Lint> lints;
  for (size_t i = 0; i < n; ++i) {
    StreamFormOptions lo;
    lo.shard = static_cast<int64_t>(i) % lnc;
    lo.rank = static_cast<int64_t>(i) / lnc;
    // (with data-dependent control: along the path the core's rank's inputs take, as for one core)
    const InputSpec in = rank_inputs(bir, opt.inputs, static_cast<int>(i) / lnc, ranks);
    const isa::Program expected = to_stream_form(bir, ap, lo, nullptr, &in);
    lints.push_back(lint_streams(core_dir(i), ms[i], expected));
    for (const auto &l : lints.back().lines) {
      // "lint: X" -> "lint: core<i>: X" (the summary quotes the first finding after its "lint: ")
      const std::string tag = "core" + std::to_string(i) + ": ";
      R.lint.push_back(l.rfind("lint: ", 0) == 0 ? "lint: " + tag + l.substr(6) : tag + l);
    }
    R.lint_errors += lints.back().errors;
  }

  // The inputs of rank r (rank_inputs: DIR/rank<r>/ per tensor when present), loaded into both devices.
  auto rank_spec = [&](const isa::Program &p, int r) { return rank_inputs(p, opt.inputs, r, ranks); };
  RunOptions base;
  base.arch = arch;

  // Run 1: the BIR on `cores` cores.
  std::vector<Capture> cb(n);
  Device db(bir, base, cores, lnc);
  for (size_t i = 0; i < n; ++i) {
    db.set_after_instruction(static_cast<int>(i), capture_options(arch, cb[i]).after_instruction);
    cb[i].by_seq.resize(db.core(static_cast<int>(i)).schedule().insts.size());
  }
  for (int r = 0; r < ranks; ++r) load_inputs(bir, db.rank_memory(r), rank_spec(bir, r));
  const DeviceResult rb = db.run();
  for (size_t i = 0; i < n; ++i)  // after the run: a data-dependent schedule is built by it
    cb[i].names = dynamic_names(bir, db.core(static_cast<int>(i)).schedule());

  // Run 2: core i's streams on core i.
  std::vector<isa::Program> sp;
  try {
    for (size_t i = 0; i < n; ++i) sp.push_back(isa::read_bundle_dir(core_dir(i)));
  } catch (const Error &e) {
    R.notes.push_back("bundle run skipped: the streams of core" + std::to_string(sp.size()) + " do not decode (" +
                      e.message() + ")");
    sp.clear();
  }
  int64_t compared = 0, outputs = 0;
  if (!sp.empty()) {
    std::vector<const isa::Program *> progs;
    for (const auto &p : sp) progs.push_back(&p);
    std::vector<Capture> cs(n);
    Device ds(progs, base, lnc);
    for (size_t i = 0; i < n; ++i) {
      ds.set_after_instruction(static_cast<int>(i), capture_options(arch, cs[i]).after_instruction);
      cs[i].by_seq.resize(ds.core(static_cast<int>(i)).schedule().insts.size());
    }
    for (int r = 0; r < ranks; ++r) load_inputs(sp[static_cast<size_t>(r * lnc)], ds.rank_memory(r), rank_spec(sp[0], r));
    std::optional<DeviceResult> rs;
    try {
      rs = ds.run();
    } catch (const SimulationError &e) {
      R.divergence = "the bundle run failed: " + e.message();
    }
    if (rs) {
      std::string per_core;
      for (size_t i = 0; i < n; ++i)
        per_core += (i ? ", " : "") + std::string("core") + std::to_string(i) + " " + num(rb.cores[i].total_ns) +
                    " / " + num(rs->cores[i].total_ns);
      R.notes.push_back("simulated time: BIR " + num(rb.total_ns) + " ns, bundles " + num(rs->total_ns) +
                        " ns (per core, BIR / bundles: " + per_core + ")");
      int64_t missing = 0;
      for (size_t i = 0; i < n && R.divergence.empty(); ++i)
        R.divergence = compare_instructions(bir, cb[i], sp[i], cs[i], ds.core(static_cast<int>(i)).schedule(),
                                            lints[i], opt, "core" + std::to_string(i) + " ", compared, missing);
      if (missing) R.notes.push_back(std::to_string(missing) + " BIR instructions have no namesake in the bundles");
      for (int r = 0; r < ranks && R.divergence.empty(); ++r)
        R.divergence = compare_output_tensors(bir, db.rank_memory(r), sp[static_cast<size_t>(r * lnc)],
                                              ds.rank_memory(r), opt,
                                              ranks > 1 ? "rank" + std::to_string(r) + "/" : "", outputs);
    }
  }
  summarize(R, !sp.empty(), compared, outputs);
  return R;
}

} // namespace neuronsim::sim
