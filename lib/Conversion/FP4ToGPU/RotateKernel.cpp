//===- RotateKernel.cpp - a standalone fp4.rotate on the GPU --------------===//
//
// A rotation that no fp4.quantize absorbs (the quantizer fuses the rotation
// it reads; a rotation feeding fp4.split_outliers, i.e. rotate-then-outlier
// recipes, is not fused): one thread per rotation group of d <= 64
// elements (stride 1), held in registers, rotated by hadamardTransformGroup
// (the numerics contract: the same f32 operations in the same order as the
// folder and the CPU lowering) and rounded to the result type. Strided and
// larger groups go to SharedRotateKernel.cpp.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/Hadamard.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

/// Largest group kept in one thread's registers (64 values + the butterfly
/// temporaries stay well under the 255-register limit without spills).
static constexpr int64_t kMaxRegisterGroup = 64;

FailureOr<KernelPlan> mlir::fp4::buildRotateKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const RotateKernelSpec &spec, std::string &reason) {
  if (spec.stride != 1 || spec.size > kMaxRegisterGroup)
    return buildSharedRotateKernel(builder, loc, module, name, spec, reason);
  if (!numerics::isPowerOfTwo(spec.size) || spec.cols % spec.size != 0) {
    reason = "the rotation kernel takes power-of-two groups dividing the "
             "last axis";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  const int64_t groupsPerRow = spec.cols / spec.size;
  ThreadPerItem kernel =
      createThreadPerItemKernel(builder, loc, module, name, spec.args,
                                spec.rows * groupsPerRow, "rotate");
  OpBuilder &b = builder;
  ArithOps ops(b, loc);
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value row, group;
  std::tie(row, group) = splitItem(b, loc, kernel.gid, groupsPerRow);
  Value base = arith::MulIOp::create(b, loc, group, indexConst(b, loc, spec.size));
  SmallVector<Value> cols, v;
  for (int64_t i = 0; i < spec.size; ++i) {
    cols.push_back(arith::AddIOp::create(b, loc, base, indexConst(b, loc, i)));
    v.push_back(loadAsF32(b, loc, args[0], {row, cols.back()}));
  }
  std::vector<uint8_t> negative;
  if (spec.seed)
    negative = numerics::hadamardSigns(*spec.seed, spec.size);
  numerics::HadamardParams params;
  params.size = spec.size;
  params.stride = 1;
  params.inverse = spec.inverse;
  numerics::hadamardTransformGroup(ops, v.data(), params,
                                   spec.seed ? negative.data() : nullptr);
  for (int64_t i = 0; i < spec.size; ++i)
    memref::StoreOp::create(b, loc,
                            roundFromF32(b, loc, v[i], spec.resultElementType),
                            args[1], ValueRange{row, cols[i]});
  return KernelPlan{{kernel.launch}, {}};
}
