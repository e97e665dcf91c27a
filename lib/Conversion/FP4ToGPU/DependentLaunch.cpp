//===- DependentLaunch.cpp - fp4-gpu-dependent-launch ---------------------===//
//
// Programmatic dependent launch for the kernels of convert-fp4-to-gpu: each
// kernel lets the next launch of its stream start at once and waits for
// the previous one before it reads anything; in between it prefetches its
// large read-only arguments into L2. At decode that overlaps the activation
// prep's (or quantizer's) latency with the matmul's weight stream, the part
// of a recipe's cost that is not bytes (docs/GPU.md, "Dependent launch").
//
// Why every kernel waits at its entry rather than later: the kernels'
// first reads are their inputs, and any input may be the previous
// launch's output. The prefetch is the only work before the wait, and it
// cannot be wrong: L2 is where the GPU's writes meet, so a line prefetched
// before the previous kernel writes it is updated there.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/ChipDescription.h"
#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Transforms/PassStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4GPUDEPENDENTLAUNCH
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

/// Arguments smaller than this are not prefetched: activations and
/// per-row parts at decode, which the previous launch usually writes
/// anyway.
constexpr int64_t kMinPrefetchBytes = int64_t{1} << 20;
/// One prefetch per L2 line.
constexpr int64_t kLineBytes = 128;

/// The static byte size of a memref argument, or 0.
int64_t staticBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getLayout().isIdentity() ||
      !memref.getElementType().isIntOrFloat())
    return 0;
  return memref.getNumElements() *
         llvm::divideCeil(memref.getElementTypeBitWidth(), 8);
}

/// x + dx * (y + dy * z) of a gpu dimension triple.
template <typename IdOp, typename DimOp>
Value linearIndex(OpBuilder &b, Location loc) {
  Value x = IdOp::create(b, loc, gpu::Dimension::x);
  Value y = IdOp::create(b, loc, gpu::Dimension::y);
  Value z = IdOp::create(b, loc, gpu::Dimension::z);
  Value dx = DimOp::create(b, loc, gpu::Dimension::x);
  Value dy = DimOp::create(b, loc, gpu::Dimension::y);
  Value yz = arith::AddIOp::create(b, loc, y,
                                   arith::MulIOp::create(b, loc, dy, z));
  return arith::AddIOp::create(b, loc, x,
                               arith::MulIOp::create(b, loc, dx, yz));
}

template <typename DimOp>
Value extent(OpBuilder &b, Location loc) {
  Value x = DimOp::create(b, loc, gpu::Dimension::x);
  Value y = DimOp::create(b, loc, gpu::Dimension::y);
  Value z = DimOp::create(b, loc, gpu::Dimension::z);
  return arith::MulIOp::create(b, loc, x,
                               arith::MulIOp::create(b, loc, y, z));
}

/// Prefetches into L2 the kernel's large read-only arguments, up to
/// `budget` bytes in all. Each CTA takes its proportional share of every
/// such argument (CTA c of C: bytes [c S / C, (c + 1) S / C)), the same
/// leading fraction of each share when the budget is smaller than their
/// sum, its threads one 128-byte line each per step. Why per CTA: a
/// decode kernel's CTAs split the weight's rows (and split-K CTAs its
/// columns) evenly, so a CTA's share is about what it streams first, and
/// the CTAs resident while the previous launch runs prefetch what they
/// will read, not lines a later wave reads after L2 evicted them.
/// Returns whether anything is prefetched.
bool emitPrefetch(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
                  int64_t budget) {
  SmallVector<std::pair<BlockArgument, int64_t>> buffers;
  int64_t total = 0;
  for (BlockArgument arg : func.getArguments()) {
    int64_t bytes = staticBytes(arg.getType());
    if (bytes < kMinPrefetchBytes ||
        !func.getArgAttr(arg.getArgNumber(),
                         LLVM::LLVMDialect::getReadonlyAttrName()))
      continue;
    buffers.push_back({arg, bytes});
    total += bytes;
  }
  if (buffers.empty() || budget <= 0)
    return false;
  // The fraction of each share, in 1/1024ths (at least one).
  const int64_t fraction =
      std::clamp<int64_t>(budget * 1024 / total, 1, 1024);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Every kernel of convert-fp4-to-gpu has a known one-dimensional block;
  // others get the general linear thread index.
  Value thread, threads;
  std::optional<DenseI32ArrayAttr> known = func.getKnownBlockSizeAttr();
  if (known && *known && known->size() == 3 && (*known)[1] == 1 &&
      (*known)[2] == 1) {
    thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    threads = c((*known)[0]);
  } else {
    thread = linearIndex<gpu::ThreadIdOp, gpu::BlockDimOp>(b, loc);
    threads = extent<gpu::BlockDimOp>(b, loc);
  }
  Value block = linearIndex<gpu::BlockIdOp, gpu::GridDimOp>(b, loc);
  Value blocks = extent<gpu::GridDimOp>(b, loc);
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  for (auto [arg, bytes] : buffers) {
    // share = ceil(S / C); prefix = ceil(share * fraction / 1024), in
    // lines; the CTA's lines start at c * share and stop at S.
    Value size = c(bytes);
    Value share = arith::CeilDivUIOp::create(b, loc, size, blocks);
    Value prefix = arith::CeilDivUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, share, c(fraction)), c(1024));
    Value lines = arith::CeilDivUIOp::create(b, loc, prefix, c(kLineBytes));
    Value begin = arith::MulIOp::create(b, loc, block, share);
    Value base = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, arg),
        begin);
    scf::ForOp::create(
        b, loc, thread, lines, threads, ValueRange{},
        [&](OpBuilder &nb, Location l, Value line, ValueRange) {
          Value offset = arith::MulIOp::create(
              nb, l, line,
              arith::ConstantIndexOp::create(nb, l, kLineBytes));
          Value inside = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::ult,
              arith::AddIOp::create(nb, l, begin, offset), size);
          scf::IfOp::create(nb, l, inside, [&](OpBuilder &ib, Location il) {
            Value i64 = arith::IndexCastOp::create(
                ib, il, ib.getI64Type(),
                arith::AddIOp::create(ib, il, base, offset));
            Value pointer = LLVM::IntToPtrOp::create(ib, il, global, i64);
            NVVM::PrefetchOp::create(
                ib, il,
                NVVM::PrefetchCacheLevelAttr::get(
                    ib.getContext(), NVVM::PrefetchCacheLevel::L2),
                /*evictPriority=*/nullptr, pointer, /*predicate=*/Value(),
                /*tensormap=*/false, /*uniform=*/false,
                /*in_param_space=*/false);
            scf::YieldOp::create(ib, il);
          });
          scf::YieldOp::create(nb, l);
        });
  }
  return true;
}

/// Whether the kernel already starts with griddepcontrol (the pass ran).
bool isDependent(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  return !entry.empty() && isa<NVVM::GriddepcontrolOp>(entry.front());
}

fp4::LaunchPlanAttr dependentPlan(fp4::LaunchPlanAttr plan) {
  MLIRContext *ctx = plan.getContext();
  SmallVector<fp4::KernelLaunchAttr> launches;
  for (fp4::KernelLaunchAttr l : plan.getLaunches())
    launches.push_back(fp4::KernelLaunchAttr::get(
        ctx, l.getKernel(), l.getVariant(), l.getGrid(), l.getBlock(),
        l.getSharedBytes(), l.getArgs(), /*dependent=*/true));
  return fp4::LaunchPlanAttr::get(ctx, plan.getOp(), plan.getInputs(),
                                  plan.getOutputs(), plan.getScratch(),
                                  launches);
}

struct FP4GPUDependentLaunchPass
    : public fp4::impl::FP4GPUDependentLaunchBase<FP4GPUDependentLaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (prefetchBytes < 0 || prefetchBytes > (int64_t{1} << 30)) {
      module.emitError() << "fp4-gpu-dependent-launch: prefetch-bytes must "
                            "be in [0, 2^30], got "
                         << prefetchBytes;
      return signalPassFailure();
    }
    auto manifest = module->getAttrOfType<fp4::GPUManifestAttr>(
        fp4::GPUManifestAttr::kAttrName);
    if (!manifest || manifest.getPlans().empty()) {
      module.emitWarning()
          << "fp4-gpu-dependent-launch: no launch plans (the module has no "
             "fp4.gpu_manifest; run convert-fp4-to-gpu first): nothing "
             "changed";
      return;
    }
    const fp4::ChipDescription *chip =
        fp4::lookupChipDescription(manifest.getChip());
    if (!chip || chip->smVersion < 90) {
      module.emitError() << "fp4-gpu-dependent-launch: the kernels target "
                         << manifest.getChip()
                         << ", which has no griddepcontrol (programmatic "
                            "dependent launch needs sm_90 or newer)";
      return signalPassFailure();
    }

    llvm::SetVector<gpu::GPUFuncOp> kernels;
    for (fp4::LaunchPlanAttr plan : manifest.getPlans())
      for (fp4::KernelLaunchAttr launch : plan.getLaunches()) {
        auto func = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            module, launch.getKernel());
        if (!func) {
          module.emitError() << "fp4-gpu-dependent-launch: the manifest's "
                                "kernel "
                             << launch.getKernel() << " is not in the module";
          return signalPassFailure();
        }
        kernels.insert(func);
      }
    for (gpu::GPUFuncOp func : kernels) {
      if (isDependent(func))
        continue;
      Location loc = func.getLoc();
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      NVVM::GriddepcontrolOp::create(
          b, loc, NVVM::GridDepActionKind::launch_dependents);
      // (fp4::addToStatistic: the distribution's LLVM counts no
      // upstream statistics, PassStatistics.h.)
      if (emitPrefetch(b, loc, func, prefetchBytes))
        fp4::addToStatistic(*this, numPrefetching, "prefetching-kernels",
                            "Kernels prefetching an argument before the wait",
                            1);
      NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
      fp4::addToStatistic(*this, numKernels, "kernels",
                          "Kernels made dependent", 1);
    }

    // The plans on the launch functions and the manifest's copies.
    MLIRContext *ctx = module.getContext();
    SmallVector<fp4::LaunchPlanAttr> plans;
    for (fp4::LaunchPlanAttr plan : manifest.getPlans())
      plans.push_back(dependentPlan(plan));
    module->setAttr(fp4::GPUManifestAttr::kAttrName,
                    fp4::GPUManifestAttr::get(ctx, manifest.getChip(), plans));
    for (auto func : module.getOps<func::FuncOp>())
      if (auto plan = func->getAttrOfType<fp4::LaunchPlanAttr>(
              fp4::LaunchPlanAttr::kAttrName))
        func->setAttr(fp4::LaunchPlanAttr::kAttrName, dependentPlan(plan));
  }
};

} // namespace
