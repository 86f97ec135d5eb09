/* gfxep CUDA backend — a kernel that executes a trap instruction. The context then holds a sticky
 * error (cudaErrorLaunchFailure) exactly as after a real fault in a kernel: the device is lost to the
 * process until cudaDeviceReset. Only the fault-injection tests queue it. */
#ifndef GFXEP_BACKEND_CUDA_TRAP_H
#define GFXEP_BACKEND_CUDA_TRAP_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t cuda_trap_stream(cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
