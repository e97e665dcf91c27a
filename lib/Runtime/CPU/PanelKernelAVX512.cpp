//===- PanelKernelAVX512.cpp - the contraction panel kernel, avx512f -------------===//
//
// PanelKernel.inc compiled for avx512f (see lib/Runtime/CPU/CMakeLists.txt for
// the flags); chosen at run time by ContractionRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#define FP4_PANEL_VECTOR_BYTES 64
#define FP4_PANEL_KERNEL_NAME panelKernelAVX512
#define FP4_PANEL_ISA "avx512f"
#include "PanelKernel.inc"
