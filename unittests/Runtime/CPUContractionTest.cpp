//===- CPUContractionTest.cpp - libfp4_cpu_runtime against the loops ------===//
//
// The contraction kernel's contract is the loops' bits: acc = C, then
// acc = acc + A * B for k in order, one rounding each. The reference here
// is that loop, compiled with -ffp-contract=off like the kernel. Every
// instruction set's panel kernel the CPU can run is checked on every row
// tail (1 .. 13 rows) and column tail (1 .. 2 panels + 1), K = 0 .. 9 and
// longer K, special values (+-0, values that round to zero, subnormals,
// overflow to Inf, Inf, NaN), and the strided forms the pass produces
// (transposed operands, an operand broadcast over the batch, a strided
// output); then the full entry point with 1 and several threads.
//
//===----------------------------------------------------------------------===//

#include "fp4/Runtime/CPUContraction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace fp4::cpu;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// Same bits, or both NaN (neither the loops nor the kernel fix a NaN's
/// payload when two meet).
bool sameValue(float a, float b) {
  return bitsOf(a) == bitsOf(b) || (std::isnan(a) && std::isnan(b));
}

/// Values with every special case mixed in.
float sample(std::mt19937 &rng, bool special) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  if (!special)
    return u(rng);
  static const float kSpecial[] = {0.0f,     -0.0f,   1e-45f,  -1e-45f,
                                   1e-38f,   3e38f,   -3e38f,  INFINITY,
                                   -INFINITY, NAN,    1.0f,    -1.0f,
                                   1e-30f,   65504.0f};
  unsigned pick = rng() % 40;
  if (pick < sizeof(kSpecial) / sizeof(float))
    return kSpecial[pick];
  return u(rng);
}

struct Strided {
  std::vector<float> data;
  int64_t sizes[3], strides[3];
  float &at(int64_t i, int64_t j, int64_t k) {
    return data[i * strides[0] + j * strides[1] + k * strides[2]];
  }
  FP4StridedMemRef3F32 descriptor() {
    FP4StridedMemRef3F32 d;
    d.allocated = d.aligned = data.data();
    d.offset = 0;
    for (int i = 0; i < 3; ++i) {
      d.sizes[i] = sizes[i];
      d.strides[i] = strides[i];
    }
    return d;
  }
};

/// A [d0, d1, d2] view, row-major or with its last two dimensions
/// transposed in memory, or broadcast over d0 (stride 0).
Strided makeView(int64_t d0, int64_t d1, int64_t d2, bool transposed,
                 bool broadcast, std::mt19937 &rng, bool special) {
  Strided v;
  v.sizes[0] = d0;
  v.sizes[1] = d1;
  v.sizes[2] = d2;
  int64_t planes = broadcast ? 1 : d0;
  v.data.resize(std::max<int64_t>(1, planes * d1 * d2));
  for (float &f : v.data)
    f = sample(rng, special);
  v.strides[0] = broadcast ? 0 : d1 * d2;
  v.strides[1] = transposed ? 1 : d2;
  v.strides[2] = transposed ? d1 : 1;
  return v;
}

void reference(Strided &a, Strided &b, Strided &c) {
  for (int64_t bi = 0; bi < c.sizes[0]; ++bi)
    for (int64_t i = 0; i < c.sizes[1]; ++i)
      for (int64_t j = 0; j < c.sizes[2]; ++j) {
        float acc = c.at(bi, i, j);
        for (int64_t k = 0; k < a.sizes[2]; ++k)
          acc = acc + a.at(bi, i, k) * b.at(bi, k, j);
        c.at(bi, i, j) = acc;
      }
}

std::vector<const PanelKernel *> runnableKernels() {
  std::vector<const PanelKernel *> out{&panelKernelGeneric()};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    out.push_back(&panelKernelAVX2());
  if (__builtin_cpu_supports("avx512f"))
    out.push_back(&panelKernelAVX512());
#endif
  return out;
}

/// One panel kernel on one [rows, k] x [k, cols] case (cols <= width),
/// output strided by `scn` columns.
void checkPanel(const PanelKernel &kern, int64_t rows, int64_t k, int64_t cols,
                bool transposedA, bool transposedB, int64_t scn,
                std::mt19937 &rng, bool special) {
  Strided a = makeView(1, rows, k, transposedA, false, rng, special);
  Strided b = makeView(1, k, cols, transposedB, false, rng, special);
  Strided c;
  c.sizes[0] = 1;
  c.sizes[1] = rows;
  c.sizes[2] = cols;
  c.strides[0] = 0;
  c.strides[2] = scn;
  c.strides[1] = cols * scn + 3;
  c.data.resize(rows * c.strides[1] + 1);
  for (float &f : c.data)
    f = sample(rng, special);
  Strided expected = c;
  reference(a, b, expected);
  std::vector<float> packed(std::max<int64_t>(1, k * kern.panelWidth));
  kern.pack(b.data.data(), b.strides[1], b.strides[2], k, cols, packed.data());
  kern.compute(a.data.data(), a.strides[1], a.strides[2], rows, packed.data(),
               k, c.data.data(), c.strides[1], c.strides[2], cols);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_TRUE(sameValue(c.data[i], expected.data[i]))
        << kern.isa << " rows " << rows << " k " << k << " cols " << cols
        << " element " << i << ": " << c.data[i] << " vs " << expected.data[i];
}

TEST(CPUContraction, PanelKernelsMatchTheLoopsOnEveryTail) {
  std::mt19937 rng(7);
  for (const PanelKernel *kern : runnableKernels())
    for (int64_t rows = 1; rows <= 13; ++rows)
      for (int64_t k : {0, 1, 2, 3, 5, 9, 33})
        for (int64_t cols = 1; cols <= kern->panelWidth; ++cols)
          for (bool special : {false, true})
            checkPanel(*kern, rows, k, cols, rows % 2 == 0, cols % 3 == 0,
                       cols % 4 == 1 ? 2 : 1, rng, special);
}

void checkEntry(int64_t batch, int64_t m, int64_t k, int64_t n, bool ta,
                bool tb, bool broadcastB, bool special, int threads,
                unsigned seed) {
  std::mt19937 rng(seed);
  fp4_cpu_runtime_set_threads(threads);
  Strided a = makeView(batch, m, k, ta, false, rng, special);
  Strided b = makeView(batch, k, n, tb, broadcastB, rng, special);
  Strided c = makeView(batch, m, n, false, false, rng, special);
  Strided expected = c;
  reference(a, b, expected);
  FP4StridedMemRef3F32 da = a.descriptor(), db = b.descriptor(),
                       dc = c.descriptor();
  _mlir_ciface_fp4_cpu_contract_f32(&da, &db, &dc);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_TRUE(sameValue(c.data[i], expected.data[i]))
        << fp4_cpu_runtime_isa() << " " << batch << "x" << m << "x" << k
        << "x" << n << " threads " << threads << " element " << i;
}

TEST(CPUContraction, EntryPointMatchesTheLoops) {
  unsigned seed = 1;
  for (int threads : {1, 3})
    for (auto [batch, m, k, n] :
         std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1},
                                             {1, 7, 0, 9},
                                             {1, 37, 61, 70},
                                             {3, 13, 37, 70},
                                             {96, 5, 8, 6},
                                             {1, 256, 96, 97},
                                             {2, 1, 300, 129}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool broadcastB : {false, true}) {
            // Evaluated before the call: the special flag and the seed.
            bool special = seed % 2 == 0;
            checkEntry(batch, m, k, n, ta, tb, broadcastB, special, threads,
                       seed++);
          }
  fp4_cpu_runtime_set_threads(2);
}

TEST(CPUContraction, EmptyDimensionsLeaveTheOutput) {
  float out[4] = {1.0f, -0.0f, NAN, 2.0f};
  float in[4] = {5.0f, 5.0f, 5.0f, 5.0f};
  FP4StridedMemRef3F32 a{in, in, 0, {1, 2, 0}, {0, 0, 1}};
  FP4StridedMemRef3F32 b{in, in, 0, {1, 0, 2}, {0, 2, 1}};
  FP4StridedMemRef3F32 c{out, out, 0, {1, 2, 2}, {0, 2, 1}};
  _mlir_ciface_fp4_cpu_contract_f32(&a, &b, &c);
  EXPECT_EQ(bitsOf(out[0]), bitsOf(1.0f));
  EXPECT_EQ(bitsOf(out[1]), bitsOf(-0.0f));
  EXPECT_TRUE(std::isnan(out[2]));
  FP4StridedMemRef3F32 none{out, out, 0, {1, 0, 2}, {0, 2, 1}};
  FP4StridedMemRef3F32 aNone{in, in, 0, {1, 0, 0}, {0, 0, 1}};
  _mlir_ciface_fp4_cpu_contract_f32(&aNone, &b, &none);
}

TEST(CPUContractionDeathTest, MismatchedSizesAreReported) {
  float buf[16] = {};
  FP4StridedMemRef3F32 a{buf, buf, 0, {1, 2, 3}, {0, 3, 1}};
  FP4StridedMemRef3F32 b{buf, buf, 0, {1, 4, 2}, {0, 2, 1}};
  FP4StridedMemRef3F32 c{buf, buf, 0, {1, 2, 2}, {0, 2, 1}};
  EXPECT_DEATH(_mlir_ciface_fp4_cpu_contract_f32(&a, &b, &c),
               "operand sizes do not agree");
}

TEST(CPUContraction, ReportsItsConfiguration) {
  std::string isa = fp4_cpu_runtime_isa();
  EXPECT_TRUE(isa == "avx512f" || isa == "avx2" || isa == "generic") << isa;
  fp4_cpu_runtime_set_threads(3);
  EXPECT_EQ(fp4_cpu_runtime_threads(), 3);
  fp4_cpu_runtime_set_threads(0); // ignored
  EXPECT_EQ(fp4_cpu_runtime_threads(), 3);
}

} // namespace
