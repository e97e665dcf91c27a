//===- ElementAccess.cpp - scalar reads of quantized buffers --------------===//

#include "ElementAccess.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/NVFP4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

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
  if (!isa<MXFP4Attr, NVFP4Attr, MXFP4MacroAttr, HiF4Attr>(type.getScheme())) {
    reason = "scheme has no GPU element reader";
    return false;
  }
  return true;
}

static Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Loads a byte of an i8 memref and zero-extends it to i32.
static Value loadByte(OpBuilder &b, Location loc, Value memref,
                      ValueRange indices) {
  Value byte = memref::LoadOp::create(b, loc, memref, indices);
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

Value mlir::fp4::loadCode(OpBuilder &b, Location loc, Value codes, Value row,
                          Value col) {
  Value two = constIndex(b, loc, 2);
  Value byte = loadByte(b, loc, codes,
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
  ArithOps ops(b, loc);
  Value code = loadCode(b, loc, components[0], row, col);
  auto blockIndex = [&](int64_t size) {
    return arith::DivUIOp::create(b, loc, col, constIndex(b, loc, size));
  };
  return llvm::TypeSwitch<Attribute, Value>(type.getScheme())
      .Case([&](MXFP4Attr scheme) -> Value {
        Value byte = loadByte(b, loc, components[1],
                              {row, blockIndex(scheme.getBlockSize())});
        return numerics::mxfp4Dequant(ops, code, byte);
      })
      .Case([&](NVFP4Attr) -> Value {
        Value byte = loadByte(b, loc, components[1], {row, blockIndex(16)});
        Value gDec = memref::LoadOp::create(b, loc, components[2], {});
        return numerics::nvfp4Dequant(ops, code, byte, gDec);
      })
      .Case([&](MXFP4MacroAttr scheme) -> Value {
        Value byte = loadByte(b, loc, components[1], {row, blockIndex(32)});
        int64_t macro = scheme.getMacroBlock();
        Value macroIndex =
            macro == 0 ? constIndex(b, loc, 0) : blockIndex(macro);
        Value factor =
            memref::LoadOp::create(b, loc, components[2], {row, macroIndex});
        factor = arith::ExtFOp::create(b, loc, b.getF32Type(), factor);
        return numerics::macroDequant(ops, code, byte, factor);
      })
      .Case([&](HiF4Attr) -> Value {
        Value meta =
            memref::LoadOp::create(b, loc, components[1], {row, blockIndex(64)});
        Value i = arith::IndexCastUIOp::create(
            b, loc, b.getI32Type(),
            arith::RemUIOp::create(b, loc, col, constIndex(b, loc, 64)));
        // Bit 8 + i/8 scales the 8-element sub-block, bit 16 + i/4 the
        // 4-element one (docs/ABI.md, HiF4 metadata).
        Value l2 = ops.shrui(meta, ops.addi(ops.i32(8), ops.shrui(i, ops.i32(3))));
        Value l3 =
            ops.shrui(meta, ops.addi(ops.i32(16), ops.shrui(i, ops.i32(2))));
        Value level = numerics::hif4LevelScale(ops, l2, l3);
        Value sf = numerics::e6m2Decode(ops, ops.andi(meta, ops.i32(255)));
        return numerics::hif4Dequant(ops, code, level, sf);
      })
      .Default([](Attribute) -> Value {
        llvm_unreachable("checked by isGPUReadableQuantizedType");
      });
}
