//===- SchemeGPULoweringInterface.td - per-scheme GPU lowering -*- tablegen -*-===//
//
// How convert-fp4-to-gpu reaches the format-specific part of its kernels:
// each scheme attribute gets this interface as an external model (one file
// per format in lib/Conversion/FP4ToGPU, <Format>GPULowering.cpp), so the
// kernel families never switch over formats and a new scheme plugs in by
// attaching one model. The CPU counterpart is SchemeLoweringInterface.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_TD
#define FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_TD

include "mlir/IR/OpBase.td"

def FP4_SchemeGPULoweringAttrInterface
    : AttrInterface<"SchemeGPULoweringAttrInterface"> {
  let cppNamespace = "::mlir::fp4";
  let description = [{
    What the GPU kernels need to know about a quantization scheme: the
    layout of its component buffers (docs/ABI.md), how one element or a
    thread's chunk is dequantized, how its codes become exact bf16 tensor-core
    fragments, and the quantizer's block algorithm. Every emitted element
    operation must be a numerics rule instantiated with `ArithOps`, so the
    kernels compute the C++ reference's values bit for bit (numerics.md).
    Tensors are rank 2, static, blocked along axis 1.
  }];
  let methods = [
    InterfaceMethod<[{
      Manifest name suffixes of the components, in ABI order ("codes"
      first, e.g. "scales", "tensor_scale").
    }],
    "::llvm::SmallVector<::llvm::StringRef>", "getGPUComponentSuffixes">,
    InterfaceMethod<[{
      The short scheme name used in kernel variant names ("mxfp4", ...).
    }],
    "::llvm::StringRef", "getGPUVariantName">,
    InterfaceMethod<[{
      Elements along K that share one scale value (byte or metadata word).
    }],
    "int64_t", "getGPUScaleBlock">,
    InterfaceMethod<[{
      Elements along K that share one second-level factor component, for an
      axis of `k` elements; 0 when the scheme has none.
    }],
    "int64_t", "getGPUMacroBlock", (ins "int64_t":$k)>,
    InterfaceMethod<[{
      The f32 value of element (`row`, `col`) (index values) of a tensor
      stored in `components` (memrefs in ABI order), whose 4-bit code
      (i32) `code` is already loaded, for scalar paths.
    }],
    "::mlir::Value", "buildGPUElementLoad",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
         "::mlir::ValueRange":$components, "::mlir::Value":$code,
         "::mlir::Value":$row, "::mlir::Value":$col)>,
    InterfaceMethod<[{
      The f32 values of a thread's chunk of `codes.size()` elements starting
      at (`row`, `col`), whose codes (i32 0..15) are already loaded; the
      chunk lies in one scale block or holds whole ones (and the same for
      macro blocks).
    }],
    "::llvm::SmallVector<::mlir::Value>", "buildGPUDequantizeChunk",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
         "::mlir::ValueRange":$components, "::mlir::ValueRange":$codes,
         "::mlir::Value":$row, "::mlir::Value":$col,
         "::mlir::fp4::QuantizedTensorType":$type)>,
    InterfaceMethod<[{
      How codes of `type` become exact bf16x2 mma fragments
      (BF16FragmentForm), or nullopt with `reason` set when the scheme has
      no exact bf16 form.
    }],
    "std::optional<::mlir::fp4::BF16FragmentForm>", "getBF16FragmentForm",
    (ins "::mlir::fp4::QuantizedTensorType":$type, "std::string &":$reason)>,
    InterfaceMethod<[{
      The bf16x2 multiplier (i32, both halves equal) of the scale byte
      `byte` (i32 0..255); with `fast`, the one-multiply form of
      BF16FragmentForm::hasFastForm.
    }],
    "::mlir::Value", "buildBF16ScaleMultiplier",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
         "::mlir::Value":$byte, "bool":$fast)>,
    InterfaceMethod<[{
      Fills `plan` with what the quantizer's block algorithm needs of the
      kernel (groups a chunk must fit, a tensor amax pass, ...) for `spec`;
      failure with `reason` set when the GPU cannot quantize it.
    }],
    "::llvm::LogicalResult", "planGPUQuantize",
    (ins "const ::mlir::fp4::QuantizeKernelSpec &":$spec,
         "::mlir::fp4::GPUQuantizePlan &":$plan, "std::string &":$reason)>,
    InterfaceMethod<[{
      Emits the block algorithm on one thread's chunk of input values and
      stores its codes and scale components (QuantizeChunk.h).
    }],
    "void", "buildGPUQuantizeChunk",
    (ins "::mlir::fp4::QuantizeChunkContext &":$context)>,
  ];
}

#endif // FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_TD
