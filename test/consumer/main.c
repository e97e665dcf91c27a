/*===- main.c - a C embedder of fp4-mlir ----------------------------------===*\
|*                                                                            *|
|* Uses only C headers (fp4-c and mlir-c) and libFP4CAPI.so: builds fp4      *|
|* attributes and types, checks that invalid parameters become a diagnostic   *|
|* and a null handle, parses and verifies IR with fp4 ops, runs a pipeline.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "fp4-c/Dialects.h"
#include "fp4-c/Registration.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stdout);
}

static void appendToBuffer(MlirStringRef str, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer);
  size_t room = 1023 - used;
  size_t n = str.length < room ? str.length : room;
  memcpy(buffer + used, str.data, n);
  buffer[used + n] = '\0';
}

/* Keeps the last error message instead of printing it to stderr. */
static MlirLogicalResult captureDiagnostic(MlirDiagnostic diag,
                                           void *userData) {
  char *buffer = (char *)userData;
  buffer[0] = '\0';
  mlirDiagnosticPrint(diag, appendToBuffer, buffer);
  return mlirLogicalResultSuccess();
}

static int fail(const char *what) {
  fprintf(stderr, "consumer-c: %s\n", what);
  return 1;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fp4RegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  fp4RegisterAllPasses();

  char lastError[1024] = "";
  mlirContextAttachDiagnosticHandler(ctx, captureDiagnostic, lastError, NULL);

  MlirStringRef ns =
      mlirDialectHandleGetNamespace(mlirGetDialectHandle__fp4__());
  printf("dialect: %.*s\n", (int)ns.length, ns.data);

  MlirAttribute scheme =
      fp4MXFP4AttrGet(ctx, 32, FP4_SCALE_EVEN, FP4_ROUND_NEAREST_EVEN, 0);
  if (mlirAttributeIsNull(scheme) || !fp4AttributeIsAQuantScheme(scheme))
    return fail("fp4MXFP4AttrGet failed");
  int64_t shape[] = {mlirShapedTypeGetDynamicSize(), 256};
  MlirType type = fp4QuantizedTensorTypeGet(2, shape, scheme, 1);
  if (mlirTypeIsNull(type) || !fp4TypeIsAQuantizedTensor(type))
    return fail("fp4QuantizedTensorTypeGet failed");
  printf("type: ");
  mlirTypePrint(type, printToStdout, NULL);
  printf("\naxis: %lld, block: %lld, components: %ld\n",
         (long long)fp4QuantizedTensorTypeGetAxis(type),
         (long long)fp4QuantSchemeGetBlockSize(scheme),
         (long)fp4QuantizedTensorTypeGetNumComponents(type));

  MlirAttribute bad =
      fp4MXFP4AttrGet(ctx, 33, FP4_SCALE_FLOOR, FP4_ROUND_NEAREST_EVEN, 0);
  if (!mlirAttributeIsNull(bad))
    return fail("block size 33 was accepted");
  printf("rejected: %s\n", lastError);

  MlirModule module = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "func.func @f(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {\n"
               "  %q = fp4.quantize %x : tensor<4x256xf32> -> "
               "!fp4.tensor<4x256xf4E2M1FN, #fp4.hif4, axis = 1>\n"
               "  %d = fp4.dequantize %q : !fp4.tensor<4x256xf4E2M1FN, "
               "#fp4.hif4, axis = 1> -> tensor<4x256xf32>\n"
               "  return %d : tensor<4x256xf32>\n"
               "}\n"));
  /* HiF4 elements are !fp4.s1p2, so the verifier must reject f4E2M1FN. */
  if (!mlirModuleIsNull(module))
    return fail("a HiF4 tensor of f4E2M1FN elements was accepted");
  printf("rejected: %s\n", lastError);

  module = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "func.func @f(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {\n"
               "  %q = fp4.quantize %x : tensor<4x256xf32> -> "
               "!fp4.tensor<4x256x!fp4.s1p2, #fp4.hif4, axis = 1>\n"
               "  %d = fp4.dequantize %q : !fp4.tensor<4x256x!fp4.s1p2, "
               "#fp4.hif4, axis = 1> -> tensor<4x256xf32>\n"
               "  return %d : tensor<4x256xf32>\n"
               "}\n"));
  if (mlirModuleIsNull(module))
    return fail(lastError);

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          mlirStringRefCreateFromCString("builtin.module(canonicalize,cse)"),
          printToStdout, NULL)))
    return fail("pipeline did not parse");
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return fail(lastError);
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\nconsumer-c: ok\n");

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
