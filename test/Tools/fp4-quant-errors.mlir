// Every user error of fp4-quant is one diagnostic and a non-zero exit, never
// a crash, and leaves no output file behind. (lit only collects .mlir files;
// this one drives the tool and holds no IR.)

// A 2x32 f32 tensor: 256 bytes.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "open(r'%t/x.f32', 'wb').write(bytes(256))"

// RUN: not fp4-quant %t/missing.f32 --rows 2 --cols 32 -o %t/out 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: fp4-quant: error: cannot read input file '{{.*}}missing.f32': No such file or directory

// RUN: not fp4-quant %t/x.f32 --rows 4 --cols 32 -o %t/out 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: fp4-quant: error: input file '{{.*}}x.f32' has 256 bytes, but a 4x32 f32 tensor needs 512

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --input-type=bf16 -o %t/out 2>&1 | FileCheck %s --check-prefix=SIZE-BF16
// SIZE-BF16: fp4-quant: error: input file '{{.*}}x.f32' has 256 bytes, but a 2x32 bf16 tensor needs 128

// RUN: not fp4-quant %t/x.f32 --rows 4 --cols 16 -o %t/out 2>&1 | FileCheck %s --check-prefix=COLS
// COLS: fp4-quant: error: --cols=16 is not a multiple of 32, the block structure of #fp4.mxfp4 along the quantized axis

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme=hif4 -o %t/out 2>&1 | FileCheck %s --check-prefix=COLS-HIF4-BAD
// COLS-HIF4-BAD: fp4-quant: error: --cols=32 is not a multiple of 64, the block structure of #fp4.hif4 along the quantized axis

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme=mxfp4_macro -o %t/out 2>&1 | FileCheck %s --check-prefix=COLS-MACRO
// COLS-MACRO: fp4-quant: error: --cols=32 is not a multiple of 256, the block structure of #fp4.mxfp4_macro along the quantized axis

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='#fp4.mxfp4<scale_rounding = bogus>' -o %t/out 2>&1 | FileCheck %s --check-prefix=BAD-VALUE
// BAD-VALUE: fp4-quant: error: invalid --scheme '#fp4.mxfp4<scale_rounding = bogus>': unknown value 'bogus', expected one of: floor, ceil, even, rceil

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme=mxfp5 -o %t/out 2>&1 | FileCheck %s --check-prefix=BAD-NAME
// BAD-NAME: fp4-quant: error: invalid --scheme 'mxfp5': unknown attribute `mxfp5` in dialect `fp4`

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='#fp4.mxfp4<seed = 3>' -o %t/out 2>&1 | FileCheck %s --check-prefix=BAD-SEED
// BAD-SEED: fp4-quant: error: invalid --scheme '#fp4.mxfp4<seed = 3>': #fp4.mxfp4: 'seed' is only meaningful with rounding = stochastic

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='#fp4.mxfp4 extra' -o %t/out 2>&1 | FileCheck %s --check-prefix=TRAILING
// TRAILING: fp4-quant: error: invalid --scheme '#fp4.mxfp4 extra':

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='unit' -o %t/out 2>&1 | FileCheck %s --check-prefix=NOT-SCHEME
// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='#builtin.unit' -o %t/out 2>&1 | FileCheck %s --check-prefix=NOT-SCHEME2
// NOT-SCHEME: fp4-quant: error: invalid --scheme 'unit': unknown attribute `unit` in dialect `fp4`
// NOT-SCHEME2: fp4-quant: error: invalid --scheme '#builtin.unit'

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='array<i32: 1>' -o %t/out 2>&1 | FileCheck %s --check-prefix=NOT-FP4
// NOT-FP4: fp4-quant: error: invalid --scheme 'array<i32: 1>'

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 --scheme='#fp4.nvfp4<tile2d = true>' -o %t/out 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: fp4-quant: error: #fp4.nvfp4<tile2d = true> needs dimension 0 to be a static multiple of 16
// TILE: fp4-quant: error: #fp4.nvfp4<tile2d = true> cannot quantize a 2x32 tensor

// RUN: not fp4-quant %t/x.f32 --rows 0 --cols 32 -o %t/out 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: fp4-quant: error: --rows and --cols must be positive, got --rows=0 --cols=32

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 -o %t/no-such-dir/out 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: fp4-quant: error: cannot write output file '{{.*}}no-such-dir/out.codes.bin': No such file or directory

// A lowering that does not reach the LLVM dialect fails in the JIT with a clean
// error, and the memory-mapped outputs are discarded, not left half written.
// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 -o %t/partial --pipeline='builtin.module(canonicalize)' 2>&1 | FileCheck %s --check-prefix=JIT
// JIT: fp4-quant: error: JIT compilation failed:
// RUN: not ls %t/partial.codes.bin
// RUN: not ls %t/partial.scales.bin

// RUN: not fp4-quant %t/x.f32 --rows 2 --cols 32 -o %t/out --pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: fp4-quant: error: cannot build the lowering pipeline 'builtin.module(no-such-pass)'

// No error left an output file.
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// FILES-NOT: .bin
