// RUN: fp4-opt %s -verify-diagnostics -fp4-gpu-select-config

// A selection that attaches nothing says so.
// expected-warning @below {{fp4-gpu-select-config: no fp4.matmul, fp4.quantize or fp4.dequantize without a gpu_config}}
module {
  func.func @f(%a: tensor<1x32xbf16>) -> tensor<1x32xbf16> {
    return %a : tensor<1x32xbf16>
  }
}
