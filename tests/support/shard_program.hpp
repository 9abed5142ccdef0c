// The program the multi-core tests use to see each core's shard id and DRAM: one Save of the SBUF tile t ([1, 2])
// to o[0, 2 s : 2 s + 2] ([1, 4] output), its start the expression 2 * ShardIDKind (s = the core's shard id,
// 2 shards), so core i of LNC=2 writes the half of o its shard names.
#pragma once

#include "neuronsim/builder.hpp"

namespace neuronsim::test {

struct ShardSave {
  isa::Program program;
  builder::TensorHandle t, o;
};

// The expression 2 * ShardIDKind (2 shards): the start of o[0, 2 s : 2 s + 2].
inline isa::Expr twice_the_shard() {
  isa::Expr shard;
  shard.kind = isa::Expr::Kind::ShardId;
  shard.k = 2;
  isa::Expr start;
  start.kind = isa::Expr::Kind::Mult;
  start.k = 2;
  start.kids.push_back(shard);
  return start;
}

inline ShardSave shard_save_program() {
  builder::Builder b("shard");
  auto o = b.output("o", {1, 4});
  auto t = b.sbuf("t", {1, 2});
  b.add(isa::InstructionType::Save, {builder::Builder::ap(t.all())}, {builder::Builder::ap(o.tile(0, 1, 0, 2))});
  isa::Program p = b.finish();
  p.insts[0].outs[0].start = twice_the_shard();
  return {std::move(p), t, o};
}

} // namespace neuronsim::test
