//===- FoldedConstant.h - constants computed at compile time ----*- C++ -*-===//
//
// What every compile-time folder (quantization, rotations, outlier and
// residual corrections) needs to emit its results: storage that becomes a
// `dense` literal or a `dense_resource` blob without a copy, float element
// encoding with the numerics library's rounding, blob naming, and removal of
// the float producers a fold leaves dead. One copy, shared by the folders.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_TRANSFORMS_FOLDEDCONSTANT_H
#define FP4_LIB_DIALECT_FP4_TRANSFORMS_FOLDEDCONSTANT_H

#include "fp4/Dialect/FP4/IR/ConstantBytes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <string>
#include <vector>

namespace mlir::fp4::detail {

/// Constants with fewer elements are printed as `dense` literals.
constexpr int64_t kInlineElements = 64;

/// The bytes of a constant being computed: a heap blob that becomes the
/// dense_resource without a copy, or a small buffer for a `dense` literal.
class ConstantStorage {
public:
  explicit ConstantStorage(ShapedType type);

  MutableArrayRef<char> bytes() const { return data; }

  /// `dense` below kInlineElements or when all elements are equal, else a
  /// dense_resource whose blob is named `name` (uniqued by the context).
  TypedAttr finish(const Twine &name);

private:
  ShapedType type;
  int64_t elementBytes;
  std::vector<char> small;
  AsmResourceBlob blob;
  MutableArrayRef<char> data;
};

/// Stores `values` as elements of `elementType` (f32 as is; bf16 and f16
/// rounded to nearest even with the numerics rules) into `bytes`.
void storeFloatElements(Type elementType, ArrayRef<float> values,
                        MutableArrayRef<char> bytes);

/// The reader the folders share with the GPU lowering (ConstantBytes.h).
using mlir::fp4::readConstantBytes;

/// Erases the producers of `value` left without users (the float weights, a
/// transpose's init tensor, the components of a folded pack), so that they
/// are not printed again next to the folded constant.
void eraseDeadProducers(PatternRewriter &rewriter, Value value);

/// Name stem of the blobs made from an op's result: the source blob's key,
/// else the op's NameLoc, else "const".
std::string blobStem(StringRef sourceName, Location loc);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_FOLDEDCONSTANT_H
