//===- ThreadPool.h - the CPU runtime's persistent workers -------*- C++ -*-===//
//
// Shared by every kernel of libfp4_cpu_runtime (contractions, sparse
// correction products), so one process keeps one set of worker threads
// whatever mix of kernels the generated code calls.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_RUNTIME_CPU_THREADPOOL_H
#define FP4_LIB_RUNTIME_CPU_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace fp4::cpu {

/// Threads a parallelFor uses, the caller included: the last
/// setPoolThreads value, else $FP4_CPU_THREADS when positive, else the
/// machine's hardware threads.
int poolThreads();
/// n >= 1 sets it; other values are ignored.
void setPoolThreads(int n);

/// Runs fn(0) ... fn(count - 1) on the pool, each index once, and returns
/// when all have run. A second caller arriving while the pool is busy runs
/// its indices itself, so nested or concurrent calls never deadlock.
void parallelFor(int64_t count, const std::function<void(int64_t)> &fn);

} // namespace fp4::cpu

#endif // FP4_LIB_RUNTIME_CPU_THREADPOOL_H
