// Recipes that cannot be used fail fp4-quantize with one error naming the
// file (or the attribute), the rule and the key (docs/Recipes.md).
// RUN: split-file %s %t
// RUN: fp4-opt %t/missing.mlir -fp4-quantize="recipe=%t/does-not-exist.json" -verify-diagnostics
// RUN: fp4-opt %t/malformed.mlir -fp4-quantize="recipe=%t/malformed.json" -verify-diagnostics
// RUN: fp4-opt %t/unknown-key.mlir -fp4-quantize="recipe=%t/unknown-key.json" -verify-diagnostics
// RUN: fp4-opt %t/bad-scheme.mlir -fp4-quantize="recipe=%t/bad-scheme.json" -verify-diagnostics
// RUN: fp4-opt %t/rotate-size.mlir -fp4-quantize="recipe=%t/rotate-size.json" -verify-diagnostics
// RUN: fp4-opt %t/outlier-k.mlir -fp4-quantize="recipe=%t/outlier-k.json" -verify-diagnostics
// RUN: fp4-opt %t/macro-block.mlir -fp4-quantize="recipe=%t/macro-block.json" -verify-diagnostics
// RUN: fp4-opt %t/residual-k.mlir -fp4-quantize="recipe=%t/residual-k.json" -verify-diagnostics
// RUN: fp4-opt %t/bad-glob.mlir -fp4-quantize="recipe=%t/bad-glob.json" -verify-diagnostics
// RUN: fp4-opt %t/bad-kind.mlir -fp4-quantize="recipe=%t/bad-kind.json" -verify-diagnostics
// RUN: fp4-opt %t/version.mlir -fp4-quantize="recipe=%t/version.json" -verify-diagnostics
// RUN: fp4-opt %t/no-rules.mlir -fp4-quantize="recipe=%t/no-rules.json" -verify-diagnostics
// RUN: fp4-opt %t/wrong-type.mlir -fp4-quantize="recipe=%t/wrong-type.json" -verify-diagnostics
// RUN: fp4-opt %t/two-level.mlir -fp4-quantize="recipe=%t/two-level.json" -verify-diagnostics
// RUN: fp4-opt %t/with-scheme.mlir -fp4-quantize="recipe=%t/no-rules.json scheme=nvfp4" -verify-diagnostics
// RUN: fp4-opt %t/attribute.mlir -fp4-quantize -verify-diagnostics
// RUN: fp4-opt %t/per-op.mlir -fp4-rotate -verify-diagnostics

//--- missing.mlir
// expected-error-re @below {{fp4-quantize: cannot read recipe '{{.*}}does-not-exist.json': No such file or directory}}
module {}

//--- malformed.json
{
  "version": 1,
  "rules": [ {"scheme": "mxfp4"} }
}
//--- malformed.mlir
// expected-error-re @below {{fp4-quantize: recipe '{{.*}}malformed.json': [3:34, byte={{[0-9]+}}]: Expected , or ] after array element}}
module {}

//--- unknown-key.json
{"version": 1, "rules": [{"name": "a", "scheme": "mxfp4"},
                         {"name": "attn", "scheme": "mxfp4", "rotation": {}}]}
//--- unknown-key.mlir
// expected-error-re @below {{fp4-quantize: recipe '{{.*}}unknown-key.json': rule 1 ('attn'): rotation: unknown key (expected one of: name, match, scheme, fallback, operands, rotate, macro_scale, outlier_fallback, residual)}}
module {}

//--- bad-scheme.json
{"version": 1, "rules": [{"name": "ffn", "scheme": "mxfp5"}]}
//--- bad-scheme.mlir
// expected-error-re @below {{recipe '{{.*}}bad-scheme.json': rule 0 ('ffn'): scheme: invalid scheme 'mxfp5': unknown attribute `mxfp5` in dialect `fp4`}}
module {}

//--- rotate-size.json
{"version": 1, "rules": [{"scheme": "mxfp4", "rotate": {"size": 48}}]}
//--- rotate-size.mlir
// expected-error-re @below {{recipe '{{.*}}rotate-size.json': rule 0 ('rule 0'): rotate.size: size 48 is not a power of two}}
module {}

//--- outlier-k.json
{"version": 1, "rules": [{"name": "o", "scheme": "mxfp4", "outlier_fallback": {"k": 3}}]}
//--- outlier-k.mlir
// expected-error-re @below {{recipe '{{.*}}outlier-k.json': rule 0 ('o'): outlier_fallback.k: k = 3 is not 1, 2 or 4}}
module {}

//--- macro-block.json
{"version": 1, "rules": [{"name": "m", "scheme": "mxfp4", "macro_scale": {"macro_block": 100}}]}
//--- macro-block.mlir
// expected-error-re @below {{recipe '{{.*}}macro-block.json': rule 0 ('m'): macro_scale.macro_block: {{.*}}100}}
module {}

//--- residual-k.json
{"version": 1, "rules": [{"name": "r", "scheme": "mxfp4", "residual": {"sparsity": "2:4", "k": 2}}]}
//--- residual-k.mlir
// expected-error-re @below {{recipe '{{.*}}residual-k.json': rule 0 ('r'): residual.k: applies to sparsity topk only (2:4 keeps 2 of every 4)}}
module {}

//--- bad-glob.json
{"version": 1, "ignore": ["encoder.[layer"], "rules": []}
//--- bad-glob.mlir
// expected-error-re @below {{recipe '{{.*}}bad-glob.json': ignore[0]: invalid glob 'encoder.[layer': {{.*}}}}
module {}

//--- bad-kind.json
{"version": 1, "rules": [{"name": "k", "match": {"kind": "weights"}, "scheme": "mxfp4"}]}
//--- bad-kind.mlir
// expected-error-re @below {{recipe '{{.*}}bad-kind.json': rule 0 ('k'): match.kind: 'weights' is not weight, activation or any}}
module {}

//--- version.json
{"version": 2, "rules": []}
//--- version.mlir
// expected-error-re @below {{recipe '{{.*}}version.json': version: version 2 is not supported (expected 1)}}
module {}

//--- no-rules.json
{"version": 1}
//--- no-rules.mlir
// expected-error-re @below {{recipe '{{.*}}no-rules.json': rules: missing (an array of rules)}}
module {}

//--- wrong-type.json
{"version": 1, "rules": [{"name": "s", "scheme": "mxfp4", "match": {"k": {"min": "64"}}}]}
//--- wrong-type.mlir
// expected-error-re @below {{recipe '{{.*}}wrong-type.json': rule 0 ('s'): match.k.min: expected an integer, got a string}}
module {}

//--- two-level.json
{"version": 1, "rules": [{"name": "t", "scheme": "mxfp4", "rotate": {"mode": "two-level"}}]}
//--- two-level.mlir
// expected-error-re @below {{recipe '{{.*}}two-level.json': rule 0 ('t'): rotate.mode: 'two-level' is not randomized or deterministic (two-level needs calibration data}}
module {}

//--- with-scheme.mlir
// expected-error @below {{fp4-quantize: recipe= chooses the scheme and operands per contraction; drop scheme= / operands=}}
module {}

//--- attribute.mlir
// expected-error @below {{fp4-quantize: fp4.recipe attribute: rule 0 ('x'): operands: 'all' is not weights, activations or both}}
module attributes {fp4.recipe = {version = 1 : i64, rules = [{name = "x", scheme = "mxfp4", operands = "all"}]}} {}

//--- per-op.mlir
// A hand-written per-op fp4.recipe is checked by the pass reading it.
func.func @per_op(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %qa = fp4.quantize %a : tensor<16x64xf32> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qb = fp4.quantize %b : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-error @below {{'fp4.matmul' op fp4-rotate: invalid fp4.recipe: rotate.seed: expected an integer, got a string}}
  %r = fp4.matmul %qa, %qb {fp4.recipe = {rotate = {seed = "0"}}} : !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
