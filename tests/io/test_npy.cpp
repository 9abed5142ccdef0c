// .npy I/O: exact header bytes, a hand-written file, round trips for every dtype, loading conversions, each
// malformed case raising InputError that names the file, and the atomic write.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/io/npy.hpp"
#include "support/temp_dir.hpp"

using namespace neuronsim;
using namespace neuronsim::io;
using neuronsim::engines::npy_from_f32;
using neuronsim::engines::npy_to_dtype;
using neuronsim::engines::npy_to_f32;
using isa::Dtype;
namespace fs = std::filesystem;

namespace {
std::vector<uint8_t> bytes_of(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A v1.0 file image from a header dict (padded as NumPy does) and raw data bytes.
std::vector<uint8_t> npy_image(const std::string &dict, const std::vector<uint8_t> &data, int major = 1) {
  size_t pre = major == 1 ? 10 : 12;
  std::string h = dict + std::string((64 - (pre + dict.size() + 1) % 64) % 64, ' ') + "\n";
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  out.push_back(uint8_t(h.size() & 0xff));
  out.push_back(uint8_t(h.size() >> 8));
  if (major != 1) out.push_back(0), out.push_back(0);
  out.insert(out.end(), h.begin(), h.end());
  if (!data.empty()) out.insert(out.end(), data.begin(), data.end());  // (GCC 12 -Wnonnull false positive on {})
  return out;
}

std::vector<uint8_t> f32_bytes(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Expects parse_npy to throw InputError whose message names the file and contains `what`.
void expect_bad(const std::vector<uint8_t> &img, const std::string &what) {
  try {
    parse_npy(img, "in.npy");
    FAIL() << "no error, expected: " << what;
  } catch (const InputError &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("in.npy"), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

struct TmpDir {
  fs::path dir = neuronsim::testing::temp_dir("npy");
  ~TmpDir() { fs::remove_all(dir); }
};
}  // namespace

TEST(Npy, SerializeWritesNumpyHeaderBytes) {
  NpyArray a = npy_from_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<uint8_t> img = serialize_npy(a);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(img.size(), 128u + 24u);  // 10-byte preamble + 118-byte header = 128 (64-aligned) + 6 floats
  EXPECT_EQ(std::memcmp(img.data(), "\x93NUMPY\x01\x00", 8), 0);
  EXPECT_EQ(img[8], 118);  // header length, little-endian u16
  EXPECT_EQ(img[9], 0);
  EXPECT_EQ(std::string(img.begin() + 10, img.begin() + 10 + long(dict.size())), dict);
  EXPECT_EQ(img[127], '\n');
  EXPECT_EQ(img[126], ' ');
  float f;
  std::memcpy(&f, &img[128 + 20], 4);
  EXPECT_EQ(f, 6.0f);
  // Shape spelling: 1-d has the trailing comma, 0-d is ().
  std::vector<uint8_t> one = serialize_npy(npy_from_f32({7}, {1}));
  EXPECT_NE(std::string(one.begin(), one.end()).find("'shape': (1,)"), std::string::npos);
  std::vector<uint8_t> scalar = serialize_npy(npy_from_f32({7}, {}));
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'shape': ()"), std::string::npos);
}

TEST(Npy, ParsesHandWrittenFile) {
  // What np.save(f, np.array([[1.5, -2], [0, 8]], dtype='<f4')) writes, spelled with double quotes and without
  // the trailing comma to exercise the parser's tolerance.
  auto img = npy_image("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 2)}", f32_bytes({1.5f, -2, 0, 8}));
  NpyArray a = parse_npy(img, "h.npy");
  EXPECT_EQ(a.dtype, Dtype::float32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(npy_to_f32(a), (std::vector<float>{1.5f, -2, 0, 8}));
  // v2.0 header (u32 length)
  NpyArray b = parse_npy(npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", {5, 0, 0, 0}, 2), "v2.npy");
  EXPECT_EQ(b.dtype, Dtype::int32);
  EXPECT_EQ(b.numel(), 1);
  EXPECT_EQ(b.data[0], 5);
  // bool reads as uint8; a zero-size array is fine
  NpyArray c = parse_npy(npy_image("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {1, 0, 1}), "b.npy");
  EXPECT_EQ(c.dtype, Dtype::uint8);
  NpyArray z = parse_npy(npy_image("{'descr': '<f2', 'fortran_order': False, 'shape': (0, 4), }", {}), "z.npy");
  EXPECT_EQ(z.numel(), 0);
}

TEST(Npy, RoundTripEveryDtype) {
  TmpDir t;
  for (const auto &e : isa::EnumTraits<Dtype>::entries) {
    Dtype d = Dtype(e.ordinal);
    SCOPED_TRACE(e.name);
    NpyArray a;
    a.dtype = d;
    a.shape = std::vector<int64_t>(2, 0); a.shape[0] = 3; a.shape[1] = 2;
    a.data.resize(size_t(6 * isa::dtype_size(d)));
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = uint8_t(i * 37 + 11);
    fs::path p = t.dir / (std::string(e.name) + ".npy");
    write_npy(p.string(), a);
    NpyArray b = read_npy(p.string());
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data);
    EXPECT_EQ(npy_descr(b.dtype), npy_descr(d));  // bf16 comes back as its <u2 container, fp8 as |u1, ...
    EXPECT_EQ(npy_to_dtype(b, d, p.string()), a.data);  // ... and loads back into a tensor of the narrow type
  }
  // no temporaries left behind
  for (const auto &ent : fs::directory_iterator(t.dir))
    EXPECT_EQ(ent.path().string().find(".tmp."), std::string::npos) << ent.path();
}

TEST(Npy, LoadConversions) {
  // <f4 into a bf16 tensor rounds RNE: 1 + 2^-8 is the tie between bf16 1.0 and 1.0078125 -> 1.0 (0x3f80);
  // 1 + 3*2^-8 -> 1.015625 (0x3f82).
  NpyArray f = npy_from_f32({1.00390625f, 1.01171875f}, {2});
  std::vector<uint8_t> bf = npy_to_dtype(f, Dtype::bfloat16, "f.npy");
  ASSERT_EQ(bf.size(), 4u);
  EXPECT_EQ(bf[0] | bf[1] << 8, 0x3f80);
  EXPECT_EQ(bf[2] | bf[3] << 8, 0x3f82);
  // <f4 into fp8 e4m3 (legacy, Inf on overflow) and e4m3fn (saturating)
  NpyArray big = npy_from_f32({1.0f, 1000.0f}, {2});
  EXPECT_EQ(npy_to_dtype(big, Dtype::float8e4, "b.npy"), (std::vector<uint8_t>{0x38, 0x78}));
  EXPECT_EQ(npy_to_dtype(big, Dtype::float8_e4m3fn, "b.npy"), (std::vector<uint8_t>{0x38, 0x7e}));
  // int64 (NumPy's default) into int32 when it fits; an error when it does not
  NpyArray i64;
  i64.dtype = Dtype::int64;
  i64.shape = std::vector<int64_t>(1, 2);
  i64.data.resize(16);
  int64_t v[2] = {-5, 70000};
  std::memcpy(i64.data.data(), v, 16);
  std::vector<uint8_t> i32 = npy_to_dtype(i64, Dtype::int32, "i.npy");
  int32_t w[2];
  std::memcpy(w, i32.data(), 8);
  EXPECT_EQ(w[0], -5);
  EXPECT_EQ(w[1], 70000);
  EXPECT_THROW(npy_to_dtype(i64, Dtype::int16, "i.npy"), InputError);   // 70000 > 32767
  EXPECT_THROW(npy_to_dtype(i64, Dtype::uint32, "i.npy"), InputError);  // -5 < 0
  // int file into a float tensor, float file into an int tensor: rejected with both dtypes named
  try {
    npy_to_dtype(i64, Dtype::float32, "i.npy");
    FAIL();
  } catch (const InputError &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("i.npy"), std::string::npos);
    EXPECT_NE(m.find("int64"), std::string::npos);
    EXPECT_NE(m.find("float32"), std::string::npos);
  }
  EXPECT_THROW(npy_to_dtype(f, Dtype::int32, "f.npy"), InputError);
}

TEST(Npy, MalformedFilesRaise) {
  const auto good = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32_bytes({1, 2}));
  expect_bad(bytes_of("\x93NUM"), "truncated");
  expect_bad(std::vector<uint8_t>(good.begin(), good.begin() + 40), "truncated .npy header");
  std::vector<uint8_t> magic = good;
  magic[1] = 'X';
  expect_bad(magic, "bad magic");
  std::vector<uint8_t> ver = good;
  ver[6] = 9;
  expect_bad(ver, "unsupported .npy format version 9");
  expect_bad(std::vector<uint8_t>(good.begin(), good.end() - 1), "truncated .npy data");
  std::vector<uint8_t> extra = good;
  extra.push_back(0);
  expect_bad(extra, "after the data");
  expect_bad(npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f32_bytes({1, 2})), "fortran_order True");
  expect_bad(npy_image("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f32_bytes({1, 2})), "unsupported .npy dtype '>f4'");
  expect_bad(npy_image("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f32_bytes({1, 2})), "unsupported .npy dtype '<c8'");
  expect_bad(npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f32_bytes({1, 2})), "unsupported .npy dtype '<f8'");
  expect_bad(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", {}), "non-negative integer");
  expect_bad(npy_image("{'descr': '<f4', 'shape': (2,), }", f32_bytes({1, 2})), "missing");
  expect_bad(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", f32_bytes({1, 2})), "expected '('");
  expect_bad(npy_image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", f32_bytes({1, 2})), "structured");
}

TEST(Npy, ReadErrorsNameTheFile) {
  TmpDir t;
  std::string missing = (t.dir / "nope.npy").string();
  try {
    read_npy(missing);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("nope.npy"), std::string::npos);
  }
  std::string p = (t.dir / "junk.npy").string();
  std::ofstream(p) << "hello world, not numpy";
  EXPECT_THROW(read_npy(p), InputError);
}

TEST(Npy, WriteIsAtomic) {
  TmpDir t;
  std::string p = (t.dir / "out.npy").string();
  write_npy(p, npy_from_f32({1, 2, 3}, {3}));
  write_npy(p, npy_from_f32({4, 5}, {2}));  // replaces in place
  NpyArray r = read_npy(p);
  EXPECT_EQ(npy_to_f32(r), (std::vector<float>{4, 5}));
  // A bad array is rejected before anything is created; a missing directory fails without leaving a file.
  NpyArray bad = npy_from_f32({1, 2}, {2});
  bad.data.pop_back();
  EXPECT_THROW(write_npy(p, bad), InputError);
  EXPECT_EQ(npy_to_f32(read_npy(p)), (std::vector<float>{4, 5}));  // old contents untouched
  EXPECT_THROW(write_npy((t.dir / "no_such_dir" / "x.npy").string(), r), InputError);
  int files = 0;
  for (const auto &ent : fs::directory_iterator(t.dir)) {
    (void)ent;
    ++files;
  }
  EXPECT_EQ(files, 1);
}
