//===- ElementAccess.cpp - scalar reads of quantized buffers --------------===//

#include "ElementAccess.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

bool mlir::fp4::isGPUReadableQuantizedType(QuantizedTensorType type,
                                           std::string &reason) {
  if (type.getRank() != 2 || type.getAxis() != 1) {
    reason = "GPU kernels take rank-2 quantized tensors blocked along the "
             "last axis";
    return false;
  }
  if (!type.hasStaticShape()) {
    reason = "GPU kernels are specialized to static shapes";
    return false;
  }
  if (!isa<SchemeGPULoweringAttrInterface>(type.getScheme())) {
    reason = "scheme has no GPU element reader";
    return false;
  }
  return true;
}

static Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value mlir::fp4::loadByteAsI32(OpBuilder &b, Location loc, Value memref,
                               ValueRange indices) {
  Value byte = memref::LoadOp::create(b, loc, memref, indices);
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

Value mlir::fp4::componentColumn(OpBuilder &b, Location loc, Value col,
                                 int64_t size, int64_t s) {
  Value first = arith::DivUIOp::create(b, loc, col, constIndex(b, loc, size));
  return s == 0 ? first
                : arith::AddIOp::create(b, loc, first, constIndex(b, loc, s))
                      .getResult();
}

SmallVector<Value> mlir::fp4::dequantizeByteScaledChunk(
    OpBuilder &b, Location loc, Value scales, ValueRange codes, Value row,
    Value col, int64_t block,
    function_ref<Value(int64_t, Value, Value)> valueOf) {
  int64_t chunk = codes.size();
  int64_t run = std::min(block, chunk);
  SmallVector<Value> values(chunk);
  for (int64_t s = 0; s < chunk / run; ++s) {
    Value byte = loadByteAsI32(b, loc, scales,
                               {row, componentColumn(b, loc, col, block, s)});
    for (int64_t j = s * run; j < (s + 1) * run; ++j)
      values[j] = valueOf(j, codes[j], byte);
  }
  return values;
}

Value mlir::fp4::loadCode(OpBuilder &b, Location loc, Value codes, Value row,
                          Value col) {
  Value two = constIndex(b, loc, 2);
  Value byte = loadByteAsI32(b, loc, codes,
                             {row, arith::DivUIOp::create(b, loc, col, two)});
  // Element 2k is the low nibble, 2k+1 the high one (docs/ABI.md).
  Value odd = arith::RemUIOp::create(b, loc, col, two);
  Value shift = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), odd),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 4));
  Value code = arith::ShRUIOp::create(b, loc, byte, shift);
  return arith::AndIOp::create(
      b, loc, code, arith::ConstantIntOp::create(b, loc, b.getI32Type(), 15));
}

Value mlir::fp4::loadDequantizedElement(OpBuilder &b, Location loc,
                                        QuantizedTensorType type,
                                        ValueRange components, Value row,
                                        Value col) {
  Value code = loadCode(b, loc, components[0], row, col);
  return cast<SchemeGPULoweringAttrInterface>(type.getScheme())
      .buildGPUElementLoad(b, loc, components, code, row, col);
}
