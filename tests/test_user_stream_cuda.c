/* gfxep on CUDA — proof that a Run uses the application's stream (RunOptionsSetSyncStream) and does
 * not block the host (disable_synchronize_execution_providers=1):
 *
 *  1. a gate kernel closes the application's stream;
 *  2. Run is called with device-resident input and output on that stream and must return at once;
 *  3. the output, read through another stream, must still hold its sentinel: gfxep's kernels are
 *     queued behind the gate, i.e. on the application's stream;
 *  4. the gate opens; after a bounded wait on the stream the output must equal ORT's CPU EP.
 *
 * Every wait is bounded: the gate kernel gives up after its own timeout, and the host polls the
 * stream with a deadline instead of blocking. Exit 77 (skipped) where no CUDA device exists.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_gate.h"
#include "ortkit.h"

#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
      return 1;                     \
    }                               \
  } while (0)

static ortkit k;

static int ok(OrtStatus* s, const char* what) { return !ortkit_failed(&k, s, what); }

/* Polls the stream until it is idle or the deadline passes: never an unbounded host wait. */
static int wait_stream(cudaStream_t s, double seconds) {
  uint64_t end = ortkit_now_ns() + (uint64_t)(seconds * 1e9);
  while (ortkit_now_ns() < end) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return 0;
    if (e != cudaErrorNotReady) return -1;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  return -1;
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("# no CUDA device: skipped\n");
    return 77;
  }
  char err[512];
  CHECK(ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err) == 0, "%s", err);
  CHECK(ok(k.api->RegisterExecutionProviderLibrary(k.env, "gfxep", ortkit_plugin_path()), "register"), "register");
  const OrtEpDevice* dev = NULL;
  CHECK(ortkit_find_devices(&k, "cuda", &dev, 1) == 1, "no gfxep CUDA device");
  const char* models = getenv("GFXEP_MODELS_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/denoise_small.onnx", models ? models : GFXEP_MODELS_DIR);
  OrtSession *sess = NULL, *cpu = NULL;
  CHECK(ok(ortkit_session(&k, path, dev, NULL, NULL, 0, &sess), "session"), "session");
  CHECK(ok(ortkit_session(&k, path, NULL, NULL, NULL, 0, &cpu), "cpu session"), "cpu session");

  /* input on the host for the CPU EP, and the same bytes on the device for gfxep */
  ortkit_tensor* in = NULL;
  size_t n_in = 0;
  CHECK(ok(ortkit_random_inputs(&k, sess, 11, 1, &in, &n_in), "inputs"), "inputs");
  ortkit_tensor* want = NULL;
  size_t n_want = 0;
  CHECK(ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run"), "cpu run");
  size_t bytes = in[0].count * sizeof(float);

  OrtAllocator* alloc = NULL;
  CHECK(ok(k.api->CreateSharedAllocator(k.env, dev, OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator, NULL, &alloc),
           "allocator"), "allocator");
  OrtValue *x = NULL, *y = NULL;
  CHECK(ok(k.api->CreateTensorAsOrtValue(alloc, in[0].dims, in[0].rank, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x), "x"),
        "x");
  CHECK(ok(k.api->CreateTensorAsOrtValue(alloc, want[0].dims, want[0].rank, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &y),
           "y"), "y");
  float *dx = NULL, *dy = NULL;
  CHECK(ok(k.api->GetTensorMutableData(x, (void**)&dx), "x data") && ok(k.api->GetTensorMutableData(y, (void**)&dy), "y data"),
        "data");
  CHECK(cudaMemcpy(dx, in[0].data, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "upload");
  CHECK(cudaMemset(dy, 0xFF, bytes) == cudaSuccess, "sentinel"); /* NaN everywhere */

  OrtSyncStream* stream = NULL;
  CHECK(ok(k.api->CreateSyncStreamForEpDevice(dev, NULL, &stream), "stream"), "stream");
  cudaStream_t native = (cudaStream_t)k.api->SyncStream_GetHandle(stream);
  OrtRunOptions* ro = NULL;
  CHECK(ok(k.api->CreateRunOptions(&ro), "run options"), "run options");
  k.api->RunOptionsSetSyncStream(ro, stream);
  CHECK(ok(k.api->AddRunConfigEntry(ro, "disable_synchronize_execution_providers", "1"), "config"), "config");

  /* warm-up run: compiles the shape instance, so the timed run below is the steady state */
  const char* in_names[] = {"frame"};
  const char* out_names[] = {"clean"};
  CHECK(ok(k.api->Run(sess, ro, in_names, (const OrtValue* const*)&x, 1, out_names, 1, &y), "warm-up"), "warm-up");
  CHECK(wait_stream(native, 10) == 0, "warm-up did not finish in 10 s");
  CHECK(cudaMemset(dy, 0xFF, bytes) == cudaSuccess, "sentinel");

  unsigned int* flag = NULL;
  CHECK(cudaHostAlloc((void**)&flag, sizeof *flag, cudaHostAllocMapped) == cudaSuccess, "flag");
  *flag = 0;
  CHECK(cuda_gate_close(native, flag, 20.0) == 0, "gate");
  uint64_t t0 = ortkit_now_ns();
  CHECK(ok(k.api->Run(sess, ro, in_names, (const OrtValue* const*)&x, 1, out_names, 1, &y), "gated run"), "gated run");
  double run_ms = (double)(ortkit_now_ns() - t0) / 1e6;

  /* read the output through an independent stream while the gate is still closed */
  cudaStream_t probe;
  CHECK(cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking) == cudaSuccess, "probe stream");
  float* seen = malloc(bytes);
  CHECK(cudaMemcpyAsync(seen, dy, bytes, cudaMemcpyDeviceToHost, probe) == cudaSuccess, "probe copy");
  CHECK(wait_stream(probe, 10) == 0, "probe copy did not finish");
  size_t untouched = 0;
  for (size_t i = 0; i < in[0].count; i++) untouched += isnan(seen[i]) ? 1 : 0;
  int still_pending = cudaStreamQuery(native) == cudaErrorNotReady;
  *flag = 1; /* open the gate */
  __sync_synchronize();
  int finished = wait_stream(native, 20) == 0;

  CHECK(cudaMemcpy(seen, dy, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "download");
  double max_abs = 0;
  for (size_t i = 0; i < in[0].count; i++) {
    double d = fabs((double)seen[i] - want[0].data[i]);
    if (!(d <= max_abs)) max_abs = d; /* NaN propagates */
  }
  printf("{\"user_stream\": {\"run_returned_ms\": %.3f, \"stream_busy_after_run\": %d, \"output_untouched_while_gated\": "
         "%zu, \"elements\": %zu, \"finished_after_gate\": %d, \"max_abs_vs_cpu\": %.3g}}\n",
         run_ms, still_pending, untouched, in[0].count, finished, max_abs);
  CHECK(still_pending, "the application's stream was idle right after Run: work did not wait on it");
  CHECK(untouched == in[0].count, "output written while the stream was gated: gfxep did not use the user stream");
  CHECK(finished, "stream did not finish within 20 s after the gate opened");
  CHECK(run_ms < 1000, "Run took %.1f ms with the stream gated: it blocked the host", run_ms);
  CHECK(max_abs < 1e-4, "output differs from the CPU EP by %g", max_abs);

  free(seen);
  cudaStreamDestroy(probe);
  cudaFreeHost(flag);
  k.api->ReleaseValue(x);
  k.api->ReleaseValue(y);
  k.api->ReleaseRunOptions(ro);
  k.api->ReleaseSyncStream(stream);
  ok(k.api->ReleaseSharedAllocator(k.env, dev, OrtDeviceMemoryType_DEFAULT), "release allocator");
  k.api->ReleaseSession(sess);
  k.api->ReleaseSession(cpu);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  ok(k.api->UnregisterExecutionProviderLibrary(k.env, "gfxep"), "unregister");
  ortkit_close(&k);
  printf("1 passed, 0 failed\n");
  return 0;
}
