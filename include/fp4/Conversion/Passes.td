//===- Passes.td - fp4 conversion passes -------------------*- tablegen -*-===//

#ifndef FP4_CONVERSION_PASSES_TD
#define FP4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFP4ToLinalg : Pass<"convert-fp4-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower fp4 ops to linalg/arith on packed codes and scales";
  let description = [{
    The CPU reference lowering. Every `!fp4.tensor` becomes its component
    tensors (docs/ABI.md) through a 1:N type conversion that also rewrites
    function signatures, calls, returns, branches and `scf.for/if/while`
    carrying quantized values. Every fp4 op becomes `linalg.generic`s on
    tensors whose bodies are the project's scalar rules (fp4/Numerics)
    emitted as arith ops through `ArithOps`, bit for bit the computation the
    C++ reference and the constant folder run:

    - `fp4.quantize`: the blocked axis is moved last (`linalg.transpose`),
      split into blocks (`tensor.expand_shape`), block maxima are NaN
      propagating reductions, scale bytes an elementwise generic, and codes
      a generic over `[..., blocks, block/2, 2]` that packs the pair
      dimension into one i8 (lower index in the low nibble). The format
      specific part comes from the scheme attribute's
      `SchemeLoweringAttrInterface` model (one per format), never from a
      format switch. Stochastic rounding keys the counter-based generator
      with each element's linear index in the logical row-major tensor.
    - `fp4.dequantize`: the mirror image; bf16/f16 results are rounded to
      nearest even from f32.
    - `fp4.matmul`: quantized operands are dequantized to f32, float
      operands extended exactly, then a contraction generic (rhs indexed
      transposed, a rank-2 rhs broadcast over the batch) accumulates into a
      zero-filled f32 tensor; the sum is rounded once to the result type.
    - `fp4.pack` / `fp4.unpack`: the identity on components.

    Dynamic non-axis dimensions are supported. An op outside the ones above
    that takes or produces a quantized value (e.g. `arith.select` on
    `!fp4.tensor`) is reported as an error naming the op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect"
  ];
}

def ConvertFP4ToGPU : Pass<"convert-fp4-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower fp4 ops to GPU kernels plus host launch code";
  let description = [{
    Turns every `fp4.matmul`, `fp4.quantize` (fused with a producing
    `fp4.rotate`) and `fp4.dequantize` on static rank-2 shapes into a kernel
    in the `gpu.module` named by `kernel-module` and, in its place, host code
    that copies the operands' buffers to the device (`gpu.alloc` +
    `gpu.memcpy`), launches the kernel(s) (`gpu.launch_func`), copies the
    result back and frees the device buffers, all on one async token chain
    ending in `gpu.wait`. That host code lives in a private launch function
    per op (`@<kernel>_launch`, memref arguments: inputs then outputs) that
    the op site calls between `bufferization.to_buffer` and
    `bufferization.to_tensor`; the pass only declares it, with its typed
    launch plan `#fp4.launch_plan` (attribute `fp4.launch_plan`: buffers,
    scratch buffers, kernel launches), and `fp4-gpu-materialize-launches`
    fills in its body
    after bufferization, because buffer deallocation cannot analyze the gpu
    async ops. Quantized operands are passed as their component
    buffers (`fp4.unpack`/`fp4.pack` on the host side, docs/ABI.md), so the
    rest of the module is untouched and `fp4-pipeline-nvvm` lowers it like
    the CPU pipeline does.

    Kernels (docs/GPU.md): each op's kernel follows its kernel
    configuration `#fp4.gpu_config`: the op's own `fp4.gpu_config`
    attribute when it has one (set by a user, a search or
    `fp4-gpu-select-config`), else the one the selection step chooses from
    the chip description (include/fp4/Conversion/FP4ToGPU/
    ChipDescription.h) and the shape: matmuls with `M <= decode-max-m` use
    the memory-bound decode family, larger ones the tensor-core prefill
    family (bf16 `mma.sync` after dequantizing FP4 operands in registers /
    shared memory: sm_90 has no FP4 tensor cores; on sm_90a the config's
    `mma = wgmma` issues the shared form's products as `wgmma.mma_async`
    where the tile has 64-row warp groups), whose medium class (M up
    to the chip's 128) steps K by 128 and up to 64 rows takes tiles of
    roundUp(M, 16) rows (the 16-row tile's mma steps split over two K
    groups of warps), as far as the chip's shared memory holds them;
    quantize / dequantize the elementwise family; the options below
    override the chip's choices (a prefill tile option turns the medium
    class off). Shapes or schemes a family declines fall back to a simple
    reference kernel (variant `reference`), with a remark saying why.

    The chip and kernel options (`chip`, `native-fp4`, `decode-*`,
    `prefill-*`, `elementwise-threads`) are declared once, in
    include/fp4/Conversion/FP4ToGPU/GPUConfigOptions.h, and shared with
    `fp4-gpu-select-config` and `fp4-pipeline-nvvm`; `fp4-opt --help` lists
    them.
    Every kernel is specialized to its static shapes. The launch plans of
    all ops and the chip are recorded in the module attribute
    `fp4.gpu_manifest` (`#fp4.gpu_manifest`), from which
    `fp4-export-gpu-kernels` derives kernels.json, the manifest used by
    `fp4.gpu` in Python.

    The pass applies the public patterns of
    `populateFP4ToGPUConversionPatterns` (include/fp4/Conversion/FP4ToGPU/
    FP4ToGPU.h), one per op kind, once per op in program order. Ops the
    patterns decline (dynamic shapes, rank other than 2, axis not last,
    empty dimensions, forms no kernel family takes) stay on the host and are
    lowered by the CPU path; each gets a remark saying why (the pattern's
    match failure reason), unless `remarks=false`. The accuracy recipes'
    correction products lower as one fused plan per chain of terms
    (docs/GPU.md); a chain that stays on the GPU but runs term by term
    because its block-sparse weight part at prefill sizes cannot join the
    product (not provably disjoint from the quantized weight, or not taken
    by the prefill kernel's configuration), or a decode-sized chain whose
    fused plan the decode kernel declines (asked before anything is built),
    gets a remark saying why at its first product. A decode-sized chain
    with correction terms from the chip's `correctionPrefillMinM` rows (9)
    runs on the prefill kernel's medium class when that kernel takes it,
    unless `decode-max-m` is given, or unless its stacked rows run on the
    decode kernel's warp-group form (sm_90a): chains without weight
    outliers by default, those with them under `decode-mma=wgmma`, and
    those whose weight outliers are proven to sit on +-0 weights under
    `decode-outliers=tile|patch|sparse|packed` and by default from 9
    stacked rows: with at most 2 entries per 32-element unit by default
    each lane replaces their elements in its own dequantized register
    fragments (`patch`; above 16 rows with 128 weight rows per CTA), with
    more they are written into that form's shared weight tile (`tile`, by
    default above 16 rows); `packed` patches constant ones (what
    `fp4-fold-constants` leaves) loaded from a compile-time packing, by
    default for exactly 2 per unit, on 64 weight rows per CTA, and
    `sparse` multiplies them on the sparse tensor cores (under either
    option others keep the patch, with a remark); under any of them an
    unproven chain keeps the default plan, with a remark.
    The warp-group form loads the next group's weight words one iteration
    ahead by default (`decode-prefetch=1`).
    At prefill sizes on the wgmma form all of a chain's activation row
    groups (the 2:4 residual densified) go into one product's accumulators;
    otherwise (or with `prefill-residual=sparse`) a chain's 2:4 activation
    residual runs on sparse tensor cores inside the one prefill kernel
    (`mma.sp`, or `wgmma.mma_async.sp` on the wgmma form); where neither
    runs (K not a multiple of 32, a chip targeting PTX below 8.5, the
    register form of the prefill kernel) the residual stays a stacked dense
    row group, with a remark saying why. The format-specific parts
    of the kernels come from each scheme's SchemeGPULoweringAttrInterface
    model. An unknown chip or enum value fails at option parsing with the
    valid values; `native-fp4` on a chip without FP4 instructions (or where
    the native kernels are not implemented), an option out of range or a
    configuration beyond the chip's limits is an error.
  }];
  let options = [
    Option<"kernelModule", "kernel-module", "std::string",
           /*default=*/"\"fp4_kernels\"", "Name of the generated gpu.module">,
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark 'stays on the host: <reason>' for every op the "
           "patterns decline, one for a recipe chain that runs term by "
           "term instead of fused, one for a prefill 2:4 residual that "
           "stays stacked dense rows instead of sparse tensor cores, and one "
           "for a matmul that falls back to the reference kernel">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::fp4::FP4Dialect", "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FP4GPUSelectConfig : Pass<"fp4-gpu-select-config", "::mlir::ModuleOp"> {
  let summary = "Attach the kernel configuration each fp4 op gets on the GPU";
  let description = [{
    The selection step of `convert-fp4-to-gpu`, as a pass of its own: gives
    every `fp4.matmul`, `fp4.quantize` and `fp4.dequantize` without one an
    `fp4.gpu_config` attribute (`#fp4.gpu_config<...>`) chosen from the
    chip description and the op's shape, the options overriding the chip's
    defaults (the same options as `convert-fp4-to-gpu`, declared once in
    GPUConfigOptions.h). A config already present is kept and checked
    against the chip's limits. `convert-fp4-to-gpu` honours the attached
    configs, so a search or a user can edit them in between.
  }];
  let dependentDialects = ["::mlir::fp4::FP4Dialect"];
}

def FP4MaterializeGPULaunches
    : Pass<"fp4-gpu-materialize-launches", "::mlir::ModuleOp"> {
  let summary = "Give the launch functions of convert-fp4-to-gpu their body";
  let description = [{
    For every function declaration carrying a launch plan
    (`fp4.launch_plan = #fp4.launch_plan<...>`, created by
    `convert-fp4-to-gpu`; the dialect verifier has checked it against the
    function type), builds the body and removes the plan (the module's
    `fp4.gpu_manifest` keeps it for the export): on one async token chain, a
    device buffer per argument (inputs copied in), zero-filled scratch
    buffers, the kernel launches in order, the outputs copied back into the
    output arguments, every device buffer freed, and a final `gpu.wait`.
    Runs after one-shot bufferization and buffer deallocation
    (fp4-pipeline-nvvm does this).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def FP4GPUDependentLaunch
    : Pass<"fp4-gpu-dependent-launch", "::mlir::ModuleOp"> {
  let summary = "Let each kernel start while the previous one of its stream "
                "finishes (programmatic dependent launch, sm_90+)";
  let description = [{
    Runs after `convert-fp4-to-gpu`. Every kernel of the module's launch
    plans starts with `griddepcontrol.launch_dependents` (the next launch
    of the stream may start now) and `griddepcontrol.wait` (nothing is
    read before the previous launch has finished and its writes are
    visible), and every launch is marked `dependent = true` in the plans
    and the manifest, so `fp4.gpu.load`'s launcher launches it with a
    programmatic stream serialization. Between the two, the kernel
    prefetches into L2 its large read-only arguments (static size of at
    least 1 MiB: the weight parts of a product), each CTA its proportional
    share of each (the same leading fraction of every share where they
    exceed `prefetch-bytes` in all), one 128-byte line per thread and
    step, when `prefetch-bytes` allows (0 by default: on the H200 the
    prefetch made every timed case slower, session 18, docs/Performance.md).
    A prefetch cannot make a result wrong: L2 is where the GPU's writes
    meet, so a line prefetched before the previous kernel writes it is
    updated there.

    Why: at decode the activation prep (or quantizer) and the matmul are
    two launches of a few microseconds of latency each, and the matmul's
    time is its weight bytes; overlapping the first with the second's
    streaming is what is left of the fixed cost (docs/GPU.md, "Dependent
    launch"). A launcher that launches the kernels without the attribute
    (the host path of `fp4-pipeline-nvvm`: `gpu.launch_func`) runs them
    exactly as before: `griddepcontrol.wait` returns at once when nothing
    is in flight.

    Needs a chip with `griddepcontrol` (sm_90 or newer): on an older chip
    of the manifest the pass fails with a diagnostic. A module without
    launch plans is left unchanged, with a warning.
  }];
  let options = [
    Option<"prefetchBytes", "prefetch-bytes", "int64_t",
           /*default=*/"0",
           "At most this many bytes of each kernel's large read-only "
           "arguments prefetched into L2 before the wait (0, the default: "
           "none; at most 2^30)">
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels made dependent">,
    Statistic<"numPrefetching", "prefetching-kernels",
              "Kernels prefetching an argument before the wait">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect"
  ];
}

def FP4ExportGPUKernels : Pass<"fp4-export-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Write the GPU kernel images and their launch manifest";
  let description = [{
    Runs after `gpu-module-to-binary`: writes each `gpu.binary` object of the
    module into `dir` (`<binary>.ptx` for `format=isa`, `<binary>.cubin` for
    `bin`, `<binary>.fatbin` for `fatbin`) and `dir/kernels.json`, derived
    from the typed manifest `#fp4.gpu_manifest` (module attribute
    `fp4.gpu_manifest`) that `convert-fp4-to-gpu` records: for every kernel
    launch of every launch plan its name, image file, op, variant, grid,
    block, dynamic shared memory and arguments (name, dtype, shape, whether
    scratch). The Python launcher `fp4.gpu.load(dir)` reads it
    (docs/GPU.md). The manifest is consumed: the pass removes it, also
    when `dir` is empty (then nothing is written), so the module keeps no
    fp4 attribute and translates with upstream's `mlir-translate`;
    `fp4-pipeline-nvvm` always runs it last.
  }];
  let options = [
    Option<"dir", "dir", "std::string", /*default=*/"\"\"",
           "Directory to write (created if missing); empty: write nothing, "
           "only drop the manifest">
  ];
}

def FP4CheckCUDAToolkit : Pass<"fp4-check-cuda-toolkit", "::mlir::ModuleOp"> {
  let summary = "Report a missing ptxas, fatbinary or libdevice in one line";
  let description = [{
    `gpu-module-to-binary` with `format=bin` runs `ptxas` (and `fatbinary`
    for `format=fatbin`) from `<toolkit>/bin`, else from `PATH`, and links
    `<toolkit>/nvvm/libdevice/libdevice.10.bc` into kernels that call CUDA's
    math functions (`__nv_*`) in every format. Without them it reports an
    error that prints the whole kernel module (for a missing libdevice it
    even continues, leaving unresolved calls in the PTX).
    `fp4-pipeline-nvvm` runs this pass just before it: when the module has a
    `gpu.module` and something it needs is missing, it emits one error
    naming the tool or file, where it was looked for (and whether
    `cuda-path`, `$CUDA_ROOT`, `$CUDA_HOME`, `$CUDA_PATH` or the default
    `/usr/local/cuda` chose the toolkit) and how to point at a toolkit. The
    IR is not changed.
  }];
  let options = [
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "CUDA toolkit directory (empty: $CUDA_ROOT, $CUDA_HOME, "
           "$CUDA_PATH, then /usr/local/cuda)">
  ];
}

#endif // FP4_CONVERSION_PASSES_TD
