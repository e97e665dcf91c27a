//===- SparseProductRuntime.cpp - block-sparse correction products --------===//
//
// The loops convert-fp4-to-linalg emits for a block-sparse correction
// product gather one element of the dense operand per stored entry, with a
// stride of K, one output element at a time: on the MiniLM encoder's full
// correction recipe they were 6 s of a 6.2 s forward. Here a task takes a
// panel of output columns and packs the other operand transposed for it
// (dense: [K][panel]; sparse: [block][slot][panel]), so each stored entry
// of a row becomes one contiguous, vectorizable sweep over the panel. Every
// output element still sees acc = C, then its terms in the loops' order
// (blocks, then slots), each one f32 multiply and one f32 add (the file is
// compiled with -ffp-contract=off): the same bits as the loops.
//
//===----------------------------------------------------------------------===//

#include "fp4/Runtime/CPUSparseProduct.h"

#include "ThreadPool.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define FP4_EXPORT __attribute__((visibility("default")))

namespace {

/// Output columns per task: a dense panel of K x 128 floats stays in L2
/// for the K of transformer layers (K = 4096: 2 MiB).
constexpr int64_t kPanel = 128;

[[noreturn]] void fail(const char *entry, const char *what) {
  std::fprintf(stderr, "%s: %s\n", entry, what);
  std::abort();
}

template <typename T, typename Desc>
const T &at4(const Desc *d, int64_t i, int64_t j, int64_t k, int64_t l) {
  return d->aligned[d->offset + i * d->strides[0] + j * d->strides[1] +
                    k * d->strides[2] + l * d->strides[3]];
}

float &at3(FP4StridedMemRef3F32 *d, int64_t i, int64_t j, int64_t k) {
  return d->aligned[d->offset + i * d->strides[0] + j * d->strides[1] +
                    k * d->strides[2]];
}

/// Splits [batch] x [panels of cols] x [chunks of rows] into tasks, enough
/// for every thread to get a few, and runs fn(b, row0, rows, col0, cols).
template <typename Fn>
void forEachTile(int64_t batch, int64_t rows, int64_t cols, Fn fn) {
  const int64_t panels = (cols + kPanel - 1) / kPanel;
  const int64_t wanted = 4 * static_cast<int64_t>(fp4::cpu::poolThreads());
  int64_t chunks = 1;
  if (batch * panels < wanted)
    chunks = std::min<int64_t>((wanted + batch * panels - 1) / (batch * panels),
                               (rows + 3) / 4);
  const int64_t perChunk = (rows + chunks - 1) / chunks;
  chunks = (rows + perChunk - 1) / perChunk;
  fp4::cpu::parallelFor(batch * panels * chunks, [&](int64_t t) {
    int64_t chunk = t % chunks, panel = (t / chunks) % panels,
            b = t / (chunks * panels);
    int64_t row0 = chunk * perChunk, col0 = panel * kPanel;
    fn(b, row0, std::min(perChunk, rows - row0), col0,
       std::min(kPanel, cols - col0));
  });
}

} // namespace

extern "C" FP4_EXPORT void _mlir_ciface_fp4_cpu_sparse_dense_f32(
    FP4StridedMemRef4F32 *values, FP4StridedMemRef4I8 *indices,
    FP4StridedMemRef3F32 *dense, FP4StridedMemRef3F32 *c, int64_t blockSize) {
  const char *entry = "fp4_cpu_sparse_dense_f32";
  if (!values || !indices || !dense || !c)
    fail(entry, "null descriptor");
  const int64_t batch = c->sizes[0], rows = c->sizes[1], cols = c->sizes[2];
  const int64_t blocks = values->sizes[2], slots = values->sizes[3],
                k = dense->sizes[2];
  for (int i = 0; i < 4; ++i)
    if (indices->sizes[i] != values->sizes[i])
      fail(entry, "values and indices differ in shape");
  if (values->sizes[0] != batch || values->sizes[1] != rows ||
      dense->sizes[0] != batch || dense->sizes[1] != cols)
    fail(entry, "operand sizes do not agree ([b, r, K/B, k] x [b, q, K] -> "
                "[b, r, q])");
  if (blockSize <= 0 || blocks * blockSize != k)
    fail(entry, "blocks * block size is not the dense operand's K");
  if (batch <= 0 || rows <= 0 || cols <= 0 || blocks <= 0 || slots <= 0)
    return; // no term: C keeps its values, as the loops leave it
  forEachTile(batch, rows, cols, [&](int64_t b, int64_t row0, int64_t nrows,
                                     int64_t col0, int64_t ncols) {
    thread_local std::vector<float> panel, acc;
    panel.assign(k * kPanel, 0.0f);
    acc.resize(kPanel);
    for (int64_t q = 0; q < ncols; ++q)
      for (int64_t kk = 0; kk < k; ++kk)
        panel[kk * kPanel + q] = at3(dense, b, col0 + q, kk);
    for (int64_t r = row0; r < row0 + nrows; ++r) {
      float *a = acc.data();
      for (int64_t q = 0; q < ncols; ++q)
        a[q] = at3(c, b, r, col0 + q);
      for (int64_t blk = 0; blk < blocks; ++blk)
        for (int64_t s = 0; s < slots; ++s) {
          const float v = at4<float>(values, b, r, blk, s);
          int64_t idx = at4<int8_t>(indices, b, r, blk, s);
          idx = std::min<int64_t>(std::max<int64_t>(idx, 0), blockSize - 1);
          const float *w = panel.data() + (blk * blockSize + idx) * kPanel;
          // The full panel width (the tail is zero padding, never stored)
          // keeps the trip count a constant the compiler vectorizes.
          for (int64_t q = 0; q < kPanel; ++q)
            a[q] = a[q] + v * w[q];
        }
      for (int64_t q = 0; q < ncols; ++q)
        at3(c, b, r, col0 + q) = a[q];
    }
  });
}

extern "C" FP4_EXPORT void _mlir_ciface_fp4_cpu_sparse_sparse_f32(
    FP4StridedMemRef4F32 *lhsValues, FP4StridedMemRef4I8 *lhsIndices,
    FP4StridedMemRef4F32 *rhsValues, FP4StridedMemRef4I8 *rhsIndices,
    FP4StridedMemRef3F32 *c, int64_t lhsBlockSize, int64_t rhsBlockSize) {
  const char *entry = "fp4_cpu_sparse_sparse_f32";
  if (!lhsValues || !lhsIndices || !rhsValues || !rhsIndices || !c)
    fail(entry, "null descriptor");
  const int64_t batch = c->sizes[0], rows = c->sizes[1], cols = c->sizes[2];
  for (int i = 0; i < 4; ++i)
    if (lhsIndices->sizes[i] != lhsValues->sizes[i] ||
        rhsIndices->sizes[i] != rhsValues->sizes[i])
      fail(entry, "values and indices differ in shape");
  const int64_t lBlocks = lhsValues->sizes[2], lSlots = lhsValues->sizes[3];
  const int64_t rBlocks = rhsValues->sizes[2], rSlots = rhsValues->sizes[3];
  if (lhsValues->sizes[0] != batch || lhsValues->sizes[1] != rows ||
      rhsValues->sizes[0] != batch || rhsValues->sizes[1] != cols)
    fail(entry, "operand sizes do not agree ([b, m, K/BL, kl] x "
                "[b, n, K/BR, kr] -> [b, m, n])");
  if (lhsBlockSize <= 0 || rhsBlockSize <= 0 ||
      lBlocks * lhsBlockSize != rBlocks * rhsBlockSize)
    fail(entry, "the operands' blocks * block size differ (not one K)");
  if (batch <= 0 || rows <= 0 || cols <= 0 || lBlocks <= 0 || lSlots <= 0 ||
      rSlots <= 0)
    return;
  forEachTile(batch, rows, cols, [&](int64_t b, int64_t row0, int64_t nrows,
                                     int64_t col0, int64_t ncols) {
    // The rhs panel transposed: [block][slot][column]; padded columns get
    // index -1, which no in-block position equals.
    thread_local std::vector<int32_t> rIdx;
    thread_local std::vector<float> rVal, acc;
    rIdx.assign(rBlocks * rSlots * kPanel, -1);
    rVal.assign(rBlocks * rSlots * kPanel, 0.0f);
    acc.resize(kPanel);
    for (int64_t n = 0; n < ncols; ++n)
      for (int64_t blk = 0; blk < rBlocks; ++blk)
        for (int64_t t = 0; t < rSlots; ++t) {
          int64_t at = (blk * rSlots + t) * kPanel + n;
          rIdx[at] = at4<int8_t>(rhsIndices, b, col0 + n, blk, t);
          rVal[at] = at4<float>(rhsValues, b, col0 + n, blk, t);
        }
    for (int64_t m = row0; m < row0 + nrows; ++m) {
      float *a = acc.data();
      for (int64_t n = 0; n < ncols; ++n)
        a[n] = at3(c, b, m, col0 + n);
      for (int64_t blk = 0; blk < lBlocks; ++blk)
        for (int64_t s = 0; s < lSlots; ++s) {
          const float v = at4<float>(lhsValues, b, m, blk, s);
          int64_t idx = at4<int8_t>(lhsIndices, b, m, blk, s);
          idx = std::min<int64_t>(std::max<int64_t>(idx, 0), lhsBlockSize - 1);
          const int64_t col = blk * lhsBlockSize + idx;
          const int32_t inBlock = static_cast<int32_t>(col % rhsBlockSize);
          const int64_t rBlk = col / rhsBlockSize;
          for (int64_t t = 0; t < rSlots; ++t) {
            const int32_t *ix = rIdx.data() + (rBlk * rSlots + t) * kPanel;
            const float *w = rVal.data() + (rBlk * rSlots + t) * kPanel;
            // A miss keeps acc as it is (not acc + 0: that would turn a
            // -0 sum into +0), as the loops' select does.
            for (int64_t n = 0; n < kPanel; ++n)
              a[n] = ix[n] == inBlock ? a[n] + v * w[n] : a[n];
          }
        }
      for (int64_t n = 0; n < ncols; ++n)
        at3(c, b, m, col0 + n) = a[n];
    }
  });
}
