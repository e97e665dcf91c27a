//===- TwoLevelRotation.cpp - fp4-rotate's two-level mode -----------------===//
//
// Our realization of TORQ's two-level rotation (numerics.md 6; TORQ's exact
// construction is not public). From the calibration samples of the
// activation x of `y = x W^T` (K channels, B = options.size):
//
//  (1) inter-block balancing: channel energies e_k = sum_r x[r,k]^2 (f64);
//      channels in order of descending energy (ties: lower index first) go
//      into the block of B positions with the least energy that still has
//      room (ties: lower block index), each block filled in that order. The
//      permutation P lists, block by block, the channels placed there (the
//      identity when K = B: one block has nothing to balance).
//      Optionally (cross-block) a Hadamard across blocks C = I (x) Hn_p (x)
//      I_B follows, p the largest power of two dividing K/B, at most 256.
//  (2) intra-block rotation: among identity, Hadamard-B and randomized
//      Hadamard-B (seed of the options), the one under which the quantized
//      calibration samples (x P C R, quantized with the activation's scheme
//      as one [rows, K] tensor by the reference quantizer) have the highest
//      Shannon entropy of the 16-bin histogram of 4-bit codes (bits; ties:
//      first in that order).
//
// Rewrite of the matmul (both operands get the same transform along K):
//
//   %y = fp4.matmul (fp4.quantize %x), (fp4.quantize %w)
// into
//   %xp = fp4.permute %x axis 1 permutation [P]
//   %xc = fp4.rotate %xp hadamard p stride B axis 1        (cross-block)
//   %xr = fp4.rotate %xc hadamard B [seed S] axis 1        (unless identity)
//   ... the same for %w ...
//   %y = fp4.matmul (fp4.quantize %xr), (fp4.quantize %wr)
//       {fp4.intra_block_rotation = "randomized-hadamard-32"}
//
// The permutation is exact; constant weights fold in fp4-fold-constants, and
// the activation's permutation moves into the producing matmul's weights
// (PermutationFolding.cpp).
//
//===----------------------------------------------------------------------===//

#include "RotateMatmulOperands.h"

#include "fp4/Analysis/CalibrationData.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/Hadamard.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fp4;

SmallVector<int64_t>
mlir::fp4::computeBlockBalancingPermutation(ArrayRef<double> channelEnergy,
                                            int64_t blockSize) {
  int64_t k = channelEnergy.size();
  int64_t numBlocks = k / blockSize;
  SmallVector<int64_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](int64_t a, int64_t b) {
    if (channelEnergy[a] != channelEnergy[b])
      return channelEnergy[a] > channelEnergy[b];
    return a < b;
  });
  SmallVector<double> blockEnergy(numBlocks, 0.0);
  SmallVector<SmallVector<int64_t>> members(numBlocks);
  for (int64_t channel : order) {
    int64_t best = -1;
    for (int64_t b = 0; b < numBlocks; ++b)
      if (static_cast<int64_t>(members[b].size()) < blockSize &&
          (best < 0 || blockEnergy[b] < blockEnergy[best]))
        best = b;
    members[best].push_back(channel);
    blockEnergy[best] += channelEnergy[channel];
  }
  SmallVector<int64_t> permutation;
  permutation.reserve(k);
  for (ArrayRef<int64_t> block : members)
    llvm::append_range(permutation, block);
  return permutation;
}

/// The fp4.quantize of the activation (lhs), or null.
static QuantizeOp activationQuantize(MatmulOp op) {
  return op.getLhs().getDefiningOp<QuantizeOp>();
}

/// The quantized type the calibration samples are quantized with: the
/// activation's scheme on [rows, K] blocked along K.
static QuantizedTensorType calibrationType(QuantizeOp quantize, int64_t rows) {
  QuantizedTensorType type = quantize.getResult().getType();
  return QuantizedTensorType::get(
      quantize.getContext(), {rows, type.getAxisSize()}, type.getElementType(),
      type.getScheme(), /*axis=*/1);
}

LogicalResult mlir::fp4::checkTwoLevelCalibration(MatmulOp op,
                                                  const CalibrationData &data) {
  QuantizeOp quantize = activationQuantize(op);
  if (!quantize)
    return success(); // Not rotated (the pattern says why).
  FailureOr<CalibrationView> view = data.lookupOrEmitError(quantize);
  if (failed(view))
    return failure();
  QuantizedTensorType type = quantize.getResult().getType();
  return type.getScheme().verifyShape(
      [&] {
        return op.emitOpError()
               << "fp4-rotate: the calibration samples of the activation ("
               << view->rows() << " rows of key '" << view->key
               << "') cannot be quantized with " << type.getScheme() << ": ";
      },
      {view->rows(), type.getAxisSize()}, 1);
}

namespace {

enum class IntraRotation { Identity, Hadamard, RandomizedHadamard };

struct TwoLevelPlan {
  SmallVector<int64_t> permutation;
  /// p of the cross-block Hadamard; 1 = none.
  int64_t crossBlockSize = 1;
  IntraRotation intra = IntraRotation::Identity;
  double entropy[3] = {0, 0, 0};
  /// Largest / smallest block energy before and after the permutation.
  double imbalanceBefore = 0, imbalanceAfter = 0;
};

std::string formatNumber(const char *format, double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format(format, value);
  return text;
}

std::string intraName(IntraRotation r, int64_t size) {
  switch (r) {
  case IntraRotation::Identity:
    return "identity";
  case IntraRotation::Hadamard:
    return "hadamard-" + std::to_string(size);
  case IntraRotation::RandomizedHadamard:
    return "randomized-hadamard-" + std::to_string(size);
  }
  return "";
}

double blockImbalance(ArrayRef<double> energy, ArrayRef<int64_t> order,
                      int64_t blockSize) {
  double lo = 0, hi = 0;
  for (int64_t b = 0; b * blockSize < static_cast<int64_t>(order.size()); ++b) {
    double e = 0;
    for (int64_t i = 0; i < blockSize; ++i)
      e += energy[order[b * blockSize + i]];
    lo = b == 0 ? e : std::min(lo, e);
    hi = b == 0 ? e : std::max(hi, e);
  }
  return lo > 0 ? hi / lo : INFINITY;
}

/// Shannon entropy (bits) of the 4-bit code histogram of `values` [rows, K]
/// quantized with `type`; failure if the reference quantizer refuses.
FailureOr<double> codeEntropy(MLIRContext *context, QuantizedTensorType type,
                              ArrayRef<float> values) {
  SmallVector<Type> componentTypes = type.getComponentTypes();
  SmallVector<std::vector<char>> storage;
  SmallVector<MutableArrayRef<char>> buffers;
  for (Type t : componentTypes) {
    auto shaped = cast<ShapedType>(t);
    storage.emplace_back(shaped.getNumElements() *
                         (shaped.getElementTypeBitWidth() / 8));
    buffers.push_back(storage.back());
  }
  int64_t cols = type.getShape()[1];
  auto reader = [&](int64_t firstRow, int64_t numRows,
                    MutableArrayRef<float> out) {
    llvm::copy(values.slice(firstRow * cols, numRows * cols), out.begin());
  };
  if (failed(quantizeReferenceTensor(context, type, reader, buffers)))
    return failure();
  // Component 0 holds the packed codes (docs/ABI.md), two per byte.
  uint64_t histogram[16] = {};
  for (char byte : storage[0]) {
    auto b = static_cast<uint8_t>(byte);
    ++histogram[b & 0xF];
    ++histogram[b >> 4];
  }
  double total = 2.0 * storage[0].size(), entropy = 0;
  for (uint64_t count : histogram)
    if (count) {
      double p = count / total;
      entropy -= p * std::log2(p);
    }
  return entropy;
}

FailureOr<TwoLevelPlan> planTwoLevel(QuantizeOp quantize,
                                     const CalibrationView &samples,
                                     const RotateOptions &options) {
  const int64_t b = options.size, k = samples.channels();
  const int64_t rows = samples.rows();
  TwoLevelPlan plan;
  SmallVector<double> energy(k, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    ArrayRef<float> row = samples.row(r);
    for (int64_t c = 0; c < k; ++c)
      energy[c] += static_cast<double>(row[c]) * row[c];
  }
  SmallVector<int64_t> identity(k);
  std::iota(identity.begin(), identity.end(), 0);
  // A single block has nothing to balance: its order is irrelevant.
  plan.permutation =
      k > b ? computeBlockBalancingPermutation(energy, b) : identity;
  plan.imbalanceBefore = blockImbalance(energy, identity, b);
  plan.imbalanceAfter = blockImbalance(energy, plan.permutation, b);

  // x P (C): the samples as the intra-block candidates see them.
  std::vector<float> balanced(rows * k);
  for (int64_t r = 0; r < rows; ++r) {
    ArrayRef<float> row = samples.row(r);
    for (int64_t c = 0; c < k; ++c)
      balanced[r * k + c] = row[plan.permutation[c]];
  }
  if (options.crossBlock) {
    int64_t numBlocks = k / b;
    plan.crossBlockSize = numBlocks & -numBlocks; // largest power-of-2 divisor
    plan.crossBlockSize =
        std::min<int64_t>(plan.crossBlockSize, numerics::kHadamardMaxSize);
    if (plan.crossBlockSize > 1) {
      numerics::HadamardParams cross{plan.crossBlockSize, b, false, 0, false};
      numerics::hadamardRotateRows(cross, balanced.data(), rows, k);
    }
  }

  QuantizedTensorType type = calibrationType(quantize, rows);
  MLIRContext *context = quantize.getContext();
  std::vector<float> candidate;
  for (IntraRotation r : {IntraRotation::Identity, IntraRotation::Hadamard,
                          IntraRotation::RandomizedHadamard}) {
    candidate = balanced;
    if (r != IntraRotation::Identity) {
      numerics::HadamardParams intra{
          b, 1, r == IntraRotation::RandomizedHadamard, options.seed, false};
      numerics::hadamardRotateRows(intra, candidate.data(), rows, k);
    }
    FailureOr<double> entropy = codeEntropy(context, type, candidate);
    if (failed(entropy))
      return failure();
    plan.entropy[static_cast<int>(r)] = *entropy;
    // Strictly higher wins: ties keep the earlier candidate.
    if (*entropy > plan.entropy[static_cast<int>(plan.intra)])
      plan.intra = r;
  }
  return plan;
}

struct TwoLevelRotateMatmul final : OpRewritePattern<MatmulOp> {
  TwoLevelRotateMatmul(MLIRContext *context, const RotateOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<int64_t> k = getRotatableReductionSize(op, &reason);
    if (failed(k))
      return rewriter.notifyMatchFailure(op, reason);
    if (*k % options.size != 0)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "size " << options.size << " does not divide K = " << *k;
      });
    QuantizeOp quantize = activationQuantize(op);
    if (!quantize)
      return rewriter.notifyMatchFailure(
          op, "two-level mode balances the quantized activation (lhs), and "
              "the lhs is not quantized");
    if (!options.calibration)
      return rewriter.notifyMatchFailure(op, "no calibration data");
    std::optional<CalibrationView> samples =
        options.calibration->lookup(quantize);
    if (!samples || samples->channels() != *k || samples->rows() == 0)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "no usable calibration samples for key '"
             << CalibrationData::keyFor(quantize) << "'";
      });
    FailureOr<TwoLevelPlan> plan = planTwoLevel(quantize, *samples, options);
    if (failed(plan))
      return rewriter.notifyMatchFailure(
          op, "the calibration samples cannot be quantized with the "
              "activation's scheme");

    const int64_t b = options.size;
    bool identityPermutation =
        llvm::equal(plan->permutation, llvm::seq<int64_t>(0, *k));
    fp4::detail::transformMatmulOperands(
        rewriter, op, [&](OpBuilder &builder, Location loc, Value x) -> Value {
          auto type = cast<RankedTensorType>(x.getType());
          int64_t axis = type.getRank() - 1;
          auto f32Type =
              RankedTensorType::get(type.getShape(), builder.getF32Type());
          if (!identityPermutation)
            x = PermuteOp::create(builder, loc, x, axis, plan->permutation);
          if (plan->crossBlockSize > 1)
            x = RotateOp::create(builder, loc, f32Type, x, plan->crossBlockSize,
                                 b, IntegerAttr(), axis,
                                 /*inverse=*/false);
          if (plan->intra != IntraRotation::Identity)
            x = RotateOp::create(builder, loc, f32Type, x, b, /*stride=*/1,
                                 plan->intra ==
                                         IntraRotation::RandomizedHadamard
                                     ? builder.getUI32IntegerAttr(options.seed)
                                     : IntegerAttr(),
                                 axis, /*inverse=*/false);
          return x;
        });
    std::string choice = intraName(plan->intra, b);
    rewriter.modifyOpInPlace(op, [&] {
      op->setAttr(kIntraBlockRotationAttrName, rewriter.getStringAttr(choice));
    });
    if (options.remarks) {
      InFlightDiagnostic remark = op.emitRemark();
      remark << "two-level rotation (calibration key '" << samples->key
             << "'): block energy max/min "
             << formatNumber("%.3g", plan->imbalanceBefore) << " -> "
             << formatNumber("%.3g", plan->imbalanceAfter);
      if (plan->crossBlockSize > 1)
        remark << ", cross-block hadamard-" << plan->crossBlockSize;
      remark << "; intra-block " << choice << " (code entropy: identity "
             << formatNumber("%.4f", plan->entropy[0]) << ", hadamard-" << b
             << " " << formatNumber("%.4f", plan->entropy[1])
             << ", randomized-hadamard-" << b << " "
             << formatNumber("%.4f", plan->entropy[2]) << " bits)";
    }
    return success();
  }

  RotateOptions options;
};

} // namespace

void mlir::fp4::populateFP4TwoLevelRotationPatterns(
    RewritePatternSet &patterns, const RotateOptions &options) {
  patterns.add<TwoLevelRotateMatmul>(patterns.getContext(), options);
}
