//===- CPUContraction.h - fp4's CPU contraction kernel ABI -------*- C++ -*-===//
//
// What fp4-contraction-to-runtime-call's calls land on: one f32 contraction
// C[b, m, n] = C[b, m, n] + sum over k of A[b, m, k] * B[b, k, n] on strided
// views (any stride, 0 included: an operand broadcast over the batch), with
// exactly the arithmetic of linalg-to-loops for every output element:
// acc = C; for k = 0 .. K-1 in order: acc = acc + A * B, one f32 rounding
// per multiply and per add, no FMA. Defined in libfp4_cpu_runtime.so, which
// has no MLIR dependency (ahead-of-time compiled models link it too).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_RUNTIME_CPUCONTRACTION_H
#define FP4_RUNTIME_CPUCONTRACTION_H

#include <cstdint>

extern "C" {

/// The memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> descriptor, as the
/// LLVM lowering lays it out (StridedMemRefType<float, 3>).
struct FP4StridedMemRef3F32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[3];
  int64_t strides[3];
};

/// a: [batch, M, K], b: [batch, K, N], c: [batch, M, N] (read and written).
/// Sizes must agree (checked: a mismatch is reported on stderr and
/// aborts, since generated code never passes one).
void _mlir_ciface_fp4_cpu_contract_f32(FP4StridedMemRef3F32 *a,
                                       FP4StridedMemRef3F32 *b,
                                       FP4StridedMemRef3F32 *c);

/// Threads the kernel uses (the calling thread included). Initially
/// $FP4_CPU_THREADS when set to a positive number, else the machine's
/// hardware threads.
int fp4_cpu_runtime_threads(void);
/// Sets it (n >= 1; other values are ignored). Not to be called while a
/// contraction runs.
void fp4_cpu_runtime_set_threads(int n);
/// The instruction set the kernel dispatched to: "avx512f", "avx2" or
/// "generic".
const char *fp4_cpu_runtime_isa(void);
}

namespace fp4::cpu {

/// One instruction set's kernel: panels of `panelWidth` output columns.
struct PanelKernel {
  const char *isa;
  int64_t panelWidth;
  /// dst[k * panelWidth + j] = B[k, col0 + j] for j < cols, else +0.
  void (*pack)(const float *b, int64_t strideK, int64_t strideN, int64_t k,
               int64_t cols, float *dst);
  /// C[r, j] for r < rows, j < cols (cols <= panelWidth) accumulated over
  /// the packed panel, k in order.
  void (*compute)(const float *a, int64_t strideM, int64_t strideK,
                  int64_t rows, const float *panel, int64_t k, float *c,
                  int64_t strideCM, int64_t strideCN, int64_t cols);
};

// Exported (the library is built with hidden visibility) so the unit tests
// can check every instruction set's kernel, not only the one dispatched to.
#define FP4_CPU_RUNTIME_API __attribute__((visibility("default")))
FP4_CPU_RUNTIME_API const PanelKernel &panelKernelGeneric();
/// x86-64 only.
FP4_CPU_RUNTIME_API const PanelKernel &panelKernelAVX2();
FP4_CPU_RUNTIME_API const PanelKernel &panelKernelAVX512();

} // namespace fp4::cpu

#endif // FP4_RUNTIME_CPUCONTRACTION_H
