//===- SparseProductCall.cpp - tagged sparse products to runtime calls ----===//
//
// A block-sparse correction product lowered to loops reads the dense
// operand one gathered element at a time (see CorrectionMatmulLowering);
// the runtime's kernels (CPUSparseProduct.h) do the same terms in the same
// order over packed panels. The tag says which form the generic has; this
// file checks that the buffers still look like it (ranks, element types,
// the gathered memrefs captured by the body) and builds strided views of
// them: no copy, the views carry the buffers' own strides.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "fp4/Transforms/SparseProductTag.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using mlir::fp4::detail::declareRuntimeFunction;
using mlir::fp4::detail::stridedViewType;

namespace {

constexpr llvm::StringLiteral kSparseDense = "fp4_cpu_sparse_dense_f32";
constexpr llvm::StringLiteral kSparseSparse = "fp4_cpu_sparse_sparse_f32";

/// A strided view of `buffer` whose dimension i is the buffer's dimension
/// `dims[i]`, or, for -1, a dimension of `batch` elements and stride 0.
Value view(OpBuilder &b, Location loc, Value buffer, ArrayRef<int> dims,
           OpFoldResult batch) {
  auto type = cast<MemRefType>(buffer.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  SmallVector<OpFoldResult> sizes, strides;
  for (int d : dims) {
    if (d < 0) {
      sizes.push_back(batch);
      strides.push_back(b.getIndexAttr(0));
      continue;
    }
    sizes.push_back(memref::getMixedSize(b, loc, buffer, d));
    strides.push_back(meta.getStrides()[d]);
  }
  return memref::ReinterpretCastOp::create(
      b, loc,
      stridedViewType(b.getContext(), dims.size(), type.getElementType()),
      meta.getBaseBuffer(), OpFoldResult(meta.getOffset()), sizes, strides);
}

/// The memrefs the body loads from that are defined outside it (the
/// gathered operands), in first-use order.
SmallVector<Value> capturedLoads(linalg::GenericOp op) {
  SmallVector<Value> found;
  op.getRegion().walk([&](memref::LoadOp load) {
    Value m = load.getMemRef();
    if (!op->isAncestor(m.getParentRegion()->getParentOp()) &&
        !llvm::is_contained(found, m))
      found.push_back(m);
  });
  return found;
}

bool isMemRef(Value v, int64_t rank, bool f32) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || t.getRank() != rank)
    return false;
  return f32 ? t.getElementType().isF32() : t.getElementType().isInteger(8);
}

} // namespace

LogicalResult
mlir::fp4::detail::replaceSparseProductByCall(linalg::GenericOp op,
                                              std::string &why) {
  auto tag = op->getAttrOfType<DictionaryAttr>(kSparseProductAttr);
  auto kind = tag ? tag.getAs<StringAttr>(kSparseProductKind) : StringAttr();
  if (!kind) {
    why = "the fp4.sparse_product tag has no kind";
    return failure();
  }
  if (!op.hasPureBufferSemantics()) {
    why = "not on buffers (run after bufferization)";
    return failure();
  }
  auto block = [&](StringRef name) -> int64_t {
    auto attr = tag.getAs<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  bool sparseSparse = kind.getValue() == "sparse_sparse";
  bool denseSparse = kind.getValue() == "dense_sparse";
  if (!sparseSparse && !denseSparse && kind.getValue() != "sparse_dense") {
    why = ("unknown fp4.sparse_product kind '" + kind.getValue() + "'").str();
    return failure();
  }
  int64_t lhsBlock = block(kSparseProductLhsBlock),
          rhsBlock = block(kSparseProductRhsBlock);
  bool lhsSparse = !denseSparse, rhsSparse = denseSparse || sparseSparse;
  if ((lhsSparse && lhsBlock <= 0) || (rhsSparse && rhsBlock <= 0)) {
    why = "the fp4.sparse_product tag lacks a positive block size";
    return failure();
  }
  if (op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != (sparseSparse ? 3 : 2)) {
    why = "unexpected operand count for a tagged sparse product";
    return failure();
  }
  Value c = op.getDpsInitOperand(0)->get();
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!cType || !cType.getElementType().isF32() ||
      (cType.getRank() != 2 && cType.getRank() != 3)) {
    why = "the output is not a rank-2 or rank-3 f32 buffer";
    return failure();
  }
  bool batched = cType.getRank() == 3;
  Value values = op.getDpsInputOperand(0)->get();
  Value indices = op.getDpsInputOperand(1)->get();
  auto valuesType = dyn_cast<MemRefType>(values.getType());
  int64_t sparseRank = valuesType ? valuesType.getRank() : 0;
  if ((sparseRank != 3 && sparseRank != 4) ||
      !isMemRef(values, sparseRank, true) ||
      !isMemRef(indices, sparseRank, false) || (sparseRank == 4 && !batched)) {
    why = "the sparse operand is not f32 values and i8 indices "
          "[B?, R, K/B, k]";
    return failure();
  }
  SmallVector<Value> captured = capturedLoads(op);

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  // Built (a memref.dim when batched) only once a branch's checks passed,
  // so a failure leaves the function as it was.
  auto batchSize = [&]() -> OpFoldResult {
    return batched ? memref::getMixedSize(b, loc, c, 0)
                   : OpFoldResult(b.getIndexAttr(1));
  };
  auto sparseDims = [](int64_t rank) {
    return rank == 4 ? SmallVector<int>{0, 1, 2, 3}
                     : SmallVector<int>{-1, 0, 1, 2};
  };
  auto denseDims = [](int64_t rank) {
    return rank == 3 ? SmallVector<int>{0, 1, 2} : SmallVector<int>{-1, 0, 1};
  };
  Type f32 = b.getF32Type(), i8 = b.getI8Type(), i64 = b.getI64Type();
  auto module = op->getParentOfType<ModuleOp>();
  if (!sparseSparse) {
    if (captured.size() != 1) {
      why = "the body does not gather from exactly one dense buffer";
      return failure();
    }
    Value dense = captured.front();
    auto denseType = cast<MemRefType>(dense.getType());
    // sparse x dense: the dense rhs may be shared by every batch (rank 2);
    // dense x sparse: the dense lhs has the output's batch.
    bool denseOk = denseSparse ? isMemRef(dense, cType.getRank(), true)
                               : (isMemRef(dense, 2, true) ||
                                  (batched && isMemRef(dense, 3, true)));
    if (!denseOk || (!denseSparse && sparseRank != cType.getRank() + 1)) {
      why = "the gathered dense operand is not an f32 [B?, R, K] buffer";
      return failure();
    }
    OpFoldResult batch = batchSize();
    Value v = view(b, loc, values, sparseDims(sparseRank), batch);
    Value ix = view(b, loc, indices, sparseDims(sparseRank), batch);
    Value d = view(b, loc, dense, denseDims(denseType.getRank()), batch);
    // dense x sparse computes C^T[b, n, m] from the sparse rhs's rows.
    SmallVector<int> cDims =
        batched ? SmallVector<int>{0, 1, 2} : SmallVector<int>{-1, 0, 1};
    if (denseSparse)
      std::swap(cDims[1], cDims[2]);
    Value out = view(b, loc, c, cDims, batch);
    Value bs = arith::ConstantIntOp::create(b, loc, i64,
                                            denseSparse ? rhsBlock : lhsBlock);
    func::FuncOp fn = declareRuntimeFunction(
        module, kSparseDense,
        {stridedViewType(ctx, 4, f32), stridedViewType(ctx, 4, i8),
         stridedViewType(ctx, 3, f32), stridedViewType(ctx, 3, f32), i64});
    func::CallOp::create(b, loc, fn, ValueRange{v, ix, d, out, bs});
    op->erase();
    return success();
  }
  if (captured.size() != 2) {
    why = "the body does not gather from the rhs's values and indices";
    return failure();
  }
  Value rhsValues = captured[0], rhsIndices = captured[1];
  if (!isMemRef(rhsValues, 3, true) && !isMemRef(rhsValues, 4, true))
    std::swap(rhsValues, rhsIndices);
  int64_t rhsRank = cast<MemRefType>(rhsValues.getType()).getRank();
  if (!isMemRef(rhsValues, rhsRank, true) ||
      !isMemRef(rhsIndices, rhsRank, false) || (rhsRank != 3 && rhsRank != 4) ||
      (rhsRank == 4 && !batched) || sparseRank != cType.getRank() + 1) {
    why = "the gathered rhs is not f32 values and i8 indices [B?, N, K/B, k]";
    return failure();
  }
  OpFoldResult batch = batchSize();
  Value lv = view(b, loc, values, sparseDims(sparseRank), batch);
  Value li = view(b, loc, indices, sparseDims(sparseRank), batch);
  Value rv = view(b, loc, rhsValues, sparseDims(rhsRank), batch);
  Value ri = view(b, loc, rhsIndices, sparseDims(rhsRank), batch);
  Value out = view(
      b, loc, c,
      batched ? SmallVector<int>{0, 1, 2} : SmallVector<int>{-1, 0, 1}, batch);
  Value lb = arith::ConstantIntOp::create(b, loc, i64, lhsBlock);
  Value rb = arith::ConstantIntOp::create(b, loc, i64, rhsBlock);
  func::FuncOp fn = declareRuntimeFunction(
      module, kSparseSparse,
      {stridedViewType(ctx, 4, f32), stridedViewType(ctx, 4, i8),
       stridedViewType(ctx, 4, f32), stridedViewType(ctx, 4, i8),
       stridedViewType(ctx, 3, f32), i64, i64});
  func::CallOp::create(b, loc, fn, ValueRange{lv, li, rv, ri, out, lb, rb});
  op->erase();
  return success();
}
