// Folders of bundle streams: `neuronsim encode` writing them (one core's, or one per core with cores.json),
// and reading a multi-core folder and a folder's files back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/core_needs.hpp"
#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/stream_form.hpp"

namespace neuronsim::sim {

// Puts the BIR kernel in the stream form for `arch` (to_stream_form) and writes its bundle streams for `gen`
// into `outdir` (created if missing; a non-empty folder is refused unless it holds a previous encode output,
// which is replaced).
struct EncodeSummary {
  StreamFormStats stream_form;
  nlohmann::json manifest;
};
// A kernel written for several cores is refused (check_kernel_cores with one core), its message naming the
// settings as `names` does.
EncodeSummary encode_kernel(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                            const std::string &outdir, const CoreSettingNames &names = {});
// The multi-core bundle folder's index file and its format tag.
inline constexpr const char *kCoresManifest = "cores.json";
inline constexpr const char *kCoresFormat = "neuronsim-core-bundles";
// `encode --cores N --lnc L`: the kernel lowered once per physical core i (shard i % L, rank i / L) and written as
// `outdir`/core<i>/ (each a stream folder as encode_kernel writes it), with `outdir`/cores.json {format,
// generation, arch, cores, lnc, dirs}. A non-empty `outdir` is refused unless it is a previous multi-core encode
// output (cores.json and core<i>/ folders of streams only), which is replaced. One summary per core.
std::vector<EncodeSummary> encode_kernel_cores(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                                               const std::string &outdir, int cores, int lnc,
                                               const CoreSettingNames &names = {});
// Reads a multi-core bundle folder (cores.json): InputError naming the folder for a missing core<i> (or one
// cores.json does not list), a core whose streams are of another generation, or a malformed cores.json.
// `lnc` receives its cores per logical core; `gen` its generation.
std::vector<isa::Program> read_core_bundles(const std::string &dir, int *lnc, isa::CoreGen *gen);
// The files of a bundle-stream folder (manifest.json and every <engine>.bin), by name.
std::map<std::string, std::vector<uint8_t>> read_bundle_files(const std::string &dir);

} // namespace neuronsim::sim
