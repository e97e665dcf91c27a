// Bad options and chips are diagnostics naming the pass and the reason,
// never an LLVM crash in the NVPTX backend.
// An unknown chip or enum value fails at option parsing, listing the valid
// values (the chip table of ChipDescription.cpp).
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not fp4-opt %s -fp4-gpu-select-config="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not fp4-opt %s -convert-fp4-to-gpu="prefill-dequant=global" 2>&1 | FileCheck %s --check-prefix=DEQUANT
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="prefill-dequant=global" 2>&1 | FileCheck %s --check-prefix=DEQUANT
// RUN: not fp4-opt %s -convert-fp4-to-gpu="prefill-mma=mma_sync" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="prefill-residual=dense" 2>&1 | FileCheck %s --check-prefix=RESIDUAL
// RUN: not fp4-opt %s -convert-fp4-to-gpu="decode-outliers=epilogue" 2>&1 | FileCheck %s --check-prefix=OUTLIERS
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 prefill-mma=wgmma" 2>&1 | FileCheck %s --check-prefix=WGMMA90
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_80 prefill-mma=wgmma" 2>&1 | FileCheck %s --check-prefix=WGMMA80
// The image format is an enum too (GPUImageFormatOption), in the pipeline
// and in fp4-check-cuda-toolkit.
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="format=ptx" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not fp4-opt %s -fp4-check-cuda-toolkit="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT-CHECK
// Configurations beyond the chip's limits (ChipDescription).
// RUN: not fp4-opt %s -convert-fp4-to-gpu="prefill-warps-m=8 prefill-warps-n=8" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not fp4-opt %s -convert-fp4-to-gpu="decode-warps=16 decode-max-registers=255" 2>&1 | FileCheck %s --check-prefix=REGFILE
// RUN: not fp4-opt %s -fp4-gpu-select-config="decode-max-m=65" 2>&1 | FileCheck %s --check-prefix=MAXM
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_120a native-fp4=true" 2>&1 | FileCheck %s --check-prefix=NATIVE120
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 native-fp4=true" 2>&1 | FileCheck %s --check-prefix=NATIVE
// RUN: not fp4-opt %s -convert-fp4-to-gpu="decode-k-unroll=100" 2>&1 | FileCheck %s --check-prefix=UNROLL
// Options valid alone but not together (they crashed a fused recipe chain's
// lowering, which built its activation side before the decode kernel
// refused them).
// RUN: not fp4-opt %s -convert-fp4-to-gpu="decode-warps=3 decode-rows-per-cta=32" 2>&1 | FileCheck %s --check-prefix=ROWWARPS
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 decode-warps=2 decode-rows-per-cta=64" 2>&1 | FileCheck %s --check-prefix=ROWWARPS2
// RUN: not fp4-opt %s -convert-fp4-to-gpu="prefill-stages=9" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 decode-prefetch=3" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_100a native-fp4=true" 2>&1 | FileCheck %s --check-prefix=NATIVE100
// RUN: not fp4-opt %s -fp4-pipeline-nvvm="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=PIPE

module {
  func.func @f(%a: tensor<1x32xbf16>) -> tensor<1x32xbf16> {
    return %a : tensor<1x32xbf16>
  }
}

// NATIVE: native-fp4 requested for sm_90, which has no FP4 conversion or block-scaled MMA instructions
// UNROLL: convert-fp4-to-gpu: option decode-k-unroll=100 is out of range (128..1024, a multiple of 128)
// ROWWARPS: convert-fp4-to-gpu: option decode-warps=3 is not a multiple of the 2 row groups of decode-rows-per-cta=32 (16 weight rows each)
// ROWWARPS2: convert-fp4-to-gpu: option decode-warps=2 is not a multiple of the 4 row groups of decode-rows-per-cta=64 (16 weight rows each)
// STAGES: convert-fp4-to-gpu: option prefill-stages=9 is out of range (2..6)
// PREFETCH: convert-fp4-to-gpu: option decode-prefetch=3 is out of range (0..2)
// NATIVE100: native-fp4 kernels for sm_100a are not available in this version
// PIPE: invalid options for pipeline 'fp4-pipeline-nvvm' (`chip=sm_75`): for the --chip option: 'sm_75' is not a valid value; valid: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120a
// CHIP: for the --chip option: 'sm_75' is not a valid value; valid: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120a
// DEQUANT: for the --prefill-dequant option: 'global' is not a valid value; valid: shared, registers
// MMA: for the --prefill-mma option: 'mma_sync' is not a valid value; valid: sync, wgmma
// RESIDUAL: for the --prefill-residual option: 'dense' is not a valid value; valid: sparse, rows
// OUTLIERS: for the --decode-outliers option: 'epilogue' is not a valid value; valid: loop, tail, tile
// WGMMA90: convert-fp4-to-gpu: the options give gpu_config #fp4.gpu_config<family = prefill, mma = wgmma>: mma = wgmma needs a chip with warp-group MMA (sm_90a); sm_90 has none
// WGMMA80: convert-fp4-to-gpu: the options give gpu_config #fp4.gpu_config<family = prefill, mma = wgmma>: mma = wgmma needs a chip with warp-group MMA (sm_90a); sm_80 has none
// FORMAT: invalid options for pipeline 'fp4-pipeline-nvvm' (`format=ptx`): for the --format option: 'ptx' is not a valid value; valid: isa, bin, fatbin
// FORMAT-CHECK: for the --format option: 'cubin' is not a valid value; valid: isa, bin, fatbin
// THREADS: convert-fp4-to-gpu: the options give gpu_config #fp4.gpu_config<family = prefill, warps_m = 8, warps_n = 8> needs 2048 threads per block; sm_90 has at most 1024
// REGFILE: convert-fp4-to-gpu: the options give gpu_config #fp4.gpu_config<family = decode, warps = 16, max_registers = 255>: 512 threads x 255 registers exceed sm_90's register file of 65536 per SM
// MAXM: fp4-gpu-select-config: option decode-max-m=65 is out of range (0..64)
// NATIVE120: convert-fp4-to-gpu: native-fp4 kernels for sm_120a are not available in this version (not implemented for chip sm_120a: block-scaled FP4 MMA)
