#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
__global__ void k_noop() {}
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev[320], evn[320];
  for (int i = 0; i < 320; i++) { cudaEventCreate(&ev[i]); cudaEventCreateWithFlags(&evn[i], cudaEventDisableTiming); }
  k_noop<<<1,1,0,s>>>(); cudaStreamSynchronize(s);
  const int N = 20000;
  double t0 = now_us(); for (int i = 0; i < N; i++) cudaEventRecord(ev[i % 320], s); double t1 = now_us();
  cudaStreamSynchronize(s);
  printf("cudaEventRecord (timed): %.3f us\n", (t1 - t0) / N);
  t0 = now_us(); for (int i = 0; i < N; i++) cudaEventRecord(evn[i % 320], s); t1 = now_us();
  cudaStreamSynchronize(s);
  printf("cudaEventRecord (no timing): %.3f us\n", (t1 - t0) / N);
  t0 = now_us(); for (int i = 0; i < N; i++) cudaEventQuery(ev[i % 320]); t1 = now_us();
  printf("cudaEventQuery: %.3f us\n", (t1 - t0) / N);
  float ms; t0 = now_us(); for (int i = 0; i < N; i++) cudaEventElapsedTime(&ms, ev[i % 320], ev[(i + 1) % 320]); t1 = now_us();
  printf("cudaEventElapsedTime: %.3f us\n", (t1 - t0) / N);
  /* interleaved with kernel launches, as in a Run */
  t0 = now_us(); for (int i = 0; i < N; i++) { k_noop<<<1,1,0,s>>>(); } t1 = now_us(); cudaStreamSynchronize(s);
  printf("launch alone: %.3f us\n", (t1 - t0) / N);
  t0 = now_us(); for (int i = 0; i < N; i++) { cudaEventRecord(ev[(2*i) % 320], s); k_noop<<<1,1,0,s>>>(); cudaEventRecord(ev[(2*i+1) % 320], s);} t1 = now_us(); cudaStreamSynchronize(s);
  printf("launch + 2 timed records: %.3f us\n", (t1 - t0) / N);
  return 0;
}
