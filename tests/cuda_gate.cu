// A gate for tests: a kernel that holds a CUDA stream until the host opens it (or a timeout passes),
// so a test can see whether work it queued afterwards really waits on that stream.
#include <cuda_runtime.h>

#include "cuda_gate.h"

static __global__ void gate_kernel(volatile unsigned int* flag, long long timeout_cycles) {
  long long start = clock64();
  while (*flag == 0 && clock64() - start < timeout_cycles) {
  }
}

extern "C" int cuda_gate_close(void* stream, unsigned int* mapped_flag, double timeout_seconds) {
  unsigned int* device_flag = nullptr;
  if (cudaHostGetDevicePointer((void**)&device_flag, mapped_flag, 0) != cudaSuccess) return -1;
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  long long cycles = (long long)(timeout_seconds * clock_khz * 1000.0);
  gate_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(device_flag, cycles);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
