//===- PassOptionCheck.h - name the pass in pass-option errors --*- C++ -*-===//
//
// Upstream mlir-opt reports `-fp4-quantize=schem=nvfp4` as
// "<Pass-Options-Parser>: no such option schem", naming neither the pass
// nor what it accepts. fp4-opt checks every `-<pass>=<options>` flag first
// and, for one that does not parse, prints which pass, why, and the pass's
// options with their defaults.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4_OPT_PASSOPTIONCHECK_H
#define FP4_TOOLS_FP4_OPT_PASSOPTIONCHECK_H

namespace fp4opt {

/// Checks the options of every registered pass or pipeline given as
/// `-name=options` / `--name=options`. Returns false after printing
/// `<tool>: error: ...` for the first flag whose options do not parse.
bool checkPassOptionFlags(int argc, char **argv);

} // namespace fp4opt

#endif // FP4_TOOLS_FP4_OPT_PASSOPTIONCHECK_H
