//===- FloatBits.h - f32 <-> bit pattern for the numerics unit tests ------===//
//
// The tests compare results bit for bit (-0.0, NaN payloads), so they need
// the raw pattern of a float, and floats made from patterns.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_UNITTESTS_NUMERICS_FLOATBITS_H
#define FP4_UNITTESTS_NUMERICS_FLOATBITS_H

#include <cstdint>
#include <cstring>

namespace fp4test {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace fp4test

#endif // FP4_UNITTESTS_NUMERICS_FLOATBITS_H
