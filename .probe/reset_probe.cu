#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
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
  for (int i = 0; i < 100; i++) {
    cudaError_t e1 = cudaSetDevice(0);
    cudaError_t e2 = cudaFree(0);
    if (e1 == cudaSuccess && e2 == cudaSuccess) { printf("usable after %d x 100 ms\n", i); break; }
    if (i % 10 == 0) printf("retry %d: %s %s\n", i, cudaGetErrorName(e1), cudaGetErrorName(e2));
    (void)cudaGetLastError();
    struct timespec ts = {0, 100000000}; nanosleep(&ts, NULL);
    if (i == 50) { printf("second reset: %s\n", cudaGetErrorName(cudaDeviceReset())); }
  }
  P(cudaMalloc(&d, 1024));
  add_k<<<1, 32>>>(d);
  P(cudaDeviceSynchronize());
  unsigned flags = 0; int active = 0;
  CUresult r = cuDevicePrimaryCtxGetState(0, &flags, &active);
  printf("primary ctx state r=%d active=%d\n", (int)r, active);
  return 0;
}
