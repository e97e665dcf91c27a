//===- FP4ToGPUPatterns.cpp - fp4 ops to kernels plus host launches -------===//
//
// For each supported fp4 op (static rank-2 shapes, blocked along the last
// axis) a pattern
//  1. describes the computation as a kernel spec (KernelBuilders.h) whose
//     arguments are the op's buffers in manifest order: operands expanded
//     to their ABI components (the scheme's GPU model names them), then the
//     result components;
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

#include "fp4/Conversion/FP4ToGPU/FP4ToGPU.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/GPUConfig.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::fp4;

//===----------------------------------------------------------------------===//
// FP4ToGPULoweringState
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

gpu::GPUModuleOp FP4ToGPULoweringState::getOrCreateKernelModule() {
  if (kernelModule)
    return kernelModule;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kernelModuleName))
    return kernelModule = existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  kernelModule =
      gpu::GPUModuleOp::create(b, module.getLoc(), kernelModuleName);
  return kernelModule;
}

std::string FP4ToGPULoweringState::nextKernelName(StringRef stem) {
  gpu::GPUModuleOp kernels = getOrCreateKernelModule();
  while (true) {
    std::string name = (stem + "_" + Twine(kernelCounter++)).str();
    if (!kernels.lookupSymbol(name))
      return name;
  }
}

void FP4ToGPULoweringState::recordManifest(Operation *op,
                                           const KernelPlan &plan,
                                           ArrayRef<KernelArg> args) {
  Builder b(op->getContext());
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
          b.getNamedAttr("dtype",
                         b.getStringAttr(dtypeName(t.getElementType()))),
          b.getNamedAttr("shape", b.getI64ArrayAttr(t.getShape())),
          b.getNamedAttr("scratch",
                         b.getBoolAttr(!llvm::any_of(args, [&](auto &a) {
                           return a.name == name;
                         }))),
      }));
    }
    manifest.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name",
                       b.getStringAttr(gpu::GPUFuncOp(l.func).getName())),
        b.getNamedAttr("module", b.getStringAttr(kernelModuleName)),
        b.getNamedAttr("op", b.getStringAttr(op->getName().getStringRef())),
        b.getNamedAttr("variant", b.getStringAttr(l.variant)),
        b.getNamedAttr("grid", b.getI64ArrayAttr(l.grid)),
        b.getNamedAttr("block", b.getI64ArrayAttr(l.block)),
        b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(l.sharedBytes)),
        b.getNamedAttr("args", b.getArrayAttr(argAttrs)),
    }));
  }
}

SmallVector<Value> FP4ToGPULoweringState::emitHostLaunch(
    RewriterBase &rewriter, Operation *op, const KernelPlan &plan,
    ArrayRef<KernelArg> args, ArrayRef<Value> inputTensors,
    ArrayRef<std::pair<std::string, RankedTensorType>> outputs) {
  Location loc = op->getLoc();
  Builder attrs(rewriter.getContext());

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
            "kernel", SymbolRefAttr::get(
                          attrs.getStringAttr(kernelModuleName),
                          {FlatSymbolRefAttr::get(
                              gpu::GPUFuncOp(l.func).getNameAttr())})),
        attrs.getNamedAttr("grid", attrs.getI64ArrayAttr(l.grid)),
        attrs.getNamedAttr("block", attrs.getI64ArrayAttr(l.block)),
        attrs.getNamedAttr("shared_bytes",
                           attrs.getI64IntegerAttr(l.sharedBytes)),
        attrs.getNamedAttr("args", attrs.getArrayAttr(names)),
    }));
  }
  std::string launchName =
      (gpu::GPUFuncOp(plan.launches.front().func).getName() + "_launch").str();
  func::FuncOp launchFunc;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    launchFunc = func::FuncOp::create(rewriter, loc, launchName,
                                      rewriter.getFunctionType(argTypes, {}));
  }
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
        rewriter, loc, args[i].type, t, /*read_only=*/true));
  SmallVector<Value> outputBuffers;
  for (size_t i = inputTensors.size(); i < args.size(); ++i) {
    outputBuffers.push_back(
        memref::AllocOp::create(rewriter, loc, args[i].type));
    callArgs.push_back(outputBuffers.back());
  }
  func::CallOp::create(rewriter, loc, launchFunc, callArgs);
  llvm::StringMap<Value> byName;
  for (size_t i = inputTensors.size(); i < args.size(); ++i)
    byName[args[i].name] = outputBuffers[i - inputTensors.size()];
  SmallVector<Value> results;
  for (const auto &[name, type] : outputs)
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, type, byName.lookup(name), /*restrict=*/true,
        /*writable=*/true));
  recordManifest(op, plan, args);
  return results;
}

bool FP4ToGPULoweringState::finalize() {
  if (manifest.empty())
    return false;
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> all;
  if (auto existing = module->getAttrOfType<ArrayAttr>("fp4.gpu_kernels"))
    llvm::append_range(all, existing.getValue());
  llvm::append_range(all, manifest);
  module->setAttr("fp4.gpu_kernels", ArrayAttr::get(ctx, all));
  module->setAttr("fp4.gpu_chip", StringAttr::get(ctx, target.chip));
  return true;
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

MemRefType toMemRef(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Manifest names of a quantized value's components (docs/ABI.md order),
/// as the scheme's GPU model lays them out; empty without a model.
SmallVector<std::string> componentNames(QuantizedTensorType type,
                                        StringRef prefix) {
  SmallVector<std::string> names;
  if (auto scheme = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme()))
    for (StringRef suffix : scheme.getGPUComponentSuffixes())
      names.push_back((prefix + "." + suffix).str());
  return names;
}

/// Appends the kernel arguments of a value of `type` named `name`
/// (components when quantized); false when a quantized scheme has no GPU
/// model.
bool appendArgs(Type type, StringRef name, SmallVector<KernelArg> &args) {
  if (auto q = dyn_cast<QuantizedTensorType>(type)) {
    SmallVector<Type> types = q.getComponentTypes();
    SmallVector<std::string> names = componentNames(q, name);
    if (names.size() != types.size())
      return false;
    for (auto [t, n] : llvm::zip(types, names))
      args.push_back({n, toMemRef(t), /*readOnly=*/true});
    return true;
  }
  args.push_back({name.str(), toMemRef(type), /*readOnly=*/true});
  return true;
}

/// The host tensors carrying `v` as kernel arguments: its components
/// (fp4.unpack) when quantized.
SmallVector<Value> materializeArgs(RewriterBase &rewriter, Location loc,
                                   Value v) {
  if (auto q = dyn_cast<QuantizedTensorType>(v.getType()))
    return SmallVector<Value>(
        UnpackOp::create(rewriter, loc, q.getComponentTypes(), v).getResults());
  return {v};
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

/// A kernel family: builds one kernel plan for a spec or declines.
template <typename Spec>
using KernelFamily = FailureOr<KernelPlan> (*)(OpBuilder &, Location,
                                               gpu::GPUModuleOp, StringRef,
                                               const Spec &, const GPUTarget &,
                                               GPUConfigAttr, std::string &);

/// Tries `families` in order, each with its config; removes the IR of
/// declined attempts and collects their reasons.
template <typename Spec>
FailureOr<KernelPlan>
tryFamilies(FP4ToGPULoweringState &state, Location loc, StringRef name,
            const Spec &spec, std::string &reasons,
            ArrayRef<std::pair<KernelFamily<Spec>, GPUConfigAttr>> families) {
  gpu::GPUModuleOp module = state.getOrCreateKernelModule();
  // Kernels are built in the gpu.module with a builder of their own: the
  // host-side rewriter sees only the launch code.
  OpBuilder b(module.getContext());
  for (auto [family, config] : families) {
    std::string reason;
    FailureOr<KernelPlan> plan =
        family(b, loc, module, name, spec, state.getTarget(), config, reason);
    if (succeeded(plan))
      return plan;
    // A declining builder must leave nothing behind, but be robust.
    if (Operation *stale = module.lookupSymbol(name))
      stale->erase();
    if (!reasons.empty())
      reasons += "; ";
    reasons += reason;
  }
  return failure();
}

/// Base of the patterns: skips ops already inside a gpu.module.
template <typename OpTy>
struct FP4ToGPUPattern : public OpRewritePattern<OpTy> {
  FP4ToGPUPattern(MLIRContext *ctx, FP4ToGPULoweringState &state,
                  PatternBenefit benefit)
      : OpRewritePattern<OpTy>(ctx, benefit), state(state) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    // Not a candidate (no remark): kernels are not lowered again.
    if (op->template getParentOfType<gpu::GPUModuleOp>())
      return failure();
    return convert(op, rewriter);
  }

  virtual LogicalResult convert(OpTy op, PatternRewriter &rewriter) const = 0;

  FP4ToGPULoweringState &state;
};

/// fp4.matmul: the family of its config (decode, prefill or reference),
/// then the reference kernel for whatever decode or prefill decline.
struct ConvertMatmul : public FP4ToGPUPattern<MatmulOp> {
  using FP4ToGPUPattern::FP4ToGPUPattern;

  LogicalResult convert(MatmulOp op, PatternRewriter &rewriter) const override {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    auto rhsType = dyn_cast<QuantizedTensorType>(rhs.getType());
    auto lhsQuantized = dyn_cast<QuantizedTensorType>(lhs.getType());
    RankedTensorType resultType = op.getResult().getType();
    if (!rhsType)
      return rewriter.notifyMatchFailure(
          op, "the GPU kernels need a quantized rhs (weight)");
    if (!isStatic2D(lhs.getType()) || !isStatic2D(rhsType) ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "the GPU kernels need static rank-2 operands");
    if (hasEmptyDimension({lhs.getType(), rhsType, resultType}))
      return rewriter.notifyMatchFailure(
          op, "an operand has an empty dimension (nothing to compute)");
    if (rhsType.getAxis() != 1 ||
        (lhsQuantized && lhsQuantized.getAxis() != 1))
      return rewriter.notifyMatchFailure(
          op, "quantized operands must be blocked along K (axis 1)");

    MatmulKernelSpec spec;
    spec.m = cast<ShapedType>(lhs.getType()).getDimSize(0);
    spec.k = cast<ShapedType>(lhs.getType()).getDimSize(1);
    spec.n = rhsType.getDimSize(0);
    spec.lhsQuantized = lhsQuantized;
    if (!lhsQuantized)
      spec.lhsElementType =
          cast<RankedTensorType>(lhs.getType()).getElementType();
    spec.rhs = rhsType;
    spec.resultElementType = resultType.getElementType();
    if (!appendArgs(lhs.getType(), "lhs", spec.args) ||
        !appendArgs(rhs.getType(), "rhs", spec.args))
      return rewriter.notifyMatchFailure(
          op, "a quantized operand's scheme has no GPU lowering model");
    spec.args.push_back({"result", toMemRef(resultType), /*readOnly=*/false});

    GPUConfigAttr config = state.getConfig(op);
    if (!config || config.getFamily() == GPUKernelFamily::Elementwise)
      return rewriter.notifyMatchFailure(
          op, "no matmul kernel configuration for this op");
    std::string name = state.nextKernelName("fp4_matmul");
    std::string reasons;
    GPUConfigAttr reference =
        getDefaultGPUConfig(op.getContext(), GPUKernelFamily::Reference);
    SmallVector<std::pair<KernelFamily<MatmulKernelSpec>, GPUConfigAttr>, 2>
        families;
    if (config.getFamily() == GPUKernelFamily::Decode)
      families.push_back({buildDecodeMatmulKernel, config});
    else if (config.getFamily() == GPUKernelFamily::Prefill)
      families.push_back({buildPrefillMatmulKernel, config});
    families.push_back({buildReferenceMatmulKernel, reference});
    FailureOr<KernelPlan> plan = tryFamilies<MatmulKernelSpec>(
        state, op.getLoc(), name, spec, reasons, families);
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "no GPU kernel for this matmul: " << reasons;
      });

    Location loc = op.getLoc();
    SmallVector<Value> inputs = materializeArgs(rewriter, loc, lhs);
    llvm::append_range(inputs, materializeArgs(rewriter, loc, rhs));
    SmallVector<Value> results = state.emitHostLaunch(
        rewriter, op, *plan, spec.args, inputs, {{"result", resultType}});
    rewriter.replaceOp(op, results.front());
    return success();
  }
};

/// fp4.quantize, with a producing fp4.rotate along the quantized axis fused
/// into the kernel.
struct ConvertQuantize : public FP4ToGPUPattern<QuantizeOp> {
  using FP4ToGPUPattern::FP4ToGPUPattern;

  LogicalResult convert(QuantizeOp op,
                        PatternRewriter &rewriter) const override {
    auto resultType = cast<QuantizedTensorType>(op.getResult().getType());
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!isStatic2D(inputType) || resultType.getAxis() != 1)
      return rewriter.notifyMatchFailure(
          op, "the GPU quantizer needs a static rank-2 input blocked along "
              "its last axis");
    if (hasEmptyDimension({inputType}))
      return rewriter.notifyMatchFailure(
          op, "the input has an empty dimension (nothing to compute)");
    SmallVector<std::string> names = componentNames(resultType, "result");
    SmallVector<Type> componentTypes = resultType.getComponentTypes();
    if (names.size() != componentTypes.size())
      return rewriter.notifyMatchFailure(
          op, "the scheme has no GPU lowering model");

    QuantizeKernelSpec spec;
    spec.rows = inputType.getDimSize(0);
    spec.cols = inputType.getDimSize(1);
    spec.result = resultType;
    Value input = op.getInput();
    RotateOp rotate = input.getDefiningOp<RotateOp>();
    if (rotate && rotate.getStride() == 1 && rotate.getAxis() == 1 &&
        rotate->hasOneUse() && isStatic2D(rotate.getInput().getType())) {
      spec.rotationSize = rotate.getSize();
      if (std::optional<uint32_t> seed = rotate.getSeed())
        spec.rotationSeed = *seed;
      spec.rotationInverse = rotate.getInverse();
      // The reference rounds the rotated values to the rotation's result
      // type.
      spec.rotatedElementType = inputType.getElementType();
      input = rotate.getInput();
    } else {
      rotate = nullptr;
    }
    spec.inputElementType =
        cast<RankedTensorType>(input.getType()).getElementType();
    spec.args.push_back(
        {"input", toMemRef(input.getType()), /*readOnly=*/true});
    for (auto [t, n] : llvm::zip(componentTypes, names))
      spec.args.push_back({n, toMemRef(t), /*readOnly=*/false});

    GPUConfigAttr config = state.getConfig(op);
    if (!config || config.getFamily() != GPUKernelFamily::Elementwise)
      return rewriter.notifyMatchFailure(
          op, "no elementwise kernel configuration for this op");
    std::string name = state.nextKernelName("fp4_quantize");
    std::string reasons;
    FailureOr<KernelPlan> plan =
        tryFamilies<QuantizeKernelSpec>(state, op.getLoc(), name, spec, reasons,
                                        {{buildQuantizeKernel, config}});
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "no GPU quantize kernel: " << reasons;
      });

    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    for (auto [t, n] : llvm::zip(componentTypes, names))
      outputs.push_back({n, cast<RankedTensorType>(t)});
    SmallVector<Value> results =
        state.emitHostLaunch(rewriter, op, *plan, spec.args, {input}, outputs);
    Value packed = PackOp::create(rewriter, op.getLoc(), resultType, results);
    rewriter.replaceOp(op, packed);
    if (rotate && rotate->use_empty())
      rewriter.eraseOp(rotate);
    return success();
  }
};

/// fp4.dequantize.
struct ConvertDequantize : public FP4ToGPUPattern<DequantizeOp> {
  using FP4ToGPUPattern::FP4ToGPUPattern;

  LogicalResult convert(DequantizeOp op,
                        PatternRewriter &rewriter) const override {
    auto inputType = cast<QuantizedTensorType>(op.getInput().getType());
    RankedTensorType resultType = op.getResult().getType();
    if (!isStatic2D(inputType) || inputType.getAxis() != 1)
      return rewriter.notifyMatchFailure(
          op, "the GPU dequantizer needs a static rank-2 input blocked along "
              "its last axis");
    if (hasEmptyDimension({inputType}))
      return rewriter.notifyMatchFailure(
          op, "the input has an empty dimension (nothing to compute)");
    DequantizeKernelSpec spec;
    spec.rows = inputType.getDimSize(0);
    spec.cols = inputType.getDimSize(1);
    spec.input = inputType;
    spec.resultElementType = resultType.getElementType();
    if (!appendArgs(inputType, "input", spec.args))
      return rewriter.notifyMatchFailure(
          op, "the scheme has no GPU lowering model");
    spec.args.push_back({"result", toMemRef(resultType), /*readOnly=*/false});

    GPUConfigAttr config = state.getConfig(op);
    if (!config || config.getFamily() != GPUKernelFamily::Elementwise)
      return rewriter.notifyMatchFailure(
          op, "no elementwise kernel configuration for this op");
    std::string name = state.nextKernelName("fp4_dequantize");
    std::string reasons;
    FailureOr<KernelPlan> plan = tryFamilies<DequantizeKernelSpec>(
        state, op.getLoc(), name, spec, reasons,
        {{buildDequantizeKernel, config}});
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "no GPU dequantize kernel: " << reasons;
      });
    SmallVector<Value> inputs =
        materializeArgs(rewriter, op.getLoc(), op.getInput());
    SmallVector<Value> results = state.emitHostLaunch(
        rewriter, op, *plan, spec.args, inputs, {{"result", resultType}});
    rewriter.replaceOp(op, results.front());
    return success();
  }
};

} // namespace

FailureOr<SmallVector<Value>>
mlir::fp4::appendKernelArgs(RewriterBase &rewriter, Location loc, Value value,
                            StringRef name, SmallVector<KernelArg> &args) {
  if (!appendArgs(value.getType(), name, args))
    return failure();
  return materializeArgs(rewriter, loc, value);
}

void mlir::fp4::populateFP4ToGPUConversionPatterns(
    RewritePatternSet &patterns, FP4ToGPULoweringState &state,
    PatternBenefit benefit) {
  patterns.add<ConvertMatmul, ConvertQuantize, ConvertDequantize>(
      patterns.getContext(), state, benefit);
}
