// The patterns' match failure reasons are remarks only while remarks=true
// (the default, host-launch.mlir); with remarks=false a declined op stays on
// the host silently (-verify-diagnostics fails on any unexpected remark) and
// a supported one is still lowered.
// RUN: fp4-opt %s -convert-fp4-to-gpu=remarks=false -verify-diagnostics | FileCheck %s

!w = !fp4.tensor<40x256xf4E2M1FN, #fp4.mxfp4<block_size = 32>, axis = 1>

// CHECK-LABEL: func.func @dynamic
// CHECK: fp4.matmul
func.func @dynamic(%a: tensor<?x256xbf16>, %w: !w) -> tensor<?x40xf32> {
  %y = fp4.matmul %a, %w : tensor<?x256xbf16>, !w -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}

// CHECK-LABEL: func.func @static
// CHECK-NOT: fp4.matmul
// CHECK: call @fp4_matmul_{{[0-9]+}}_launch
func.func @static(%a: tensor<3x256xbf16>, %w: !w) -> tensor<3x40xf32> {
  %y = fp4.matmul %a, %w : tensor<3x256xbf16>, !w -> tensor<3x40xf32>
  return %y : tensor<3x40xf32>
}
