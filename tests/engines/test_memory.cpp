// engines::Memory: placement, the access-pattern walker (partition steps in both conventions, strides, offsets,
// negative steps, row-major wrap), bounds and capacity errors, footprints, poison and the written shadow.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "engines/program_builder.hpp"
#include "neuronsim/engines/dtype.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {

std::vector<float> iota_vec(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

std::vector<float> read(const Memory &m, const Access &a) {
  std::vector<float> v(static_cast<size_t>(a.partitions() * a.free_elements()));
  m.read_f32(a, v.data());
  return v;
}

Access acc(const TensorHandle &t, int64_t start, std::vector<ApDim> ap, Dtype dt = Dtype::float32) {
  Access a;
  a.tensor = t.id;
  a.dtype = dt;
  a.start = start;
  a.ap = std::move(ap);
  return a;
}

struct MemoryTest : ::testing::Test {
  Harness h;
  TensorHandle sb, dr;
  void SetUp() override {
    sb = h.b.sbuf("sb", {4, 6});
    dr = h.b.dram("dr", {2, 3});
    h.place();
    h.set(sb, iota_vec(24));  // sb[p][f] = 6p + f
    h.set(dr, iota_vec(6));
  }
};

} // namespace

TEST_F(MemoryTest, RowMajorPartitionStepAndFreeStride) {
  // start 1, partition step 6 = F (advances one partition), free step 2.
  EXPECT_EQ(read(*h.mem, acc(sb, 1, {{6, 2}, {2, 3}})), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  // partition step 12 = 2F: every other partition.
  EXPECT_EQ(read(*h.mem, acc(sb, 0, {{12, 2}, {1, 6}})),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17}));
}

TEST_F(MemoryTest, NkiPartitionStepCountsPartitions) {
  // [1, P]: step 1 is not a multiple of F = 6, so it counts partitions (NKI convention).
  EXPECT_EQ(read(*h.mem, acc(sb, 1, {{1, 2}, {2, 3}})), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(read(*h.mem, acc(sb, 2, {{2, 2}, {1, 1}})), (std::vector<float>{2, 14}));
}

TEST_F(MemoryTest, NestedFreeDimsOffsetsAndNegativeSteps) {
  // start 7 = partition 1, free 1; free pattern [[3,2],[1,2]] -> offsets 0,1,3,4.
  EXPECT_EQ(read(*h.mem, acc(sb, 7, {{6, 2}, {3, 2}, {1, 2}})),
            (std::vector<float>{7, 8, 10, 11, 13, 14, 16, 17}));
  EXPECT_EQ(read(*h.mem, acc(sb, 5, {{6, 1}, {-1, 6}})), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  // unit dims are accepted (the compiler writes [[F,P],[F,1],[1,F]]).
  EXPECT_EQ(read(*h.mem, acc(sb, 0, {{6, 2}, {6, 1}, {1, 2}})), (std::vector<float>{0, 1, 6, 7}));
}

TEST_F(MemoryTest, FreeRunWrapsIntoNextPartitionRowMajor) {
  // One partition of 8 contiguous elements from element 4: wraps from partition 0 into partition 1.
  EXPECT_EQ(read(*h.mem, acc(sb, 4, {{0, 1}, {1, 8}})), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST_F(MemoryTest, DramFlatIndexOverAllPairs) {
  EXPECT_EQ(read(*h.mem, acc(dr, 0, {{3, 2}, {1, 3}})), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // Transposed view of the 2x3 DRAM tensor.
  EXPECT_EQ(read(*h.mem, acc(dr, 0, {{1, 3}, {3, 2}})), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST_F(MemoryTest, WriteThroughStridedAccessAndBroadcastRead) {
  std::vector<float> v{100, 101, 102, 103};
  h.mem->write_f32(acc(sb, 1, {{12, 2}, {3, 2}}), v.data());  // sb[0][1], sb[0][4], sb[2][1], sb[2][4]
  auto all = h.get(sb);
  EXPECT_EQ(all[1], 100);
  EXPECT_EQ(all[4], 101);
  EXPECT_EQ(all[13], 102);
  EXPECT_EQ(all[16], 103);
  EXPECT_EQ(all[2], 2);
  // step 0 broadcasts one element.
  EXPECT_EQ(read(*h.mem, acc(sb, 1, {{0, 2}, {0, 3}})), (std::vector<float>{100, 100, 100, 100, 100, 100}));
}

TEST_F(MemoryTest, OutOfBoundsPartitionIsSimulationErrorWithContext) {
  h.mem->set_context(ErrorContext{"k.json", 3, "I-7", ""});
  try {
    read(*h.mem, acc(sb, 0, {{6, 5}, {1, 6}}));
    FAIL() << "expected SimulationError";
  } catch (const SimulationError &e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("k.json"), std::string::npos) << w;
    EXPECT_NE(w.find("I-7"), std::string::npos) << w;
    EXPECT_NE(w.find("'sb'"), std::string::npos) << w;
    EXPECT_NE(w.find("partition 4"), std::string::npos) << w;
    EXPECT_EQ(e.exit_code(), 4);
  }
}

TEST_F(MemoryTest, OutOfBoundsFreeAndNegativeAndDram) {
  EXPECT_THROW(read(*h.mem, acc(sb, 20, {{6, 1}, {1, 6}})), SimulationError);  // element 25 of 24
  EXPECT_THROW(read(*h.mem, acc(sb, 0, {{6, 1}, {-1, 2}})), SimulationError);  // element -1
  EXPECT_THROW(read(*h.mem, acc(dr, 1, {{3, 2}, {1, 3}})), SimulationError);   // element 6 of 6
  std::vector<float> v(6, 0.0f);
  EXPECT_THROW(h.mem->write_f32(acc(dr, 0, {{4, 2}, {1, 3}}), v.data()), SimulationError);
  EXPECT_NO_THROW(h.mem->check(acc(sb, 18, {{6, 1}, {1, 6}})));
  EXPECT_THROW(h.mem->check(acc(sb, 19, {{6, 1}, {1, 6}})), SimulationError);
}

TEST(MemoryPlacement, FirstFitDoesNotOverlapAndHonoursAllocated) {
  Harness h;
  auto a = h.b.sbuf("a", {128, 100});       // 400 B
  auto b = h.b.sbuf("b", {64, 10});         // 40 B
  auto c = h.b.sbuf("c", {32, 4});
  h.b.program().tensors[static_cast<size_t>(c.id)].allocated = true;
  h.b.program().tensors[static_cast<size_t>(c.id)].addr = 1024;
  h.b.program().tensors[static_cast<size_t>(c.id)].base_partition = 32;
  auto p = h.b.psum("p", {128, 512});       // one 2 KiB bank
  h.place();
  EXPECT_EQ(h.mem->placed_addr(c.id), 1024);
  EXPECT_EQ(h.mem->placed_partition(c.id), 32);
  auto fa = h.mem->footprint(whole(a)), fb = h.mem->footprint(whole(b)), fc = h.mem->footprint(whole(c));
  EXPECT_FALSE(fa.overlaps(fb));
  EXPECT_FALSE(fa.overlaps(fc));
  EXPECT_EQ(fc.p0, 32);
  EXPECT_EQ(fc.p1, 64);
  EXPECT_EQ(fc.b0, 1024);
  EXPECT_EQ(fc.b1, 1040);
  auto fp = h.mem->footprint(whole(p));
  EXPECT_EQ(fp.space, engines::Footprint::Space::Psum);
  EXPECT_EQ(fp.b1 - fp.b0, 2048);
  EXPECT_FALSE(fp.overlaps(fa));  // different memories
  // Data written to one tensor does not disturb another.
  h.set(a, std::vector<float>(12800, 1.0f));
  h.set(b, std::vector<float>(640, 2.0f));
  EXPECT_EQ(h.get(a)[12799], 1.0f);
}

TEST(MemoryPlacement, FootprintBoxOfAStridedSlice) {
  Harness h;
  auto t = h.b.sbuf("t", {8, 16});
  h.place();
  const int64_t base = h.mem->placed_addr(t.id);
  // partitions 2,4 (step 2 rows), free elements 3..9 step 3 -> 3, 6, 9
  auto f = h.mem->footprint(acc(t, 2 * 16 + 3, {{32, 2}, {3, 3}}));
  EXPECT_EQ(f.p0, 2);
  EXPECT_EQ(f.p1, 5);
  EXPECT_EQ(f.b0, base + 12);
  EXPECT_EQ(f.b1, base + 40);
  Harness d;
  auto x = d.b.dram("x", {4, 8});
  d.place();
  auto fd = d.mem->footprint(acc(x, 8, {{8, 2}, {1, 4}}));
  EXPECT_EQ(fd.space, engines::Footprint::Space::Dram);
  EXPECT_EQ(fd.dram_tensor, x.id);
  EXPECT_EQ(fd.b0, 32);
  EXPECT_EQ(fd.b1, 32 + (8 + 3 + 1) * 4);
}

TEST(MemoryPlacement, CapacityErrorsNameTheTensorAndSizes) {
  {
    Harness h;
    h.b.sbuf("huge", {128, 50000});  // 200000 B > 196608
    try {
      h.place();
      FAIL() << "expected SemanticError";
    } catch (const SemanticError &e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("'huge'"), std::string::npos) << w;
      EXPECT_NE(w.find("200000"), std::string::npos) << w;
      EXPECT_NE(w.find("196608"), std::string::npos) << w;
    }
  }
  {
    Harness h;  // each fits, together they do not
    h.b.sbuf("a", {128, 30000});
    h.b.sbuf("b", {128, 30000});
    try {
      h.place();
      FAIL() << "expected SemanticError";
    } catch (const SemanticError &e) {
      EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    }
  }
  {
    Harness h;
    h.b.psum("p", {129, 4});
    EXPECT_THROW(h.place(), SemanticError);
  }
}

TEST(MemoryPoison, UninitialisedReadsAreNaNAndCounted) {
  Harness h;
  auto t = h.b.sbuf("t", {2, 4});
  h.place();
  h.mem->set_track_uninit(true);
  auto v = h.get(t);
  EXPECT_TRUE(std::isnan(v[0]));  // 0xFFFFFFFF
  EXPECT_EQ(h.mem->uninit_reads(), 8);
  std::vector<float> w{1, 2};
  h.mem->write_f32(acc(t, 0, {{4, 2}, {1, 1}}), w.data());
  h.get(t);
  EXPECT_EQ(h.mem->uninit_reads(), 8 + 6);
}

// Repeated and overlapping writes keep the written shadow exact: the shadow's per-line summary and the
// remembered written rectangles (Memory::chunk_written) only skip re-marking bytes already marked. t is
// 8 partitions x 256 fp32 (1 KiB a row, so a 4-row rectangle is 4 KiB, large enough to be remembered); u alike.
TEST(MemoryPoison, RepeatedAndOverlappingWritesKeepTheShadowExact) {
  Harness h;
  auto t = h.b.sbuf("t", {8, 256}), u = h.b.sbuf("u", {8, 256});
  h.place();
  auto unwritten = [&](const Access &a) {
    h.mem->set_track_uninit(true);
    const int64_t before = h.mem->uninit_reads();
    read(*h.mem, a);
    h.mem->set_track_uninit(false);
    return h.mem->uninit_reads() - before;
  };
  const std::vector<float> ones(8 * 256, 1.0f);
  const Access rows0_3 = acc(t, 0, {{256, 4}, {1, 256}}), rows2_5 = acc(t, 512, {{256, 4}, {1, 256}});
  h.mem->write_f32(rows0_3, ones.data());  // rows 0-3: remembered as written
  h.mem->write_f32(rows0_3, ones.data());  // again: inside the remembered rectangle
  EXPECT_EQ(unwritten(whole(t)), 4 * 256);
  h.mem->write_f32(rows2_5, ones.data());  // overlaps it, and rows 4-5 are new
  EXPECT_EQ(unwritten(whole(t)), 2 * 256);
  // Rows 6-7, elements 0..99: 400 bytes a row, six whole 64-byte lines and 16 bytes of a seventh.
  h.mem->write_f32(acc(t, 6 * 256, {{256, 2}, {1, 100}}), ones.data());
  EXPECT_EQ(unwritten(whole(t)), 2 * 156);
  // Element 100 of row 6 (the rest of that seventh line): one element fewer.
  h.mem->write_f32(acc(t, 6 * 256 + 100, {{256, 1}, {1, 1}}), ones.data());
  EXPECT_EQ(unwritten(whole(t)), 2 * 156 - 1);
  EXPECT_EQ(unwritten(acc(t, 6 * 256, {{256, 2}, {1, 101}})), 1);  // element 100 of row 7
  // Every other element of rows 6-7 from 101 (a strided write: no rectangle, no whole line).
  h.mem->write_f32(acc(t, 6 * 256 + 101, {{256, 2}, {2, 77}}), ones.data());
  EXPECT_EQ(unwritten(whole(t)), 2 * 156 - 1 - 2 * 77);
  h.mem->write_f32(whole(t), ones.data());
  EXPECT_EQ(unwritten(whole(t)), 0);
  // The same partitions, other bytes: columns 0-127 of every row of u (4 KiB, remembered), then 128-255.
  h.mem->write_f32(acc(u, 0, {{256, 8}, {1, 128}}), ones.data());
  EXPECT_EQ(unwritten(whole(u)), 8 * 128);
  h.mem->write_f32(acc(u, 128, {{256, 8}, {1, 128}}), ones.data());
  EXPECT_EQ(unwritten(whole(u)), 0);
}

// Memory::chunks (the streaming kernels' view of an access) reaches the bytes read_raw reads, in the same order:
// rows of one run each come as one Chunk of `count` runs `stride` bytes apart, other patterns run by run. Every
// SBUF row of a tensor placed at address 0 starts on a 64-byte line.
TEST_F(MemoryTest, ChunksReachTheBytesReadRawReadsInWalkOrder) {
  const std::vector<Access> accesses = {
      whole(sb),                                 // one Chunk: 4 rows of 6
      acc(sb, 7, {{6, 3}, {1, 4}}),              // one Chunk: 3 rows of 4 from partition 1, element 1
      acc(sb, 1, {{6, 2}, {2, 3}}),              // free stride 2: single elements
      acc(sb, 1, {{1, 2}, {2, 3}}),              // NKI partition step
      acc(sb, 7, {{6, 2}, {3, 2}, {1, 2}}),      // nested free dims: two runs a row
      acc(sb, 5, {{6, 1}, {-1, 6}}),             // negative step
      acc(sb, 4, {{0, 1}, {1, 8}}),              // a run wrapping into the next partition
      acc(sb, 1, {{0, 3}, {1, 2}}),              // partition step 0: the same row three times
      acc(sb, 18, {{-6, 3}, {1, 6}}),            // partitions 3, 2, 1
      acc(dr, 0, {{3, 2}, {1, 3}}),              // DRAM rows
      acc(dr, 0, {{1, 3}, {3, 2}}),              // DRAM transposed
  };
  for (size_t k = 0; k < accesses.size(); ++k) {
    SCOPED_TRACE("access " + std::to_string(k));
    const Access &a = accesses[k];
    const size_t bytes = static_cast<size_t>(a.partitions() * a.free_elements() * 4);
    std::vector<uint8_t> want(bytes), got;
    h.mem->read_raw(a, want.data());
    std::vector<Memory::Chunk> cs;
    ASSERT_TRUE(h.mem->chunks(a, cs));
    for (const auto &c : cs)
      for (int64_t r = 0; r < c.count; ++r)
        got.insert(got.end(), c.data + r * c.stride, c.data + r * c.stride + c.n * 4);
    EXPECT_EQ(got, want);
    if (k <= 1) {
      ASSERT_EQ(cs.size(), 1u);
      EXPECT_EQ(cs[0].count, a.partitions());
      EXPECT_EQ(cs[0].n, a.free_elements());
    }
  }
  std::vector<Memory::Chunk> cs;
  ASSERT_TRUE(h.mem->chunks(whole(sb), cs));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cs[0].data) % 64, 0u);
  EXPECT_EQ(cs[0].stride % 64, 0);
  h.mem->set_track_uninit(true);  // the reads must then be counted: no chunks
  EXPECT_FALSE(h.mem->chunks(whole(sb), cs));
}

TEST(MemoryDtype, Bf16AccessConvertsWithRne) {
  Harness h;
  auto t = h.b.sbuf("t", {1, 2}, Dtype::bfloat16);
  h.place();
  // 1 + 2^-8 is a tie between bf16 1.0 and 1 + 2^-7: RNE picks the even 1.0; 1 + 3*2^-9 rounds up.
  std::vector<float> v{1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -9)};
  h.set(t, v);
  auto r = h.get(t);
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_EQ(r[1], 1.0f + std::ldexp(1.0f, -7));
  std::vector<uint8_t> raw(4);
  h.mem->read_raw(whole(t), raw.data());
  EXPECT_EQ(raw[0], 0x80);
  EXPECT_EQ(raw[1], 0x3F);
}
