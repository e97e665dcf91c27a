//===- FP4Base.td - fp4 dialect definition -----------------*- tablegen -*-===//
//
// The fp4 dialect: microscaled 4-bit floating-point tensors and the ops that
// produce and consume them.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4BASE_TD
#define FP4_DIALECT_FP4_IR_FP4BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def FP4_Dialect : Dialect {
  let name = "fp4";
  let cppNamespace = "::mlir::fp4";
  let summary = "Microscaled 4-bit floating point (MXFP4, NVFP4, HiF4) tensors";
  let description = [{
    The `fp4` dialect represents tensors quantized to 4-bit floating point
    with block scales (OCP MXFP4, NVIDIA NVFP4, the three-level HiF4 format
    and macro-block-scaled MXFP4) and the operations that create, consume and
    take them apart.

    A quantization *scheme* is an attribute implementing
    `QuantSchemeAttrInterface` (`#fp4.mxfp4`, `#fp4.nvfp4`, `#fp4.hif4`,
    `#fp4.mxfp4_macro`). A quantized value has type
    `!fp4.tensor<shape x element, scheme, axis = A>`, blocked along axis `A`.
    Its in-memory components (packed codes, scale tensors, tensor scale) are
    defined by the scheme and documented in docs/ABI.md; `fp4.pack` and
    `fp4.unpack` convert between the two views. The numerics of every scheme
    are fixed bit for bit by the project's numerics specification.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // Checks the discardable attributes `fp4.gpu_config` (GPUConfigAttr.cpp),
  // `fp4.launch_plan` and `fp4.gpu_manifest` (LaunchPlanAttr.cpp).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

//===----------------------------------------------------------------------===//
// Enums shared by the schemes.
//===----------------------------------------------------------------------===//

def FP4_ScaleRounding : I32EnumAttr<"ScaleRounding",
    "rule deriving an MXFP4 (E8M0) block exponent from the block amax", [
      I32EnumAttrCase<"Floor", 0, "floor">,
      I32EnumAttrCase<"Ceil", 1, "ceil">,
      I32EnumAttrCase<"Even", 2, "even">,
      I32EnumAttrCase<"RCeil", 3, "rceil">
    ]> {
  let cppNamespace = "::mlir::fp4";
  let genSpecializedAttr = 0;
}

def FP4_ElementRounding : I32EnumAttr<"ElementRounding",
    "rounding of scaled values onto the E2M1 grid", [
      I32EnumAttrCase<"NearestEven", 0, "rne">,
      I32EnumAttrCase<"HalfAway", 1, "half_away">,
      I32EnumAttrCase<"Stochastic", 2, "stochastic">
    ]> {
  let cppNamespace = "::mlir::fp4";
  let genSpecializedAttr = 0;
}

class FP4_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FP4_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class FP4_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<FP4_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class FP4_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP4_Dialect, mnemonic, traits>;

#endif // FP4_DIALECT_FP4_IR_FP4BASE_TD
