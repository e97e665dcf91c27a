//===- SparseProductTest.cpp - sparse correction kernels against loops ----===//
//
// The reference is the loop nest convert-fp4-to-linalg emits for each form
// (CorrectionMatmulLowering.cpp), written out in C++ and compiled without
// FMA contraction like the kernels: for every output element acc = C, then
// the terms in block, slot (and rhs slot) order. Checked: every panel tail
// (1 .. 2 panels + 1 columns), row counts around the task split, 1 and 3
// threads, special values, out-of-range indices, a batch-shared operand,
// the swapped-stride output of the dense x sparse form, empty dimensions
// and the size checks.
//
//===----------------------------------------------------------------------===//

#include "fp4/Runtime/CPUSparseProduct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool sameValue(float a, float b) {
  return bitsOf(a) == bitsOf(b) || (std::isnan(a) && std::isnan(b));
}

float sample(std::mt19937 &rng, bool special) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  static const float kSpecial[] = {0.0f,  -0.0f,    1e-45f,   -1e-45f, 3e38f,
                                   -3e38f, INFINITY, -INFINITY, NAN,     1.0f};
  if (special && rng() % 5 == 0)
    return kSpecial[rng() % (sizeof(kSpecial) / sizeof(float))];
  return u(rng);
}

/// A dense rank-4 or rank-3 row-major buffer (batch stride 0 when shared).
template <typename T, int Rank> struct Buf {
  std::vector<T> data;
  int64_t sizes[Rank], strides[Rank];
  Buf(std::initializer_list<int64_t> shape, bool shared) {
    std::copy(shape.begin(), shape.end(), sizes);
    int64_t stride = 1;
    for (int i = Rank - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= (i == 0 && shared) ? 1 : sizes[i];
    }
    if (shared)
      strides[0] = 0;
    data.resize(stride);
  }
  T &at(int64_t i, int64_t j, int64_t k, int64_t l = 0) {
    int64_t off = i * strides[0] + j * strides[1] + k * strides[2];
    if constexpr (Rank == 4)
      off += l * strides[3];
    return data[off];
  }
  template <typename D> D descriptor() {
    D d;
    d.allocated = d.aligned = data.data();
    d.offset = 0;
    for (int i = 0; i < Rank; ++i) {
      d.sizes[i] = sizes[i];
      d.strides[i] = strides[i];
    }
    return d;
  }
};

using V4 = Buf<float, 4>;
using I4 = Buf<int8_t, 4>;
using F3 = Buf<float, 3>;

void fillSparse(V4 &v, I4 &ix, int64_t block, std::mt19937 &rng,
                bool special) {
  for (auto &x : v.data)
    x = sample(rng, special);
  for (auto &i : ix.data) {
    unsigned r = rng() % 16;
    i = r == 0 ? -1 : r == 1 ? block : r == 2 ? -128 : r == 3 ? 127
                                                      : rng() % block;
  }
}

int64_t clampIndex(int64_t i, int64_t block) {
  return std::min<int64_t>(std::max<int64_t>(i, 0), block - 1);
}

struct Threads {
  explicit Threads(int n) { fp4_cpu_runtime_set_threads(n); }
  ~Threads() { fp4_cpu_runtime_set_threads(1); }
};

void checkSparseDense(int64_t batch, int64_t rows, int64_t cols,
                      int64_t block, int64_t blocks, int64_t slots,
                      bool shared, bool special, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t k = block * blocks;
  V4 v({batch, rows, blocks, slots}, false);
  I4 ix({batch, rows, blocks, slots}, false);
  fillSparse(v, ix, block, rng, special);
  F3 d({batch, cols, k}, shared);
  for (auto &x : d.data)
    x = sample(rng, special);
  F3 c({batch, rows, cols}, false), want({batch, rows, cols}, false);
  for (size_t i = 0; i < c.data.size(); ++i)
    c.data[i] = want.data[i] = sample(rng, special);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q) {
        float acc = want.at(b, r, q);
        for (int64_t blk = 0; blk < blocks; ++blk)
          for (int64_t s = 0; s < slots; ++s) {
            float w = d.at(b, q, blk * block + clampIndex(ix.at(b, r, blk, s),
                                                          block));
            acc = acc + v.at(b, r, blk, s) * w;
          }
        want.at(b, r, q) = acc;
      }
  auto vd = v.descriptor<FP4StridedMemRef4F32>();
  auto id = ix.descriptor<FP4StridedMemRef4I8>();
  auto dd = d.descriptor<FP4StridedMemRef3F32>();
  auto cd = c.descriptor<FP4StridedMemRef3F32>();
  _mlir_ciface_fp4_cpu_sparse_dense_f32(&vd, &id, &dd, &cd, block);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_TRUE(sameValue(c.data[i], want.data[i]))
        << "element " << i << ": " << c.data[i] << " vs " << want.data[i]
        << " (batch " << batch << ", " << rows << "x" << cols << ", B "
        << block << ")";
}

TEST(SparseProduct, SparseDenseMatchesTheLoopsOnEveryTail) {
  for (int threads : {1, 3}) {
    Threads t(threads);
    unsigned seed = 1;
    for (int64_t cols : {1, 5, 127, 128, 129, 257})
      for (int64_t rows : {1, 3, 7, 40})
        checkSparseDense(1, rows, cols, 32, 2, 2, false, true, seed++);
    checkSparseDense(3, 17, 139, 8, 4, 1, false, true, seed++);
    checkSparseDense(3, 17, 139, 16, 3, 4, true, true, seed++);
    checkSparseDense(2, 64, 300, 32, 12, 2, false, false, seed++);
    // K not a multiple of the packer's 8 x 8 tiles (K = 20, 9, 7): the
    // tile path and the K tail in one panel.
    checkSparseDense(1, 9, 131, 4, 5, 2, false, true, seed++);
    checkSparseDense(2, 5, 70, 3, 3, 2, true, true, seed++);
    checkSparseDense(1, 6, 9, 7, 1, 3, false, true, seed++);
  }
}

/// dense x sparse: C[b, m, n] += sum L[b, m, col] * vR[b, n, c, t], the
/// sparse-dense kernel on the transposed view of C (strides swapped).
TEST(SparseProduct, DenseSparseThroughTheSwappedOutput) {
  Threads t(3);
  std::mt19937 rng(77);
  const int64_t batch = 2, m = 23, n = 141, block = 8, blocks = 6, slots = 2;
  const int64_t k = block * blocks;
  V4 v({batch, n, blocks, slots}, false);
  I4 ix({batch, n, blocks, slots}, false);
  fillSparse(v, ix, block, rng, true);
  F3 l({batch, m, k}, false);
  for (auto &x : l.data)
    x = sample(rng, true);
  F3 c({batch, m, n}, false);
  std::vector<float> want(c.data.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = c.at(b, i, j) = sample(rng, true);
        for (int64_t blk = 0; blk < blocks; ++blk)
          for (int64_t s = 0; s < slots; ++s)
            acc = acc + l.at(b, i, blk * block +
                                       clampIndex(ix.at(b, j, blk, s), block)) *
                            v.at(b, j, blk, s);
        want[b * m * n + i * n + j] = acc;
      }
  auto vd = v.descriptor<FP4StridedMemRef4F32>();
  auto id = ix.descriptor<FP4StridedMemRef4I8>();
  auto ld = l.descriptor<FP4StridedMemRef3F32>();
  auto cd = c.descriptor<FP4StridedMemRef3F32>();
  std::swap(cd.sizes[1], cd.sizes[2]);
  std::swap(cd.strides[1], cd.strides[2]);
  _mlir_ciface_fp4_cpu_sparse_dense_f32(&vd, &id, &ld, &cd, block);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(sameValue(c.data[i], want[i])) << "element " << i;
}

void checkSparseSparse(int64_t batch, int64_t m, int64_t n, int64_t bl,
                       int64_t kl, int64_t br, int64_t kr, int64_t k,
                       bool sharedRhs, unsigned seed) {
  std::mt19937 rng(seed);
  V4 lv({batch, m, k / bl, kl}, false), rv({batch, n, k / br, kr}, sharedRhs);
  I4 li({batch, m, k / bl, kl}, false), ri({batch, n, k / br, kr}, sharedRhs);
  fillSparse(lv, li, bl, rng, true);
  fillSparse(rv, ri, br, rng, true);
  // Mostly in-range rhs indices, so that many terms hit.
  for (auto &i : ri.data)
    if (rng() % 4)
      i = rng() % br;
  F3 c({batch, m, n}, false);
  std::vector<float> want(c.data.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = c.at(b, i, j) = (rng() % 3 == 0) ? -0.0f : sample(rng, true);
        for (int64_t blk = 0; blk < k / bl; ++blk)
          for (int64_t s = 0; s < kl; ++s) {
            int64_t col = blk * bl + clampIndex(li.at(b, i, blk, s), bl);
            for (int64_t tt = 0; tt < kr; ++tt)
              if (ri.at(b, j, col / br, tt) == col % br)
                acc = acc + lv.at(b, i, blk, s) * rv.at(b, j, col / br, tt);
          }
        want[b * m * n + i * n + j] = acc;
      }
  auto lvd = lv.descriptor<FP4StridedMemRef4F32>();
  auto lid = li.descriptor<FP4StridedMemRef4I8>();
  auto rvd = rv.descriptor<FP4StridedMemRef4F32>();
  auto rid = ri.descriptor<FP4StridedMemRef4I8>();
  auto cd = c.descriptor<FP4StridedMemRef3F32>();
  _mlir_ciface_fp4_cpu_sparse_sparse_f32(&lvd, &lid, &rvd, &rid, &cd, bl, br);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(sameValue(c.data[i], want[i]))
        << "element " << i << ": " << c.data[i] << " vs " << want[i];
}

TEST(SparseProduct, SparseSparseMatchesTheLoops) {
  for (int threads : {1, 3}) {
    Threads t(threads);
    checkSparseSparse(1, 9, 130, 32, 2, 4, 2, 128, false, 5);
    checkSparseSparse(2, 31, 257, 8, 1, 32, 4, 256, false, 6);
    checkSparseSparse(3, 5, 7, 16, 4, 16, 4, 64, true, 7);
    checkSparseSparse(1, 1, 1, 4, 2, 8, 2, 32, false, 8);
    // Many more lhs entries than rhs ones (a 2:4 residual against top-2
    // outliers): the rhs-driven sweep.
    checkSparseSparse(1, 37, 139, 4, 2, 32, 2, 256, false, 9);
    checkSparseSparse(3, 17, 5, 4, 2, 32, 1, 128, true, 10);
    checkSparseSparse(2, 1, 200, 2, 2, 64, 4, 128, false, 11);
  }
}

TEST(SparseProduct, EmptyDimensionsLeaveTheOutput) {
  F3 c({1, 2, 3}, false);
  std::fill(c.data.begin(), c.data.end(), 5.0f);
  V4 v({1, 2, 0, 2}, false);
  I4 ix({1, 2, 0, 2}, false);
  F3 d({1, 3, 0}, false);
  auto vd = v.descriptor<FP4StridedMemRef4F32>();
  auto id = ix.descriptor<FP4StridedMemRef4I8>();
  auto dd = d.descriptor<FP4StridedMemRef3F32>();
  auto cd = c.descriptor<FP4StridedMemRef3F32>();
  _mlir_ciface_fp4_cpu_sparse_dense_f32(&vd, &id, &dd, &cd, 32);
  V4 rv({1, 3, 0, 2}, false);
  I4 ri({1, 3, 0, 2}, false);
  auto rvd = rv.descriptor<FP4StridedMemRef4F32>();
  auto rid = ri.descriptor<FP4StridedMemRef4I8>();
  _mlir_ciface_fp4_cpu_sparse_sparse_f32(&vd, &id, &rvd, &rid, &cd, 32, 32);
  for (float x : c.data)
    EXPECT_EQ(x, 5.0f);
}

TEST(SparseProductDeathTest, MismatchesAreReported) {
  V4 v({1, 2, 2, 2}, false);
  I4 ix({1, 2, 2, 2}, false);
  F3 d({1, 3, 64}, false), c({1, 2, 3}, false), bad({1, 3, 3}, false);
  auto vd = v.descriptor<FP4StridedMemRef4F32>();
  auto id = ix.descriptor<FP4StridedMemRef4I8>();
  auto dd = d.descriptor<FP4StridedMemRef3F32>();
  auto cd = c.descriptor<FP4StridedMemRef3F32>();
  auto badd = bad.descriptor<FP4StridedMemRef3F32>();
  EXPECT_DEATH(_mlir_ciface_fp4_cpu_sparse_dense_f32(&vd, &id, &dd, &badd, 32),
               "operand sizes do not agree");
  EXPECT_DEATH(_mlir_ciface_fp4_cpu_sparse_dense_f32(&vd, &id, &dd, &cd, 16),
               "blocks \\* block size");
  EXPECT_DEATH(
      _mlir_ciface_fp4_cpu_sparse_sparse_f32(&vd, &id, &vd, &id, &cd, 32, 16),
      "operand sizes do not agree|not one K");
}

} // namespace
