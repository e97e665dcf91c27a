//===- FP4ToGPUPass.cpp - convert-fp4-to-gpu ------------------------------===//
//
// For each supported fp4 op (static rank-2 shapes, blocked along the last
// axis) the pass
//  1. describes the computation as a kernel spec (KernelBuilders.h) whose
//     arguments are the op's buffers in manifest order: operands expanded
//     to their ABI components, then the result components;
//  2. asks the kernel families in order of preference for a plan;
//  3. replaces the op with a call to a private launch function taking the
//     op's buffers (memrefs), declared with the plan as an attribute;
//     fp4-gpu-materialize-launches (MaterializeLaunches.cpp) writes its body
//     after bufferization: copy every input buffer to a fresh device
//     buffer, allocate (and zero) the result and scratch buffers, launch,
//     copy the results back, free, wait.
// Everything stays on tensors outside the launches (bufferization.to_buffer
// / to_tensor at the boundary, fp4.unpack / fp4.pack for quantized values),
// so the host side continues through the usual one-shot bufferization.
//
// Copies per op are what a standalone, host-memory calling convention
// needs; the Python path launches the same kernels on device tensors
// without them (docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/CorrectionToGPU.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_CONVERTFP4TOGPU
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// Chip name -> target facts. The PTX versions are LLVM 22's minimum for
/// each chip (toolchain.md); mma.sync on bf16 needs sm_80.
std::optional<GPUTarget> parseChip(StringRef chip) {
  struct Row {
    const char *name;
    int64_t sm;
    bool nativeFP4;
    const char *features;
  };
  static const Row rows[] = {
      {"sm_80", 80, false, "+ptx70"},   {"sm_86", 86, false, "+ptx71"},
      {"sm_89", 89, false, "+ptx78"},   {"sm_90", 90, false, "+ptx80"},
      {"sm_90a", 90, false, "+ptx80"},  {"sm_100a", 100, true, "+ptx86"},
      {"sm_120a", 120, true, "+ptx87"},
  };
  for (const Row &row : rows)
    if (chip == row.name)
      return GPUTarget{row.name, row.sm, row.nativeFP4, row.features};
  return std::nullopt;
}

std::string dtypeName(Type type) {
  if (type.isBF16())
    return "bfloat16";
  if (type.isF16())
    return "float16";
  if (type.isF32())
    return "float32";
  if (type.isInteger(8))
    return "uint8";
  if (type.isInteger(32))
    return "int32";
  return "unknown";
}

MemRefType toMemRef(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Manifest names of a quantized value's components (docs/ABI.md order).
SmallVector<std::string> componentNames(QuantizedTensorType type,
                                        StringRef prefix) {
  SmallVector<std::string> names = {(prefix + ".codes").str()};
  Attribute scheme = type.getScheme();
  if (isa<HiF4Attr>(scheme)) {
    names.push_back((prefix + ".metadata").str());
  } else {
    names.push_back((prefix + ".scales").str());
    if (isa<NVFP4Attr>(scheme))
      names.push_back((prefix + ".tensor_scale").str());
    else if (isa<MXFP4MacroAttr>(scheme))
      names.push_back((prefix + ".factors").str());
  }
  return names;
}

/// Appends the kernel arguments of value `v` (components when quantized)
/// and returns the host tensors carrying them.
SmallVector<Value> appendArgs(OpBuilder &b, Location loc, Value v,
                              StringRef name, SmallVector<KernelArg> &args) {
  if (auto q = dyn_cast<QuantizedTensorType>(v.getType())) {
    SmallVector<Type> types = q.getComponentTypes();
    auto unpack = UnpackOp::create(b, loc, types, v);
    for (auto [t, n] : llvm::zip(types, componentNames(q, name)))
      args.push_back({n, toMemRef(t), /*readOnly=*/true});
    return SmallVector<Value>(unpack.getResults());
  }
  args.push_back({name.str(), toMemRef(v.getType()), /*readOnly=*/true});
  return {v};
}

/// Drops the fp4.unpack ops created for a declined op's arguments, once
/// each (one unpack yields several inputs; erasing it twice is a use after
/// free).
void eraseUnusedUnpacks(ArrayRef<Value> inputs) {
  llvm::SmallSetVector<Operation *, 2> unpacks;
  for (Value v : inputs)
    if (auto unpack = v.getDefiningOp<UnpackOp>())
      unpacks.insert(unpack);
  for (Operation *unpack : unpacks)
    if (unpack->use_empty())
      unpack->erase();
}

bool isStatic2D(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() && shaped.getRank() == 2;
}

/// Whether any of `types` has a dimension of size 0. Such ops compute
/// nothing (a K = 0 product is its zero accumulator): a kernel for them
/// would have an empty grid or an empty K loop, which the NVVM lowering
/// rejects, so they stay on the host, where linalg handles empty shapes.
bool hasEmptyDimension(ArrayRef<Type> types) {
  return llvm::any_of(types, [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && shaped.hasStaticShape() && shaped.getNumElements() == 0;
  });
}

struct ConvertFP4ToGPUPass
    : public fp4::impl::ConvertFP4ToGPUBase<ConvertFP4ToGPUPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult validateOptions();
  gpu::GPUModuleOp getOrCreateKernelModule();
  std::string nextKernelName(StringRef stem);
  /// Runs `build` then `launchAll`; returns failure (after a remark) when no
  /// family took the op, leaving it on the host.
  LogicalResult convertMatmul(MatmulOp op);
  LogicalResult convertQuantize(QuantizeOp op);
  LogicalResult convertDequantize(DequantizeOp op);
  /// Host code for `plan` over `args`; returns the result tensors.
  FailureOr<SmallVector<Value>>
  emitHost(OpBuilder &b, Operation *op, const KernelPlan &plan,
           ArrayRef<KernelArg> args, ArrayRef<Value> inputTensors,
           ArrayRef<std::pair<std::string, RankedTensorType>> outputs);
  void recordManifest(Operation *op, const KernelPlan &plan,
                      ArrayRef<KernelArg> args);
  /// emitHost for an op with one tensor result ("result"), then replaces
  /// the op by it.
  LogicalResult replaceWithLaunch(OpBuilder &b, Operation *op,
                                  const KernelPlan &plan,
                                  ArrayRef<KernelArg> args,
                                  ArrayRef<Value> inputs,
                                  RankedTensorType resultType);

  GPUTarget target;
  GPUKernelOptions kernelOptions;
  gpu::GPUModuleOp kernelModuleOp;
  unsigned kernelCounter = 0;
  SmallVector<Attribute> manifest;
};

LogicalResult ConvertFP4ToGPUPass::validateOptions() {
  ModuleOp module = getOperation();
  std::optional<GPUTarget> parsed = parseChip(chip);
  if (!parsed)
    return module.emitError()
           << "convert-fp4-to-gpu: unsupported chip '" << chip
           << "': the kernels need bf16 mma.sync (sm_80 or newer); "
              "supported: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, "
              "sm_120a";
  target = *parsed;
  if (nativeFP4 && !target.hasNativeFP4)
    return module.emitError()
           << "convert-fp4-to-gpu: native-fp4 requested for " << chip
           << ", which has no FP4 conversion or block-scaled MMA "
              "instructions (they need sm_100a or sm_120a); use "
              "native-fp4=false for the bf16 emulation";
  if (nativeFP4)
    return module.emitError()
           << "convert-fp4-to-gpu: native-fp4 kernels for " << chip
           << " are not available in this version; use native-fp4=false "
              "(bf16 tensor-core emulation, bit-identical results)";
  auto check = [&](int64_t v, int64_t lo, int64_t hi, int64_t multiple,
                   StringRef name) -> LogicalResult {
    if (v < lo || v > hi || v % multiple != 0)
      return module.emitError()
             << "convert-fp4-to-gpu: option " << name << "=" << v
             << " is out of range (" << lo << ".." << hi
             << (multiple > 1 ? ", a multiple of " + std::to_string(multiple)
                              : std::string())
             << ")";
    return success();
  };
  if (failed(check(decodeMaxM, 0, 64, 1, "decode-max-m")) ||
      failed(check(decodeWarps, 0, 16, 1, "decode-warps")) ||
      failed(check(decodeKUnroll, 128, 1024, 128, "decode-k-unroll")) ||
      failed(check(decodeRowsPerCTA, 0, 256, 16, "decode-rows-per-cta")) ||
      failed(check(decodeSplitK, 0, 64, 1, "decode-split-k")) ||
      failed(check(decodePrefetch, 0, 2, 1, "decode-prefetch")) ||
      failed(check(decodeMaxRegisters, 0, 255, 1, "decode-max-registers")) ||
      failed(check(prefillTileM, 16, 256, 16, "prefill-tile-m")) ||
      failed(check(prefillTileN, 8, 256, 8, "prefill-tile-n")) ||
      failed(check(prefillTileK, 32, 256, 32, "prefill-tile-k")) ||
      failed(check(prefillWarpsM, 1, 8, 1, "prefill-warps-m")) ||
      failed(check(prefillWarpsN, 1, 8, 1, "prefill-warps-n")) ||
      failed(check(prefillStages, 2, 6, 1, "prefill-stages")) ||
      failed(check(elementwiseThreads, 32, 1024, 32, "elementwise-threads")))
    return failure();
  if (prefillWarpsM * prefillWarpsN > 32)
    return module.emitError() << "convert-fp4-to-gpu: prefill-warps-m * "
                                 "prefill-warps-n must be at most 32";
  kernelOptions.decodeMaxM = decodeMaxM;
  kernelOptions.decodeWarps = decodeWarps;
  kernelOptions.decodeKUnroll = decodeKUnroll;
  kernelOptions.decodeRowsPerCTA = decodeRowsPerCTA;
  kernelOptions.decodeSplitK = decodeSplitK;
  kernelOptions.decodePrefetch = decodePrefetch;
  kernelOptions.decodeMaxRegisters = decodeMaxRegisters;
  kernelOptions.prefillTileM = prefillTileM;
  kernelOptions.prefillTileN = prefillTileN;
  kernelOptions.prefillTileK = prefillTileK;
  kernelOptions.prefillWarpsM = prefillWarpsM;
  kernelOptions.prefillWarpsN = prefillWarpsN;
  kernelOptions.prefillStages = prefillStages;
  if (prefillDequant != "shared" && prefillDequant != "registers")
    return module.emitError() << "convert-fp4-to-gpu: prefill-dequant must "
                                 "be 'shared' or 'registers', not '"
                              << prefillDequant << "'";
  kernelOptions.prefillDequant = prefillDequant;
  kernelOptions.elementwiseThreads = elementwiseThreads;
  return success();
}

gpu::GPUModuleOp ConvertFP4ToGPUPass::getOrCreateKernelModule() {
  if (kernelModuleOp)
    return kernelModuleOp;
  ModuleOp module = getOperation();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kernelModule))
    return kernelModuleOp = existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  kernelModuleOp = gpu::GPUModuleOp::create(b, module.getLoc(), kernelModule);
  return kernelModuleOp;
}

std::string ConvertFP4ToGPUPass::nextKernelName(StringRef stem) {
  gpu::GPUModuleOp module = getOrCreateKernelModule();
  while (true) {
    std::string name = (stem + "_" + Twine(kernelCounter++)).str();
    if (!module.lookupSymbol(name))
      return name;
  }
}

void ConvertFP4ToGPUPass::recordManifest(Operation *op, const KernelPlan &plan,
                                         ArrayRef<KernelArg> args) {
  MLIRContext *ctx = op->getContext();
  Builder b(ctx);
  llvm::StringMap<MemRefType> types;
  for (const KernelArg &arg : args)
    types[arg.name] = arg.type;
  for (const KernelArg &arg : plan.scratch)
    types[arg.name] = arg.type;
  for (const KernelLaunch &l : plan.launches) {
    SmallVector<Attribute> argAttrs;
    for (const std::string &name : l.argNames) {
      MemRefType t = types.lookup(name);
      argAttrs.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("dtype", b.getStringAttr(dtypeName(t.getElementType()))),
          b.getNamedAttr("shape", b.getI64ArrayAttr(t.getShape())),
          b.getNamedAttr("scratch",
                         b.getBoolAttr(!llvm::any_of(args, [&](auto &a) {
                           return a.name == name;
                         }))),
      }));
    }
    manifest.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(gpu::GPUFuncOp(l.func).getName())),
        b.getNamedAttr("module", b.getStringAttr(kernelModule)),
        b.getNamedAttr("op", b.getStringAttr(op->getName().getStringRef())),
        b.getNamedAttr("variant", b.getStringAttr(l.variant)),
        b.getNamedAttr("grid", b.getI64ArrayAttr(l.grid)),
        b.getNamedAttr("block", b.getI64ArrayAttr(l.block)),
        b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(l.sharedBytes)),
        b.getNamedAttr("args", b.getArrayAttr(argAttrs)),
    }));
  }
}

FailureOr<SmallVector<Value>> ConvertFP4ToGPUPass::emitHost(
    OpBuilder &b, Operation *op, const KernelPlan &plan,
    ArrayRef<KernelArg> args, ArrayRef<Value> inputTensors,
    ArrayRef<std::pair<std::string, RankedTensorType>> outputs) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  ModuleOp module = getOperation();
  Builder attrs(ctx);

  // The launch function: memref arguments in manifest order (inputs, then
  // outputs), declared here and given a body by fp4-gpu-materialize-launches.
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argNames;
  for (const KernelArg &arg : args) {
    argTypes.push_back(arg.type);
    argNames.push_back(attrs.getStringAttr(arg.name));
  }
  SmallVector<Attribute> scratch;
  for (const KernelArg &s : plan.scratch)
    scratch.push_back(attrs.getDictionaryAttr(
        {attrs.getNamedAttr("name", attrs.getStringAttr(s.name)),
         attrs.getNamedAttr("type", TypeAttr::get(s.type))}));
  SmallVector<Attribute> launches;
  for (const KernelLaunch &l : plan.launches) {
    SmallVector<Attribute> names;
    for (const std::string &n : l.argNames)
      names.push_back(attrs.getStringAttr(n));
    launches.push_back(attrs.getDictionaryAttr({
        attrs.getNamedAttr(
            "kernel",
            SymbolRefAttr::get(
                attrs.getStringAttr(kernelModule),
                {FlatSymbolRefAttr::get(gpu::GPUFuncOp(l.func).getNameAttr())})),
        attrs.getNamedAttr("grid", attrs.getI64ArrayAttr(l.grid)),
        attrs.getNamedAttr("block", attrs.getI64ArrayAttr(l.block)),
        attrs.getNamedAttr("shared_bytes",
                           attrs.getI64IntegerAttr(l.sharedBytes)),
        attrs.getNamedAttr("args", attrs.getArrayAttr(names)),
    }));
  }
  std::string launchName =
      (gpu::GPUFuncOp(plan.launches.front().func).getName() + "_launch").str();
  OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
  auto launchFunc = func::FuncOp::create(moduleBuilder, loc, launchName,
                                         b.getFunctionType(argTypes, {}));
  launchFunc.setPrivate();
  launchFunc->setAttr(
      "fp4.gpu_launch",
      attrs.getDictionaryAttr({
          attrs.getNamedAttr("num_inputs",
                             attrs.getI64IntegerAttr(inputTensors.size())),
          attrs.getNamedAttr("args", attrs.getArrayAttr(argNames)),
          attrs.getNamedAttr("scratch", attrs.getArrayAttr(scratch)),
          attrs.getNamedAttr("launches", attrs.getArrayAttr(launches)),
      }));

  // The call site: host buffers of the inputs, fresh host buffers for the
  // outputs, the call, and the outputs as tensors again.
  SmallVector<Value> callArgs;
  for (auto [i, t] : llvm::enumerate(inputTensors))
    callArgs.push_back(bufferization::ToBufferOp::create(
        b, loc, args[i].type, t, /*read_only=*/true));
  SmallVector<Value> outputBuffers;
  for (size_t i = inputTensors.size(); i < args.size(); ++i) {
    outputBuffers.push_back(memref::AllocOp::create(b, loc, args[i].type));
    callArgs.push_back(outputBuffers.back());
  }
  func::CallOp::create(b, loc, launchFunc, callArgs);
  llvm::StringMap<Value> byName;
  for (size_t i = inputTensors.size(); i < args.size(); ++i)
    byName[args[i].name] = outputBuffers[i - inputTensors.size()];
  SmallVector<Value> results;
  for (const auto &[name, type] : outputs)
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, type, byName.lookup(name), /*restrict=*/true,
        /*writable=*/true));
  recordManifest(op, plan, args);
  return results;
}

LogicalResult ConvertFP4ToGPUPass::replaceWithLaunch(
    OpBuilder &b, Operation *op, const KernelPlan &plan,
    ArrayRef<KernelArg> args, ArrayRef<Value> inputs,
    RankedTensorType resultType) {
  FailureOr<SmallVector<Value>> results =
      emitHost(b, op, plan, args, inputs, {{"result", resultType}});
  if (failed(results))
    return failure();
  op->getResult(0).replaceAllUsesWith(results->front());
  op->erase();
  return success();
}

/// Tries the families in order; erases the IR of declined attempts.
template <typename Spec, typename... Builders>
FailureOr<KernelPlan> tryFamilies(OpBuilder &b, Location loc,
                                  gpu::GPUModuleOp module, StringRef name,
                                  const Spec &spec, const GPUTarget &target,
                                  const GPUKernelOptions &options,
                                  std::string &reasons, Builders... builders) {
  FailureOr<KernelPlan> plan = failure();
  auto attempt = [&](auto builder) {
    if (succeeded(plan))
      return;
    std::string reason;
    plan = builder(b, loc, module, name, spec, target, options, reason);
    if (failed(plan)) {
      // A declining builder must leave nothing behind, but be robust.
      if (Operation *stale = module.lookupSymbol(name))
        stale->erase();
      if (!reasons.empty())
        reasons += "; ";
      reasons += reason;
    }
  };
  (attempt(builders), ...);
  return plan;
}

LogicalResult ConvertFP4ToGPUPass::convertMatmul(MatmulOp op) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  auto rhsType = dyn_cast<QuantizedTensorType>(rhs.getType());
  auto lhsQuantized = dyn_cast<QuantizedTensorType>(lhs.getType());
  RankedTensorType resultType = op.getResult().getType();
  auto remark = [&](const Twine &why) {
    op->emitRemark() << "stays on the host: " << why;
    return failure();
  };
  if (!rhsType)
    return remark("the GPU kernels need a quantized rhs (weight)");
  if (!isStatic2D(lhs.getType()) || !isStatic2D(rhsType) ||
      !resultType.hasStaticShape())
    return remark("the GPU kernels need static rank-2 operands");
  if (hasEmptyDimension({lhs.getType(), rhsType, resultType}))
    return remark("an operand has an empty dimension (nothing to compute)");
  if (rhsType.getAxis() != 1 || (lhsQuantized && lhsQuantized.getAxis() != 1))
    return remark("quantized operands must be blocked along K (axis 1)");

  MatmulKernelSpec spec;
  spec.m = cast<ShapedType>(lhs.getType()).getDimSize(0);
  spec.k = cast<ShapedType>(lhs.getType()).getDimSize(1);
  spec.n = rhsType.getDimSize(0);
  spec.lhsQuantized = lhsQuantized;
  if (!lhsQuantized)
    spec.lhsElementType = cast<RankedTensorType>(lhs.getType()).getElementType();
  spec.rhs = rhsType;
  spec.resultElementType = resultType.getElementType();

  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> inputs = appendArgs(b, loc, lhs, "lhs", spec.args);
  llvm::append_range(inputs, appendArgs(b, loc, rhs, "rhs", spec.args));
  spec.args.push_back({"result", toMemRef(resultType), /*readOnly=*/false});

  gpu::GPUModuleOp module = getOrCreateKernelModule();
  std::string name = nextKernelName("fp4_matmul");
  std::string reasons;
  FailureOr<KernelPlan> plan = failure();
  {
    if (spec.m <= kernelOptions.decodeMaxM)
      plan = tryFamilies(b, loc, module, name, spec, target, kernelOptions,
                         reasons, buildDecodeMatmulKernel);
    else
      plan = tryFamilies(b, loc, module, name, spec, target, kernelOptions,
                         reasons, buildPrefillMatmulKernel);
    if (failed(plan))
      plan = tryFamilies(b, loc, module, name, spec, target, kernelOptions,
                         reasons, buildReferenceMatmulKernel);
  }
  if (failed(plan)) {
    eraseUnusedUnpacks(inputs);
    return remark("no GPU kernel for this matmul: " + reasons);
  }
  return replaceWithLaunch(b, op, *plan, spec.args, inputs, resultType);
}

LogicalResult ConvertFP4ToGPUPass::convertQuantize(QuantizeOp op) {
  auto resultType = cast<QuantizedTensorType>(op.getResult().getType());
  auto remark = [&](const Twine &why) {
    op->emitRemark() << "stays on the host: " << why;
    return failure();
  };
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  if (!isStatic2D(inputType) || resultType.getAxis() != 1)
    return remark("the GPU quantizer needs a static rank-2 input blocked "
                  "along its last axis");
  if (hasEmptyDimension({inputType}))
    return remark("the input has an empty dimension (nothing to compute)");
  QuantizeKernelSpec spec;
  spec.rows = inputType.getDimSize(0);
  spec.cols = inputType.getDimSize(1);
  spec.result = resultType;
  Value input = op.getInput();
  RotateOp rotate = input.getDefiningOp<RotateOp>();
  if (rotate && rotate.getStride() == 1 && rotate.getAxis() == 1 &&
      rotate->hasOneUse() &&
      isStatic2D(rotate.getInput().getType())) {
    spec.rotationSize = rotate.getSize();
    if (std::optional<uint32_t> seed = rotate.getSeed())
      spec.rotationSeed = *seed;
    spec.rotationInverse = rotate.getInverse();
    // The reference rounds the rotated values to the rotation's result type.
    spec.rotatedElementType = inputType.getElementType();
    input = rotate.getInput();
  } else {
    rotate = nullptr;
  }
  spec.inputElementType = cast<RankedTensorType>(input.getType()).getElementType();

  OpBuilder b(op);
  Location loc = op.getLoc();
  spec.args.push_back(
      {"input", toMemRef(input.getType()), /*readOnly=*/true});
  SmallVector<Type> componentTypes = resultType.getComponentTypes();
  SmallVector<std::string> names = componentNames(resultType, "result");
  for (auto [t, n] : llvm::zip(componentTypes, names))
    spec.args.push_back({n, toMemRef(t), /*readOnly=*/false});

  gpu::GPUModuleOp module = getOrCreateKernelModule();
  std::string name = nextKernelName("fp4_quantize");
  std::string reasons;
  FailureOr<KernelPlan> plan =
      tryFamilies(b, loc, module, name, spec, target, kernelOptions, reasons,
                  buildQuantizeKernel);
  if (failed(plan))
    return remark("no GPU quantize kernel: " + reasons);
  SmallVector<std::pair<std::string, RankedTensorType>> outputs;
  for (auto [t, n] : llvm::zip(componentTypes, names))
    outputs.push_back({n, cast<RankedTensorType>(t)});
  FailureOr<SmallVector<Value>> results =
      emitHost(b, op, *plan, spec.args, {input}, outputs);
  if (failed(results))
    return failure();
  Value packed = PackOp::create(b, loc, resultType, *results);
  op.getResult().replaceAllUsesWith(packed);
  op->erase();
  if (rotate && rotate->use_empty())
    rotate->erase();
  return success();
}

LogicalResult ConvertFP4ToGPUPass::convertDequantize(DequantizeOp op) {
  auto inputType = cast<QuantizedTensorType>(op.getInput().getType());
  RankedTensorType resultType = op.getResult().getType();
  auto remark = [&](const Twine &why) {
    op->emitRemark() << "stays on the host: " << why;
    return failure();
  };
  if (!isStatic2D(inputType) || inputType.getAxis() != 1)
    return remark("the GPU dequantizer needs a static rank-2 input blocked "
                  "along its last axis");
  if (hasEmptyDimension({inputType}))
    return remark("the input has an empty dimension (nothing to compute)");
  DequantizeKernelSpec spec;
  spec.rows = inputType.getDimSize(0);
  spec.cols = inputType.getDimSize(1);
  spec.input = inputType;
  spec.resultElementType = resultType.getElementType();
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> inputs =
      appendArgs(b, loc, op.getInput(), "input", spec.args);
  spec.args.push_back({"result", toMemRef(resultType), /*readOnly=*/false});
  gpu::GPUModuleOp module = getOrCreateKernelModule();
  std::string name = nextKernelName("fp4_dequantize");
  std::string reasons;
  FailureOr<KernelPlan> plan =
      tryFamilies(b, loc, module, name, spec, target, kernelOptions, reasons,
                  buildDequantizeKernel);
  if (failed(plan)) {
    eraseUnusedUnpacks(inputs);
    return remark("no GPU dequantize kernel: " + reasons);
  }
  return replaceWithLaunch(b, op, *plan, spec.args, inputs, resultType);
}

void ConvertFP4ToGPUPass::runOnOperation() {
  if (failed(validateOptions()))
    return signalPassFailure();
  ModuleOp module = getOperation();
  // The accuracy-recipe ops first (CorrectionToGPU.h): a correction product
  // may become an fp4.matmul, which the loop below converts.
  FP4GPULaunchHooks hooks{target, kernelOptions,
                          [&] { return getOrCreateKernelModule(); },
                          [&](StringRef stem) { return nextKernelName(stem); },
                          appendArgs,
                          [&](OpBuilder &b, Operation *op,
                              const KernelPlan &plan, ArrayRef<KernelArg> args,
                              ArrayRef<Value> inputs, auto outputs) {
                            return emitHost(b, op, plan, args, inputs, outputs);
                          }};
  RewritePatternSet correctionPatterns(&getContext());
  populateFP4CorrectionToGPUPatterns(correctionPatterns, hooks);
  walkAndApplyPatterns(module, std::move(correctionPatterns));
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<MatmulOp, QuantizeOp, DequantizeOp>(op) &&
        !op->getParentOfType<gpu::GPUModuleOp>())
      ops.push_back(op);
  });
  bool hadError = false;
  for (Operation *op : ops) {
    // Conversion failures leave the op on the host with a remark; only IR
    // construction errors (emitOpError) fail the pass.
    DiagnosticEngine &engine = op->getContext()->getDiagEngine();
    bool sawError = false;
    DiagnosticEngine::HandlerID id = engine.registerHandler([&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        sawError = true;
      return failure(); // keep propagating
    });
    if (auto matmul = dyn_cast<MatmulOp>(op))
      (void)convertMatmul(matmul);
    else if (auto quantize = dyn_cast<QuantizeOp>(op))
      (void)convertQuantize(quantize);
    else if (auto dequantize = dyn_cast<DequantizeOp>(op))
      (void)convertDequantize(dequantize);
    engine.eraseHandler(id);
    hadError |= sawError;
  }
  if (!manifest.empty()) {
    SmallVector<Attribute> all;
    if (auto existing = module->getAttrOfType<ArrayAttr>("fp4.gpu_kernels"))
      llvm::append_range(all, existing.getValue());
    llvm::append_range(all, manifest);
    module->setAttr("fp4.gpu_kernels", ArrayAttr::get(&getContext(), all));
    module->setAttr("fp4.gpu_chip", StringAttr::get(&getContext(), chip));
  }
  if (hadError)
    signalPassFailure();
}

} // namespace
