//===- LaunchPlanAttr.cpp - #fp4.launch_plan and its parts ----------------===//
//
// Verifiers of the launch plan attributes (FP4LaunchPlanAttr.td) and of
// their use as the discardable `fp4.launch_plan` (on a launch function) and
// `fp4.gpu_manifest` (on a module) attributes. A plan is checked on its own
// where it is built; against its function where it is attached, so a plan
// whose buffers do not match the function's arguments never reaches
// fp4-gpu-materialize-launches.
//
//===----------------------------------------------------------------------===//

#include "AttrVerifiers.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::fp4;

//===----------------------------------------------------------------------===//
// custom<LaunchBuffers>: `[` ("name" `:` memref-type),* `]`
//===----------------------------------------------------------------------===//

ParseResult
mlir::fp4::parseLaunchBuffers(AsmParser &parser,
                              SmallVector<LaunchBufferAttr> &buffers) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        std::string name;
        MemRefType type;
        if (parser.parseString(&name) || parser.parseColon() ||
            parser.parseType(type))
          return failure();
        auto buffer = LaunchBufferAttr::getChecked(
            [&] { return parser.emitError(loc); }, parser.getContext(),
            StringAttr::get(parser.getContext(), name), type);
        if (!buffer)
          return failure();
        buffers.push_back(buffer);
        return success();
      });
}

void mlir::fp4::printLaunchBuffers(AsmPrinter &printer,
                                   ArrayRef<LaunchBufferAttr> buffers) {
  printer << '[';
  llvm::interleaveComma(buffers, printer, [&](LaunchBufferAttr buffer) {
    printer << buffer.getName() << " : " << buffer.getType();
  });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// #fp4.launch_buffer
//===----------------------------------------------------------------------===//

StringRef LaunchBufferAttr::getManifestDType(Type elementType) {
  if (elementType.isBF16())
    return "bfloat16";
  if (elementType.isF16())
    return "float16";
  if (elementType.isF32())
    return "float32";
  if (elementType.isInteger(8))
    return "uint8";
  if (elementType.isInteger(32))
    return "int32";
  return "";
}

LogicalResult
LaunchBufferAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         StringAttr name, MemRefType type) {
  if (!name || name.getValue().empty())
    return emitError() << "launch_buffer: the name must not be empty";
  if (!type)
    return emitError() << "launch_buffer '" << name.getValue()
                       << "': expected a memref type";
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return emitError() << "launch_buffer '" << name.getValue()
                       << "': expected a static memref with the identity "
                          "layout, got "
                       << type;
  if (getManifestDType(type.getElementType()).empty())
    return emitError() << "launch_buffer '" << name.getValue()
                       << "': element type " << type.getElementType()
                       << " has no manifest dtype (bf16, f16, f32, i8, i32)";
  return success();
}

//===----------------------------------------------------------------------===//
// #fp4.kernel_launch
//===----------------------------------------------------------------------===//

LogicalResult
KernelLaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         SymbolRefAttr kernel, StringRef variant,
                         ArrayRef<int64_t> grid, ArrayRef<int64_t> block,
                         int64_t sharedBytes, ArrayRef<StringAttr> args,
                         bool dependent) {
  if (!kernel || kernel.getNestedReferences().size() != 1)
    return emitError() << "kernel_launch: expected the kernel as "
                          "@<gpu.module>::@<gpu.func>, got "
                       << kernel;
  if (variant.empty())
    return emitError() << "kernel_launch " << kernel
                       << ": the variant must not be empty";
  for (auto [what, dims] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"grid", grid},
        {"block", block}}) {
    if (dims.size() != 3)
      return emitError() << "kernel_launch " << kernel << ": " << what
                         << " needs 3 extents (x, y, z), got " << dims.size();
    if (llvm::any_of(dims, [](int64_t d) { return d < 1; })) {
      std::string list;
      llvm::raw_string_ostream os(list);
      llvm::interleaveComma(dims, os);
      return emitError() << "kernel_launch " << kernel << ": " << what
                         << " extents must be positive, got [" << list << "]";
    }
  }
  if (sharedBytes < 0)
    return emitError() << "kernel_launch " << kernel
                       << ": shared_bytes must not be negative, got "
                       << sharedBytes;
  if (args.empty())
    return emitError() << "kernel_launch " << kernel
                       << ": a kernel takes at least one buffer";
  return success();
}

//===----------------------------------------------------------------------===//
// #fp4.launch_plan
//===----------------------------------------------------------------------===//

LaunchBufferAttr LaunchPlanAttr::lookupBuffer(StringRef name) const {
  for (ArrayRef<LaunchBufferAttr> list :
       {getInputs(), getOutputs(), getScratch()})
    for (LaunchBufferAttr buffer : list)
      if (buffer.getName().getValue() == name)
        return buffer;
  return {};
}

bool LaunchPlanAttr::isScratch(StringRef name) const {
  return llvm::any_of(getScratch(), [&](LaunchBufferAttr buffer) {
    return buffer.getName().getValue() == name;
  });
}

LogicalResult LaunchPlanAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef op,
    ArrayRef<LaunchBufferAttr> inputs, ArrayRef<LaunchBufferAttr> outputs,
    ArrayRef<LaunchBufferAttr> scratch, ArrayRef<KernelLaunchAttr> launches) {
  if (op.empty())
    return emitError() << "launch_plan: op must name the op lowered";
  if (outputs.empty())
    return emitError() << "launch_plan for " << op << ": no output buffer";
  if (launches.empty())
    return emitError() << "launch_plan for " << op << ": no kernel launch";
  llvm::StringSet<> names;
  for (ArrayRef<LaunchBufferAttr> list : {inputs, outputs, scratch})
    for (LaunchBufferAttr buffer : list)
      if (!names.insert(buffer.getName().getValue()).second)
        return emitError() << "launch_plan for " << op << ": buffer '"
                           << buffer.getName().getValue()
                           << "' is declared twice";
  for (KernelLaunchAttr launch : launches)
    for (StringAttr arg : launch.getArgs())
      if (!names.contains(arg.getValue()))
        return emitError() << "launch_plan for " << op << ": kernel "
                           << launch.getKernel() << " takes '" << arg.getValue()
                           << "', which is not a buffer of the plan";
  return success();
}

//===----------------------------------------------------------------------===//
// #fp4.gpu_manifest
//===----------------------------------------------------------------------===//

LogicalResult
GPUManifestAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef chip, ArrayRef<LaunchPlanAttr> plans) {
  if (chip.empty())
    return emitError() << "gpu_manifest: the chip must not be empty";
  if (plans.empty())
    return emitError() << "gpu_manifest: no launch plan";
  return success();
}

//===----------------------------------------------------------------------===//
// Discardable uses
//===----------------------------------------------------------------------===//

LogicalResult
mlir::fp4::detail::verifyLaunchPlanAttrUse(Operation *op,
                                           NamedAttribute attribute) {
  if (attribute.getName() == GPUManifestAttr::kAttrName) {
    if (!isa<GPUManifestAttr>(attribute.getValue()))
      return op->emitOpError() << "attribute '" << GPUManifestAttr::kAttrName
                               << "' must be a #fp4.gpu_manifest";
    if (!isa<ModuleOp>(op))
      return op->emitOpError() << "'" << GPUManifestAttr::kAttrName
                               << "' applies to a builtin.module only";
    return success();
  }
  auto plan = dyn_cast<LaunchPlanAttr>(attribute.getValue());
  if (!plan)
    return op->emitOpError() << "attribute '" << LaunchPlanAttr::kAttrName
                             << "' must be a #fp4.launch_plan";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError()
           << "'" << LaunchPlanAttr::kAttrName << "' applies to functions only";
  // The function takes the inputs, then the outputs, and returns nothing.
  SmallVector<Type> expected;
  for (ArrayRef<LaunchBufferAttr> list : {plan.getInputs(), plan.getOutputs()})
    for (LaunchBufferAttr buffer : list)
      expected.push_back(buffer.getType());
  ArrayRef<Type> actual = func.getArgumentTypes();
  if (!func.getResultTypes().empty())
    return op->emitOpError()
           << "with a launch plan must not return values (its outputs are "
              "arguments)";
  if (actual.size() != expected.size())
    return op->emitOpError()
           << "takes " << actual.size() << " arguments but its launch plan "
           << "has " << expected.size() << " buffers (inputs, then outputs)";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(actual, expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return op->emitOpError()
             << "argument " << i << " is " << std::get<0>(pair)
             << " but its launch plan's buffer '"
             << (i < plan.getInputs().size()
                     ? plan.getInputs()[i]
                     : plan.getOutputs()[i - plan.getInputs().size()])
                    .getName()
                    .getValue()
             << "' is " << std::get<1>(pair);
  return success();
}
