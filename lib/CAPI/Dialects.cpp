//===- Dialects.cpp - C API of the fp4 dialect ----------------------------===//
//
// Thin wrappers over the fp4 attribute and type classes. Every constructor
// goes through getChecked so that bad parameters coming from C or Python end
// up as a diagnostic and a null handle instead of an abort.
//
//===----------------------------------------------------------------------===//

#include "fp4-c/Dialects.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::fp4;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FP4, fp4, mlir::fp4::FP4Dialect)

// The C enums of fp4-c/Numerics.h are passed straight through as the dialect
// enums' integer values; keep the two numberings identical.
static_assert(FP4_SCALE_FLOOR == static_cast<int>(ScaleRounding::Floor) &&
                  FP4_SCALE_CEIL == static_cast<int>(ScaleRounding::Ceil) &&
                  FP4_SCALE_EVEN == static_cast<int>(ScaleRounding::Even) &&
                  FP4_SCALE_RCEIL == static_cast<int>(ScaleRounding::RCeil),
              "Fp4ScaleRounding and mlir::fp4::ScaleRounding diverged");
static_assert(
    FP4_ROUND_NEAREST_EVEN == static_cast<int>(ElementRounding::NearestEven) &&
        FP4_ROUND_HALF_AWAY == static_cast<int>(ElementRounding::HalfAway) &&
        FP4_ROUND_STOCHASTIC == static_cast<int>(ElementRounding::Stochastic),
    "Fp4ElementRounding and mlir::fp4::ElementRounding diverged");

namespace {
/// Emits on an unknown location of `ctx`: the C API has no better one.
struct ContextErrorEmitter {
  MLIRContext *ctx;
  InFlightDiagnostic operator()() const {
    return emitError(UnknownLoc::get(ctx));
  }
};
} // namespace

/// Attribute and type storage is registered when the dialect loads; C callers
/// may construct before anything was parsed, so load it on demand.
static MLIRContext *withFP4Loaded(MlirContext ctx) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<FP4Dialect>();
  return context;
}

/// Validates enum values from C; out-of-range values become an error.
static std::optional<ScaleRounding> toScaleRounding(MLIRContext *ctx,
                                                    int32_t value) {
  std::optional<ScaleRounding> result =
      value < 0 ? std::nullopt : symbolizeScaleRounding(value);
  if (!result)
    emitError(UnknownLoc::get(ctx))
        << "invalid scale rounding " << value
        << " (expected 0 floor, 1 ceil, 2 even or 3 rceil)";
  return result;
}

static std::optional<ElementRounding> toElementRounding(MLIRContext *ctx,
                                                        int32_t value) {
  std::optional<ElementRounding> result =
      value < 0 ? std::nullopt : symbolizeElementRounding(value);
  if (!result)
    emitError(UnknownLoc::get(ctx))
        << "invalid element rounding " << value
        << " (expected 0 rne, 1 half_away or 2 stochastic)";
  return result;
}

/// Strings handed to C must outlive the call: intern them in the context.
static MlirStringRef internString(MLIRContext *ctx, StringRef str) {
  return wrap(StringAttr::get(ctx, str).getValue());
}

//===----------------------------------------------------------------------===//
// Scheme interface
//===----------------------------------------------------------------------===//

bool fp4AttributeIsAQuantScheme(MlirAttribute attr) {
  return isa<QuantSchemeAttrInterface>(unwrap(attr));
}

MlirStringRef fp4QuantSchemeGetFormatName(MlirAttribute scheme) {
  auto iface = cast<QuantSchemeAttrInterface>(unwrap(scheme));
  return internString(iface.getContext(), iface.getFormatName());
}

MlirType fp4QuantSchemeGetElementType(MlirAttribute scheme) {
  return wrap(cast<QuantSchemeAttrInterface>(unwrap(scheme)).getElementType());
}

int64_t fp4QuantSchemeGetBlockSize(MlirAttribute scheme) {
  return cast<QuantSchemeAttrInterface>(unwrap(scheme)).getBlockSize();
}

int64_t fp4QuantSchemeGetAxisMultiple(MlirAttribute scheme) {
  return cast<QuantSchemeAttrInterface>(unwrap(scheme)).getAxisMultiple();
}

double fp4QuantSchemeGetBitsPerElement(MlirAttribute scheme) {
  return cast<QuantSchemeAttrInterface>(unwrap(scheme)).getBitsPerElement();
}

intptr_t fp4QuantSchemeGetNumComponents(MlirAttribute scheme) {
  SmallVector<StringRef> names;
  cast<QuantSchemeAttrInterface>(unwrap(scheme)).getComponentNames(names);
  return names.size();
}

MlirStringRef fp4QuantSchemeGetComponentName(MlirAttribute scheme,
                                             intptr_t pos) {
  auto iface = cast<QuantSchemeAttrInterface>(unwrap(scheme));
  SmallVector<StringRef> names;
  iface.getComponentNames(names);
  if (pos < 0 || pos >= static_cast<intptr_t>(names.size()))
    return mlirStringRefCreate(nullptr, 0);
  return internString(iface.getContext(), names[pos]);
}

//===----------------------------------------------------------------------===//
// #fp4.mxfp4
//===----------------------------------------------------------------------===//

bool fp4AttributeIsAMXFP4(MlirAttribute attr) {
  return isa<MXFP4Attr>(unwrap(attr));
}

MlirAttribute fp4MXFP4AttrGet(MlirContext ctx, int64_t blockSize,
                              int32_t scaleRounding, int32_t rounding,
                              uint32_t seed) {
  MLIRContext *context = withFP4Loaded(ctx);
  std::optional<ScaleRounding> scale = toScaleRounding(context, scaleRounding);
  std::optional<ElementRounding> elem = toElementRounding(context, rounding);
  if (!scale || !elem)
    return MlirAttribute{nullptr};
  return wrap(MXFP4Attr::getChecked(ContextErrorEmitter{context}, context,
                                    blockSize, *scale, *elem, seed));
}

int64_t fp4MXFP4AttrGetBlockSize(MlirAttribute attr) {
  return cast<MXFP4Attr>(unwrap(attr)).getBlockSize();
}
int32_t fp4MXFP4AttrGetScaleRounding(MlirAttribute attr) {
  return static_cast<int32_t>(cast<MXFP4Attr>(unwrap(attr)).getScaleRounding());
}
int32_t fp4MXFP4AttrGetRounding(MlirAttribute attr) {
  return static_cast<int32_t>(cast<MXFP4Attr>(unwrap(attr)).getRounding());
}
uint32_t fp4MXFP4AttrGetSeed(MlirAttribute attr) {
  return cast<MXFP4Attr>(unwrap(attr)).getSeed();
}

//===----------------------------------------------------------------------===//
// #fp4.nvfp4
//===----------------------------------------------------------------------===//

bool fp4AttributeIsANVFP4(MlirAttribute attr) {
  return isa<NVFP4Attr>(unwrap(attr));
}

MlirAttribute fp4NVFP4AttrGet(MlirContext ctx, bool fourOverSix, bool tile2d,
                              int32_t rounding, uint32_t seed) {
  MLIRContext *context = withFP4Loaded(ctx);
  std::optional<ElementRounding> elem = toElementRounding(context, rounding);
  if (!elem)
    return MlirAttribute{nullptr};
  return wrap(NVFP4Attr::getChecked(ContextErrorEmitter{context}, context,
                                    fourOverSix, tile2d, *elem, seed));
}

bool fp4NVFP4AttrGetFourOverSix(MlirAttribute attr) {
  return cast<NVFP4Attr>(unwrap(attr)).getFourOverSix();
}
bool fp4NVFP4AttrGetTile2d(MlirAttribute attr) {
  return cast<NVFP4Attr>(unwrap(attr)).getTile2d();
}
int32_t fp4NVFP4AttrGetRounding(MlirAttribute attr) {
  return static_cast<int32_t>(cast<NVFP4Attr>(unwrap(attr)).getRounding());
}
uint32_t fp4NVFP4AttrGetSeed(MlirAttribute attr) {
  return cast<NVFP4Attr>(unwrap(attr)).getSeed();
}

//===----------------------------------------------------------------------===//
// #fp4.hif4
//===----------------------------------------------------------------------===//

bool fp4AttributeIsAHiF4(MlirAttribute attr) {
  return isa<HiF4Attr>(unwrap(attr));
}

MlirAttribute fp4HiF4AttrGet(MlirContext ctx) {
  return wrap(HiF4Attr::get(withFP4Loaded(ctx)));
}

//===----------------------------------------------------------------------===//
// #fp4.mxfp4_macro
//===----------------------------------------------------------------------===//

bool fp4AttributeIsAMXFP4Macro(MlirAttribute attr) {
  return isa<MXFP4MacroAttr>(unwrap(attr));
}

MlirAttribute fp4MXFP4MacroAttrGet(MlirContext ctx, int64_t macroBlock,
                                   int64_t search, int32_t scaleRounding,
                                   int32_t rounding, uint32_t seed) {
  MLIRContext *context = withFP4Loaded(ctx);
  std::optional<ScaleRounding> scale = toScaleRounding(context, scaleRounding);
  std::optional<ElementRounding> elem = toElementRounding(context, rounding);
  if (!scale || !elem)
    return MlirAttribute{nullptr};
  return wrap(MXFP4MacroAttr::getChecked(ContextErrorEmitter{context}, context,
                                         macroBlock, search, *scale, *elem,
                                         seed));
}

int64_t fp4MXFP4MacroAttrGetMacroBlock(MlirAttribute attr) {
  return cast<MXFP4MacroAttr>(unwrap(attr)).getMacroBlock();
}
int64_t fp4MXFP4MacroAttrGetSearch(MlirAttribute attr) {
  return cast<MXFP4MacroAttr>(unwrap(attr)).getSearch();
}
int32_t fp4MXFP4MacroAttrGetScaleRounding(MlirAttribute attr) {
  return static_cast<int32_t>(
      cast<MXFP4MacroAttr>(unwrap(attr)).getScaleRounding());
}
int32_t fp4MXFP4MacroAttrGetRounding(MlirAttribute attr) {
  return static_cast<int32_t>(cast<MXFP4MacroAttr>(unwrap(attr)).getRounding());
}
uint32_t fp4MXFP4MacroAttrGetSeed(MlirAttribute attr) {
  return cast<MXFP4MacroAttr>(unwrap(attr)).getSeed();
}

//===----------------------------------------------------------------------===//
// !fp4.s1p2
//===----------------------------------------------------------------------===//

bool fp4TypeIsAS1P2(MlirType type) { return isa<S1P2Type>(unwrap(type)); }

MlirType fp4S1P2TypeGet(MlirContext ctx) {
  return wrap(S1P2Type::get(withFP4Loaded(ctx)));
}

//===----------------------------------------------------------------------===//
// !fp4.tensor
//===----------------------------------------------------------------------===//

bool fp4TypeIsAQuantizedTensor(MlirType type) {
  return isa<QuantizedTensorType>(unwrap(type));
}

MlirType fp4QuantizedTensorTypeGetChecked(MlirLocation loc, intptr_t rank,
                                          const int64_t *shape,
                                          MlirAttribute scheme, int64_t axis) {
  Location location = unwrap(loc);
  auto emitter = [&]() { return emitError(location); };
  auto iface = dyn_cast_or_null<QuantSchemeAttrInterface>(unwrap(scheme));
  if (!iface) {
    emitter() << "expected a quantization scheme attribute (#fp4.mxfp4, "
                 "#fp4.nvfp4, #fp4.hif4, #fp4.mxfp4_macro), got "
              << unwrap(scheme);
    return MlirType{nullptr};
  }
  if (rank < 0 || (rank > 0 && !shape)) {
    emitter() << "invalid shape: rank " << rank;
    return MlirType{nullptr};
  }
  return wrap(QuantizedTensorType::getChecked(
      emitter, location.getContext(),
      ArrayRef<int64_t>(shape, static_cast<size_t>(rank)),
      iface.getElementType(), iface, axis));
}

MlirType fp4QuantizedTensorTypeGet(intptr_t rank, const int64_t *shape,
                                   MlirAttribute scheme, int64_t axis) {
  if (mlirAttributeIsNull(scheme))
    return MlirType{nullptr};
  return fp4QuantizedTensorTypeGetChecked(
      wrap(Location(UnknownLoc::get(unwrap(scheme).getContext()))), rank, shape,
      scheme, axis);
}

MlirAttribute fp4QuantizedTensorTypeGetScheme(MlirType type) {
  return wrap(cast<QuantizedTensorType>(unwrap(type)).getScheme());
}

int64_t fp4QuantizedTensorTypeGetAxis(MlirType type) {
  return cast<QuantizedTensorType>(unwrap(type)).getAxis();
}

intptr_t fp4QuantizedTensorTypeGetRank(MlirType type) {
  return cast<QuantizedTensorType>(unwrap(type)).getShape().size();
}

int64_t fp4QuantizedTensorTypeGetDimSize(MlirType type, intptr_t dim) {
  return cast<QuantizedTensorType>(unwrap(type)).getShape()[dim];
}

MlirType fp4QuantizedTensorTypeGetElementType(MlirType type) {
  return wrap(cast<QuantizedTensorType>(unwrap(type)).getElementType());
}

intptr_t fp4QuantizedTensorTypeGetNumComponents(MlirType type) {
  return cast<QuantizedTensorType>(unwrap(type)).getComponentTypes().size();
}

MlirType fp4QuantizedTensorTypeGetComponentType(MlirType type, intptr_t pos) {
  SmallVector<Type> types =
      cast<QuantizedTensorType>(unwrap(type)).getComponentTypes();
  if (pos < 0 || pos >= static_cast<intptr_t>(types.size()))
    return MlirType{nullptr};
  return wrap(types[pos]);
}
