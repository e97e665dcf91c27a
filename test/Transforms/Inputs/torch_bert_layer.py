#!/usr/bin/env python3
# Writes one BERT encoder layer in the form torch-mlir's fx importer emits
# (linalg-on-tensors): Linear on a 3-D input = transposed weight broadcast by
# a linalg.generic into linalg.batch_matmul; attention heads by
# expand_shape / transpose / collapse_shape around batch_matmul.
import argparse
import struct
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=2)
parser.add_argument("--tokens", type=int, default=64)
parser.add_argument("--hidden", type=int, default=384)
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--ffn", type=int, default=768)
args = parser.parse_args()
B, S, H, NH, F = args.batch, args.tokens, args.hidden, args.heads, args.ffn
D = H // NH
resources = []


def blob(name, rows, cols, seed):
    # Deterministic values in (-0.05, 0.05) (a 32-bit LCG), little-endian f32
    # behind the 4-byte alignment header of a dense_resource blob.
    state, data = seed, bytearray()
    for _ in range(rows * cols):
        state = (state * 1664525 + 1013904223) % 2**32
        data += struct.pack("<f", (state / 2**32 - 0.5) * 0.1)
    resources.append(f'      {name}: "0x04000000{data.hex()}"')


out = []
w = out.append
w("// One BERT encoder layer (hidden %d, %d heads of %d, FFN %d, batch %d x %d tokens)" % (H, NH, D, F, B, S))
w("// in the linalg-on-tensors form of torch-mlir's fx importer, each contraction")
w("// located by a NameLoc with its module path (fp4.torch.export). Hand-written;")
w("// weights are dense_resource blobs (generated: see test/Transforms/Inputs/torch_bert_layer.py).")
w("#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>")
w("#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>")
w("module {")
w("  func.func @forward(%arg0: tensor<{B}x{S}x{H}xf32>) -> tensor<{B}x{S}x{H}xf32> {{".format(B=B,S=S,H=H))
w("    %zero = arith.constant 0.000000e+00 : f32")
n = [0]
def linear(x, k, nout, name, val):
    i = n[0]; n[0] += 1
    blob(f"torch_tensor_{name.replace('.', '_')}_weight", nout, k, i + 1)
    w(f"    %w{i} = arith.constant dense_resource<torch_tensor_{name.replace('.', '_')}_weight> : tensor<{nout}x{k}xf32>")
    w(f"    %e{i} = tensor.empty() : tensor<{k}x{nout}xf32>")
    w(f"    %t{i} = linalg.transpose ins(%w{i} : tensor<{nout}x{k}xf32>) outs(%e{i} : tensor<{k}x{nout}xf32>) permutation = [1, 0]")
    w(f"    %be{i} = tensor.empty() : tensor<{B}x{k}x{nout}xf32>")
    w(f"    %b{i} = linalg.generic {{indexing_maps = [#bcast, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} ins(%t{i} : tensor<{k}x{nout}xf32>) outs(%be{i} : tensor<{B}x{k}x{nout}xf32>) {{")
    w(f"    ^bb0(%in: f32, %out: f32):")
    w(f"      linalg.yield %in : f32")
    w(f"    }} -> tensor<{B}x{k}x{nout}xf32>")
    w(f"    %oe{i} = tensor.empty() : tensor<{B}x{S}x{nout}xf32>")
    w(f"    %f{i} = linalg.fill ins(%zero : f32) outs(%oe{i} : tensor<{B}x{S}x{nout}xf32>) -> tensor<{B}x{S}x{nout}xf32>")
    w(f"    %y{i} = linalg.batch_matmul ins({x}, %b{i} : tensor<{B}x{S}x{k}xf32>, tensor<{B}x{k}x{nout}xf32>) outs(%f{i} : tensor<{B}x{S}x{nout}xf32>) -> tensor<{B}x{S}x{nout}xf32> loc(\"encoder.layer.0.{name}\"(\"torch/nn/modules/linear.py\":134:0))")
    return f"%y{i}"
def heads(x, tag, transposeLast=False):
    w(f"    %{tag}x = tensor.expand_shape {x} [[0], [1], [2, 3]] output_shape [{B}, {S}, {NH}, {D}] : tensor<{B}x{S}x{H}xf32> into tensor<{B}x{S}x{NH}x{D}xf32>")
    w(f"    %{tag}e = tensor.empty() : tensor<{B}x{NH}x{S}x{D}xf32>")
    w(f"    %{tag}t = linalg.transpose ins(%{tag}x : tensor<{B}x{S}x{NH}x{D}xf32>) outs(%{tag}e : tensor<{B}x{NH}x{S}x{D}xf32>) permutation = [0, 2, 1, 3]")
    src, shape = f"%{tag}t", (S, D)
    if transposeLast:
        w(f"    %{tag}e2 = tensor.empty() : tensor<{B}x{NH}x{D}x{S}xf32>")
        w(f"    %{tag}t2 = linalg.transpose ins(%{tag}t : tensor<{B}x{NH}x{S}x{D}xf32>) outs(%{tag}e2 : tensor<{B}x{NH}x{D}x{S}xf32>) permutation = [0, 1, 3, 2]")
        src, shape = f"%{tag}t2", (D, S)
    w(f"    %{tag}c = tensor.collapse_shape {src} [[0, 1], [2], [3]] : tensor<{B}x{NH}x{shape[0]}x{shape[1]}xf32> into tensor<{B*NH}x{shape[0]}x{shape[1]}xf32>")
    return f"%{tag}c"
def bmm(a, b, m, k, nn, name, tag):
    w(f"    %{tag}o = tensor.empty() : tensor<{B*NH}x{m}x{nn}xf32>")
    w(f"    %{tag}f = linalg.fill ins(%zero : f32) outs(%{tag}o : tensor<{B*NH}x{m}x{nn}xf32>) -> tensor<{B*NH}x{m}x{nn}xf32>")
    w(f"    %{tag} = linalg.batch_matmul ins({a}, {b} : tensor<{B*NH}x{m}x{k}xf32>, tensor<{B*NH}x{k}x{nn}xf32>) outs(%{tag}f : tensor<{B*NH}x{m}x{nn}xf32>) -> tensor<{B*NH}x{m}x{nn}xf32> loc(\"encoder.layer.0.attention.self\"(\"torch/nn/functional.py\":5350:0))")
    return f"%{tag}"
q = linear("%arg0", H, H, "attention.self.query", "1.0e-02")
k = linear("%arg0", H, H, "attention.self.key", "2.0e-02")
v = linear("%arg0", H, H, "attention.self.value", "3.0e-02")
qh = heads(q, "qh"); kh = heads(k, "kh", True); vh = heads(v, "vh")
sc = bmm(qh, kh, S, D, S, "scores", "scores")
ctx = bmm(sc, vh, S, S, D, "context", "ctx")
w(f"    %cx = tensor.expand_shape {ctx} [[0, 1], [2], [3]] output_shape [{B}, {NH}, {S}, {D}] : tensor<{B*NH}x{S}x{D}xf32> into tensor<{B}x{NH}x{S}x{D}xf32>")
w(f"    %ce = tensor.empty() : tensor<{B}x{S}x{NH}x{D}xf32>")
w(f"    %ct = linalg.transpose ins(%cx : tensor<{B}x{NH}x{S}x{D}xf32>) outs(%ce : tensor<{B}x{S}x{NH}x{D}xf32>) permutation = [0, 2, 1, 3]")
w(f"    %cc = tensor.collapse_shape %ct [[0], [1], [2, 3]] : tensor<{B}x{S}x{NH}x{D}xf32> into tensor<{B}x{S}x{H}xf32>")
o = linear("%cc", H, H, "attention.output.dense", "4.0e-02")
up = linear(o, H, F, "intermediate.dense", "5.0e-02")
down = linear(up, F, H, "output.dense", "6.0e-02")
w(f"    return {down} : tensor<{B}x{S}x{H}xf32>")
w("  }")
w("}")
w("{-#")
w("  dialect_resources: {")
w("    builtin: {")
w(",\n".join(resources))
w("    }")
w("  }")
w("#-}")
sys.stdout.write("\n".join(out) + "\n")
