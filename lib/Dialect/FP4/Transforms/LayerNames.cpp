//===- LayerNames.cpp - layer names of ops from their locations -----------===//
//
// The layer name recipes, calibration keys and reports address an op by: the
// first NameLoc of its location. Frontends (fp4.torch.export) wrap each
// contraction's file:line location in a NameLoc carrying the module path;
// passes that fuse or inline ops keep it inside FusedLoc / CallSiteLoc.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/Transforms/Transforms.h"

using namespace mlir;

std::optional<StringRef> mlir::fp4::getLayerName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().strref();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::optional<StringRef> name = getLayerName(part))
        return name;
    return std::nullopt;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    if (std::optional<StringRef> name = getLayerName(callSite.getCallee()))
      return name;
    return getLayerName(callSite.getCaller());
  }
  if (auto opaque = dyn_cast<OpaqueLoc>(loc))
    return getLayerName(opaque.getFallbackLocation());
  return std::nullopt;
}
