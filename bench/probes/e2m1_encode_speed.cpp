//===- e2m1_encode_speed.cpp - E2M1 nearest-even: thresholds vs fast -----===//
//
// Scalar (ScalarOps) time per element of the two forms of E2M1's
// nearest-even magnitude code (E2M1.h): the seven-threshold count that
// specifies it and e2m1NearestEvenFast, which every backend uses (E2M1Test
// proves them equal on all 2^31 non-negative f32 patterns). 2^24 |N(0, 2)|
// values, three repetitions; the sums must agree.
//
//   clang++-22 -O2 -std=c++17 -Iinclude bench/probes/e2m1_encode_speed.cpp \
//     -o /tmp/e2m1_encode_speed && /tmp/e2m1_encode_speed
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/ScalarOps.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

int main() {
  const ScalarOps ops;
  std::vector<float> x(1 << 24);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float &v : x)
    v = std::fabs(normal(rng));
  long sums[2] = {0, 0};
  for (int rep = 0; rep < 3; ++rep) {
    for (int fast = 0; fast < 2; ++fast) {
      auto t0 = std::chrono::steady_clock::now();
      long sum = 0;
      for (float v : x)
        sum += fast ? e2m1NearestEvenFast(ops, v)
                    : e2m1NearestEvenByThresholds(ops, v);
      auto t1 = std::chrono::steady_clock::now();
      sums[fast] = sum;
      std::printf("%-10s %.2f ns/element\n", fast ? "fast" : "thresholds",
                  std::chrono::duration<double, std::nano>(t1 - t0).count() /
                      x.size());
    }
  }
  if (sums[0] != sums[1]) {
    std::printf("MISMATCH: %ld != %ld\n", sums[0], sums[1]);
    return 1;
  }
  return 0;
}
