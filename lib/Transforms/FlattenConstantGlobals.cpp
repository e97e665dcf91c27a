//===- FlattenConstantGlobals.cpp - fp4-flatten-constant-globals ----------===//
//
// See the pass description (Passes.td): a 1-D global is one LLVM constant
// data array, a rank-n one is a tree of uniqued row constants that LLVM
// hashes, optimizes and emits one by one.
//
//===----------------------------------------------------------------------===//

#include "fp4/Transforms/PassStatistics.h"
#include "fp4/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4FLATTENCONSTANTGLOBALS
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

/// The initializer with a 1-D type, or null when it cannot be retyped
/// without copying.
Attribute flatInitializer(Attribute init, RankedTensorType flatType) {
  if (auto dense = dyn_cast<DenseElementsAttr>(init))
    return dense.reshape(flatType);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(init))
    return DenseResourceElementsAttr::get(flatType, resource.getRawHandle());
  return {};
}

struct FlattenConstantGlobalsPass
    : fp4::impl::FP4FlattenConstantGlobalsBase<FlattenConstantGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Users of each global by symbol, collected once.
    llvm::DenseMap<StringAttr, SmallVector<memref::GetGlobalOp>> users;
    llvm::DenseSet<StringAttr> otherUse;
    module.walk([&](Operation *op) {
      if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
        users[get.getNameAttr().getAttr()].push_back(get);
        return;
      }
      if (isa<memref::GlobalOp>(op))
        return;
      // Any other reference to a symbol keeps the global's type.
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](SymbolRefAttr ref) {
          otherUse.insert(ref.getRootReference());
        });
    });
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      if (type.getRank() <= 1)
        continue;
      Attribute init = global.getInitialValue().value_or(Attribute());
      bool eligible = global.getConstant() && init && type.hasStaticShape() &&
                      type.getLayout().isIdentity() &&
                      !otherUse.contains(global.getSymNameAttr());
      auto flatTensor = RankedTensorType::get({type.getNumElements()},
                                              type.getElementType());
      Attribute flat = eligible ? flatInitializer(init, flatTensor) : nullptr;
      if (!flat) {
        fp4::addToStatistic(*this, numNotFlattened, "not-flattened",
                            "Multi-dimensional globals left as they are");
        continue;
      }
      auto flatType = MemRefType::get({type.getNumElements()},
                                      type.getElementType(), AffineMap(),
                                      type.getMemorySpace());
      global.setTypeAttr(TypeAttr::get(flatType));
      global.setInitialValueAttr(flat);
      SmallVector<ReassociationIndices> all(1);
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.front().push_back(i);
      for (memref::GetGlobalOp get : users[global.getSymNameAttr()]) {
        OpBuilder b(get);
        auto flatGet = memref::GetGlobalOp::create(b, get.getLoc(), flatType,
                                                   get.getNameAttr());
        auto shaped = memref::ExpandShapeOp::create(
            b, get.getLoc(), type, flatGet.getResult(), all);
        get.getResult().replaceAllUsesWith(shaped.getResult());
        get.erase();
      }
      fp4::addToStatistic(*this, numFlattened, "flattened",
                          "Constant globals given a 1-D type");
    }
  }
};

} // namespace
