//===- SharedRotateKernel.cpp - rotations too wide for registers ----------===//
//
// fp4.rotate groups that one thread cannot hold: a stride s > 1 (the
// two-level mode's Hadamard across 32-blocks, `hadamard p stride 32`, whose
// group spans p * 32 elements) or a size above the register kernel's 64.
// One CTA per group of d * s elements, staged in shared memory as f32:
//
//   load:   u_e = x_e (negated where the sign of coordinate e / s is -1,
//           forward randomized rotations)
//   stages: for h = 1, 2, .., d/2: every thread takes pairs
//           (i * s + t, (i + h) * s + t), i with bit h clear, and writes
//           (lower + upper, lower - upper); a barrier between stages
//   store:  y_e = u_e * c_d (then the sign for inverse rotations), rounded
//           to the result type.
//
// Every element goes through exactly the f32 operations of Hadamard.h's
// contract in its order (the stages are elementwise independent within a
// stage), so the result is the folder's and the CPU lowering's bit for bit;
// only which thread performs an operation differs.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <tuple>

using namespace mlir;
using namespace mlir::fp4;

/// Threads per CTA (at most): 8 warps keep a 4096-element group at 16
/// elements per thread per pass.
static constexpr int64_t kMaxThreads = 256;
/// Static shared memory a CTA may use without opting in (48 KiB), as f32.
static constexpr int64_t kMaxGroupElements = 48 * 1024 / 4;

FailureOr<KernelPlan> mlir::fp4::buildSharedRotateKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const RotateKernelSpec &spec, std::string &reason) {
  const int64_t d = spec.size, s = spec.stride, group = d * s;
  if (!numerics::isPowerOfTwo(d) || d < 2 || s < 1 || spec.cols % group != 0) {
    reason = "the shared-memory rotation kernel takes a power-of-two size "
             "whose group (size * stride) divides the last axis";
    return failure();
  }
  if (group > kMaxGroupElements) {
    reason = "a rotation group of " + std::to_string(group) +
             " elements (size * stride) exceeds the 12288 f32 that fit a "
             "CTA's static shared memory";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  const int64_t pairs = group / 2;
  const int64_t threads =
      std::min<int64_t>(kMaxThreads, llvm::alignTo(pairs, 32));
  const int64_t groupsPerRow = spec.cols / group;

  KernelLaunch launch;
  launch.block = {threads, 1, 1};
  launch.grid = {spec.rows * groupsPerRow, 1, 1};
  launch.variant = "rotate_shared";
  for (const KernelArg &arg : spec.args)
    launch.argNames.push_back(arg.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);
  OpBuilder &b = builder;
  b.setInsertionPoint(launch.func.getBody().front().getTerminator());
  ValueRange args = launch.func.getBody().front().getArguments();
  Value input = args[0], result = args[1];

  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value smem = launch.func.addWorkgroupAttribution(
      MemRefType::get({group}, b.getF32Type(), MemRefLayoutAttrInterface(),
                      workgroup),
      loc);

  auto c = [&](int64_t v) { return indexConst(b, loc, v); };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  auto mul = [&](Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, c(y)).getResult();
  };
  auto div = [&](Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, c(y)).getResult();
  };
  auto rem = [&](Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y)).getResult();
  };
  auto lessThan = [&](Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(y))
        .getResult();
  };

  Value tid =
      gpu::ThreadIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  Value bid =
      gpu::BlockIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  Value row = div(bid, groupsPerRow);
  Value base = mul(rem(bid, groupsPerRow), group);

  // The sign of element e's Hadamard coordinate e / s (randomized only).
  auto applySign = [&](OpBuilder &ib, Location l, Value v, Value e) {
    if (!spec.seed)
      return v;
    ArithOps ops(ib, l);
    Value coordinate = arith::IndexCastUIOp::create(
        ib, l, ib.getI32Type(),
        arith::DivUIOp::create(ib, l, e, indexConst(ib, l, s)));
    Value negative = numerics::hadamardSignNegative(
        ops, ops.i32(static_cast<int32_t>(*spec.seed)), coordinate);
    return numerics::hadamardApplySign(ops, v, negative);
  };

  // Item `first + tid` of `count`, and whether the thread has one. The last
  // pass of a loop may have idle threads: their index is clamped as well,
  // so that every address is in bounds even where a consumer evaluates
  // the guarded region for all threads (the tests' kernel interpreter).
  auto item = [&](int64_t first, int64_t count) {
    Value i = add(tid, c(first));
    if (first + threads <= count)
      return std::make_pair(i, Value());
    return std::make_pair(
        arith::MinUIOp::create(b, loc, i, c(count - 1)).getResult(),
        lessThan(i, count));
  };
  auto guarded = [&](Value valid,
                     function_ref<void(OpBuilder &, Location)> body) {
    if (valid)
      emitIf(b, loc, valid, body);
    else
      body(b, loc);
  };

  // Load (with the forward signs).
  for (int64_t first = 0; first < group; first += threads) {
    Value e, valid;
    std::tie(e, valid) = item(first, group);
    auto body = [&](OpBuilder &ib, Location l) {
      Value col = arith::AddIOp::create(ib, l, base, e);
      Value v = loadAsF32(ib, l, input, {row, col});
      if (!spec.inverse)
        v = applySign(ib, l, v, e);
      memref::StoreOp::create(ib, l, v, smem, ValueRange{e});
    };
    guarded(valid, body);
  }
  gpu::BarrierOp::create(b, loc);

  // Butterfly stages.
  for (int64_t h = 1; h < d; h *= 2) {
    for (int64_t first = 0; first < pairs; first += threads) {
      Value p, valid;
      std::tie(p, valid) = item(first, pairs);
      auto body = [&](OpBuilder &ib, Location l) {
        ArithOps ops(ib, l);
        auto ic = [&](int64_t v) { return indexConst(ib, l, v); };
        Value t = arith::RemUIOp::create(ib, l, p, ic(s));
        Value q = arith::DivUIOp::create(ib, l, p, ic(s));
        // i: q with a zero bit inserted at bit h (the lower of the pair).
        Value high = arith::MulIOp::create(
            ib, l, arith::DivUIOp::create(ib, l, q, ic(h)), ic(2 * h));
        Value i = arith::AddIOp::create(
            ib, l, high, arith::RemUIOp::create(ib, l, q, ic(h)));
        Value lowerIdx = arith::AddIOp::create(
            ib, l, arith::MulIOp::create(ib, l, i, ic(s)), t);
        Value upperIdx = arith::AddIOp::create(ib, l, lowerIdx, ic(h * s));
        Value lower = memref::LoadOp::create(ib, l, smem, ValueRange{lowerIdx});
        Value upper = memref::LoadOp::create(ib, l, smem, ValueRange{upperIdx});
        memref::StoreOp::create(ib, l, numerics::hadamardSum(ops, lower, upper),
                                smem, ValueRange{lowerIdx});
        memref::StoreOp::create(ib, l,
                                numerics::hadamardDifference(ops, lower, upper),
                                smem, ValueRange{upperIdx});
      };
      guarded(valid, body);
    }
    gpu::BarrierOp::create(b, loc);
  }

  // Scale (with the inverse signs) and store.
  for (int64_t first = 0; first < group; first += threads) {
    Value e, valid;
    std::tie(e, valid) = item(first, group);
    auto body = [&](OpBuilder &ib, Location l) {
      ArithOps ops(ib, l);
      Value v = memref::LoadOp::create(ib, l, smem, ValueRange{e});
      v = numerics::hadamardNormalize(ops, v, d);
      if (spec.inverse)
        v = applySign(ib, l, v, e);
      Value col = arith::AddIOp::create(ib, l, base, e);
      memref::StoreOp::create(ib, l,
                              roundFromF32(ib, l, v, spec.resultElementType),
                              result, ValueRange{row, col});
    };
    guarded(valid, body);
  }
  return KernelPlan{{launch}, {}};
}
