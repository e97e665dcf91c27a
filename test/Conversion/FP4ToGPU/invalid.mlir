// Bad options and chips are diagnostics naming the pass and the reason,
// never an LLVM crash in the NVPTX backend.
// RUN: fp4-opt %s -verify-diagnostics -convert-fp4-to-gpu="chip=sm_75"
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 native-fp4=true" 2>&1 | FileCheck %s --check-prefix=NATIVE
// RUN: not fp4-opt %s -convert-fp4-to-gpu="decode-k-unroll=100" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not fp4-opt %s -convert-fp4-to-gpu="prefill-stages=9" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 decode-prefetch=3" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_100a native-fp4=true" 2>&1 | FileCheck %s --check-prefix=NATIVE100
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=PIPE

// expected-error @below {{convert-fp4-to-gpu: unsupported chip 'sm_75': the kernels need bf16 mma.sync (sm_80 or newer)}}
module {
  func.func @f(%a: tensor<1x32xbf16>) -> tensor<1x32xbf16> {
    return %a : tensor<1x32xbf16>
  }
}

// NATIVE: native-fp4 requested for sm_90, which has no FP4 conversion or block-scaled MMA instructions
// UNROLL: convert-fp4-to-gpu: option decode-k-unroll=100 is out of range (128..1024, a multiple of 128)
// STAGES: convert-fp4-to-gpu: option prefill-stages=9 is out of range (2..6)
// PREFETCH: convert-fp4-to-gpu: option decode-prefetch=3 is out of range (0..2)
// NATIVE100: native-fp4 kernels for sm_100a are not available in this version
// PIPE: convert-fp4-to-gpu: unsupported chip 'sm_75'
