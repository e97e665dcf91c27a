// RUN: fp4-opt %s -fp4-contraction-to-runtime-call="report-skipped=true" -verify-diagnostics | FileCheck %s

// A tagged op whose buffers do not have the tagged form stays as loops,
// with the reason.

#s = affine_map<(m, n, c, s) -> (m, c, s)>
#o = affine_map<(m, n, c, s) -> (m, n)>

// CHECK-LABEL: func.func @wrong_kind
// CHECK: linalg.generic
// CHECK-NOT: call
func.func @wrong_kind(%v: memref<4x2x2xf32>, %i: memref<4x2x2xi8>, %c: memref<4x8xf32>) {
  // expected-remark @below {{sparse product left as loops: unknown fp4.sparse_product kind 'diagonal'}}
  linalg.generic {indexing_maps = [#s, #s, #o],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%v, %i : memref<4x2x2xf32>, memref<4x2x2xi8>) outs(%c : memref<4x8xf32>)
      attrs = {fp4.sparse_product = {kind = "diagonal", lhs_block_size = 4 : i64}} {
  ^bb0(%a: f32, %b: i8, %o: f32):
    %p = arith.addf %a, %o : f32
    linalg.yield %p : f32
  }
  return
}

// CHECK-LABEL: func.func @no_gather
// CHECK: linalg.generic
func.func @no_gather(%v: memref<4x2x2xf32>, %i: memref<4x2x2xi8>, %c: memref<4x8xf32>) {
  // expected-remark @below {{sparse product left as loops: the body does not gather from exactly one dense buffer}}
  linalg.generic {indexing_maps = [#s, #s, #o],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%v, %i : memref<4x2x2xf32>, memref<4x2x2xi8>) outs(%c : memref<4x8xf32>)
      attrs = {fp4.sparse_product = {kind = "sparse_dense", lhs_block_size = 4 : i64}} {
  ^bb0(%a: f32, %b: i8, %o: f32):
    %p = arith.addf %a, %o : f32
    linalg.yield %p : f32
  }
  return
}
