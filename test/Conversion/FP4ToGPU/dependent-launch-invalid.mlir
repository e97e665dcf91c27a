// fp4-gpu-dependent-launch's diagnostics: a module without launch plans is
// left unchanged with a warning; kernels for a chip without griddepcontrol
// (sm_80) and an out-of-range prefetch-bytes are errors.
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -fp4-gpu-dependent-launch
// RUN: not fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_80" -fp4-gpu-dependent-launch -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch=prefetch-bytes=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch=prefetch-bytes=2147483648 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE

// CHIP: error: fp4-gpu-dependent-launch: the kernels target sm_80, which has no griddepcontrol (programmatic dependent launch needs sm_90 or newer)
// RANGE: error: fp4-gpu-dependent-launch: prefetch-bytes must be in [0, 2^30], got

// expected-warning @+1 {{fp4-gpu-dependent-launch: no launch plans (the module has no fp4.gpu_manifest; run convert-fp4-to-gpu first): nothing changed}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-warning @+1 {{fp4-gpu-dependent-launch: no launch plans}}
module {
  func.func @q(%x: tensor<2x64xbf16>) -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
    %q = fp4.quantize %x : tensor<2x64xbf16> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
    return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  }
}
