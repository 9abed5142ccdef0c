// The engine tokens the .def tables' engine columns are written in (instruction_wire.def's engines column,
// engines_allowed.def). One definition for every file that expands those tables, so the files can share a unity
// batch (docs/dev/build-time.md).
#pragma once

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa::engine_tokens {

inline constexpr Engine PE = Engine::PE, ACT = Engine::Activation, POOL = Engine::Pool, DVE = Engine::DVE,
                        SP = Engine::SP, DMA = Engine::DMA, ALL = Engine::ALL;

} // namespace neuronsim::isa::engine_tokens
