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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#define FP4_EXPORT __attribute__((visibility("default")))

namespace {

/// Output columns per task: a dense panel of K x 128 floats stays in L2
/// for the K of transformer layers (K = 4096: 2 MiB).
constexpr int64_t kPanel = 128;

// The sweeps below are the whole cost; each is built for AVX-512, AVX2 and
// baseline x86-64 and picked by the loader (ifunc), like the dense kernel's
// run-time dispatch. -ffp-contract=off holds for every clone: a multiply
// and an add, never an FMA.
#if defined(__x86_64__) && defined(FP4_CPU_RUNTIME_X86)
#define FP4_SWEEP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FP4_SWEEP
#endif

/// Columns of one sweep: with the row tile below, 4 x 32 accumulators
/// (8 AVX-512 registers, 8 independent add chains to cover the add
/// latency), and the panel slice one sweep reads, K x 32 floats, stays in
/// L1/L2 across the rows of the task (K = 384: 48 KiB).
constexpr int kSweepCols = 32;
static_assert(kPanel % kSweepCols == 0, "the panel is whole sweeps");

/// The rows of one sparse x dense sweep: each row's accumulator slice and
/// its entries (values and packed panel rows), in the loops' order.
struct SweepRow {
  float *acc;
  const float *value;
  const int32_t *column;
};

/// For kRows rows at once and kSweepCols columns, block by block: row r
/// gets acc[r][q] = acc[r][q] + value[e] * w[e][q] for its entries e of
/// the block, in slot order. Interleaving the rows of one block changes no
/// element's order (each row keeps its own accumulator) and lets the rows
/// share the block's panel rows in L1 (a 2:4 residual's rows hit the same
/// 4 dense rows per block).
template <int kRows, int kSlots>
__attribute__((always_inline)) inline void
sweepDenseRows(const SweepRow *rows, const float *panel, int64_t k,
               int64_t q0, int64_t blocks, int64_t runtimeSlots) {
  const int64_t slots = kSlots > 0 ? kSlots : runtimeSlots;
  float x[kRows][kSweepCols];
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < kSweepCols; ++j)
      x[r][j] = rows[r].acc[q0 + j];
  panel += q0 * k;
  for (int64_t c = 0, e0 = 0; c < blocks; ++c, e0 += slots)
    for (int r = 0; r < kRows; ++r)
      for (int64_t e = e0; e < e0 + slots; ++e) {
        const float ve = rows[r].value[e];
        const float *we =
            panel + static_cast<int64_t>(rows[r].column[e]) * kSweepCols;
        for (int j = 0; j < kSweepCols; ++j)
          x[r][j] = x[r][j] + ve * we[j];
      }
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < kSweepCols; ++j)
      rows[r].acc[q0 + j] = x[r][j];
}

// The instances, each cloned per instruction set (target_clones does not
// take templates; the body inlines into every clone).
// Two slots per block (a 2:4 residual, top-2 outliers: the recipes' usual
// forms) get a straight-line block body.
FP4_SWEEP void sweepDenseTile(const SweepRow *rows, const float *panel,
                              int64_t k, int64_t q0, int64_t blocks,
                              int64_t slots) {
  if (slots == 2)
    sweepDenseRows<4, 2>(rows, panel, k, q0, blocks, slots);
  else
    sweepDenseRows<4, 0>(rows, panel, k, q0, blocks, slots);
}
FP4_SWEEP void sweepDenseRow(const SweepRow *row, const float *panel,
                             int64_t k, int64_t q0, int64_t blocks,
                             int64_t slots) {
  sweepDenseRows<1, 0>(row, panel, k, q0, blocks, slots);
}

/// One term of a masked sweep: lanes q with ix[q] == key get
/// a[q] = a[q] + lanes[q] * scalar (the per-lane factor times the
/// broadcast one).
struct MaskedTerm {
  const int32_t *ix;
  int32_t key;
  const float *lanes;
  float scalar;
};

/// For q < n (a multiple of 64), the terms in order: a[q] = a[q] + product
/// where the term's index matches, a[q] unchanged where it does not (not
/// a + 0, which would turn -0 into +0), as the loops' select does. 64
/// lanes stay in registers across all the terms.
FP4_SWEEP void sweepMatching(float *a, const MaskedTerm *terms, int64_t count,
                             int64_t n) {
  constexpr int kLanes = 64;
  for (int64_t q0 = 0; q0 < n; q0 += kLanes) {
    float x[kLanes];
    for (int j = 0; j < kLanes; ++j)
      x[j] = a[q0 + j];
    for (int64_t e = 0; e < count; ++e) {
      const MaskedTerm &t = terms[e];
      const int32_t *ix = t.ix + q0;
      const float *l = t.lanes + q0;
      const float sc = t.scalar;
      const int32_t key = t.key;
      // IEEE multiplication commutes (a NaN's payload aside, which no
      // order fixes), so one operand order serves both forms.
      for (int j = 0; j < kLanes; ++j)
        x[j] = ix[j] == key ? x[j] + l[j] * sc : x[j];
    }
    for (int j = 0; j < kLanes; ++j)
      a[q0 + j] = x[j];
  }
}

/// The dense panel transposed, in column slices of kSweepCols: for
/// q = q0 + j (j < kSweepCols), panel[q0 * k + kk * kSweepCols + j] =
/// dense[b, col0 + q, kk] for q < cols, +0 for the padding columns. One
/// sweep reads one contiguous slice (K x 128 bytes). Eight dense rows at a
/// time: with a unit K stride, 8 x 8 tiles (eight contiguous row loads,
/// eight contiguous slice stores: the clones vectorize the transpose);
/// otherwise, and for the K tail, eight sequential read streams and one
/// 32-byte write per kk.
FP4_SWEEP void packTransposed(FP4StridedMemRef3F32 *dense, int64_t b,
                              int64_t col0, int64_t cols, int64_t k,
                              float *panel) {
  const int64_t sq = dense->strides[1], sk = dense->strides[2];
  const float *base = dense->aligned + dense->offset + b * dense->strides[0] +
                      col0 * sq;
  for (int64_t q0 = 0; q0 < kPanel; q0 += 8) {
    const int64_t n = std::max<int64_t>(0, std::min<int64_t>(8, cols - q0));
    float *slice = panel + (q0 / kSweepCols) * kSweepCols * k + q0 % kSweepCols;
    int64_t kk = 0;
    if (n == 8 && sk == 1) {
      for (; kk + 8 <= k; kk += 8) {
        float tile[8][8];
        for (int q = 0; q < 8; ++q)
          for (int j = 0; j < 8; ++j)
            tile[q][j] = base[(q0 + q) * sq + kk + j];
        for (int j = 0; j < 8; ++j)
          for (int q = 0; q < 8; ++q)
            slice[(kk + j) * kSweepCols + q] = tile[q][j];
      }
    }
    for (; kk < k; ++kk) {
      float *dst = slice + kk * kSweepCols;
      for (int64_t q = 0; q < n; ++q)
        dst[q] = base[(q0 + q) * sq + kk * sk];
      for (int64_t q = n; q < 8; ++q)
        dst[q] = 0.0f;
    }
  }
}

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


/// Sparse x sparse driven by the rhs entries, for when the lhs has many
/// more entries than the rhs (a 2:4 activation residual against top-k
/// weight outliers: the lhs-driven sweep would cost as much as a dense
/// product). For each output column n, the valid rhs entries (index in
/// [0, BR)) sorted by (lhs block, column, slot) drive a sweep over all m of
/// the lhs transposed to [block][slot][m]. Element (m, n) still sees the
/// loops' order: lhs blocks ascending; within one, lhs slots s in order;
/// within (block, s), the hits are the rhs entries at s's column, in their
/// slot order.
void sparseSparseByRhs(FP4StridedMemRef4F32 *lhsValues,
                       FP4StridedMemRef4I8 *lhsIndices,
                       FP4StridedMemRef4F32 *rhsValues,
                       FP4StridedMemRef4I8 *rhsIndices,
                       FP4StridedMemRef3F32 *c, int64_t lhsBlockSize,
                       int64_t rhsBlockSize) {
  const int64_t batch = c->sizes[0], rows = c->sizes[1], cols = c->sizes[2];
  const int64_t lBlocks = lhsValues->sizes[2], lSlots = lhsValues->sizes[3];
  const int64_t rBlocks = rhsValues->sizes[2], rSlots = rhsValues->sizes[3];
  const int64_t rowsPadded = (rows + 63) / 64 * 64;
  std::vector<int32_t> lCol(lBlocks * lSlots * rowsPadded);
  std::vector<float> lVal(lBlocks * lSlots * rowsPadded);
  struct Entry {
    int64_t block, col, slot;
    float value;
  };
  for (int64_t b = 0; b < batch; ++b) {
    // The transposition in row chunks on the pool (serial, it was a tenth
    // of the product's time). Padded rows get column -1: no entry matches
    // them.
    constexpr int64_t kChunk = 64;
    fp4::cpu::parallelFor(rowsPadded / kChunk, [&](int64_t chunk) {
      for (int64_t m = chunk * kChunk; m < (chunk + 1) * kChunk; ++m)
        for (int64_t blk = 0; blk < lBlocks; ++blk)
          for (int64_t s = 0; s < lSlots; ++s) {
            const int64_t at = (blk * lSlots + s) * rowsPadded + m;
            if (m >= rows) {
              lCol[at] = -1;
              lVal[at] = 0.0f;
              continue;
            }
            int64_t idx = at4<int8_t>(lhsIndices, b, m, blk, s);
            idx = std::min<int64_t>(std::max<int64_t>(idx, 0),
                                    lhsBlockSize - 1);
            lCol[at] = static_cast<int32_t>(blk * lhsBlockSize + idx);
            lVal[at] = at4<float>(lhsValues, b, m, blk, s);
          }
    });
    const int64_t wanted = 4 * static_cast<int64_t>(fp4::cpu::poolThreads());
    const int64_t perTask = std::max<int64_t>(1, (cols + wanted - 1) / wanted);
    const int64_t tasks = (cols + perTask - 1) / perTask;
    fp4::cpu::parallelFor(tasks, [&](int64_t task) {
      // kGroup output columns at a time: their C elements are read and
      // written a row (one cache line) at a time, transposed into one
      // accumulator lane array per column. Column by column, C's lines
      // were fetched again for every column, a third of the product.
      constexpr int64_t kGroup = 16;
      thread_local std::vector<float> acc;
      thread_local std::vector<Entry> entries;
      thread_local std::vector<MaskedTerm> terms;
      acc.assign(kGroup * rowsPadded, 0.0f); // padded lanes: never stored
      const int64_t nEnd = std::min(cols, (task + 1) * perTask);
      for (int64_t n0 = task * perTask; n0 < nEnd; n0 += kGroup) {
        const int64_t group = std::min(kGroup, nEnd - n0);
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t j = 0; j < group; ++j)
            acc[j * rowsPadded + m] = at3(c, b, m, n0 + j);
        for (int64_t j = 0; j < group; ++j) {
          const int64_t n = n0 + j;
          entries.clear();
          for (int64_t rb = 0; rb < rBlocks; ++rb)
            for (int64_t t = 0; t < rSlots; ++t) {
              int64_t idx = at4<int8_t>(rhsIndices, b, n, rb, t);
              if (idx < 0 || idx >= rhsBlockSize)
                continue; // matches no in-block position
              int64_t col = rb * rhsBlockSize + idx;
              entries.push_back({col / lhsBlockSize, col, t,
                                 at4<float>(rhsValues, b, n, rb, t)});
            }
          // Entries of one column come from one rhs block, so ordering
          // them by slot keeps their t order.
          std::sort(entries.begin(), entries.end(),
                    [](const Entry &x, const Entry &y) {
                      if (x.block != y.block)
                        return x.block < y.block;
                      return x.col != y.col ? x.col < y.col : x.slot < y.slot;
                    });
          // The terms of column n in the loops' order: lhs blocks, lhs
          // slots, then the rhs entries (one column: rhs slot order).
          terms.clear();
          for (size_t first = 0; first < entries.size();) {
            size_t last = first;
            while (last < entries.size() &&
                   entries[last].block == entries[first].block)
              ++last;
            const int64_t blk = entries[first].block;
            for (int64_t s = 0; s < lSlots; ++s) {
              const int32_t *lc =
                  lCol.data() + (blk * lSlots + s) * rowsPadded;
              const float *lv = lVal.data() + (blk * lSlots + s) * rowsPadded;
              for (size_t e = first; e < last; ++e)
                terms.push_back({lc, static_cast<int32_t>(entries[e].col), lv,
                                 entries[e].value});
            }
            first = last;
          }
          sweepMatching(acc.data() + j * rowsPadded, terms.data(),
                        static_cast<int64_t>(terms.size()), rowsPadded);
        }
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t j = 0; j < group; ++j)
            at3(c, b, m, n0 + j) = acc[j * rowsPadded + m];
      }
    });
  }
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
  // Every row's entries, decoded once for all the panels: their values and
  // dense columns, in the loops' order (blocks, then slots).
  const int64_t perRow = blocks * slots;
  // The caller thread's buffers, reused across calls (every element is
  // written below).
  // (Pointers, not the thread_local names, cross into the pool's lambdas:
  // there a name would be the worker's own instance.)
  thread_local std::vector<float> entryValues;
  thread_local std::vector<int32_t> entryColumns;
  entryValues.resize(batch * rows * perRow);
  entryColumns.resize(batch * rows * perRow);
  float *entryValue = entryValues.data();
  int32_t *entryColumn = entryColumns.data();
  // (On the pool, in chunks of rows: serial, it was a tenth of a 2:4
  // product at K = 384.)
  constexpr int64_t kDecodeRows = 32;
  const int64_t decodeChunks = (batch * rows + kDecodeRows - 1) / kDecodeRows;
  fp4::cpu::parallelFor(decodeChunks, [&](int64_t chunk) {
    const int64_t end = std::min(batch * rows, (chunk + 1) * kDecodeRows);
    for (int64_t br = chunk * kDecodeRows; br < end; ++br) {
      const int64_t b = br / rows, r = br % rows;
      for (int64_t blk = 0, e = br * perRow; blk < blocks; ++blk)
        for (int64_t s = 0; s < slots; ++s, ++e) {
          entryValue[e] = at4<float>(values, b, r, blk, s);
          int64_t idx = at4<int8_t>(indices, b, r, blk, s);
          idx = std::min<int64_t>(std::max<int64_t>(idx, 0), blockSize - 1);
          entryColumn[e] = static_cast<int32_t>(blk * blockSize + idx);
        }
    }
  });
  constexpr int kTile = 4; // sweepDenseTile's rows
  forEachTile(batch, rows, cols, [&](int64_t b, int64_t row0, int64_t nrows,
                                     int64_t col0, int64_t ncols) {
    thread_local std::vector<float> panelBuffer, acc;
    panelBuffer.resize(k * kPanel);
    acc.resize(nrows * kPanel);
    packTransposed(dense, b, col0, ncols, k, panelBuffer.data());
    const float *panel = panelBuffer.data();
    for (int64_t i = 0; i < nrows; ++i)
      for (int64_t q = 0; q < ncols; ++q)
        acc[i * kPanel + q] = at3(c, b, row0 + i, col0 + q);
    // Column slices outside, row tiles inside: one slice of the panel
    // (K x kSweepCols) serves every row of the task while it is in cache.
    // The sweeps cover the full panel width (the tail is zero padding,
    // never stored).
    for (int64_t q0 = 0; q0 < kPanel; q0 += kSweepCols)
      for (int64_t i0 = 0; i0 < nrows; i0 += kTile) {
        const int64_t tile = std::min<int64_t>(kTile, nrows - i0);
        SweepRow tileRows[kTile];
        for (int64_t i = 0; i < tile; ++i) {
          const int64_t first = (b * rows + row0 + i0 + i) * perRow;
          tileRows[i] = {acc.data() + (i0 + i) * kPanel,
                         entryValue + first, entryColumn + first};
        }
        if (tile == kTile) {
          sweepDenseTile(tileRows, panel, k, q0, blocks, slots);
          continue;
        }
        for (int64_t i = 0; i < tile; ++i)
          sweepDenseRow(tileRows + i, panel, k, q0, blocks, slots);
      }
    for (int64_t i = 0; i < nrows; ++i)
      for (int64_t q = 0; q < ncols; ++q)
        at3(c, b, row0 + i, col0 + q) = acc[i * kPanel + q];
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
  // Work of the two sweeps: lhs-driven, every lhs entry against every rhs
  // slot of the panel; rhs-driven, every rhs entry against every lhs slot
  // of all rows. Same bits either way; take the cheaper.
  if (lBlocks * lSlots * rSlots > 2 * rBlocks * rSlots * lSlots) {
    sparseSparseByRhs(lhsValues, lhsIndices, rhsValues, rhsIndices, c,
                      lhsBlockSize, rhsBlockSize);
    return;
  }
  forEachTile(batch, rows, cols, [&](int64_t b, int64_t row0, int64_t nrows,
                                     int64_t col0, int64_t ncols) {
    // The rhs panel transposed: [block][slot][column]; padded columns get
    // index -1, which no in-block position equals.
    thread_local std::vector<int32_t> rIdx;
    thread_local std::vector<float> rVal, acc;
    thread_local std::vector<MaskedTerm> terms;
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
      terms.clear();
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
            terms.push_back({ix, inBlock, w, v});
          }
        }
      sweepMatching(a, terms.data(), static_cast<int64_t>(terms.size()),
                    kPanel);
      for (int64_t n = 0; n < ncols; ++n)
        at3(c, b, m, col0 + n) = a[n];
    }
  });
}
