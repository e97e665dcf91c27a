//===- JitQuantizer.h - the compiled fp4 quantizer, JIT-run -----*- C++ -*-===//
//
// One compiled quantizer for one [rows, cols] input shape and element type:
// it builds the fp4.quantize/fp4.unpack IR a user program contains, lowers it
// with the project's CPU pipeline and JIT-compiles it with MLIR's
// ExecutionEngine. Both the raw-tensor mode of fp4-quant and its checkpoint
// mode run it, so every byte they write is a byte compiled code produces.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4QUANT_JITQUANTIZER_H
#define FP4_TOOLS_FP4QUANT_JITQUANTIZER_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>

namespace fp4quant {

/// Reports a user error the way every fp4-quant error reads
/// (`fp4-quant: error: <message>`); returns failure.
mlir::LogicalResult userError(const llvm::Twine &message);

/// Parses `text` as a quantization scheme. A text without a leading `#`
/// (`mxfp4`, `nvfp4<four_over_six = true>`) names an fp4 scheme. `what`
/// names the text in errors (`--scheme`).
mlir::FailureOr<mlir::fp4::QuantSchemeAttrInterface>
parseScheme(mlir::MLIRContext *ctx, llvm::StringRef text,
            llvm::StringRef what = "--scheme");

/// Registers the dialects and translations the quantizer needs and installs
/// no diagnostic handler (the caller does).
void registerQuantizerDialects(mlir::DialectRegistry &registry);

/// One component array of the quantized tensor (or the dequantized values).
struct ComponentInfo {
  std::string name;      // "codes", "scales", ... or "dequantized.f32"
  mlir::MemRefType type; // shape and element type of the array
  int64_t bytes = 0;     // dense row-major size
};

class JitQuantizer {
public:
  /// Builds, lowers and compiles the quantizer of a [rows, cols] tensor of
  /// `inElement` (f32, bf16 or f16) with `scheme` along axis 1. Reports
  /// errors (userError) and returns null on failure. `pipeline`, if not
  /// empty, replaces fp4-pipeline-cpu; `printIR` prints the module first.
  static std::unique_ptr<JitQuantizer>
  create(mlir::MLIRContext *ctx, mlir::fp4::QuantSchemeAttrInterface scheme,
         int64_t rows, int64_t cols, mlir::Type inElement, bool dequantize,
         llvm::StringRef pipeline = "", bool printIR = false);

  /// The output arrays in the order run() takes them.
  llvm::ArrayRef<ComponentInfo> outputs() const { return outputInfos; }
  int64_t inputBytes() const { return inBytes; }
  double compileSeconds() const { return compileTime; }

  /// Quantizes `input` (a dense row-major [rows, cols] array) into
  /// `outputs[i]` (outputs()[i].bytes each). Pointers must be aligned to
  /// their element size.
  mlir::LogicalResult run(const void *input, llvm::ArrayRef<void *> outputs);

private:
  JitQuantizer() = default;
  mlir::MemRefType inType;
  int64_t inBytes = 0;
  llvm::SmallVector<ComponentInfo> outputInfos;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  double compileTime = 0;
};

} // namespace fp4quant

#endif // FP4_TOOLS_FP4QUANT_JITQUANTIZER_H
