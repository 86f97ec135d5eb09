/* gfxep — faults a user can cause or meet, through a stock ONNX Runtime (GFXEP_ORT_LIB picks 1.29 or
 * 1.30), every result compared with ORT's own CPU EP:
 *  - the device_memory_limit option: a run whose tensors do not fit under the limit fails with a status,
 *    and the same session then runs a smaller input correctly; bad values fail session creation with a
 *    message naming the option;
 *  - RunOptionsSetTerminate: the run is refused; after RunOptionsUnsetTerminate it runs correctly;
 *  - nodes gfxep does not take (Shrink, Hardmax) stay on ORT's CPU EP and compute correctly.
 *
 * GFXEP_TEST_BACKEND selects the gfxep device: "reference" (default; CI) or "cuda" (GPU machine; the
 * test exits 77 when gfxep offers no CUDA device).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortkit.h"

#ifndef GFXEP_MODELS_DIR
#define GFXEP_MODELS_DIR "models"
#endif

#define ATOL_F32 1e-5
#define RTOL_F32 1e-4

static ortkit k;
static const char* backend;
static const OrtEpDevice* device;

/* gfxep's allocator logs why an allocation failed (ORT's Alloc has no status): keep the last such line */
static int limit_logs;
static char last_limit_log[1024];

static void on_log(void* param, OrtLoggingLevel severity, const char* category, const char* logid,
                   const char* code_location, const char* message) {
  (void)param, (void)category, (void)logid, (void)code_location;
  if (strncmp(message, "gfxep: allocating ", 18) == 0) {
    limit_logs++;
    snprintf(last_limit_log, sizeof last_limit_log, "%s", message);
  } else if (severity >= ORT_LOGGING_LEVEL_ERROR) {
    fprintf(stderr, "[ort] %s\n", message);
  }
}

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

/* case-insensitive strstr */
static int mentions(const char* text, const char* needle) {
  size_t n = strlen(needle);
  for (const char* p = text; *p; p++) {
    size_t i = 0;
    while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return 1;
  }
  return 0;
}

static void compare_with_cpu(const char* what, const ortkit_tensor* got, size_t n_got, const ortkit_tensor* want,
                             size_t n_want) {
  assert_int_equal(n_got, n_want);
  ortkit_diff d;
  int bad = ortkit_compare(got, want, n_got, ATOL_F32, RTOL_F32, &d);
  printf("# %s: max abs %.3g, max rel %.3g against the CPU EP\n", what, d.max_abs, d.max_rel);
  if (bad) fail_msg("%s: %zu elements differ from the CPU EP (max abs %g)", what, d.mismatched, d.max_abs);
}

/* A conv_net input of 1x3xHxW, seeded. */
static ortkit_tensor conv_input(int64_t hw, uint64_t seed) {
  ortkit_tensor t = {.name = "x", .rank = 4, .dims = {1, 3, hw, hw}};
  t.count = (size_t)(3 * hw * hw);
  t.data = malloc(sizeof(float) * t.count);
  assert_non_null(t.data);
  uint64_t x = seed;
  for (size_t i = 0; i < t.count; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t.data[i] = (float)((double)(x >> 40) / 16777216.0 * 2.0 - 1.0);
  }
  return t;
}

static OrtStatus* session_with_limit(const char* model, const char* limit, OrtSession** out) {
  const char* keys[] = {"device_memory_limit"};
  const char* values[] = {limit};
  return ortkit_session(&k, model_path(model), device, keys, values, 1, out);
}

/* ---- device_memory_limit ---- */

#define LIMIT_BYTES 262144 /* 256 KiB */
#define LIMIT_TEXT "262144"

/* Whether a failed run's status itself says that memory ran out (1) or only shows the symptom gfxep's
 * guards catch when ORT hands a kernel a tensor without memory (0). ORT 1.29 and 1.30 do not turn a
 * plugin allocator's NULL into an error: they give the kernel an output (or copy target) whose data is
 * NULL, so the status comes from whichever gfxep check sees it first. */
static int oom_status_names_memory = -1;

/* Checks a Run that had to fail for want of memory under the limit; `bytes` is the request gfxep's
 * allocator must have refused and logged. */
static void check_refused_run(OrtStatus* st, const char* what, size_t bytes) {
  if (!st) fail_msg("%s: Run succeeded under a %d-byte device_memory_limit", what, LIMIT_BYTES);
  const char* msg = k.api->GetErrorMessage(st);
  printf("# %s: Run failed, code %d: %s\n", what, (int)k.api->GetErrorCode(st), msg);
  printf("# %s: gfxep logged (%d line(s)): %s\n", what, limit_logs, last_limit_log);
  int names_memory = mentions(msg, "memory") || mentions(msg, "limit") || mentions(msg, "alloc");
  int guard = strstr(msg, "but no data") || strstr(msg, "NULL destination");
  if (!names_memory && !guard) fail_msg("%s: the status names neither memory nor the limit: %s", what, msg);
  if (!names_memory)
    printf("# NOTE: the status shows gfxep's NULL-data guard, not the memory failure (see test_faults.c)\n");
  oom_status_names_memory = names_memory;
  k.api->ReleaseStatus(st);
  /* the allocator's own account, through ORT's logger: the request, the limit, what was held */
  char want[96];
  snprintf(want, sizeof want, "allocating %zu bytes", bytes);
  assert_true(limit_logs >= 1);
  if (!strstr(last_limit_log, want)) fail_msg("%s: gfxep's log does not name the %zu-byte request", what, bytes);
  assert_non_null(strstr(last_limit_log, "would exceed the device_memory_limit of " LIMIT_TEXT " bytes ("));
  assert_non_null(strstr(last_limit_log, " held)"));
}

/* conv_net takes 1x3xHxW to 1x8x(H/4)x(W/4), all in one gfxep partition whose intermediates live in
 * gfxep's own workspace. What ORT allocates through the session's device allocator is the input copied
 * to the device (12 B x H x W) and the output (H x W / 2 B): 14 KiB for 32x32, 3 MiB + 512 KiB for
 * 512x512. A 256 KiB limit lets the first through and stops the second. */
static void test_memory_limit_host_inputs(void** state) {
  (void)state;
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(session_with_limit("conv_net", LIMIT_TEXT, &s), "session with a 256 KiB device_memory_limit");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");

  ortkit_tensor big = conv_input(512, 1), small = conv_input(32, 2);
  ortkit_tensor *out = NULL, *want = NULL;
  size_t n_out = 0, n_want = 0;
  limit_logs = 0;
  /* the first allocation to be refused is the copy of the input to the device (3 MiB) */
  check_refused_run(ortkit_run(&k, s, NULL, &big, 1, &out, &n_out), "512x512, host input", 3145728);

  /* the same session, a small input: runs, and right */
  for (int r = 0; r < 2; r++) {
    expect_ok(ortkit_run(&k, s, NULL, &small, 1, &out, &n_out), "32x32 under the limit");
    if (r == 0) expect_ok(ortkit_run(&k, cpu, NULL, &small, 1, &want, &n_want), "cpu");
    compare_with_cpu("32x32 under the limit", out, n_out, want, n_want);
    ortkit_tensors_free(out, n_out);
  }
  ortkit_tensors_free(want, n_want);

  /* the big input again: still refused */
  OrtStatus* st = ortkit_run(&k, s, NULL, &big, 1, &out, &n_out);
  assert_non_null(st);
  k.api->ReleaseStatus(st);
  k.api->ReleaseSession(s);

  /* control: without the limit the big input runs and matches */
  expect_ok(ortkit_session(&k, model_path("conv_net"), device, NULL, NULL, 0, &s), "session without a limit");
  expect_ok(ortkit_run(&k, s, NULL, &big, 1, &out, &n_out), "512x512 without a limit");
  expect_ok(ortkit_run(&k, cpu, NULL, &big, 1, &want, &n_want), "cpu 512x512");
  compare_with_cpu("512x512 without a limit", out, n_out, want, n_want);
  ortkit_tensors_free(out, n_out);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
  free(big.data);
  free(small.data);
}

/* The input already on the device (from an environment allocator, which the limit does not cover),
 * so the only allocation the session makes is its output: 512 KiB for 512x512 does not fit.
 * On a CUDA device this hands the kernels an output without memory unless gfxep refuses it first, so
 * there the case runs only when the previous case showed that gfxep names the failure itself. */
static void test_memory_limit_output_on_device(void** state) {
  (void)state;
  if (strcmp(backend, "cuda") == 0 && oom_status_names_memory != 1) {
    printf("# skipped on cuda: gfxep does not turn an output without memory into a status of its own\n");
    skip();
  }
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(session_with_limit("conv_net", LIMIT_TEXT, &s), "session with a limit");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  OrtAllocator* dev_alloc = NULL;
  expect_ok(k.api->CreateSharedAllocator(k.env, device, OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator, NULL,
                                         &dev_alloc),
            "shared device allocator");
  OrtMemoryInfo* host = NULL;
  expect_ok(k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &host), "cpu info");
  const OrtMemoryInfo* dev_mem = k.api->EpDevice_MemoryInfo(device, OrtDeviceMemoryType_DEFAULT);
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  const int64_t sizes[] = {512, 32, 512, 32};
  for (int i = 0; i < 4; i++) {
    ortkit_tensor in = conv_input(sizes[i], 10 + (uint64_t)i);
    OrtValue *h = NULL, *x = NULL, *y = NULL;
    expect_ok(k.api->CreateTensorWithDataAsOrtValue(host, in.data, in.count * sizeof(float), in.dims, 4,
                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &h),
              "host input");
    expect_ok(k.api->CreateTensorAsOrtValue(dev_alloc, in.dims, 4, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x),
              "device input");
    const OrtValue* src[] = {h};
    OrtValue* dst[] = {x};
    expect_ok(k.api->CopyTensors(k.env, src, dst, NULL, 1), "upload");
    limit_logs = 0;
    OrtStatus* st = k.api->Run(s, NULL, in_names, (const OrtValue* const*)&x, 1, out_names, 1, &y);
    if (sizes[i] == 512) {
      /* the output, 8 x 128 x 128 floats, is what does not fit */
      check_refused_run(st, "512x512, input on the device", 524288);
      assert_null(y);
    } else {
      expect_ok(st, "32x32 with a device input under the limit");
      assert_int_equal(limit_logs, 0);
      OrtTensorTypeAndShapeInfo* info = NULL;
      ortkit_tensor got = {.name = "y"};
      expect_ok(k.api->GetTensorTypeAndShape(y, &info), "y shape");
      expect_ok(k.api->GetDimensionsCount(info, &got.rank), "rank");
      expect_ok(k.api->GetDimensions(info, got.dims, got.rank), "dims");
      expect_ok(k.api->GetTensorShapeElementCount(info, &got.count), "count");
      k.api->ReleaseTensorTypeAndShapeInfo(info);
      got.data = calloc(got.count, sizeof(float));
      /* ORT returns the output where it is: copy it from the device, or read it on the host */
      const OrtMemoryInfo* y_mem = NULL;
      int differs = 1;
      expect_ok(k.api->GetTensorMemoryInfo(y, &y_mem), "y memory");
      expect_ok(k.api->CompareMemoryInfo(y_mem, dev_mem, &differs), "compare");
      if (differs == 0) {
        OrtValue* yh = NULL;
        expect_ok(k.api->CreateTensorWithDataAsOrtValue(host, got.data, got.count * sizeof(float), got.dims,
                                                        got.rank, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &yh),
                  "host output");
        const OrtValue* s2[] = {y};
        OrtValue* d2[] = {yh};
        expect_ok(k.api->CopyTensors(k.env, s2, d2, NULL, 1), "download");
        k.api->ReleaseValue(yh);
      } else {
        const float* p = NULL;
        expect_ok(k.api->GetTensorData(y, (const void**)&p), "y data");
        memcpy(got.data, p, got.count * sizeof(float));
      }
      ortkit_tensor* want = NULL;
      size_t n_want = 0;
      expect_ok(ortkit_run(&k, cpu, NULL, &in, 1, &want, &n_want), "cpu");
      compare_with_cpu("32x32, input on the device, under the limit", &got, 1, want, n_want);
      ortkit_tensors_free(want, n_want);
      k.api->ReleaseValue(y);
      free(got.data);
    }
    k.api->ReleaseValue(x);
    k.api->ReleaseValue(h);
    free(in.data);
  }
  k.api->ReleaseMemoryInfo(host);
  expect_ok(k.api->ReleaseSharedAllocator(k.env, device, OrtDeviceMemoryType_DEFAULT), "release allocator");
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

static void test_memory_limit_bad_values_are_named(void** state) {
  (void)state;
  static const char* const bad[] = {"-5", "abc", "", "12abc", " 5", "+5", "0x10", "1e6", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    OrtSession* s = NULL;
    OrtStatus* st = session_with_limit("add_relu", bad[i], &s);
    if (!st) fail_msg("device_memory_limit = '%s' was accepted", bad[i]);
    const char* msg = k.api->GetErrorMessage(st);
    char want[160];
    snprintf(want, sizeof want, "option 'device_memory_limit' = '%s' is not a byte count", bad[i]);
    if (!strstr(msg, want)) fail_msg("device_memory_limit = '%s': message '%s' lacks \"%s\"", bad[i], msg, want);
    if (i < 3) printf("# device_memory_limit = '%s': %s\n", bad[i], msg);
    k.api->ReleaseStatus(st);
    assert_null(s);
  }
  /* the same through a session config entry, as Python users may set it */
  OrtSessionOptions* so = NULL;
  expect_ok(k.api->CreateSessionOptions(&so), "options");
  expect_ok(k.api->AddSessionConfigEntry(so, "ep.gfxep.device_memory_limit", "-5"), "config entry");
  expect_ok(k.api->SessionOptionsAppendExecutionProvider_V2(so, k.env, &device, 1, NULL, NULL, 0), "append");
  OrtSession* s = NULL;
  OrtStatus* st = k.api->CreateSession(k.env, ortkit_ort_path(model_path("add_relu")), so, &s);
  assert_non_null(st);
  assert_non_null(strstr(k.api->GetErrorMessage(st), "'device_memory_limit' = '-5' is not a byte count"));
  k.api->ReleaseStatus(st);
  k.api->ReleaseSessionOptions(so);
  /* good values: 0 (no limit) and a plain byte count */
  static const char* const good[] = {"0", "1048576", "18446744073709551615"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    s = NULL;
    expect_ok(session_with_limit("add_relu", good[i], &s), good[i]);
    ortkit_tensor* in = NULL;
    ortkit_tensor* out = NULL;
    size_t n_in = 0, n_out = 0;
    expect_ok(ortkit_random_inputs(&k, s, 3, 1, &in, &n_in), "inputs");
    expect_ok(ortkit_run(&k, s, NULL, in, n_in, &out, &n_out), "run with a valid limit");
    ortkit_tensors_free(in, n_in);
    ortkit_tensors_free(out, n_out);
    k.api->ReleaseSession(s);
  }
}

/* ---- terminate ---- */

static void test_terminate_then_unset(void** state) {
  (void)state;
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), device, NULL, NULL, 0, &s), "session");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  OrtRunOptions* ro = NULL;
  expect_ok(k.api->CreateRunOptions(&ro), "run options");
  ortkit_tensor in = conv_input(24, 5);
  ortkit_tensor *out = NULL, *want = NULL;
  size_t n_out = 0, n_want = 0;
  expect_ok(ortkit_run(&k, cpu, NULL, &in, 1, &want, &n_want), "cpu");
  expect_ok(ortkit_run(&k, s, ro, &in, 1, &out, &n_out), "before terminate");
  compare_with_cpu("before terminate", out, n_out, want, n_want);
  ortkit_tensors_free(out, n_out);
  for (int round = 0; round < 3; round++) {
    expect_ok(k.api->RunOptionsSetTerminate(ro), "set terminate");
    out = NULL;
    OrtStatus* st = ortkit_run(&k, s, ro, &in, 1, &out, &n_out);
    if (!st) fail_msg("round %d: Run with the terminate flag set succeeded", round);
    if (round == 0) printf("# terminated run: code %d: %s\n", (int)k.api->GetErrorCode(st), k.api->GetErrorMessage(st));
    k.api->ReleaseStatus(st);
    assert_null(out);
    /* other run options are unaffected meanwhile */
    expect_ok(ortkit_run(&k, s, NULL, &in, 1, &out, &n_out), "another run while terminate is set");
    compare_with_cpu("other run options while terminated", out, n_out, want, n_want);
    ortkit_tensors_free(out, n_out);
    expect_ok(k.api->RunOptionsUnsetTerminate(ro), "unset terminate");
    expect_ok(ortkit_run(&k, s, ro, &in, 1, &out, &n_out), "after unset");
    compare_with_cpu("after RunOptionsUnsetTerminate", out, n_out, want, n_want);
    ortkit_tensors_free(out, n_out);
  }
  ortkit_tensors_free(want, n_want);
  free(in.data);
  k.api->ReleaseRunOptions(ro);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

/* ---- what gfxep does not take stays with ORT ---- */

static void test_unsupported_nodes_stay_on_cpu(void** state) {
  (void)state;
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("unsupported"), device, NULL, NULL, 0, &s), "session");
  expect_ok(ortkit_session(&k, model_path("unsupported"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  size_t on_gfxep = 0, on_other = 0;
  expect_ok(ortkit_placement(&k, s, &on_gfxep, &on_other, 1), "placement");
  assert_int_equal(on_gfxep, 1);
  assert_int_equal(on_other, 2);
  /* node by node: the Shrink and the Hardmax on ORT's CPU EP, only the Relu on gfxep */
  const OrtEpAssignedSubgraph* const* sub = NULL;
  size_t n_sub = 0;
  expect_ok(k.api->Session_GetEpGraphAssignmentInfo(s, &sub, &n_sub), "assignment info");
  int shrink_cpu = 0, hardmax_cpu = 0, relu_gfxep = 0, seen = 0;
  for (size_t i = 0; i < n_sub; i++) {
    const char* ep = NULL;
    const OrtEpAssignedNode* const* nodes = NULL;
    size_t nn = 0;
    expect_ok(k.api->EpAssignedSubgraph_GetEpName(sub[i], &ep), "ep name");
    expect_ok(k.api->EpAssignedSubgraph_GetNodes(sub[i], &nodes, &nn), "nodes");
    for (size_t j = 0; j < nn; j++) {
      const char* op = NULL;
      expect_ok(k.api->EpAssignedNode_GetOperatorType(nodes[j], &op), "op");
      int on_cpu = strcmp(ep, "CPUExecutionProvider") == 0;
      if (strcmp(op, "Shrink") == 0) shrink_cpu += on_cpu;
      if (strcmp(op, "Hardmax") == 0) hardmax_cpu += on_cpu;
      if (strcmp(op, "Relu") == 0) relu_gfxep += strcmp(ep, "gfxep") == 0;
      seen++;
    }
  }
  assert_int_equal(seen, 3);
  assert_int_equal(shrink_cpu, 1);
  assert_int_equal(hardmax_cpu, 1);
  assert_int_equal(relu_gfxep, 1);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
    size_t n_in = 0, n_a = 0, n_b = 0;
    expect_ok(ortkit_random_inputs(&k, s, seed, 1, &in, &n_in), "inputs");
    expect_ok(ortkit_run(&k, s, NULL, in, n_in, &a, &n_a), "run on gfxep + CPU");
    expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &b, &n_b), "run on the CPU EP");
    compare_with_cpu("unsupported.onnx", a, n_a, b, n_b);
    ortkit_tensors_free(in, n_in);
    ortkit_tensors_free(a, n_a);
    ortkit_tensors_free(b, n_b);
  }
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

int main(void) {
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  char err[512];
  if (ortkit_open_logged(&k, NULL, ORT_LOGGING_LEVEL_WARNING, on_log, NULL, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("# ONNX Runtime %s from %s, gfxep backend %s\n", k.version, k.lib_path, backend);
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s) {
    fprintf(stderr, "register: %s\n", k.api->GetErrorMessage(s));
    k.api->ReleaseStatus(s);
    ortkit_close(&k);
    return 1;
  }
  int rc;
  if (ortkit_find_devices(&k, backend, &device, 1) != 1) {
    printf("# gfxep offers no %s device%s\n", backend, strcmp(backend, "cuda") == 0 ? ": skipped" : "");
    rc = strcmp(backend, "cuda") == 0 ? 77 : 1;
  } else {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_limit_host_inputs),
        cmocka_unit_test(test_memory_limit_output_on_device),
        cmocka_unit_test(test_memory_limit_bad_values_are_named),
        cmocka_unit_test(test_terminate_then_unset),
        cmocka_unit_test(test_unsupported_nodes_stay_on_cpu),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
  }
  s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return rc;
}
