// gfxep CUDA backend — holding a stream back for a while (see cuda_hold.h).
#include <cuda_runtime.h>

#include "backend/cuda/cuda_hold.h"

namespace {

// Spins one thread on the GPU's global nanosecond timer until `ns` have passed.
__global__ void hold_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

extern "C" cudaError_t cuda_hold_stream(cudaStream_t stream, unsigned long long ns) {
  hold_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_hold_preload(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, hold_kernel);
}
