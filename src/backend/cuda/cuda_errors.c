/* gfxep CUDA backend — CUDA, cuBLAS and cuDNN failures as gfx_status.
 *
 * Every message reads "<what we were doing>: <library message>", e.g.
 * "cudaMalloc(1048576 bytes) on device 0: out of memory (cudaErrorMemoryAllocation)".
 */
#include <stdarg.h>
#include <stdio.h>

#include "backend/cuda/cuda_internal.h"

static gfx_status library_error(gfx_code code, const char* library_message, const char* what_fmt, va_list ap) {
  char what[256];
  vsnprintf(what, sizeof what, what_fmt, ap);
  return gfx_error(code, "%s: %s", what, library_message);
}

/* The errors after which the context is unusable until cudaDeviceReset (the CUDA runtime's "sticky"
 * errors: a fault inside a kernel, or the device gone). */
static int is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
    case cudaErrorContextIsDestroyed: return 1;
    default: return 0;
  }
}

gfx_status cuda_check(cudaError_t err, const char* what_fmt, ...) {
  if (err == cudaSuccess) return NULL;
  /* Reset the runtime's last error: this failure is reported here, through the status. */
  (void)cudaGetLastError();
  char library_message[192];
  snprintf(library_message, sizeof library_message, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
  va_list ap;
  va_start(ap, what_fmt);
  gfx_code code = err == cudaErrorMemoryAllocation ? GFX_ERR_OUT_OF_MEMORY
                  : is_sticky(err)                 ? GFX_ERR_DEVICE_LOST
                                                   : GFX_ERR_DEVICE;
  gfx_status s = library_error(code, library_message, what_fmt, ap);
  va_end(ap);
  return s;
}

gfx_status cuda_blas_check(cublasStatus_t status, const char* what_fmt, ...) {
  if (status == CUBLAS_STATUS_SUCCESS) return NULL;
  char library_message[192];
  snprintf(library_message, sizeof library_message, "%s (%s)", cublasLtGetStatusString(status),
           cublasLtGetStatusName(status));
  gfx_code code = status == CUBLAS_STATUS_ALLOC_FAILED     ? GFX_ERR_OUT_OF_MEMORY
                  : status == CUBLAS_STATUS_NOT_SUPPORTED ? GFX_ERR_NOT_SUPPORTED
                                                          : GFX_ERR_DEVICE;
  va_list ap;
  va_start(ap, what_fmt);
  gfx_status s = library_error(code, library_message, what_fmt, ap);
  va_end(ap);
  return s;
}

gfx_status cuda_dnn_check(cudnnStatus_t status, const char* what_fmt, ...) {
  if (status == CUDNN_STATUS_SUCCESS) return NULL;
  char library_message[192];
  snprintf(library_message, sizeof library_message, "%s (cudnnStatus_t %d)", cudnnGetErrorString(status),
           (int)status);
  /* cuDNN 9 refines codes into sub-codes (e.g. CUDNN_STATUS_NOT_SUPPORTED_SHAPE); compare the family. */
  int family = (int)status / 1000 * 1000;
  int allocation_failed = status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                          status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  gfx_code code = allocation_failed                            ? GFX_ERR_OUT_OF_MEMORY
                  : family == (int)CUDNN_STATUS_NOT_SUPPORTED ? GFX_ERR_NOT_SUPPORTED
                                                              : GFX_ERR_DEVICE;
  va_list ap;
  va_start(ap, what_fmt);
  gfx_status s = library_error(code, library_message, what_fmt, ap);
  va_end(ap);
  return s;
}
