//===- OutlineLoopNests.cpp - fp4-outline-loop-nests ----------------------===//
//
// See the pass description: keeps each LLVM function small enough that the
// loop passes' per-function costs stay linear in the model's size.
//
//===----------------------------------------------------------------------===//

#include "fp4/Transforms/PassStatistics.h"
#include "fp4/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4OUTLINELOOPNESTS
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

bool isLoopNest(Operation &op) {
  return isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0;
}

/// Whether `v` can be recomputed inside the outlined function: a pure op
/// whose operands can be too (constants, get_global and views of them).
bool isRematerializable(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 4 || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isRematerializable(operand, depth + 1);
  });
}

/// Clones the defining ops of `v` (operands first) into `b`'s block.
Value rematerialize(OpBuilder &b, Value v, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    rematerialize(b, operand, map);
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

/// A hash of what the function computes: its type and every op of its
/// body (name, attributes, types), not SSA names or locations. Equal
/// hashes are only candidates; sameBody decides.
llvm::hash_code bodyHash(func::FuncOp fn) {
  llvm::hash_code hash = hash_value(fn.getFunctionType());
  fn.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether two outlined functions do the same thing: same signature, and
/// bodies equal op for op (attributes, constants included) on
/// corresponding arguments, locations aside. Structural, so no printing
/// option (such as elided large constants) can make two differ or agree.
bool sameBody(func::FuncOp a, func::FuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct OutlineLoopNestsPass
    : fp4::impl::FP4OutlineLoopNestsBase<OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    llvm::DenseMap<size_t, SmallVector<func::FuncOp>> byHash;
    for (func::FuncOp fn : funcs) {
      if (fn.isExternal())
        continue;
      SmallVector<Operation *> nests;
      fn.walk([&](Operation *op) {
        // Top level of the function body or of a block of a non-loop op
        // directly in it (scf.if); nests inside nests stay.
        if (isLoopNest(*op) && !op->getParentOfType<scf::ForOp>() &&
            !op->getParentOfType<scf::ParallelOp>())
          nests.push_back(op);
      });
      if (static_cast<int64_t>(nests.size()) < minLoopNests)
        continue;
      unsigned index = 0;
      for (Operation *nest : nests) {
        llvm::SetVector<Value> captured;
        for (Region &region : nest->getRegions())
          getUsedValuesDefinedAbove(region, captured);
        for (Value operand : nest->getOperands())
          captured.insert(operand);
        SmallVector<Value> args, remat;
        for (Value v : captured)
          (isRematerializable(v) ? remat : args).push_back(v);
        OpBuilder b(module.getContext());
        b.setInsertionPointAfter(fn);
        auto type = b.getFunctionType(ValueRange(args).getTypes(), {});
        std::string name =
            (fn.getSymName() + "_loop_nest_" + llvm::Twine(index++)).str();
        auto outlined = func::FuncOp::create(b, nest->getLoc(), name, type);
        outlined.setPrivate();
        outlined->setAttr("passthrough",
                          b.getArrayAttr({b.getStringAttr("noinline")}));
        symbols.insert(outlined);
        Block *body = outlined.addEntryBlock();
        OpBuilder inner = OpBuilder::atBlockBegin(body);
        IRMapping map;
        for (auto [v, arg] : llvm::zip(args, body->getArguments()))
          map.map(v, arg);
        for (Value v : remat)
          rematerialize(inner, v, map);
        inner.clone(*nest, map);
        func::ReturnOp::create(inner, nest->getLoc());
        // A model repeats its layers: the same loop nest (same shapes,
        // same constants) comes back once per layer. One function for all
        // of them keeps LLVM from optimizing and compiling each copy.
        func::FuncOp callee = outlined;
        SmallVector<func::FuncOp> &candidates =
            byHash[static_cast<size_t>(bodyHash(outlined))];
        for (func::FuncOp existing : candidates)
          if (sameBody(existing, outlined)) {
            callee = existing;
            break;
          }
        if (callee == outlined) {
          candidates.push_back(outlined);
        } else {
          symbols.erase(outlined);
          fp4::addToStatistic(*this, numShared, "shared",
                              "Outlined loop nests that reuse an identical "
                              "function");
        }
        OpBuilder at(nest);
        func::CallOp::create(at, nest->getLoc(), callee, args);
        nest->erase();
        fp4::addToStatistic(*this, numOutlined, "outlined",
                            "Loop nests outlined");
      }
    }
  }
};

} // namespace
