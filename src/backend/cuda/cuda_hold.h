/* gfxep CUDA backend — a kernel that keeps a stream busy for a given time. The profiler's traced runs
 * queue it first, so that the host has enqueued every node before the GPU reaches them and the timers
 * between nodes measure the kernels, not the host's launch gaps. */
#ifndef GFXEP_BACKEND_CUDA_HOLD_H
#define GFXEP_BACKEND_CUDA_HOLD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t cuda_hold_stream(cudaStream_t stream, unsigned long long ns);
cudaError_t cuda_hold_preload(void);

#ifdef __cplusplus
}
#endif

#endif
