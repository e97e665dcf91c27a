//===- PanelKernelGeneric.cpp - the contraction panel kernel, generic -------------===//
//
// PanelKernel.inc compiled for generic (see lib/Runtime/CPU/CMakeLists.txt for
// the flags); chosen at run time by ContractionRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#define FP4_PANEL_VECTOR_BYTES 16
#define FP4_PANEL_KERNEL_NAME panelKernelGeneric
#define FP4_PANEL_ISA "generic"
#include "PanelKernel.inc"
