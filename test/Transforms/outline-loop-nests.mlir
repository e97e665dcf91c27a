// RUN: fp4-opt %s -split-input-file -fp4-outline-loop-nests=min-loop-nests=3 | FileCheck %s
// Printing options do not decide what is shared (the comparison is
// structural): with large constants elided, the two tables below still
// differ.
// RUN: fp4-opt %s -split-input-file -fp4-outline-loop-nests=min-loop-nests=3 -mlir-elide-elementsattrs-if-larger=1 -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// STATS: FP4OutlineLoopNests
// STATS: 6 outlined - Loop nests outlined
// STATS: 1 shared - Outlined loop nests that reuse an identical function

// Three top-level nests: the first and the third are the same loop on
// buffers of the same type (as a model's repeated layers give) and share
// one function; the second scales by another constant and gets its own.
// Constants are cloned into the outlined functions, buffers passed.
// CHECK-LABEL: func.func @layers
// CHECK: call @[[F0:layers_loop_nest_0]](%arg0, %arg1)
// CHECK: call @[[F1:layers_loop_nest_1]](%arg1, %arg2)
// CHECK: call @[[F0]](%arg2, %arg3)
// CHECK-NOT: call
// Each function is inserted right after @layers (so the last comes first).
// CHECK: func.func private @[[F1]]
// CHECK: arith.constant 3.0
// CHECK: func.func private @[[F0]](%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) attributes {passthrough = ["noinline"]}
// CHECK: arith.constant 2.0
// CHECK-NOT: layers_loop_nest_2
func.func @layers(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<16xf32>, %d: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %b[%i] : memref<16xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %c[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %c[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %d[%i] : memref<16xf32>
  }
  return
}

// Fewer nests than min-loop-nests: left in place.
// CHECK-LABEL: func.func @small
// CHECK: scf.for
// CHECK-NOT: call
func.func @small(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<16xf32>
  }
  return
}

// -----

// Three nests that differ only in a constant table: no sharing.
// CHECK-LABEL: func.func @tables
// CHECK: call @[[T0:tables_loop_nest_0]]
// CHECK: call @[[T1:tables_loop_nest_1]]
// CHECK: call @[[T2:tables_loop_nest_2]]
func.func @tables(%a: memref<16xvector<2xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %t0 = arith.constant dense<[1.0, 2.0]> : vector<2xf32>
  %t1 = arith.constant dense<[1.0, 3.0]> : vector<2xf32>
  %t2 = arith.constant dense<[4.0, 2.0]> : vector<2xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xvector<2xf32>>
    %y = arith.mulf %x, %t0 : vector<2xf32>
    memref.store %y, %a[%i] : memref<16xvector<2xf32>>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xvector<2xf32>>
    %y = arith.mulf %x, %t1 : vector<2xf32>
    memref.store %y, %a[%i] : memref<16xvector<2xf32>>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xvector<2xf32>>
    %y = arith.mulf %x, %t2 : vector<2xf32>
    memref.store %y, %a[%i] : memref<16xvector<2xf32>>
  }
  return
}
