// gfxep CUDA backend — a kernel that traps, for fault-injection tests (see cuda_trap.h).
#include <cuda_runtime.h>

#include "backend/cuda/cuda_trap.h"

namespace {

__global__ void trap_kernel() { __trap(); }

}  // namespace

extern "C" cudaError_t cuda_trap_stream(cudaStream_t stream) {
  trap_kernel<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}
