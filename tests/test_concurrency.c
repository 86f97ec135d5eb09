/* gfxep — concurrency through a stock ONNX Runtime (GFXEP_ORT_LIB picks 1.29 or 1.30):
 *  (a) 4 threads, each creating its OWN session on conv_net.onnx and its own stream, 50 runs each;
 *  (b) 4 threads importing page-aligned host memory through ONE importer, viewing it as tensors and
 *      releasing it, at least 2,000 cycles each and until all four have done 2,000 (so the threads are
 *      surely all at work together), every view at its expected address (HOST_ALLOCATION, ORT >= 1.30);
 *  (c) 4 threads running ONE session with input sizes 9..40 in different orders, so shape instances
 *      are built and found concurrently and workspaces are shared out under load.
 * Every result is compared with ORT's CPU EP. One JSON line at the end gives threads, runs and times.
 *
 * GFXEP_TEST_BACKEND selects the gfxep device: "reference" (default; CI) or "cuda" (GPU machine; the
 * test exits 77 when gfxep offers no CUDA device).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortkit.h"

#ifndef GFXEP_MODELS_DIR
#define GFXEP_MODELS_DIR "models"
#endif

#define HOST_ALLOCATION 4 /* ORT 1.30's ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION */

#define ATOL_F32 1e-5
#define RTOL_F32 1e-4

#define THREADS 4
#define OWN_RUNS 50          /* (a) runs per thread */
#define IMPORT_CYCLES 2000   /* (b) cycles per thread */
#define MIN_SIZE 9           /* (c) input sizes MIN_SIZE..MAX_SIZE */
#define MAX_SIZE 40
#define N_SIZES (MAX_SIZE - MIN_SIZE + 1)
#define SHAPE_PASSES 2       /* (c) each thread runs every size this many times */

static ortkit k;
static const char* backend;
static const OrtEpDevice* device;
static const OrtInteropApi* ia;
static int minor;

/* the figures printed at the end; -1: the case did not run */
static struct {
  int own_runs, own_failures;
  double own_seconds, own_overlap_ms;
  int import_cycles, import_views, import_wrong, import_errors;
  double import_seconds, import_overlap_ms;
  const char* import_skipped;
  int shape_runs, shape_failures;
  double shape_seconds, shape_overlap_ms;
} fig = {-1, -1, 0, 0, -1, -1, -1, -1, 0, 0, NULL, -1, -1, 0, 0};

static const char* registration(void) { return strcmp(backend, "reference") == 0 ? "gfxep.reference" : "gfxep"; }

static const char* model_path(const char* name) {
  static char buf[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(buf, sizeof buf, "%s/%s.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR, name);
  return buf;
}

static void expect_ok(OrtStatus* s, const char* what) {
  if (s) fail_msg("%s: %s", what, k.api->GetErrorMessage(s));
}

static double seconds_since(uint64_t t0) { return (double)(ortkit_now_ns() - t0) / 1e9; }

/* A worker's account. Threads never call cmocka: they count and keep the first message. */
typedef struct account {
  int runs, failures;
  char message[512];
  uint64_t t_start, t_end; /* after the start line, and when done */
} account;

/* All workers of a case leave together, so that they really run at the same time. */
static pthread_barrier_t start_line;

static void at_start_line(account* a) {
  pthread_barrier_wait(&start_line);
  a->t_start = ortkit_now_ns();
}

/* How long all workers were running at once, in ms (0 when they never all overlapped). */
static double overlap_ms(const account* a, int n) {
  uint64_t last_start = 0, first_end = UINT64_MAX;
  for (int i = 0; i < n; i++) {
    if (a[i].t_start > last_start) last_start = a[i].t_start;
    if (a[i].t_end < first_end) first_end = a[i].t_end;
  }
  return first_end > last_start ? (double)(first_end - last_start) / 1e6 : 0.0;
}

static void note_failure(account* a, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_failure(account* a, const char* fmt, ...) {
  if (a->failures++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
  }
}

/* Takes an OrtStatus: 1 (and the message noted) when it is an error. */
static int failed(account* a, OrtStatus* s, const char* what) {
  if (!s) return 0;
  note_failure(a, "%s: %s", what, k.api->GetErrorMessage(s));
  k.api->ReleaseStatus(s);
  return 1;
}

static int report(const char* what, account* a, int n) {
  int failures = 0;
  for (int i = 0; i < n; i++) {
    if (a[i].failures) printf("# %s, thread %d: %d failure(s), first: %s\n", what, i, a[i].failures, a[i].message);
    failures += a[i].failures;
  }
  return failures;
}

/* ---- (a) a session per thread ---- */

typedef struct own_job {
  account acc;
  ortkit_tensor* in;
  size_t n_in;
  ortkit_tensor* want;
  size_t n_want;
} own_job;

static void* own_session_main(void* arg) {
  own_job* j = arg;
  at_start_line(&j->acc);
  OrtSession* s = NULL;
  OrtSyncStream* stream = NULL;
  OrtRunOptions* ro = NULL;
  if (failed(&j->acc, ortkit_session(&k, model_path("conv_net"), device, NULL, NULL, 0, &s), "session") ||
      failed(&j->acc, k.api->CreateSyncStreamForEpDevice(device, NULL, &stream), "stream") ||
      failed(&j->acc, k.api->CreateRunOptions(&ro), "run options"))
    goto done;
  k.api->RunOptionsSetSyncStream(ro, stream);
  for (int r = 0; r < OWN_RUNS; r++) {
    ortkit_tensor* got = NULL;
    size_t n_got = 0;
    if (failed(&j->acc, ortkit_run(&k, s, ro, j->in, j->n_in, &got, &n_got), "run")) break;
    j->acc.runs++;
    ortkit_diff d;
    if (n_got != j->n_want || ortkit_compare(got, j->want, n_got, ATOL_F32, RTOL_F32, &d))
      note_failure(&j->acc, "run %d differs from the CPU EP (max abs %g)", r, n_got == j->n_want ? d.max_abs : -1.0);
    ortkit_tensors_free(got, n_got);
  }
done:
  if (ro) k.api->ReleaseRunOptions(ro);
  if (stream) k.api->ReleaseSyncStream(stream);
  if (s) k.api->ReleaseSession(s);
  j->acc.t_end = ortkit_now_ns();
  return NULL;
}

static void test_own_sessions_own_streams(void** state) {
  (void)state;
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  own_job jobs[THREADS];
  pthread_t t[THREADS];
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < THREADS; i++) {
    expect_ok(ortkit_random_inputs(&k, cpu, 700 + (uint64_t)i, 12 + 4 * i, &jobs[i].in, &jobs[i].n_in), "inputs");
    expect_ok(ortkit_run(&k, cpu, NULL, jobs[i].in, jobs[i].n_in, &jobs[i].want, &jobs[i].n_want), "cpu run");
  }
  uint64_t t0 = ortkit_now_ns();
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, own_session_main, &jobs[i]), 0);
  account acc[THREADS];
  int runs = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    acc[i] = jobs[i].acc;
    runs += jobs[i].acc.runs;
    ortkit_tensors_free(jobs[i].in, jobs[i].n_in);
    ortkit_tensors_free(jobs[i].want, jobs[i].n_want);
  }
  fig.own_seconds = seconds_since(t0);
  fig.own_overlap_ms = overlap_ms(acc, THREADS);
  fig.own_runs = runs;
  fig.own_failures = report("own sessions", acc, THREADS);
  k.api->ReleaseSession(cpu);
  assert_int_equal(fig.own_failures, 0);
  assert_int_equal(runs, THREADS * OWN_RUNS);
}

/* ---- (b) one importer, four threads ---- */

typedef struct import_job {
  account acc;
  OrtExternalResourceImporter* imp;
  char* mem;
  size_t page;
  int views, wrong;
} import_job;

static atomic_int imports_done; /* threads that have done IMPORT_CYCLES */

static void* import_main(void* arg) {
  import_job* j = arg;
  at_start_line(&j->acc);
  int64_t shape[2] = {16, 16}; /* 1 KiB of floats */
  for (int c = 0; c < IMPORT_CYCLES || atomic_load(&imports_done) < THREADS; c++) {
    if (c == IMPORT_CYCLES) atomic_fetch_add(&imports_done, 1);
    if (j->acc.failures) break;
    size_t mem_off = (size_t)(c % 2) * j->page;
    OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                     .handle_type = (OrtExternalMemoryHandleType)HOST_ALLOCATION,
                                     .native_handle = j->mem,
                                     .size_bytes = 4 * j->page,
                                     .offset_bytes = mem_off};
    OrtExternalMemoryHandle* h = NULL;
    if (failed(&j->acc, ia->ImportMemory(j->imp, &d, &h), "import")) break;
    for (int v = 0; v < 2; v++) {
      size_t t_off = (size_t)((c + v) % 7) * 1024;
      OrtExternalTensorDescriptor td = {.version = ORT_API_VERSION,
                                        .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                        .shape = shape,
                                        .rank = 2,
                                        .offset_bytes = t_off};
      OrtValue* value = NULL;
      if (failed(&j->acc, ia->CreateTensorFromMemory(j->imp, h, &td, &value), "view")) break;
      void* data = NULL;
      if (!failed(&j->acc, k.api->GetTensorMutableData(value, &data), "view data")) {
        j->views++;
        if (data != j->mem + mem_off + t_off) {
          j->wrong++;
          note_failure(&j->acc, "cycle %d: view at %p, expected %p", c, data, (void*)(j->mem + mem_off + t_off));
        }
      }
      k.api->ReleaseValue(value);
    }
    ia->ReleaseExternalMemoryHandle(h);
    j->acc.runs++;
  }
  if (j->acc.runs < IMPORT_CYCLES) atomic_fetch_add(&imports_done, 1); /* stopped by a failure: let the others end */
  j->acc.t_end = ortkit_now_ns();
  return NULL;
}

static void test_one_importer_four_threads(void** state) {
  (void)state;
  if (minor < 30) {
    fig.import_skipped = "HOST_ALLOCATION needs ORT >= 1.30";
    skip();
  }
  OrtExternalResourceImporter* imp = NULL;
  expect_ok(ia->CreateExternalResourceImporterForDevice(device, &imp), "importer");
  bool can = false;
  expect_ok(ia->CanImportMemory(imp, (OrtExternalMemoryHandleType)HOST_ALLOCATION, &can), "can import");
  assert_true(can);
  size_t page = ortkit_page_size();
  import_job jobs[THREADS];
  pthread_t t[THREADS];
  memset(jobs, 0, sizeof jobs);
  atomic_store(&imports_done, 0);
  uint64_t t0 = ortkit_now_ns();
  for (int i = 0; i < THREADS; i++) {
    jobs[i].imp = imp;
    jobs[i].page = page;
    jobs[i].mem = ortkit_aligned_alloc(page, 4 * page); /* each thread its own range: registrations never overlap */
    assert_non_null(jobs[i].mem);
    assert_int_equal(pthread_create(&t[i], NULL, import_main, &jobs[i]), 0);
  }
  account acc[THREADS];
  int cycles = 0, views = 0, wrong = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    acc[i] = jobs[i].acc;
    cycles += jobs[i].acc.runs;
    views += jobs[i].views;
    wrong += jobs[i].wrong;
    ortkit_aligned_free(jobs[i].mem);
  }
  fig.import_seconds = seconds_since(t0);
  fig.import_overlap_ms = overlap_ms(acc, THREADS);
  ia->ReleaseExternalResourceImporter(imp);
  fig.import_cycles = cycles;
  fig.import_views = views;
  fig.import_wrong = wrong;
  fig.import_errors = report("one importer", acc, THREADS);
  assert_int_equal(fig.import_errors, 0);
  assert_int_equal(wrong, 0);
  for (int i = 0; i < THREADS; i++) assert_true(acc[i].runs >= IMPORT_CYCLES);
  assert_true(fig.import_overlap_ms > 0); /* no thread ended before the last one had done its share */
  assert_int_equal(views, 2 * cycles);
}

/* ---- (c) one session, many shapes, four threads ---- */

typedef struct shape_job {
  account acc;
  OrtSession* session;
  int index;
  ortkit_tensor** in;   /* [N_SIZES] */
  ortkit_tensor** want; /* [N_SIZES], one output each */
} shape_job;

static void* shape_main(void* arg) {
  shape_job* j = arg;
  at_start_line(&j->acc);
  OrtSyncStream* stream = NULL;
  OrtRunOptions* ro = NULL;
  /* threads 0 and 1 run on streams of their own, 2 and 3 on ORT's default stream */
  if (j->index < 2) {
    if (failed(&j->acc, k.api->CreateSyncStreamForEpDevice(device, NULL, &stream), "stream") ||
        failed(&j->acc, k.api->CreateRunOptions(&ro), "run options"))
      goto done;
    k.api->RunOptionsSetSyncStream(ro, stream);
  }
  for (int pass = 0; pass < SHAPE_PASSES; pass++) {
    for (int n = 0; n < N_SIZES; n++) {
      /* a different walk through the sizes per thread and pass: forwards, backwards, strided */
      int step = 1 + 2 * ((j->index + pass) % 4); /* 1, 3, 5, 7: coprime with 32 */
      int i = (n * step + 5 * j->index) % N_SIZES;
      if ((j->index + pass) % 2) i = N_SIZES - 1 - i;
      ortkit_tensor* got = NULL;
      size_t n_got = 0;
      if (failed(&j->acc, ortkit_run(&k, j->session, ro, j->in[i], 1, &got, &n_got), "run")) continue;
      j->acc.runs++;
      ortkit_diff d;
      if (n_got != 1 || ortkit_compare(got, j->want[i], 1, ATOL_F32, RTOL_F32, &d))
        note_failure(&j->acc, "size %d differs from the CPU EP (max abs %g)", MIN_SIZE + i,
                     n_got == 1 ? d.max_abs : -1.0);
      ortkit_tensors_free(got, n_got);
    }
  }
done:
  if (ro) k.api->ReleaseRunOptions(ro);
  if (stream) k.api->ReleaseSyncStream(stream);
  j->acc.t_end = ortkit_now_ns();
  return NULL;
}

static void test_one_session_many_shapes(void** state) {
  (void)state;
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), device, NULL, NULL, 0, &s), "session");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  ortkit_tensor* in[N_SIZES];
  ortkit_tensor* want[N_SIZES];
  for (int i = 0; i < N_SIZES; i++) {
    size_t n_in = 0, n_want = 0;
    expect_ok(ortkit_random_inputs(&k, cpu, 900 + (uint64_t)i, MIN_SIZE + i, &in[i], &n_in), "inputs");
    expect_ok(ortkit_run(&k, cpu, NULL, in[i], n_in, &want[i], &n_want), "cpu run");
    assert_int_equal(n_in, 1);
    assert_int_equal(n_want, 1);
  }
  shape_job jobs[THREADS];
  pthread_t t[THREADS];
  memset(jobs, 0, sizeof jobs);
  uint64_t t0 = ortkit_now_ns();
  for (int i = 0; i < THREADS; i++) {
    jobs[i].session = s;
    jobs[i].index = i;
    jobs[i].in = in;
    jobs[i].want = want;
    assert_int_equal(pthread_create(&t[i], NULL, shape_main, &jobs[i]), 0);
  }
  account acc[THREADS];
  int runs = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    acc[i] = jobs[i].acc;
    runs += jobs[i].acc.runs;
  }
  fig.shape_seconds = seconds_since(t0);
  fig.shape_overlap_ms = overlap_ms(acc, THREADS);
  fig.shape_runs = runs;
  fig.shape_failures = report("one session, many shapes", acc, THREADS);
  /* the session still answers right on one thread afterwards */
  ortkit_tensor* got = NULL;
  size_t n_got = 0;
  expect_ok(ortkit_run(&k, s, NULL, in[N_SIZES - 1], 1, &got, &n_got), "run after the threads");
  ortkit_diff d;
  assert_int_equal(ortkit_compare(got, want[N_SIZES - 1], 1, ATOL_F32, RTOL_F32, &d), 0);
  ortkit_tensors_free(got, n_got);
  for (int i = 0; i < N_SIZES; i++) {
    ortkit_tensors_free(in[i], 1);
    ortkit_tensors_free(want[i], 1);
  }
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
  assert_int_equal(fig.shape_failures, 0);
  assert_int_equal(runs, THREADS * SHAPE_PASSES * N_SIZES);
}

/* ---- (d) precision=fp16: four threads through the range guard's switch ---- */

#define GUARD_RUNS 12 /* per thread: the first Runs calibrate in float32, the later ones run the mixed model */

typedef struct guard_job {
  account acc;
  OrtSession* session;
  const ortkit_tensor* in;
  const ortkit_tensor* want;
  double atol;
} guard_job;

static void* guard_main(void* arg) {
  guard_job* j = arg;
  at_start_line(&j->acc);
  for (int r = 0; r < GUARD_RUNS; r++) {
    ortkit_tensor* got = NULL;
    size_t n_got = 0;
    if (failed(&j->acc, ortkit_run(&k, j->session, NULL, j->in, 1, &got, &n_got), "run")) continue;
    j->acc.runs++;
    ortkit_diff d;
    if (n_got != 1 || ortkit_compare(got, j->want, 1, j->atol, 0, &d) || d.nan_mismatch)
      note_failure(&j->acc, "run %d differs from the CPU EP (max abs %g)", r, n_got == 1 ? d.max_abs : -1.0);
    ortkit_tensors_free(got, n_got);
  }
  j->acc.t_end = ortkit_now_ns();
  return NULL;
}

/* fp16_overflow (activations near 1e6 in its middle) on one session with precision=fp16: Runs of four
 * threads overlap the guard's float32 calibration, its switch to the mixed model and the output
 * checks; every Run must be finite and within float16's rounding of ORT's CPU EP (2e-2 of the peak). */
static void test_fp16_guard_threads(void** state) {
  (void)state;
  OrtSession *s = NULL, *cpu = NULL;
  const char* keys[] = {"precision"};
  const char* values[] = {"fp16"};
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), device, keys, values, 1, &s), "fp16 session");
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  ortkit_tensor *in = NULL, *want = NULL;
  size_t n_in = 0, n_want = 0;
  expect_ok(ortkit_random_inputs(&k, cpu, 77, 20, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  double peak = 0;
  for (size_t e = 0; e < want[0].count; e++) peak = fmax(peak, fabs(want[0].data[e]));
  assert_true(peak > 1.0);
  guard_job jobs[THREADS];
  pthread_t t[THREADS];
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (guard_job){.session = s, .in = in, .want = want, .atol = 2e-2 * peak};
    assert_int_equal(pthread_create(&t[i], NULL, guard_main, &jobs[i]), 0);
  }
  account acc[THREADS];
  int runs = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    acc[i] = jobs[i].acc;
    runs += jobs[i].acc.runs;
  }
  const int failures = report("precision=fp16, one session", acc, THREADS);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
  assert_int_equal(failures, 0);
  assert_int_equal(runs, THREADS * GUARD_RUNS);
}

static void print_figures(void) {
  printf("{\"concurrency\": {\"ort\": \"%s\", \"backend\": \"%s\", \"threads\": %d, ", k.version, backend, THREADS);
  printf("\"own_sessions\": {\"threads\": %d, \"runs_per_thread\": %d, \"runs\": %d, \"failures\": %d, "
         "\"seconds\": %.3f, \"all_running_ms\": %.2f}, ",
         THREADS, OWN_RUNS, fig.own_runs, fig.own_failures, fig.own_seconds, fig.own_overlap_ms);
  if (fig.import_skipped)
    printf("\"shared_importer\": {\"skipped\": \"%s\"}, ", fig.import_skipped);
  else
    printf("\"shared_importer\": {\"threads\": %d, \"min_cycles_per_thread\": %d, \"cycles\": %d, \"views\": %d, "
           "\"wrong_address\": %d, \"errors\": %d, \"seconds\": %.3f, \"all_running_ms\": %.2f}, ",
           THREADS, IMPORT_CYCLES, fig.import_cycles, fig.import_views, fig.import_wrong, fig.import_errors,
           fig.import_seconds, fig.import_overlap_ms);
  printf("\"shared_session_shapes\": {\"threads\": %d, \"sizes\": \"%d..%d\", \"runs_per_thread\": %d, \"runs\": %d, "
         "\"failures\": %d, \"seconds\": %.3f, \"all_running_ms\": %.2f}}}\n",
         THREADS, MIN_SIZE, MAX_SIZE, SHAPE_PASSES * N_SIZES, fig.shape_runs, fig.shape_failures, fig.shape_seconds,
         fig.shape_overlap_ms);
}

int main(void) {
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  sscanf(k.version, "1.%d", &minor);
  ia = k.api->GetInteropApi();
  printf("# ONNX Runtime %s from %s, gfxep backend %s\n", k.version, k.lib_path, backend);
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s || !ia) {
    fprintf(stderr, "register: %s\n", s ? k.api->GetErrorMessage(s) : "no interop API");
    if (s) k.api->ReleaseStatus(s);
    ortkit_close(&k);
    return 1;
  }
  int rc;
  if (ortkit_find_devices(&k, backend, &device, 1) != 1) {
    printf("# gfxep offers no %s device%s\n", backend, strcmp(backend, "cuda") == 0 ? ": skipped" : "");
    rc = strcmp(backend, "cuda") == 0 ? 77 : 1;
  } else {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_sessions_own_streams),
        cmocka_unit_test(test_one_importer_four_threads),
        cmocka_unit_test(test_one_session_many_shapes),
        cmocka_unit_test(test_fp16_guard_threads),
    };
    pthread_barrier_init(&start_line, NULL, THREADS);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    pthread_barrier_destroy(&start_line);
    print_figures();
  }
  s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return rc;
}
