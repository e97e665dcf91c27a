// RUN: fp4-opt %s -split-input-file -verify-diagnostics

// The verifiers of the launch plan attributes (LaunchPlanAttr.cpp) and of
// their use as fp4.launch_plan (launch functions) and fp4.gpu_manifest
// (modules).

// expected-error @below {{launch_buffer 'lhs': expected a static memref with the identity layout, got 'memref<?x64xbf16>'}}
func.func private @dynamic() attributes {b = #fp4.launch_buffer<"lhs" : memref<?x64xbf16>>}

// -----

// expected-error @below {{launch_buffer 'lhs': element type 'f64' has no manifest dtype (bf16, f16, f32, i8, i32)}}
func.func private @f64() attributes {b = #fp4.launch_buffer<"lhs" : memref<4x64xf64>>}

// -----

// expected-error @below {{launch_buffer: the name must not be empty}}
func.func private @unnamed() attributes {b = #fp4.launch_buffer<"" : memref<4xf32>>}

// -----

// expected-error @below {{kernel_launch: expected the kernel as @<gpu.module>::@<gpu.func>, got @k}}
func.func private @flat() attributes {l = #fp4.kernel_launch<@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["a"]>}

// -----

// expected-error @below {{kernel_launch @m::@k: grid needs 3 extents (x, y, z), got 2}}
func.func private @grid2() attributes {l = #fp4.kernel_launch<@m::@k, variant = "reference", grid = [1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["a"]>}

// -----

// expected-error @below {{kernel_launch @m::@k: block extents must be positive, got [32, 0, 1]}}
func.func private @block0() attributes {l = #fp4.kernel_launch<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 0, 1], shared_bytes = 0, args = ["a"]>}

// -----

// expected-error @below {{kernel_launch @m::@k: shared_bytes must not be negative, got -4}}
func.func private @smem() attributes {l = #fp4.kernel_launch<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = -4, args = ["a"]>}

// -----

// expected-error @below {{kernel_launch @m::@k: the variant must not be empty}}
func.func private @variant() attributes {l = #fp4.kernel_launch<@m::@k, variant = "", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["a"]>}

// -----

// expected-error @below {{launch_plan for fp4.matmul: kernel @m::@k takes 'rhs', which is not a buffer of the plan}}
func.func private @unknown_arg() attributes {p = #fp4.launch_plan<op = "fp4.matmul", inputs = ["lhs" : memref<4xf32>], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "rhs", "result"]>]>}

// -----

// expected-error @below {{launch_plan for fp4.matmul: buffer 'result' is declared twice}}
func.func private @twice() attributes {p = #fp4.launch_plan<op = "fp4.matmul", inputs = ["lhs" : memref<4xf32>], outputs = ["result" : memref<4xf32>], scratch = ["result" : memref<4xf32>], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "result"]>]>}

// -----

// expected-error @below {{launch_plan for fp4.dequantize: no output buffer}}
func.func private @no_output() attributes {p = #fp4.launch_plan<op = "fp4.dequantize", inputs = ["input" : memref<4xf32>], outputs = [], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["input"]>]>}

// -----

// expected-error @below {{launch_plan: op must name the op lowered}}
func.func private @no_op() attributes {p = #fp4.launch_plan<op = "", inputs = [], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["result"]>]>}

// -----

// expected-error @below {{gpu_manifest: the chip must not be empty}}
module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "", plans = [<op = "fp4.matmul", inputs = [], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["result"]>]>]>} {
}

// -----

// The discardable attributes: the right attribute on the right op, and a
// launch function whose type is the plan's buffers.

// expected-error @below {{'func.func' op attribute 'fp4.launch_plan' must be a #fp4.launch_plan}}
func.func private @not_a_plan(memref<4xf32>) attributes {fp4.launch_plan = "plan"}

// -----

// expected-error @below {{'func.func' op takes 1 arguments but its launch plan has 2 buffers (inputs, then outputs)}}
func.func private @count(memref<4xf32>) attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.matmul", inputs = ["lhs" : memref<4xf32>], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "result"]>]>}

// -----

// expected-error @below {{'func.func' op argument 1 is 'memref<4xbf16>' but its launch plan's buffer 'result' is 'memref<4xf32>'}}
func.func private @types(memref<4xf32>, memref<4xbf16>) attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.matmul", inputs = ["lhs" : memref<4xf32>], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "result"]>]>}

// -----

// expected-error @below {{'func.func' op with a launch plan must not return values (its outputs are arguments)}}
func.func private @results(memref<4xf32>) -> i32 attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.dequantize", inputs = [], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["result"]>]>}

// -----

// expected-error @below {{'func.func' op 'fp4.gpu_manifest' applies to a builtin.module only}}
func.func private @manifest_on_func() attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [<op = "fp4.dequantize", inputs = [], outputs = ["result" : memref<4xf32>], scratch = [], launches = [<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["result"]>]>]>}

// -----

// expected-error @below {{'builtin.module' op attribute 'fp4.gpu_manifest' must be a #fp4.gpu_manifest}}
module attributes {fp4.gpu_manifest = [1, 2]} {
}
