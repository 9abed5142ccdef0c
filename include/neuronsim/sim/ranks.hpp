// Per-rank data of a multi-core run (docs/multicore.md): the rank<r>/ folders of its inputs, expected outputs
// and outputs, and the files --save-inputs writes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/io.hpp"

namespace neuronsim::sim {

// Per-rank data of a multi-core run (docs/multicore.md); a single-core run never looks for rank folders.
// A folder of per-rank data: DIR holds rank0 .. rank<R-1> folders (then every one of them, and no rank<k> with
// k >= R: InputError naming the path), or none (every rank reads DIR). `dir` empty or R == 1: false.
bool has_rank_dirs(const std::string &dir, int ranks);
// Rank r's input spec: per tensor, DIR/rank<r>/<tensor_file_name> when that file exists, else DIR/<file> (the
// replicated inputs); --input files and arrays are every rank's.
InputSpec rank_inputs(const isa::Program &p, const InputSpec &spec, int rank, int ranks);
// Rank r's expected outputs: the folder DIR/rank<r> when DIR has rank folders, else DIR (arrays: every rank's).
ExpectSpec rank_expect(const ExpectSpec &e, int rank, int ranks);
// Where rank r's outputs go: OUTDIR/rank<r> with several ranks, OUTDIR itself with one.
std::string rank_outdir(const std::string &outdir, int rank, int ranks);

// The files --save-inputs DIR writes: (tensor index, DIR/<tensor_file_name>) for every DRAM input tensor.
std::vector<std::pair<int, std::string>> saved_input_files(const isa::Program &p, const std::string &dir);

} // namespace neuronsim::sim
