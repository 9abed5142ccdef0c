// AluOpType semantics. Operand order is `acc op x`: the first input (accumulator / LHS) is `acc`
// (spec 000 "Commutativity": redFn(acc, x)). Two implementations: the scalar oracle and vectorized kernels
// (Eigen, and an AVX2 build of alu_vv where the CPU has it); tests hold the kernels to the oracle for every op
// and dtype.
#pragma once

#include <cstdint>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines {

using isa::AluOp;

// Scalar oracle, fp32 lane.
float alu_apply(AluOp op, float acc, float x);
// Scalar oracle, int32 lane (bit-vector ops and integer arithmetic).
int32_t alu_apply_i32(AluOp op, int32_t acc, int32_t x);

// Vector kernels over n elements: out[i] = acc[i] op x[i] (out may alias acc or x).
void alu_vv(AluOp op, const float *acc, const float *x, float *out, int64_t n);
// out[i] = acc[i] op x (x broadcast).
void alu_vs(AluOp op, const float *acc, float x, float *out, int64_t n);
// out[i] = x op acc[i] (the reversed form: scalar as the accumulator).
void alu_sv(AluOp op, float acc, const float *x, float *out, int64_t n);
void alu_vv_i32(AluOp op, const int32_t *acc, const int32_t *x, int32_t *out, int64_t n);
void alu_vs_i32(AluOp op, const int32_t *acc, int32_t x, int32_t *out, int64_t n);
void alu_sv_i32(AluOp op, int32_t acc, const int32_t *x, int32_t *out, int64_t n);

// Kernel choice: on x86-64 CPUs with AVX2, alu_vv runs an AVX2 build of the same loop (the same values, bit for
// bit, up to which input's payload a NaN op NaN result carries). On by default where the CPU has AVX2; tests switch it off to hold the portable kernels to the
// oracle as well. Returns the previous setting; `true` on a CPU without AVX2 leaves the portable kernels.
bool alu_set_wide_kernels(bool on);

// Fold n elements into acc with op (acc = acc op x[i], in order); used by reductions.
float alu_fold(AluOp op, float acc, const float *x, int64_t n);
int32_t alu_fold_i32(AluOp op, int32_t acc, const int32_t *x, int64_t n);

// The identity element a fold starts from (0 for add, -inf for max, ...); nullopt-like NaN when none.
// It is a left identity (identity op x == x), so order-sensitive ops (subtract, divide, shifts, pow, mod) and
// bypass have none. bitwise_and's fp32-lane identity is the all-ones bit pattern, itself a NaN: use
// alu_has_identity to tell it from "none".
float alu_identity(AluOp op);
bool alu_has_identity(AluOp op);
// The int32-lane identity (INT32_MIN for max, -1 for bitwise_and, ...); 0 when alu_has_identity(op) is false.
int32_t alu_identity_i32(AluOp op);

} // namespace neuronsim::engines
