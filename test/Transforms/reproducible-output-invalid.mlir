// RUN: fp4-opt %s -fp4-reproducible-output -verify-diagnostics

// The second private constant's canonical name, @__constant_4xf32_0, is
// held by a public global the pass must not rename: an error, not a
// silent clash (all renames happen in one walk, so this is checked first).
module {
  memref.global "private" constant @__constant_4xf32_7 : memref<4xf32> = dense<1.0>
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<2.0>
  // expected-error @below {{fp4-reproducible-output: @__constant_4xf32_0 is taken by a symbol that is not a private constant global}}
  memref.global constant @__constant_4xf32_0 : memref<4xf32> = dense<3.0>
  func.func @f() {
    %a = memref.get_global @__constant_4xf32 : memref<4xf32>
    %b = memref.get_global @__constant_4xf32_7 : memref<4xf32>
    %c = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    return
  }
}
