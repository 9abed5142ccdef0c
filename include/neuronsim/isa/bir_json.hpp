// BIR JSON <-> isa::Program. The reader takes the module the Neuron compiler (or KLR) writes -- version 1 or
// 2, functions[].allocations[] + blocks[].instructions[], `Loop` pseudo-instructions,
// physical/symbolic/register access patterns, immediates -- and the writer emits the compiler's form, so that
// parse_bir(to_bir_json(p)) reproduces p. Sources: reference bir-json.md sections 1-2,
// neuronx-cc/bir/json-loader.md, neuronx-cc/bir/value-model.md, neuronx-cc/bir/wire-versioning.md (+ the
// public pelican-wire page). The implementation is isa/bir/, one file per concern (isa/bir/reader.hpp lists
// them).
//
// Decisions where the format leaves room (each documented next to its code in isa/bir/):
//  - Function: the one named "main" if any (json-loader.md D8 looks "main" up, falling back to the first),
//    else the first one. The other functions and `nki_functions` are read only as the callees of Call /
//    NKIKernel, expanded in place.
//  - symbolic_ap start = sum_d addrs[d] * rowmajor_stride(shape)[d], shape = the tensor's tensor_shape when
//    it has as many dims as addrs, else access_shape when that does, else InputError.
//  - symbolic_imm_value: imm = value_list[eval(expr)] when the expr is constant, and value_list[0] otherwise;
//    with several values the list is kept in Arg::imm_array and the expr in Arg::start so a consumer can pick
//    per iteration (Arg::immediate(loop_values)).
//  - register_ap: Arg kind Register with tensor/ap set; start = Register expr of reg_ap_offset when given,
//    else const_ap_offset (default 0).
//  - sync_info: the references give no JSON form for its waits/updates, so it is not read (Inst::waits and
//    Inst::updates stay empty for BIR input).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/program.hpp"

namespace neuronsim::isa {

// Reader limits: deeper or larger input is an InputError naming where it is, never a stack overflow or an
// unbounded expansion.
//  - loops, blocks, DMA blocks and calls nest at most kMaxBlockNesting levels (counting the function's own
//    blocks; a callee's blocks are one level below its call);
//  - an address/bound expression nests at most kMaxExprDepth levels;
//  - calls expand their callee in place: at most kMaxStaticInstructions instructions in all;
//  - the JSON document itself nests at most kMaxJsonDepth levels (file_input.hpp).
inline constexpr int kMaxBlockNesting = 64;
inline constexpr int kMaxExprDepth = 64;
inline constexpr int64_t kMaxStaticInstructions = 250'000;  // ~3 KB each: ~0.75 GB

// Reads and parses a BIR JSON file (a regular file, see file_input.hpp). Any problem (unreadable file,
// malformed JSON, unknown opcode, ...) throws InputError naming the file and, where it applies, the
// instruction index/name and the JSON key.
Program read_bir_file(const std::string &path);

// Parses an already-loaded BIR JSON document; `file_for_messages` goes into Program::file and every error.
Program parse_bir(const nlohmann::json &j, const std::string &file_for_messages);

// Writes a Program as a version-2 BIR JSON module (one function "sg0000"; allocations as memory_location_set
// with one memory_location; Loop pseudo-instructions with LoopAxis + blocks; v2 QuasiAffineExpr trees).
nlohmann::json to_bir_json(const Program &p);

// parse_bir(to_bir_json(p), file_for_messages) -- the same program, warnings and errors, through the same reader
// -- without the whole document at once: the module is written with each instruction's place held by its index,
// and the reader gets that instruction's JSON, as to_bir_json writes it, when it comes to it and frees it after.
// (Holding a 10,000-instruction document at once put most of the round trip's time in malloc, page faults and
// freeing.) How neuronsim.builder's Kernel is read (python/builder.cpp).
Program reread_program(const Program &p, const std::string &file_for_messages);

// QuasiAffineExpr (v2 tree form) of an expression; loop variables are named from `loop_vars`.
nlohmann::json expr_to_json(const Expr &e, const std::vector<std::string> &loop_vars);

} // namespace neuronsim::isa
