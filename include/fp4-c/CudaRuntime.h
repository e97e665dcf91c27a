/*===-- fp4-c/CudaRuntime.h - mgpu* runtime over the CUDA driver -*- C -*-===*\
|*                                                                            *|
|* The functions libfp4_cuda_runtime.so exports: the mgpu* ABI that MLIR 22's *|
|* gpu-to-llvm host lowering calls (signatures as MLIR declares them; device  *|
|* handles are opaque pointers), and the project's error query. Generated    *|
|* code reaches these by symbol name; tools and tests include this header.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4_C_CUDARUNTIME_H
#define FP4_C_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error state. The mgpu* functions print failures to stderr and continue
 * (generated code has no way to look at a status); the first failure since
 * the last call is kept. */

/// Returns the CUresult of the first failure since the previous call (0 if
/// none) and clears it.
int32_t fp4RuntimeGetLastError(void);
/// The message of the pending failure ("" if none); valid until the next
/// failure or fp4RuntimeGetLastError().
const char *fp4RuntimeGetLastErrorMessage(void);
/// cuCtxSynchronize on the default device; returns its CUresult.
int32_t fp4RuntimeDeviceSynchronize(void);

/* Modules and launches. */
void *mgpuModuleLoad(void *cubin, size_t sizeBytes);
void *mgpuModuleLoadJIT(void *ptx, int32_t optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t dynamicSharedBytes,
                      void *stream, void **params, void **extra,
                      size_t paramsCount);
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t dynamicSharedBytes, void *stream,
                             void **params, void **extra);

/* Streams and events. */
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);

/* Memory. Memset counts are elements, not bytes (as MLIR passes them). */
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, uint8_t isHostShared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);
void mgpuMemHostRegister(void *pointer, uint64_t sizeBytes);
void mgpuMemHostUnregister(void *pointer);
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes);
void mgpuSetDefaultDevice(int32_t device);

/* TMA: a device pointer to a CUtensorMap for a ranked memref descriptor. */
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, int64_t *boxDims);

#ifdef __cplusplus
}
#endif

#endif /* FP4_C_CUDARUNTIME_H */
