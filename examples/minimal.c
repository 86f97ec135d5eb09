/* gfxep-minimal — the README's C example as a program: register gfxep with ONNX Runtime, pick the EP
 * device of one backend by its gfxep.backend metadata, run a model with one float32 input on it and
 * on ORT's CPU EP, and compare.
 *
 *   gfxep-minimal /path/to/libgfxep.so model.onnx [backend [registration]]
 *
 * backend: cuda (default), vulkan or reference; registration: the name to register under (default
 * "gfxep"; "gfxep.vulkan" also offers a CPU implementation of Vulkan such as lavapipe, on a machine
 * without a GPU). The input gets seeded values in [0, 1); every dim must be static. Exits 0 when every
 * output element agrees within 1e-4 + 1e-4 * |cpu|, 1 when one does not, 2 on errors, 77 when gfxep
 * offers no device of that backend. It links ONNX Runtime like any application does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnxruntime_c_api.h>

static const OrtApi* ort;

#ifdef _WIN32
#include <windows.h>
#include <shellapi.h>
/* ONNX Runtime takes file paths as ORTCHAR_T, wide characters on Windows: path arguments come from
 * the wide command line there (the array lives until the program ends) */
static const ORTCHAR_T* path_arg(char** argv, int i) {
  (void)argv;
  int n = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &n);
  return wide && i < n ? wide[i] : L"";
}
#else
static const ORTCHAR_T* path_arg(char** argv, int i) { return argv[i]; }
#endif

/* error checks, shortened in the README to CHECK */
#define CHECK(call)                                                        \
  do {                                                                     \
    OrtStatus* status_ = (call);                                           \
    if (status_) {                                                         \
      fprintf(stderr, "gfxep-minimal: %s: %s\n", #call, ort->GetErrorMessage(status_)); \
      ort->ReleaseStatus(status_);                                         \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

/* The gfxep EP device whose gfxep.backend is `backend`, or NULL. */
static const OrtEpDevice* pick_device(OrtEnv* env, const char* backend) {
  const OrtEpDevice* const* devs;
  size_t n;
  CHECK(ort->GetEpDevices(env, &devs, &n));
  for (size_t i = 0; i < n; i++) {
    if (strcmp(ort->EpDevice_EpName(devs[i]), "gfxep") != 0) continue;
    const char* b = ort->GetKeyValue(ort->EpDevice_EpMetadata(devs[i]), "gfxep.backend");
    if (b && strcmp(b, backend) == 0) return devs[i];
  }
  return NULL;
}

/* One run of `session` on `x`; the caller releases the returned output. */
static OrtValue* run_once(OrtSession* session, OrtValue* x) {
  OrtAllocator* a;
  CHECK(ort->GetAllocatorWithDefaultOptions(&a));
  char *in_name, *out_name;
  CHECK(ort->SessionGetInputName(session, 0, a, &in_name));
  CHECK(ort->SessionGetOutputName(session, 0, a, &out_name));
  OrtValue* y = NULL;
  CHECK(ort->Run(session, NULL, (const char* const*)&in_name, (const OrtValue* const*)&x, 1,
                 (const char* const*)&out_name, 1, &y));
  a->Free(a, in_name);
  a->Free(a, out_name);
  return y;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: gfxep-minimal /path/to/libgfxep.so model.onnx [backend [registration]]\n");
    return 2;
  }
  const ORTCHAR_T* plugin = path_arg(argv, 1);
  const ORTCHAR_T* model = path_arg(argv, 2);
  const char* backend = argc > 3 ? argv[3] : "cuda";
  const char* registration = argc > 4 ? argv[4] : "gfxep";
  ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
  if (!ort) {
    fprintf(stderr, "gfxep-minimal: this ONNX Runtime does not offer API version %d\n", ORT_API_VERSION);
    return 2;
  }
  OrtEnv* env;
  CHECK(ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "app", &env));
  CHECK(ort->RegisterExecutionProviderLibrary(env, registration, plugin));
  const OrtEpDevice* gpu = pick_device(env, backend);
  if (!gpu) {
    printf("gfxep offers no %s device registered as %s\n", backend, registration);
    CHECK(ort->UnregisterExecutionProviderLibrary(env, registration));
    ort->ReleaseEnv(env);
    return 77;
  }
  printf("device: %s (%s backend)\n",
         ort->GetKeyValue(ort->EpDevice_EpMetadata(gpu), "gfxep.device_name"), backend);

  OrtSessionOptions* so;
  CHECK(ort->CreateSessionOptions(&so));
  CHECK(ort->SessionOptionsAppendExecutionProvider_V2(so, env, &gpu, 1, NULL, NULL, 0));
  OrtSession* session;
  CHECK(ort->CreateSession(env, model, so, &session));
  OrtSessionOptions* cpu_so;
  CHECK(ort->CreateSessionOptions(&cpu_so));
  OrtSession* cpu;
  CHECK(ort->CreateSession(env, model, cpu_so, &cpu));

  /* the input: its static shape from the model, seeded values */
  OrtTypeInfo* ti;
  const OrtTensorTypeAndShapeInfo* tsi;
  CHECK(ort->SessionGetInputTypeInfo(session, 0, &ti));
  CHECK(ort->CastTypeInfoToTensorInfo(ti, &tsi));
  size_t rank;
  int64_t dims[8];
  CHECK(ort->GetDimensionsCount(tsi, &rank));
  if (rank > 8) return 2;
  CHECK(ort->GetDimensions(tsi, dims, rank));
  ort->ReleaseTypeInfo(ti);
  size_t count = 1;
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] < 1) {
      fprintf(stderr, "gfxep-minimal: input dim %zu is not static\n", d);
      return 2;
    }
    count *= (size_t)dims[d];
  }
  float* data = malloc(count * sizeof *data);
  unsigned seed = 12345;
  for (size_t i = 0; i < count; i++) data[i] = (float)((seed = seed * 1103515245u + 12345u) >> 8) / 16777216.0f;
  OrtMemoryInfo* host;
  CHECK(ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &host));
  OrtValue* x;
  CHECK(ort->CreateTensorWithDataAsOrtValue(host, data, count * sizeof *data, dims, rank,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x));

  OrtValue* y = run_once(session, x);
  OrtValue* want = run_once(cpu, x);
  const float *got_v, *want_v;
  CHECK(ort->GetTensorData(y, (const void**)&got_v));
  CHECK(ort->GetTensorData(want, (const void**)&want_v));
  OrtTensorTypeAndShapeInfo* out_info;
  size_t n_out;
  CHECK(ort->GetTensorTypeAndShape(want, &out_info));
  CHECK(ort->GetTensorShapeElementCount(out_info, &n_out));
  ort->ReleaseTensorTypeAndShapeInfo(out_info);
  double max_err = 0, peak = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n_out; i++) {
    double e = fabs((double)got_v[i] - want_v[i]);
    if (!(e <= 1e-4 + 1e-4 * fabs(want_v[i]))) bad++;
    if (e > max_err || e != e) max_err = e;
    if (fabs(want_v[i]) > peak) peak = fabs(want_v[i]);
  }
  printf("%zu outputs, max |cpu| %.4g, max abs difference from ORT's CPU EP %.3g, %zu outside tolerance\n", n_out,
         peak, max_err, bad);
  /* a comparison of all-zero outputs would prove nothing */
  int ok = bad == 0 && peak > 0;
  if (peak == 0) printf("the CPU EP's output is all zeros: nothing compared\n");

  ort->ReleaseValue(y);
  ort->ReleaseValue(want);
  ort->ReleaseValue(x);
  ort->ReleaseMemoryInfo(host);
  free(data);
  ort->ReleaseSession(cpu);
  ort->ReleaseSessionOptions(cpu_so);
  ort->ReleaseSession(session); /* release sessions, then unregister */
  ort->ReleaseSessionOptions(so);
  CHECK(ort->UnregisterExecutionProviderLibrary(env, registration));
  ort->ReleaseEnv(env);
  return ok ? 0 : 1;
}
