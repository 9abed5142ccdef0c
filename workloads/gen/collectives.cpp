// collectives: an AllGather and a ReduceScatter between the two physical cores of a logical core (LNC=2, trn2 /
// trn3), each checked element by element. Both cores run the same program; core s (its ShardIDKind) loads its
// shard of x and of y, then
//   AllGather (add-free routing, rank order):   g = x_0 ++ x_1, saved by both cores into `gathered` (= x)
//   ReduceScatter add:                          S = y_0 + y_1; core s keeps rows [s P/2, (s+1) P/2) of S and
//                                               saves them into its half of `scattered` (= y_0 + y_1)
// (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4: flat concatenation, doReduction's fp32 fold).
#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_collectives(Size s, bool with_data) {
  const int64_t P = s == Size::Small ? 64 : 128;   // rows of each core's shard (partitions)
  const int64_t F = s == Size::Small ? 32 : 2048;  // columns
  Builder b("collectives");
  auto x = b.input("x", {2 * P, F}), y = b.input("y", {2 * P, F});
  auto gathered = b.output("gathered", {2 * P, F}), scattered = b.output("scattered", {P, F});
  auto xs = b.sbuf("x_shard", {P, F}), ys = b.sbuf("y_shard", {P, F});
  auto g = b.sbuf("g", {2 * P, F}), rsum = b.sbuf("rs", {P / 2, F});
  const Aff shard = Aff::shard(2);
  load(b, x.tile(shard * P, P, 0, F), xs.all());
  load(b, y.tile(shard * P, P, 0, F), ys.all());
  b.add(InstructionType::CollectiveCompute, {b.ap(xs.all())}, {b.ap(g.all())})
      .collective_kind("AllGather").replica_groups({{0, 1}}).engine(isa::Engine::Pool);
  b.add(InstructionType::CollectiveCompute, {b.ap(ys.all())}, {b.ap(rsum.all())})
      .collective_kind("ReduceScatter").op(isa::AluOp::add).replica_groups({{0, 1}}).engine(isa::Engine::Pool);
  store(b, g.all(), gathered.all());
  store(b, rsum.all(), scattered.tile(shard * (P / 2), P / 2, 0, F));

  Workload w;
  w.name = "collectives";
  w.program = b.finish();
  w.summary = "An AllGather and a ReduceScatter (add) between the two physical cores of a logical core (LNC=2; run "
              "it with `neuronsim run workloads/collectives --arch trn2 --lnc 2`). Core s loads rows [s P, (s+1) P) "
              "of x and y (the loads' start holds the ShardIDKind term); the AllGather concatenates the two x "
              "shards in rank order (both cores save it: `gathered` = x); the ReduceScatter sums the two y shards "
              "in fp32 and core s keeps rows [s P/2, (s+1) P/2) of the sum, which it saves into its half of "
              "`scattered` (= y[0:P] + y[P:2P]).";
  w.sizes = "small: x, y, gathered [" + std::to_string(2 * P) + ", " + std::to_string(F) + "] fp32, scattered [" +
            std::to_string(P) + ", " + std::to_string(F) + "] fp32 (committed); full: P = 128, F = 2048.";
  w.rtol = 0.0;
  w.atol = 0.0;
  w.tolerance = "Exact: the AllGather moves values unchanged; the ReduceScatter adds two fp32 values once in fp32, "
                "which is the correctly rounded sum the reference (a double sum of two fp32 values, exact, rounded "
                "to fp32) gives.";
  w.cores = 2;
  w.lnc = 2;
  if (!with_data) return w;
  Rng rng(0x7e2a0c01);
  auto vx = rng.uniform_vec(size_t(2 * P * F), -4, 4), vy = rng.uniform_vec(size_t(2 * P * F), -4, 4);
  std::vector<double> vs(size_t(P * F));
  for (size_t k = 0; k < vs.size(); ++k) vs[k] = double(vy[k]) + double(vy[k + size_t(P * F)]);
  w.inputs["x"] = npy_f32(vx, {2 * P, F});
  w.inputs["y"] = npy_f32(vy, {2 * P, F});
  w.expected["gathered"] = npy_f32(vx, {2 * P, F});
  w.expected["scattered"] = npy_f32(vs, {P, F});
  return w;
}

}  // namespace neuronsim::workloads
