// Bundle stream directories: one `<engine>.bin` per engine (64-byte bundles back to back, reference
// neuronx-cc/isa/instruction-bundle.md: fwrite(bundle, 1, 0x40)) plus this project's manifest.json.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace neuronsim::isa {

std::string engine_file_name(Engine e) { return std::string(enum_name(e)) + ".bin"; }

namespace {
using nlohmann::json;

Engine stream_engine(const Inst &in, const ErrorContext &ctx) {
  if (in.engine != Engine::Unassigned) return in.engine;
  const auto &engines = inst_type_info(in.type).engines;
  if (engines.empty()) throw SemanticError(ctx, "no engine given and instruction_wire.def pins none");
  return engines.front();
}

std::optional<CoreGen> gen_from_name(const std::string &s) {
  for (CoreGen g : kCoreGens)
    if (s == core_gen_name(g)) return g;
  return std::nullopt;
}
} // namespace

void write_bundle_dir(const Program &prog, CoreGen gen, const std::string &dir, const CodecOptions &opt) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(ErrorContext{dir, -1, "", ""}, "cannot create directory: " + ec.message());
  std::map<std::string, std::vector<uint8_t>> files;
  json insts = json::array();
  BundlePool pool;  // docs/bundle-layout.md "Stream pool"
  for (size_t i = 0; i < prog.insts.size(); ++i) {
    const Inst &in = prog.insts[i];
    ErrorContext ctx{prog.file, static_cast<long>(i), in.name, ""};
    const Engine e = stream_engine(in, ctx);
    const auto bundles = encode(in, prog, gen, opt, &pool);
    auto &bytes = files[engine_file_name(e)];
    const size_t offset = bytes.size();
    for (const auto &b : bundles) bytes.insert(bytes.end(), b.begin(), b.end());
    insts.push_back({{"name", in.name}, {"type", inst_type_name(in.type)}, {"engine", enum_name(e)},
                     {"file", engine_file_name(e)}, {"offset", offset}, {"bundles", bundles.size()}});
  }
  json tensors = json::array();
  for (const Tensor &t : prog.tensors)
    tensors.push_back({{"name", t.name}, {"set_name", t.set_name}, {"kind", enum_name(t.kind)},
                       {"memory", enum_name(t.mem)}, {"dtype", enum_name(t.dtype)}, {"shape", t.shape},
                       {"partitions", t.partitions}, {"bytes_per_partition", t.bytes_per_partition},
                       {"addr", t.addr}, {"base_partition", t.base_partition}, {"bank", t.bank},
                       {"allocated", t.allocated}});
  // The block table (branch targets are indices into it): each block with the instruction it starts at, in the
  // instruction order the stream keeps (a block starting at a region starts at the region's first instruction).
  std::vector<size_t> node_first(prog.body.size() + 1, prog.insts.size());
  {
    std::function<int(const Node &)> first_inst = [&](const Node &n) -> int {
      if (n.inst >= 0) return n.inst;
      for (const Node &c : n.body)
        if (const int k = first_inst(c); k >= 0) return k;
      return -1;
    };
    for (size_t k = prog.body.size(); k-- > 0;) {
      const int f = first_inst(prog.body[k]);
      node_first[k] = f >= 0 ? static_cast<size_t>(f) : node_first[k + 1];
    }
  }
  json blocks = json::array();
  for (const auto &b : prog.blocks)
    blocks.push_back({{"name", b.name}, {"first", node_first[std::min(b.first, prog.body.size())]}});
  json engines = json::object();
  for (const auto &[name, bytes] : files) engines[name] = bytes.size() / 64;
  json manifest = {{"format", "neuronsim-bundles"},
                   {"version", 1},
                   {"generation", core_gen_name(gen)},
                   {"update_mode_reading", opt.update_mode == UpdateModeReading::Lut ? "lut" : "raw"},
                   {"arch", prog.arch},
                   {"tensors", tensors},
                   {"files", engines},
                   {"blocks", blocks},
                   {"pool", json::parse(pool_to_json(pool))},
                   {"instructions", insts}};
  // Through the output rule of every file neuronsim writes (isa/file_output.hpp).
  for (const auto &[name, bytes] : files)
    write_file_atomic((fs::path(dir) / name).string(), std::string(bytes.begin(), bytes.end()));
  write_file_atomic((fs::path(dir) / "manifest.json").string(), manifest.dump(1) + "\n");
}

namespace {
Program read_bundle_dir_impl(const std::string &dir, CoreGen *gen_out, const CodecOptions &opt_in);
} // namespace

// A manifest value of the wrong JSON type (a number where a name is expected, ...) is the user's input error,
// reported with the manifest's path, not an internal error.
Program read_bundle_dir(const std::string &dir, CoreGen *gen_out, const CodecOptions &opt_in) {
  try {
    return read_bundle_dir_impl(dir, gen_out, opt_in);
  } catch (const nlohmann::json::exception &e) {
    throw InputError(ErrorContext{(std::filesystem::path(dir) / "manifest.json").string(), -1, "", ""},
                     std::string("malformed manifest: ") + e.what());
  }
}

namespace {
Program read_bundle_dir_impl(const std::string &dir, CoreGen *gen_out, const CodecOptions &opt_in) {
  namespace fs = std::filesystem;
  const std::string mpath = (fs::path(dir) / "manifest.json").string();
  // A regular file of bounded size and depth (isa/file_input.hpp), like every stream it names.
  const json m = read_json_file(mpath, "bundle manifest");
  ErrorContext mctx{mpath, -1, "", ""};
  auto need = [&](const json &j, const char *key) -> const json & {
    if (!j.is_object() || !j.contains(key)) {
      ErrorContext c = mctx;
      c.field = key;
      throw InputError(c, "missing key");
    }
    return j.at(key);
  };
  Program prog;
  prog.file = dir;
  auto gen = gen_from_name(need(m, "generation").get<std::string>());
  if (!gen) throw InputError(mctx, "unknown generation '" + m.at("generation").get<std::string>() + "'");
  if (gen_out) *gen_out = *gen;
  CodecOptions opt = opt_in;
  if (m.contains("update_mode_reading"))
    opt.update_mode = m.at("update_mode_reading") == "raw" ? UpdateModeReading::Raw : UpdateModeReading::Lut;
  prog.arch = m.value("arch", "");
  try {
    for (const json &jt : need(m, "tensors")) {
      Tensor t;
      t.name = jt.at("name").get<std::string>();
      t.set_name = jt.value("set_name", "");
      t.kind = parse_enum<TensorKind>(jt.at("kind").get<std::string>(), mctx);
      t.mem = parse_enum<MemoryType>(jt.at("memory").get<std::string>(), mctx);
      t.dtype = parse_dtype(jt.at("dtype").get<std::string>(), mctx);
      t.shape = jt.at("shape").get<std::vector<int64_t>>();
      t.partitions = jt.at("partitions").get<int64_t>();
      t.bytes_per_partition = jt.at("bytes_per_partition").get<int64_t>();
      t.addr = jt.at("addr").get<int64_t>();
      t.base_partition = jt.at("base_partition").get<int64_t>();
      t.bank = jt.value("bank", int64_t(0));
      t.allocated = jt.value("allocated", false);
      prog.tensors.push_back(t);
    }
  } catch (const json::exception &e) {
    throw InputError(mctx, std::string("bad tensor entry: ") + e.what());
  }
  // The block table and the pool (docs/bundle-layout.md "Stream directory"); both optional (version 1 streams
  // written before them have neither).
  const json &jinsts = need(m, "instructions");
  if (m.contains("blocks")) {
    const json &jb = m.at("blocks");
    if (!jb.is_array()) throw InputError(ErrorContext{mpath, -1, "", "blocks"}, "not a JSON array");
    for (size_t k = 0; k < jb.size(); ++k) {
      ErrorContext bctx{mpath, -1, "", "blocks[" + std::to_string(k) + "]"};
      if (!jb[k].is_object() || !jb[k].contains("name") || !jb[k].contains("first"))
        throw InputError(bctx, "a block is {\"name\": ..., \"first\": <instruction index>}");
      Program::Block b;
      b.name = jb[k].at("name").get<std::string>();
      b.first = jb[k].at("first").get<size_t>();
      if (b.first > jinsts.size())
        throw InputError(bctx, "block '" + b.name + "' starts at instruction " + std::to_string(b.first) + ", past the " +
                                   std::to_string(jinsts.size()) + " instructions");
      prog.blocks.push_back(b);
    }
  }
  BundlePool pool;
  if (m.contains("pool")) pool = pool_from_json(m.at("pool").dump(), prog, mctx);
  // The streams are `<engine>.bin`, one per engine (docs/bundle-layout.md "Stream directory"): a `files` entry
  // naming no engine's stream would declare bundles no engine decodes.
  std::string stream_names;
  for (const auto &e : enum_names<Engine>())
    if (e != "Unassigned") stream_names += (stream_names.empty() ? "" : ", ") + e + ".bin";
  const auto is_stream_name = [](const std::string &f) {
    const auto dot = f.rfind(".bin");
    return dot != std::string::npos && dot + 4 == f.size() && f != "Unassigned.bin" &&
           enum_from_name<Engine>(f.substr(0, dot)).has_value();
  };
  if (m.contains("files")) {
    if (!m.at("files").is_object())
      throw InputError(ErrorContext{mpath, -1, "", "files"}, "not a JSON object (engine file -> bundle count)");
    for (const auto &[name, count] : m.at("files").items())
      if (!is_stream_name(name))
        throw InputError(ErrorContext{mpath, -1, "", "files." + name},
                         "'" + name + "' is no engine's stream (the streams are " + stream_names + ")");
  }
  std::map<std::string, std::vector<uint8_t>> files;
  // Each stream is a regular file no larger than the manifest's `files` entry declares (bundles x 64 bytes).
  auto load = [&](const std::string &name) -> const std::vector<uint8_t> & {
    auto it = files.find(name);
    if (it != files.end()) return it->second;
    const std::string path = (fs::path(dir) / name).string();
    uint64_t declared_bytes = kMaxInputFileBytes;
    if (m.contains("files") && m.at("files").is_object() && m.at("files").contains(name)) {
      const json &declared = m.at("files").at(name);
      if (!declared.is_number_unsigned() || declared.get<uint64_t>() > kMaxInputFileBytes / 64)
        throw InputError(ErrorContext{mpath, -1, "", "files." + name}, "declares " + declared.dump() +
                                                                         " bundles: expected a count of at most " +
                                                                         std::to_string(kMaxInputFileBytes / 64));
      declared_bytes = declared.get<uint64_t>() * 64;
    }
    // A stream longer than declared is refused before it is read; up to 63 bytes more are allowed so that a
    // cut-off last bundle is reported as such.
    const uint64_t size = regular_file_size(path, "bundle stream");
    if (size / 64 > declared_bytes / 64)
      throw InputError(ErrorContext{path, -1, "", ""}, "holds " + std::to_string(size / 64) +
                                                           " bundles, the manifest declares " +
                                                           std::to_string(declared_bytes / 64));
    std::vector<uint8_t> bytes = read_regular_file_bytes(path, declared_bytes + 63, "bundle stream");
    if (bytes.size() % 64 != 0)
      throw InputError(ErrorContext{path, -1, "", ""},
                       "truncated bundle at byte offset " + std::to_string(bytes.size() - bytes.size() % 64) +
                           ": " + std::to_string(bytes.size() % 64) + " of 64 bytes");

    return files[name] = std::move(bytes);
  };
  std::map<std::string, size_t> cursor;
  for (size_t i = 0; i < jinsts.size(); ++i) {
    const json &ji = jinsts[i];
    ErrorContext ictx{mpath, static_cast<long>(i), ji.value("name", ""), ""};
    const InstructionType type = parse_inst_type(ji.at("type").get<std::string>(), ictx);
    const Engine eng = parse_enum<Engine>(ji.at("engine").get<std::string>(), ictx);
    const std::string fname = ji.value("file", engine_file_name(eng));
    // An instruction is decoded as its engine's bundle, from its engine's stream (a plain file name in the bundle
    // directory: no path components from the manifest).
    if (fname != engine_file_name(eng))
      throw InputError(ErrorContext{mpath, static_cast<long>(i), ji.value("name", ""), "file"},
                       "'" + fname + "' is not the stream of the instruction's engine " + enum_name(eng) + " (" +
                           engine_file_name(eng) + ")");
    if (!engine_allowed(type, eng))
      throw InputError(ErrorContext{mpath, static_cast<long>(i), ji.value("name", ""), "engine"},
                       std::string(inst_type_name(type)) + " cannot run on " + enum_name(eng) + " (it runs on " +
                           allowed_engines_text(type) + ")");
    const auto &bytes = load(fname);
    const size_t n = ji.at("bundles").get<size_t>();
    size_t &cur = cursor[fname];
    if (ji.contains("offset")) cur = ji.at("offset").get<size_t>();
    DecodeState st;
    for (size_t k = 0; k < n; ++k) {
      const std::string path = (fs::path(dir) / fname).string();
      if (cur > bytes.size() || bytes.size() - cur < 64)  // (cur + 64 would wrap for an offset near 2^64)
        throw InputError(ErrorContext{path, static_cast<long>(i), ji.value("name", ""), ""},
                         "truncated stream: bundle expected at byte offset " + std::to_string(cur) + ", file has " +
                             std::to_string(bytes.size()) + " bytes");
      ErrorContext where{path + " @" + std::to_string(cur), static_cast<long>(i), ji.value("name", ""), ""};
      auto d = decode(bytes.data() + cur, *gen, static_cast<int>(eng), prog, &st, type, opt, where, &pool);
      cur += 64;
      if (d.complete) {
        if (k + 1 != n)
          throw InputError(where, "instruction complete after " + std::to_string(k + 1) + " of " +
                                      std::to_string(n) + " bundles");
        Inst in = d.inst;
        in.name = ji.value("name", "");
        in.index = static_cast<int>(prog.insts.size());
        prog.insts.push_back(in);
        Node node;
        node.inst = in.index;
        prog.body.push_back(node);
      }
    }
    if (st.pending) throw InputError(ictx, "multi-bundle instruction left incomplete");
  }
  return prog;
}
} // namespace

} // namespace neuronsim::isa
