//===- FP4GPUConfigAttr.td - GPU kernel configuration ------*- tablegen -*-===//
//
// #fp4.gpu_config: which kernel family lowers an op on the GPU and with which
// tile parameters. convert-fp4-to-gpu (or fp4-gpu-select-config) attaches one
// per op as the discardable attribute `fp4.gpu_config`, chosen from the chip
// description (include/fp4/Conversion/FP4ToGPU/ChipDescription.h); a config
// already on the op is honoured, so users and searches can set it.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4GPUCONFIGATTR_TD
#define FP4_DIALECT_FP4_IR_FP4GPUCONFIGATTR_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"

def FP4_GPUKernelFamily : I32EnumAttr<"GPUKernelFamily",
    "GPU kernel family of an fp4 op", [
      I32EnumAttrCase<"Decode", 0, "decode">,
      I32EnumAttrCase<"Prefill", 1, "prefill">,
      I32EnumAttrCase<"Reference", 2, "reference">,
      I32EnumAttrCase<"Elementwise", 3, "elementwise">
    ]> {
  let cppNamespace = "::mlir::fp4";
  let genSpecializedAttr = 0;
}

def FP4_GPUPrefillDequant : I32EnumAttr<"GPUPrefillDequant",
    "where the prefill kernels turn FP4 codes into bf16", [
      I32EnumAttrCase<"Shared", 0, "shared">,
      I32EnumAttrCase<"Registers", 1, "registers">
    ]> {
  let cppNamespace = "::mlir::fp4";
  let genSpecializedAttr = 0;
}

def FP4_GPUPrefillMMA : I32EnumAttr<"GPUPrefillMMA",
    "which tensor-core instruction the prefill kernels issue", [
      I32EnumAttrCase<"Sync", 0, "sync">,
      I32EnumAttrCase<"WGMMA", 1, "wgmma">
    ]> {
  let cppNamespace = "::mlir::fp4";
  let genSpecializedAttr = 0;
}

def FP4_GPUConfigAttr : FP4_Attr<"GPUConfig", "gpu_config"> {
  let summary = "Kernel family and tile parameters of one op's GPU lowering";
  let description = [{
    The GPU kernel configuration of one `fp4.matmul`, `fp4.quantize` or
    `fp4.dequantize` (docs/GPU.md). `family` picks the kernel family; the
    other parameters belong to one family each and keep their default
    (and are not printed) otherwise:

    - `decode` (memory-bound matmul, small M): `warps` (CTA warps, they
      split K; 0: from the shape; 0..16), `k_unroll` (K per warp and
      iteration, a multiple of 128 in 128..1024), `rows_per_cta` (0: from
      the shape, else a multiple of 16 up to 256), `split_k` (0..64; 0 and
      1: none), `prefetch` (0..2 iterations), `max_registers` (0: no cap,
      else 32..255), `mma` (`sync`: mma.sync per warp; `wgmma`: sm_90a's
      warp-group MMA, the dequantized weights as the register A operand
      of 64-row warp groups and the activations staged in shared memory).
    - `prefill` (tensor-core matmul): `tile_m` (16..256, multiple of 16),
      `tile_n` (8..256, multiple of 8), `tile_k` (32..256, multiple of
      32), `warps_m` and `warps_n` (1..8 each), `stages` (2..6),
      `dequant` (`shared` or `registers`), `mma` (`sync`: mma.sync per
      warp; `wgmma`: sm_90a's warp-group MMA for the shared form's dense
      products, where the tile has 64-row warp groups; the selection
      picks it on chips that have it).
    - `reference` (one thread per output, any shape): no parameters.
    - `elementwise` (quantize / dequantize): `threads` (32..1024, a
      multiple of 32).

    Limits of a chip (threads per block, registers, shared memory) are
    checked against the chip description when the config is used.

    ```mlir
    #fp4.gpu_config<family = decode, k_unroll = 512, split_k = 2>
    #fp4.gpu_config<family = prefill, tile_m = 64, stages = 4, dequant = registers>
    #fp4.gpu_config<family = elementwise, threads = 128>
    ```
  }];
  let parameters = (ins
    EnumParameter<FP4_GPUKernelFamily>:$family,
    DefaultValuedParameter<"int64_t", "0">:$warps,
    DefaultValuedParameter<"int64_t", "256">:$k_unroll,
    DefaultValuedParameter<"int64_t", "0">:$rows_per_cta,
    DefaultValuedParameter<"int64_t", "0">:$split_k,
    DefaultValuedParameter<"int64_t", "0">:$prefetch,
    DefaultValuedParameter<"int64_t", "0">:$max_registers,
    DefaultValuedParameter<"int64_t", "128">:$tile_m,
    DefaultValuedParameter<"int64_t", "128">:$tile_n,
    DefaultValuedParameter<"int64_t", "64">:$tile_k,
    DefaultValuedParameter<"int64_t", "2">:$warps_m,
    DefaultValuedParameter<"int64_t", "4">:$warps_n,
    DefaultValuedParameter<"int64_t", "3">:$stages,
    DefaultValuedParameter<"::mlir::fp4::GPUPrefillDequant",
                           "::mlir::fp4::GPUPrefillDequant::Shared">:$dequant,
    DefaultValuedParameter<"::mlir::fp4::GPUPrefillMMA",
                           "::mlir::fp4::GPUPrefillMMA::Sync">:$mma,
    DefaultValuedParameter<"int64_t", "256">:$threads);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The range rule of the integer parameter `key` (e.g. "k_unroll"), the
    /// one specification the verifier and the pass options share; nullptr
    /// for an unknown key.
    struct ParameterRange {
      ::llvm::StringLiteral key;
      ::mlir::fp4::GPUKernelFamily family;
      int64_t lo, hi, multiple;
      /// 0 is also accepted (meaning "from the shape" / "none").
      bool zeroAllowed;
    };
    static const ParameterRange *lookupParameterRange(::llvm::StringRef key);
    /// Checks `value` against the range of `key`; on failure emits
    /// "<what>=<value> is out of range (<lo>..<hi>[, a multiple of M])".
    static ::llvm::LogicalResult checkParameter(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::llvm::StringRef key, int64_t value, ::llvm::StringRef what);
    /// Checks that the decode CTA's row groups (`rowsPerCta` / 16) divide
    /// its `warps` where both are set (non-zero); on failure emits
    /// "<warpsWhat>=<warps> is not a multiple of the <g> row groups of
    /// <rowsWhat>=<rowsPerCta> ...".
    static ::llvm::LogicalResult checkDecodeWarps(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::llvm::StringRef warpsWhat, int64_t warps, ::llvm::StringRef rowsWhat,
        int64_t rowsPerCta);
    /// Name of the discardable attribute carrying the config on an op.
    static constexpr ::llvm::StringLiteral kAttrName = "fp4.gpu_config";
  }];
}

#endif // FP4_DIALECT_FP4_IR_FP4GPUCONFIGATTR_TD
