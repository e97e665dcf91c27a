//===- WarpgroupMMA.cpp - wgmma.mma_async building blocks ----------------===//

#include "WarpgroupMMA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4;

static Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

Value mlir::fp4::buildSharedAddress(OpBuilder &b, Location loc,
                                    Value memref) {
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
}

void mlir::fp4::buildSwizzleBaseCheck(OpBuilder &b, Location loc,
                                      Value address) {
  Value misaligned = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, address,
                            i64Const(b, loc, kWgmmaSwizzleBytes - 1)),
      i64Const(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, misaligned, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  LLVM::Trap::create(b, loc);
}

Value mlir::fp4::buildWgmmaDescriptor(OpBuilder &b, Location loc,
                                      Value address, int64_t rowBytes) {
  assert((rowBytes == 128 || rowBytes == 64) && "128- or 64-byte swizzle");
  // Bits 0-13: (address & 0x3FFFF) >> 4; 16-29: leading byte offset >> 4;
  // 32-45: stride byte offset >> 4; 62-63: swizzle mode (1 = 128 bytes,
  // 2 = 64 bytes).
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, i64Const(b, loc, 0x3FFFF)),
      i64Const(b, loc, 4));
  const int64_t mode = rowBytes == 128 ? 1 : 2;
  const int64_t fixed = (int64_t{1} << 16) | ((8 * rowBytes >> 4) << 32) |
                        (mode << 62);
  return arith::OrIOp::create(b, loc, start, i64Const(b, loc, fixed));
}

static LLVM::LLVMStructType accumulatorType(OpBuilder &b, int64_t n) {
  SmallVector<Type> fields(n / 2, b.getF32Type());
  return LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
}

Value mlir::fp4::buildWgmmaZeroAccumulator(OpBuilder &b, Location loc,
                                           int64_t n) {
  LLVM::LLVMStructType type = accumulatorType(b, n);
  Value acc = LLVM::UndefOp::create(b, loc, type);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  for (int64_t i = 0; i < n / 2; ++i)
    acc = LLVM::InsertValueOp::create(b, loc, acc, zero, i);
  return acc;
}

Value mlir::fp4::buildWgmmaBF16(OpBuilder &b, Location loc, Value descA,
                                Value descB, Value acc, int64_t n) {
  assert(n % 8 == 0 && n >= 8 && n <= 256 && "wgmma N is 8..256, step 8");
  MLIRContext *ctx = b.getContext();
  auto bf16 = NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::bf16);
  auto f32 = NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // A is row-major (K-major), B "col": B^T stored K-major, i.e. W[N][K].
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, acc.getType(), acc, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, 64, n, 16), bf16, bf16, f32,
      NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col),
      /*satfinite=*/NVVM::MMAIntOverflowAttr());
}

/// An inline-PTX wgmma whose D is the accumulator struct `acc` ($0..: the
/// outputs, tied to the inputs after them) followed by `operands` under
/// `constraints`, with the text after the D list given by `tail`.
static Value buildInlineWgmma(OpBuilder &b, Location loc, StringRef opcode,
                              Value acc, int64_t n, ValueRange operands,
                              StringRef operandConstraints,
                              function_ref<std::string(int64_t)> tail) {
  const int64_t regs = n / 2;
  std::string text = opcode.str() + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  text += "}, " + tail(2 * regs) + ";";
  SmallVector<Value> all;
  for (int64_t i = 0; i < regs; ++i) {
    constraints += "," + std::to_string(i);
    all.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  }
  constraints += "," + operandConstraints.str();
  llvm::append_range(all, operands);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, acc.getType(), all, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return op.getResult(0);
}

Value mlir::fp4::buildWgmmaRegisterABF16(OpBuilder &b, Location loc,
                                         ValueRange a, Value descB, Value acc,
                                         int64_t n) {
  assert(n % 8 == 0 && n >= 8 && n <= 256 && "wgmma N is 8..256, step 8");
  assert(a.size() == 4 && "four bf16 pairs of A per thread");
  // {A registers}, descB; scale-d 1 (accumulate), A and B not negated, B
  // not transposed (K-major).
  auto tail = [](int64_t first) {
    std::string t = "{";
    for (int64_t i = 0; i < 4; ++i)
      t += (i ? ", $" : "$") + std::to_string(first + i);
    return t + "}, $" + std::to_string(first + 4) + ", 1, 1, 1, 0";
  };
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(descB);
  return buildInlineWgmma(
      b, loc,
      "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
          "k16.f32.bf16.bf16",
      acc, n, operands, "r,r,r,r,l", tail);
}

Value mlir::fp4::buildWgmmaSparseBF16(OpBuilder &b, Location loc,
                                      Value descA, Value descB, Value meta,
                                      Value acc, int64_t n) {
  assert(n % 8 == 0 && n >= 8 && n <= 256 && "wgmma N is 8..256, step 8");
  const int64_t regs = n / 2;
  // $0..$regs-1: D (tied to the accumulator inputs $regs..2 regs - 1),
  // then descA, descB, metadata; selector 0, scale-d 1 (accumulate), A and
  // B neither negated nor transposed (both K-major).
  std::string text = "wgmma.mma_async.sp.sync.aligned.m64n" +
                     std::to_string(n) + "k32.f32.bf16.bf16 {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  text += "}, $" + std::to_string(2 * regs) + ", $" +
          std::to_string(2 * regs + 1) + ", $" + std::to_string(2 * regs + 2) +
          ", 0, 1, 1, 1, 0, 0;";
  SmallVector<Value> operands;
  for (int64_t i = 0; i < regs; ++i) {
    constraints += "," + std::to_string(i);
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  }
  constraints += ",l,l,r";
  llvm::append_range(operands, ValueRange{descA, descB, meta});
  auto op = LLVM::InlineAsmOp::create(
      b, loc, acc.getType(), operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return op.getResult(0);
}

Value mlir::fp4::buildWgmmaSparseRegisterABF16(OpBuilder &b, Location loc,
                                               ValueRange a, Value descB,
                                               Value meta, int64_t selector,
                                               Value acc, int64_t n) {
  assert(n % 8 == 0 && n >= 8 && n <= 256 && "wgmma N is 8..256, step 8");
  assert(a.size() == 4 && "four packed bf16 pairs of A per thread");
  assert((selector == 0 || selector == 1) && "16-bit types: selector 0, 1");
  // {A registers}, descB, metadata, selector; scale-d 1 (accumulate), A
  // and B not negated, B not transposed (K-major).
  auto tail = [selector](int64_t first) {
    std::string t = "{";
    for (int64_t i = 0; i < 4; ++i)
      t += (i ? ", $" : "$") + std::to_string(first + i);
    return t + "}, $" + std::to_string(first + 4) + ", $" +
           std::to_string(first + 5) + ", " + std::to_string(selector) +
           ", 1, 1, 1, 0";
  };
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(meta);
  return buildInlineWgmma(
      b, loc,
      "wgmma.mma_async.sp.sync.aligned.m64n" + std::to_string(n) +
          "k32.f32.bf16.bf16",
      acc, n, operands, "r,r,r,r,l,r", tail);
}

SmallVector<Value> mlir::fp4::unpackWgmmaAccumulator(OpBuilder &b,
                                                     Location loc, Value acc,
                                                     int64_t n) {
  VectorType v4f32 = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> tiles;
  for (int64_t j = 0; j < n / 8; ++j) {
    SmallVector<Value, 4> e;
    for (int64_t i = 0; i < 4; ++i)
      e.push_back(LLVM::ExtractValueOp::create(b, loc, acc, 4 * j + i));
    tiles.push_back(vector::FromElementsOp::create(b, loc, v4f32, e));
  }
  return tiles;
}
