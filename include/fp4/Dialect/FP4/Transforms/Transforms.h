//===- Transforms.h - fp4 rewrite patterns ----------------------*- C++ -*-===//
//
// The rewrites behind the fp4 passes, as public populate*Patterns functions so
// that other compilers (IREE, torch-mlir pipelines, custom drivers) can mix
// them into their own pattern sets without running our passes.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H
#define FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace mlir {
class MLIRContext;
class RewritePatternSet;

namespace fp4 {

/// Which operands of `C += A * B` are quantized: A (lhs) holds the
/// activations, B (rhs) the weights.
enum class QuantizeOperands { Both, Activations, Weights };

struct QuantizeOptions {
  /// The scheme every quantized operand gets (blocked along K). Required.
  QuantSchemeAttrInterface scheme;
  QuantizeOperands operands = QuantizeOperands::Both;

  bool quantizeLhs() const { return operands != QuantizeOperands::Weights; }
  bool quantizeRhs() const { return operands != QuantizeOperands::Activations; }
};

/// Adds the pattern rewriting linalg contractions (linalg.matmul and
/// linalg.batch_matmul with default or explicit indexing maps, linalg.generic
/// contractions) into fp4.quantize + fp4.matmul; see the fp4-quantize pass
/// description for the forms matched and the exact semantics. Every op that
/// has a reduction dimension but is not rewritten gets a notifyMatchFailure
/// reason; ops without one fail silently (they are not contractions).
///
/// The pattern does not erase the zero fill of a replaced accumulator (it may
/// not be the pattern's to erase under the walk driver); run DCE afterwards.
void populateFP4QuantizePatterns(RewritePatternSet &patterns,
                                 const QuantizeOptions &options);

/// Parses the `scheme` option of fp4-quantize: a scheme attribute in MLIR
/// syntax (`#fp4.nvfp4<four_over_six = true>`) or a short name for one with
/// default parameters (`mxfp4`, `nvfp4`, `hif4`, `mxfp4_macro`; a bare name
/// may carry parameters: `nvfp4<tile2d = true>`). On failure, `error` says
/// why, including the attribute parser's message, which is caught with a
/// context-wide diagnostic handler: call it where no other thread emits
/// diagnostics on `context` (pass initialize(), option parsing).
FailureOr<QuantSchemeAttrInterface>
parseQuantScheme(MLIRContext *context, StringRef text, std::string &error);

/// Parses the `operands` option of fp4-quantize: both, activations, weights.
FailureOr<QuantizeOperands> parseQuantizeOperands(StringRef text);

//===----------------------------------------------------------------------===//
// fp4-fold-constants
//===----------------------------------------------------------------------===//

struct FoldConstantsOptions {
  /// Constants with more elements are left alone (the fp4-fold-constants pass
  /// reports them as errors).
  int64_t maxElements = int64_t(1) << 32;
  /// Also fold fp4.dequantize of fp4.pack of constants into float constants
  /// (off by default: packed weights stay packed).
  bool foldDequantize = false;
};

/// Adds the pattern replacing fp4.quantize of a constant (dense or
/// dense_resource f32/bf16/f16, possibly behind linalg.transpose, arith.extf
/// and arith.truncf) by fp4.pack of constant components computed with the
/// scheme's reference quantizer, in parallel on the context's thread pool.
/// Components under 64 elements become `dense` literals, larger ones
/// `dense_resource` blobs named fp4_<source>_<component>. With
/// `foldDequantize`, also adds the pattern folding fp4.dequantize of fp4.pack
/// of constants into a float constant (the scheme's reference dequantizer).
/// Producers left without users are erased. Inputs that are not such
/// constants, and schemes without a reference quantizer, fail with a
/// notifyMatchFailure reason.
void populateFP4FoldConstantsPatterns(RewritePatternSet &patterns,
                                      const FoldConstantsOptions &options = {});

/// Whether `op` is an fp4.quantize whose input the fold-constants pattern can
/// read at compile time, whatever its size.
bool isFoldableConstantQuantize(Operation *op);

/// Produces row-view rows [firstRow, firstRow + numRows) of a quantize input
/// as f32 (ReferenceQuantization.h) into `values` (numRows x axis length).
/// Safe to call concurrently.
using ConstantRowReader = std::function<void(
    int64_t firstRow, int64_t numRows, MutableArrayRef<float> values)>;

/// For an fp4.quantize accepted by isFoldableConstantQuantize, a reader of
/// exactly the values fp4-fold-constants quantizes (casts and transposes
/// applied), valid while the constant lives; otherwise failure, with the
/// reason in `reason` when given. Used by analyses (fp4-error-report).
FailureOr<ConstantRowReader>
getConstantQuantizeInputReader(Operation *op, std::string *reason = nullptr);

} // namespace fp4
} // namespace mlir

#endif // FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H
