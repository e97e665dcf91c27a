//===- FusedActivationPrep.h - a fused chain's activations from x -*- C++ -*-===//
//
// The activation parts of a fused correction chain (FusedCorrectionChain.h)
// usually come from one x through x -> [fp4.rotate] -> [fp4.split_outliers]
// -> fp4.quantize -> [fp4.residual]. Lowered op by op that is up to five
// launches before the product (rotate, split, quantize, residual, stacker),
// each a pass over x; one activation-prep kernel (ActivationPrepKernel.cpp)
// computes them all from x, per chunk of a row, and writes the ops'
// results and the stacked rows. The producers' patterns ask
// isFusedIntoActivationPrep and wait for the chain's end, which asks
// analyzeActivationPrep: both see the same conditions.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_FUSEDACTIVATIONPREP_H
#define LIB_CONVERSION_FP4TOGPU_FUSEDACTIVATIONPREP_H

#include "CorrectionKernels.h"
#include "FusedCorrectionChain.h"

#include <string>

namespace mlir::fp4 {

struct FusedActivationPrep {
  /// What the kernel reads: x, or the rotated x where the rotation has
  /// uses outside the prep (then it is lowered on its own).
  Value input;
  /// The fused ops (null where absent).
  RotateOp rotate;
  SplitOutliersOp split;
  QuantizeOp quantize;
  ResidualOp residual;
  /// The kernel's spec without its arguments and outputs.
  ActivationPrepKernelSpec spec;
};

/// The activation prep of `chain`, or failure with `reason` (the chain then
/// lowers with the stacker over the ops' own kernels).
FailureOr<FusedActivationPrep>
analyzeActivationPrep(const FusedCorrectionChain &chain, std::string &reason);

/// Whether `op` (an fp4.rotate, fp4.split_outliers or fp4.residual) is
/// computed by the activation prep of a fused chain, so that its pattern
/// leaves it to the chain's end.
bool isFusedIntoActivationPrep(Operation *op, const ChainAnalysisContext &ctx);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_FUSEDACTIVATIONPREP_H
