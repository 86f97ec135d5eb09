#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void trap_k() { __trap(); }
__global__ void add_k(float* p) { p[threadIdx.x] += 1.0f; }
#define P(x) do { cudaError_t e = (x); printf("%-60s -> %s\n", #x, cudaGetErrorName(e)); } while (0)
int main() {
  float* d = 0;
  int mode = -1;
  cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0);
  printf("compute mode %d\n", mode);
  P(cudaSetDevice(0));
  P(cudaMalloc(&d, 1024));
  trap_k<<<1, 1>>>();
  P(cudaDeviceSynchronize());
  P(cudaGetLastError());
  P(cudaSetDevice(0));
  P(cudaDeviceReset());
  P(cudaGetLastError());
  P(cudaSetDevice(0));
  P(cudaFree(0));
  P(cudaMalloc(&d, 1024));
  add_k<<<1, 32>>>(d);
  P(cudaDeviceSynchronize());
  unsigned flags = 0; int active = 0;
  CUresult r = cuDevicePrimaryCtxGetState(0, &flags, &active);
  printf("primary ctx state r=%d active=%d\n", (int)r, active);
  return 0;
}
