// graph_launch_cost — what a CUDA graph's contents cost the host at cudaGraphLaunch.
//
// gfxep replays each partition as a CUDA graph, and the host time of a replayed Run differs between
// models far more than their node counts do. This probe captures graphs of K small kernels with M
// memsets spread among them (as the library calls of the float16 UNet leave in its capture: 7
// memsets among 27 kernels, none of them issued by gfxep's own code) and with the memsets done by a
// kernel instead, and times cudaGraphLaunch on the host (p50 and p99 of 2000 launches, each followed
// by an untimed synchronize). One JSON line per graph.
//
//   build/gfxep-graph-launch-cost   (built with the CUDA backend)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

__global__ void touch(float* p) { p[threadIdx.x] += 1.0f; }
__global__ void zero(float* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = 0.0f;
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// K kernels, M zero-fills of `bytes` spread evenly among them, as memset nodes or as kernels.
bool measure(cudaStream_t s, float* buf, float* big, int kernels, int fills, size_t bytes, bool fill_by_kernel) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (!check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "begin capture")) return false;
  int placed = 0;
  for (int k = 0; k < kernels; k++) {
    touch<<<1, 32, 0, s>>>(buf);
    while (placed < fills && (long)placed * kernels <= (long)k * fills) {
      if (fill_by_kernel) zero<<<64, 256, 0, s>>>(big, bytes / sizeof(float));
      else if (!check(cudaMemsetAsync(big, 0, bytes, s), "memset in capture")) return false;
      placed++;
    }
  }
  if (!check(cudaStreamEndCapture(s, &g), "end capture")) return false;
  if (!check(cudaGraphInstantiate(&exec, g, 0), "instantiate")) return false;
  std::vector<double> us;
  for (int i = 0; i < 2200; i++) {
    const auto t0 = std::chrono::steady_clock::now();
    const cudaError_t launched = cudaGraphLaunch(exec, s);
    const auto t1 = std::chrono::steady_clock::now();
    if (!check(launched, "launch") || !check(cudaStreamSynchronize(s), "synchronize")) return false;
    if (i >= 200) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("{\"kernels\": %d, \"fills\": %d, \"fill_bytes\": %zu, \"fill_by\": \"%s\", \"launch_us\": {\"p50\": %.2f, "
              "\"p99\": %.2f}}\n",
              kernels, fills, bytes, fill_by_kernel ? "kernel" : "memset", us[us.size() / 2], us[us.size() * 99 / 100]);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  return true;
}

}  // namespace

int main() {
  cudaStream_t s;
  float *buf, *big;
  const size_t big_bytes = 8 << 20;
  if (!check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream") ||
      !check(cudaMalloc(&buf, 4096), "malloc") || !check(cudaMalloc(&big, big_bytes), "malloc"))
    return 1;
  const int shapes[][2] = {{4, 0}, {4, 1}, {27, 0}, {27, 1}, {27, 7}, {114, 0}, {114, 3}, {114, 7}};
  for (const auto& sh : shapes)
    for (int by_kernel = 0; by_kernel < (sh[1] ? 2 : 1); by_kernel++)
      for (size_t bytes : {(size_t)4096, big_bytes})
        if ((sh[1] || bytes == 4096) && !measure(s, buf, big, sh[0], sh[1], bytes, by_kernel)) return 1;
  return 0;
}
