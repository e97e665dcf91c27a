//===- ContractionRuntime.cpp - _mlir_ciface_fp4_cpu_contract_f32 ---------===//
//
// Splits a contraction into tasks of (batch, panel of output columns, chunk
// of rows), runs them on a small persistent thread pool, and gives each task
// the panel kernel of the best instruction set the CPU has. A task packs
// its own panel of B (K x panelWidth floats, a thread-local buffer) and
// sweeps its rows; so tasks share nothing but read-only inputs, and no
// output element is touched by two tasks: the order of every element's sum
// is the kernel's k order whatever the thread count.
//
//===----------------------------------------------------------------------===//

#include "fp4/Runtime/CPUContraction.h"

#include "ThreadPool.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define FP4_EXPORT __attribute__((visibility("default")))

using namespace fp4::cpu;

namespace {

const PanelKernel &selectKernel() {
#if defined(__x86_64__) && defined(FP4_CPU_RUNTIME_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return panelKernelAVX512();
  if (__builtin_cpu_supports("avx2"))
    return panelKernelAVX2();
#endif
  return panelKernelGeneric();
}

const PanelKernel &kernel() {
  static const PanelKernel &k = selectKernel();
  return k;
}

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "fp4_cpu_contract_f32: %s\n", what);
  std::abort();
}

} // namespace

extern "C" FP4_EXPORT void
_mlir_ciface_fp4_cpu_contract_f32(FP4StridedMemRef3F32 *a,
                                  FP4StridedMemRef3F32 *b,
                                  FP4StridedMemRef3F32 *c) {
  if (!a || !b || !c)
    fail("null descriptor");
  int64_t batch = c->sizes[0], m = c->sizes[1], n = c->sizes[2],
          k = a->sizes[2];
  if (a->sizes[0] != batch || b->sizes[0] != batch || a->sizes[1] != m ||
      b->sizes[2] != n || b->sizes[1] != k)
    fail("operand sizes do not agree ([b, m, k] x [b, k, n] -> [b, m, n])");
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0)
    return; // nothing to add: C keeps its values, as the loops leave it
  const PanelKernel &kern = kernel();
  const int64_t width = kern.panelWidth;
  const int64_t panels = (n + width - 1) / width;
  const int threads = poolThreads();
  // Enough tasks for every thread to get a few; a row chunk repacks its
  // panel, which costs k * width copies against its rows * k * width work.
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  int64_t chunks = 1;
  if (batch * panels < wanted)
    chunks = std::min<int64_t>((wanted + batch * panels - 1) / (batch * panels),
                               (m + 5) / 6);
  const int64_t rowsPerChunk = (m + chunks - 1) / chunks;
  chunks = (m + rowsPerChunk - 1) / rowsPerChunk;
  const float *aData = a->aligned + a->offset;
  const float *bData = b->aligned + b->offset;
  float *cData = c->aligned + c->offset;
  auto task = [&](int64_t t) {
    thread_local std::vector<float> packed;
    int64_t chunk = t % chunks;
    int64_t panel = (t / chunks) % panels;
    int64_t bi = t / (chunks * panels);
    int64_t col0 = panel * width, cols = std::min(width, n - col0);
    int64_t row0 = chunk * rowsPerChunk,
            rows = std::min(rowsPerChunk, m - row0);
    if (static_cast<int64_t>(packed.size()) < k * width)
      packed.resize(k * width);
    kern.pack(bData + bi * b->strides[0] + col0 * b->strides[2],
              b->strides[1], b->strides[2], k, cols, packed.data());
    kern.compute(aData + bi * a->strides[0] + row0 * a->strides[1],
                 a->strides[1], a->strides[2], rows, packed.data(), k,
                 cData + bi * c->strides[0] + row0 * c->strides[1] +
                     col0 * c->strides[2],
                 c->strides[1], c->strides[2], cols);
  };
  parallelFor(batch * panels * chunks, task);
}

extern "C" FP4_EXPORT int fp4_cpu_runtime_threads(void) {
  return poolThreads();
}

extern "C" FP4_EXPORT void fp4_cpu_runtime_set_threads(int n) {
  setPoolThreads(n);
}

extern "C" FP4_EXPORT const char *fp4_cpu_runtime_isa(void) {
  return kernel().isa;
}
