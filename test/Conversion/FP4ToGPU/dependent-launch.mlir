// fp4-gpu-dependent-launch: every kernel of the plans starts with
// griddepcontrol.launch_dependents and waits (griddepcontrol.wait) before
// anything else it does; between the two, with prefetch-bytes (0 by
// default: measured slower on the H200), a kernel with a read-only
// argument of at least 1 MiB (here the 14336 x 4096 MXFP4 weight's 28 MiB
// of codes and 1.75 MiB of scales) prefetches each CTA's share of it into
// L2, bounded by the buffer's end. The plans on the launch functions and
// the manifest mark each launch dependent. The quantizer's 8 KB input is
// not prefetched. A second run changes nothing.
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch=prefetch-bytes=67108864 | FileCheck %s
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch=prefetch-bytes=67108864 -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch -fp4-gpu-dependent-launch | FileCheck %s --check-prefix=TWICE
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch=prefetch-bytes=0 | FileCheck %s --check-prefix=NOPREFETCH
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch | FileCheck %s --check-prefix=NOPREFETCH
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -fp4-gpu-dependent-launch -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS0
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF

// CHECK: fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90a", plans = [<op = "fp4.quantize"{{.*}}dependent = true>]>, <op = "fp4.matmul"{{.*}}dependent = true>]>]>
// CHECK-DAG: fp4.launch_plan = #fp4.launch_plan<op = "fp4.quantize"{{.*}}dependent = true>]>
// CHECK-DAG: fp4.launch_plan = #fp4.launch_plan<op = "fp4.matmul"{{.*}}dependent = true>]>
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-LABEL: gpu.func @fp4_matmul_1(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK: %[[SIZE:.*]] = arith.constant 29360128 : index
// CHECK: %[[SHARE:.*]] = arith.ceildivui %[[SIZE]], %{{.*}} : index
// CHECK: %[[BEGIN:.*]] = arith.muli %{{.*}}, %[[SHARE]] : index
// CHECK: memref.extract_aligned_pointer_as_index %{{arg[0-9]+}} : memref<14336x2048xi8>
// CHECK: scf.for
// CHECK: arith.cmpi ult, %{{.*}}, %[[SIZE]] : index
// CHECK: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK: arith.constant 1835008 : index
// CHECK: memref.extract_aligned_pointer_as_index %{{arg[0-9]+}} : memref<14336x128xi8>
// CHECK: nvvm.prefetch level = L2
// CHECK-NOT: extract_aligned_pointer
// CHECK: nvvm.griddepcontrol wait
// CHECK-NOT: griddepcontrol
// STATS: 2 kernels - Kernels made dependent
// STATS: 1 prefetching-kernels - Kernels prefetching an argument before the wait
// STATS0: 2 kernels - Kernels made dependent
// STATS0-NOT: prefetching-kernels

// TWICE-COUNT-2: nvvm.griddepcontrol launch_dependents
// TWICE-NOT: nvvm.griddepcontrol launch_dependents

// NOPREFETCH-NOT: nvvm.prefetch
// NOPREFETCH-COUNT-2: nvvm.griddepcontrol wait
// NOPREFETCH-NOT: nvvm.prefetch

// OFF-NOT: dependent = true
// OFF-NOT: griddepcontrol

!qw = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qx = !fp4.tensor<1x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @w4a4(%x: tensor<1x4096xbf16>, %qw: !qw) -> tensor<1x14336xf32> {
  %qx = fp4.quantize %x : tensor<1x4096xbf16> -> !qx
  %y = fp4.matmul %qx, %qw : !qx, !qw -> tensor<1x14336xf32>
  return %y : tensor<1x14336xf32>
}
