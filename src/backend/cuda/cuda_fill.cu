// gfxep CUDA backend — a memset node of a captured graph as a kernel node (see cuda_fill.h).
#include <cuda_runtime.h>
#include <stdint.h>

#include "backend/cuda/cuda_fill.h"

namespace {

struct fill_args {
  char* dst;
  size_t pitch;      /* bytes between rows */
  size_t row_bytes;  /* width x element size */
  size_t height;
  uint32_t pattern;  /* the value repeated over 4 bytes */
  int wide;          /* rows in 16-byte stores: dst, pitch and row_bytes multiples of 16 */
};

const int kThreads = 256, kMaxBlocks = 1024;

__global__ void fill_kernel(fill_args a) {
  const size_t step = (size_t)gridDim.x * blockDim.x;
  if (a.wide) {
    const size_t per_row = a.row_bytes / 16, total = per_row * a.height;
    const uint4 v = make_uint4(a.pattern, a.pattern, a.pattern, a.pattern);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += step) {
      const size_t row = i / per_row;
      reinterpret_cast<uint4*>(a.dst + row * a.pitch)[i - row * per_row] = v;
    }
    return;
  }
  const size_t total = a.row_bytes * a.height;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += step) {
    const size_t row = i / a.row_bytes, byte = i - row * a.row_bytes;
    a.dst[row * a.pitch + byte] = (char)(a.pattern >> (8 * (byte % 4)));
  }
}

}  // namespace

extern "C" cudaError_t cuda_fill_add_node(cudaGraph_t g, const cudaGraphNode_t* deps, size_t n_deps,
                                          const struct cudaMemsetParams* m, cudaGraphNode_t* out) {
  if (m->elementSize != 1 && m->elementSize != 2 && m->elementSize != 4) return cudaErrorInvalidValue;
  fill_args a;
  a.dst = (char*)m->dst;
  a.row_bytes = m->width * m->elementSize;
  a.height = m->height ? m->height : 1;
  a.pitch = a.height > 1 ? m->pitch : a.row_bytes;
  /* the element's bytes, little-endian, repeated over a word: rows start at multiples of the
   * element size, so byte b of a row is byte b % 4 of the pattern */
  const uint32_t v = m->value;
  a.pattern = m->elementSize == 4 ? v : m->elementSize == 2 ? (v & 0xffffu) * 0x10001u : (v & 0xffu) * 0x1010101u;
  a.wide = (uintptr_t)a.dst % 16 == 0 && a.pitch % 16 == 0 && a.row_bytes % 16 == 0;
  const size_t units = (a.wide ? a.row_bytes / 16 : a.row_bytes) * a.height;
  size_t blocks = (units + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks == 0) blocks = 1;
  void* args[] = {&a};
  cudaKernelNodeParams p = {};
  p.func = (void*)fill_kernel;
  p.gridDim = dim3((unsigned)blocks);
  p.blockDim = dim3(kThreads);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  return cudaGraphAddKernelNode(out, g, deps, n_deps, &p);
}

extern "C" cudaError_t cuda_fill_preload(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, fill_kernel);
}
