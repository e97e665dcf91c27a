//===- fp4-quant.cpp - offline FP4 quantizer over the compiled CPU code ---===//
//
// Quantizes a raw row-major [rows, cols] f32/bf16/f16 tensor along its last
// axis with any fp4 scheme and writes the component arrays (docs/ABI.md) as
// raw files. The quantizer is not a separate C++ implementation: the tool
// builds the same fp4.quantize/fp4.unpack IR a user program contains, lowers
// it with the project's CPU pipeline and runs it through MLIR's
// ExecutionEngine, so the bytes it writes are the bytes compiled code
// produces (tests compare them with the C++ reference and the constant
// folder).
//
// Input and outputs are memory-mapped and handed to the JIT as memref
// descriptors, so checkpoints of hundreds of MB need no extra copies.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/InitAll.h"
#include "fp4/Pipelines/Pipelines.h"
#include "fp4/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
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

cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                   cl::desc("<raw little-endian input file>"),
                                   cl::cat(toolCategory));
cl::opt<int64_t> numRows("rows", cl::Required,
                         cl::desc("Number of rows of the input tensor"),
                         cl::cat(toolCategory));
cl::opt<int64_t> numCols("cols", cl::Required,
                         cl::desc("Number of columns (the quantized axis)"),
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
cl::opt<std::string>
    outputPrefix("o", cl::Required, cl::value_desc("prefix"),
                 cl::desc("Output prefix: writes <prefix>.<component>.bin"),
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

/// Name of the JIT entry point; `llvm.emit_c_interface` adds the
/// `_mlir_ciface_` wrapper that takes memref descriptors by pointer.
constexpr llvm::StringLiteral kEntryPoint = "fp4_quantize";

/// The element count limit keeps every byte size far from int64 overflow.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// Reports a user error the way every fp4-quant error reads.
LogicalResult userError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "fp4-quant") << message << "\n";
  return failure();
}

/// Same, as the tool's exit status.
int fail(const llvm::Twine &message) {
  (void)userError(message);
  return 1;
}

/// One array the entry point reads or writes: the input, a component, or the
/// dequantized values.
struct Operand {
  std::string name;
  MemRefType type;
  int64_t bytes = 0;
  std::unique_ptr<llvm::FileOutputBuffer> output; // null for the input
  std::shared_ptr<void> descriptor; // a StridedMemRefType<char, N>
};

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

/// Size in bytes of a dense row-major buffer of `type`, or failure when its
/// elements are not whole bytes (the raw-file ABI has no sub-byte arrays).
FailureOr<int64_t> byteSize(MemRefType type) {
  unsigned bits = type.getElementTypeBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return failure();
  return type.getNumElements() * static_cast<int64_t>(bits / 8);
}

/// Parses `text` as a quantization scheme. A text without a leading `#`
/// (`mxfp4`, `nvfp4<four_over_six = true>`) names an fp4 scheme.
FailureOr<fp4::QuantSchemeAttrInterface> parseScheme(MLIRContext *ctx,
                                                     StringRef text) {
  std::string full = text.trim().str();
  if (!StringRef(full).starts_with("#"))
    full = "#fp4." + full;
  std::string diagnostics;
  Attribute attr;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        diagnostics += "; ";
      diagnostics += diag.str();
      return success();
    });
    attr = parseAttribute(full, ctx);
  }
  if (!attr)
    return userError("invalid --scheme '" + text + "': " + diagnostics);
  auto scheme = dyn_cast<fp4::QuantSchemeAttrInterface>(attr);
  if (!scheme)
    return userError("--scheme '" + text +
                     "' is not an fp4 quantization scheme (expected "
                     "#fp4.mxfp4, #fp4.nvfp4, #fp4.hif4 or #fp4.mxfp4_macro)");
  return scheme;
}

/// Builds
///   func.func @fp4_quantize(%in: memref<RxCxT>, %c0: memref<..>, ...,
///                           [%deq: memref<RxCxf32>]) {
///     %t = bufferization.to_tensor %in restrict
///     %q = fp4.quantize %t
///     %c0, ... = fp4.unpack %q
///     bufferization.materialize_in_destination %ci in restrict writable %ci
///     [%d = fp4.dequantize %q; materialize %d in %deq]
///   }
/// i.e. exactly the ops a compiled program runs, with the caller's buffers
/// as destinations so bufferization writes the files in place.
OwningOpRef<ModuleOp> buildQuantizerModule(MLIRContext *ctx,
                                           fp4::QuantizedTensorType qType,
                                           ArrayRef<Operand> operands,
                                           bool dequantize) {
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(kEntryPoint));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  SmallVector<Type> argTypes = llvm::map_to_vector(
      operands, [](const Operand &op) -> Type { return op.type; });
  auto func =
      func::FuncOp::create(loc, kEntryPoint, b.getFunctionType(argTypes, {}));
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  MemRefType inType = operands.front().type;
  Value input = bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(inType.getShape(), inType.getElementType()),
      entry->getArgument(0), /*restrict=*/true, /*writable=*/false);
  Value quantized = fp4::QuantizeOp::create(b, loc, qType, input);
  auto unpack =
      fp4::UnpackOp::create(b, loc, qType.getComponentTypes(), quantized);
  unsigned arg = 1;
  for (Value component : unpack.getResults())
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, component, entry->getArgument(arg++),
        /*restrict=*/true, /*writable=*/true);
  if (dequantize) {
    Value values = fp4::DequantizeOp::create(
        b, loc, RankedTensorType::get(qType.getShape(), b.getF32Type()),
        quantized);
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, values, entry->getArgument(arg++),
        /*restrict=*/true, /*writable=*/true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}

/// A row-major memref descriptor of rank N over `data`.
template <int N>
std::shared_ptr<void> makeDescriptor(char *data, ArrayRef<int64_t> shape) {
  auto desc = std::make_shared<StridedMemRefType<char, N>>();
  desc->basePtr = data;
  desc->data = data;
  desc->offset = 0;
  if constexpr (N > 0) {
    int64_t stride = 1;
    for (int i = N - 1; i >= 0; --i) {
      desc->sizes[i] = shape[i];
      desc->strides[i] = stride;
      stride *= shape[i];
    }
  }
  return desc;
}

/// Component tensors are rank 2 like the input, or rank 0 (tensor scale).
FailureOr<std::shared_ptr<void>> makeDescriptor(char *data, MemRefType type) {
  switch (type.getRank()) {
  case 0:
    return makeDescriptor<0>(data, type.getShape());
  case 1:
    return makeDescriptor<1>(data, type.getShape());
  case 2:
    return makeDescriptor<2>(data, type.getShape());
  default:
    return failure();
  }
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Lowers `module` to the LLVM dialect with the project's CPU pipeline (or
/// the --pipeline override).
LogicalResult lowerToLLVM(ModuleOp module) {
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  if (pipelineText.empty()) {
    fp4::buildFP4CPUPipeline(pm, fp4::FP4CPUPipelineOptions());
  } else {
    std::string parseErrors;
    llvm::raw_string_ostream errorStream(parseErrors);
    if (failed(parsePassPipeline(pipelineText, pm, errorStream)))
      return userError("cannot build the lowering pipeline '" + pipelineText +
                       "': " + parseErrors);
  }
  if (failed(pm.run(module)))
    return userError("lowering the quantizer failed (diagnostics above)");
  return success();
}

int runTool() {
  auto startTotal = std::chrono::steady_clock::now();

  if (numRows <= 0 || numCols <= 0)
    return fail(llvm::formatv("--rows and --cols must be positive, got "
                              "--rows={0} --cols={1}",
                              numRows.getValue(), numCols.getValue()));
  if (numRows > kMaxElements / numCols)
    return fail("--rows x --cols is too large");
  int64_t rows = numRows, cols = numCols;

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  fp4::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadDialect<fp4::FP4Dialect, func::FuncDialect,
                  bufferization::BufferizationDialect, memref::MemRefDialect,
                  LLVM::LLVMDialect>();

  // Diagnostics from the verifiers and the lowering name the op and the
  // reason; print them as tool errors (a SourceMgr handler would try to load
  // the raw input file as source text).
  ScopedDiagnosticHandler printer(&ctx, [](Diagnostic &diag) {
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
  });

  FailureOr<fp4::QuantSchemeAttrInterface> scheme =
      parseScheme(&ctx, schemeText);
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

  // The quantized type; its verifier runs the scheme's shape checks (e.g.
  // NVFP4 16x16 tiles need rows % 16 == 0).
  SmallVector<int64_t> shape = {rows, cols};
  auto qType = fp4::QuantizedTensorType::getChecked(
      [&]() { return mlir::emitError(UnknownLoc::get(&ctx)); }, &ctx,
      ArrayRef<int64_t>(shape), scheme->getElementType(), *scheme,
      /*axis=*/int64_t(1));
  if (!qType)
    return fail(llvm::formatv("{0} cannot quantize a {1}x{2} tensor "
                              "(diagnostic above)",
                              Attribute(*scheme), rows, cols));

  // Operands in entry-point order: input, components, [dequantized].
  SmallVector<Operand> operands;
  operands.push_back(
      {"input", MemRefType::get(shape, inElement), inBytes, nullptr, nullptr});
  SmallVector<StringRef> names;
  scheme->getComponentNames(names);
  SmallVector<Type> componentTypes = qType.getComponentTypes();
  if (names.size() != componentTypes.size())
    return fail(llvm::formatv("{0} names {1} components but has {2}",
                              Attribute(*scheme), names.size(),
                              componentTypes.size()));
  for (auto [name, type] : llvm::zip_equal(names, componentTypes)) {
    auto tensorType = cast<RankedTensorType>(type);
    operands.push_back(
        {name.str(),
         MemRefType::get(tensorType.getShape(), tensorType.getElementType()), 0,
         nullptr, nullptr});
  }
  if (writeDequantized)
    operands.push_back({"dequantized.f32",
                        MemRefType::get(shape, Float32Type::get(&ctx)), 0,
                        nullptr, nullptr});

  OwningOpRef<ModuleOp> module =
      buildQuantizerModule(&ctx, qType, operands, writeDequantized);
  if (failed(verify(*module)))
    return fail("the quantizer IR does not verify (diagnostics above)");
  if (printIR)
    module->print(llvm::outs());

  // Open every output before compiling, so a bad prefix fails fast. The
  // buffers are memory-mapped temporaries renamed into place on commit; on
  // any failure they are discarded and no partial file is left behind.
  const char *inputData = (*inputBuffer)->getBufferStart();
  for (auto [index, op] : llvm::enumerate(operands)) {
    char *data;
    if (index == 0) {
      // Read-only: to_tensor is not `writable`, so bufferization never
      // writes into the mapping.
      data = const_cast<char *>(inputData);
    } else {
      FailureOr<int64_t> bytes = byteSize(op.type);
      if (failed(bytes))
        return fail(llvm::formatv("component '{0}' of type {1} is not "
                                  "byte-addressable",
                                  op.name, op.type));
      op.bytes = *bytes;
      std::string path = outputPrefix.getValue() + "." + op.name + ".bin";
      auto buffer = llvm::FileOutputBuffer::create(path, op.bytes);
      if (!buffer)
        return fail("cannot write output file '" + path +
                    "': " + llvm::toString(buffer.takeError()));
      op.output = std::move(*buffer);
      data = reinterpret_cast<char *>(op.output->getBufferStart());
    }
    FailureOr<std::shared_ptr<void>> desc = makeDescriptor(data, op.type);
    if (failed(desc))
      return fail(llvm::formatv("component '{0}' has unsupported rank {1}",
                                op.name, op.type.getRank()));
    op.descriptor = *desc;
  }
  double buildSeconds = secondsSince(startTotal);

  // Compile: the project's pipeline, then LLVM -O3 for the host CPU.
  auto startCompile = std::chrono::steady_clock::now();
  if (failed(lowerToLLVM(*module)))
    return 1;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return fail("cannot detect the host target: " +
                llvm::toString(hostBuilder.takeError()));
  auto hostMachine = hostBuilder->createTargetMachine();
  if (!hostMachine)
    return fail("cannot create the host target machine: " +
                llvm::toString(hostMachine.takeError()));
  // ExecutionEngineOptions::transformer is a function_ref: keep the callable
  // alive here for the engine's lifetime.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                hostMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // memref.copy between non-contiguous views lowers to a call to memrefCopy
  // in MLIR's C runner utils; make it resolvable when the library is there.
  SmallVector<StringRef, 1> runtimeLibs;
  if (llvm::sys::fs::exists(FP4_MLIR_C_RUNNER_UTILS))
    runtimeLibs.push_back(FP4_MLIR_C_RUNNER_UTILS);
  engineOptions.sharedLibPaths = runtimeLibs;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine)
    return fail("JIT compilation failed: " +
                llvm::toString(engine.takeError()));
  std::string wrapper = ("_mlir_ciface_" + kEntryPoint).str();
  // Resolve the symbol now so a missing runtime function is a compile error,
  // not a failure after the run started.
  if (auto fn = (*engine)->lookupPacked(wrapper); !fn)
    return fail("JIT compilation failed: " + llvm::toString(fn.takeError()));
  double compileSeconds = secondsSince(startCompile);

  // Run: the packed wrapper takes one pointer per argument; each argument of
  // the C interface is itself a pointer to a memref descriptor.
  auto startRun = std::chrono::steady_clock::now();
  SmallVector<void *> descriptorPtrs = llvm::map_to_vector(
      operands, [](Operand &op) { return op.descriptor.get(); });
  SmallVector<void *> packedArgs = llvm::map_to_vector(
      descriptorPtrs, [](void *&ptr) { return static_cast<void *>(&ptr); });
  if (llvm::Error err = (*engine)->invokePacked(wrapper, packedArgs))
    return fail("running the quantizer failed: " +
                llvm::toString(std::move(err)));
  double runSeconds = secondsSince(startRun);

  int64_t written = 0;
  for (Operand &op : llvm::drop_begin(operands)) {
    if (llvm::Error err = op.output->commit())
      return fail("cannot write output file '" + op.output->getPath() +
                  "': " + llvm::toString(std::move(err)));
    written += op.bytes;
  }

  std::string schemeString;
  llvm::raw_string_ostream(schemeString) << Attribute(*scheme);
  llvm::outs() << llvm::formatv(
      "fp4-quant: {0} {1}x{2} {3} -> {4}.*.bin: {5} files, {6} bytes "
      "(build {7:f3} s, compile {8:f3} s, run {9:f3} s, total {10:f3} s)\n",
      schemeString, rows, cols, inElement, outputPrefix.getValue(),
      operands.size() - 1, written, buildSeconds, compileSeconds, runSeconds,
      secondsSince(startTotal));
  return 0;
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
      "fp4-quant: quantize a raw [rows, cols] tensor along its last axis with "
      "the compiled fp4 CPU code\n");
  return runTool();
}
