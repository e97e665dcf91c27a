// RUN: fp4-opt %s -convert-fp4-to-gpu="decode-max-m=0 prefill-stages=2" -verify-diagnostics -o /dev/null
// RUN: sed "/expected-remark/d" %s | fp4-opt -convert-fp4-to-gpu="decode-max-m=0 prefill-stages=2 remarks=false" -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET

// When the selected family declines an op, the reference kernel takes it:
// bit-exact but untuned (at 16 x 14336 x 4096 it ran 8.7 ms against 36 us;
// docs/perf/medium_m_2026-12-04.txt), so the user hears which option or
// shape led there. Here W4A4 prefill needs 3 stages.
// QUIET-NOT: remark
!q = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!w = !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @w4a4(%x: !q, %w: !w) -> tensor<16x64xf32> {
  // expected-remark @below {{runs on the reference matmul kernel (bit-exact, untuned, far slower): prefill: W4A4 dequantizes A one tile ahead and needs prefill-stages >= 3}}
  %y = fp4.matmul %x, %w : !q, !w -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
