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

LaunchPlanAttr FP4ToGPULoweringState::buildLaunchPlan(Operation *op,
                                                      const KernelPlan &plan,
                                                      ArrayRef<KernelArg> args,
                                                      size_t numInputs) {
  MLIRContext *ctx = op->getContext();
  auto buffer = [&](const KernelArg &arg) {
    return LaunchBufferAttr::get(ctx, StringAttr::get(ctx, arg.name), arg.type);
  };
  SmallVector<LaunchBufferAttr> inputs, outputs, scratch;
  for (auto [i, arg] : llvm::enumerate(args))
    (i < numInputs ? inputs : outputs).push_back(buffer(arg));
  for (const KernelArg &arg : plan.scratch)
    scratch.push_back(buffer(arg));
  SmallVector<KernelLaunchAttr> launches;
  for (const KernelLaunch &l : plan.launches) {
    SmallVector<StringAttr> names;
    for (const std::string &n : l.argNames)
      names.push_back(StringAttr::get(ctx, n));
    launches.push_back(KernelLaunchAttr::get(
        ctx,
        SymbolRefAttr::get(
            StringAttr::get(ctx, kernelModuleName),
            {FlatSymbolRefAttr::get(gpu::GPUFuncOp(l.func).getNameAttr())}),
        l.variant, l.grid, l.block, l.sharedBytes, names,
        /*dependent=*/false));
  }
  // The kernel families build consistent plans; a broken one is a bug of
  // theirs, reported here (the verifier's reason) rather than as a wrong
  // launch later.
  return LaunchPlanAttr::getChecked(
      [&] {
        return op->emitError("convert-fp4-to-gpu: invalid launch plan: ");
      },
      ctx, op->getName().getStringRef(), ArrayRef<LaunchBufferAttr>(inputs),
      ArrayRef<LaunchBufferAttr>(outputs), ArrayRef<LaunchBufferAttr>(scratch),
      ArrayRef<KernelLaunchAttr>(launches));
}

FailureOr<SmallVector<Value>> FP4ToGPULoweringState::emitHostLaunch(
    RewriterBase &rewriter, Operation *op, const KernelPlan &plan,
    ArrayRef<KernelArg> args, ArrayRef<Value> inputTensors,
    ArrayRef<std::pair<std::string, RankedTensorType>> outputs) {
  Location loc = op->getLoc();
  LaunchPlanAttr launchPlan =
      buildLaunchPlan(op, plan, args, inputTensors.size());
  if (!launchPlan) {
    // Nothing of the host side is created; the kernels go too.
    for (const KernelLaunch &l : plan.launches)
      if (l.func)
        l.func->erase();
    invalidPlan = true;
    return failure();
  }

  // The launch function: memref arguments in plan order (inputs, then
  // outputs), declared here with the plan and given a body by
  // fp4-gpu-materialize-launches.
  SmallVector<Type> argTypes;
  for (const KernelArg &arg : args)
    argTypes.push_back(arg.type);
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
  launchFunc->setAttr(LaunchPlanAttr::kAttrName, launchPlan);

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
  plans.push_back(launchPlan);
  return results;
}

bool FP4ToGPULoweringState::finalize() {
  if (plans.empty())
    return false;
  MLIRContext *ctx = module.getContext();
  // A module converted before (e.g. by another pattern user) keeps its
  // plans, in front of ours.
  SmallVector<LaunchPlanAttr> all;
  if (auto existing =
          module->getAttrOfType<GPUManifestAttr>(GPUManifestAttr::kAttrName))
    llvm::append_range(all, existing.getPlans());
  llvm::append_range(all, plans);
  module->setAttr(GPUManifestAttr::kAttrName,
                  GPUManifestAttr::get(ctx, target.chip, all));
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

/// Match failure reason when emitHostLaunch rejected a family's plan (the
/// error says why; the pass fails).
constexpr StringLiteral kInvalidPlan =
    "its kernel family built an invalid launch plan";

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
            ArrayRef<std::pair<KernelFamily<Spec>, GPUConfigAttr>> families,
            size_t *chosen = nullptr) {
  gpu::GPUModuleOp module = state.getOrCreateKernelModule();
  // Kernels are built in the gpu.module with a builder of their own: the
  // host-side rewriter sees only the launch code.
  OpBuilder b(module.getContext());
  for (auto [index, entry] : llvm::enumerate(families)) {
    auto [family, config] = entry;
    std::string reason;
    FailureOr<KernelPlan> plan =
        family(b, loc, module, name, spec, state.getTarget(), config, reason);
    if (succeeded(plan)) {
      if (chosen)
        *chosen = index;
      return plan;
    }
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
    size_t chosen = 0;
    FailureOr<KernelPlan> plan = tryFamilies<MatmulKernelSpec>(
        state, op.getLoc(), name, spec, reasons, families, &chosen);
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "no GPU kernel for this matmul: " << reasons;
      });
    // The reference kernel is bit-exact but untuned (orders of magnitude
    // slower at model sizes): a user whose options or shapes led there must
    // hear why.
    if (chosen + 1 == families.size() && families.size() > 1 &&
        state.remarksEnabled())
      op->emitRemark() << "runs on the reference matmul kernel (bit-exact, "
                          "untuned, far slower): "
                       << reasons;

    Location loc = op.getLoc();
    SmallVector<Value> inputs = materializeArgs(rewriter, loc, lhs);
    llvm::append_range(inputs, materializeArgs(rewriter, loc, rhs));
    FailureOr<SmallVector<Value>> results = state.emitHostLaunch(
        rewriter, op, *plan, spec.args, inputs, {{"result", resultType}});
    if (failed(results))
      return rewriter.notifyMatchFailure(op, kInvalidPlan);
    rewriter.replaceOp(op, results->front());
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
    FailureOr<SmallVector<Value>> results =
        state.emitHostLaunch(rewriter, op, *plan, spec.args, {input}, outputs);
    if (failed(results))
      return rewriter.notifyMatchFailure(op, kInvalidPlan);
    Value packed = PackOp::create(rewriter, op.getLoc(), resultType, *results);
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
    FailureOr<SmallVector<Value>> results = state.emitHostLaunch(
        rewriter, op, *plan, spec.args, inputs, {{"result", resultType}});
    if (failed(results))
      return rewriter.notifyMatchFailure(op, kInvalidPlan);
    rewriter.replaceOp(op, results->front());
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
