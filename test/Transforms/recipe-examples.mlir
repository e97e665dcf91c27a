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
// RUN: for r in %fp4_src_root/examples/recipes/*.json; do fp4-opt %t.mlir -fp4-quantize=recipe=$r | grep -c linalg.batch_matmul; done | FileCheck %s --check-prefix=ATTN
// ATTN-COUNT-8: {{^}}2{{$}}
// ATTN-NOT: {{.}}
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/mxfp4-macro-w4a4.json %{passes} 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %t.mlir -fp4-quantize=recipe=%fp4_src_root/examples/recipes/full-correction.json %{passes} 2>&1 | FileCheck %s --check-prefix=FULL

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
