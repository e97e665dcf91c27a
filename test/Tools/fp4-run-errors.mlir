// fp4-run reports bad input files as one `fp4-run: error:` line with exit
// status 1, never a Python traceback (no GPU, driver or runtime needed:
// every check runs before those are looked up).
// RUN: rm -rf %t && mkdir -p %t
//
// A missing input, a directory, a file that is not UTF-8, a signature that
// ends right after `->`.
// RUN: not fp4-run build %t/missing.mlir -o %t/m.so 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=MISSING
// MISSING: fp4-run: error: {{.*}}missing.mlir: no such file
// RUN: not fp4-run build %t -o %t/m.so 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=DIR
// DIR: fp4-run: error: {{.*}}: is a directory, expected an MLIR input file
// RUN: printf 'func.func @f() \377\376 {\n' > %t/latin1.mlir
// RUN: not fp4-run build %t/latin1.mlir -o %t/m.so 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=UTF8
// UTF8: fp4-run: error: {{.*}}latin1.mlir: not UTF-8 text (byte 0xff at offset 15)
// RUN: printf 'func.func @f(%%a: memref<4xf32>) ->' > %t/arrow.mlir
// RUN: not fp4-run build %t/arrow.mlir -o %t/m.so 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=ARROW
// ARROW: fp4-run: error: {{.*}}arrow.mlir: the signature of @f ends after '->' (no result type)
//
// exec: a corrupt or edited model.so.json.
// RUN: touch %t/model.so
// RUN: printf '{"entries": {"f": ' > %t/model.so.json
// RUN: not fp4-run exec %t/model.so --entry f --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=JSON
// JSON: fp4-run: error: {{.*}}model.so.json: corrupt manifest (not JSON: Expecting value at line 1 column 19); rebuild the model with `fp4-run build`
// RUN: printf '[1, 2]' > %t/model.so.json
// RUN: not fp4-run exec %t/model.so --entry f --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=TOP
// TOP: fp4-run: error: {{.*}}model.so.json: corrupt manifest (the top level is not an object)
// RUN: printf '{"entries": {"f": {"args": [{"kind": "memref", "dtype": "float32", "shape": [-4]}], "results": []}}}' > %t/model.so.json
// RUN: not fp4-run exec %t/model.so --entry f --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=SHAPE
// SHAPE: fp4-run: error: {{.*}}model.so.json: corrupt manifest (entry 'f': bad shape [-4])
// RUN: printf '{"entries": {"f": {"args": [{"kind": "memref", "dtype": "complex", "shape": [4]}], "results": []}}}' > %t/model.so.json
// RUN: not fp4-run exec %t/model.so --entry f --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=DTYPE
// DTYPE: fp4-run: error: {{.*}}model.so.json: corrupt manifest (entry 'f': unknown dtype 'complex')
// RUN: printf '\377' > %t/model.so.json
// RUN: not fp4-run exec %t/model.so --entry f --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=BYTES
// BYTES: fp4-run: error: {{.*}}model.so.json: not UTF-8 text
// A truncated .npy input.
// RUN: printf '{"entries": {"f": {"args": [{"kind": "memref", "dtype": "float32", "shape": [4]}], "results": []}}}' > %t/model.so.json
// RUN: printf '\223NUMPY' > %t/short.npy
// RUN: not fp4-run exec %t/model.so --entry f --input %t/short.npy --output-dir %t/out 2>&1 | FileCheck %s --implicit-check-not=Traceback --check-prefix=NPY
// NPY: fp4-run: error: cannot read {{.*}}short.npy:
