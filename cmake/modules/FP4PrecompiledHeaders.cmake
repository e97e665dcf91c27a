# Precompiled MLIR headers for the libraries with many sources.
#
# Why: a typical fp4 source spends about half of its compile time parsing
# the same ~20 MB of MLIR/LLVM headers (measured on DecodeMatmulKernel.cpp
# at -O3: 31 s plain, 16 s with the header precompiled; QuantizeMatmuls.cpp
# 14 s and 7 s), and CI builds the project twice on 2 cores (Release and
# the sanitizer build). One precompiled header is built for the first
# library that asks and reused (REUSE_FROM) by the others: the libraries
# passed here must compile with identical flags (they are all
# add_mlir_library object libraries). Only upstream headers go in: our own
# headers change too often, and a precompiled header would rebuild every
# library on each edit.
#
# -DFP4_PRECOMPILED_HEADERS=OFF turns it off (e.g. to check include hygiene:
# with the header forced in, a missing #include goes unnoticed).

option(FP4_PRECOMPILED_HEADERS "Precompile the common MLIR headers" ON)

set(FP4_PRECOMPILED_HEADER_LIST
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinAttributes.h>
  <mlir/IR/BuiltinTypes.h>
  <mlir/IR/Diagnostics.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <mlir/Transforms/DialectConversion.h>
  <llvm/ADT/STLExtras.h>
  <llvm/Support/raw_ostream.h>)

# fp4_precompiled_headers(obj.FP4Dialect obj.FP4Transforms ...)
function(fp4_precompiled_headers)
  if(NOT FP4_PRECOMPILED_HEADERS)
    return()
  endif()
  get_property(host GLOBAL PROPERTY FP4_PRECOMPILED_HEADER_HOST)
  foreach(target IN LISTS ARGN)
    # ccache can cache a precompiled header only without its timestamp.
    target_compile_options(${target} PRIVATE
      "SHELL:-Xclang -fno-pch-timestamp")
    if(NOT host)
      target_precompile_headers(${target} PRIVATE ${FP4_PRECOMPILED_HEADER_LIST})
      set(host ${target})
      set_property(GLOBAL PROPERTY FP4_PRECOMPILED_HEADER_HOST ${target})
    else()
      target_precompile_headers(${target} REUSE_FROM ${host})
    endif()
  endforeach()
endfunction()
