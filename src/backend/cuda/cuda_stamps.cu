// gfxep CUDA backend — frame stamp kernels (see cuda_stamps.h). One thread each: a stamp costs the
// device one tiny launch, and inside a recorded graph the host nothing at all.
#include <cuda_runtime.h>

#include "backend/cuda/cuda_stamps.h"

namespace {

__device__ __forceinline__ unsigned long long clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void stamp_kernel(volatile unsigned long long* slot) {
  // the timer never reads 0 in practice; a 0 would read as "not written", so it is nudged
  const unsigned long long t = clock_ns();
  *slot = t ? t : 1;
  __threadfence_system();
}

__global__ void replay_stamp_kernel(unsigned long long* counter, cuda_replay_entry* ring, unsigned capacity,
                                    int end) {
  const unsigned long long replay = *counter;
  cuda_replay_entry* e = &ring[replay % capacity];
  const unsigned long long t = clock_ns();
  if (!end) {
    // claim the entry first: a reader that still wants an older replay's figures sees they are gone
    e->started = replay + 1;
    __threadfence_system();
    e->begin_ns = t;
  } else {
    e->end_ns = t;
    __threadfence_system();  // the figures are visible before the entry says they are complete
    e->done = replay + 1;
    *counter = replay + 1;
  }
  __threadfence_system();
}

}  // namespace

extern "C" cudaError_t cuda_stamp_launch(uint64_t* slot, cudaStream_t stream) {
  stamp_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<volatile unsigned long long*>(slot));
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_replay_stamp_launch(uint64_t* counter, cuda_replay_entry* ring, uint32_t capacity, int end,
                                                cudaStream_t stream) {
  replay_stamp_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<unsigned long long*>(counter), ring, capacity, end);
  return cudaGetLastError();
}
