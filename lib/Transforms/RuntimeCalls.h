//===- RuntimeCalls.h - rewrites onto libfp4_cpu_runtime --------*- C++ -*-===//
//
// Pieces of fp4-contraction-to-runtime-call, one file per kernel family.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_TRANSFORMS_RUNTIMECALLS_H
#define FP4_LIB_TRANSFORMS_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace mlir::fp4::detail {

/// memref<?x...x?xelement, strided<[?, ...], offset: ?>> of `rank`: the
/// view type every runtime entry point takes (its C interface receives a
/// StridedMemRefType descriptor, whatever the buffer's own layout).
MemRefType stridedViewType(MLIRContext *ctx, int64_t rank, Type element);

/// The private declaration of runtime function `name` (declared at the top
/// of `module` on first use), with `llvm.emit_c_interface`: the runtime
/// defines `_mlir_ciface_<name>` taking descriptor pointers.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange args);

/// Replaces `op`, a linalg.generic on buffers tagged fp4.sparse_product by
/// convert-fp4-to-linalg, by a call to the runtime's sparse kernel for its
/// kind (declared in the module on first use) and erases it. Fails, with
/// the reason in `why` and `op` untouched, when its operands no longer
/// have the form the tag describes.
LogicalResult replaceSparseProductByCall(linalg::GenericOp op,
                                         std::string &why);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_TRANSFORMS_RUNTIMECALLS_H
