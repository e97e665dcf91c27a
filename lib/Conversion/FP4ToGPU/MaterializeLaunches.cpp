//===- MaterializeLaunches.cpp - fp4-gpu-materialize-launches -------------===//
//
// Bodies of the launch functions convert-fp4-to-gpu declares. They are built
// late, on memrefs, because the ownership-based buffer deallocation rejects
// the gpu async ops (no memory-effect interface) and these functions manage
// their device buffers themselves: every buffer they allocate is freed on
// the same token chain before the final gpu.wait, and the host buffers are
// the caller's.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4MATERIALIZEGPULAUNCHES
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

LogicalResult materialize(func::FuncOp func, fp4::LaunchPlanAttr plan) {
  Location loc = func.getLoc();
  OpBuilder b(func.getContext());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Type tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  llvm::StringMap<Value> device;
  SmallVector<Value> owned;
  auto alloc = [&](StringRef name, MemRefType type) {
    auto op = gpu::AllocOp::create(b, loc, type, tokenType, ValueRange{token},
                                   ValueRange{}, ValueRange{}, UnitAttr());
    token = op.getAsyncToken();
    device[name] = op.getMemref();
    owned.push_back(op.getMemref());
    return op.getMemref();
  };

  // The dialect verifier has checked the function type against the plan's
  // inputs and outputs, and that every launch argument names a buffer.
  size_t numInputs = plan.getInputs().size();
  for (auto [i, buffer] :
       llvm::enumerate(llvm::concat<const fp4::LaunchBufferAttr>(
           plan.getInputs(), plan.getOutputs()))) {
    Value host = entry->getArgument(i);
    Value dev = alloc(buffer.getName().getValue(), buffer.getType());
    if (i < numInputs)
      token = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token}, dev,
                                    host)
                  .getAsyncToken();
  }
  for (fp4::LaunchBufferAttr s : plan.getScratch()) {
    MemRefType type = s.getType();
    Value dev = alloc(s.getName().getValue(), type);
    Type elt = type.getElementType();
    Value zero = isa<FloatType>(elt)
                     ? Value(arith::ConstantOp::create(
                           b, loc, b.getFloatAttr(elt, 0.0)))
                     : Value(arith::ConstantOp::create(
                           b, loc, b.getIntegerAttr(elt, 0)));
    token = gpu::MemsetOp::create(b, loc, tokenType, ValueRange{token}, dev,
                                  zero)
                .getAsyncToken();
  }
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  for (fp4::KernelLaunchAttr l : plan.getLaunches()) {
    ArrayRef<int64_t> grid = l.getGrid(), block = l.getBlock();
    SmallVector<Value> operands;
    for (StringAttr n : l.getArgs())
      operands.push_back(device.lookup(n.getValue()));
    Value smem = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                              l.getSharedBytes());
    auto launch = gpu::LaunchFuncOp::create(
        b, loc, l.getKernel(),
        gpu::KernelDim3{idx(grid[0]), idx(grid[1]), idx(grid[2])},
        gpu::KernelDim3{idx(block[0]), idx(block[1]), idx(block[2])}, smem,
        operands, tokenType, ValueRange{token});
    token = launch.getAsyncToken();
  }
  for (auto [i, buffer] : llvm::enumerate(plan.getOutputs()))
    token = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token},
                                  entry->getArgument(numInputs + i),
                                  device.lookup(buffer.getName().getValue()))
                .getAsyncToken();
  for (Value dev : owned)
    token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, dev)
                .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
  func::ReturnOp::create(b, loc);
  return success();
}

struct FP4MaterializeGPULaunchesPass
    : public fp4::impl::FP4MaterializeGPULaunchesBase<
          FP4MaterializeGPULaunchesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto plan = func->getAttrOfType<fp4::LaunchPlanAttr>(
          fp4::LaunchPlanAttr::kAttrName);
      if (!plan)
        continue;
      if (!func.isExternal()) {
        func.emitError() << "fp4-gpu-materialize-launches: the launch "
                            "function already has a body";
        return signalPassFailure();
      }
      if (failed(materialize(func, plan)))
        return signalPassFailure();
      // The plan is consumed; the module's fp4.gpu_manifest keeps a copy
      // for fp4-export-gpu-kernels.
      func->removeAttr(fp4::LaunchPlanAttr::kAttrName);
    }
  }
};

} // namespace
