// Folders of bundle streams read back: a multi-core folder (cores.json and one stream folder per core, as
// `neuronsim encode --cores` writes it, encode_kernel.hpp) and the files of a stream folder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"

namespace neuronsim::sim {

// The multi-core bundle folder's index file and its format tag.
inline constexpr const char *kCoresManifest = "cores.json";
inline constexpr const char *kCoresFormat = "neuronsim-core-bundles";
// Reads a multi-core bundle folder (cores.json): InputError naming the folder for a missing core<i> (or one
// cores.json does not list), a core whose streams are of another generation, or a malformed cores.json.
// `lnc` receives its cores per logical core; `gen` its generation.
std::vector<isa::Program> read_core_bundles(const std::string &dir, int *lnc, isa::CoreGen *gen);
// The files of a bundle-stream folder (manifest.json and every <engine>.bin), by name.
std::map<std::string, std::vector<uint8_t>> read_bundle_files(const std::string &dir);

} // namespace neuronsim::sim
