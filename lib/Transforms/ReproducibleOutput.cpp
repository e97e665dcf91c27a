//===- ReproducibleOutput.cpp - fp4-reproducible-output -------------------===//
//
// Canonical names and order for the `__constant_*` globals of one-shot
// bufferization, and no compile times in gpu.object properties. Upstream
// bufferization visits functions in an order that depends on operation
// addresses, so which of two same-typed constants becomes `__constant_T`
// and which `__constant_T_0`, and where they sit in the module, changes
// from run to run (stock mlir-opt does the same). Naming them by first use
// in program order makes the output a function of the input.
//
//===----------------------------------------------------------------------===//

#include "fp4/Transforms/Passes.h"
#include "fp4/Transforms/PassStatistics.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4REPRODUCIBLEOUTPUT
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kConstantPrefix = "__constant_";

/// `__constant_4x8xf32_3` -> `__constant_4x8xf32`: the type part upstream
/// derives the name from (a trailing `_<digits>` is the uniquing suffix;
/// type names never end in one, e.g. `f32`, `i8`, `bf16`).
StringRef baseName(StringRef name) {
  size_t underscore = name.rfind('_');
  if (underscore != StringRef::npos && underscore + 1 < name.size() &&
      underscore >= kConstantPrefix.size() &&
      llvm::all_of(name.drop_front(underscore + 1),
                    [](char c) { return llvm::isDigit(c); }))
    return name.take_front(underscore);
  return name;
}

/// Visible only inside the module: `memref.global "private"`, or an LLVM
/// global with private or internal linkage (LLVM globals keep their
/// visibility in the linkage, not in `sym_visibility`).
bool isModuleLocal(Operation *op) {
  if (auto global = dyn_cast<LLVM::GlobalOp>(op))
    return global.getLinkage() == LLVM::Linkage::Private ||
           global.getLinkage() == LLVM::Linkage::Internal;
  return cast<SymbolOpInterface>(op).isPrivate();
}

/// A key that orders globals no use reaches: their printed form without
/// the symbol name.
std::string contentKey(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Operation *clone = op->clone();
  SymbolTable::setSymbolName(clone, "x");
  clone->print(os, OpPrintingFlags().printGenericOpForm());
  clone->destroy();
  return text;
}

struct FP4ReproducibleOutputPass final
    : mlir::fp4::impl::FP4ReproducibleOutputBase<FP4ReproducibleOutputPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(canonicalizeConstantGlobals(module)))
      return signalPassFailure();
    if (!keepCompileTimes)
      removeCompileTimes(module);
  }

  LogicalResult canonicalizeConstantGlobals(ModuleOp module) {
    // The module's own constant globals, in their current order.
    SmallVector<Operation *> globals;
    for (Operation &op : module.getBody()->getOperations())
      if (auto symbol = dyn_cast<SymbolOpInterface>(&op))
        if (symbol.getName().starts_with(kConstantPrefix) &&
            isModuleLocal(&op))
          globals.push_back(&op);
    if (globals.empty())
      return success();

    // First use in program order (nested regions included).
    llvm::DenseMap<StringAttr, Operation *> byName;
    for (Operation *op : globals)
      byName[SymbolTable::getSymbolName(op)] = op;
    llvm::MapVector<Operation *, bool> ordered;
    module.walk([&](Operation *user) {
      for (NamedAttribute attr : user->getAttrs())
        attr.getValue().walk([&](SymbolRefAttr ref) {
          auto it = byName.find(ref.getRootReference());
          if (it != byName.end())
            ordered.insert({it->second, true});
        });
    });
    // Keys are unique: the name is masked, and two private constants with
    // the same type and value would have been one global.
    SmallVector<std::pair<std::string, Operation *>> unused;
    for (Operation *op : globals)
      if (!ordered.count(op))
        unused.push_back({contentKey(op), op});
    llvm::sort(unused, llvm::less_first());
    for (auto &entry : unused)
      ordered.insert({entry.second, true});

    // Rename all at once: one walk of the module rewrites every reference
    // through the old -> new map (SymbolTable::replaceAllSymbolUses walks
    // the module once per symbol: quadratic, minutes on a real model with
    // hundreds of weight globals). Being simultaneous, the renaming needs
    // no temporaries for names that swap.
    MLIRContext *context = module.getContext();
    llvm::DenseMap<StringAttr, StringAttr> renames;
    llvm::StringMap<unsigned> perBase;
    for (auto &entry : ordered) {
      Operation *op = entry.first;
      StringAttr from = SymbolTable::getSymbolName(op);
      std::string base = baseName(from).str();
      unsigned n = perBase[base]++;
      StringAttr to = StringAttr::get(
          context, n == 0 ? base : base + "_" + std::to_string(n - 1));
      if (from == to)
        continue;
      fp4::addToStatistic(*this, numRenamed, "renamed-globals",
                          "Constant globals given their canonical name");
      renames[from] = to;
    }
    llvm::DenseSet<StringAttr> targets;
    for (auto &rename : renames)
      targets.insert(rename.second);
    for (Operation &op : module.getBody()->getOperations()) {
      auto symbol = dyn_cast<SymbolOpInterface>(&op);
      if (symbol && !byName.count(symbol.getNameAttr()) &&
          targets.count(symbol.getNameAttr()))
        return op.emitError("fp4-reproducible-output: @")
               << symbol.getName() << " is taken by a symbol that is not a "
               << "private constant global";
    }
    if (!renames.empty()) {
      AttrTypeReplacer replacer;
      replacer.addReplacement([&](SymbolRefAttr ref)
                                  -> std::optional<Attribute> {
        auto it = renames.find(ref.getRootReference());
        if (it == renames.end())
          return std::nullopt;
        return SymbolRefAttr::get(it->second, ref.getNestedReferences());
      });
      replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                            /*replaceLocs=*/false,
                                            /*replaceTypes=*/false);
      for (Operation *op : globals) {
        auto it = renames.find(SymbolTable::getSymbolName(op));
        if (it != renames.end())
          SymbolTable::setSymbolName(op, it->second);
      }
    }

    // Canonical position: the start of the module, in first-use order.
    Block *body = module.getBody();
    Operation *insertBefore = nullptr;
    for (Operation &op : body->getOperations())
      if (!ordered.count(&op)) {
        insertBefore = &op;
        break;
      }
    for (auto &entry : ordered) {
      Operation *op = entry.first;
      if (insertBefore)
        op->moveBefore(insertBefore);
      else
        op->moveBefore(body, body->end());
    }
    return success();
  }

  void removeCompileTimes(ModuleOp module) {
    module.walk([&](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      bool changed = false;
      for (Attribute attr : binary.getObjects()) {
        auto object = dyn_cast<gpu::ObjectAttr>(attr);
        DictionaryAttr properties = object ? object.getProperties() : nullptr;
        if (!properties) {
          objects.push_back(attr);
          continue;
        }
        SmallVector<NamedAttribute> kept;
        for (NamedAttribute property : properties)
          if (property.getName().getValue().ends_with("TimeInMs"))
            fp4::addToStatistic(*this, numTimesRemoved,
                                "removed-compile-times",
                                "Compile-time properties removed from "
                                "gpu.object attributes");
          else
            kept.push_back(property);
        if (kept.size() == properties.size()) {
          objects.push_back(attr);
          continue;
        }
        changed = true;
        objects.push_back(gpu::ObjectAttr::get(
            object.getContext(), object.getTarget(), object.getFormat(),
            object.getObject(),
            kept.empty() ? DictionaryAttr()
                         : DictionaryAttr::get(object.getContext(), kept),
            object.getKernels()));
      }
      if (changed)
        binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};

} // namespace
