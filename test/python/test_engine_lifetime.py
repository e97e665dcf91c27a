"""fp4.ir.ExecutionEngine keeps engines that loaded MLIR's async runtime
alive: destroying one resets the runtime's process-wide default for good,
and the next engine's parallel loops would crash (segfault) on their first
call. The scenario runs in a subprocess, so a regression shows as a crash
of that process, not of the test runner: two engines of
fp4-pipeline-cpu{fast=true} code (async parallel loops) one after the
other, the first deleted and collected before the second is built.
"""

import os
import subprocess
import sys

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

SCRIPT = r"""
import gc, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from fp4 import ir

TEXT = '''
func.func @scale(%x: tensor<64x256xf32>) -> tensor<64x256xf32> attributes {llvm.emit_c_interface} {
  %e = tensor.empty() : tensor<64x256xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
'''

def run_once(seed):
    ctx = ir.Context()
    module = ctx.parse_module(TEXT)
    ir.run_pipeline(module, "fp4-pipeline-cpu{fast=true}")
    assert "async" in module.to_string() or "mlirAsync" in module.to_string(), \
        "the lowering has no async parallel loop: the test checks nothing"
    engine = ir.ExecutionEngine(module, shared_libs=ir.cpu_runtime_libraries())
    x = np.random.default_rng(seed).standard_normal((64, 256)).astype(np.float32)
    y = engine.invoke("scale", x, results=(ir.MemRef(np.float32, 2),))
    assert np.array_equal(np.array(y), x * x)
    return engine

for seed in range(3):
    engine = run_once(seed)
    del engine
    gc.collect()
print("ok")
"""


def test_engines_with_the_async_runtime_outlive_their_python_objects():
    env = dict(os.environ)
    env.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
    run = subprocess.run([sys.executable, "-c", SCRIPT,
                          os.path.join(ROOT, "python")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    assert run.stdout.strip().endswith("ok")
