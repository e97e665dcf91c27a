//===- QuantizeMatmuls.cpp - linalg contractions to fp4.matmul ------------===//
//
// Rewrites a linalg contraction C += A * B over tensors (linalg.matmul,
// linalg.batch_matmul, linalg.contract or linalg.generic: one reduction
// dimension K, a multiply-add body, any placement of the dimensions in the
// indexing maps) into the K-major fp4.matmul with quantized operands:
//
//   %r = linalg.matmul ins(%a, %b : tensor<MxK>, tensor<KxN>)
//                      outs(%fill : tensor<MxN>)
// becomes
//   %bt = linalg.transpose ins(%b) outs(%empty) permutation = [1, 0]
//   %qa = fp4.quantize %a  : tensor<MxK> -> !fp4.tensor<MxK, scheme, axis = 1>
//   %qb = fp4.quantize %bt : tensor<NxK> -> !fp4.tensor<NxK, scheme, axis = 1>
//   %r  = fp4.matmul %qa, %qb -> tensor<MxN>
//
// Operands are transposed to [B?, M, K] / [B?, N, K]; an accumulator that is
// not a zero fill is added back by an elementwise linalg.generic (which also
// permutes the product into the output layout), else a linalg.transpose does
// when the output is not [B?, M, N].
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// How one contraction maps onto fp4.matmul. Dimensions are loop positions
/// of the linalg op.
struct ContractionPlan {
  /// The inputs multiplied and the indexing maps (lhs, rhs, output): the
  /// op's, except that an input produced by a broadcast is replaced by the
  /// broadcast's source with the composed map, so a weight broadcast over
  /// the batch is quantized once (and folded) as a shared rhs.
  Value inputs[2];
  SmallVector<AffineMap> maps;
  /// How this contraction is quantized, and the scheme chosen from it.
  QuantizeChoice choice;
  QuantSchemeAttrInterface scheme;
  /// Loop dimensions of the two fp4.matmul operands, K last: [B?, M.., K]
  /// for the first, [B?, N, K] for the second.
  SmallVector<unsigned> firstDims, secondDims;
  /// Loop dimensions of the fp4.matmul result, [B?, M.., N].
  SmallVector<unsigned> resultDims;
  /// Groups of firstDims / secondDims / resultDims positions merged into one
  /// fp4.matmul dimension (tensor.collapse_shape of the transposed operands,
  /// tensor.expand_shape of the product): several batch, K, or M and N
  /// dimensions (the forms `-linalg-fuse-elementwise-ops` makes by fusing
  /// reshapes into contractions) become one. All singletons when none is.
  SmallVector<ReassociationIndices> firstGroups, secondGroups, resultGroups;
  /// fp4.matmul takes the linalg rhs first: its rhs has two free dimensions
  /// (a batch it does not share with the lhs), which only fp4.matmul's lhs
  /// may have.
  bool swapped = false;
  int64_t kSize = 0;
  /// The conversions the body applies to lhs / rhs before multiplying, in
  /// order, when they narrow (empty for none or exact extensions only).
  SmallVector<Operation *> lhsConversions, rhsConversions;
  QuantizedTensorType lhsQuantType, rhsQuantType;
  bool zeroAccumulator = false;
};

} // namespace

static bool isQuantizableFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

/// True for an accumulator that contributes nothing: a zero fill or a zero
/// splat constant (frontends initialise C this way for C = A * B).
static bool isZeroAccumulator(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  if (auto generic = init.getDefiningOp<linalg::GenericOp>())
    if (std::optional<Value> filled = linalg::isaFillOpInterface(generic))
      return matchPattern(*filled, m_AnyZeroFloat());
  return matchPattern(init, m_AnyZeroFloat());
}

static std::string describe(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return "block argument #" + std::to_string(arg.getArgNumber());
  return ("'" + value.getDefiningOp()->getName().getStringRef() + "'").str();
}

/// Matches a body `yield(addf(out, mulf(cvt(a), cvt(b))))` (operands of
/// addf and mulf in either order) where cvt is a possibly empty chain of
/// arith.extf / arith.truncf. A chain that narrows is returned so that it can
/// be applied to the whole operand tensor.
static LogicalResult matchMulAddBody(linalg::LinalgOp op, ContractionPlan &plan,
                                     std::string &reason) {
  Block *body = op.getBlock();
  Operation *terminator = body->getTerminator();
  if (terminator->getNumOperands() != 1) {
    reason = "the body does not yield exactly one value";
    return failure();
  }
  Value yielded = terminator->getOperand(0);
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body) {
    reason = "the body yields " + describe(yielded) +
             ", not an 'arith.addf' into the accumulator (not a multiply-add)";
    return failure();
  }
  BlockArgument acc = body->getArgument(2);
  Value product;
  if (add.getLhs() == acc)
    product = add.getRhs();
  else if (add.getRhs() == acc)
    product = add.getLhs();
  else {
    reason = "the body's 'arith.addf' does not add to the accumulator (not a "
             "multiply-add)";
    return failure();
  }
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != body) {
    reason = "the body accumulates " + describe(product) +
             ", not an 'arith.mulf' (not a multiply-add)";
    return failure();
  }
  // Follows conversions back to a block argument.
  auto trace =
      [&](Value v,
          SmallVectorImpl<Operation *> &chain) -> std::optional<unsigned> {
    while (Operation *def = v.getDefiningOp()) {
      if (def->getBlock() != body || !isa<arith::ExtFOp, arith::TruncFOp>(def))
        return std::nullopt;
      chain.push_back(def);
      v = def->getOperand(0);
    }
    auto arg = cast<BlockArgument>(v);
    if (arg.getOwner() != body || arg.getArgNumber() > 1)
      return std::nullopt;
    std::reverse(chain.begin(), chain.end());
    return arg.getArgNumber();
  };
  SmallVector<Operation *> chains[2];
  std::optional<unsigned> first = trace(mul.getLhs(), chains[0]);
  std::optional<unsigned> second = trace(mul.getRhs(), chains[1]);
  if (!first || !second || *first == *second) {
    reason = "the body's 'arith.mulf' does not multiply lhs by rhs (only "
             "'arith.extf' / 'arith.truncf' may convert them first)";
    return failure();
  }
  // Extensions alone are exact: fp4.quantize and fp4.matmul extend their
  // operands exactly themselves. A chain that narrows is kept whole.
  for (auto [index, chain] : llvm::enumerate(chains)) {
    if (llvm::none_of(chain, llvm::IsaPred<arith::TruncFOp>))
      chain.clear();
    unsigned operand = index == 0 ? *first : *second;
    (operand == 0 ? plan.lhsConversions : plan.rhsConversions) = chain;
  }
  return success();
}

/// Runs the quantized type's verifier (scheme-specific checks included) and
/// returns its message on failure. The verifier reports through a diagnostic;
/// the handler is context-wide and other threads may be emitting, so only
/// diagnostics at a location private to this call are caught.
static std::optional<std::string>
verifyQuantizedType(Operation *anchor, ArrayRef<int64_t> shape,
                    QuantSchemeAttrInterface scheme, int64_t axis) {
  MLIRContext *ctx = anchor->getContext();
  Location probe = OpaqueLoc::get(anchor, UnknownLoc::get(ctx));
  std::string message;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getLocation() != probe)
      return failure();
    message = diag.str();
    return success();
  });
  if (succeeded(QuantizedTensorType::verify([&] { return emitError(probe); },
                                            shape, scheme.getElementType(),
                                            scheme, axis)))
    return std::nullopt;
  return message;
}

/// Shape of an operand once its dimensions are brought into `dims` order.
static SmallVector<int64_t>
permutedShape(ArrayRef<int64_t> shape, AffineMap map, ArrayRef<unsigned> dims) {
  SmallVector<int64_t> result;
  for (unsigned dim : dims)
    result.push_back(
        shape[*map.getResultPosition(getAffineDimExpr(dim, map.getContext()))]);
  return result;
}

/// The input of a linalg op that only broadcasts (or copies) it: one input,
/// one output with the identity map, every loop parallel, a body yielding the
/// input element. Its input map says which output dimensions it reads.
static linalg::LinalgOp getBroadcastProducer(Value value) {
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getIndexingMapsArray()[1].isIdentity() ||
      !op.getIndexingMapsArray()[0].isProjectedPermutation())
    return nullptr;
  if (isa<linalg::BroadcastOp, linalg::TransposeOp>(op))
    return op;
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 1)
    return nullptr;
  Operation *yield = body->getTerminator();
  if (yield->getNumOperands() != 1 || yield->getOperand(0) != body->getArgument(0))
    return nullptr;
  return op;
}

bool mlir::fp4::isWeightOperand(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Block *block = arg.getOwner();
      return block->isEntryBlock() &&
             isa_and_present<FunctionOpInterface>(block->getParentOp());
    }
    if (matchPattern(value, m_Constant()))
      return true;
    Operation *def = value.getDefiningOp();
    if (linalg::LinalgOp producer = getBroadcastProducer(value))
      value = producer.getDpsInputs()[0];
    else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
                 arith::ExtFOp, arith::TruncFOp>(def))
      value = def->getOperand(0);
    else
      return false;
  }
}

/// Replaces plan.inputs[index] by the source of the broadcast producing it
/// (linalg.broadcast or a broadcasting linalg.generic), composing the maps,
/// where every dimension the broadcast adds is a parallel loop of `op` (a
/// broadcast along K is a different product). Copies and transposes are
/// left: fp4-quantize transposes operands itself.
static void lookThroughBroadcast(linalg::LinalgOp op, unsigned index,
                                 ContractionPlan &plan) {
  linalg::LinalgOp producer = getBroadcastProducer(plan.inputs[index]);
  if (!producer)
    return;
  AffineMap sourceMap = producer.getIndexingMapsArray()[0];
  if (sourceMap.getNumResults() == sourceMap.getNumDims())
    return;
  AffineMap composed = sourceMap.compose(plan.maps[index]);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction &&
        plan.maps[index].isFunctionOfDim(dim) && !composed.isFunctionOfDim(dim))
      return;
  plan.inputs[index] = producer.getDpsInputs()[0];
  plan.maps[index] = composed;
}

/// `shape` with each group of dimensions merged into one (their product,
/// dynamic if any is).
static SmallVector<int64_t>
mergeGroups(ArrayRef<int64_t> shape, ArrayRef<ReassociationIndices> groups) {
  SmallVector<int64_t> result;
  for (const ReassociationIndices &group : groups) {
    int64_t size = 1;
    for (int64_t position : group)
      size = ShapedType::isDynamic(shape[position]) || ShapedType::isDynamic(size)
                 ? ShapedType::kDynamic
                 : size * shape[position];
    result.push_back(size);
  }
  return result;
}

static bool hasMergedGroup(ArrayRef<ReassociationIndices> groups) {
  return llvm::any_of(groups, [](const ReassociationIndices &group) {
    return group.size() > 1;
  });
}

namespace {

struct QuantizeContraction final : OpInterfaceRewritePattern<linalg::LinalgOp> {
  QuantizeContraction(MLIRContext *ctx, const QuantizeOptions &options)
      : OpInterfaceRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    ContractionPlan plan;
    if (failed(analyze(op, rewriter, plan)))
      return failure();
    rewrite(op, plan, rewriter);
    return success();
  }

private:
  LogicalResult analyze(linalg::LinalgOp op, PatternRewriter &rewriter,
                        ContractionPlan &plan) const;
  void rewrite(linalg::LinalgOp op, const ContractionPlan &plan,
               PatternRewriter &rewriter) const;
  /// Sets plan's quantized types for `scheme`, or returns why it does not
  /// fit.
  std::string fitScheme(linalg::LinalgOp op, QuantSchemeAttrInterface scheme,
                        ContractionPlan &plan, ArrayRef<unsigned> lhsDims,
                        ArrayRef<unsigned> rhsDims) const;
  Value prepareOperand(PatternRewriter &rewriter, Location loc, Value operand,
                       AffineMap map, ArrayRef<unsigned> dims,
                       ArrayRef<ReassociationIndices> groups,
                       ArrayRef<Operation *> conversions,
                       QuantizedTensorType quantType) const;

  QuantizeOptions options;
};

} // namespace

std::string QuantizeContraction::fitScheme(linalg::LinalgOp op,
                                           QuantSchemeAttrInterface scheme,
                                           ContractionPlan &plan,
                                           ArrayRef<unsigned> lhsDims,
                                           ArrayRef<unsigned> rhsDims) const {
  int64_t multiple = scheme.getAxisMultiple();
  if (plan.kSize % multiple != 0) {
    std::string text;
    llvm::raw_string_ostream(text)
        << "K = " << plan.kSize << " is not a multiple of " << multiple
        << " required by " << Attribute(scheme);
    return text;
  }
  ArrayRef<ReassociationIndices> lhsGroups =
      plan.swapped ? plan.secondGroups : plan.firstGroups;
  ArrayRef<ReassociationIndices> rhsGroups =
      plan.swapped ? plan.firstGroups : plan.secondGroups;
  for (auto [quantize, value, map, dims, groups, slot, name] :
       {std::tuple{plan.choice.quantizeLhs(), plan.inputs[0], plan.maps[0],
                   lhsDims, lhsGroups, &plan.lhsQuantType, StringRef("lhs")},
        std::tuple{plan.choice.quantizeRhs(), plan.inputs[1], plan.maps[1],
                   rhsDims, rhsGroups, &plan.rhsQuantType,
                   StringRef("rhs")}}) {
    *slot = {};
    if (!quantize)
      continue;
    SmallVector<int64_t> shape = mergeGroups(
        permutedShape(cast<RankedTensorType>(value.getType()).getShape(), map,
                      dims),
        groups);
    shape.back() = plan.kSize;
    int64_t axis = shape.size() - 1;
    if (std::optional<std::string> error =
            verifyQuantizedType(op.getOperation(), shape, scheme, axis))
      return (name + ": " + *error).str();
    *slot = QuantizedTensorType::get(shape, scheme, axis);
  }
  return "";
}

LogicalResult QuantizeContraction::analyze(linalg::LinalgOp op,
                                           PatternRewriter &rewriter,
                                           ContractionPlan &plan) const {
  // Ops without a reduction (fills, transposes, elementwise) are not
  // contractions at all: no reason worth reporting.
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return failure();
  auto rejectAs = [&](QuantizeSkip why, const Twine &reason) {
    if (options.onSkip)
      options.onSkip(why);
    return rewriter.notifyMatchFailure(op, reason);
  };
  auto reject = [&](const Twine &reason) {
    return rejectAs(QuantizeSkip::Form, reason);
  };
  if (!op.hasPureTensorSemantics())
    return reject("it operates on buffers; fp4-quantize rewrites ops on "
                  "tensors (run it before bufferization)");
  plan.inputs[0] = op.getDpsInputs()[0];
  plan.inputs[1] = op.getDpsInputs()[1];
  plan.maps = op.getIndexingMapsArray();
  lookThroughBroadcast(op, 0, plan);
  lookThroughBroadcast(op, 1, plan);
  Value lhs = plan.inputs[0], rhs = plan.inputs[1];
  Value init = op.getDpsInits()[0];
  ArrayRef<AffineMap> maps = plan.maps;
  static constexpr StringLiteral names[] = {"lhs", "rhs", "output"};
  for (auto [index, map] : llvm::enumerate(maps))
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false)) {
      std::string text;
      llvm::raw_string_ostream(text) << map;
      return reject(Twine("the indexing map of ") + names[index] + " (" + text +
                    ") is not a projected permutation");
    }
  Value operands[] = {lhs, rhs, init};
  for (auto [index, value] : llvm::enumerate(operands)) {
    if (!isa<RankedTensorType>(value.getType()))
      return reject(Twine(names[index]) + " is a scalar, not a tensor");
    Type elementType = getElementTypeOrSelf(value.getType());
    if (!isQuantizableFloat(elementType)) {
      std::string text;
      llvm::raw_string_ostream(text) << elementType;
      return rejectAs(QuantizeSkip::ElementType,
                      Twine(names[index]) + " has element type " + text +
                    "; fp4 quantizes f32, bf16 and f16");
    }
  }

  // Classify the loops: batch (all three operands), M (lhs and output),
  // N (rhs and output), K (the reduction, lhs and rhs).
  AffineMap lhsMap = maps[0], rhsMap = maps[1], outMap = maps[2];
  SmallVector<unsigned> batch, m, n, kDims;
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    AffineExpr expr = rewriter.getAffineDimExpr(dim);
    bool inLhs = lhsMap.getResultPosition(expr).has_value();
    bool inRhs = rhsMap.getResultPosition(expr).has_value();
    bool inOut = outMap.getResultPosition(expr).has_value();
    if (iterator == utils::IteratorType::reduction) {
      if (!inLhs || !inRhs || inOut)
        return reject(Twine("the reduction dimension d") + Twine(dim) +
                      " must index lhs and rhs and not the output (not a "
                      "matrix product)");
      kDims.push_back(dim);
      continue;
    }
    if (!inOut)
      return reject(Twine("the parallel dimension d") + Twine(dim) +
                    " does not index the output");
    if (inLhs && inRhs)
      batch.push_back(dim);
    else if (inLhs)
      m.push_back(dim);
    else if (inRhs)
      n.push_back(dim);
    else
      return reject(Twine("the output dimension d") + Twine(dim) +
                    " indexes neither lhs nor rhs (a broadcast); fp4.matmul "
                    "needs M in lhs and N in rhs");
  }
  if (n.empty())
    return reject("no N dimension (a matrix-vector product); fp4.matmul "
                  "needs M, N and K: express it as a matmul with N = 1");
  if (m.empty())
    return reject("no M dimension (a vector-matrix product); fp4.matmul "
                  "needs M, N and K: express it as a matmul with M = 1");
  // fp4.matmul is [B, M, K] x [B, N, K] or [B, M, K] x [N, K] (a shared
  // rhs); an unshared batch on the linalg rhs is taken by swapping. Other
  // forms are reshaped to these: several K (or batch) dimensions merge into
  // one, and so do the M and the N dimensions when they do not fit.
  bool mergeBatch = batch.size() > 1, mergeK = kDims.size() > 1;
  bool mergeFree =
      std::min<size_t>(batch.size(), 1) + std::max(m.size(), n.size()) > 2 ||
      (m.size() > 1 && n.size() > 1);
  plan.swapped = !mergeFree && n.size() > 1;
  {
    SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
    for (auto [merged, dims] : {std::pair{mergeBatch, ArrayRef(batch)},
                                std::pair{mergeFree, ArrayRef(m)},
                                std::pair{mergeFree, ArrayRef(n)},
                                std::pair{mergeK, ArrayRef(kDims)}})
      if (merged && dims.size() > 1)
        for (unsigned dim : dims)
          if (ShapedType::isDynamic(loopSizes[dim]))
            return reject(Twine("dimension d") + Twine(dim) +
                          " is dynamic and would have to be merged with "
                          "others into one fp4.matmul dimension");
  }

  std::string bodyReason;
  if (failed(matchMulAddBody(op, plan, bodyReason)))
    return reject(bodyReason);

  // What to do with it: the recipe's (or the options') choice.
  auto outType = cast<RankedTensorType>(init.getType());
  auto sizeOf = [&](ArrayRef<unsigned> dims) {
    int64_t size = 1;
    for (unsigned dim : dims) {
      int64_t d = outType.getDimSize(
          *outMap.getResultPosition(rewriter.getAffineDimExpr(dim)));
      if (ShapedType::isDynamic(d))
        return ShapedType::kDynamic;
      size *= d;
    }
    return size;
  };
  ContractionInfo info;
  info.layer = getLayerName(op.getLoc()).value_or(StringRef());
  info.weightRhs = isWeightOperand(op.getDpsInputs()[1]);
  info.batch = sizeOf(batch);
  info.m = sizeOf(m);
  info.n = sizeOf(n);
  // K: the product of the reduction sizes; a size dynamic in one input
  // and static in the other is taken as static.
  info.k = 1;
  for (unsigned dim : kDims) {
    AffineExpr kExpr = rewriter.getAffineDimExpr(dim);
    int64_t lhsK = cast<RankedTensorType>(lhs.getType())
                       .getDimSize(*lhsMap.getResultPosition(kExpr));
    int64_t rhsK = cast<RankedTensorType>(rhs.getType())
                       .getDimSize(*rhsMap.getResultPosition(kExpr));
    int64_t size = ShapedType::isDynamic(lhsK) ? rhsK : lhsK;
    info.k = ShapedType::isDynamic(size) || ShapedType::isDynamic(info.k)
                 ? ShapedType::kDynamic
                 : info.k * size;
  }
  if (options.select) {
    std::string why;
    std::optional<QuantizeChoice> choice = options.select(op, info, why);
    if (!choice)
      return rejectAs(QuantizeSkip::Excluded, why);
    plan.choice = std::move(*choice);
  } else {
    if (!info.weightRhs && !options.activationProducts)
      return rejectAs(QuantizeSkip::Excluded,
                      "an activation x activation product (its rhs is "
                      "computed, not a constant or function argument); "
                      "activation-products=true quantizes it");
    plan.choice.schemes = {options.scheme};
    plan.choice.operands = options.operands;
  }

  // K: the blocked axis of every quantized operand must be static.
  plan.kSize = info.k;
  auto printScheme = [](QuantSchemeAttrInterface scheme) {
    std::string text;
    llvm::raw_string_ostream(text) << Attribute(scheme);
    return text;
  };
  std::string schemeText = printScheme(plan.choice.schemes.front());
  if (ShapedType::isDynamic(plan.kSize))
    return rejectAs(QuantizeSkip::Shape, "K is dynamic; the blocks of " + schemeText +
                  " need a static K");
  // An empty product (K = 0, or an empty M, N or batch) has nothing to
  // quantize: its result is the accumulator. Leaving it to linalg keeps
  // every later pass, folder and kernel generator away from empty blocks.
  for (Value operand : {lhs, rhs, init})
    if (llvm::is_contained(cast<ShapedType>(operand.getType()).getShape(), 0))
      return rejectAs(QuantizeSkip::Shape,
                      "an operand has an empty dimension (" +
                    Twine(plan.kSize == 0 ? "K = 0" : "size 0") +
                    "); there is nothing to quantize");

  // Loop order of the fp4.matmul operands and result. With two M (or N)
  // dimensions, keep their output order so the result needs no transpose
  // when the output already is [B?, M, M', N].
  auto byOutputPosition = [&](unsigned a, unsigned b) {
    return *outMap.getResultPosition(rewriter.getAffineDimExpr(a)) <
           *outMap.getResultPosition(rewriter.getAffineDimExpr(b));
  };
  llvm::sort(batch, byOutputPosition);
  llvm::sort(m, byOutputPosition);
  llvm::sort(n, byOutputPosition);
  // Merged K dimensions in the lhs order (both operands use it; K blocks run
  // along the merged axis, the last dimension fastest).
  llvm::sort(kDims, [&](unsigned a, unsigned b) {
    return *lhsMap.getResultPosition(rewriter.getAffineDimExpr(a)) <
           *lhsMap.getResultPosition(rewriter.getAffineDimExpr(b));
  });
  SmallVector<unsigned> lhsDims(batch), rhsDims(batch);
  llvm::append_range(lhsDims, m);
  llvm::append_range(rhsDims, n);
  llvm::append_range(lhsDims, kDims);
  llvm::append_range(rhsDims, kDims);
  ArrayRef<unsigned> firstFree = plan.swapped ? n : m;
  ArrayRef<unsigned> secondFree = plan.swapped ? m : n;
  plan.firstDims = plan.swapped ? rhsDims : lhsDims;
  plan.secondDims = plan.swapped ? lhsDims : rhsDims;
  plan.resultDims.assign(batch.begin(), batch.end());
  llvm::append_range(plan.resultDims, firstFree);
  llvm::append_range(plan.resultDims, secondFree);
  auto groups = [&](ArrayRef<std::pair<size_t, bool>> runs) {
    SmallVector<ReassociationIndices> result;
    int64_t position = 0;
    for (auto [count, merged] : runs)
      for (size_t i = 0; i < count; ++i) {
        if (i == 0 || !merged)
          result.emplace_back();
        result.back().push_back(position++);
      }
    return result;
  };
  plan.firstGroups = groups({{batch.size(), mergeBatch},
                             {firstFree.size(), mergeFree},
                             {kDims.size(), mergeK}});
  plan.secondGroups = groups({{batch.size(), mergeBatch},
                              {secondFree.size(), mergeFree},
                              {kDims.size(), mergeK}});
  plan.resultGroups = groups({{batch.size(), mergeBatch},
                              {firstFree.size(), mergeFree},
                              {secondFree.size(), mergeFree}});

  // The first scheme that fits: K a multiple of its blocks and quantized
  // operand types its verifier (scheme-specific checks such as NVFP4 2D
  // tiles included) accepts.
  std::string firstReason;
  for (QuantSchemeAttrInterface scheme : plan.choice.schemes) {
    std::string reason = fitScheme(op, scheme, plan, lhsDims, rhsDims);
    if (reason.empty()) {
      plan.scheme = scheme;
      break;
    }
    if (firstReason.empty())
      firstReason = reason;
  }
  if (!plan.scheme) {
    if (plan.choice.schemes.size() > 1)
      firstReason += " (and no fallback scheme fits)";
    return rejectAs(plan.choice.floatWhenNoneFits ? QuantizeSkip::Excluded
                                                  : QuantizeSkip::Shape,
                    firstReason);
  }

  plan.zeroAccumulator = isZeroAccumulator(init);
  return success();
}

/// Result of linalg.transpose of `value` with `permutation` into a fresh
/// tensor (dynamic sizes taken from `value`).
static Value transpose(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  SmallVector<OpFoldResult> sizes =
      applyPermutation(tensor::getMixedSizes(b, loc, value), permutation);
  Value init = tensor::EmptyOp::create(b, loc, sizes,
                                       getElementTypeOrSelf(value.getType()));
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      ->getResult(0);
}

/// Applies the body's scalar conversions to the whole tensor `value`: arith
/// casts are elementwise on tensors, and a constant behind one still folds
/// (arith's folder, fp4-fold-constants).
static Value convertElements(OpBuilder &b, Location loc, Value value,
                             ArrayRef<Operation *> conversions) {
  for (Operation *conversion : conversions) {
    auto type = cast<RankedTensorType>(value.getType());
    OperationState state(loc, conversion->getName(), value,
                         type.clone(conversion->getResult(0).getType()),
                         conversion->getAttrs());
    value = b.create(state)->getResult(0);
  }
  return value;
}

Value QuantizeContraction::prepareOperand(PatternRewriter &rewriter,
                                          Location loc, Value operand,
                                          AffineMap map,
                                          ArrayRef<unsigned> dims,
                                          ArrayRef<ReassociationIndices> groups,
                                          ArrayRef<Operation *> conversions,
                                          QuantizedTensorType quantType) const {
  Value value = convertElements(rewriter, loc, operand, conversions);
  SmallVector<int64_t> permutation;
  for (unsigned dim : dims)
    permutation.push_back(
        *map.getResultPosition(rewriter.getAffineDimExpr(dim)));
  if (!isIdentityPermutation(permutation))
    value = transpose(rewriter, loc, value, permutation);
  // Folds into the source where that is an expand_shape with the same
  // groups (a weight reshaped by reshape fusion), so constants still fold.
  if (hasMergedGroup(groups))
    value = rewriter.createOrFold<tensor::CollapseShapeOp>(loc, value, groups);
  if (!quantType)
    return value;
  // The quantized type has a static K even where this operand's is dynamic
  // (the other operand fixes it).
  auto type = cast<RankedTensorType>(value.getType());
  auto staticType = type.clone(quantType.getShape());
  if (type != staticType)
    value = tensor::CastOp::create(rewriter, loc, staticType, value);
  return QuantizeOp::create(rewriter, loc, quantType, value);
}

void QuantizeContraction::rewrite(linalg::LinalgOp op,
                                  const ContractionPlan &plan,
                                  PatternRewriter &rewriter) const {
  Location loc = op.getLoc();
  ArrayRef<AffineMap> maps = plan.maps;
  Value init = op.getDpsInits()[0];
  auto outType = cast<RankedTensorType>(init.getType());

  Value lhs = prepareOperand(rewriter, loc, plan.inputs[0], maps[0],
                             plan.swapped ? plan.secondDims : plan.firstDims,
                             plan.swapped ? plan.secondGroups : plan.firstGroups,
                             plan.lhsConversions, plan.lhsQuantType);
  Value rhs = prepareOperand(rewriter, loc, plan.inputs[1], maps[1],
                             plan.swapped ? plan.firstDims : plan.secondDims,
                             plan.swapped ? plan.firstGroups : plan.secondGroups,
                             plan.rhsConversions, plan.rhsQuantType);
  if (plan.swapped)
    std::swap(lhs, rhs);

  // Position in the output of each fp4.matmul result dimension.
  AffineMap outMap = maps[2];
  SmallVector<int64_t> outPositions;
  for (unsigned dim : plan.resultDims)
    outPositions.push_back(
        *outMap.getResultPosition(rewriter.getAffineDimExpr(dim)));
  SmallVector<int64_t> resultShape;
  for (int64_t pos : outPositions)
    resultShape.push_back(outType.getDimSize(pos));

  // With a zero accumulator fp4.matmul rounds straight to the output type;
  // otherwise it stays f32 and the accumulator is added in f32 before the one
  // rounding to the output type.
  Type f32 = rewriter.getF32Type();
  Type outElementType = outType.getElementType();
  Type productElementType = plan.zeroAccumulator ? outElementType : f32;
  auto matmul = MatmulOp::create(
      rewriter, loc,
      RankedTensorType::get(mergeGroups(resultShape, plan.resultGroups),
                            productElementType),
      lhs, rhs);
  if (plan.choice.recipe)
    matmul->setAttr(kRecipeAttrName, plan.choice.recipe);
  Value product = matmul;
  if (hasMergedGroup(plan.resultGroups)) {
    SmallVector<OpFoldResult> initSizes =
        tensor::getMixedSizes(rewriter, loc, init);
    SmallVector<OpFoldResult> sizes;
    for (int64_t pos : outPositions)
      sizes.push_back(initSizes[pos]);
    product = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(resultShape, productElementType),
        product, plan.resultGroups, sizes);
  }

  if (plan.zeroAccumulator) {
    // linalg.transpose: result[i] = product[permutation[i]].
    SmallVector<int64_t> permutation = invertPermutationVector(outPositions);
    Value result = product;
    if (!isIdentityPermutation(permutation)) {
      Value empty = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
          outElementType);
      result = linalg::TransposeOp::create(rewriter, loc, product, empty,
                                           permutation)
                   ->getResult(0);
    }
    rewriter.replaceOp(op, result);
    return;
  }

  int64_t rank = outType.getRank();
  SmallVector<AffineExpr> productExprs;
  for (int64_t pos : outPositions)
    productExprs.push_back(rewriter.getAffineDimExpr(pos));
  AffineMap productMap =
      AffineMap::get(rank, 0, productExprs, rewriter.getContext());
  AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto accumulate = linalg::GenericOp::create(
      rewriter, loc, outType, product, init, {productMap, identity}, iterators,
      [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
        Value acc = args[1];
        if (acc.getType() != f32)
          acc = arith::ExtFOp::create(b, nestedLoc, f32, acc);
        Value sum = arith::AddFOp::create(b, nestedLoc, acc, args[0]);
        if (outElementType != f32)
          sum = arith::TruncFOp::create(b, nestedLoc, outElementType, sum);
        linalg::YieldOp::create(b, nestedLoc, sum);
      });
  rewriter.replaceOp(op, accumulate->getResults());
}

void mlir::fp4::populateFP4QuantizePatterns(RewritePatternSet &patterns,
                                            const QuantizeOptions &options) {
  patterns.add<QuantizeContraction>(patterns.getContext(), options);
}
