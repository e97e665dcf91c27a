// The shipped recipes (examples/recipes/) on one BERT layer in torch-mlir's
// form: 6 Linear layers (K = 384 and 768) and 2 attention products. Every
// accuracy pass runs; each does only what the recipe asks per op.
// RUN: %python %S/Inputs/torch_bert_layer.py > %t.mlir
// DEFINE: %{passes} = -fp4-rotate -fp4-macro-scale -fp4-outlier-fallback -fp4-residual -fp4-fold-constants
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/mxfp4-w4a16.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A16 -DS=mxfp4
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/nvfp4-w4a16.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A16 -DS=nvfp4
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/hif4-w4a16.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A16 -DS=hif4
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/mxfp4-w4a4.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A4 -DS=mxfp4
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/nvfp4-w4a4.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A4 -DS=nvfp4
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/hif4-w4a4.json %{passes} 2>&1 | FileCheck %s --check-prefixes=CHECK,W4A4 -DS=hif4
// The attention products stay linalg.batch_matmul with every recipe.
// (mxfp4-w4a4-names.json leaves this layer, block 0, all float: below.)
// RUN: for r in %fp4_src_root/examples/recipes/*.json; do [ "${r%%-names.json}" != "$r" ] && continue; fp4-opt %t.mlir -fp4-quantize=recipe=$r | grep -c linalg.batch_matmul; done | FileCheck %s --check-prefix=ATTN
// ATTN-COUNT-8: {{^}}2{{$}}
// ATTN-NOT: {{.}}
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/mxfp4-macro-w4a4.json %{passes} 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/full-correction.json %{passes} 2>&1 | FileCheck %s --check-prefix=FULL
// The name-aimed recipe on the 2-layer exported BERT fixture (module paths
// as names): block 0 and every attention.output.dense stay float, so only
// block 1's query/key/value/intermediate/output (5 of 16) are quantized.
// RUN: fp4-opt %fp4_src_root/test/python/fixtures/tiny_bert.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/mxfp4-w4a4-names.json -mlir-pass-statistics -mlir-print-debuginfo 2>&1 | FileCheck %s --check-prefix=NAMES
// NAMES-COUNT-5: fp4.matmul {{.*}}loc(#
// NAMES-NOT: fp4.matmul
// NAMES: 11 skipped-excluded
// NAMES: 5 quantized

// No warning: the attention products are left in float by choice.
// CHECK-NOT: warning
// CHECK-NOT: fp4.quantize %{{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// W4A16-COUNT-6: fp4.matmul %{{[^,]*}}, %{{.*}} : tensor<2x64x{{[0-9]+}}xf32>, !fp4.tensor<{{.*}}#fp4.[[S]], axis = 1>
// W4A4-COUNT-6: fp4.matmul %{{.*}} : !fp4.tensor<2x64x{{[0-9]+}}x{{[^,]+}}, #fp4.[[S]], axis = 2>, !fp4.tensor<{{.*}}#fp4.[[S]], axis = 1>
// CHECK-NOT: fp4.matmul

// Macro-blocks fitted per layer: 192 for K = 384, 256 for K = 768.
// MACRO-NOT: warning
// MACRO-DAG: #fp4.mxfp4_macro<macro_block = 192>
// MACRO-DAG: #fp4.mxfp4_macro, axis

// Rotation, block top-2 outliers and the 2:4 residual on all 6 Linear layers.
// FULL-NOT: warning
// FULL-COUNT-6: fp4.rotate
// FULL: fp4.split_outliers
// FULL: fp4.residual
