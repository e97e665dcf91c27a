//===- JitQuantizer.cpp - the compiled fp4 quantizer, JIT-run -------------===//

#include "JitQuantizer.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/InitAll.h"
#include "fp4/Pipelines/Pipelines.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;

namespace fp4quant {

/// Name of the JIT entry point; `llvm.emit_c_interface` adds the
/// `_mlir_ciface_` wrapper that takes memref descriptors by pointer.
constexpr llvm::StringLiteral kEntryPoint = "fp4_quantize";

LogicalResult userError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "fp4-quant") << message << "\n";
  return failure();
}

FailureOr<fp4::QuantSchemeAttrInterface>
parseScheme(MLIRContext *ctx, StringRef text, StringRef what) {
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
    return userError("invalid " + what + " '" + text + "': " + diagnostics);
  auto scheme = dyn_cast<fp4::QuantSchemeAttrInterface>(attr);
  if (!scheme)
    return userError(what + " '" + text +
                     "' is not an fp4 quantization scheme (expected "
                     "#fp4.mxfp4, #fp4.nvfp4, #fp4.hif4 or #fp4.mxfp4_macro)");
  return scheme;
}

void registerQuantizerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  fp4::registerAllDialects(registry);
}

namespace {

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
/// as destinations so bufferization writes them in place.
OwningOpRef<ModuleOp> buildQuantizerModule(MLIRContext *ctx,
                                           fp4::QuantizedTensorType qType,
                                           MemRefType inType,
                                           ArrayRef<ComponentInfo> outputs,
                                           bool dequantize) {
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(kEntryPoint));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  SmallVector<Type> argTypes = {inType};
  for (const ComponentInfo &out : outputs)
    argTypes.push_back(out.type);
  auto func =
      func::FuncOp::create(loc, kEntryPoint, b.getFunctionType(argTypes, {}));
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

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

/// Component arrays are rank 2 like the input, or rank 0 (tensor scale).
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

/// Size in bytes of a dense row-major buffer of `type`, or failure when its
/// elements are not whole bytes (the file ABI has no sub-byte arrays).
FailureOr<int64_t> byteSize(MemRefType type) {
  unsigned bits = type.getElementTypeBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return failure();
  return type.getNumElements() * static_cast<int64_t>(bits / 8);
}

/// Lowers `module` to the LLVM dialect with the project's CPU pipeline (or
/// the `pipeline` override).
LogicalResult lowerToLLVM(ModuleOp module, StringRef pipeline) {
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  if (pipeline.empty()) {
    fp4::buildFP4CPUPipeline(pm, fp4::FP4CPUPipelineOptions());
  } else {
    std::string parseErrors;
    llvm::raw_string_ostream errorStream(parseErrors);
    if (failed(parsePassPipeline(pipeline, pm, errorStream)))
      return userError("cannot build the lowering pipeline '" + pipeline +
                       "': " + parseErrors);
  }
  if (failed(pm.run(module)))
    return userError("lowering the quantizer failed (diagnostics above)");
  return success();
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

std::unique_ptr<JitQuantizer>
JitQuantizer::create(MLIRContext *ctx, fp4::QuantSchemeAttrInterface scheme,
                     int64_t rows, int64_t cols, Type inElement,
                     bool dequantize, StringRef pipeline, bool printIR) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<JitQuantizer> q(new JitQuantizer());
  SmallVector<int64_t> shape = {rows, cols};
  q->inType = MemRefType::get(shape, inElement);
  q->inBytes = rows * cols * (inElement.getIntOrFloatBitWidth() / 8);

  // The quantized type; its verifier runs the scheme's shape checks (e.g.
  // NVFP4 16x16 tiles need rows % 16 == 0).
  auto qType = fp4::QuantizedTensorType::getChecked(
      [&]() { return mlir::emitError(UnknownLoc::get(ctx)); }, ctx,
      ArrayRef<int64_t>(shape), scheme.getElementType(), scheme,
      /*axis=*/int64_t(1));
  if (!qType) {
    (void)userError(llvm::formatv("{0} cannot quantize a {1}x{2} tensor "
                                  "(diagnostic above)",
                                  Attribute(scheme), rows, cols));
    return nullptr;
  }
  SmallVector<StringRef> names;
  scheme.getComponentNames(names);
  SmallVector<Type> componentTypes = qType.getComponentTypes();
  if (names.size() != componentTypes.size()) {
    (void)userError(llvm::formatv("{0} names {1} components but has {2}",
                                  Attribute(scheme), names.size(),
                                  componentTypes.size()));
    return nullptr;
  }
  for (auto [name, type] : llvm::zip_equal(names, componentTypes)) {
    auto tensorType = cast<RankedTensorType>(type);
    q->outputInfos.push_back(
        {name.str(),
         MemRefType::get(tensorType.getShape(), tensorType.getElementType()),
         0});
  }
  if (dequantize)
    q->outputInfos.push_back(
        {"dequantized.f32", MemRefType::get(shape, Float32Type::get(ctx)), 0});
  for (ComponentInfo &out : q->outputInfos) {
    FailureOr<int64_t> bytes = byteSize(out.type);
    if (failed(bytes)) {
      (void)userError(llvm::formatv("component '{0}' of type {1} is not "
                                    "byte-addressable",
                                    out.name, out.type));
      return nullptr;
    }
    if (out.type.getRank() > 2) {
      (void)userError(llvm::formatv("component '{0}' has unsupported rank {1}",
                                    out.name, out.type.getRank()));
      return nullptr;
    }
    out.bytes = *bytes;
  }

  OwningOpRef<ModuleOp> module = buildQuantizerModule(
      ctx, qType, q->inType, q->outputInfos, dequantize);
  if (failed(verify(*module))) {
    (void)userError("the quantizer IR does not verify (diagnostics above)");
    return nullptr;
  }
  if (printIR)
    module->print(llvm::outs());

  // Compile: the project's pipeline, then LLVM -O3 for the host CPU.
  if (failed(lowerToLLVM(*module, pipeline)))
    return nullptr;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder) {
    (void)userError("cannot detect the host target: " +
                    llvm::toString(hostBuilder.takeError()));
    return nullptr;
  }
  auto hostMachine = hostBuilder->createTargetMachine();
  if (!hostMachine) {
    (void)userError("cannot create the host target machine: " +
                    llvm::toString(hostMachine.takeError()));
    return nullptr;
  }
  // ExecutionEngineOptions::transformer is a function_ref: keep the callable
  // alive here for the engine's creation.
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
  if (!engine) {
    (void)userError("JIT compilation failed: " +
                    llvm::toString(engine.takeError()));
    return nullptr;
  }
  // Resolve the symbol now so a missing runtime function is a compile error,
  // not a failure after the run started.
  std::string wrapper = ("_mlir_ciface_" + kEntryPoint).str();
  if (auto fn = (*engine)->lookupPacked(wrapper); !fn) {
    (void)userError("JIT compilation failed: " +
                    llvm::toString(fn.takeError()));
    return nullptr;
  }
  q->engine = std::move(*engine);
  q->compileTime = secondsSince(start);
  return q;
}

LogicalResult JitQuantizer::run(const void *input, ArrayRef<void *> outputs) {
  if (outputs.size() != outputInfos.size())
    return userError("internal error: wrong number of quantizer outputs");
  // Read-only input: to_tensor is not `writable`, so bufferization never
  // writes into it.
  SmallVector<std::shared_ptr<void>> descriptors;
  descriptors.push_back(
      *makeDescriptor(const_cast<char *>(static_cast<const char *>(input)),
                      inType));
  for (auto [info, data] : llvm::zip_equal(outputInfos, outputs))
    descriptors.push_back(
        *makeDescriptor(static_cast<char *>(data), info.type));
  // The packed wrapper takes one pointer per argument; each argument of the
  // C interface is itself a pointer to a memref descriptor.
  SmallVector<void *> descriptorPtrs = llvm::map_to_vector(
      descriptors, [](std::shared_ptr<void> &d) { return d.get(); });
  SmallVector<void *> packedArgs = llvm::map_to_vector(
      descriptorPtrs, [](void *&ptr) { return static_cast<void *>(&ptr); });
  std::string wrapper = ("_mlir_ciface_" + kEntryPoint).str();
  if (llvm::Error err = engine->invokePacked(wrapper, packedArgs))
    return userError("running the quantizer failed: " +
                     llvm::toString(std::move(err)));
  return success();
}

} // namespace fp4quant
