//===- ThreadPerItemKernel.cpp - the shell of the correction kernels ------===//
//
// The accuracy-recipe kernels (CorrectionKernels.h) are memory- or
// gather-bound SIMT loops: one thread per item (a block, an element, an
// output), 128 threads per CTA, the last CTA masked. 128 keeps CTAs small
// enough that decode shapes (a few hundred items) still spread over SMs.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;

static constexpr int64_t kThreadsPerItemBlock = 128;

ThreadPerItem mlir::fp4::createThreadPerItemKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    ArrayRef<KernelArg> args, int64_t items, StringRef variant) {
  ThreadPerItem result;
  KernelLaunch &launch = result.launch;
  launch.block = {kThreadsPerItemBlock, 1, 1};
  launch.grid = {static_cast<int64_t>(llvm::divideCeil(items, kThreadsPerItemBlock)), 1, 1};
  launch.variant = variant.str();
  for (const KernelArg &arg : args)
    launch.argNames.push_back(arg.name);
  launch.func = createKernelShell(builder, loc, module, name, args, launch.block);
  builder.setInsertionPoint(launch.func.getBody().front().getTerminator());
  Value gid = emitGlobalThreadId(builder, loc, kThreadsPerItemBlock);
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        gid, indexConst(builder, loc, items));
  auto ifOp = scf::IfOp::create(builder, loc, inRange, /*withElseRegion=*/false);
  builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // Clamped as well, so that every address is in bounds for all threads
  // even where a consumer evaluates the masked region (the CPU kernel
  // interpreter of the tests runs all threads in lockstep).
  result.gid = arith::MinUIOp::create(builder, loc, gid,
                                      indexConst(builder, loc, items - 1));
  return result;
}

std::pair<Value, Value> mlir::fp4::splitItem(OpBuilder &b, Location loc,
                                             Value gid, int64_t cols) {
  Value c = indexConst(b, loc, cols);
  return {arith::DivUIOp::create(b, loc, gid, c),
          arith::RemUIOp::create(b, loc, gid, c)};
}

Value mlir::fp4::loadAsF32(OpBuilder &b, Location loc, Value memref,
                           ValueRange indices) {
  Value v = memref::LoadOp::create(b, loc, memref, indices);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return v;
}

Value mlir::fp4::roundFromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}
