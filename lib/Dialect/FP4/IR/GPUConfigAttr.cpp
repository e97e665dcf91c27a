//===- GPUConfigAttr.cpp - #fp4.gpu_config
//---------------------------------===//
//
// The verifier of the GPU kernel configuration and of its use as the
// discardable `fp4.gpu_config` attribute. The parameter ranges live in one
// table that the pass options of convert-fp4-to-gpu check against too, so
// an option and the attribute parameter it sets cannot disagree. Limits of a
// particular chip are not checked here (the attribute does not name a chip):
// the conversion checks them against its chip description.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/GPUConfig.h"

#include "AttrVerifiers.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

using ParamRange = GPUConfigAttr::ParameterRange;

// What the kernel builders accept (docs/GPU.md). Ranges are inclusive.
constexpr ParamRange kRanges[] = {
    {"warps", GPUKernelFamily::Decode, 0, 16, 1, false},
    {"k_unroll", GPUKernelFamily::Decode, 128, 1024, 128, false},
    {"rows_per_cta", GPUKernelFamily::Decode, 0, 256, 16, false},
    {"split_k", GPUKernelFamily::Decode, 0, 64, 1, false},
    {"prefetch", GPUKernelFamily::Decode, 0, 2, 1, false},
    {"max_registers", GPUKernelFamily::Decode, 32, 255, 1, true},
    {"tile_m", GPUKernelFamily::Prefill, 16, 256, 16, false},
    {"tile_n", GPUKernelFamily::Prefill, 8, 256, 8, false},
    {"tile_k", GPUKernelFamily::Prefill, 32, 256, 32, false},
    {"warps_m", GPUKernelFamily::Prefill, 1, 8, 1, false},
    {"warps_n", GPUKernelFamily::Prefill, 1, 8, 1, false},
    {"stages", GPUKernelFamily::Prefill, 2, 6, 1, false},
    {"threads", GPUKernelFamily::Elementwise, 32, 1024, 32, false},
};
using D = GPUConfigDefaults;

} // namespace

GPUConfigAttr mlir::fp4::getDefaultGPUConfig(MLIRContext *context,
                                             GPUKernelFamily family) {
  return GPUConfigAttr::get(
      context, family, D::warps, D::kUnroll, D::rowsPerCta, D::splitK,
      D::prefetch, D::maxRegisters, D::tileM, D::tileN, D::tileK, D::warpsM,
      D::warpsN, D::stages, GPUPrefillDequant::Shared, GPUPrefillMMA::Sync,
      D::threads);
}

const GPUConfigAttr::ParameterRange *
GPUConfigAttr::lookupParameterRange(StringRef key) {
  for (const ParamRange &range : kRanges)
    if (range.key == key)
      return &range;
  return nullptr;
}

LogicalResult
GPUConfigAttr::checkParameter(function_ref<InFlightDiagnostic()> emitError,
                              StringRef key, int64_t value, StringRef what) {
  const ParamRange *range = lookupParameterRange(key);
  assert(range && "unknown gpu_config parameter");
  if (range->zeroAllowed && value == 0)
    return success();
  if (value >= range->lo && value <= range->hi && value % range->multiple == 0)
    return success();
  InFlightDiagnostic diag = emitError();
  diag << what << "=" << value << " is out of range ("
       << (range->zeroAllowed ? "0 or " : "") << range->lo << ".." << range->hi;
  if (range->multiple > 1)
    diag << ", a multiple of " << range->multiple;
  return diag << ")";
}

LogicalResult GPUConfigAttr::checkDecodeWarps(
    function_ref<InFlightDiagnostic()> emitError, StringRef warpsWhat,
    int64_t warps, StringRef rowsWhat, int64_t rowsPerCta) {
  // The decode CTA is rows_per_cta / 16 row groups of warps / groups K
  // warps each; where both are given, the groups must divide the warps.
  if (warps <= 0 || rowsPerCta <= 0)
    return success();
  int64_t groups = rowsPerCta / 16;
  if (groups > 0 && warps % groups == 0)
    return success();
  return emitError() << warpsWhat << "=" << warps << " is not a multiple of "
                     << "the " << groups << " row groups of " << rowsWhat
                     << "=" << rowsPerCta << " (16 weight rows each)";
}

LogicalResult GPUConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, GPUKernelFamily family,
    int64_t warps, int64_t kUnroll, int64_t rowsPerCta, int64_t splitK,
    int64_t prefetch, int64_t maxRegisters, int64_t tileM, int64_t tileN,
    int64_t tileK, int64_t warpsM, int64_t warpsN, int64_t stages,
    GPUPrefillDequant dequant, GPUPrefillMMA mma, int64_t threads) {
  // A parameter of another family must keep its default, so that nothing
  // set is silently ignored.
  struct Value {
    StringLiteral key;
    int64_t value, defaultValue;
  };
  const Value values[] = {
      {"warps", warps, D::warps},
      {"k_unroll", kUnroll, D::kUnroll},
      {"rows_per_cta", rowsPerCta, D::rowsPerCta},
      {"split_k", splitK, D::splitK},
      {"prefetch", prefetch, D::prefetch},
      {"max_registers", maxRegisters, D::maxRegisters},
      {"tile_m", tileM, D::tileM},
      {"tile_n", tileN, D::tileN},
      {"tile_k", tileK, D::tileK},
      {"warps_m", warpsM, D::warpsM},
      {"warps_n", warpsN, D::warpsN},
      {"stages", stages, D::stages},
      {"threads", threads, D::threads},
  };
  for (const Value &v : values) {
    const ParamRange *range = lookupParameterRange(v.key);
    if (range->family != family) {
      if (v.value != v.defaultValue)
        return emitError() << "gpu_config: " << v.key
                           << " is a parameter of the "
                           << stringifyGPUKernelFamily(range->family)
                           << " family, not of "
                           << stringifyGPUKernelFamily(family);
      continue;
    }
    if (failed(checkParameter(emitError, v.key, v.value,
                              ("gpu_config: " + v.key).str())))
      return failure();
  }
  if (failed(checkDecodeWarps(emitError, "gpu_config: warps", warps,
                              "rows_per_cta", rowsPerCta)))
    return failure();
  if (family != GPUKernelFamily::Prefill &&
      dequant != GPUPrefillDequant::Shared)
    return emitError() << "gpu_config: dequant is a parameter of the "
                          "prefill family, not of "
                       << stringifyGPUKernelFamily(family);
  if (family != GPUKernelFamily::Prefill &&
      family != GPUKernelFamily::Decode && mma != GPUPrefillMMA::Sync)
    return emitError() << "gpu_config: mma is a parameter of the decode and "
                          "prefill families, not of "
                       << stringifyGPUKernelFamily(family);
  return success();
}

LogicalResult
mlir::fp4::detail::verifyGPUConfigAttrUse(Operation *op,
                                          NamedAttribute attribute) {
  auto config = dyn_cast<GPUConfigAttr>(attribute.getValue());
  if (!config)
    return op->emitOpError() << "attribute '" << GPUConfigAttr::kAttrName
                             << "' must be a #fp4.gpu_config";
  GPUKernelFamily family = config.getFamily();
  if (isa<MatmulOp>(op)) {
    if (family == GPUKernelFamily::Elementwise)
      return op->emitOpError()
             << "takes a decode, prefill or reference gpu_config, not "
                "elementwise";
    return success();
  }
  if (isa<QuantizeOp, DequantizeOp>(op)) {
    if (family != GPUKernelFamily::Elementwise)
      return op->emitOpError() << "takes an elementwise gpu_config, not "
                               << stringifyGPUKernelFamily(family);
    return success();
  }
  return op->emitOpError() << "'" << GPUConfigAttr::kAttrName
                           << "' applies to fp4.matmul, fp4.quantize and "
                              "fp4.dequantize only";
}
