//===- RuntimeCalls.cpp - declarations of libfp4_cpu_runtime entries ------===//
//
// Shared by the contraction and the sparse-product rewrites, so every
// runtime entry point is declared and typed the same way.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

MemRefType mlir::fp4::detail::stridedViewType(MLIRContext *ctx, int64_t rank,
                                              Type element) {
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> shape(rank, dyn), strides(rank, dyn);
  return MemRefType::get(shape, element,
                         StridedLayoutAttr::get(ctx, dyn, strides));
}

func::FuncOp mlir::fp4::detail::declareRuntimeFunction(ModuleOp module,
                                                       StringRef name,
                                                       TypeRange args) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(args, {}));
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return fn;
}
