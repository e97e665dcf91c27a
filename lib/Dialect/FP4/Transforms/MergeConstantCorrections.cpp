//===- MergeConstantCorrections.cpp - fp4-merge-constant-corrections ------===//
//
// A corrected product pairs every lhs part with every rhs part. When the
// weight is a constant split into its quantized rest and its outliers, each
// activation part L meets both (L Qw^T and L Ow^T): on a CPU that is two
// passes over L, one of them a sparse x sparse product when L is sparse
// (a 2:4 residual against top-2 outliers: a masked sweep per entry, a
// quarter of the MiniLM full-correction forward). Summing the rhs parts of
// one lhs part into one f32 constant leaves one term per lhs part. The sum
// is exact (the parts are disjoint: checked); the f32 accumulation over the
// terms is what changes, so this is an opt-in CPU lowering choice
// (Passes.td), never part of the bit-exact default.
//
//===----------------------------------------------------------------------===//

#include "CorrectedProduct.h"
#include "FoldedConstant.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Transforms/PassStatistics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4MERGECONSTANTCORRECTIONS
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

bool isNonzero(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return (bits & 0x7fffffffu) != 0;
}

/// Reads the rank-2 [N, K] constant rhs `part` into `dense` (row-major,
/// +0 where a sparse part stores nothing) and counts its nonzeros per
/// position into `hits`; `n`, `k` are the expected shape (set by the first
/// part when 0). Fails with `reason` for anything that is not such a
/// constant, and also sets `inexact` when it is one but merging it would
/// round (overlapping nonzeros, a sparse index outside its block).
LogicalResult addConstantPart(const ProductPart &part, int64_t &n, int64_t &k,
                              std::vector<float> &dense,
                              std::vector<uint8_t> &hits, std::string &reason,
                              bool &inexact) {
  auto checkShape = [&](int64_t rows, int64_t cols) -> LogicalResult {
    if (n == 0) {
      n = rows;
      k = cols;
      dense.assign(n * k, 0.0f);
      hits.assign(n * k, 0);
    }
    if (rows != n || cols != k) {
      reason = "rhs parts of different shapes";
      return failure();
    }
    return success();
  };
  auto place = [&](int64_t at, float v) -> LogicalResult {
    if (!isNonzero(v))
      return success();
    if (hits[at]++) {
      inexact = true;
      reason = "two rhs parts are nonzero at one position (the sum would "
               "round)";
      return failure();
    }
    dense[at] = v;
    return success();
  };
  if (!part.isSparse()) {
    auto shaped = cast<ShapedType>(part.dense.getType());
    if (shaped.getRank() != 2 || !shaped.hasStaticShape()) {
      reason = "rhs is not a static rank-2 tensor";
      return failure();
    }
    int64_t rows = shaped.getDimSize(0), cols = shaped.getDimSize(1);
    std::vector<float> values;
    if (isa<QuantizedTensorType>(shaped)) {
      if (failed(readDequantizedConstant(part.dense, values, reason)))
        return failure();
    } else {
      FailureOr<ConstantRowReader> reader =
          getConstantRowReader(part.dense, &reason);
      if (failed(reader))
        return failure();
      values.resize(rows * cols);
      (*reader)(0, rows, values);
    }
    if (failed(checkShape(rows, cols)))
      return failure();
    for (int64_t i = 0; i < rows * cols; ++i)
      if (failed(place(i, values[i])))
        return failure();
    return success();
  }
  auto valuesType = cast<ShapedType>(part.values.getType());
  if (valuesType.getRank() != 3 || !valuesType.hasStaticShape()) {
    reason = "sparse rhs is not a static [N, K/B, k] pair";
    return failure();
  }
  const int64_t rows = valuesType.getDimSize(0),
                blocks = valuesType.getDimSize(1),
                slots = valuesType.getDimSize(2), block = part.blockSize;
  FailureOr<ConstantRowReader> reader =
      getConstantRowReader(part.values, &reason);
  if (failed(reader))
    return failure();
  std::vector<float> values(rows * blocks * slots);
  (*reader)(0, rows * blocks, values);
  std::vector<char> expanded;
  ArrayRef<char> indices;
  if (failed(readConstantBytes(part.indices,
                               cast<ShapedType>(part.indices.getType()),
                               expanded, indices))) {
    reason = "sparse rhs indices are not a readable constant";
    return failure();
  }
  if (failed(checkShape(rows, blocks * block)))
    return failure();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < blocks; ++c)
      for (int64_t s = 0; s < slots; ++s) {
        const int64_t e = (r * blocks + c) * slots + s;
        const int64_t index = static_cast<int8_t>(indices[e]);
        if (index < 0 || index >= block) {
          inexact = true;
          reason = "a sparse rhs index is outside its block";
          return failure();
        }
        if (failed(place(r * k + c * block + index, values[e])))
          return failure();
      }
  return success();
}

} // namespace

FailureOr<MergeCorrectionsResult>
mlir::fp4::mergeConstantCorrections(PatternRewriter &rewriter,
                                    MatmulOp matmul) {
  CorrectedProduct product(matmul);
  ArrayRef<Operation *> terms = product.getTerms();
  MergeCorrectionsResult result;
  if (terms.size() < 2)
    return failure();

  // Terms grouped by lhs part, in order of first appearance.
  struct Group {
    ProductPart lhs;
    SmallVector<unsigned> terms;
    Value merged; // the merged constant, once built
  };
  SmallVector<Group> groups;
  SmallVector<int> groupOf(terms.size(), -1);
  for (auto [i, term] : llvm::enumerate(terms)) {
    ProductPart lhs = getTermPart(term, ProductSide::Lhs);
    auto it =
        llvm::find_if(groups, [&](const Group &g) { return g.lhs == lhs; });
    if (it == groups.end()) {
      groups.push_back({lhs, {}, Value()});
      it = std::prev(groups.end());
    }
    it->terms.push_back(i);
    groupOf[i] = static_cast<int>(it - groups.begin());
  }

  // The merged constants: a group of two or more terms whose rhs parts are
  // disjoint rank-2 constants.
  Operation *last = terms.back();
  rewriter.setInsertionPoint(last);
  bool anyMerged = false;
  // Lhs parts meeting the same rhs parts (the usual case: every activation
  // part meets the weight's rest and outliers) share one constant.
  SmallVector<std::pair<SmallVector<ProductPart>, Value>> built;
  for (Group &group : groups) {
    if (group.terms.size() < 2)
      continue;
    SmallVector<ProductPart> rhsParts;
    for (unsigned t : group.terms)
      rhsParts.push_back(getTermPart(terms[t], ProductSide::Rhs));
    auto same = llvm::find_if(built, [&](const auto &entry) {
      return entry.first == rhsParts;
    });
    if (same != built.end()) {
      group.merged = same->second;
      result.termsRemoved += group.terms.size() - 1;
      continue;
    }
    int64_t n = 0, k = 0;
    std::vector<float> dense;
    std::vector<uint8_t> hits;
    std::string reason;
    bool ok = true, inexact = false;
    for (unsigned t : group.terms)
      if (failed(addConstantPart(getTermPart(terms[t], ProductSide::Rhs), n, k,
                                 dense, hits, reason, inexact))) {
        ok = false;
        break;
      }
    if (!ok) {
      if (inexact)
        ++result.skippedOverlap;
      result.reasons.push_back(reason);
      continue;
    }
    auto type = RankedTensorType::get({n, k}, rewriter.getF32Type());
    ConstantStorage storage(type);
    std::memcpy(storage.bytes().data(), dense.data(),
                dense.size() * sizeof(float));
    Location loc = terms[group.terms.front()]->getLoc();
    TypedAttr attr =
        storage.finish("fp4_" + blobStem("", loc) + "_merged_weight");
    group.merged = arith::ConstantOp::create(rewriter, loc, type, attr);
    built.push_back({rhsParts, group.merged});
    result.termsRemoved += group.terms.size() - 1;
    anyMerged = true;
  }
  if (!anyMerged)
    return result; // nothing merged: unchanged

  // The new chain, in the old order; a merged group sits where its first
  // term was. Every term but the last yields f32.
  struct Emit {
    unsigned term;
    ProductPart lhs, rhs;
  };
  SmallVector<Emit> emits;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Group &group = groups[groupOf[i]];
    if (group.merged) {
      if (group.terms.front() != i)
        continue;
      emits.push_back({static_cast<unsigned>(i), group.lhs,
                       ProductPart::getDense(group.merged)});
      continue;
    }
    emits.push_back({static_cast<unsigned>(i),
                     getTermPart(term, ProductSide::Lhs),
                     getTermPart(term, ProductSide::Rhs)});
  }
  auto finalType = cast<RankedTensorType>(last->getResult(0).getType());
  auto f32Type = finalType.clone(rewriter.getF32Type());
  Value acc;
  for (auto [j, emit] : llvm::enumerate(emits)) {
    Type type = j + 1 == emits.size() ? Type(finalType) : Type(f32Type);
    Location loc = terms[emit.term]->getLoc();
    if (!acc && !emit.lhs.isSparse() && !emit.rhs.isSparse() &&
        isa<MatmulOp>(terms[emit.term]) && !groups[groupOf[emit.term]].merged) {
      acc =
          MatmulOp::create(rewriter, loc, type, emit.lhs.dense, emit.rhs.dense)
              .getResult();
      continue;
    }
    auto blockAttr = [&](const ProductPart &part) -> IntegerAttr {
      return part.isSparse() ? rewriter.getI64IntegerAttr(part.blockSize)
                             : IntegerAttr();
    };
    acc =
        CorrectionMatmulOp::create(rewriter, loc, type, emit.lhs.getOperands(),
                                   emit.rhs.getOperands(), acc,
                                   blockAttr(emit.lhs), blockAttr(emit.rhs))
            .getResult();
  }
  rewriter.replaceAllUsesWith(last->getResult(0), acc);
  // The old rhs producers (the packed weight, the outlier constants) are
  // shared between the erased terms: each is erased once, when dead, and
  // so are its own producers.
  llvm::SetVector<Operation *> producers;
  for (Operation *term : terms)
    for (Value v : getTermPart(term, ProductSide::Rhs).getOperands())
      if (Operation *def = v.getDefiningOp())
        producers.insert(def);
  for (Operation *term : llvm::reverse(terms))
    rewriter.eraseOp(term);
  for (size_t i = 0; i < producers.size(); ++i) {
    Operation *op = producers[i];
    if (!wouldOpBeTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.insert(def);
    // Each entry is visited once, at its index, so an erased op is never
    // looked at again (the set keeps its pointer: no re-insertion).
    rewriter.eraseOp(op);
  }
  result.merged = true;
  return result;
}

namespace {

struct MergeConstantCorrectionsPattern : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<MergeCorrectionsResult> result =
        mergeConstantCorrections(rewriter, op);
    if (failed(result))
      return rewriter.notifyMatchFailure(op, "not a corrected product");
    if (!result->merged)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "nothing to merge";
        for (const std::string &r : result->reasons)
          diag << "; " << r;
      });
    return success();
  }
};

struct FP4MergeConstantCorrectionsPass final
    : mlir::fp4::impl::FP4MergeConstantCorrectionsBase<
          FP4MergeConstantCorrectionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation()->walk([&](MatmulOp op) { matmuls.push_back(op); });
    PatternRewriter rewriter(&getContext());
    uint64_t merged = 0, unchanged = 0;
    Operation *firstUnchanged = nullptr;
    std::string firstReason;
    for (MatmulOp op : matmuls) {
      FailureOr<MergeCorrectionsResult> result =
          mergeConstantCorrections(rewriter, op);
      if (failed(result))
        continue; // a plain product: nothing to do, nothing to report
      if (result->skippedOverlap)
        addToStatistic(*this, numSkippedOverlap, "skipped-overlap",
                       "Lhs parts whose constant rhs parts overlap "
                       "(merging would round): left unmerged",
                       result->skippedOverlap);
      if (!result->merged) {
        ++unchanged;
        if (!firstUnchanged) {
          firstUnchanged = op;
          firstReason = result->reasons.empty() ? "no lhs part meets two "
                                                  "constant rhs parts"
                                                : result->reasons.front();
        }
        continue;
      }
      ++merged;
      addToStatistic(*this, numTermsRemoved, "terms-removed",
                     "Correction terms removed by merging",
                     result->termsRemoved);
    }
    if (merged)
      addToStatistic(*this, numMerged, "products-merged",
                     "Corrected products with at least one merged lhs part",
                     merged);
    if (unchanged)
      addToStatistic(*this, numUnchanged, "products-unchanged",
                     "Corrected products with nothing to merge", unchanged);
    if (!merged && firstUnchanged)
      firstUnchanged->emitWarning()
          << "fp4-merge-constant-corrections: no corrected product merged ("
          << unchanged << " left unchanged), first here: " << firstReason;
    else if (!merged)
      getOperation()->emitWarning()
          << "fp4-merge-constant-corrections: no corrected product (an "
             "fp4.matmul followed by fp4.correction_matmul terms) in the "
             "input: nothing merged";
  }
};

} // namespace

void mlir::fp4::populateFP4MergeConstantCorrectionsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MergeConstantCorrectionsPattern>(patterns.getContext());
}
