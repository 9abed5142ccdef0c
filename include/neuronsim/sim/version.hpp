#pragma once
namespace neuronsim::sim {
const char *version();
} // namespace neuronsim::sim
