// fp4-quant on tiny inputs whose bytes are computed by hand from
// numerics.md (the tool runs the compiled CPU lowering through the JIT).
// lit only collects .mlir files; this one drives the tool and holds no IR.

// RUN: rm -rf %t && mkdir -p %t
// Three 32-element rows: (0) the E2M1 grid, its negation (starting at -0),
// every tie of the E2M1 tie table and its negation (7 clips to 6);
// (1) row 0 times 2^-10; (2) alternating +0 / -0. Also as bf16 and f16
// (every value is exact in both).
// RUN: %python -c "import struct; g=[0.,.5,1,1.5,2,3,4,6]; t=[.25,.75,1.25,1.75,2.5,3.5,5,7]; r0=g+[-v for v in g]+t+[-v for v in t]; v=r0+[x*2**-10 for x in r0]+[0.,-0.]*16; open(r'%t/x.f32','wb').write(struct.pack('<96f',*v)); open(r'%t/x.bf16','wb').write(b''.join(struct.pack('<f',x)[2:] for x in v)); open(r'%t/x.f16','wb').write(struct.pack('<96e',*v))"

// MXFP4 (floor): amax 7 and 7*2^-10 give e = 0 and -10, bytes 0x7f and 0x75;
// the zero row gets byte 0 and codes 0 / 8 by sign. Codes: low nibble first.
// RUN: fp4-quant %t/x.f32 --rows 3 --cols 32 -o %t/mx --dequantize | FileCheck %s --check-prefix=MX-SUMMARY
// MX-SUMMARY: fp4-quant: #fp4.mxfp4 3x32 f32 -> {{.*}}mx.*.bin: 3 files, 435 bytes (build {{.*}} s, compile {{.*}} s, run {{.*}} s, total {{.*}} s)
// RUN: od -An -tx1 -v %t/mx.codes.bin | FileCheck %s --check-prefix=MX-CODES
// MX-CODES:      10 32 54 76 98 ba dc fe 20 42 64 76 a8 ca ec fe
// MX-CODES-NEXT: 10 32 54 76 98 ba dc fe 20 42 64 76 a8 ca ec fe
// MX-CODES-NEXT: 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80
// MX-CODES-NOT: {{.}}
// RUN: od -An -tx1 -v %t/mx.scales.bin | FileCheck %s --check-prefix=MX-SCALES
// MX-SCALES: 7f 75 00
// MX-SCALES-NOT: {{.}}
// Dequantized f32 bits: grid values, ties rounded to even codes, 7 -> 6.
// RUN: od -An -tx4 -v %t/mx.dequantized.f32.bin | FileCheck %s --check-prefix=MX-DEQ
// MX-DEQ:      00000000 3f000000 3f800000 3fc00000
// MX-DEQ-NEXT: 40000000 40400000 40800000 40c00000
// MX-DEQ-NEXT: 80000000 bf000000 bf800000 bfc00000
// MX-DEQ-NEXT: c0000000 c0400000 c0800000 c0c00000
// MX-DEQ-NEXT: 00000000 3f800000 3f800000 40000000
// MX-DEQ-NEXT: 40000000 40800000 40800000 40c00000
// MX-DEQ-NEXT: 80000000 bf800000 bf800000 c0000000
// MX-DEQ-NEXT: c0000000 c0800000 c0800000 c0c00000
// MX-DEQ-NEXT: 00000000 3a000000 3a800000 3ac00000
// MX-DEQ-NEXT: 3b000000 3b400000 3b800000 3bc00000
// MX-DEQ:      00000000 80000000 00000000 80000000

// bf16 and f16 inputs holding the same values give the same bytes.
// RUN: fp4-quant %t/x.bf16 --input-type=bf16 --rows 3 --cols 32 -o %t/mxbf16 --dequantize | FileCheck %s --check-prefix=BF16-SUMMARY
// BF16-SUMMARY: fp4-quant: #fp4.mxfp4 3x32 bf16 ->
// RUN: cmp %t/mx.codes.bin %t/mxbf16.codes.bin
// RUN: cmp %t/mx.scales.bin %t/mxbf16.scales.bin
// RUN: cmp %t/mx.dequantized.f32.bin %t/mxbf16.dequantized.f32.bin
// RUN: fp4-quant %t/x.f16 --input-type=f16 --rows 3 --cols 32 -o %t/mxf16 --dequantize
// RUN: cmp %t/mx.codes.bin %t/mxf16.codes.bin
// RUN: cmp %t/mx.scales.bin %t/mxf16.scales.bin
// RUN: cmp %t/mx.dequantized.f32.bin %t/mxf16.dequantized.f32.bin

// A short name with parameters. rceil: e = ceil(log2(amax / 6)) = 1 and -9.
// RUN: fp4-quant %t/x.f32 --rows 3 --cols 32 --scheme='mxfp4<scale_rounding = rceil>' -o %t/rceil | FileCheck %s --check-prefix=RCEIL-SUMMARY
// RCEIL-SUMMARY: fp4-quant: #fp4.mxfp4<scale_rounding = rceil> 3x32 f32
// RUN: od -An -tx1 -v %t/rceil.scales.bin | FileCheck %s --check-prefix=RCEIL
// RCEIL: 80 76 00

// NVFP4: tensor amax 7, g_enc = 448*6/7 = 384, tensor_scale = f32(1/384)
// (0x3b2aaaab). Block scales e4m3(amax * 64): 384 -> 0x7c, 448 -> 0x7e,
// 0.375 -> 0x2c, 0.4375 -> 0x2e, zero blocks 0. The second block of each row
// is scaled by 6/7, so both blocks encode to the grid codes.
// RUN: fp4-quant %t/x.f32 --rows 3 --cols 32 --scheme=nvfp4 -o %t/nv | FileCheck %s --check-prefix=NV-SUMMARY
// NV-SUMMARY: fp4-quant: #fp4.nvfp4 3x32 f32 -> {{.*}}nv.*.bin: 3 files, 58 bytes
// RUN: od -An -tx1 -v %t/nv.codes.bin | FileCheck %s --check-prefix=NV-CODES
// NV-CODES:      10 32 54 76 98 ba dc fe 10 32 54 76 98 ba dc fe
// NV-CODES-NEXT: 10 32 54 76 98 ba dc fe 10 32 54 76 98 ba dc fe
// NV-CODES-NEXT: 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80
// RUN: od -An -tx1 -v %t/nv.scales.bin | FileCheck %s --check-prefix=NV-SCALES
// NV-SCALES: 7c 7e 2c 2e 00 00
// RUN: od -An -tx1 -v %t/nv.tensor_scale.bin | FileCheck %s --check-prefix=NV-TENSOR
// NV-TENSOR: ab aa 2a 3b

// HiF4, one group of ones and one of zeros: sf = bf16(1 * bf16(1/7)) =
// 0.142578125 -> E6M2 0.15625 (byte 45 << 2 | 1 = 0xb5); rec = bf16(6.4) =
// 6.40625, so every 8-block and 4-block takes the extra factor 2 (metadata
// 0xffffffb5) and m = floor(6.40625 + 0.5) / 4 = 1.5 (code 6). Dequantized:
// 1.5 * 2 * 2 * 0.15625 = 0.9375.
// RUN: %python -c "import struct; open(r'%t/h.f32','wb').write(struct.pack('<128f', *([1.]*64 + [0.]*64)))"
// RUN: fp4-quant %t/h.f32 --rows 1 --cols 128 --scheme=hif4 -o %t/hif4 --dequantize
// RUN: od -An -tx1 -v %t/hif4.codes.bin | FileCheck %s --check-prefix=HIF4-CODES
// HIF4-CODES:      66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 66
// HIF4-CODES-NEXT: 66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 66
// HIF4-CODES-NEXT: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
// HIF4-CODES-NEXT: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
// RUN: od -An -tx1 -v %t/hif4.metadata.bin | FileCheck %s --check-prefix=HIF4-META
// HIF4-META: b5 ff ff ff 00 00 00 00
// RUN: od -An -tx4 -v %t/hif4.dequantized.f32.bin | FileCheck %s --check-prefix=HIF4-DEQ
// HIF4-DEQ-COUNT-16: 3f700000 3f700000 3f700000 3f700000
// HIF4-DEQ-NEXT: 00000000 00000000 00000000 00000000

// Macro-block MXFP4, one macro block of 256 ones: m = bf16(significand of
// 1/6) = 1.3359375 (bf16 0x3fab); y = 1/m = 0.7485.. gives e = -3 (byte
// 0x7c) and code 7 (6 * 2^-3 * m = 1.001953125, 0x3f804000).
// RUN: %python -c "import struct; open(r'%t/m.f32','wb').write(struct.pack('<256f', *([1.]*256)))"
// RUN: fp4-quant %t/m.f32 --rows 1 --cols 256 --scheme=mxfp4_macro -o %t/macro --dequantize | FileCheck %s --check-prefix=MACRO-SUMMARY
// MACRO-SUMMARY: fp4-quant: #fp4.mxfp4_macro 1x256 f32 -> {{.*}}macro.*.bin: 4 files, 1162 bytes
// RUN: od -An -tx1 -v %t/macro.codes.bin | FileCheck %s --check-prefix=MACRO-CODES
// MACRO-CODES-COUNT-8: 77 77 77 77 77 77 77 77 77 77 77 77 77 77 77 77
// MACRO-CODES-NOT: {{.}}
// RUN: od -An -tx1 -v %t/macro.scales.bin | FileCheck %s --check-prefix=MACRO-SCALES
// MACRO-SCALES: 7c 7c 7c 7c 7c 7c 7c 7c
// RUN: od -An -tx1 -v %t/macro.factors.bin | FileCheck %s --check-prefix=MACRO-FACTORS
// MACRO-FACTORS: ab 3f
// RUN: od -An -tx4 -v %t/macro.dequantized.f32.bin | FileCheck %s --check-prefix=MACRO-DEQ
// MACRO-DEQ-COUNT-64: 3f804000 3f804000 3f804000 3f804000

// --print-ir shows the module the tool lowers: the caller's buffers are the
// bufferization destinations.
// RUN: fp4-quant %t/x.f32 --rows 3 --cols 32 --scheme=nvfp4 -o %t/ir --print-ir | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @fp4_quantize(
// IR-SAME: %[[IN:.*]]: memref<3x32xf32>, %[[C:.*]]: memref<3x16xi8>, %[[S:.*]]: memref<3x2xi8>, %[[T:.*]]: memref<f32>) attributes {llvm.emit_c_interface}
// IR: %[[X:.*]] = bufferization.to_tensor %[[IN]] restrict : memref<3x32xf32> to tensor<3x32xf32>
// IR: %[[Q:.*]] = fp4.quantize %[[X]] : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
// IR: %[[P:.*]]:3 = fp4.unpack %[[Q]]
// IR: bufferization.materialize_in_destination %[[P]]#0 in restrict writable %[[C]]
// IR: bufferization.materialize_in_destination %[[P]]#1 in restrict writable %[[S]]
// IR: bufferization.materialize_in_destination %[[P]]#2 in restrict writable %[[T]]
// IR-NOT: fp4.dequantize
// IR: fp4-quant: #fp4.nvfp4 3x32 f32
