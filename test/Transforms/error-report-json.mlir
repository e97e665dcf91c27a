// RUN: fp4-opt %s -fp4-error-report="output=- per-block=true" -o /dev/null 2>/dev/null | FileCheck %s
// RUN: %python %S/Inputs/write_npz.py %t.npz @g/arg0=2x3x32
// RUN: fp4-opt %s -fp4-error-report="output=%t.json calibration=%t.npz" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=CAL < %t.json

// The JSON report (docs/ErrorReport.md). Four blocks of 32 whose figures
// can be checked by hand (MXFP4 floor):
//  0: 6 4 3 2 1.5 1 0.5 0..: amax 6, X = 1 = s*, every value on the grid:
//     all errors 0, ||x||^2 = 68.5;
//  1: all zero: ||x||^2 = 0, relative figures 0;
//  2: holds a NaN: skipped, null per-block figures;
//  3: 7 0..: X = 1, 7 clips to 6: E_total = 1 of ||x||^2 = 49, one element
//     clipped; s* = 7/6 (24 bits), so the ideal grid point 6 s* is 7 up to
//     the rounding of s*: E_grid ~ 1e-15 and E_scale ~ E_total.
// Tensor: ||x||^2 = 117.5, E_total = 1 / 117.5, clipped 1 / 96 elements.

// CHECK:      "version": 1,
// CHECK:      "ops": [
// CHECK:          "location": "loc(\"{{.*}}error-report-json.mlir\":{{[0-9]+}}:{{[0-9]+}})",
// CHECK-NEXT:     "key": "w",
// CHECK-NEXT:     "source": "constant",
// CHECK-NEXT:     "scheme": "#fp4.mxfp4",
// CHECK-NEXT:     "format": "mxfp4",
// CHECK-NEXT:     "shape": [
// CHECK-NEXT:       1,
// CHECK-NEXT:       128
// CHECK-NEXT:     ],
// CHECK-NEXT:     "axis": 1,
// CHECK-NEXT:     "grid": "e2m1",
// CHECK-NEXT:     "block_size": 32,
// CHECK-NEXT:     "elements": 96,
// CHECK-NEXT:     "blocks": 4,
// CHECK-NEXT:     "non_finite_blocks": 1,
// CHECK-NEXT:     "norm2": 117.5,
// CHECK-NEXT:     "relative": {
// CHECK-NEXT:       "total": 0.00851063829787234{{[0-9]*}},
// CHECK-NEXT:       "scale": 0.008510638297{{[0-9]*}},
// CHECK-NEXT:       "dead": 0,
// CHECK-NEXT:       "grid": {{[0-9.]+}}e-{{1[0-9]}}
// CHECK-NEXT:     },
// CHECK-NEXT:     "vector_terms": {
// CHECK-NEXT:       "scale_bias": 0.00851063{{[0-9]*}},
// CHECK-NEXT:       "deadzone": 0,
// CHECK-NEXT:       "grid_noise": {{[0-9.]+}}e-{{1[0-9]}},
// CHECK-NEXT:       "cross_scale_bias_deadzone": 0,
// CHECK-NEXT:       "cross_scale_bias_grid_noise": {{-?[0-9.]+}}e-{{[0-9]+}},
// CHECK-NEXT:       "cross_deadzone_grid_noise": 0,
// CHECK-NEXT:       "max_abs_residual": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "fractions": {
// CHECK-NEXT:       "clipped": 0.010416666666666666,
// CHECK-NEXT:       "zeroed": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "per_block": {
// CHECK-NEXT:       "blocks_per_row": 4,
// CHECK-NEXT:       "norm2": [
// CHECK-NEXT:         68.5,
// CHECK-NEXT:         0,
// CHECK-NEXT:         null,
// CHECK-NEXT:         49
// CHECK-NEXT:       ],
// CHECK-NEXT:       "total": [
// CHECK-NEXT:         0,
// CHECK-NEXT:         0,
// CHECK-NEXT:         null,
// CHECK-NEXT:         0.02040816326530612{{[0-9]*}}
// CHECK-NEXT:       ],
// CHECK-NEXT:       "scale": [
// CHECK-NEXT:         0,
// CHECK-NEXT:         0,
// CHECK-NEXT:         null,
// CHECK-NEXT:         0.0204081632{{[0-9]*}}
// CHECK-NEXT:       ],
// CHECK-NEXT:       "dead": [
// CHECK-NEXT:         0,
// CHECK-NEXT:         0,
// CHECK-NEXT:         null,
// CHECK-NEXT:         0
// CHECK-NEXT:       ],
// CHECK-NEXT:       "grid": [
// CHECK-NEXT:         0,
// CHECK-NEXT:         0,
// CHECK-NEXT:         null,
// CHECK-NEXT:         {{[0-9.]+}}e-{{1[0-9]}}
// CHECK-NEXT:       ]
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// Without a calibration file the quantizes of @g are not in the report.
// CHECK-NOT:  "key"
// CHECK:      ]
// CHECK-NEXT: }
func.func @w() -> !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[6.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0x7FC00000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x128xf32> loc("w")
  %q = fp4.quantize %c : tensor<1x128xf32> -> !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// With calibration data: key @g/arg0, the samples flattened to [6, 32]
// (NVFP4 blocks of 16); %y has no data and is not in the report; no
// per-block arrays without per-block=true.
// CAL:            "key": "w",
// CAL-NOT:        "per_block"
// CAL:            "key": "@g/arg0",
// CAL-NEXT:       "source": "calibration",
// CAL-NEXT:       "scheme": "#fp4.nvfp4",
// CAL-NEXT:       "format": "nvfp4",
// CAL-NEXT:       "shape": [
// CAL-NEXT:         6,
// CAL-NEXT:         32
// CAL-NEXT:       ],
// CAL-NEXT:       "axis": 1,
// CAL-NEXT:       "grid": "e2m1",
// CAL-NEXT:       "block_size": 16,
// CAL-NEXT:       "elements": 192,
// CAL-NEXT:       "blocks": 12,
// CAL-NOT:        "per_block"
// CAL-NOT:        "key"
// CAL:          ]
// CAL-NEXT:   }
func.func @g(%x: tensor<5x32xf32>, %y: tensor<5x32xf32>) {
  %q = fp4.quantize %x : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %r = fp4.quantize %y : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return
}
