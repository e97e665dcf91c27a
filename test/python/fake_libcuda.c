/*===- fake_libcuda.c - a host-memory stand-in for libcuda.so.1 -----------===*\
 *
 * Test double of the CUDA driver for machines without a GPU: "device"
 * memory is host memory, copies are memcpy, and cuLaunchKernel runs a few
 * known test kernels on the host (by kernel name) instead of on a GPU. It
 * lets CI run the plumbing between generated host code,
 * libfp4_cuda_runtime.so, fp4.cuda, fp4.gpu and fp4-run exec: argument
 * marshalling, kernel parameter arrays, copies and result writing. It says
 * nothing about the generated kernels themselves (bench/ checks those on
 * the GPU machine).
 *
 * Every call is appended to $FAKE_CUDA_LOG when set. Kernels emulated:
 *   scale(float *a, float *b)         b[i] = 2 * a[i], one element per thread
 *   <any other name>                  nothing (the launch is only logged)
 * Setting FAKE_CUDA_NO_DEVICE makes cuInit fail with CUDA_ERROR_NO_DEVICE.
 *
\*===----------------------------------------------------------------------===*/

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_IMAGE = 200,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
};

static int initialized;
static int fakeContext = 1;

static void logCall(const char *format, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  va_list args;
  va_start(args, format);
  vfprintf(f, format, args);
  va_end(args);
  fputc('\n', f);
  fclose(f);
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case SUCCESS: *name = "CUDA_SUCCESS"; return SUCCESS;
  case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
  case NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; return SUCCESS;
  case NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; return SUCCESS;
  case INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE"; return SUCCESS;
  case INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; return SUCCESS;
  case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
  }
  *name = 0;
  return INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == SUCCESS ? "no error" : "fake driver error";
  return SUCCESS;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  logCall("cuInit");
  if (getenv("FAKE_CUDA_NO_DEVICE"))
    return NO_DEVICE;
  initialized = 1;
  return SUCCESS;
}

#define REQUIRE_INIT()                                                         \
  do {                                                                         \
    if (!initialized)                                                          \
      return NOT_INITIALIZED;                                                  \
  } while (0)

CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return SUCCESS;
}
CUresult cuDeviceGetCount(int *count) {
  REQUIRE_INIT();
  *count = 1;
  return SUCCESS;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  REQUIRE_INIT();
  if (ordinal != 0)
    return INVALID_VALUE;
  *device = 0;
  return SUCCESS;
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  snprintf(name, (size_t)length, "fake sm_90");
  return SUCCESS;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  switch (attribute) {
  case 75: *value = 9; break;           /* compute capability major */
  case 76: *value = 0; break;           /* minor */
  case 97: *value = 227 * 1024; break;  /* max shared memory per block opt-in */
  default: *value = 1; break;
  }
  return SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  REQUIRE_INIT();
  *context = &fakeContext;
  logCall("cuDevicePrimaryCtxRetain");
  return SUCCESS;
}
static void *currentContext;
CUresult cuCtxSetCurrent(void *context) {
  currentContext = context;
  return SUCCESS;
}
CUresult cuCtxGetCurrent(void **context) {
  *context = currentContext;
  return SUCCESS;
}
CUresult cuCtxGetDevice(int *device) {
  *device = 0;
  return SUCCESS;
}
CUresult cuCtxSynchronize(void) {
  REQUIRE_INIT();
  return SUCCESS;
}

/* Modules: the handle remembers whether the image was a cubin or PTX. */
typedef struct {
  int isPTX;
} FakeModule;
typedef struct {
  char name[256];
  int maxDynamicShared;
  int raised; /* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) called */
} FakeFunction;

CUresult cuModuleLoadDataEx(void **module, const void *image,
                            unsigned numOptions, int *options, void **values) {
  REQUIRE_INIT();
  const unsigned char *bytes = (const unsigned char *)image;
  int isELF = bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
              bytes[3] == 'F';
  int isPTX = !isELF && strstr((const char *)image, ".target") != NULL;
  if (!isELF && !isPTX) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */)
        snprintf((char *)values[i], 64, "fake ptxas: not a cubin or PTX");
    logCall("cuModuleLoadDataEx invalid");
    return INVALID_IMAGE;
  }
  FakeModule *m = (FakeModule *)calloc(1, sizeof(FakeModule));
  m->isPTX = isPTX;
  *module = m;
  logCall("cuModuleLoadDataEx %s", isPTX ? "ptx" : "cubin");
  return SUCCESS;
}
CUresult cuModuleUnload(void *module) {
  free(module);
  logCall("cuModuleUnload");
  return SUCCESS;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  if (!module)
    return INVALID_HANDLE;
  FakeFunction *f = (FakeFunction *)calloc(1, sizeof(FakeFunction));
  snprintf(f->name, sizeof(f->name), "%s", name);
  f->maxDynamicShared = 48 * 1024;
  *function = f;
  logCall("cuModuleGetFunction %s", name);
  return SUCCESS;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  FakeFunction *f = (FakeFunction *)function;
  if (attribute == 8) {
    f->maxDynamicShared = value;
    f->raised = 1;
  }
  logCall("cuFuncSetAttribute %s %d %d", f->name, attribute, value);
  return SUCCESS;
}
CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
  FakeFunction *f = (FakeFunction *)function;
  /* 1 static byte, as LLVM's dynamic-shared-memory symbol gives every
     kernel that uses dynamic shared memory. */
  *value = attribute == 8 ? f->maxDynamicShared : attribute == 1 ? 1 : 0;
  return SUCCESS;
}

static CUresult launch(FakeFunction *f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                       void **params) {
  if (!f)
    return INVALID_HANDLE;
  /* The 48 KiB default holds static + dynamic bytes; a raised limit
     bounds the dynamic bytes. */
  if (!f->raised ? (int)smem + 1 > f->maxDynamicShared
                 : (int)smem > f->maxDynamicShared)
    return INVALID_VALUE;
  logCall("cuLaunchKernel %s grid=%u,%u,%u block=%u,%u,%u smem=%u", f->name,
          gx, gy, gz, bx, by, bz, smem);
  if (strcmp(f->name, "scale") == 0) {
    float *a = *(float **)params[0];
    float *b = *(float **)params[1];
    size_t n = (size_t)gx * gy * gz * bx * by * bz;
    for (size_t i = 0; i < n; ++i)
      b[i] = 2.0f * a[i];
  }
  return SUCCESS;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)stream;
  (void)extra;
  REQUIRE_INIT();
  return launch((FakeFunction *)function, gx, gy, gz, bx, by, bz, smem,
                params);
}

typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void *hStream;
  void *attrs;
  unsigned numAttrs;
} FakeLaunchConfig;

CUresult cuLaunchKernelEx(const FakeLaunchConfig *config, void *function,
                          void **params, void **extra) {
  (void)extra;
  REQUIRE_INIT();
  return launch((FakeFunction *)function, config->gridDimX, config->gridDimY,
                config->gridDimZ, config->blockDimX, config->blockDimY,
                config->blockDimZ, config->sharedMemBytes, params);
}

/* Streams and events: opaque tokens. */
static int token;
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = &token;
  return SUCCESS;
}
CUresult cuStreamDestroy_v2(void *stream) { (void)stream; return SUCCESS; }
CUresult cuStreamSynchronize(void *stream) { (void)stream; return SUCCESS; }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream; (void)event; (void)flags;
  return SUCCESS;
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = &token;
  return SUCCESS;
}
CUresult cuEventDestroy_v2(void *event) { (void)event; return SUCCESS; }
CUresult cuEventRecord(void *event, void *stream) {
  (void)event; (void)stream;
  return SUCCESS;
}
CUresult cuEventSynchronize(void *event) { (void)event; return SUCCESS; }
CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  (void)start; (void)end;
  *ms = 0.5f;
  return SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  return cuEventElapsedTime_v2(ms, start, end);
}

/* Memory: host memory stands in for device memory. */
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  REQUIRE_INIT();
  *pointer = (CUdeviceptr)(uintptr_t)malloc(bytes ? bytes : 1);
  logCall("cuMemAlloc %zu", bytes);
  return SUCCESS;
}
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned f) {
  (void)f;
  return cuMemAlloc_v2(pointer, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  free((void *)(uintptr_t)pointer);
  return SUCCESS;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  memcpy((void *)(uintptr_t)dst, src, bytes);
  logCall("cuMemcpyHtoD %zu", bytes);
  return SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  logCall("cuMemcpyDtoH %zu", bytes);
  return SUCCESS;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  memset((void *)(uintptr_t)dst, value, n);
  return SUCCESS;
}
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t n) {
  unsigned *p = (unsigned *)(uintptr_t)dst;
  for (size_t i = 0; i < n; ++i)
    p[i] = value;
  return SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t n,
                          void *stream) {
  (void)stream;
  return cuMemsetD32_v2(dst, value, n);
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n,
                          void *stream) {
  (void)stream;
  unsigned short *p = (unsigned short *)(uintptr_t)dst;
  for (size_t i = 0; i < n; ++i)
    p[i] = value;
  return SUCCESS;
}
CUresult cuMemHostRegister_v2(void *pointer, size_t bytes, unsigned flags) {
  (void)pointer; (void)flags;
  logCall("cuMemHostRegister %zu", bytes);
  return SUCCESS;
}
CUresult cuMemHostUnregister(void *pointer) {
  (void)pointer;
  return SUCCESS;
}
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank,
                                void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box,
                                const unsigned *elementStrides, int interleave,
                                int swizzle, int l2, int oob) {
  (void)map; (void)type; (void)address; (void)strides; (void)elementStrides;
  (void)interleave; (void)swizzle; (void)l2; (void)oob;
  logCall("cuTensorMapEncodeTiled rank=%u dim0=%llu box0=%u", rank,
          (unsigned long long)dims[0], box[0]);
  return SUCCESS;
}
