// Bit-level float helpers shared by the numerics tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace floatbits {

inline uint32_t U(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float F(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline const float kInf = std::numeric_limits<float>::infinity();
inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

} // namespace floatbits
