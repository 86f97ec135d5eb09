/* gfxep fuzz target: EP options, through a stock ONNX Runtime (1.29 by default).
 *
 * Once (LLVMFuzzerInitialize): ORT is loaded through tools/ortkit.c (GFXEP_ORT_LIB), gfxep is
 * registered as "gfxep.reference" from GFXEP_PLUGIN, and $GFXEP_MODELS_DIR/add_relu.onnx
 * (default build/models) is read. Per input: the bytes are split at NUL bytes into up to 4 key/value
 * pairs, given to SessionOptionsAppendExecutionProvider_V2 for the reference device, and a session is
 * created for the model.
 *
 * Invariants (a violation traps):
 *  - every call returns a status or succeeds, never crashes;
 *  - when every key is known and every value allowed, the session is created, and a run gives
 *    exactly what ORT's CPU EP gives (with a device_memory_limit, creation or the run may instead fail
 *    with a status, and a failed run's message says it was memory);
 *  - when a key is unknown or a value not allowed, session creation fails, and the message names
 *    one of the offending keys (gfxep: "unknown option '<key>'", "option '<key>' = ...");
 *  - when the same key is given twice, either outcome is allowed, but a failure names a key.
 * Everything is released (LeakSanitizer is on; ORT's own allocations are suppressed in lsan.supp).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortkit.h"

#define FUZZ_TARGET "fuzz_options"
#include "fuzz_common.h"

#define MAX_PAIRS 4

static ortkit k;
static const OrtEpDevice* device;
static void* model;
static size_t model_size;
static OrtMemoryInfo* cpu_info;
static int verbose; /* FUZZ_VERBOSE=1: print each input's options and outcome */

static void die(const char* what, const char* detail) {
  fprintf(stderr, "fuzz_options: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static void ok_or_die(OrtStatus* s, const char* what) {
  if (!s) return;
  fprintf(stderr, "fuzz_options: %s: %s\n", what, k.api->GetErrorMessage(s));
  exit(1);
}

/* Runs add_relu once on a fixed x into y. */
enum { N = 1 * 3 * 8 * 8 };
static OrtStatus* run_add_relu(OrtSession* sess, float* y_out) {
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 11) - 5.0f;
  int64_t dims[4] = {1, 3, 8, 8};
  OrtValue* in = NULL;
  OrtValue* out = NULL;
  const float* y = NULL;
  OrtStatus* s =
      k.api->CreateTensorWithDataAsOrtValue(cpu_info, x, sizeof x, dims, 4, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in);
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  if (!s) s = k.api->Run(sess, NULL, in_names, (const OrtValue* const*)&in, 1, out_names, 1, &out);
  if (!s) s = k.api->GetTensorData(out, (const void**)&y);
  if (!s) memcpy(y_out, y, sizeof(float) * N);
  if (out) k.api->ReleaseValue(out);
  if (in) k.api->ReleaseValue(in);
  return s;
}

static float expected_y[N]; /* from ORT's CPU EP */

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  char err[1024];
  const char* ort_log = getenv("FUZZ_ORT_LOG"); /* 1: ORT's warnings and errors on stderr */
  verbose = getenv("FUZZ_VERBOSE") && getenv("FUZZ_VERBOSE")[0] == '1';
  if (ortkit_open(&k, NULL, ort_log && ort_log[0] == '1' ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_FATAL, err,
                  sizeof err))
    die(err, NULL);
  ok_or_die(k.api->RegisterExecutionProviderLibrary(k.env, "gfxep.reference", ortkit_plugin_path()),
            "registering gfxep.reference");
  if (ortkit_find_devices(&k, "reference", &device, 1) != 1) die("gfxep offers no reference device", NULL);
  ok_or_die(k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu_info), "CreateCpuMemoryInfo");

  const char* dir = getenv("GFXEP_MODELS_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/add_relu.onnx", dir && dir[0] ? dir : "build/models");
  FILE* f = fopen(path, "rb");
  if (!f) die("cannot open the model (set GFXEP_MODELS_DIR)", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  model = malloc(n > 0 ? (size_t)n : 1);
  if (!model || n <= 0 || fread(model, 1, (size_t)n, f) != (size_t)n) die("cannot read the model", path);
  fclose(f);
  model_size = (size_t)n;
  OrtSessionOptions* so = NULL;
  OrtSession* cpu = NULL;
  ok_or_die(k.api->CreateSessionOptions(&so), "CreateSessionOptions");
  ok_or_die(k.api->CreateSessionFromArray(k.env, model, model_size, so, &cpu), "the CPU EP session");
  ok_or_die(run_add_relu(cpu, expected_y), "the CPU EP run");
  k.api->ReleaseSession(cpu);
  k.api->ReleaseSessionOptions(so);
  fprintf(stderr, "fuzz_options: ONNX Runtime %s (%s), plugin %s, model %s\n", k.version, k.lib_path,
          ortkit_plugin_path_text(), path);
  return 0;
}

/* A decimal byte count that fits size_t: digits only, no sign, space, suffix or hex. */
static int byte_count(const char* v, unsigned __int128* out) {
  if (!v[0]) return 0;
  unsigned __int128 n = 0;
  for (const char* c = v; *c; c++) {
    if (*c < '0' || *c > '9') return 0;
    n = n * 10 + (unsigned)(*c - '0');
    if (n > SIZE_MAX) return 0;
  }
  *out = n;
  return 1;
}

/* What gfxep accepts (src/ort/options.c): 0 unknown key, 1 known key and allowed value, -1 known key
 * and a value it refuses. */
static int judge(const char* key, const char* value) {
  unsigned __int128 n;
  if (strcmp(key, "allocator") == 0) return strcmp(value, "caching") == 0 || strcmp(value, "direct") == 0 ? 1 : -1;
  if (strcmp(key, "log_partition") == 0 || strcmp(key, "cuda_graph") == 0)
    return strcmp(value, "0") == 0 || strcmp(value, "1") == 0 ? 1 : -1;
  if (strcmp(key, "device_memory_limit") == 0) return byte_count(value, &n) ? 1 : -1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  /* split at NUL bytes: key0 \0 value0 \0 key1 \0 value1 ... (a missing last value is "") */
  char* text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  const char* tokens[2 * MAX_PAIRS];
  size_t n_tokens = 0;
  for (size_t i = 0; i <= size && n_tokens < 2 * MAX_PAIRS;) {
    tokens[n_tokens++] = text + i;
    i += strlen(text + i) + 1;
  }
  if (size == 0) n_tokens = 0;
  size_t n_pairs = (n_tokens + 1) / 2;
  const char* keys[MAX_PAIRS];
  const char* values[MAX_PAIRS];
  for (size_t p = 0; p < n_pairs; p++) {
    keys[p] = tokens[2 * p];
    values[p] = 2 * p + 1 < n_tokens ? tokens[2 * p + 1] : "";
  }

  /* what gfxep must say */
  int bad = 0, duplicate = 0, limited = 0;
  for (size_t p = 0; p < n_pairs; p++) {
    if (judge(keys[p], values[p]) != 1) bad = 1;
    for (size_t q = 0; q < p; q++)
      if (strcmp(keys[p], keys[q]) == 0) duplicate = 1;
    /* a device memory limit may make session creation or the run fail for want of memory */
    unsigned __int128 n = 0;
    if (strcmp(keys[p], "device_memory_limit") == 0 && byte_count(values[p], &n) && n > 0) limited = 1;
  }

  OrtSessionOptions* so = NULL;
  OrtStatus* s = k.api->CreateSessionOptions(&so);
  CHECK(!s, "CreateSessionOptions: %s", k.api->GetErrorMessage(s));
  s = k.api->SetIntraOpNumThreads(so, 1);
  CHECK(!s, "SetIntraOpNumThreads");
  s = k.api->SessionOptionsAppendExecutionProvider_V2(so, k.env, &device, 1, n_pairs ? keys : NULL,
                                                      n_pairs ? values : NULL, n_pairs);
  OrtSession* sess = NULL;
  const char* stage = "SessionOptionsAppendExecutionProvider_V2";
  if (!s) {
    stage = "CreateSessionFromArray";
    s = k.api->CreateSessionFromArray(k.env, model, model_size, so, &sess);
  }
  if (verbose) {
    for (size_t p = 0; p < n_pairs; p++) fprintf(stderr, "fuzz_options: '%.80s' = '%.80s'\n", keys[p], values[p]);
    fprintf(stderr, "fuzz_options: -> %s%s%s\n", s ? stage : "session created", s ? ": " : "",
            s ? k.api->GetErrorMessage(s) : "");
  }
  if (s) {
    const char* msg = k.api->GetErrorMessage(s);
    CHECK(msg && msg[0], "%s failed with an empty message", stage);
    CHECK(bad || duplicate || limited, "%s failed with valid options: %s", stage, msg);
    int named = 0;
    for (size_t p = 0; p < n_pairs && !named; p++)
      if (judge(keys[p], values[p]) != 1 || duplicate || limited) named = strstr(msg, keys[p]) != NULL;
    CHECK(named || (limited && !bad), "%s failed without naming an offending key: %s", stage, msg);
    k.api->ReleaseStatus(s);
  } else {
    CHECK(!bad || duplicate, "a session was created with an unknown option or value (first key '%s')",
          n_pairs ? keys[0] : "");
    float y[N];
    s = run_add_relu(sess, y);
    if (s && limited) {
      const char* msg = k.api->GetErrorMessage(s);
      CHECK(msg && strstr(msg, "memory"), "a run under a device memory limit failed for another reason: %s", msg);
      k.api->ReleaseStatus(s);
    } else {
      CHECK(!s, "a session with valid options failed to run: %s", k.api->GetErrorMessage(s));
      for (int i = 0; i < N; i++)
        CHECK(y[i] == expected_y[i], "y[%d] = %g, ORT's CPU EP says %g", i, (double)y[i], (double)expected_y[i]);
    }
    k.api->ReleaseSession(sess);
  }
  k.api->ReleaseSessionOptions(so);
  free(text);
  return 0;
}
