//===- FP4LaunchPlanAttr.td - GPU launch plans -------------*- tablegen -*-===//
//
// What convert-fp4-to-gpu decides for the host side of one op, as typed
// attributes: the buffers of the op's launch function, the scratch buffers
// and the kernel launches in order (#fp4.launch_plan, on the launch function
// as `fp4.launch_plan`, turned into host code by
// fp4-gpu-materialize-launches), and the module's list of plans with the chip
// (#fp4.gpu_manifest, module attribute `fp4.gpu_manifest`) from which
// fp4-export-gpu-kernels derives kernels.json. Typed, so a plan that names
// a buffer it does not have, or a launch with two grid extents, is a
// verifier error where it is made, not a crash or a wrong launch later.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4LAUNCHPLANATTR_TD
#define FP4_DIALECT_FP4_IR_FP4LAUNCHPLANATTR_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"

// A name as a plain string: the attribute parser would read `"name" : type`
// as a typed string attribute.
def FP4_BufferNameParameter : AttrParameter<"::mlir::StringAttr", "buffer name"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::mlir::StringAttr> {
    std::string name;
    if ($_parser.parseString(&name))
      return ::mlir::failure();
    return ::mlir::StringAttr::get($_parser.getContext(), name);
  }() }];
  let printer = [{ $_printer << $_self }];
}

def FP4_LaunchBufferAttr : FP4_Attr<"LaunchBuffer", "launch_buffer"> {
  let summary = "A named device buffer of a launch plan";
  let description = [{
    One buffer of a launch plan: its manifest name (docs/ABI.md: `lhs`,
    `rhs.codes`, `result.scales`, `partials`, ...) and its type, a static
    memref with the identity layout whose element type the manifest can
    name (bf16, f16, f32, i8, i32: `bfloat16`, `float16`, `float32`,
    `uint8`, `int32` in kernels.json).

    ```mlir
    #fp4.launch_buffer<"rhs.codes" : memref<40x128xi8>>
    ```
  }];
  let parameters = (ins FP4_BufferNameParameter:$name,
                        "::mlir::MemRefType":$type);
  let assemblyFormat = "`<` $name `:` $type `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The kernels.json dtype of an element type ("bfloat16", "uint8",
    /// ...); empty for one the manifest cannot name.
    static ::llvm::StringRef getManifestDType(::mlir::Type elementType);
  }];
}

def FP4_KernelLaunchAttr : FP4_Attr<"KernelLaunch", "kernel_launch"> {
  let summary = "One kernel launch of a launch plan";
  let description = [{
    A launch of the kernel `kernel` (`@<gpu.module>::@<gpu.func>`) with a
    three-dimensional `grid` and `block`, `shared_bytes` of dynamic shared
    memory and the plan's buffers `args` as its arguments, in order.
    `variant` names the kernel family and variant for the manifest (e.g.
    `decode_w4a16`, `prefill_w4a4`, `reference`). `dependent = true`
    (fp4-gpu-dependent-launch) says the kernel may start before the
    previous launch of its stream has finished (a programmatic dependent
    launch, sm_90+): it waits (`griddepcontrol.wait`) before it reads
    anything, so a launcher that cannot launch it that way loses nothing
    but the overlap.

    ```mlir
    #fp4.kernel_launch<@fp4_kernels::@fp4_matmul_0, variant = "decode_w4a16",
                       grid = [3, 1, 1], block = [128, 1, 1], shared_bytes = 0,
                       args = ["lhs", "rhs.codes", "rhs.scales", "result"]>
    ```
  }];
  let parameters = (ins "::mlir::SymbolRefAttr":$kernel,
                        StringRefParameter<"kernel family and variant">:$variant,
                        ArrayRefParameter<"int64_t", "grid extents (x, y, z)">:$grid,
                        ArrayRefParameter<"int64_t", "block extents (x, y, z)">:$block,
                        "int64_t":$shared_bytes,
                        ArrayRefParameter<"::mlir::StringAttr", "buffer names">:$args,
                        DefaultValuedParameter<"bool", "false",
                            "launched with a programmatic dependency on the "
                            "previous launch of its stream">:$dependent);
  let assemblyFormat = [{
    `<` $kernel `,` `variant` `=` $variant `,` `grid` `=` `[` $grid `]` `,`
    `block` `=` `[` $block `]` `,` `shared_bytes` `=` $shared_bytes `,`
    `args` `=` `[` $args `]` (`,` `dependent` `=` $dependent^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The gpu.module holding the kernel (the root of `kernel`).
    ::llvm::StringRef getKernelModuleName() const {
      return getKernel().getRootReference().getValue();
    }
    /// The gpu.func name (the leaf of `kernel`).
    ::llvm::StringRef getKernelName() const {
      return getKernel().getLeafReference().getValue();
    }
  }];
}

def FP4_LaunchPlanAttr : FP4_Attr<"LaunchPlan", "launch_plan"> {
  let summary = "Host launch plan of one op lowered to GPU kernels";
  let description = [{
    What the host does for one op that convert-fp4-to-gpu lowered to
    kernels (`op` names it): the launch function takes the `inputs` and
    then the `outputs` as memref arguments, in this order and with these
    types (a quantized value as its components, docs/ABI.md); the
    `scratch` buffers exist on the device only and start zero-filled; the
    `launches` run in order on one stream. fp4-gpu-materialize-launches
    turns it into the function's body (device buffers, copies, the
    `gpu.launch_func`s, frees).

    The verifier checks that the buffer names are unique, that every
    launch argument names a buffer of the plan, and that there is an
    output and a launch. On a function (the discardable attribute
    `fp4.launch_plan`) it also checks the function type against inputs
    and outputs.

    ```mlir
    #fp4.launch_plan<op = "fp4.matmul",
      inputs = ["lhs" : memref<3x256xbf16>, "rhs.codes" : memref<40x128xi8>,
                "rhs.scales" : memref<40x8xi8>],
      outputs = ["result" : memref<3x40xf32>], scratch = [],
      launches = [<@fp4_kernels::@fp4_matmul_0, variant = "decode_w4a16",
                   grid = [3, 1, 1], block = [128, 1, 1], shared_bytes = 0,
                   args = ["lhs", "rhs.codes", "rhs.scales", "result"]>]>
    ```
  }];
  let parameters = (ins
      StringRefParameter<"the op lowered">:$op,
      ArrayRefParameter<"::mlir::fp4::LaunchBufferAttr", "inputs">:$inputs,
      ArrayRefParameter<"::mlir::fp4::LaunchBufferAttr", "outputs">:$outputs,
      ArrayRefParameter<"::mlir::fp4::LaunchBufferAttr", "scratch">:$scratch,
      ArrayRefParameter<"::mlir::fp4::KernelLaunchAttr", "launches">:$launches);
  let assemblyFormat = [{
    `<` `op` `=` $op `,` `inputs` `=` custom<LaunchBuffers>($inputs) `,`
    `outputs` `=` custom<LaunchBuffers>($outputs) `,`
    `scratch` `=` custom<LaunchBuffers>($scratch) `,`
    `launches` `=` `[` $launches `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The buffer named `name` (input, output or scratch); null if none.
    ::mlir::fp4::LaunchBufferAttr lookupBuffer(::llvm::StringRef name) const;
    /// Whether `name` is a scratch buffer.
    bool isScratch(::llvm::StringRef name) const;
    /// Name of the discardable attribute carrying the plan on a launch
    /// function.
    static constexpr ::llvm::StringLiteral kAttrName = "fp4.launch_plan";
  }];
}

def FP4_GPUManifestAttr : FP4_Attr<"GPUManifest", "gpu_manifest"> {
  let summary = "Every launch plan of a module, for the kernel manifest";
  let description = [{
    The module attribute `fp4.gpu_manifest` that convert-fp4-to-gpu sets:
    the chip the kernels were generated for and the launch plans of the
    lowered ops in program order. fp4-export-gpu-kernels writes
    kernels.json from it (one entry per launch: kernel, module, op,
    variant, grid, block, shared bytes, arguments with dtype, shape and
    whether scratch), so the manifest the Python launcher reads is the
    plan the host code was built from.

    ```mlir
    module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90",
        plans = [<op = "fp4.matmul", inputs = [...], ...>]>} { ... }
    ```
  }];
  let parameters = (ins StringRefParameter<"target chip">:$chip,
                        ArrayRefParameter<"::mlir::fp4::LaunchPlanAttr", "plans">:$plans);
  let assemblyFormat = "`<` `chip` `=` $chip `,` `plans` `=` `[` $plans `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute carrying the manifest.
    static constexpr ::llvm::StringLiteral kAttrName = "fp4.gpu_manifest";
  }];
}

#endif // FP4_DIALECT_FP4_IR_FP4LAUNCHPLANATTR_TD
