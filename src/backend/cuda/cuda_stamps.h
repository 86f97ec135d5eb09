/* gfxep CUDA backend — the kernels behind frame stamps (cuda_stamps.cu): each writes the GPU's
 * nanosecond clock (%globaltimer) into host memory mapped for the device, so the host reads a stamp
 * with a plain load, with no CUDA call. */
#ifndef GFXEP_BACKEND_CUDA_STAMPS_H
#define GFXEP_BACKEND_CUDA_STAMPS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of a replay ring, in mapped host memory. `started` and `done` hold replay + 1 of the
 * replay that last began and last finished writing the entry (0: none yet). */
typedef struct cuda_replay_entry {
  volatile uint64_t started;
  volatile uint64_t begin_ns;
  volatile uint64_t end_ns;
  volatile uint64_t done;
} cuda_replay_entry;

/* Writes the clock into *slot (a device pointer of mapped host memory) when the stream gets there. */
cudaError_t cuda_stamp_launch(uint64_t* slot, cudaStream_t stream);

/* The begin (end = 0) or end (end = 1) of a replay: `counter` (device memory) counts the replays that
 * ended; the entry is ring[counter % capacity]. The end stamp advances the counter. */
cudaError_t cuda_replay_stamp_launch(uint64_t* counter, cuda_replay_entry* ring, uint32_t capacity, int end,
                                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
