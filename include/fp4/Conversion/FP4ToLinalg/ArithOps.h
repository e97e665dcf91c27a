//===- ArithOps.h - moved to fp4/Numerics/IR/ArithOps.h ---------*- C++ -*-===//
//
// ArithOps now lives in the FP4NumericsIR library below both lowerings;
// this forwarding header keeps branches written against the old path
// building until they switch their include.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
