// Per-rank data of a multi-core run (ranks.hpp).
#include "neuronsim/sim/ranks.hpp"

#include <algorithm>
#include <filesystem>

#include "neuronsim/error.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

bool has_rank_dirs(const std::string &dir, int ranks) {
  if (dir.empty() || ranks <= 1) return false;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  bool any = false;
  for (const auto &e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() < 5 || n.compare(0, 4, "rank") != 0 || !e.is_directory()) continue;
    if (n.find_first_not_of("0123456789", 4) != std::string::npos) continue;
    any = true;
    if (n.size() > 9 || std::stoi(n.substr(4)) >= ranks || (n.size() > 5 && n[4] == '0'))
      throw InputError({e.path().string(), -1, "", ""},
                       "the run has " + std::to_string(ranks) + " ranks: per-rank folders are rank0 to rank" +
                           std::to_string(ranks - 1));
  }
  if (!any) return false;
  for (int r = 0; r < ranks; ++r) {
    const fs::path d = fs::path(dir) / ("rank" + std::to_string(r));
    if (!fs::is_directory(d, ec))
      throw InputError({d.string(), -1, "", ""},
                       "no such directory: the run has " + std::to_string(ranks) +
                           " ranks and the folder has per-rank folders, one for each rank");
  }
  return true;
}

InputSpec rank_inputs(const isa::Program &p, const InputSpec &spec, int rank, int ranks) {
  InputSpec r = spec;
  if (!has_rank_dirs(spec.dir, ranks)) return r;
  const fs::path d = fs::path(spec.dir) / ("rank" + std::to_string(rank));
  for (const auto &t : p.tensors) {
    if (!t.is_input() || !t.is_dram() || spec.files.count(t.name) || spec.arrays.count(t.name)) continue;
    const fs::path f = d / tensor_file_name(t.name);
    std::error_code ec;
    if (fs::exists(f, ec)) r.files[t.name] = f.string();
  }
  return r;
}

ExpectSpec rank_expect(const ExpectSpec &e, int rank, int ranks) {
  ExpectSpec r = e;
  if (has_rank_dirs(e.dir, ranks)) r.dir = (fs::path(e.dir) / ("rank" + std::to_string(rank))).string();
  return r;
}

std::string rank_outdir(const std::string &outdir, int rank, int ranks) {
  if (ranks <= 1 || outdir.empty()) return outdir;
  return (fs::path(outdir) / ("rank" + std::to_string(rank))).string();
}

std::vector<std::pair<int, std::string>> saved_input_files(const isa::Program &p, const std::string &dir) {
  std::vector<std::pair<int, std::string>> files;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (t.is_input() && t.is_dram()) files.emplace_back(static_cast<int>(i), (fs::path(dir) / tensor_file_name(t.name)).string());
  }
  return files;
}

} // namespace neuronsim::sim
