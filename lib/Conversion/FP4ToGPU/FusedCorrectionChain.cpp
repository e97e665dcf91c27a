//===- FusedCorrectionChain.cpp - which correction chains fuse ------------===//
//
// The analysis of FusedCorrectionChain.h. Every condition the fused plan's
// kernels rely on is checked here, so that a chain either lowers as one
// plan or term by term, never half of each (CorrectionToGPU.cpp asks the
// same question for every link).
//
//===----------------------------------------------------------------------===//

#include "FusedCorrectionChain.h"
#include "ElementAccess.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/ConstantBytes.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::fp4;

/// The product whose acc is `op`'s only use, if any.
static CorrectionMatmulOp nextLink(Operation *op) {
  if (!op->hasOneUse())
    return {};
  OpOperand &use = *op->getUses().begin();
  auto next = dyn_cast<CorrectionMatmulOp>(use.getOwner());
  if (!next || next.getAcc() != use.get())
    return {};
  return next;
}

CorrectionMatmulOp mlir::fp4::findCorrectionChainEnd(CorrectionMatmulOp op) {
  while (CorrectionMatmulOp next = nextLink(op))
    op = next;
  return op;
}

namespace {

/// One side of a term: its operands and block size (sparse).
struct Side {
  SmallVector<Value, 2> operands;
  int64_t blockSize = 0;
  Value key() const { return operands.front(); }
};

bool isBF16Tensor(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getElementType().isBF16();
}

/// Whether every value of a quantized operand of `type` is a bf16 number
/// (no second-level or tensor factors), so stacking it in bf16 is exact.
bool hasBF16Values(QuantizedTensorType type, std::string &reason) {
  if (!isGPUReadableQuantizedType(type, reason))
    return false;
  auto model = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  std::optional<BF16FragmentForm> form =
      model.getBF16FragmentForm(type, reason);
  if (!form || form->macroBlock >= 0 || form->hasTensorScale ||
      form->exponentOffset != 0) {
    reason = "the activation scheme's values are not bf16 numbers";
    return false;
  }
  return true;
}

bool shapeIs(Type type, int64_t rows, int64_t cols) {
  auto shaped = cast<ShapedType>(type);
  return shaped.hasStaticShape() && shaped.getRank() == 2 &&
         shaped.getDimSize(0) == rows && shaped.getDimSize(1) == cols;
}

} // namespace

FailureOr<FusedCorrectionChain>
mlir::fp4::analyzeCorrectionChain(CorrectionMatmulOp last,
                                  const ChainAnalysisContext &ctx,
                                  std::string &reason,
                                  bool *sayWhyUnfused) {
  const LoweredSplits &splits = ctx.splits;
  FusedCorrectionChain chain;
  SmallVector<std::pair<Side, Side>> terms;
  SmallVector<Operation *> reversed;
  Operation *op = last;
  while (true) {
    reversed.push_back(op);
    if (auto product = dyn_cast<CorrectionMatmulOp>(op)) {
      if (product.getLhsShape().size() != 2 ||
          product.getRhsShape().size() != 2) {
        reason = "batched products are not fused";
        return failure();
      }
      Side lhs{SmallVector<Value, 2>(product.getLhs())},
          rhs{SmallVector<Value, 2>(product.getRhs())};
      lhs.blockSize = product.getLhsBlockSize().value_or(0);
      rhs.blockSize = product.getRhsBlockSize().value_or(0);
      terms.push_back({lhs, rhs});
      Value acc = product.getAcc();
      if (!acc)
        break;
      Operation *def = acc.getDefiningOp();
      if (def && def->hasOneUse() &&
          (isa<CorrectionMatmulOp>(def) || isa<MatmulOp>(def))) {
        op = def;
        continue;
      }
      chain.outerAcc = acc;
      break;
    }
    auto matmul = cast<MatmulOp>(op);
    terms.push_back({Side{{matmul.getLhs()}}, Side{{matmul.getRhs()}}});
    break;
  }
  if (terms.size() < 2) {
    reason = "a single product: nothing to fuse";
    return failure();
  }
  chain.ops.assign(reversed.rbegin(), reversed.rend());
  // The terms add in f32 and round once; so must the chain.
  for (Operation *link : chain.ops)
    if (link != last.getOperation() &&
        !cast<ShapedType>(link->getResult(0).getType())
             .getElementType()
             .isF32()) {
      reason = "an inner product of the chain rounds below f32";
      return failure();
    }
  chain.resultType = last.getResult().getType();
  if (!chain.resultType.hasStaticShape() || chain.resultType.getRank() != 2) {
    reason = "the fused chain needs a static rank-2 result";
    return failure();
  }
  chain.m = chain.resultType.getDimSize(0);
  chain.n = chain.resultType.getDimSize(1);
  chain.k = last.getLhsShape()[1];

  // Activation and weight parts, and the terms as pairs of them.
  SmallVector<Value> lhsKeys, rhsKeys;
  llvm::DenseSet<Value> lhsSet, rhsSet;
  llvm::DenseMap<Value, Side> sides;
  llvm::DenseSet<std::pair<Value, Value>> pairs;
  // In program order (the root's parts first).
  for (auto &[lhs, rhs] : llvm::reverse(terms)) {
    if (lhsSet.insert(lhs.key()).second)
      lhsKeys.push_back(lhs.key());
    if (rhsSet.insert(rhs.key()).second)
      rhsKeys.push_back(rhs.key());
    sides[lhs.key()] = lhs;
    sides[rhs.key()] = rhs;
    if (!pairs.insert({lhs.key(), rhs.key()}).second) {
      reason = "a term appears twice";
      return failure();
    }
  }
  if (pairs.size() != lhsKeys.size() * rhsKeys.size()) {
    reason = "the terms are not every activation part times every weight "
             "part";
    return failure();
  }

  for (Value key : rhsKeys) {
    const Side &side = sides[key];
    if (side.operands.size() == 2) {
      if (chain.weightValues || !isBF16Tensor(side.operands[0].getType())) {
        reason = "the weight side takes one bf16 block-sparse part";
        return failure();
      }
      chain.weightValues = side.operands[0];
      chain.weightIndices = side.operands[1];
      chain.weightBlockSize = side.blockSize;
      continue;
    }
    auto q = dyn_cast<QuantizedTensorType>(key.getType());
    if (!q || chain.weight || !shapeIs(q, chain.n, chain.k) ||
        !isGPUReadableQuantizedType(q, reason)) {
      reason = "the weight side takes one quantized [N, K] part blocked "
               "along K";
      return failure();
    }
    chain.weight = key;
  }
  if (!chain.weight) {
    reason = "no quantized weight part";
    return failure();
  }

  // Row groups: a quantized part of a split's rest takes that split's
  // outliers (the rest is +0 there, so the sum is exact in bf16).
  llvm::DenseSet<Value> merged;
  for (Value key : lhsKeys) {
    auto q = dyn_cast<QuantizedTensorType>(key.getType());
    if (!q)
      continue;
    if (!shapeIs(q, chain.m, chain.k) || !hasBF16Values(q, reason))
      return failure();
    FusedActivationGroup group;
    group.dense = key;
    if (auto quantize = key.getDefiningOp<QuantizeOp>()) {
      Value rest = quantize.getInput();
      std::optional<LoweredSplit> split;
      if (auto op = rest.getDefiningOp<SplitOutliersOp>();
          op && rest == op.getRest())
        split = LoweredSplit{op.getValues(), op.getIndices(),
                             static_cast<int64_t>(op.getBlockSize())};
      else if (auto it = splits.find(rest); it != splits.end())
        split = it->second;
      if (split && lhsSet.contains(split->values)) {
        group.values = split->values;
        group.indices = split->indices;
        group.blockSize = split->blockSize;
        merged.insert(split->values);
      }
    }
    chain.groups.push_back(group);
  }
  for (Value key : lhsKeys) {
    if (isa<QuantizedTensorType>(key.getType()) || merged.contains(key))
      continue;
    const Side &side = sides[key];
    if (!isBF16Tensor(key.getType())) {
      reason = "activation parts must be quantized or bf16";
      return failure();
    }
    FusedActivationGroup group;
    if (side.operands.size() == 2) {
      group.values = side.operands[0];
      group.indices = side.operands[1];
      group.blockSize = side.blockSize;
    } else {
      if (!shapeIs(key.getType(), chain.m, chain.k)) {
        reason = "a dense activation part is not [M, K]";
        return failure();
      }
      group.dense = key;
    }
    chain.groups.push_back(group);
  }
  // The proof that the prefill kernel and the decode kernel's weight-tile
  // form rely on, once and only where asked (it may read constants).
  std::optional<bool> proven;
  auto entriesProven = [&] {
    if (!proven)
      proven = weightRestIsZeroAtEntries(chain.weight, chain.weightValues,
                                         chain.weightIndices,
                                         chain.weightBlockSize, splits);
    return *proven;
  };
  // Why the prefill kernel cannot take the chain's weight outliers, if it
  // cannot (the cheap checks first: the proof may read constants). It
  // writes the weight's block-sparse part into its dequantized weight
  // tile, which is the sum only where the quantized part is +-0.
  auto prefillDeclinesWeightPart = [&]() -> std::optional<std::string> {
    auto q = cast<QuantizedTensorType>(chain.weight.getType());
    std::string why;
    if (!hasBF16Values(q, why))
      return std::string("needs a weight scheme whose values are bf16 numbers");
    if ((chain.weightBlockSize != 16 && chain.weightBlockSize % 32 != 0) ||
        chain.k % 32 != 0)
      return std::string("needs blocks of 16 or a multiple of 32 and K a "
                         "multiple of 32");
    if (!entriesProven())
      return std::string(
          "joins the product only where the quantized weight is provably +-0 "
          "at its positions (outliers split from the same tensor, or folded "
          "constants)");
    return std::nullopt;
  };
  chain.decode = chain.m <= ctx.decodeMaxM;
  // From correctionPrefillMinM rows the decode plans' stacked rows and
  // separate outlier epilogue cost more than the prefill kernel's medium
  // tile, which adds the 2:4 residual on mma.sp and writes the weight
  // outliers into its weight tile (H200, 16 x 14336 x 4096: the full recipe
  // 96 -> 56 us; docs/perf/medium_m_2026-12-04.txt). Where the prefill
  // kernel cannot take the chain, the decode plan stays. On the decode
  // kernel's wgmma form (ctx.decodeStacksOnWgmma) the decode plan keeps
  // chains without weight outliers, and, under decode-mma=wgmma, those
  // with them where one product of up to 32 stacked rows does the whole
  // chain (the outliers written into its weight tile where the proof
  // holds, else gathered from per-group slices of the activation sum; more
  // products would leave them to the epilogue kernel). Under
  // decode-outliers=tile only chains whose weight outliers are proven go
  // there (the others keep the default plans).
  const bool oneProduct =
      static_cast<int64_t>(chain.groups.size()) * chain.m <= 32;
  // Weight-outlier entries of one row in a 32-element unit.
  int64_t unitEntries = 0;
  if (chain.weightValues)
    unitEntries =
        cast<RankedTensorType>(chain.weightValues.getType()).getShape().back() *
        (chain.weightBlockSize == 16 ? 2 : 1);
  const int64_t entriesAboveRows =
      unitEntries <= ctx.decodePatchMaxUnitEntries
          ? ctx.decodePatchEntriesAboveRows
          : ctx.decodeEntriesAboveRows;
  const bool decodeOnWgmma =
      (ctx.decodeStacksOnWgmma &&
       (!chain.weightValues || (oneProduct && ctx.decodeOutliersOnWgmma))) ||
      (chain.weightValues && oneProduct && ctx.decodeEntriesOnWgmma &&
       static_cast<int64_t>(chain.groups.size()) * chain.m >
           entriesAboveRows &&
       entriesProven());
  if (chain.decode && ctx.correctionPrefillMinM > 0 &&
      chain.m >= ctx.correctionPrefillMinM && !decodeOnWgmma &&
      (chain.weightValues || chain.groups.size() > 1)) {
    std::string why;
    bool takes = ctx.prefillTakesChain &&
                 !(chain.weightValues && prefillDeclinesWeightPart());
    chain.decode = !(takes && succeeded(ctx.prefillTakesChain(chain, why)));
  }
  if (chain.weightValues && !chain.decode) {
    auto unfused = [&](const Twine &why) {
      reason = ("the weight's block-sparse part at prefill sizes " + why +
                ": the terms run one by one")
                   .str();
      if (sayWhyUnfused)
        *sayWhyUnfused = true;
      return failure();
    };
    if (std::optional<std::string> why = prefillDeclinesWeightPart())
      return unfused(*why);
    std::string why;
    if (!ctx.prefillTakesChain || failed(ctx.prefillTakesChain(chain, why)))
      return unfused("is not taken by the prefill kernel (" + why + ")");
  }
  // The decode kernel's wgmma form writes proven weight outliers into its
  // weight tile (decodeChainLaunches).
  if (chain.weightValues && chain.decode && decodeOnWgmma)
    chain.weightEntriesProven = entriesProven();
  if (chain.weightValues && chain.decode && chain.m > 32) {
    reason = "the weight-outlier epilogue takes at most 32 rows";
    return failure();
  }
  Type result = chain.resultType.getElementType();
  if (!(result.isF32() || result.isBF16() || result.isF16())) {
    reason = "the fused chain writes f32, bf16 or f16";
    return failure();
  }
  // Asked here, before any link is lowered: a plan the decode kernel
  // declines must not fail after the activation side was built.
  std::string why;
  if (chain.decode && ctx.decodeTakesChain &&
      failed(ctx.decodeTakesChain(chain, why))) {
    reason = "the decode kernel does not take the fused plan (" + why +
             "): the terms run one by one";
    if (sayWhyUnfused)
      *sayWhyUnfused = true;
    return failure();
  }
  return chain;
}

bool mlir::fp4::weightRestIsZeroAtEntries(Value weight, Value values,
                                          Value indices, int64_t blockSize,
                                          const LoweredSplits &splits) {
  // The rest of the split that produced this very part.
  if (auto quantize = weight.getDefiningOp<QuantizeOp>()) {
    Value rest = quantize.getInput();
    if (auto split = rest.getDefiningOp<SplitOutliersOp>();
        split && rest == split.getRest())
      return split.getValues() == values && split.getIndices() == indices &&
             static_cast<int64_t>(split.getBlockSize()) == blockSize;
    auto it = splits.find(rest);
    return it != splits.end() && it->second.values == values &&
           it->second.indices == indices && it->second.blockSize == blockSize;
  }
  // Constants: the packed codes at every entry's position.
  auto pack = weight.getDefiningOp<PackOp>();
  auto type = cast<QuantizedTensorType>(weight.getType());
  if (!pack || type.getRank() != 2 || type.getAxis() != 1 ||
      !type.hasStaticShape() || pack.getComponents().empty())
    return false;
  Value codes = pack.getComponents().front();
  auto codesType = dyn_cast<RankedTensorType>(codes.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  int64_t rows = type.getDimSize(0), k = type.getDimSize(1);
  if (!codesType || !codesType.getElementType().isInteger(8) ||
      codesType.getRank() != 2 || codesType.getDimSize(0) != rows ||
      codesType.getDimSize(1) * 2 != k || !indexType.hasStaticShape() ||
      indexType.getRank() != 3 || indexType.getDimSize(0) != rows ||
      indexType.getDimSize(1) * blockSize != k)
    return false;
  std::vector<char> codeStorage, indexStorage;
  ArrayRef<char> codeBytes, indexBytes;
  if (failed(readConstantBytes(codes, codesType, codeStorage, codeBytes)) ||
      failed(readConstantBytes(indices, indexType, indexStorage, indexBytes)))
    return false;
  const int64_t perBlock = indexType.getDimSize(2);
  for (int64_t i = 0, e = indexType.getNumElements(); i < e; ++i) {
    int64_t index = static_cast<uint8_t>(indexBytes[i]);
    if (index >= blockSize)
      return false;
    int64_t row = i / (perBlock * indexType.getDimSize(1));
    int64_t block = i / perBlock % indexType.getDimSize(1);
    int64_t column = block * blockSize + index;
    // Element 2j in the low nibble, 2j + 1 in the high one (docs/ABI.md);
    // E2M1 +-0 is 0x0 / 0x8.
    uint8_t byte = codeBytes[row * (k / 2) + column / 2];
    uint8_t code = column % 2 ? byte >> 4 : byte & 0xF;
    if ((code & 0x7) != 0)
      return false;
  }
  return true;
}
