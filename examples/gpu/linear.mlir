// A W4A4 linear layer for fp4-run: both operands are quantized on the GPU
// (MXFP4) and multiplied by the decode kernel. Inputs are f32 so that .npy
// files can carry them.
//   build/bin/fp4-run build examples/gpu/linear.mlir -o out/model.so
//   fp4-run exec out/model.so --entry linear --input x.npy --input w.npy \
//       --output-dir res --memory host
!xq = !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!wq = !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @linear(%x: tensor<4x256xf32>, %w: tensor<64x256xf32>)
    -> tensor<4x64xf32> attributes {llvm.emit_c_interface} {
  %a = fp4.quantize %x : tensor<4x256xf32> -> !xq
  %b = fp4.quantize %w : tensor<64x256xf32> -> !wq
  %y = fp4.matmul %a, %b : !xq, !wq -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
