//===- CorrectionKernels.h - kernels of the accuracy recipes ----*- C++ -*-===//
//
// Builders (KernelBuilders.h conventions: one gpu.func, a launch plan or
// failure with a reason) for the ops of fp4-outlier-fallback, fp4-residual
// and standalone fp4.rotate. All are plain SIMT kernels on rank-2 static
// shapes; every value they produce is computed by the numerics templates
// (Outliers.h, Residual.h, Hadamard.h, the schemes' dequantizers through
// ElementAccess), so the split parts are bit-exact with the CPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_CORRECTIONKERNELS_H
#define LIB_CONVERSION_FP4TOGPU_CORRECTIONKERNELS_H

#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"

#include <tuple>
#include <utility>

namespace mlir::fp4 {

/// fp4.split_outliers (quantized null) or fp4.residual (quantized set) of a
/// [rows, cols] tensor: block top-k along the last axis. Arguments: input,
/// [quantized components], [rest when splitting], values, indices.
struct BlockTopKKernelSpec {
  int64_t rows = 0, cols = 0, blockSize = 0, k = 0;
  Type inputElementType, valuesElementType;
  QuantizedTensorType quantized;
  SmallVector<KernelArg> args;
};
FailureOr<KernelPlan>
buildBlockTopKKernel(OpBuilder &builder, Location loc, gpu::GPUModuleOp module,
                     StringRef name, const BlockTopKKernelSpec &spec,
                     std::string &reason);

/// fp4.split_channels of a [rows, cols] tensor. Arguments: input, rest,
/// gathered.
struct SplitChannelsKernelSpec {
  int64_t rows = 0, cols = 0;
  SmallVector<int64_t> channels;
  Type inputElementType, gatheredElementType;
  SmallVector<KernelArg> args;
};
FailureOr<KernelPlan>
buildSplitChannelsKernel(OpBuilder &builder, Location loc,
                         gpu::GPUModuleOp module, StringRef name,
                         const SplitChannelsKernelSpec &spec,
                         std::string &reason);

/// fp4.rotate along the last axis of a [rows, cols] tensor.
/// Arguments: input, result.
struct RotateKernelSpec {
  int64_t rows = 0, cols = 0, size = 0, stride = 1;
  std::optional<uint32_t> seed;
  bool inverse = false;
  Type inputElementType, resultElementType;
  SmallVector<KernelArg> args;
};
/// Stride 1 and groups of up to 64: one thread per group, in registers;
/// anything else: buildSharedRotateKernel.
FailureOr<KernelPlan> buildRotateKernel(OpBuilder &builder, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        const RotateKernelSpec &spec,
                                        std::string &reason);
/// One CTA per group of size * stride elements staged in shared memory
/// (SharedRotateKernel.cpp): strided (two-level cross-block) and large
/// rotations.
FailureOr<KernelPlan>
buildSharedRotateKernel(OpBuilder &builder, Location loc,
                        gpu::GPUModuleOp module, StringRef name,
                        const RotateKernelSpec &spec, std::string &reason);

/// fp4.permute along the last axis of a [rows, cols] tensor. Arguments:
/// input, permutation (i32 [cols], read-only), result.
struct PermuteKernelSpec {
  int64_t rows = 0, cols = 0;
  SmallVector<KernelArg> args;
};
FailureOr<KernelPlan> buildPermuteKernel(OpBuilder &builder, Location loc,
                                         gpu::GPUModuleOp module,
                                         StringRef name,
                                         const PermuteKernelSpec &spec,
                                         std::string &reason);

/// One operand of a correction product, as the kernels read it.
struct CorrectionOperand {
  /// Dense float operand: its element type. Null otherwise.
  Type floatType;
  /// Dense quantized operand. Null otherwise.
  QuantizedTensorType quantized;
  /// Block-sparse operand: block size B and entries per block k (> 0).
  int64_t blockSize = 0, k = 0;
  Type valuesElementType;

  bool isSparse() const { return k > 0; }
  /// Number of kernel arguments (memrefs) the operand takes.
  int64_t numArgs() const;
};

/// fp4.correction_matmul of rank 2: result[m, n] = acc[m, n] + sum
/// lhs[m, :] * rhs[n, :]. Arguments: lhs, rhs, [acc], result.
struct CorrectionProductKernelSpec {
  int64_t m = 0, n = 0, k = 0;
  CorrectionOperand lhs, rhs;
  /// Element type of acc; null without one.
  Type accElementType;
  Type resultElementType;
  SmallVector<KernelArg> args;
};
/// One thread per output element, looping over the stored entries of the
/// sparse side(s) and reading the partner by its column (a gather).
FailureOr<KernelPlan>
buildCorrectionProductKernel(OpBuilder &builder, Location loc,
                             gpu::GPUModuleOp module, StringRef name,
                             const CorrectionProductKernelSpec &spec,
                             std::string &reason);

/// A block-sparse [rows, cols] (values, indices) pair written as a dense
/// tensor of `resultElementType`. Arguments: values, indices, result.
struct DensifyKernelSpec {
  int64_t rows = 0, cols = 0, blockSize = 0, k = 0;
  Type valuesElementType, resultElementType;
  SmallVector<KernelArg> args;
};
FailureOr<KernelPlan> buildDensifyKernel(OpBuilder &builder, Location loc,
                                         gpu::GPUModuleOp module,
                                         StringRef name,
                                         const DensifyKernelSpec &spec,
                                         std::string &reason);

/// result = round(f32(acc) + product) elementwise on [rows, cols] (without
/// acc: round(product)); the product is f32, [rows, cols] or, transposed,
/// [cols, rows]. Arguments: [acc], product, result.
struct AccumulateKernelSpec {
  int64_t rows = 0, cols = 0;
  bool transposedProduct = false;
  /// Null without acc.
  Type accElementType;
  Type resultElementType;
  SmallVector<KernelArg> args;
};
FailureOr<KernelPlan> buildAccumulateKernel(OpBuilder &builder, Location loc,
                                            gpu::GPUModuleOp module,
                                            StringRef name,
                                            const AccumulateKernelSpec &spec,
                                            std::string &reason);

/// One row group of a fused correction chain's stacked activations: a
/// dense part (quantized, whose values are exact in bf16, or bf16; absent
/// when both types are null) plus an optional block-sparse bf16 part that
/// is +0 in the dense part wherever it stores an entry, so that their sum
/// is exact in bf16.
struct StackedActivationGroup {
  CorrectionOperand dense, sparse;
};

/// The activation parts of a fused chain (FusedCorrectionChain.h) written
/// as bf16 row groups: group g of [rows, cols] lands in output p at rows
/// [j * rows, (j + 1) * rows) where p, j locate g in `outputGroups` (groups
/// per output, in order). With `transposedSum`, also the f32 sum over the
/// groups, transposed to [cols, rows], for the weight-outlier epilogue.
/// Arguments: each group's dense then sparse memrefs, the outputs, [the
/// transposed sum].
struct StackActivationsKernelSpec {
  int64_t rows = 0, cols = 0;
  SmallVector<StackedActivationGroup> groups;
  SmallVector<int64_t> outputGroups;
  bool transposedSum = false;
  /// The transposed sum's layout (TransposedSum.h): 0 [cols, rows], else
  /// lane-banked [C, 32, rows] with C = this.
  int64_t sumBankColumns = 0;
  SmallVector<KernelArg> args;
};
/// One thread per element (row, col), all groups.
FailureOr<KernelPlan>
buildStackActivationsKernel(OpBuilder &builder, Location loc,
                            gpu::GPUModuleOp module, StringRef name,
                            const StackActivationsKernelSpec &spec,
                            std::string &reason);

/// The activation side of a fused chain computed from x in one kernel
/// (ActivationPrepKernel.cpp): [rotate] -> [split_outliers] -> quantize ->
/// [residual] on a [rows, cols] tensor along its last axis, writing the
/// ops' results and the stacker's outputs (StackActivationsKernelSpec):
/// group 0 is Q(rest) with the split's outliers, group 1 the residual.
/// Arguments: input, [split values, indices (storeSplit)], the quantized
/// components, [residual values, indices (storeResidual)], the stacked
/// outputs, [the compressed residual: values, metadata], [the transposed
/// sum].
struct ActivationPrepKernelSpec {
  int64_t rows = 0, cols = 0;
  Type inputElementType;
  /// The fused rotation (size 0: none) and its result type.
  int64_t rotationSize = 0;
  std::optional<uint32_t> rotationSeed;
  bool rotationInverse = false;
  Type rotatedElementType;
  /// Block top-k of the split (k 0: none) and of the residual (k 0: none).
  int64_t splitBlock = 0, splitK = 0;
  Type splitValuesType;
  int64_t residualBlock = 0, residualK = 0;
  Type residualValuesType;
  QuantizedTensorType quantized;
  SmallVector<int64_t> outputGroups;
  bool transposedSum = false;
  /// The transposed sum's layout (TransposedSum.h), as the stacker's.
  int64_t sumBankColumns = 0;
  /// The residual (block 4, top 2, bf16) goes out compressed for the
  /// prefill kernel's sparse tensor cores (MatmulKernelSpec::sparseLhs:
  /// values [M, K/2] bf16 by ascending position, metadata [M, K/8] i8)
  /// instead of as a stacked row group.
  bool compressedResidual = false;
  /// Whether the split's and the residual's results are written: not when
  /// only the fused chain read them (the chain takes the stacked or
  /// compressed forms), which saves their bytes (24 MB of the prep's
  /// ~114 MB at 4096 x 4096).
  bool storeSplit = true, storeResidual = true;
  /// Whether the quantized codes and scales are read back from shared
  /// copies where they fit (prep-readback=shared) instead of from the
  /// global outputs.
  bool sharedReadback = false;
  SmallVector<KernelArg> args;

  /// The quantize kernel's view of the rotation and quantization.
  QuantizeKernelSpec quantizeSpec() const;
};
/// What the kernel's thread mapping came out as.
struct ActivationPrepLayout {
  GPUQuantizePlan plan;
  int64_t chunk = 0, blockDim = 0;
};
/// Whether the kernel takes `spec` (also asked by the chain analysis, so
/// that the producers are only left to the kernel when it builds).
LogicalResult planActivationPrep(const ActivationPrepKernelSpec &spec,
                                 ActivationPrepLayout &layout,
                                 std::string &reason);
/// The quantize kernel's thread chunks (E = 8 elements for 32-blocks:
/// four lanes per block, xor shuffles across them), one barrier before
/// the codes are read back.
FailureOr<KernelPlan>
buildActivationPrepKernel(OpBuilder &builder, Location loc,
                          gpu::GPUModuleOp module, StringRef name,
                          const ActivationPrepKernelSpec &spec,
                          std::string &reason);

/// The end of a fused chain: result[m, n] = round(acc[m, n] + sum over the
/// products p and their groups j of product_p[j * m_rows + m, n] + sum over
/// the stored entries e of row n of the sparse weights of
/// summedT[col(e), m] * value(e)). Arguments: the products (f32,
/// [groups_p * m, n]), [summedT (f32 [k, m]), weight values, indices],
/// [acc], result.
struct StackedEpilogueKernelSpec {
  int64_t m = 0, n = 0, k = 0;
  SmallVector<int64_t> productGroups;
  /// The weight outliers (sparse, bf16); k == 0 without.
  CorrectionOperand sparseWeights;
  /// Null without acc.
  Type accElementType;
  Type resultElementType;
  SmallVector<KernelArg> args;
};
/// Without sparse weights one thread per output; with them warps over
/// weight rows, the [K, M] activation sum staged in shared memory (whole,
/// or a K slice at a time when larger than 32 KB), coalesced entry loads
/// and a butterfly over the lanes (m <= 32).
FailureOr<KernelPlan>
buildStackedEpilogueKernel(OpBuilder &builder, Location loc,
                           gpu::GPUModuleOp module, StringRef name,
                           const StackedEpilogueKernelSpec &spec,
                           std::string &reason);

/// Shared by the thread-per-item kernels above: a 1-D launch of
/// `threadsPerBlock` threads covering `items`, the shell, and the builder
/// placed inside `if (gid < items)` with `gid` (index) returned.
struct ThreadPerItem {
  KernelLaunch launch;
  Value gid;
};
ThreadPerItem createThreadPerItemKernel(OpBuilder &builder, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        ArrayRef<KernelArg> args, int64_t items,
                                        StringRef variant);

/// (gid / cols, gid mod cols): the row and column of flat item `gid`.
std::pair<Value, Value> splitItem(OpBuilder &b, Location loc, Value gid,
                                  int64_t cols);

/// memref.load of a float element, extended exactly to f32.
Value loadAsF32(OpBuilder &b, Location loc, Value memref, ValueRange indices);
/// Rounds an f32 value to `type` (nearest even) unless it is f32.
Value roundFromF32(OpBuilder &b, Location loc, Value v, Type type);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_CORRECTIONKERNELS_H
