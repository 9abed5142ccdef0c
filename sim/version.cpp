#include "neuronsim/sim/version.hpp"

namespace neuronsim::sim {
const char *version() { return "0.1.0"; }
} // namespace neuronsim::sim
