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

/// For every q < kPanel, in entry order e = 0 .. count-1:
/// a[q] = a[q] + v[e] * w[e][q]. 64 columns at a time stay in registers
/// across all the entries (four independent add chains of AVX-512 width,
/// enough to cover the add latency; the order per column is unchanged).
FP4_SWEEP void sweepDense(float *a, const float *v, const float *const *w,
                          int64_t count) {
  constexpr int kCols = 64;
  static_assert(kPanel % kCols == 0, "the panel is whole column groups");
  for (int64_t q0 = 0; q0 < kPanel; q0 += kCols) {
    float x[kCols];
    for (int j = 0; j < kCols; ++j)
      x[j] = a[q0 + j];
    for (int64_t e = 0; e < count; ++e) {
      const float ve = v[e];
      const float *we = w[e] + q0;
      for (int j = 0; j < kCols; ++j)
        x[j] = x[j] + ve * we[j];
    }
    for (int j = 0; j < kCols; ++j)
      a[q0 + j] = x[j];
  }
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

/// panel[kk * kPanel + q] = dense[b, col0 + q, kk] for q < cols, +0 for
/// the padding columns. Eight dense rows at a time: eight sequential read
/// streams and one 32-byte write per kk, where a row at a time would write
/// with a stride of kPanel floats.
void packTransposed(FP4StridedMemRef3F32 *dense, int64_t b, int64_t col0,
                    int64_t cols, int64_t k, float *panel) {
  const int64_t sq = dense->strides[1], sk = dense->strides[2];
  const float *base = dense->aligned + dense->offset + b * dense->strides[0] +
                      col0 * sq;
  for (int64_t q0 = 0; q0 < kPanel; q0 += 8) {
    const int64_t n = std::max<int64_t>(0, std::min<int64_t>(8, cols - q0));
    for (int64_t kk = 0; kk < k; ++kk) {
      float *dst = panel + kk * kPanel + q0;
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
    // Padded rows get column -1: no entry matches them.
    std::fill(lCol.begin(), lCol.end(), -1);
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t blk = 0; blk < lBlocks; ++blk)
        for (int64_t s = 0; s < lSlots; ++s) {
          int64_t idx = at4<int8_t>(lhsIndices, b, m, blk, s);
          idx = std::min<int64_t>(std::max<int64_t>(idx, 0), lhsBlockSize - 1);
          int64_t at = (blk * lSlots + s) * rowsPadded + m;
          lCol[at] = static_cast<int32_t>(blk * lhsBlockSize + idx);
          lVal[at] = at4<float>(lhsValues, b, m, blk, s);
        }
    const int64_t wanted = 4 * static_cast<int64_t>(fp4::cpu::poolThreads());
    const int64_t perTask = std::max<int64_t>(1, (cols + wanted - 1) / wanted);
    const int64_t tasks = (cols + perTask - 1) / perTask;
    fp4::cpu::parallelFor(tasks, [&](int64_t task) {
      thread_local std::vector<float> acc;
      thread_local std::vector<Entry> entries;
      thread_local std::vector<MaskedTerm> terms;
      acc.resize(rowsPadded);
      for (int64_t n = task * perTask;
           n < std::min(cols, (task + 1) * perTask); ++n) {
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
        // Entries of one column come from one rhs block, so ordering them
        // by slot keeps their t order.
        std::sort(entries.begin(), entries.end(),
                  [](const Entry &x, const Entry &y) {
                    if (x.block != y.block)
                      return x.block < y.block;
                    return x.col != y.col ? x.col < y.col : x.slot < y.slot;
                  });
        float *a = acc.data();
        for (int64_t m = 0; m < rows; ++m)
          a[m] = at3(c, b, m, n);
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
            const int32_t *lc = lCol.data() + (blk * lSlots + s) * rowsPadded;
            const float *lv = lVal.data() + (blk * lSlots + s) * rowsPadded;
            for (size_t e = first; e < last; ++e)
              terms.push_back({lc, static_cast<int32_t>(entries[e].col), lv,
                               entries[e].value});
          }
          first = last;
        }
        sweepMatching(a, terms.data(), static_cast<int64_t>(terms.size()),
                      rowsPadded);
        for (int64_t m = 0; m < rows; ++m)
          at3(c, b, m, n) = a[m];
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
  std::vector<float> entryValue(batch * rows * perRow);
  std::vector<int32_t> entryColumn(batch * rows * perRow);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t blk = 0, e = (b * rows + r) * perRow; blk < blocks; ++blk)
        for (int64_t s = 0; s < slots; ++s, ++e) {
          entryValue[e] = at4<float>(values, b, r, blk, s);
          int64_t idx = at4<int8_t>(indices, b, r, blk, s);
          idx = std::min<int64_t>(std::max<int64_t>(idx, 0), blockSize - 1);
          entryColumn[e] = static_cast<int32_t>(blk * blockSize + idx);
        }
  forEachTile(batch, rows, cols, [&](int64_t b, int64_t row0, int64_t nrows,
                                     int64_t col0, int64_t ncols) {
    thread_local std::vector<float> panel, acc;
    thread_local std::vector<const float *> ws;
    panel.resize(k * kPanel);
    acc.resize(kPanel);
    ws.resize(perRow);
    packTransposed(dense, b, col0, ncols, k, panel.data());
    for (int64_t r = row0; r < row0 + nrows; ++r) {
      float *a = acc.data();
      for (int64_t q = 0; q < ncols; ++q)
        a[q] = at3(c, b, r, col0 + q);
      // Each entry's packed dense row; the sweep covers the full panel
      // width (the tail is zero padding, never stored).
      const int64_t first = (b * rows + r) * perRow;
      for (int64_t e = 0; e < perRow; ++e)
        ws[e] = panel.data() +
                static_cast<int64_t>(entryColumn[first + e]) * kPanel;
      sweepDense(a, entryValue.data() + first, ws.data(), perRow);
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
