/* gfxep CUDA backend — zero padding of NCHW images (see cuda_pad.h). */
#include "backend/cuda/cuda_pad.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

/* The geometry, passed by value. */
struct pad_geometry {
  int64_t height, width;               /* source plane */
  int64_t top, left;                   /* where the source starts inside the padded plane */
  int64_t padded_height, padded_width; /* destination plane */
};

/* One thread per destination element, grid-stride; reads are coalesced along x like the writes. */
static __global__ void pad2d_kernel(const float* src, float* dst, int64_t count, pad_geometry g) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    int64_t x = i % g.padded_width;
    int64_t rest = i / g.padded_width;
    int64_t y = rest % g.padded_height;
    int64_t plane = rest / g.padded_height;
    int64_t sx = x - g.left, sy = y - g.top;
    bool inside = sx >= 0 && sx < g.width && sy >= 0 && sy < g.height;
    dst[i] = inside ? src[(plane * g.height + sy) * g.width + sx] : 0.0f;
  }
}

void launch_pad2d(const float* src, int64_t planes, const pad_geometry& g, float* dst, cudaStream_t stream) {
  const int64_t count = planes * g.padded_height * g.padded_width;
  if (count <= 0) return;
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  pad2d_kernel<<<(unsigned int)blocks, kBlockSize, 0, stream>>>(src, dst, count, g);
}

}  // namespace

extern "C" cudaError_t cuda_pad2d_f32(const float* src, int64_t planes, int64_t height, int64_t width, int64_t top,
                                      int64_t left, float* dst, int64_t padded_height, int64_t padded_width,
                                      cudaStream_t stream) {
  pad_geometry g = {height, width, top, left, padded_height, padded_width};
  launch_pad2d(src, planes, g, dst, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_pad_preload(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, pad2d_kernel);
}
