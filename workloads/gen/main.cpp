// neuronsim_workload_gen: writes a workload folder (BIR + inputs + independent expected outputs + README).
//   neuronsim_workload_gen <name>|all --size small|full -o DIR [--bir-only]
// `all` writes DIR/<name>/ for every workload (DIR/multicore/<name>/ for those of several cores). --bir-only writes just the BIR (what --timing-only runs need).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "workload.hpp"

namespace {

int usage(const char *msg) {
  if (msg) std::cerr << "neuronsim_workload_gen: " << msg << "\n";
  std::cerr << "usage: neuronsim_workload_gen <name>|all --size small|full -o DIR [--bir-only]\n       "
               "neuronsim_workload_gen --list\nworkloads:";
  for (const auto &e : neuronsim::workloads::registry()) std::cerr << " " << e.first;
  std::cerr << "\n";
  return 2;
}

}  // namespace

// neuronsim_sim links SystemC, whose library owns main() and calls sc_main(); silence its banner (as the CLI
// does) so the generator prints only its own lines.
static const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

// SystemC declares sc_main extern "C" (sc_externs.h); declared here without pulling in <systemc>.
extern "C" int sc_main(int argc, char **argv);

int sc_main(int argc, char **argv) {
  using namespace neuronsim::workloads;
  std::string name, out, size = "small";
  bool bir_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      for (const auto &e : registry()) std::cout << e.first << "\n";
      return 0;
    } else if (a == "--size" && i + 1 < argc) {
      size = argv[++i];
    } else if (a == "-o" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--bir-only") {
      bir_only = true;
    } else if (a == "-h" || a == "--help") {
      return usage(nullptr);
    } else if (!a.empty() && a[0] != '-' && name.empty()) {
      name = a;
    } else {
      return usage(("unexpected argument '" + a + "'").c_str());
    }
  }
  if (name.empty() || out.empty()) return usage("need a workload name and -o DIR");
  if (size != "small" && size != "full") return usage("--size must be small or full");
  const Size sz = size == "small" ? Size::Small : Size::Full;
  try {
    if (name == "all") {
      for (const auto &e : registry()) {
        Workload w = e.second(sz, !bir_only);
        // Several-core workloads (run with --cores / --lnc) go under multicore/, apart from the single-core set.
        const std::filesystem::path d = std::filesystem::path(out) / (w.cores > 1 ? "multicore" : "") / e.first;
        write_workload(w, d.string());
        std::cout << "wrote " << d.string() << "\n";
      }
      return 0;
    }
    const Generator *g = find_generator(name);
    if (!g) return usage(("unknown workload '" + name + "'").c_str());
    Workload w = (*g)(sz, !bir_only);
    write_workload(w, out);
    std::cout << "wrote " << out << "\n";
  } catch (const std::exception &e) {
    std::cerr << "neuronsim_workload_gen: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
