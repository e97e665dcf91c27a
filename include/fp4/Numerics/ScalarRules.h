//===- ScalarRules.h - All generic scalar numerics rules --------*- C++ -*-===//
//
// Umbrella header: every scalar rule of numerics.md, each written once as a
// template over an arithmetic backend (OpsConcept.h). Instantiate with
// ScalarOps (C++) or the dialect's ArithOps (IR).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_SCALARRULES_H
#define FP4_NUMERICS_SCALARRULES_H

#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/E4M3.h"
#include "fp4/Numerics/E8M0.h"
#include "fp4/Numerics/F32Bits.h"
#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/NVFP4.h"
#include "fp4/Numerics/OpsConcept.h"
#include "fp4/Numerics/RoundingModes.h"

#endif // FP4_NUMERICS_SCALARRULES_H
