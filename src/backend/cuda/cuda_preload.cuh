// gfxep CUDA backend — loading a file's kernels into the current context up front (see
// cuda_elementwise.cu for why: a kernel loaded lazily at its first launch would load inside a graph
// capture or a frame).
#ifndef GFXEP_BACKEND_CUDA_PRELOAD_CUH
#define GFXEP_BACKEND_CUDA_PRELOAD_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* Loads each of the n kernels; the first error, or cudaSuccess. */
static inline cudaError_t cuda_load_kernels(const void* const* kernels, size_t n) {
  for (size_t i = 0; i < n; i++) {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, kernels[i]);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

#define CUDA_LOAD_KERNELS(array) cuda_load_kernels((array), sizeof(array) / sizeof((array)[0]))

#endif
