// Writes the bundle-stream cases of tests/cli/bad_inputs (bundle_*/): a valid v3 stream of a small program
// (Load, TensorTensor add on DVE, Save; all on explicit engines), then one mistake per folder. Not part of the
// build (tests/cli/ globs only its own *.cpp); regenerate by hand when the codec's stream format changes:
//
//   g++ -std=c++17 -I include -I /tmp/build-rob/generated tests/cli/bad_inputs/make_bundles.cpp \
//       /tmp/build-rob/libneuronsim_isa.a -o /tmp/make_bundles && /tmp/make_bundles tests/cli/bad_inputs
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bundle.hpp"

namespace fs = std::filesystem;
using namespace neuronsim;

static isa::Program program() {
  builder::Builder b("bundle_base");
  auto a = b.input("a", {8, 16}), c = b.output("c", {8, 16});
  auto t = b.sbuf("t", {8, 16}), u = b.sbuf("u", {8, 16});
  b.add(isa::InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())}).engine(isa::Engine::SP);
  b.add(isa::InstructionType::TensorTensor, {b.ap(t.all()), b.ap(t.all())}, {b.ap(u.all())})
      .op(isa::AluOp::add)
      .engine(isa::Engine::DVE);
  b.add(isa::InstructionType::Save, {b.ap(u.all())}, {b.ap(c.all())}).engine(isa::Engine::SP);
  return b.finish();
}

static std::vector<uint8_t> slurp(const std::string &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
static void spit(const std::string &p, const std::vector<uint8_t> &v) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(v.data()), static_cast<std::streamsize>(v.size()));
}

int main(int argc, char **argv) {
  const std::string root = argc > 1 ? argv[1] : ".";
  const isa::Program p = program();
  auto fresh = [&](const std::string &name, const isa::Program &prog) {
    const std::string d = root + "/" + name;
    fs::remove_all(d);
    isa::write_bundle_dir(prog, isa::CoreGen::V3, d);
    return d;
  };
  // DVE.bin holds the one TensorTensor bundle; pad it with a second copy so a truncation leaves a whole bundle.
  {
    const std::string d = fresh("bundle_truncated", p);
    auto v = slurp(d + "/DVE.bin");
    std::vector<uint8_t> two = v;
    two.insert(two.end(), v.begin(), v.end());
    two.resize(100);
    spit(d + "/DVE.bin", two);
  }
  {  // spec 003 INV-1: header word (0x10 << 8) | L2; 0xEE is no opcode
    const std::string d = fresh("bundle_unknown_opcode", p);
    auto v = slurp(d + "/DVE.bin");
    v[0] = 0xEE;
    spit(d + "/DVE.bin", v);
  }
  {  // TensorTensor op byte (+0x0E, reference isa/tensortensor-encoding.md); 0xFF maps to no AluOpType
    const std::string d = fresh("bundle_alu_unmapped", p);
    auto v = slurp(d + "/DVE.bin");
    v[0x0E] = 0xFF;
    spit(d + "/DVE.bin", v);
  }
  {  // the TensorTensor waits for semaphore 7 >= 1; no instruction updates it
    isa::Program q = p;
    isa::SemWait w;
    w.sem = 7;
    w.mode = isa::SemWait::Mode::GeImm;
    w.value = 1;
    q.insts[1].waits.push_back(w);
    fresh("bundle_deadlock", q);
  }
  std::printf("wrote bundle cases into %s\n", root.c_str());
  return 0;
}
