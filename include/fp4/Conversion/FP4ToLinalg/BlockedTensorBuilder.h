//===- BlockedTensorBuilder.h - linalg structure of block codecs -*- C++ -*-===//
//
// The tensor-level structure every scheme lowering shares, so that a scheme
// model only writes the per-element arithmetic (the numerics rules):
//
//  * the *axis-last view*: the blocked axis is moved last with
//    linalg.transpose (identity when it already is), giving [outer..., K];
//    component tensors are built in that view and transposed back, which is
//    exactly the logical ABI layout (codes pair up along the axis);
//  * splitting K into block dimensions with tensor.expand_shape and merging
//    them back with tensor.collapse_shape;
//  * linalg.generic ops whose leading loops are the (parallel, possibly
//    dynamic) outer dimensions;
//  * a NaN-propagating block max |x| reduction, the pair reduction packing
//    two 4-bit codes per i8 (lower index in the low nibble) and its inverse;
//  * the logical row-major linear index of an element, which keys the
//    counter-based generator of stochastic rounding.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOLINALG_BLOCKEDTENSORBUILDER_H
#define FP4_CONVERSION_FP4TOLINALG_BLOCKEDTENSORBUILDER_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace mlir::fp4 {

class BlockedTensorBuilder {
public:
  /// Body of a generic: block arguments in, values to yield out.
  using BodyFn =
      function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
  /// Computes one element's 4-bit code (an i32) from the block arguments.
  using CodeFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;
  /// Computes one element's f32 value from its code (i32) and the other
  /// block arguments.
  using ValueFn =
      function_ref<Value(OpBuilder &, Location, Value code, ValueRange)>;

  BlockedTensorBuilder(OpBuilder &builder, Location loc,
                       QuantizedTensorType type);

  OpBuilder &getBuilder() const { return builder; }
  Location getLoc() const { return loc; }
  QuantizedTensorType getType() const { return type; }
  /// Number of outer (non-axis) dimensions: rank - 1.
  int64_t getNumOuter() const { return type.getRank() - 1; }
  int64_t getAxisSize() const { return type.getAxisSize(); }

  //===--------------------------------------------------------------------===//
  // Layout
  //===--------------------------------------------------------------------===//

  /// Moves the blocked axis of a tensor in the logical layout last.
  Value toAxisLast(Value logical) const;
  /// Inverse of toAxisLast.
  Value fromAxisLast(Value axisLast) const;
  /// [..., L] -> [..., L / prod(factors), factors...].
  Value splitLast(Value t, ArrayRef<int64_t> factors) const;
  /// Splits dimension `dim` of `t` into [size / prod(factors), factors...].
  Value splitDim(Value t, int64_t dim, ArrayRef<int64_t> factors) const;
  /// Merges the trailing `count` dimensions of `t` into one.
  Value mergeTrailing(Value t, int64_t count) const;
  /// Collapses `t` with an explicit reassociation.
  Value collapse(Value t, ArrayRef<ReassociationIndices> groups) const;

  //===--------------------------------------------------------------------===//
  // Tensors and generics in the axis-last view
  //===--------------------------------------------------------------------===//

  /// tensor.empty with the outer sizes of `like` then `trailing`.
  Value emptyOuter(Value like, ArrayRef<int64_t> trailing,
                   Type elementType) const;
  /// Same, filled with `value`.
  Value filledOuter(Value like, ArrayRef<int64_t> trailing,
                    TypedAttr value) const;
  /// Indexing map of a generic with getNumOuter() outer loops and
  /// `numTrailingLoops` further loops, for an operand indexed by all outer
  /// loops followed by the listed trailing loops (0-based among the trailing
  /// ones).
  AffineMap outerMap(int64_t numTrailingLoops,
                     ArrayRef<int64_t> trailingLoops) const;
  /// The identity map of getNumOuter() + numTrailingLoops loops.
  AffineMap identityMap(int64_t numTrailingLoops) const;
  /// A linalg.generic whose outer loops are parallel and whose trailing
  /// loops have the given iterator types; returns its results.
  SmallVector<Value> generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                             ValueRange inits, ArrayRef<AffineMap> initMaps,
                             ArrayRef<utils::IteratorType> trailingIterators,
                             BodyFn body) const;
  /// An all-parallel elementwise generic over the shape of `like` (outer
  /// dims + its trailing dims), producing one tensor of `resultType` element.
  Value map(Value like, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
            Type resultElementType, BodyFn body) const;

  /// max |x| over the trailing `count` dimensions of a float tensor, NaN
  /// propagating (a block holding a NaN has a NaN max, one holding an Inf
  /// but no NaN an Inf max), computed on |x| bit patterns with the numerics
  /// rule maxAbsBits.
  Value reduceAbsMax(Value t, int64_t count) const;
  /// max |x| over an arbitrary set of dimensions of `t` (given in `reduced`,
  /// increasing); the result keeps the other dimensions in order.
  Value reduceAbsMaxDims(Value t, ArrayRef<int64_t> reduced) const;

  /// Packs codes: a generic over loops [outer..., halfShape..., 2] (the last
  /// loop is the position in the byte) whose body computes each element's
  /// code with `codeFn` from `inputs` (indexed with `inputMaps` over those
  /// loops); yields the i8 tensor [outer..., halfShape...] with the lower
  /// index in the low nibble. `like` supplies the outer sizes.
  Value packCodes(Value like, ArrayRef<int64_t> halfShape, ValueRange inputs,
                  ArrayRef<AffineMap> inputMaps, CodeFn codeFn) const;
  /// Unpacks codes: a generic over loops [outer..., halfShape..., 2] reading
  /// the i8 `codes` [outer..., halfShape...] plus `inputs`; `valueFn` gets
  /// each element's code. Yields f32 [outer..., halfShape..., 2].
  Value unpackCodes(Value codes, ArrayRef<int64_t> halfShape,
                    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                    ValueFn valueFn) const;

  //===--------------------------------------------------------------------===//
  // Stochastic rounding
  //===--------------------------------------------------------------------===//

  /// Records the logical sizes of the quantized tensor (from `logical`, a
  /// tensor in the logical layout) for elementRandomBits.
  void setLogicalShapeFrom(Value logical);
  /// Inside a generic body: sum(linalg.index(loop) * step) over `terms` =
  /// {(loop, step)}, loops numbered from 0 over all loops (outer included).
  Value loopCoordinate(OpBuilder &b, Location loc,
                       ArrayRef<std::pair<int64_t, int64_t>> terms) const;
  /// counterRandom bits of the element at `axisLastCoords` (index values,
  /// one per dimension of the axis-last view), keyed by its linear index in
  /// the logical row-major tensor.
  Value randomBitsAt(OpBuilder &b, Location loc, uint32_t seed,
                     ArrayRef<Value> axisLastCoords) const;
  /// randomBitsAt for the common case: the outer coordinates are the outer
  /// loops; the axis coordinate is loopCoordinate over `axisTerms`, whose
  /// loops are numbered among the trailing loops.
  Value elementRandomBits(OpBuilder &b, Location loc, uint32_t seed,
                          ArrayRef<std::pair<int64_t, int64_t>> axisTerms) const;

private:
  SmallVector<OpFoldResult> outerSizes(Value like) const;

  OpBuilder &builder;
  Location loc;
  QuantizedTensorType type;
  /// Permutation taking the logical layout to the axis-last view.
  SmallVector<int64_t> toLastPerm;
  /// Row-major strides of the logical tensor (index values), by logical dim.
  SmallVector<Value> logicalStrides;
};

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOLINALG_BLOCKEDTENSORBUILDER_H
