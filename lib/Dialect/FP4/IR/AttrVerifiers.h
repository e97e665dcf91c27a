//===- AttrVerifiers.h - checks of the dialect's discardable attributes ---===//
//
// FP4Dialect::verifyOperationAttribute dispatches on the attribute name to
// the file that defines the attribute; the custom directives of the
// generated attribute parsers live with their attribute too.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_IR_ATTRVERIFIERS_H
#define FP4_LIB_DIALECT_FP4_IR_ATTRVERIFIERS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Operation.h"

namespace mlir::fp4 {

/// custom<LaunchBuffers> of #fp4.launch_plan: `[` ("name" `:` memref),* `]`
/// (LaunchPlanAttr.cpp).
ParseResult parseLaunchBuffers(AsmParser &parser,
                               SmallVector<LaunchBufferAttr> &buffers);
void printLaunchBuffers(AsmPrinter &printer,
                        ArrayRef<LaunchBufferAttr> buffers);

} // namespace mlir::fp4

namespace mlir::fp4::detail {

/// `fp4.gpu_config` on an fp4 op (GPUConfigAttr.cpp).
LogicalResult verifyGPUConfigAttrUse(Operation *op, NamedAttribute attribute);

/// `fp4.launch_plan` on a launch function, `fp4.gpu_manifest` on a module
/// (LaunchPlanAttr.cpp).
LogicalResult verifyLaunchPlanAttrUse(Operation *op, NamedAttribute attribute);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_IR_ATTRVERIFIERS_H
