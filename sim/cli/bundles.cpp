// The bundle-stream commands: `neuronsim encode` (BIR -> per-engine 64-byte bundle streams, one set per core
// with --cores), `neuronsim disasm` (bundles -> one readable line each) and `neuronsim validate` (the streams
// run against the BIR they came from, and linted).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/session.hpp"

#include "cli.hpp"

namespace fs = std::filesystem;

namespace neuronsim::cli {

namespace {

const char *kEncodeHelp = R"(usage: neuronsim encode KERNEL --gen v2|v3|v4 -o DIR [--arch NAME|FILE.json]

Lowers the BIR kernel (loops unrolled, tensors placed, the scheduler's dependencies written as semaphores) and
writes one <engine>.bin stream of 64-byte bundles per engine plus DIR/manifest.json (docs/bundle-layout.md).
  KERNEL     a .json BIR file or a workload directory holding one *.bir.json
  --gen      the NeuronCore generation to encode for: v2 (trn1), v3 (trn2), v4 (trn3)
  -o DIR     output directory; created if missing. A non-empty DIR is refused unless it holds a previous
             `neuronsim encode` output (manifest.json and *.bin only), which is replaced.
  --arch     the architecture whose scheduler (DMA queues) is lowered for (default: the generation's)
  --cores N  --lnc L   one bundle set per physical core (docs/multicore.md): core i lowered with shard id
             i % L and rank i / L into DIR/core<i>/, indexed by DIR/cores.json; `neuronsim run DIR` runs them
             on N cores, `validate` compares each core with the BIR's run on N cores
)";

const char *kDisasmHelp = R"(usage: neuronsim disasm FILE_OR_DIR [--gen v2|v3|v4]

One line per 64-byte bundle: engine, byte offset, instruction name (from the manifest), the 64 raw bytes as 16
little-endian words' bytes in file order, then the decoded fields (opcode word, form, every field of the form).
  FILE_OR_DIR  a bundle directory (manifest.json) or one <engine>.bin stream
  --gen        generation of a lone .bin file (default: the manifest beside it); overrides the manifest's
)";

const char *kValidateHelp = R"(usage: neuronsim validate --bir KERNEL --bundles DIR [options]

Runs the BIR kernel and the bundle streams of DIR on the same model with the same inputs, compares what every
instruction wrote (instructions matched by name, BIR program order) and every output tensor, and lints the
streams: header words, opcodes, bytes that decode to no op, ALU bytes that decode to another op than the BIR's
(a comparison written as its L1 ordinal, 24/25 on the ALU path). Prints the findings, then one summary line.
  --bir KERNEL            the BIR the streams were encoded from (.json file or workload directory)
  --bundles DIR           manifest.json + <engine>.bin
  --input NAME=FILE.npy   data for input tensor NAME (repeatable); --inputs DIR: DIR/<tensor>.npy
                          (default: the workload's inputs/); missing inputs are generated from the tensor name
  --rtol R --atol A       tolerance for the comparisons (default 0, 0: both sides run the same semantics)
  --arch NAME|FILE.json   default: the streams' generation's
  --cores N --lnc L       a multi-core bundle folder (encode --cores): both run on its N cores and each core is
                          compared (default and required: the folder's cores.json); inputs per rank as for run
exit codes: 0 they agree, 1 divergence or lint error, 2 usage, 3 invalid input
)";

} // namespace

int cmd_encode(const std::vector<std::string> &a) {
  std::string kernel, out, arch;
  std::vector<std::pair<std::string, std::string>> sets;
  std::optional<isa::CoreGen> gen;
  int cores = 0, lnc = 0;  // 0: not given (one bundle set)
  const std::vector<Option> options = {
      {"--gen", "v2|v3|v4", "the generation encoded for",
       [&](const std::string &v) { gen = sim::parse_gen(v, "--gen"); }},
      {"-o", "DIR", "the output folder", [&](const std::string &v) { out = need_path("-o", v); }},
      {"--outdir", "DIR", "the same as -o", [&](const std::string &v) { out = need_path("--outdir", v); }},
      {"--arch", "NAME|FILE.json", "the architecture lowered for",
       [&](const std::string &v) { arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over --arch (repeatable)",
       [&](const std::string &v) { sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--cores", "N", "one bundle set per core",
       [&](const std::string &v) { cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "cores per logical core", [&](const std::string &v) { lnc = parse_cores("--lnc", v); }},
  };
  if (!parse_options(a, options, [&](const std::string &o) {
        if (o.empty())
          throw UsageError("KERNEL is an empty path");
        if (!kernel.empty())
          throw UsageError("more than one KERNEL given ('" + kernel + "', '" + o + "')");
        kernel = o;
      })) {
    std::cout << kEncodeHelp;
    return 0;
  }
  if (kernel.empty()) throw UsageError("encode needs a KERNEL (try neuronsim encode --help)");
  if (!gen) throw UsageError("encode needs --gen v2|v3|v4");
  if (out.empty()) throw UsageError("encode needs -o DIR");
  if (arch.empty()) arch = sim::arch_for_gen(*gen);
  arch = sim::with_arch_sets(arch, sets, "--set");
  const sim::Kernel k = sim::load_kernel(kernel, sim::KernelForms::BirOnly);
  print_warnings(k.program);
  if (cores > 0 || lnc > 0) {  // one bundle set per core, as `run --cores N --lnc L` counts them
    const int l = std::max(lnc, 1), n = std::max(cores, l);
    const std::vector<sim::EncodeSummary> es = sim::encode_kernel_cores(k, *gen, arch, out, n, l);
    std::cout << "neuronsim encode: " << k.label << " -> " << out << " (" << isa::core_gen_name(*gen) << ", arch "
              << arch << ", " << n << " cores, LNC=" << l << ")\n";
    for (size_t c = 0; c < es.size(); ++c) {
      const sim::StreamFormStats &st = es[c].stream_form;
      std::cout << "  core" << c << " (shard " << c % static_cast<size_t>(l) << ", rank " << c / static_cast<size_t>(l)
                << "): " << st.instructions << " instructions: " << (st.instructions - st.carriers) << " dynamic + "
                << st.carriers << " sync carriers (" << st.waits_dropped << " implied waits dropped)\n";
      for (const auto &[file, count] : es[c].manifest.at("files").items())
        std::cout << "    " << file << " " << count.get<int64_t>() << " bundles\n";
    }
    return 0;
  }
  const sim::EncodeSummary e = sim::encode_kernel(k, *gen, arch, out);
  const sim::StreamFormStats &st = e.stream_form;
  const nlohmann::json &m = e.manifest;
  std::cout << "neuronsim encode: " << k.label << " -> " << out << " (" << isa::core_gen_name(*gen) << ", arch "
            << arch << ")\n";
  std::cout << "  " << st.instructions << " instructions: " << (st.instructions - st.carriers)
            << " dynamic + " << st.carriers << " sync carriers (" << st.waits_dropped
            << " implied waits dropped)\n";
  for (const auto &[file, count] : m.at("files").items())
    std::cout << "  " << file << " " << count.get<int64_t>() << " bundles\n";
  return 0;
}

int cmd_disasm(const std::vector<std::string> &a) {
  std::string target;
  std::optional<isa::CoreGen> gen;
  const std::vector<Option> options = {
      {"--gen", "v2|v3|v4", "the generation of a lone .bin file",
       [&](const std::string &v) { gen = sim::parse_gen(v, "--gen"); }},
  };
  if (!parse_options(a, options, [&](const std::string &o) {
        if (o.empty())
          throw UsageError("FILE_OR_DIR is an empty path");
        if (!target.empty())
          throw UsageError("more than one FILE_OR_DIR given");
        target = o;
      })) {
    std::cout << kDisasmHelp;
    return 0;
  }
  if (target.empty()) throw UsageError("disasm needs a FILE_OR_DIR (try neuronsim disasm --help)");
  if (!fs::exists(target)) throw InputError({target, -1, "", ""}, "no such file or directory");
  const fs::path dir = fs::is_directory(target) ? fs::path(target) : fs::path(target).parent_path();
  std::vector<std::string> files;
  std::map<std::pair<std::string, size_t>, std::string> names;  // (file, bundle offset) -> instruction name
  const fs::path mpath = dir / "manifest.json";
  std::error_code mec;
  if (fs::exists(mpath, mec)) {
    const nlohmann::json m = isa::read_json_file(mpath.string(), "bundle manifest");
    if (!m.is_object()) throw InputError({mpath.string(), -1, "", ""}, "the manifest is not a JSON object");
    if (!gen && m.contains("generation")) gen = sim::parse_gen(m.at("generation").get<std::string>(), "--gen");
    if (m.contains("files"))
      for (const auto &[f, n] : m.at("files").items()) files.push_back(f), (void)n;
    if (m.contains("instructions"))
      for (const auto &ji : m.at("instructions")) {
        const size_t off = ji.value("offset", size_t(0)), n = ji.value("bundles", size_t(1));
        for (size_t k = 0; k < n; ++k)
          names[{ji.value("file", std::string()), off + 64 * k}] = ji.value("name", std::string());
      }
  } else if (fs::is_directory(target)) {
    throw InputError({mpath.string(), -1, "", ""}, "not a bundle directory: no manifest.json");
  }
  if (!fs::is_directory(target)) files = {fs::path(target).filename().string()};
  if (!gen) throw UsageError("disasm of a lone .bin file needs --gen v2|v3|v4");
  for (const auto &f : files) {
    const fs::path p = dir / f;
    if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
      throw InputError({mpath.string(), -1, "", "files"}, "stream file name '" + f + "' must be a plain file name");
    const std::vector<uint8_t> bytes = isa::read_regular_file_bytes(p.string(), isa::kMaxInputFileBytes, "bundle stream");
    const std::string engine = fs::path(f).stem().string();
    for (size_t off = 0; off + 64 <= bytes.size(); off += 64) {
      std::ostringstream os;
      os << engine << " +0x" << std::hex << std::setw(4) << std::setfill('0') << off << std::dec;
      auto it = names.find({f, off});
      if (it != names.end()) os << " " << it->second;
      os << " |";
      for (size_t k = 0; k < 64; ++k) {
        if (k % 4 == 0) os << ' ';
        os << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(bytes[off + k]) << std::dec;
      }
      os << " | " << isa::disasm_line(bytes.data() + off, *gen);
      std::cout << os.str() << "\n";
    }
    if (bytes.size() % 64)
      throw InputError({p.string(), -1, "", ""}, "truncated bundle at byte offset " +
                                                     std::to_string(bytes.size() - bytes.size() % 64) + ": " +
                                                     std::to_string(bytes.size() % 64) + " of 64 bytes");
  }
  return 0;
}

int cmd_validate(const std::vector<std::string> &a) {
  std::string bir, bundles;
  sim::ValidateOptions vo;
  const std::vector<Option> options = {
      {"--bir", "KERNEL", "the BIR the streams were encoded from",
       [&](const std::string &v) { bir = need_path("--bir", v); }},
      {"--bundles", "DIR", "the streams", [&](const std::string &v) { bundles = need_path("--bundles", v); }},
      {"--input", "NAME=FILE.npy", "data for input tensor NAME",
       [&](const std::string &v) { add_input(vo.inputs, v); }},
      {"--inputs", "DIR", "DIR/<tensor>.npy",
       [&](const std::string &v) { vo.inputs.dir = need_path("--inputs", v); }},
      {"--rtol", "R", "relative tolerance",
       [&](const std::string &v) { vo.rtol = parse_tolerance("--rtol", v); }},
      {"--atol", "A", "absolute tolerance",
       [&](const std::string &v) { vo.atol = parse_tolerance("--atol", v); }},
      {"--arch", "NAME|FILE.json", "the architecture",
       [&](const std::string &v) { vo.arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over --arch (repeatable)",
       [&](const std::string &v) { vo.arch_sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--cores", "N", "a multi-core bundle folder's cores",
       [&](const std::string &v) { vo.cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "its cores per logical core",
       [&](const std::string &v) { vo.lnc = parse_cores("--lnc", v); }},
  };
  if (!parse_options(a, options, [](const std::string &o) {
        throw UsageError("unknown argument '" + o + "' (validate takes --bir KERNEL --bundles DIR)");
      })) {
    std::cout << kValidateHelp;
    return 0;
  }
  if (bir.empty() || bundles.empty()) throw UsageError("validate needs --bir KERNEL and --bundles DIR");
  if (!vo.inputs.dir.empty()) sim::check_dir_setting(vo.inputs.dir, "--inputs");
  const sim::Kernel k = sim::load_kernel(bir, sim::KernelForms::BirOnly);
  print_warnings(k.program);
  const sim::ValidateReport r = sim::validate_kernel(k, bundles, vo);
  std::cout << sim::report_text(r);
  return r.agree ? 0 : 1;
}

} // namespace neuronsim::cli
