//===- CudaRuntime.cpp - mgpu* host runtime over the CUDA driver API ------===//
//
// Host code lowered by `gpu-to-llvm` and translated to LLVM IR calls a small
// C ABI, the `mgpu*` functions: module load/unload in global constructors
// and destructors, function lookup, launches, streams, events, allocation,
// copies and host registration. Upstream ships an implementation as
// libmlir_cuda_runtime.so, which Debian does not package; this is the
// project's own, built as libfp4_cuda_runtime.so.
//
// The signatures are those MLIR 22 declares (GPUToLLVMConversion.cpp's call
// builders and the launch sequence SelectObjectAttr.cpp emits during LLVM IR
// translation); test/Runtime checks them against a lowered module, so an
// upstream change fails CI instead of corrupting a call at run time.
//
// Every call runs in the primary context of the default device (the context
// PyTorch, CuPy and the CUDA runtime use), retained once and made current
// on the calling thread. Errors are printed to stderr with the CUresult
// name and the failing call, like upstream, and execution continues; the
// first failure is kept for fp4RuntimeGetLastError(), which tools call after
// running generated code because the generated code itself cannot see
// errors (the mgpu* functions return no status).
//
//===----------------------------------------------------------------------===//

#include "fp4-c/CudaRuntime.h"

#include <cuda.h>

#include <pthread.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#define FP4_RT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// A scoped pthread mutex lock. std::mutex would pull in libstdc++ (its
/// error path throws), which this library avoids so that it loads next to
/// any C++ runtime.
class Lock {
public:
  explicit Lock(pthread_mutex_t &mutex) : mutex(mutex) {
    pthread_mutex_lock(&mutex);
  }
  ~Lock() { pthread_mutex_unlock(&mutex); }
  Lock(const Lock &) = delete;
  Lock &operator=(const Lock &) = delete;

private:
  pthread_mutex_t &mutex;
};

//===----------------------------------------------------------------------===//
// Error reporting
//===----------------------------------------------------------------------===//

pthread_mutex_t errorMutex = PTHREAD_MUTEX_INITIALIZER;
int32_t firstError = CUDA_SUCCESS;
char firstErrorMessage[1024];

/// Prints `message` and keeps it if it is the first failure since the last
/// fp4RuntimeGetLastError().
void recordError(int32_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void recordError(int32_t code, const char *format, ...) {
  char message[sizeof(firstErrorMessage)];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  fprintf(stderr, "fp4-cuda-runtime: %s\n", message);
  Lock lock(errorMutex);
  if (firstError == CUDA_SUCCESS) {
    firstError = code == CUDA_SUCCESS ? CUDA_ERROR_UNKNOWN : code;
    snprintf(firstErrorMessage, sizeof(firstErrorMessage), "%s", message);
  }
}

const char *errorName(CUresult result) {
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUDA_ERROR_<unknown>";
  return name;
}

/// Reports a failed driver call; returns whether `result` is success.
bool check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *description = nullptr;
  if (cuGetErrorString(result, &description) != CUDA_SUCCESS || !description)
    description = "no description";
  recordError(result, "%s failed: %s (%s)", call, errorName(result),
              description);
  return false;
}

#define FP4_CU(call) check((call), #call)

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

constexpr int kMaxDevices = 64;

pthread_mutex_t contextMutex = PTHREAD_MUTEX_INITIALIZER;
bool initAttempted = false;
CUresult initResult = CUDA_SUCCESS;
CUcontext primaryContexts[kMaxDevices];
CUresult contextResults[kMaxDevices];
bool contextAttempted[kMaxDevices];
std::atomic<int32_t> defaultDevice{0};

/// The retained primary context of `ordinal`, or null after reporting why
/// not. Failures are reported once: every later mgpu* call would otherwise
/// repeat the same "no device" line.
CUcontext primaryContext(int32_t ordinal) {
  Lock lock(contextMutex);
  if (!initAttempted) {
    initAttempted = true;
    initResult = cuInit(0);
    check(initResult, "cuInit(0)");
  }
  if (initResult != CUDA_SUCCESS)
    return nullptr;
  if (ordinal < 0 || ordinal >= kMaxDevices) {
    recordError(CUDA_ERROR_INVALID_DEVICE, "device ordinal %d out of range",
                ordinal);
    return nullptr;
  }
  if (!contextAttempted[ordinal]) {
    contextAttempted[ordinal] = true;
    CUdevice device;
    CUresult result = cuDeviceGet(&device, ordinal);
    if (check(result, "cuDeviceGet(ordinal)")) {
      result = cuDevicePrimaryCtxRetain(&primaryContexts[ordinal], device);
      check(result, "cuDevicePrimaryCtxRetain(device)");
    }
    contextResults[ordinal] = result;
  }
  return contextResults[ordinal] == CUDA_SUCCESS ? primaryContexts[ordinal]
                                                 : nullptr;
}

/// Makes the default device's primary context current on this thread.
/// Returns false (after reporting) when there is no usable device.
bool activate() {
  CUcontext context = primaryContext(defaultDevice.load());
  if (!context)
    return false;
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context)
    return true;
  return FP4_CU(cuCtxSetCurrent(context));
}

/// The CUdevice of the default device (activate() succeeded before).
CUdevice currentDevice() {
  CUdevice device = 0;
  FP4_CU(cuCtxGetDevice(&device));
  return device;
}

/// Loads a module image with an error log, so a PTX JIT failure says why.
CUmodule loadModule(const void *image, bool isPTX, int optLevel) {
  if (!activate())
    return nullptr;
  if (!image) {
    recordError(CUDA_ERROR_INVALID_IMAGE, "module load: null image");
    return nullptr;
  }
  char errorLog[8192] = {0};
  CUjit_option options[3] = {CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_OPTIMIZATION_LEVEL};
  void *values[3] = {errorLog,
                     reinterpret_cast<void *>(uintptr_t(sizeof(errorLog))),
                     nullptr};
  unsigned numOptions = 2;
  if (isPTX) {
    // ptxas accepts -O0..-O4; MLIR records the level it compiled with.
    int level = optLevel < 0 ? 0 : (optLevel > 4 ? 4 : optLevel);
    values[2] = reinterpret_cast<void *>(uintptr_t(level));
    numOptions = 3;
  }
  CUmodule module = nullptr;
  CUresult result =
      cuModuleLoadDataEx(&module, image, numOptions, options, values);
  if (result != CUDA_SUCCESS) {
    recordError(result, "cuModuleLoadDataEx(%s) failed: %s%s%s",
                isPTX ? "PTX" : "cubin", errorName(result),
                errorLog[0] ? "\n" : "", errorLog);
    return nullptr;
  }
  return module;
}

/// Product of the sizes of a ranked memref descriptor, after checking that
/// its strides are the identity layout's (registration covers one dense
/// range). Returns -1 after reporting a non-dense descriptor.
int64_t denseElementCount(int64_t rank, const int64_t *sizes,
                          const int64_t *strides, const char *caller) {
  int64_t count = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != count) {
      recordError(CUDA_ERROR_INVALID_VALUE,
                  "%s: memref is not dense row-major (dim %lld has stride "
                  "%lld, expected %lld)",
                  caller, (long long)i, (long long)strides[i],
                  (long long)count);
      return -1;
    }
    count *= sizes[i];
  }
  return count;
}

/// Ranked memref descriptor as laid out by the LLVM lowering: allocated and
/// aligned pointers, offset, then `rank` sizes followed by `rank` strides.
struct MemRefHeader {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// Host range of a registered memref; false after reporting.
bool memrefRange(int64_t rank, void *descriptor, int64_t elementSizeBytes,
                 const char *caller, void **begin, uint64_t *bytes) {
  if (!descriptor || rank < 0 || elementSizeBytes <= 0) {
    recordError(CUDA_ERROR_INVALID_VALUE, "%s: invalid memref descriptor",
                caller);
    return false;
  }
  auto *header = static_cast<MemRefHeader *>(descriptor);
  const int64_t *sizes = header->sizesAndStrides;
  int64_t count = denseElementCount(rank, sizes, sizes + rank, caller);
  if (count < 0)
    return false;
  *begin = header->aligned + header->offset * elementSizeBytes;
  *bytes = uint64_t(count) * uint64_t(elementSizeBytes);
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Project extensions (fp4-c/CudaRuntime.h)
//===----------------------------------------------------------------------===//

FP4_RT_EXPORT int32_t fp4RuntimeGetLastError(void) {
  Lock lock(errorMutex);
  int32_t code = firstError;
  firstError = CUDA_SUCCESS;
  return code;
}

FP4_RT_EXPORT const char *fp4RuntimeGetLastErrorMessage(void) {
  Lock lock(errorMutex);
  return firstError == CUDA_SUCCESS ? "" : firstErrorMessage;
}

FP4_RT_EXPORT int32_t fp4RuntimeDeviceSynchronize(void) {
  if (!activate())
    return CUDA_ERROR_NO_DEVICE;
  CUresult result = cuCtxSynchronize();
  check(result, "cuCtxSynchronize()");
  return result;
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

FP4_RT_EXPORT void *mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  return loadModule(data, /*isPTX=*/false, 0);
}

FP4_RT_EXPORT void *mgpuModuleLoadJIT(void *data, int32_t optLevel) {
  // The PTX global MLIR embeds is NUL-terminated, as the driver requires.
  return loadModule(data, /*isPTX=*/true, optLevel);
}

FP4_RT_EXPORT void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  CUresult result = cuModuleUnload(static_cast<CUmodule>(module));
  // Module destructors run at exit, possibly after the driver shut down;
  // nothing is leaked then, so that is not an error.
  if (result != CUDA_ERROR_DEINITIALIZED)
    check(result, "cuModuleUnload(module)");
}

FP4_RT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module) {
    recordError(CUDA_ERROR_INVALID_HANDLE,
                "mgpuModuleGetFunction(%s): the module was not loaded "
                "(see the module load error above)",
                name ? name : "<null>");
    return nullptr;
  }
  if (!activate())
    return nullptr;
  CUfunction function = nullptr;
  CUresult result =
      cuModuleGetFunction(&function, static_cast<CUmodule>(module), name);
  if (result != CUDA_SUCCESS)
    recordError(result, "cuModuleGetFunction(%s) failed: %s", name,
                errorName(result));
  return function;
}

namespace {

/// Raises the function's dynamic shared memory limit when a launch asks
/// for more than the 48 KiB every kernel gets by default. The default
/// covers static and dynamic shared memory together: a kernel with 1 byte
/// of static shared memory (LLVM's dynamic-shared-memory symbol counts as
/// one) fails a launch with exactly 48 KiB dynamic unless it is raised.
bool prepareSharedMemory(CUfunction function, int32_t smem,
                         const char *caller) {
  constexpr int32_t kDefaultLimit = 48 * 1024;
  if (smem == 0)
    return true;
  int staticBytes = 0;
  if (!FP4_CU(cuFuncGetAttribute(
          &staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function)))
    return false;
  if (smem + staticBytes <= kDefaultLimit)
    return true;
  int maxOptIn = 0;
  if (!FP4_CU(cuDeviceGetAttribute(
          &maxOptIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
          currentDevice())))
    return false;
  if (smem > maxOptIn) {
    recordError(CUDA_ERROR_INVALID_VALUE,
                "%s: %d bytes of dynamic shared memory requested, the device "
                "allows at most %d per block",
                caller, smem, maxOptIn);
    return false;
  }
  return FP4_CU(cuFuncSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
}

bool validLaunch(void *function, const char *caller) {
  if (!function) {
    recordError(CUDA_ERROR_INVALID_HANDLE,
                "%s: no kernel function (see the error above)", caller);
    return false;
  }
  return activate();
}

} // namespace

FP4_RT_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                   intptr_t gridY, intptr_t gridZ,
                                   intptr_t blockX, intptr_t blockY,
                                   intptr_t blockZ, int32_t smem,
                                   void *stream, void **params, void **extra,
                                   size_t /*paramsCount*/) {
  auto *f = static_cast<CUfunction>(function);
  if (!validLaunch(function, "mgpuLaunchKernel") ||
      !prepareSharedMemory(f, smem, "mgpuLaunchKernel"))
    return;
  FP4_CU(cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
                        static_cast<CUstream>(stream), params, extra));
}

FP4_RT_EXPORT void mgpuLaunchClusterKernel(
    void *function, intptr_t clusterX, intptr_t clusterY, intptr_t clusterZ,
    intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX,
    intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
    void **params, void **extra) {
  auto *f = static_cast<CUfunction>(function);
  if (!validLaunch(function, "mgpuLaunchClusterKernel") ||
      !prepareSharedMemory(f, smem, "mgpuLaunchClusterKernel"))
    return;
  // Clusters above 8 blocks are "non-portable" and must be allowed per
  // function (sm_90 supports 16).
  if (clusterX * clusterY * clusterZ > 8 &&
      !FP4_CU(cuFuncSetAttribute(
          f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
    return;
  CUlaunchAttribute attribute;
  memset(&attribute, 0, sizeof(attribute));
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = unsigned(clusterX);
  attribute.value.clusterDim.y = unsigned(clusterY);
  attribute.value.clusterDim.z = unsigned(clusterZ);
  CUlaunchConfig config;
  memset(&config, 0, sizeof(config));
  config.gridDimX = unsigned(gridX);
  config.gridDimY = unsigned(gridY);
  config.gridDimZ = unsigned(gridZ);
  config.blockDimX = unsigned(blockX);
  config.blockDimY = unsigned(blockY);
  config.blockDimZ = unsigned(blockZ);
  config.sharedMemBytes = unsigned(smem);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = 1;
  FP4_CU(cuLaunchKernelEx(&config, f, params, extra));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

FP4_RT_EXPORT void *mgpuStreamCreate(void) {
  if (!activate())
    return nullptr;
  CUstream stream = nullptr;
  FP4_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

FP4_RT_EXPORT void mgpuStreamDestroy(void *stream) {
  if (stream)
    FP4_CU(cuStreamDestroy(static_cast<CUstream>(stream)));
}

FP4_RT_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (activate())
    FP4_CU(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

FP4_RT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  if (activate())
    FP4_CU(cuStreamWaitEvent(static_cast<CUstream>(stream),
                             static_cast<CUevent>(event), /*flags=*/0));
}

FP4_RT_EXPORT void *mgpuEventCreate(void) {
  if (!activate())
    return nullptr;
  CUevent event = nullptr;
  FP4_CU(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

FP4_RT_EXPORT void mgpuEventDestroy(void *event) {
  if (event)
    FP4_CU(cuEventDestroy(static_cast<CUevent>(event)));
}

FP4_RT_EXPORT void mgpuEventSynchronize(void *event) {
  if (activate())
    FP4_CU(cuEventSynchronize(static_cast<CUevent>(event)));
}

FP4_RT_EXPORT void mgpuEventRecord(void *event, void *stream) {
  if (activate())
    FP4_CU(cuEventRecord(static_cast<CUevent>(event),
                         static_cast<CUstream>(stream)));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

FP4_RT_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                                 uint8_t isHostShared) {
  // A zero-byte gpu.alloc is legal IR; the driver rejects it.
  if (sizeBytes == 0 || !activate())
    return nullptr;
  CUdeviceptr pointer = 0;
  if (isHostShared)
    FP4_CU(cuMemAllocManaged(&pointer, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else
    FP4_CU(cuMemAlloc(&pointer, sizeBytes));
  return reinterpret_cast<void *>(pointer);
}

FP4_RT_EXPORT void mgpuMemFree(void *pointer, void * /*stream*/) {
  if (pointer && activate())
    FP4_CU(cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)));
}

FP4_RT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                              void *stream) {
  // Unified addressing lets the driver infer each side's memory kind.
  if (sizeBytes && activate())
    FP4_CU(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                         reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                         static_cast<CUstream>(stream)));
}

FP4_RT_EXPORT void mgpuMemset32(void *dst, uint32_t value, size_t count,
                                void *stream) {
  if (count && activate())
    FP4_CU(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                            static_cast<CUstream>(stream)));
}

FP4_RT_EXPORT void mgpuMemset16(void *dst, uint16_t value, size_t count,
                                void *stream) {
  if (count && activate())
    FP4_CU(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                            static_cast<CUstream>(stream)));
}

FP4_RT_EXPORT void mgpuMemHostRegister(void *pointer, uint64_t sizeBytes) {
  if (sizeBytes && activate())
    FP4_CU(cuMemHostRegister(pointer, sizeBytes, /*Flags=*/0));
}

FP4_RT_EXPORT void mgpuMemHostUnregister(void *pointer) {
  if (pointer && activate())
    FP4_CU(cuMemHostUnregister(pointer));
}

FP4_RT_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                             int64_t elementSizeBytes) {
  void *begin;
  uint64_t bytes;
  if (memrefRange(rank, descriptor, elementSizeBytes,
                  "mgpuMemHostRegisterMemRef", &begin, &bytes))
    mgpuMemHostRegister(begin, bytes);
}

FP4_RT_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                               int64_t elementSizeBytes) {
  void *begin;
  uint64_t bytes;
  if (memrefRange(rank, descriptor, elementSizeBytes,
                  "mgpuMemHostUnregisterMemRef", &begin, &bytes) &&
      bytes)
    mgpuMemHostUnregister(begin);
}

FP4_RT_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice.store(device);
}

//===----------------------------------------------------------------------===//
// TMA descriptors (nvgpu.tma.create.descriptor)
//===----------------------------------------------------------------------===//

namespace {

/// Bytes per element of the CUtensorMapDataType values the lowering emits
/// (the packed sub-byte types have no per-element size and are rejected).
int64_t tensorMapElementBytes(int64_t dataType) {
  static const int8_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (dataType < 0 || dataType >= int64_t(sizeof(bytes)))
    return 0;
  return bytes[dataType];
}

} // namespace

/// Encodes a tiled CUtensorMap for a ranked memref and returns a device
/// pointer to it (kernels read the map from global memory). `descriptor` is
/// the ranked memref descriptor, `boxDims` the box sizes in memref (row-major)
/// order; the driver wants both innermost-first. The map is never freed, as
/// with upstream's runtime: descriptors are created once per launch site.
FP4_RT_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  constexpr int64_t kMaxRank = 5;
  int64_t elementBytes = tensorMapElementBytes(dataType);
  if (!descriptor || !boxDims || rank < 1 || rank > kMaxRank ||
      !elementBytes) {
    recordError(CUDA_ERROR_INVALID_VALUE,
                "mgpuTensorMapEncodeTiledMemref: unsupported rank %lld or "
                "data type %lld",
                (long long)rank, (long long)dataType);
    return nullptr;
  }
  if (!activate())
    return nullptr;
  auto *header = static_cast<MemRefHeader *>(descriptor);
  const int64_t *sizes = header->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  cuuint64_t globalDim[kMaxRank], globalStrides[kMaxRank];
  cuuint32_t boxDim[kMaxRank], elementStrides[kMaxRank];
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = rank - 1 - i; // innermost first
    globalDim[i] = cuuint64_t(sizes[dim]);
    boxDim[i] = cuuint32_t(boxDims[dim]);
    elementStrides[i] = 1;
    // The innermost stride is implicit (one element); the driver takes the
    // byte strides of the outer dimensions.
    if (i > 0)
      globalStrides[i - 1] = cuuint64_t(strides[dim] * elementBytes);
  }
  void *base = header->aligned + header->offset * elementBytes;
  CUtensorMap map;
  if (!FP4_CU(cuTensorMapEncodeTiled(
          &map, CUtensorMapDataType(dataType), cuuint32_t(rank), base,
          globalDim, globalStrides, boxDim, elementStrides,
          CUtensorMapInterleave(interleave), CUtensorMapSwizzle(swizzle),
          CUtensorMapL2promotion(l2Promotion),
          CUtensorMapFloatOOBfill(oobFill))))
    return nullptr;
  CUdeviceptr deviceMap = 0;
  if (!FP4_CU(cuMemAlloc(&deviceMap, sizeof(map))) ||
      !FP4_CU(cuMemcpyHtoD(deviceMap, &map, sizeof(map))))
    return nullptr;
  return reinterpret_cast<void *>(deviceMap);
}
