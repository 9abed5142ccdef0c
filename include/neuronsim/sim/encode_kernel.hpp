// `neuronsim encode`: a BIR kernel put in the stream form (stream_form.hpp) and written as bundle streams, one
// core's folder or a multi-core folder of one stream folder per core (bundle_dirs.hpp reads them back).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
// `encode --cores N --lnc L`: the kernel lowered once per physical core i (shard i % L, rank i / L) and written as
// `outdir`/core<i>/ (each a stream folder as encode_kernel writes it), with `outdir`/cores.json {format,
// generation, arch, cores, lnc, dirs}. A non-empty `outdir` is refused unless it is a previous multi-core encode
// output (cores.json and core<i>/ folders of streams only), which is replaced. One summary per core.
std::vector<EncodeSummary> encode_kernel_cores(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                                               const std::string &outdir, int cores, int lnc,
                                               const CoreSettingNames &names = {});

} // namespace neuronsim::sim
