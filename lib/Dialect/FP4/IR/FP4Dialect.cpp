//===- FP4Dialect.cpp - fp4 dialect registration --------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

#include "AttrVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fp4;

#include "fp4/Dialect/FP4/IR/FP4AttrInterfaces.cpp.inc"
#include "fp4/Dialect/FP4/IR/FP4Dialect.cpp.inc"
#include "fp4/Dialect/FP4/IR/FP4Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Attrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Types.cpp.inc"

void FP4Dialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "fp4/Dialect/FP4/IR/FP4Ops.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fp4/Dialect/FP4/IR/FP4RotationOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fp4/Dialect/FP4/IR/FP4CorrectionOps.cpp.inc"
      >();
}

void FP4Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fp4/Dialect/FP4/IR/FP4Attrs.cpp.inc"
      >();
}

void FP4Dialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "fp4/Dialect/FP4/IR/FP4Types.cpp.inc"
      >();
}

LogicalResult FP4Dialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == GPUConfigAttr::kAttrName)
    return detail::verifyGPUConfigAttrUse(op, attribute);
  if (name == LaunchPlanAttr::kAttrName || name == GPUManifestAttr::kAttrName)
    return detail::verifyLaunchPlanAttrUse(op, attribute);
  return success();
}
