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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4MATERIALIZEGPULAUNCHES
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

SmallVector<int64_t> ints(Attribute attr) {
  SmallVector<int64_t> out;
  for (Attribute a : cast<ArrayAttr>(attr))
    out.push_back(cast<IntegerAttr>(a).getInt());
  return out;
}

LogicalResult materialize(func::FuncOp func, DictionaryAttr plan) {
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

  auto names = cast<ArrayAttr>(plan.get("args"));
  int64_t numInputs = cast<IntegerAttr>(plan.get("num_inputs")).getInt();
  if (names.size() != func.getNumArguments())
    return func.emitError("fp4.gpu_launch: argument names do not match the "
                          "function type");
  for (auto [i, nameAttr] : llvm::enumerate(names)) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    Value host = entry->getArgument(i);
    Value dev = alloc(name, cast<MemRefType>(host.getType()));
    if (static_cast<int64_t>(i) < numInputs)
      token = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token}, dev,
                                    host)
                  .getAsyncToken();
  }
  for (Attribute a : cast<ArrayAttr>(plan.get("scratch"))) {
    auto s = cast<DictionaryAttr>(a);
    auto type = cast<MemRefType>(cast<TypeAttr>(s.get("type")).getValue());
    Value dev = alloc(cast<StringAttr>(s.get("name")).getValue(), type);
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
  for (Attribute a : cast<ArrayAttr>(plan.get("launches"))) {
    auto l = cast<DictionaryAttr>(a);
    SmallVector<int64_t> grid = ints(l.get("grid"));
    SmallVector<int64_t> block = ints(l.get("block"));
    SmallVector<Value> operands;
    for (Attribute n : cast<ArrayAttr>(l.get("args"))) {
      Value v = device.lookup(cast<StringAttr>(n).getValue());
      if (!v)
        return func.emitError() << "fp4.gpu_launch: unknown buffer " << n;
      operands.push_back(v);
    }
    Value smem = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(),
        cast<IntegerAttr>(l.get("shared_bytes")).getInt());
    auto launch = gpu::LaunchFuncOp::create(
        b, loc, cast<SymbolRefAttr>(l.get("kernel")),
        gpu::KernelDim3{idx(grid[0]), idx(grid[1]), idx(grid[2])},
        gpu::KernelDim3{idx(block[0]), idx(block[1]), idx(block[2])}, smem,
        operands, tokenType, ValueRange{token});
    token = launch.getAsyncToken();
  }
  for (auto [i, nameAttr] : llvm::enumerate(names)) {
    if (static_cast<int64_t>(i) < numInputs)
      continue;
    token = gpu::MemcpyOp::create(
                b, loc, tokenType, ValueRange{token}, entry->getArgument(i),
                device.lookup(cast<StringAttr>(nameAttr).getValue()))
                .getAsyncToken();
  }
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
      auto plan = func->getAttrOfType<DictionaryAttr>("fp4.gpu_launch");
      if (!plan || !func.isExternal())
        continue;
      if (failed(materialize(func, plan)))
        return signalPassFailure();
      func->removeAttr("fp4.gpu_launch");
    }
  }
};

} // namespace
