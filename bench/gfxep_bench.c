/* gfxep-bench — how fast a model runs on one of gfxep's devices when its inputs and outputs already
 * live in device memory, as they do in a renderer's frame loop.
 *
 *   gfxep-bench [--backend cuda|vulkan] [--runs N] [--warmup W] [--dyn D] [--options k=v,k=v]
 *               [--json FILE] [--profile PREFIX] [--frame-timings] [--verbose] model.onnx
 * (--verbose: ONNX Runtime's log at INFO, which shows gfxep's fusions, graph captures and fallbacks)
 *
 * Inputs (float32 or float16, seeded uniform [-1, 1), uploaded with ORT's CopyTensors) and outputs are
 * device tensors bound once (IOBinding, so every Run sees the same addresses, as graph replay needs);
 * every Run goes to an application stream (RunOptionsSetSyncStream) with ORT's end-of-run
 * synchronization off, so the numbers separate what the CPU pays from what the GPU does:
 *   enqueue_us   host time for Run to return (the renderer thread's cost per frame)
 *   latency_ms   Run + waiting for its outputs, one frame at a time (what a frame waits): a CUDA stream
 *                synchronize on the CUDA backend, ORT's SynchronizeBoundOutputs (the EP's Sync) on others
 *   gpu_ms       CUDA events around the Run on the stream (the device's time per frame); CUDA backend
 *                only (null elsewhere: no application-visible device timer)
 *   throughput   frames/s with `depth` Runs queued back to back before synchronizing
 *   gfxep_gpu_ms with --frame-timings: the device time of each Run from gfxep's own per-frame timings
 *                (include/gfxep.h), on every backend; enqueue_us then includes what writing them costs
 *   frame_timings_cost_us  with --frame-timings: what they cost the host, measured A/B: a second
 *                session without them on the same bound tensors, Runs alternating between the two
 * --backend picks the device by its gfxep.backend (default cuda; vulkan registers as gfxep.vulkan,
 * which also offers a CPU implementation such as lavapipe).
 * Percentiles are over N runs after W warm-up runs (warm-up also records the partitions: with
 * --options cuda_graph=ort the first warm-up Run is ONNX Runtime's own warm-up and capture of the whole
 * run, and the timed Runs are its replays; with graphs=1, gfxep's per-partition graphs).
 * --profile PREFIX: afterwards, a second session with ONNX Runtime's profiling on runs the model
 * PROFILE_RUNS times; ORT's profile (with gfxep's kernels and their device times, one event per gfxep node) is
 * written to a file starting with PREFIX, named in the JSON as "profile".
 * Prints one JSON object; exits 0 on success, 2 on errors, 77 when gfxep offers no device of the backend.
 */
#ifdef GFXEP_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/gfxep.h"
#include "core/half.h"
#include "ortkit.h"

#define MAX_IO 16

static ortkit k;

static int failed(OrtStatus* s, const char* what) { return ortkit_failed(&k, s, what); }

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double pct(double* v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

static uint64_t rng_state = 12345;
static float next_uniform(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)((double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

typedef struct io {
  char name[256];
  ONNXTensorElementDataType type;
  int64_t dims[8];
  size_t rank;
  OrtValue* value;
} io;

/* Element type and dims of a session input or output (dynamic dims become dyn). */
static int describe(OrtSession* s, int is_input, size_t i, int64_t dyn, io* out) {
  OrtAllocator* a = NULL;
  char* name = NULL;
  OrtTypeInfo* ti = NULL;
  const OrtTensorTypeAndShapeInfo* tti = NULL;
  if (failed(k.api->GetAllocatorWithDefaultOptions(&a), "allocator")) return -1;
  if (failed(is_input ? k.api->SessionGetInputName(s, i, a, &name) : k.api->SessionGetOutputName(s, i, a, &name), "name"))
    return -1;
  snprintf(out->name, sizeof out->name, "%s", name);
  a->Free(a, name);
  if (failed(is_input ? k.api->SessionGetInputTypeInfo(s, i, &ti) : k.api->SessionGetOutputTypeInfo(s, i, &ti), "type"))
    return -1;
  int rc = -1;
  if (!failed(k.api->CastTypeInfoToTensorInfo(ti, &tti), "tensor info") && tti &&
      !failed(k.api->GetTensorElementType(tti, &out->type), "element type") &&
      !failed(k.api->GetDimensionsCount(tti, &out->rank), "rank") && out->rank <= 8 &&
      !failed(k.api->GetDimensions(tti, out->dims, out->rank), "dims")) {
    for (size_t d = 0; d < out->rank; d++)
      if (out->dims[d] < 0) out->dims[d] = dyn;
    rc = 0;
  }
  k.api->ReleaseTypeInfo(ti);
  return rc;
}

static size_t numel(const io* t) {
  size_t n = 1;
  for (size_t d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
  return n;
}

#define PROFILE_RUNS 20

/* PROFILE_RUNS runs of a profiled session; returns the profile file's path (owned by the caller) or NULL. */
static char* profile_runs(const char* model, const OrtEpDevice* dev, const char* prefix, const char* const* keys,
                          const char* const* values, size_t n_opt, const char* const* in_names,
                          const OrtValue* const* in_values, size_t n_in, const char* const* out_names, size_t n_out) {
  OrtSession* sess = NULL;
  char* path = NULL;
  OrtRunOptions* ro = NULL;
  /* made as the timed session is (GFXEP_EP_OPTIONS too), so that the profile is of the same configuration */
  if (failed(ortkit_session_profiled(&k, model, dev, keys, values, n_opt, prefix, &sess), "profile session")) goto done;
  /* ORT-allocated outputs change address: never captured by ORT (cuda_graph=ort), gpu_graph_id -1 */
  if (failed(k.api->CreateRunOptions(&ro), "run options") ||
      failed(k.api->AddRunConfigEntry(ro, "gpu_graph_id", "-1"), "run config"))
    goto done;
  for (int r = 0; r < PROFILE_RUNS; r++) {
    OrtValue* outs[MAX_IO] = {0};
    if (failed(k.api->Run(sess, ro, in_names, in_values, n_in, out_names, n_out, outs), "profiled run")) goto done;
    for (size_t o = 0; o < n_out; o++) k.api->ReleaseValue(outs[o]);
  }
  OrtAllocator* a = NULL;
  char* ort_path = NULL;
  if (!failed(k.api->GetAllocatorWithDefaultOptions(&a), "allocator") &&
      !failed(k.api->SessionEndProfiling(sess, a, &ort_path), "end profiling")) {
    path = strdup(ort_path);
    a->Free(a, ort_path);
  }
done:
  if (ro) k.api->ReleaseRunOptions(ro);
  if (sess) k.api->ReleaseSession(sess);
  return path;
}

/* Waits until the bound outputs of the last Run are written: a synchronize of the CUDA stream, or
 * ORT's SynchronizeBoundOutputs (the EP's Sync) where the stream is no CUDA stream. */
#ifdef GFXEP_BENCH_CUDA
static void* cuda_stream; /* the run stream's cudaStream_t on the CUDA backend, else NULL */
#endif
static int wait_outputs(OrtIoBinding* binding, OrtSyncStream* stream) {
  (void)stream;
#ifdef GFXEP_BENCH_CUDA
  if (cuda_stream) {
    if (cudaStreamSynchronize((cudaStream_t)cuda_stream) != cudaSuccess) {
      fprintf(stderr, "gfxep-bench: stream synchronize failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    return 0;
  }
#endif
  return failed(k.api->SynchronizeBoundOutputs(binding), "synchronize bound outputs");
}

int main(int argc, char** argv) {
  const char* model = NULL;
  const char* profile = NULL;
  const char* json = NULL;
  const char* options = NULL;
  const char* backend = "cuda";
  int runs = 100, warmup = 10, depth = 8;
  int verbose = 0, frame_timings = 0;
  long dyn = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dyn") && i + 1 < argc) dyn = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--options") && i + 1 < argc) options = argv[++i];
    else if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile = argv[++i];
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--frame-timings")) frame_timings = 1;
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: gfxep-bench [--backend cuda|vulkan] [--runs N] [--warmup W] [--dyn D] [--options k=v,...] [--json FILE] [--profile PREFIX] [--frame-timings] [--verbose] model.onnx\n");
      return 2;
    } else model = argv[i];
  }
  if (!model || runs < 1 || warmup < 2) {
    fprintf(stderr, "gfxep-bench: give a model, --runs >= 1 and --warmup >= 2\n");
    return 2;
  }
  char err[512];
  if (ortkit_open(&k, NULL, verbose ? ORT_LOGGING_LEVEL_INFO : ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "gfxep-bench: %s\n", err);
    return 2;
  }
  const int on_cuda = strcmp(backend, "cuda") == 0;
#ifndef GFXEP_BENCH_CUDA
  if (on_cuda) {
    fprintf(stderr, "gfxep-bench: built without the CUDA runtime; --backend vulkan\n");
    return 77;
  }
#endif
  /* CUDA devices are offered to plain "gfxep"; a named registration also offers software devices */
  char registration[64];
  snprintf(registration, sizeof registration, on_cuda ? "gfxep" : "gfxep.%s", backend);
  if (failed(k.api->RegisterExecutionProviderLibrary(k.env, registration, ortkit_plugin_path()), "register")) return 2;
  const OrtEpDevice* dev[8];
  if (ortkit_find_devices(&k, backend, dev, 8) == 0) {
    fprintf(stderr, "gfxep-bench: gfxep offers no %s device\n", backend);
    return 77;
  }
  /* EP options "k=v,k=v" */
  const char* keys[16];
  const char* values[16];
  size_t n_opt = 0;
  char opt_buf[1024] = "";
  if (options) {
    snprintf(opt_buf, sizeof opt_buf, "%s", options);
    for (char* tok = strtok(opt_buf, ","); tok && n_opt < 16; tok = strtok(NULL, ",")) {
      char* eq = strchr(tok, '=');
      if (!eq) continue;
      *eq = 0;
      keys[n_opt] = tok;
      values[n_opt++] = eq + 1;
    }
  }
  const size_t n_user_opt = n_opt;
  if (frame_timings && n_opt + 2 > 16) {
    fprintf(stderr, "gfxep-bench: too many --options for --frame-timings\n");
    return 2;
  }
  if (frame_timings) {
    keys[n_opt] = "frame_timings";
    values[n_opt++] = "1";
    keys[n_opt] = "session_name";
    values[n_opt++] = "gfxep-bench";
  }
  gfxep_read_frame_timings_fn read_frames =
      frame_timings ? (gfxep_read_frame_timings_fn)ortkit_plugin_symbol(GFXEP_READ_FRAME_TIMINGS) : NULL;
  OrtSession* sess = NULL;
  uint64_t t_create = ortkit_now_ns();
  if (failed(ortkit_session(&k, model, dev[0], keys, values, n_opt, &sess), "session")) return 2;
  double create_ms = (double)(ortkit_now_ns() - t_create) / 1e6;
  size_t on_gfxep = 0, on_other = 0;
  if (failed(ortkit_placement(&k, sess, &on_gfxep, &on_other, 0), "placement")) return 2;

  OrtAllocator* alloc = NULL;
  if (failed(k.api->CreateSharedAllocator(k.env, dev[0], OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator, NULL, &alloc),
             "device allocator"))
    return 2;
  size_t n_in = 0, n_out = 0;
  if (failed(k.api->SessionGetInputCount(sess, &n_in), "inputs") || failed(k.api->SessionGetOutputCount(sess, &n_out), "outputs"))
    return 2;
  if (n_in > MAX_IO || n_out > MAX_IO) {
    fprintf(stderr, "gfxep-bench: more than %d inputs or outputs\n", MAX_IO);
    return 2;
  }
  io in[MAX_IO], out[MAX_IO];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  OrtMemoryInfo* host_mi = NULL;
  if (failed(k.api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &host_mi), "host memory info")) return 2;
  for (size_t i = 0; i < n_in; i++) {
    if (describe(sess, 1, i, dyn, &in[i])) return 2;
    if (in[i].type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && in[i].type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) {
      fprintf(stderr, "gfxep-bench: input '%s' is neither float32 nor float16\n", in[i].name);
      return 2;
    }
    if (failed(k.api->CreateTensorAsOrtValue(alloc, in[i].dims, in[i].rank, in[i].type, &in[i].value), "input tensor"))
      return 2;
    size_t n = numel(&in[i]), es = in[i].type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ? 4 : 2;
    char* host = malloc(n * es + 1);
    for (size_t e = 0; e < n; e++) {
      float f = next_uniform();
      if (es == 4) memcpy(host + 4 * e, &f, 4);
      else {
        uint16_t h = gfx_float_to_half(f);
        memcpy(host + 2 * e, &h, 2);
      }
    }
    OrtValue* src = NULL;
    int bad = failed(k.api->CreateTensorWithDataAsOrtValue(host_mi, host, n * es, in[i].dims, in[i].rank, in[i].type,
                                                           &src),
                     "host input") ||
              failed(k.api->CopyTensors(k.env, (const OrtValue* const*)&src, &in[i].value, NULL, 1), "upload");
    if (src) k.api->ReleaseValue(src);
    free(host);
    if (bad) return 2;
  }
  /* output shapes: from one run with ORT-allocated outputs */
  const char* in_names[MAX_IO];
  const char* out_names[MAX_IO];
  const OrtValue* in_values[MAX_IO];
  for (size_t i = 0; i < n_in; i++) in_names[i] = in[i].name, in_values[i] = in[i].value;
  OrtValue* probe[MAX_IO] = {0};
  for (size_t o = 0; o < n_out; o++) {
    if (describe(sess, 0, o, dyn, &out[o])) return 2;
    out_names[o] = out[o].name;
  }
  /* not captured (gpu_graph_id -1): its outputs are ORT's, freed right after, and a graph must bake in
   * the bound outputs instead */
  OrtRunOptions* probe_ro = NULL;
  if (failed(k.api->CreateRunOptions(&probe_ro), "run options") ||
      failed(k.api->AddRunConfigEntry(probe_ro, "gpu_graph_id", "-1"), "run config") ||
      failed(k.api->Run(sess, probe_ro, in_names, in_values, n_in, out_names, n_out, probe), "first run"))
    return 2;
  k.api->ReleaseRunOptions(probe_ro);
  for (size_t o = 0; o < n_out; o++) {
    OrtTensorTypeAndShapeInfo* info = NULL;
    if (failed(k.api->GetTensorTypeAndShape(probe[o], &info), "output shape")) return 2;
    int bad = failed(k.api->GetDimensionsCount(info, &out[o].rank), "output rank") || out[o].rank > 8 ||
              failed(k.api->GetDimensions(info, out[o].dims, out[o].rank), "output dims") ||
              failed(k.api->GetTensorElementType(info, &out[o].type), "output type");
    k.api->ReleaseTensorTypeAndShapeInfo(info);
    if (bad) return 2;
    k.api->ReleaseValue(probe[o]);
    if (failed(k.api->CreateTensorAsOrtValue(alloc, out[o].dims, out[o].rank, out[o].type, &out[o].value), "output tensor"))
      return 2;
  }
  OrtIoBinding* binding = NULL;
  if (failed(k.api->CreateIoBinding(sess, &binding), "binding")) return 2;
  for (size_t i = 0; i < n_in; i++)
    if (failed(k.api->BindInput(binding, in[i].name, in[i].value), "bind input")) return 2;
  for (size_t o = 0; o < n_out; o++)
    if (failed(k.api->BindOutput(binding, out[o].name, out[o].value), "bind output")) return 2;

  OrtSyncStream* stream = NULL;
  OrtRunOptions* ro = NULL;
  if (failed(k.api->CreateSyncStreamForEpDevice(dev[0], NULL, &stream), "stream") ||
      failed(k.api->CreateRunOptions(&ro), "run options") ||
      failed(k.api->AddRunConfigEntry(ro, "disable_synchronize_execution_providers", "1"), "run config"))
    return 2;
  k.api->RunOptionsSetSyncStream(ro, stream);
#ifdef GFXEP_BENCH_CUDA
  cudaStream_t native = on_cuda ? (cudaStream_t)k.api->SyncStream_GetHandle(stream) : NULL;
  cuda_stream = native;
  cudaEvent_t ev0 = NULL, ev1 = NULL;
  if (on_cuda) {
    cudaEventCreate(&ev0);
    cudaEventCreate(&ev1);
  }
#endif

  double* enqueue_us = calloc((size_t)runs, sizeof(double));
  double* latency_ms = calloc((size_t)runs, sizeof(double));
  double* gpu_ms = calloc((size_t)runs, sizeof(double));
  double* gfxep_ms = calloc((size_t)runs, sizeof(double));
  int n_gfxep = 0;
  uint64_t last_frame = 0;
  gfxep_frame_timing frames[64];
  for (int r = -warmup; r < runs; r++) {
#ifdef GFXEP_BENCH_CUDA
    if (on_cuda) cudaEventRecord(ev0, native);
#endif
    uint64_t t0 = ortkit_now_ns();
    if (failed(k.api->RunWithBinding(sess, ro, binding), "run")) return 2;
    uint64_t t1 = ortkit_now_ns();
#ifdef GFXEP_BENCH_CUDA
    if (on_cuda) cudaEventRecord(ev1, native);
#endif
    if (wait_outputs(binding, stream)) return 2;
    uint64_t t2 = ortkit_now_ns();
    /* the frames the GPU has finished: read every run (never waits), kept after the warm-up */
    for (int n; read_frames && (n = read_frames("gfxep-bench", last_frame, frames, 64)) > 0;)
      for (int i = 0; i < n; i++) {
        last_frame = frames[i].frame;
        if (r >= 0 && (frames[i].flags & GFXEP_FRAME_COMPLETE) && n_gfxep < runs)
          gfxep_ms[n_gfxep++] = frames[i].gpu_run_us / 1e3;
      }
    if (r < 0) continue;
    enqueue_us[r] = (double)(t1 - t0) / 1e3;
    latency_ms[r] = (double)(t2 - t0) / 1e6;
    gpu_ms[r] = -1;
#ifdef GFXEP_BENCH_CUDA
    float ms = 0;
    if (on_cuda && cudaEventElapsedTime(&ms, ev0, ev1) == cudaSuccess) gpu_ms[r] = ms;
#endif
  }
  /* throughput: depth runs in flight, then one wait */
  int batches = runs / depth > 0 ? runs / depth : 1;
  uint64_t tp0 = ortkit_now_ns();
  for (int b = 0; b < batches; b++) {
    for (int d = 0; d < depth; d++)
      if (failed(k.api->RunWithBinding(sess, ro, binding), "run")) return 2;
    if (wait_outputs(binding, stream)) return 2;
  }
  double fps = (double)batches * depth / ((double)(ortkit_now_ns() - tp0) / 1e9);

  /* the host cost of the frame timings: the same Run with them off, alternating run by run */
  char cost_json[160] = "null";
  if (frame_timings) {
    OrtSession* plain = NULL;
    OrtIoBinding* plain_binding = NULL;
    if (failed(ortkit_session(&k, model, dev[0], keys, values, n_user_opt, &plain), "session without frame timings") ||
        failed(k.api->CreateIoBinding(plain, &plain_binding), "binding"))
      return 2;
    for (size_t i = 0; i < n_in; i++)
      if (failed(k.api->BindInput(plain_binding, in[i].name, in[i].value), "bind input")) return 2;
    for (size_t o = 0; o < n_out; o++)
      if (failed(k.api->BindOutput(plain_binding, out[o].name, out[o].value), "bind output")) return 2;
    double* on_us = calloc((size_t)runs, sizeof(double));
    double* off_us = calloc((size_t)runs, sizeof(double));
    for (int r = -warmup; r < runs; r++)
      for (int on = 0; on < 2; on++) {
        OrtSession* s = on ? sess : plain;
        OrtIoBinding* b = on ? binding : plain_binding;
        uint64_t t0 = ortkit_now_ns();
        if (failed(k.api->RunWithBinding(s, ro, b), "run")) return 2;
        uint64_t t1 = ortkit_now_ns();
        if (wait_outputs(b, stream)) return 2;
        if (r >= 0) (on ? on_us : off_us)[r] = (double)(t1 - t0) / 1e3;
        for (int n; on && read_frames && (n = read_frames("gfxep-bench", last_frame, frames, 64)) > 0;)
          last_frame = frames[n - 1].frame;
      }
    const double on50 = pct(on_us, runs, 0.5), off50 = pct(off_us, runs, 0.5);
    snprintf(cost_json, sizeof cost_json, "{\"on_p50\": %.2f, \"off_p50\": %.2f, \"delta_p50\": %.2f, \"runs\": %d}", on50,
             off50, on50 - off50, runs);
    free(on_us);
    free(off_us);
    k.api->ReleaseIoBinding(plain_binding);
    k.api->ReleaseSession(plain);
  }
  char* profile_path = profile ? profile_runs(model, dev[0], profile, keys, values, n_opt, in_names, in_values, n_in,
                                             out_names, n_out)
                              : NULL;
  char gfxep_json[128] = "null";
  if (n_gfxep)
    snprintf(gfxep_json, sizeof gfxep_json, "{\"p50\": %.4f, \"p99\": %.4f, \"n\": %d}", pct(gfxep_ms, n_gfxep, 0.5),
             pct(gfxep_ms, n_gfxep, 0.99), n_gfxep);
  char gpu_json[96] = "null";
  if (pct(gpu_ms, runs, 0.5) >= 0)
    snprintf(gpu_json, sizeof gpu_json, "{\"p50\": %.4f, \"p99\": %.4f}", pct(gpu_ms, runs, 0.5), pct(gpu_ms, runs, 0.99));
  char buf[4096];
  int len = snprintf(buf, sizeof buf,
                     "{\"profile\": \"%s\", \"model\": \"%s\", \"nodes_on_gfxep\": %zu, \"nodes_elsewhere\": %zu, \"runs\": %d, "
                     "\"session_create_ms\": %.1f, \"latency_ms\": {\"p50\": %.4f, \"p99\": %.4f}, "
                     "\"gpu_ms\": %s, \"gfxep_gpu_ms\": %s, \"frame_timings_cost_us\": %s, "
                     "\"enqueue_us\": {\"p50\": %.2f, \"p99\": %.2f}, "
                     "\"throughput_fps\": %.1f, \"options\": \"%s\", \"backend\": \"%s\"}",
                     profile_path ? profile_path : "", model, on_gfxep, on_other, runs, create_ms, pct(latency_ms, runs, 0.5), pct(latency_ms, runs, 0.99),
                     gpu_json, gfxep_json, cost_json, pct(enqueue_us, runs, 0.5), pct(enqueue_us, runs, 0.99), fps, options ? options : "",
                     backend);
  printf("%s\n", buf);
  if (json) {
    FILE* f = fopen(json, "w");
    if (f) {
      fwrite(buf, 1, (size_t)len, f);
      fputc('\n', f);
      fclose(f);
    }
  }
  free(profile_path);
  free(enqueue_us);
  free(latency_ms);
  free(gpu_ms);
  free(gfxep_ms);
#ifdef GFXEP_BENCH_CUDA
  if (ev0) cudaEventDestroy(ev0);
  if (ev1) cudaEventDestroy(ev1);
#endif
  for (size_t i = 0; i < n_in; i++) k.api->ReleaseValue(in[i].value);
  for (size_t o = 0; o < n_out; o++) k.api->ReleaseValue(out[o].value);
  k.api->ReleaseIoBinding(binding);
  k.api->ReleaseRunOptions(ro);
  k.api->ReleaseSyncStream(stream);
  k.api->ReleaseMemoryInfo(host_mi);
  k.api->ReleaseSession(sess);
  failed(k.api->ReleaseSharedAllocator(k.env, dev[0], OrtDeviceMemoryType_DEFAULT), "release allocator");
  failed(k.api->UnregisterExecutionProviderLibrary(k.env, registration), "unregister");
  ortkit_close(&k);
  return 0;
}
