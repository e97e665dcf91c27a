//===- PanelKernelAVX2.cpp - the contraction panel kernel, avx2 -------------===//
//
// PanelKernel.inc compiled for avx2 (see lib/Runtime/CPU/CMakeLists.txt for
// the flags); chosen at run time by ContractionRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#define FP4_PANEL_VECTOR_BYTES 32
#define FP4_PANEL_KERNEL_NAME panelKernelAVX2
#define FP4_PANEL_ISA "avx2"
#include "PanelKernel.inc"
