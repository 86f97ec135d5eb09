/* Test helper: closes a CUDA stream until *mapped_flag (host memory from cudaHostAlloc with
 * cudaHostAllocMapped) becomes non-zero or timeout_seconds pass on the GPU clock. */
#ifndef GFXEP_TESTS_CUDA_GATE_H
#define GFXEP_TESTS_CUDA_GATE_H
#ifdef __cplusplus
extern "C" {
#endif
int cuda_gate_close(void* stream, unsigned int* mapped_flag, double timeout_seconds);
#ifdef __cplusplus
}
#endif
#endif
