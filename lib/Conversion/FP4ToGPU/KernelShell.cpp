//===- KernelShell.cpp - the gpu.func every fp4 kernel starts from --------===//
//
// One place decides the kernel signature conventions of the manifest ABI:
// one static-shape memref per buffer, in the caller's order; inputs marked
// noalias + readonly so NVPTX may use the non-coherent load path
// (ld.global.nc), outputs noalias; the block size recorded as
// known_block_size so the NVVM lowering emits .reqntid/.maxntid and ptxas
// budgets registers for exactly that many threads.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::fp4;

gpu::GPUFuncOp mlir::fp4::createKernelShell(OpBuilder &builder, Location loc,
                                            gpu::GPUModuleOp module,
                                            StringRef name,
                                            ArrayRef<KernelArg> args,
                                            std::array<int64_t, 3> block) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  for (const KernelArg &arg : args)
    argTypes.push_back(arg.type);
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     builder.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr(
      {static_cast<int32_t>(block[0]), static_cast<int32_t>(block[1]),
       static_cast<int32_t>(block[2])}));
  for (auto [i, arg] : llvm::enumerate(args)) {
    func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                    builder.getUnitAttr());
    if (arg.readOnly)
      func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                      builder.getUnitAttr());
  }
  Block &body = func.getBody().front();
  builder.setInsertionPointToEnd(&body);
  gpu::ReturnOp::create(builder, loc);
  return func;
}
