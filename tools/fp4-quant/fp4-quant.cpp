//===- fp4-quant.cpp - offline FP4 quantizer over the compiled CPU code ---===//
//
// Quantizes a raw row-major [rows, cols] f32/bf16/f16 tensor along its last
// axis with any fp4 scheme and writes the component arrays (docs/ABI.md) as
// raw files, or quantizes the weights of a safetensors checkpoint
// (Checkpoint.h). The quantizer is not a separate C++ implementation: the tool
// builds the same fp4.quantize/fp4.unpack IR a user program contains, lowers
// it with the project's CPU pipeline and runs it through MLIR's
// ExecutionEngine, so the bytes it writes are the bytes compiled code
// produces (tests compare them with the C++ reference and the constant
// folder).
//
// Input and outputs are memory-mapped and handed to the JIT as memref
// descriptors, so tensors of hundreds of MB need no extra copies.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "JitQuantizer.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/InitAll.h"
#include "fp4/Version.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <string>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class InputType { F32, BF16, F16 };

cl::OptionCategory toolCategory("fp4-quant options");

cl::opt<std::string> inputFilename(
    cl::Positional, cl::Required,
    cl::desc("<raw little-endian tensor file | .safetensors checkpoint: a "
             "file, a model.safetensors.index.json or a folder>"),
    cl::cat(toolCategory));
cl::opt<int64_t> numRows("rows",
                         cl::desc("Number of rows of a raw input tensor"),
                         cl::cat(toolCategory));
cl::opt<int64_t> numCols("cols",
                         cl::desc("Number of columns (the quantized axis) of "
                                  "a raw input tensor"),
                         cl::cat(toolCategory));
cl::opt<InputType> inputType(
    "input-type", cl::desc("Element type of the input file"),
    cl::values(clEnumValN(InputType::F32, "f32", "32-bit IEEE floats"),
               clEnumValN(InputType::BF16, "bf16", "bfloat16"),
               clEnumValN(InputType::F16, "f16", "IEEE half")),
    cl::init(InputType::F32), cl::cat(toolCategory));
cl::opt<std::string>
    schemeText("scheme",
               cl::desc("Quantization scheme: an attribute such as "
                        "'#fp4.mxfp4<scale_rounding = even>' or a short name "
                        "(mxfp4, nvfp4, hif4, mxfp4_macro)"),
               cl::init("mxfp4"), cl::cat(toolCategory));
cl::opt<std::string> outputPrefix(
    "o", cl::Required, cl::value_desc("prefix|folder"),
    cl::desc("Output prefix of a raw tensor (writes "
             "<prefix>.<component>.bin) or output folder of a checkpoint"),
    cl::cat(toolCategory));
cl::opt<std::string> layoutName(
    "layout", cl::init("compressed-tensors"),
    cl::desc("Checkpoint layout: compressed-tensors (mxfp4/nvfp4 "
             "pack-quantized, read by vLLM) or fp4 (docs/ABI.md components)"),
    cl::cat(toolCategory));
cl::list<std::string> includePatterns(
    "include", cl::CommaSeparated, cl::value_desc("pattern"),
    cl::desc("Quantize the tensors whose names match (glob, or re:<regex>); "
             "default: 2-D *.weight except embeddings and lm_head"),
    cl::cat(toolCategory));
cl::list<std::string> excludePatterns(
    "exclude", cl::CommaSeparated, cl::value_desc("pattern"),
    cl::desc("Leave the tensors whose names match unquantized"),
    cl::cat(toolCategory));
cl::opt<bool> quiet("quiet",
                    cl::desc("No progress lines and no summary line"),
                    cl::cat(toolCategory));
cl::opt<bool> writeDequantized(
    "dequantize",
    cl::desc(
        "Also write the dequantized values to <prefix>.dequantized.f32.bin"),
    cl::cat(toolCategory));
cl::opt<bool> printIR("print-ir",
                      cl::desc("Print the quantizer IR before lowering"),
                      cl::cat(toolCategory));
cl::opt<std::string> pipelineText(
    "pipeline", cl::Hidden,
    cl::desc("Lower with this pass pipeline instead of fp4-pipeline-cpu "
             "(textual, rooted at builtin.module)"),
    cl::cat(toolCategory));

/// The element count limit keeps every byte size far from int64 overflow.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// Same as fp4quant::userError, as the tool's exit status.
int fail(const llvm::Twine &message) {
  (void)fp4quant::userError(message);
  return 1;
}

Type elementTypeOf(MLIRContext *ctx, InputType type) {
  switch (type) {
  case InputType::F32:
    return Float32Type::get(ctx);
  case InputType::BF16:
    return BFloat16Type::get(ctx);
  case InputType::F16:
    return Float16Type::get(ctx);
  }
  llvm_unreachable("unknown input type");
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A checkpoint is a .safetensors file, a safetensors index, or a folder
/// given without --rows/--cols (with them, a folder is a raw input that is
/// not a regular file, reported as such); anything else is a raw tensor.
bool isCheckpointPath(StringRef path) {
  if (path.ends_with(".safetensors") ||
      path.ends_with(".safetensors.index.json"))
    return true;
  return llvm::sys::fs::is_directory(path) &&
         numRows.getNumOccurrences() == 0 && numCols.getNumOccurrences() == 0;
}

/// Diagnostics from the verifiers and the lowering name the op and the
/// reason; print them as tool errors (a SourceMgr handler would try to load
/// the raw input file as source text).
LogicalResult printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    llvm::WithColor::error(os, "fp4-quant");
    break;
  case DiagnosticSeverity::Warning:
    llvm::WithColor::warning(os, "fp4-quant");
    break;
  case DiagnosticSeverity::Note:
    llvm::WithColor::note(os, "fp4-quant");
    break;
  case DiagnosticSeverity::Remark:
    llvm::WithColor::remark(os, "fp4-quant");
    break;
  }
  os << diag << "\n";
  for (Diagnostic &note : diag.getNotes())
    llvm::WithColor::note(os, "fp4-quant") << note << "\n";
  return success();
}

/// Raw mode: one [rows, cols] tensor file -> PREFIX.<component>.bin.
int runRawTensor(MLIRContext &ctx) {
  auto startTotal = std::chrono::steady_clock::now();
  if (numRows.getNumOccurrences() == 0 || numCols.getNumOccurrences() == 0)
    return fail("--rows and --cols are required for a raw tensor file "
                "(a .safetensors checkpoint needs neither)");
  if (numRows <= 0 || numCols <= 0)
    return fail(llvm::formatv("--rows and --cols must be positive, got "
                              "--rows={0} --cols={1}",
                              numRows.getValue(), numCols.getValue()));
  if (numRows > kMaxElements / numCols)
    return fail("--rows x --cols is too large");
  int64_t rows = numRows, cols = numCols;

  FailureOr<fp4::QuantSchemeAttrInterface> scheme =
      fp4quant::parseScheme(&ctx, schemeText);
  if (failed(scheme))
    return 1;
  int64_t multiple = scheme->getAxisMultiple();
  if (cols % multiple != 0)
    return fail(llvm::formatv(
        "--cols={0} is not a multiple of {1}, the block structure of "
        "{2} along the quantized axis",
        cols, multiple, Attribute(*scheme)));

  // The input: check size before mapping so the message names both numbers.
  Type inElement = elementTypeOf(&ctx, inputType);
  int64_t inBytes = rows * cols * (inElement.getIntOrFloatBitWidth() / 8);
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(inputFilename, status))
    return fail("cannot read input file '" + inputFilename +
                "': " + ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return fail("input '" + inputFilename +
                "' is not a regular file (a raw tensor file is needed)");
  uint64_t fileSize = status.getSize();
  if (static_cast<int64_t>(fileSize) != inBytes)
    return fail(llvm::formatv(
        "input file '{0}' has {1} bytes, but a {2}x{3} {4} tensor "
        "needs {5}",
        inputFilename.getValue(), fileSize, rows, cols, inElement, inBytes));
  auto inputBuffer = llvm::MemoryBuffer::getFile(
      inputFilename, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!inputBuffer)
    return fail("cannot read input file '" + inputFilename +
                "': " + inputBuffer.getError().message());

  // The outputs are memory-mapped temporaries renamed into place on commit;
  // on any failure they are discarded and no partial file is left behind.
  double buildSeconds = secondsSince(startTotal);
  auto quantizer = fp4quant::JitQuantizer::create(
      &ctx, *scheme, rows, cols, inElement, writeDequantized, pipelineText,
      printIR);
  if (!quantizer)
    return 1;
  SmallVector<std::unique_ptr<llvm::FileOutputBuffer>> outputs;
  SmallVector<void *> outputData;
  for (const fp4quant::ComponentInfo &c : quantizer->outputs()) {
    std::string path = outputPrefix.getValue() + "." + c.name + ".bin";
    auto buffer = llvm::FileOutputBuffer::create(path, c.bytes);
    if (!buffer)
      return fail("cannot write output file '" + path +
                  "': " + llvm::toString(buffer.takeError()));
    outputData.push_back((*buffer)->getBufferStart());
    outputs.push_back(std::move(*buffer));
  }

  auto startRun = std::chrono::steady_clock::now();
  if (failed(quantizer->run((*inputBuffer)->getBufferStart(), outputData)))
    return 1;
  double runSeconds = secondsSince(startRun);

  int64_t written = 0;
  for (auto [buffer, c] : llvm::zip_equal(outputs, quantizer->outputs())) {
    if (llvm::Error err = buffer->commit())
      return fail("cannot write output file '" + buffer->getPath() +
                  "': " + llvm::toString(std::move(err)));
    written += c.bytes;
  }

  std::string schemeString;
  llvm::raw_string_ostream(schemeString) << Attribute(*scheme);
  llvm::outs() << llvm::formatv(
      "fp4-quant: {0} {1}x{2} {3} -> {4}.*.bin: {5} files, {6} bytes "
      "(build {7:f3} s, compile {8:f3} s, run {9:f3} s, total {10:f3} s)\n",
      schemeString, rows, cols, inElement, outputPrefix.getValue(),
      outputs.size(), written, buildSeconds, quantizer->compileSeconds(),
      runSeconds, secondsSince(startTotal));
  return 0;
}

int runTool() {
  DialectRegistry registry;
  fp4quant::registerQuantizerDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadDialect<fp4::FP4Dialect, func::FuncDialect,
                  bufferization::BufferizationDialect, memref::MemRefDialect,
                  LLVM::LLVMDialect>();
  ScopedDiagnosticHandler printer(&ctx, printDiagnostic);

  if (!isCheckpointPath(inputFilename)) {
    if (!includePatterns.empty() || !excludePatterns.empty() ||
        layoutName.getNumOccurrences())
      return fail("--include, --exclude and --layout apply to .safetensors "
                  "checkpoints; '" +
                  inputFilename + "' is read as a raw tensor file");
    return runRawTensor(ctx);
  }
  if (numRows.getNumOccurrences() || numCols.getNumOccurrences() ||
      inputType.getNumOccurrences() || writeDequantized || printIR)
    return fail("--rows, --cols, --input-type, --dequantize and --print-ir "
                "apply to raw tensor files; a checkpoint's header gives "
                "shapes and dtypes");
  fp4quant::CheckpointOptions options;
  options.source = inputFilename;
  options.destination = outputPrefix;
  options.scheme = schemeText;
  options.layout = layoutName;
  options.include.assign(includePatterns.begin(), includePatterns.end());
  options.exclude.assign(excludePatterns.begin(), excludePatterns.end());
  options.quiet = quiet;
  options.pipeline = pipelineText;
  return fp4quant::quantizeCheckpoint(ctx, options);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // For --pipeline: any upstream or fp4 pass by name.
  registerAllPasses();
  fp4::registerAllPasses();
  cl::HideUnrelatedOptions(toolCategory);
  cl::AddExtraVersionPrinter(fp4::printFP4Version);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp4-quant: quantize a raw [rows, cols] tensor, or the weights of a "
      ".safetensors checkpoint, along the last axis with the compiled fp4 CPU "
      "code\n");
  return runTool();
}
