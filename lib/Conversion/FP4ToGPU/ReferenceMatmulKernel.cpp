//===- ReferenceMatmulKernel.cpp - one thread per output element ----------===//
//
// The matmul every fp4 scheme and shape can take: thread (m, n) walks K and
// accumulates f32(lhs) * f32(rhs) with the reference's two roundings per
// step (no FMA contraction: arith ops without fast-math), reading elements
// through ElementAccess. It is slow (each weight byte is read by M threads
// and nothing is vectorized) and exists so that correctness never depends
// on a tuned family accepting a spec; the conversion names the variant
// "reference" in the manifest so a benchmark cannot mistake it for a fast
// path.
//
//===----------------------------------------------------------------------===//

#include "ElementAccess.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;

static constexpr int64_t kThreads = 128;

FailureOr<KernelPlan> mlir::fp4::buildReferenceMatmulKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const MatmulKernelSpec &spec, const GPUTarget &target, GPUConfigAttr config,
    std::string &reason) {
  if (spec.lhsQuantized &&
      !isGPUReadableQuantizedType(spec.lhsQuantized, reason))
    return failure();
  if (!isGPUReadableQuantizedType(spec.rhs, reason))
    return failure();

  KernelLaunch launch;
  launch.block = {kThreads, 1, 1};
  launch.grid = {static_cast<int64_t>(llvm::divideCeil(spec.n, kThreads)),
                 spec.m, 1};
  launch.variant = "reference";
  for (const KernelArg &arg : spec.args)
    launch.argNames.push_back(arg.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(launch.func.getBody().front().getTerminator());
  OpBuilder &b = builder;
  Block &body = launch.func.getBody().front();
  int64_t numLhs = spec.lhsQuantized
                       ? static_cast<int64_t>(
                             spec.lhsQuantized.getComponentTypes().size())
                       : 1;
  ValueRange lhs = body.getArguments().take_front(numLhs);
  ValueRange rhs = body.getArguments().slice(
      numLhs, spec.rhs.getComponentTypes().size());
  Value out = body.getArguments().back();

  Type f32 = b.getF32Type();
  Type indexType = b.getIndexType();
  Value tid = gpu::ThreadIdOp::create(b, loc, indexType, gpu::Dimension::x);
  Value bidX = gpu::BlockIdOp::create(b, loc, indexType, gpu::Dimension::x);
  Value m = gpu::BlockIdOp::create(b, loc, indexType, gpu::Dimension::y);
  Value n = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, bidX,
                            arith::ConstantIndexOp::create(b, loc, kThreads)),
      tid);
  Value inRange = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, n,
      arith::ConstantIndexOp::create(b, loc, spec.n));
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, spec.k),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{zero},
      [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
        Value a;
        if (spec.lhsQuantized) {
          a = loadDequantizedElement(lb, l, spec.lhsQuantized, lhs, m, k);
        } else {
          a = memref::LoadOp::create(lb, l, lhs.front(), ValueRange{m, k});
          if (a.getType() != f32)
            a = arith::ExtFOp::create(lb, l, f32, a);
        }
        Value w = loadDequantizedElement(lb, l, spec.rhs, rhs, n, k);
        Value product = arith::MulFOp::create(lb, l, a, w);
        scf::YieldOp::create(
            lb, l, ValueRange{arith::AddFOp::create(lb, l, iter[0], product)});
      });
  Value acc = loop.getResult(0);
  if (spec.resultElementType != f32)
    acc = arith::TruncFOp::create(b, loc, spec.resultElementType, acc);
  memref::StoreOp::create(b, loc, acc, out, ValueRange{m, n});
  return KernelPlan{{launch}, {}};
}
