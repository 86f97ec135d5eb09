/* gfxep — what an engine reads around each frame, through a stock ONNX Runtime:
 *  - the per-frame GPU timings of include/gfxep.h: one complete frame per Run, in order, named by
 *    session and run tag, with device times that add up; reading never returns a frame twice and a
 *    filter by session name works (their host cost is measured by gfxep-bench --frame-timings, A/B);
 *  - the options that go with them (session_name, frame_timings, wait_timeout_ms): bad values fail
 *    session creation with a message naming the option and the value;
 *  - device loss by fault injection (GFXEP_INJECT_DEVICE_LOSS_AT_RUN): the Run it happens in and every
 *    later Run fail with a status that says the device was lost; the session is released cleanly;
 *    once none is left, a new session brings the device back and matches ORT's CPU EP.
 *
 * GFXEP_TEST_BACKEND selects the gfxep device: "reference" (default), "vulkan" (lavapipe in CI) or
 * "cuda" (GPU machine: the loss is a real trap in a kernel); exits 77 when gfxep offers no such
 * device (vulkan, cuda). The watchdog on a never-signalled semaphore is tested where semaphores can be
 * imported (test_interop_vulkan, GPU).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../include/gfxep.h"
#include "ortkit.h"

#ifndef GFXEP_MODELS_DIR
#define GFXEP_MODELS_DIR "models"
#endif

#define ATOL_F32 1e-5
#define RTOL_F32 1e-4

static ortkit k;
static const char* backend;
static const OrtEpDevice* device;
static gfxep_read_frame_timings_fn read_frames;

static const char* registration(void) {
  return strcmp(backend, "cuda") == 0 ? "gfxep" : strcmp(backend, "vulkan") == 0 ? "gfxep.vulkan" : "gfxep.reference";
}

static const char* model_path(const char* name) {
  static char buf[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(buf, sizeof buf, "%s/%s.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR, name);
  return buf;
}

static void expect_ok(OrtStatus* s, const char* what) {
  if (s) fail_msg("%s: %s", what, k.api->GetErrorMessage(s));
}

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

static OrtSession* session(const char* name, const char* timings) {
  const char* keys[] = {"session_name", "frame_timings"};
  const char* values[] = {name, timings};
  OrtSession* s = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), device, keys, values, 2, &s), "session");
  return s;
}

/* Runs once with a run tag; outputs are compared by the callers that care. */
static OrtStatus* run_tagged(OrtSession* s, const ortkit_tensor* in, const char* tag, ortkit_tensor** out, size_t* n) {
  OrtRunOptions* ro = NULL;
  expect_ok(k.api->CreateRunOptions(&ro), "CreateRunOptions");
  expect_ok(k.api->RunOptionsSetRunTag(ro, tag), "RunOptionsSetRunTag");
  OrtStatus* st = ortkit_run(&k, s, ro, in, 1, out, n);
  k.api->ReleaseRunOptions(ro);
  return st;
}

/* The newest frame number of any session, so a test reads only its own frames. */
static uint64_t newest_frame(void) {
  gfxep_frame_timing f[256];
  int n = read_frames(NULL, 0, f, 256);
  assert_true(n >= 0);
  return n ? f[n - 1].frame : 0;
}

/* ---- per-frame timings ---- */

static void test_one_complete_frame_per_run(void** state) {
  (void)state;
  uint64_t before = newest_frame();
  OrtSession* s = session("frames-a", "1");
  ortkit_tensor in = conv_input(32, 7);
  enum { RUNS = 5 };
  for (int r = 0; r < RUNS; r++) {
    char tag[32];
    snprintf(tag, sizeof tag, "tag-%d", r);
    ortkit_tensor* out = NULL;
    size_t n_out = 0;
    expect_ok(run_tagged(s, &in, tag, &out, &n_out), "run");
    ortkit_tensors_free(out, n_out);
  }
  /* the outputs came back to the host, so the GPU is past every stamp: all frames are complete */
  gfxep_frame_timing f[16];
  int n = read_frames("frames-a", before, f, 16);
  printf("# %d frames of session 'frames-a'\n", n);
  assert_int_equal(n, RUNS);
  int self_stamped = 0;
  for (int i = 0; i < n; i++) {
    char tag[32];
    snprintf(tag, sizeof tag, "tag-%d", i);
    printf("#   frame %llu run %llu '%s' on %s: flags 0x%x, gpu run %.1f us, total %.1f us, host %.1f us\n",
           (unsigned long long)f[i].frame, (unsigned long long)f[i].run, f[i].run_tag, f[i].device, f[i].flags,
           f[i].gpu_run_us, f[i].gpu_total_us, f[i].host_run_us);
    assert_int_equal(f[i].version, GFXEP_FRAME_TIMING_VERSION);
    assert_true(f[i].flags & GFXEP_FRAME_COMPLETE);
    assert_true(f[i].flags & GFXEP_FRAME_HAS_RUN);
    assert_false(f[i].flags & GFXEP_FRAME_WAIT_TIMED_OUT);
    assert_string_equal(f[i].session_name, "frames-a");
    assert_string_equal(f[i].run_tag, tag);
    assert_int_equal(f[i].run, (uint64_t)(i + 1));
    assert_int_equal(f[i].n_waits, 0);
    assert_int_equal(f[i].n_signals, 0);
    if (i) assert_true(f[i].frame > f[i - 1].frame);
    assert_true(f[i].session_id == f[0].session_id && f[i].session_id != 0);
    /* a convolution net takes device time; nothing else is in the frame */
    assert_true(f[i].gpu_run_us > 0);
    assert_true(f[i].gpu_total_us >= f[i].gpu_run_us - 1e-3);
    assert_true(f[i].gpu_wait_us == 0 && f[i].gpu_signal_us == 0);
    assert_true(f[i].host_run_us > 0);
    assert_true(f[i].host_queued_ns > 0);
    assert_non_null(strstr(f[i].device, backend));
    if (f[i].flags & GFXEP_FRAME_RUN_SELF_STAMPED) self_stamped++;
  }
  /* CUDA and Vulkan replay the recorded partition from the second Run with these addresses on, and
   * the recording stamps itself; the reference backend records nothing and stamps every Run */
  printf("# %d of %d frames stamped by their replayed graph\n", self_stamped, n);
  if (strcmp(backend, "reference") != 0) assert_true(self_stamped >= 1);
  else assert_int_equal(self_stamped, 0);
  /* read past the last one: nothing new; another session's name: nothing */
  assert_int_equal(read_frames("frames-a", f[n - 1].frame, f, 16), 0);
  assert_int_equal(read_frames("no-such-session", before, f, 16), 0);
  /* capacity bounds the copy, oldest first */
  gfxep_frame_timing two[2];
  assert_int_equal(read_frames("frames-a", before, two, 2), 2);
  assert_int_equal(two[0].run, 1);
  assert_int_equal(read_frames("frames-a", before, NULL, 0), 0);
  assert_int_equal(read_frames("frames-a", before, NULL, 4), -1);
  free(in.data);
  k.api->ReleaseSession(s);
}

static void test_frame_timings_off(void** state) {
  (void)state;
  uint64_t before = newest_frame();
  OrtSession* s = session("frames-off", "0");
  ortkit_tensor in = conv_input(16, 3);
  for (int r = 0; r < 3; r++) {
    ortkit_tensor* out = NULL;
    size_t n_out = 0;
    expect_ok(ortkit_run(&k, s, NULL, &in, 1, &out, &n_out), "run");
    ortkit_tensors_free(out, n_out);
  }
  gfxep_frame_timing f[8];
  assert_int_equal(read_frames("frames-off", before, f, 8), 0);
  free(in.data);
  k.api->ReleaseSession(s);
}

/* ---- options ---- */

static void expect_refused(const char* key, const char* value, const char* needle) {
  const char* keys[] = {key};
  const char* values[] = {value};
  OrtSession* s = NULL;
  OrtStatus* st = ortkit_session(&k, model_path("conv_net"), device, keys, values, 1, &s);
  if (!st) {
    k.api->ReleaseSession(s);
    fail_msg("%s = '%s' was accepted", key, value);
  }
  const char* msg = k.api->GetErrorMessage(st);
  printf("# %s = '%s': %s\n", key, value, msg);
  assert_non_null(strstr(msg, key));
  assert_non_null(strstr(msg, needle));
  k.api->ReleaseStatus(st);
}

static void test_bad_options_are_named(void** state) {
  (void)state;
  expect_refused("wait_timeout_ms", "soon", "'soon'");
  expect_refused("wait_timeout_ms", "-1", "'-1'");
  expect_refused("wait_timeout_ms", "86400001", "86400001");
  expect_refused("frame_timings", "yes", "'yes'");
  expect_refused("session_name", "0123456789012345678901234567890123456789012345678901234567890123456789", "longer");
}

/* ---- device loss ---- */

static void test_device_loss_injected(void** state) {
  (void)state;
  ortkit_setenv("GFXEP_INJECT_DEVICE_LOSS_AT_RUN", "3");
  OrtSession* s = session("loss", "1");
  ortkit_setenv("GFXEP_INJECT_DEVICE_LOSS_AT_RUN", "");
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  ortkit_tensor in = conv_input(32, 11);
  for (int r = 1; r <= 5; r++) {
    ortkit_tensor* out = NULL;
    size_t n_out = 0;
    OrtStatus* st = ortkit_run(&k, s, NULL, &in, 1, &out, &n_out);
    if (r < 3) {
      expect_ok(st, "run before the fault");
      ortkit_tensors_free(out, n_out);
      continue;
    }
    if (!st) fail_msg("run %d after the injected loss succeeded", r);
    const char* msg = k.api->GetErrorMessage(st);
    printf("# run %d: %s\n", r, msg);
    assert_true(strstr(msg, "device 0 is lost") || strstr(msg, "device 0 was lost"));
    if (r > 3) assert_non_null(strstr(msg, "was lost")); /* refused at once, with the first report */
    k.api->ReleaseStatus(st);
  }
  k.api->ReleaseSession(s); /* must return: nothing waits on the dead device */
  /* with no session left on it, a new session brings the device back; on CUDA the driver may refuse a
   * new context for the rest of the process after a fault in a kernel (the H200's does): the session is
   * then refused with a status that says so, at once on every later try */
  OrtSession* again = NULL;
  const char* keys[] = {"session_name"};
  const char* values[] = {"after-loss"};
  for (int attempt = 0; attempt < 2; attempt++) {
    OrtStatus* st = ortkit_session(&k, model_path("conv_net"), device, keys, values, 1, &again);
    if (!st) break;
    const char* msg = k.api->GetErrorMessage(st);
    printf("# new session after the loss (attempt %d): %s\n", attempt + 1, msg);
    if (strcmp(backend, "cuda") != 0 || !strstr(msg, "restart the process")) fail_msg("no recovery: %s", msg);
    k.api->ReleaseStatus(st);
  }
  if (!again) {
    printf("# NOTE: the CUDA device stays lost in this process (the driver refuses a new context)\n");
    free(in.data);
    k.api->ReleaseSession(cpu);
    return;
  }
  ortkit_tensor *got = NULL, *want = NULL;
  size_t n_got = 0, n_want = 0;
  expect_ok(ortkit_run(&k, again, NULL, &in, 1, &got, &n_got), "run on the recovered device");
  expect_ok(ortkit_run(&k, cpu, NULL, &in, 1, &want, &n_want), "cpu");
  assert_int_equal(n_got, n_want);
  ortkit_diff d;
  int bad = ortkit_compare(got, want, n_got, ATOL_F32, RTOL_F32, &d);
  printf("# after recovery: max abs %.3g against the CPU EP\n", d.max_abs);
  assert_int_equal(bad, 0);
  ortkit_tensors_free(got, n_got);
  ortkit_tensors_free(want, n_want);
  free(in.data);
  k.api->ReleaseSession(again);
  k.api->ReleaseSession(cpu);
}

int main(void) {
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("# ONNX Runtime %s, gfxep backend %s\n", k.version, backend);
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s) {
    fprintf(stderr, "register: %s\n", k.api->GetErrorMessage(s));
    k.api->ReleaseStatus(s);
    ortkit_close(&k);
    return 1;
  }
  /* the library ORT loaded: the reader is one of its exports */
  read_frames = (gfxep_read_frame_timings_fn)ortkit_plugin_symbol(GFXEP_READ_FRAME_TIMINGS);
  int rc;
  if (!read_frames) {
    fprintf(stderr, "%s: no %s export\n", ortkit_plugin_path_text(), GFXEP_READ_FRAME_TIMINGS);
    rc = 1;
  } else if (ortkit_find_devices(&k, backend, &device, 1) != 1) {
    int optional = strcmp(backend, "reference") != 0;
    printf("# gfxep offers no %s device%s\n", backend, optional ? ": skipped" : "");
    rc = optional ? 77 : 1;
  } else {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_complete_frame_per_run),
        cmocka_unit_test(test_frame_timings_off),
        cmocka_unit_test(test_bad_options_are_named),
        cmocka_unit_test(test_device_loss_injected),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
  }
  s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return rc;
}
