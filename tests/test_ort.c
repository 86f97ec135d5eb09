/* gfxep — ORT-level tests: the plugin as a user meets it, through a stock ONNX Runtime loaded at run
 * time (GFXEP_ORT_LIB picks 1.29 or 1.30). Every model is compared with ORT's own CPU EP.
 *
 * GFXEP_TEST_BACKEND selects the gfxep device: "reference" (default; CI) or "cuda" (GPU machine).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortkit.h"

#ifndef GFXEP_MODELS_DIR
#define GFXEP_MODELS_DIR "models"
#endif

/* fp32 tolerances against ORT's CPU EP: summation order differs (and cuDNN picks its own algorithms),
 * so allow a few ulps of accumulated rounding relative to the magnitude of the values. */
#define ATOL_F32 1e-5
#define RTOL_F32 1e-4

static ortkit k;
static const char* backend;

static const char* registration(void) { return strcmp(backend, "reference") == 0 ? "gfxep.reference" : "gfxep"; }

static char* model_path(const char* name) {
  static char buf[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(buf, sizeof buf, "%s/%s.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR, name);
  return buf;
}

static void expect_ok(OrtStatus* s, const char* what) {
  if (s) {
    fail_msg("%s: %s", what, k.api->GetErrorMessage(s));
  }
}

/* Expects an error whose message contains `needle`. */
static void expect_error(OrtStatus* s, const char* needle) {
  assert_non_null(s);
  const char* msg = k.api->GetErrorMessage(s);
  if (!strstr(msg, needle)) fail_msg("error '%s' does not mention '%s'", msg, needle);
  k.api->ReleaseStatus(s);
}

static const OrtEpDevice* the_device(void) {
  const OrtEpDevice* d[8];
  size_t n = ortkit_find_devices(&k, backend, d, 8);
  if (n == 0) fail_msg("gfxep offers no %s device", backend);
  return d[0];
}

static int setup(void** state) {
  (void)state;
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  printf("# ONNX Runtime %s from %s, gfxep backend %s\n", k.version, k.lib_path, backend);
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s) {
    fprintf(stderr, "register: %s\n", k.api->GetErrorMessage(s));
    k.api->ReleaseStatus(s);
    return -1;
  }
  return 0;
}

static int teardown(void** state) {
  (void)state;
  OrtStatus* s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return 0;
}

/* ---- devices ---- */

static void test_device_is_listed_with_metadata(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  assert_string_equal(k.api->EpDevice_EpName(d), "gfxep");
  assert_string_equal(k.api->EpDevice_EpVendor(d), "gfxep");
  assert_string_equal(ortkit_device_meta(&k, d, "gfxep.backend"), backend);
  assert_non_null(ortkit_device_meta(&k, d, "gfxep.device_name"));
  const OrtHardwareDevice* hw = k.api->EpDevice_Device(d);
  if (strcmp(backend, "cuda") == 0) {
    assert_int_equal(k.api->HardwareDevice_Type(hw), OrtHardwareDeviceType_GPU);
    assert_int_equal(k.api->HardwareDevice_VendorId(hw), 0x10DE);
    const char* uuid = ortkit_device_meta(&k, d, "gfxep.device_uuid");
    assert_non_null(uuid);
    assert_int_equal(strlen(uuid), 32);
    assert_non_null(ortkit_device_meta(&k, d, "gfxep.pci_bus_id"));
  } else {
    /* the reference backend says what it is, and sits on the CPU */
    assert_int_equal(k.api->HardwareDevice_Type(hw), OrtHardwareDeviceType_CPU);
    assert_non_null(strstr(ortkit_device_meta(&k, d, "gfxep.note"), "test oracle"));
  }
  const OrtMemoryInfo* mem = k.api->EpDevice_MemoryInfo(d, OrtDeviceMemoryType_DEFAULT);
  assert_non_null(mem);
  const OrtMemoryInfo* pinned = k.api->EpDevice_MemoryInfo(d, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  assert_non_null(pinned);
}

/* The reference device is offered only to a registration that asks for it, so it can never be
 * picked by surprise over ORT's CPU EP. */
static void test_reference_only_when_asked(void** state) {
  (void)state;
  if (strcmp(backend, "reference") != 0) skip();
  expect_ok(k.api->RegisterExecutionProviderLibrary(k.env, "gfxep_plain", ortkit_plugin_path()), "register plain");
  const OrtEpDevice* const* all = NULL;
  size_t n = 0, refs = 0;
  expect_ok(k.api->GetEpDevices(k.env, &all, &n), "GetEpDevices");
  for (size_t i = 0; i < n; i++) {
    const char* b = ortkit_device_meta(&k, all[i], "gfxep.backend");
    if (b && strcmp(b, "reference") == 0) refs++;
  }
  assert_int_equal(refs, 1); /* the one from "gfxep.reference", none from "gfxep_plain" */
  expect_ok(k.api->UnregisterExecutionProviderLibrary(k.env, "gfxep_plain"), "unregister plain");
}

static void test_unregister_and_register_again(void** state) {
  (void)state;
  for (int round = 0; round < 3; round++) {
    expect_ok(k.api->UnregisterExecutionProviderLibrary(k.env, registration()), "unregister");
    const OrtEpDevice* d[8];
    assert_int_equal(ortkit_find_devices(&k, backend, d, 8), 0);
    expect_ok(k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path()), "register");
    assert_int_equal(ortkit_find_devices(&k, backend, d, 8), 1);
  }
  /* a session works after the cycles */
  OrtSession* s = NULL;
  expect_ok(ortkit_session(&k, model_path("add_relu"), the_device(), NULL, NULL, 0, &s), "session");
  k.api->ReleaseSession(s);
}

/* ---- models against ORT's CPU EP ---- */

typedef struct model_case {
  const char* name;
  int64_t dyn;          /* value for dynamic dims */
  size_t on_gfxep;      /* nodes gfxep must take */
  size_t on_other;      /* nodes that must stay with ORT */
} model_case;

static void check_model(const model_case* c, const char* const* keys, const char* const* values, size_t n_opts) {
  OrtSession *ep = NULL, *cpu = NULL;
  ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
  size_t n_in = 0, n_a = 0, n_b = 0;
  expect_ok(ortkit_session(&k, model_path(c->name), the_device(), keys, values, n_opts, &ep), c->name);
  expect_ok(ortkit_session(&k, model_path(c->name), NULL, NULL, NULL, 0, &cpu), c->name);
  size_t on_gfxep = 0, on_other = 0;
  expect_ok(ortkit_placement(&k, ep, &on_gfxep, &on_other, 0), "placement");
  if (on_gfxep != c->on_gfxep || on_other != c->on_other)
    fail_msg("%s: %zu nodes on gfxep and %zu elsewhere; expected %zu and %zu", c->name, on_gfxep, on_other,
             c->on_gfxep, c->on_other);
  expect_ok(ortkit_random_inputs(&k, ep, 7, c->dyn, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, ep, NULL, in, n_in, &a, &n_a), "run on gfxep");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &b, &n_b), "run on the CPU EP");
  assert_int_equal(n_a, n_b);
  ortkit_diff d;
  int bad = ortkit_compare(a, b, n_a, ATOL_F32, RTOL_F32, &d);
  printf("# %-14s dyn=%-3lld gfxep %zu / other %zu nodes, max abs %.3g, max rel %.3g\n", c->name, (long long)c->dyn,
         on_gfxep, on_other, d.max_abs, d.max_rel);
  if (bad) fail_msg("%s: %zu elements differ from the CPU EP (max abs %g)", c->name, d.mismatched, d.max_abs);
  /* a second run reuses the compiled shape instance and workspace: same answer */
  ortkit_tensor* a2 = NULL;
  size_t n_a2 = 0;
  expect_ok(ortkit_run(&k, ep, NULL, in, n_in, &a2, &n_a2), "second run on gfxep");
  assert_int_equal(ortkit_compare(a2, a, n_a, 0, 0, &d), 0);
  ortkit_tensors_free(a2, n_a2);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(a, n_a);
  ortkit_tensors_free(b, n_b);
  k.api->ReleaseSession(ep);
  k.api->ReleaseSession(cpu);
}

static void test_models_match_cpu_ep(void** state) {
  (void)state;
  static const model_case cases[] = {
      {"add_relu", 1, 2, 0},
      /* ORT folds the constant Mul into conv2's weights before partitioning */
      {"conv_net", 17, 8, 0},
      {"conv_net", 32, 8, 0}, /* a second input shape on the same model */
      {"matmul", 1, 4, 0},
      {"partial", 1, 5, 1},
      {"unsupported", 1, 1, 2},
      {"many_inputs", 1, 2, 1},
      {"wide_concat", 1, 3, 0},
      {"denoise_small", 1, 6, 0},
      /* InstanceNormalization with Add, Relu and reflect Pads fused in on the CUDA and reference backends */
      {"norm_pad_net", 1, 11, 0},
      /* NonZero, TopK with a computed k and NonMaxSuppression: one partition in stages */
      {"detect_post", 1, 16, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_model(&cases[i], NULL, NULL, 0);
}

/* A partition whose shapes depend on data (detect_post: each Run's counts differ), Run after Run in
 * one session: every Run must be resolved for its own counts, whatever the earlier Runs were, with the
 * first stage replayed from a recorded graph on a backend that records (the later stages never are),
 * and with graphs off. */
static void test_data_dependent_shapes_across_runs(void** state) {
  (void)state;
  const char* keys[] = {"cuda_graph"};
  const char* modes[] = {"1", "0"};
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("detect_post"), NULL, NULL, NULL, 0, &cpu), "CPU EP session");
  for (int mode = 0; mode < 2; mode++) {
    OrtSession* ep = NULL;
    expect_ok(ortkit_session(&k, model_path("detect_post"), the_device(), keys, &modes[mode], 1, &ep), "session");
    int64_t last_count = -1, changes = 0;
    for (int run = 0; run < 12; run++) {
      ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
      size_t n_in = 0, n_a = 0, n_b = 0;
      /* a seed per run, each twice in a row (the second of a pair may replay the first's graph) */
      expect_ok(ortkit_random_inputs(&k, ep, 500 + (uint64_t)run / 2, 1, &in, &n_in), "inputs");
      expect_ok(ortkit_run(&k, ep, NULL, in, n_in, &a, &n_a), "run on gfxep");
      expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &b, &n_b), "run on the CPU EP");
      ortkit_diff d;
      if (ortkit_compare(a, b, n_a, ATOL_F32, RTOL_F32, &d))
        fail_msg("detect_post run %d (cuda_graph=%s): %zu elements differ from the CPU EP", run, modes[mode],
                 d.mismatched);
      /* outputs: probs, top_scores [k], boxes [n, 4] */
      if (n_a == 3 && (int64_t)a[2].dims[0] != last_count) changes++, last_count = (int64_t)a[2].dims[0];
      ortkit_tensors_free(in, n_in);
      ortkit_tensors_free(a, n_a);
      ortkit_tensors_free(b, n_b);
    }
    if (changes < 2) fail_msg("detect_post: the kept box count changed %lld times in 12 runs", (long long)changes);
    k.api->ReleaseSession(ep);
  }
  /* nothing above the threshold: every count 0, empty outputs, the same as the CPU EP; in float32 and
   * with precision=fp16 behind its range guard (whose probes then watch empty tensors) */
  const char* pkeys[] = {"precision"};
  const char* pvalues[] = {"fp32", "fp16"};
  for (int mode = 0; mode < 2; mode++) {
    OrtSession* ep = NULL;
    expect_ok(ortkit_session(&k, model_path("detect_post"), the_device(), pkeys, &pvalues[mode], 1, &ep), "session");
    for (int run = 0; run < 4; run++) {
      ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
      size_t n_in = 0, n_a = 0, n_b = 0;
      expect_ok(ortkit_random_inputs(&k, ep, 900, 1, &in, &n_in), "inputs");
      for (size_t e = 0; e < in[0].count; e++) in[0].data[e] = -5.0f;
      expect_ok(ortkit_run(&k, ep, NULL, in, n_in, &a, &n_a), "run on gfxep");
      expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &b, &n_b), "run on the CPU EP");
      assert_int_equal(n_a, 3);
      assert_true(a[1].count == 0 && a[2].count == 0 && a[2].rank == 2 && a[2].dims[1] == 4);
      ortkit_diff d;
      /* float16 rounds the probabilities; the empty outputs are what this checks */
      if (ortkit_compare(a, b, n_a, mode ? 1e-3 : ATOL_F32, mode ? 1e-2 : RTOL_F32, &d))
        fail_msg("detect_post with nothing above the threshold (precision=%s): %zu elements differ", pvalues[mode],
                 d.mismatched);
      ortkit_tensors_free(in, n_in);
      ortkit_tensors_free(a, n_a);
      ortkit_tensors_free(b, n_b);
    }
    k.api->ReleaseSession(ep);
  }
  k.api->ReleaseSession(cpu);
}

/* One session, inputs of changing shape: each signature is compiled once and cached. */
static void test_dynamic_shapes_in_one_session(void** state) {
  (void)state;
  OrtSession *ep = NULL, *cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), NULL, NULL, 0, &ep), "session");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "session");
  const int64_t sizes[] = {9, 24, 9, 40, 24};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
    size_t n_in = 0, n_a = 0, n_b = 0;
    expect_ok(ortkit_random_inputs(&k, ep, 100 + i, sizes[i], &in, &n_in), "inputs");
    expect_ok(ortkit_run(&k, ep, NULL, in, n_in, &a, &n_a), "gfxep");
    expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &b, &n_b), "cpu");
    ortkit_diff d;
    assert_int_equal(ortkit_compare(a, b, n_a, ATOL_F32, RTOL_F32, &d), 0);
    ortkit_tensors_free(in, n_in);
    ortkit_tensors_free(a, n_a);
    ortkit_tensors_free(b, n_b);
  }
  k.api->ReleaseSession(ep);
  k.api->ReleaseSession(cpu);
}

/* ---- options and bad input ---- */

static void test_valid_options(void** state) {
  (void)state;
  const char* keys[] = {"allocator", "log_partition"};
  const char* values[] = {"direct", "1"};
  model_case c = {"partial", 1, 5, 1};
  check_model(&c, keys, values, 2);
}

static void test_unknown_option_is_named(void** state) {
  (void)state;
  const char* keys[] = {"alocator"};
  const char* values[] = {"caching"};
  OrtSession* s = NULL;
  expect_error(ortkit_session(&k, model_path("add_relu"), the_device(), keys, values, 1, &s), "'alocator'");
  assert_null(s);
}

/* precision=fp16 computes a float32 model in float16 inside gfxep once its range guard has seen the
 * first Run (which is float32: it calibrates): from the second Run the result moves away from the
 * float32 one by float16 rounding (so the lowering happened), and stays within float16's bound;
 * precision=tf32 leaves the reference backend exact (TF32 is a CUDA math mode). */
static void test_precision_option(void** state) {
  (void)state;
  ortkit_tensor *in = NULL, *want = NULL, *half = NULL, *tf32 = NULL;
  size_t n_in = 0, n_want = 0, n_half = 0, n_tf32 = 0;
  OrtSession *cpu = NULL, *s16 = NULL, *s32 = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_random_inputs(&k, cpu, 17, 16, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  const char* keys[] = {"precision"};
  const char* fp16[] = {"fp16"};
  const char* tf[] = {"tf32"};
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, fp16, 1, &s16), "fp16 session");
  expect_ok(ortkit_run(&k, s16, NULL, in, n_in, &half, &n_half), "fp16 run 1");
  ortkit_diff d;
  if (ortkit_compare(half, want, n_want, ATOL_F32, RTOL_F32, &d))
    fail_msg("precision=fp16, first Run (float32 while the guard calibrates): max abs error %g", d.max_abs);
  ortkit_tensors_free(half, n_half);
  /* the probes are back by the next Run here: ortkit_run waited for its outputs */
  expect_ok(ortkit_run(&k, s16, NULL, in, n_in, &half, &n_half), "fp16 run 2");
  ortkit_compare(half, want, n_want, 0, 0, &d);
  if (!(d.max_abs > 1e-6 && d.max_abs < 2e-2)) fail_msg("precision=fp16: max abs error %g vs float32", d.max_abs);
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, tf, 1, &s32), "tf32 session");
  expect_ok(ortkit_run(&k, s32, NULL, in, n_in, &tf32, &n_tf32), "tf32 run");
  if (strcmp(backend, "reference") == 0) assert_int_equal(ortkit_compare(tf32, want, n_want, ATOL_F32, RTOL_F32, &d), 0);
  else assert_int_equal(ortkit_compare(tf32, want, n_want, 1e-2, 1e-2, &d), 0);
  const char* bad[] = {"fp8"};
  OrtSession* none = NULL;
  expect_error(ortkit_session(&k, model_path("conv_net"), the_device(), keys, bad, 1, &none), "'fp8'");
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  ortkit_tensors_free(half, n_half);
  ortkit_tensors_free(tf32, n_tf32);
  k.api->ReleaseSession(cpu);
  k.api->ReleaseSession(s16);
  k.api->ReleaseSession(s32);
}

/* layout=nhwc: ORT hands the Convs over channels-last; the outputs still agree with the CPU EP, alone
 * and with precision=fp16. A backend without channels-last convolutions (Vulkan) refuses the option
 * when the session is made, and a misspelt value is named. */
/* Runs session s on in (three times in float16: the third Run is the range guard's float16 model)
 * and compares its outputs with want, the CPU EP's. */
static void expect_layout_agrees(OrtSession* s, const ortkit_tensor* in, size_t n_in, const ortkit_tensor* want,
                                 size_t n_want, int half, const char* what) {
  ortkit_tensor* got = NULL;
  size_t n_got = 0;
  for (int run = 0; run < (half ? 3 : 1); run++) {
    ortkit_tensors_free(got, n_got);
    got = NULL;
    expect_ok(ortkit_run(&k, s, NULL, in, n_in, &got, &n_got), what);
  }
  ortkit_diff d;
  const int differs = ortkit_compare(got, want, n_want, half ? 2e-2 : ATOL_F32, half ? 2e-2 : RTOL_F32, &d);
  ortkit_tensors_free(got, n_got);
  if (differs) fail_msg("%s%s: max abs error %g", what, half ? " precision=fp16" : "", d.max_abs);
}

static void test_layout_option(void** state) {
  (void)state;
  ortkit_tensor *in = NULL, *want = NULL;
  size_t n_in = 0, n_want = 0;
  OrtSession *cpu = NULL, *nhwc = NULL, *none = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_random_inputs(&k, cpu, 23, 16, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  const char* keys[] = {"layout", "precision"};
  const char* nhwc_fp32[] = {"nhwc", "fp32"};
  const char* nhwc_fp16[] = {"nhwc", "fp16"};
  const char* bad[] = {"nhcw", "fp32"};
  if (strcmp(backend, "vulkan") == 0) {
    expect_error(ortkit_session(&k, model_path("conv_net"), the_device(), keys, nhwc_fp32, 2, &none),
                 "no channels-last convolution");
  } else {
    for (int half = 0; half < 2; half++) {
      expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, half ? nhwc_fp16 : nhwc_fp32, 2, &nhwc),
                "nhwc session");
      expect_layout_agrees(nhwc, in, n_in, want, n_want, half, "layout=nhwc");
      k.api->ReleaseSession(nhwc);
      nhwc = NULL;
    }
  }
  expect_error(ortkit_session(&k, model_path("conv_net"), the_device(), keys, bad, 2, &none), "'nhcw'");
  /* layout=auto: channels-last only for 16-bit arithmetic (conv_net: five 2-D Convs, one of two groups,
   * nothing between them that stays NCHW), and only where the backend has channels-last Convs; the
   * choice shows as ORT's Transposes on gfxep, and the result agrees either way */
  const char* nchw_fp32[] = {"nchw", "fp32"};
  const char* auto_fp32[] = {"auto", "fp32"};
  const char* auto_fp16[] = {"auto", "fp16"};
  size_t nchw_nodes = 0, other = 0;
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, nchw_fp32, 2, &nhwc), "nchw session");
  expect_ok(ortkit_placement(&k, nhwc, &nchw_nodes, &other, 0), "nchw placement");
  k.api->ReleaseSession(nhwc);
  nhwc = NULL;
  /* every Conv of conv_net must also run channels-last here, or auto keeps NCHW: the CUDA backend's
   * channels-last Convs take no asymmetric or SAME_* pads (conv_net has both), the reference's do */
  const int has_channels_last = strcmp(backend, "reference") == 0;
  for (int half = 0; half < 2; half++) {
    expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, half ? auto_fp16 : auto_fp32, 2, &nhwc),
              "auto session");
    size_t nodes = 0;
    expect_ok(ortkit_placement(&k, nhwc, &nodes, &other, 0), "auto placement");
    assert_int_equal(other, 0);
    if (half && has_channels_last) {
      if (nodes <= nchw_nodes) fail_msg("layout=auto precision=fp16: %zu nodes on gfxep, as many as NCHW's %zu: no "
                                        "Transposes, so not channels-last", nodes, nchw_nodes);
    } else {
      assert_int_equal(nodes, nchw_nodes);
    }
    expect_layout_agrees(nhwc, in, n_in, want, n_want, half, "layout=auto");
    k.api->ReleaseSession(nhwc);
    nhwc = NULL;
    /* auto is the default: the same placement with no layout key */
    const char* precision_only[] = {half ? "fp16" : "fp32"};
    size_t default_nodes = 0;
    expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys + 1, precision_only, 1, &nhwc),
              "default-layout session");
    expect_ok(ortkit_placement(&k, nhwc, &default_nodes, &other, 0), "default-layout placement");
    assert_int_equal(default_nodes, nodes);
    assert_int_equal(other, 0);
    expect_layout_agrees(nhwc, in, n_in, want, n_want, half, "default layout");
    k.api->ReleaseSession(nhwc);
    nhwc = NULL;
  }
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(cpu);
}

/* Channels-last pooling and Resize: with layout=nhwc ORT hands pool_net's MaxPool, AveragePool,
 * Resizes and global pools over channels-last as well as its Convs, so the Transposes that remain are
 * the graph's edges (one for the input, one per output: 4; each node left NCHW would add two), and
 * the outputs agree with the CPU EP in float32 and float16. layout=auto in float16 does the same
 * (five dense Convs, nothing left that stays NCHW). */
static double peak_of(const ortkit_tensor* t, size_t n);

static void test_layout_pooling(void** state) {
  (void)state;
  if (strcmp(backend, "vulkan") == 0) skip(); /* no channels-last kernels: test_layout_option checks the refusal */
  ortkit_tensor *in = NULL, *want = NULL;
  size_t n_in = 0, n_want = 0;
  OrtSession *cpu = NULL, *s = NULL;
  expect_ok(ortkit_session(&k, model_path("pool_net"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_random_inputs(&k, cpu, 29, 0, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  assert_true(peak_of(want, n_want) > 0.1);
  const char* keys[] = {"layout", "precision"};
  const char* configs[][2] = {{"nhwc", "fp32"}, {"nhwc", "fp16"}, {"auto", "fp16"}};
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    expect_ok(ortkit_session(&k, model_path("pool_net"), the_device(), keys, configs[c], 2, &s), "pool_net session");
    size_t nodes = 0, other = 0, transposes = 0;
    expect_ok(ortkit_placement(&k, s, &nodes, &other, 0), "placement");
    expect_ok(ortkit_count_on_gfxep(&k, s, "Transpose", &transposes), "Transposes");
    assert_int_equal(other, 0);
    if (transposes != 4)
      fail_msg("layout=%s precision=%s: %zu Transposes on gfxep; 4 (the graph's input and three outputs) when "
               "every pooling and Resize node is channels-last", configs[c][0], configs[c][1], transposes);
    char what[64];
    snprintf(what, sizeof what, "pool_net layout=%s", configs[c][0]);
    expect_layout_agrees(s, in, n_in, want, n_want, strcmp(configs[c][1], "fp16") == 0, what);
    k.api->ReleaseSession(s);
    s = NULL;
  }
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(cpu);
  /* pool_mixed: its 3-D MaxPool has no channels-last form, so ORT (which converts per op type) must
   * hand over neither MaxPool channels-last: the session still builds, both stay on gfxep, the 2-D
   * one between Transposes (the input's and output's, and two around it: 4 at least), and the
   * outputs agree */
  OrtSession *mixed_cpu = NULL, *mixed = NULL;
  expect_ok(ortkit_session(&k, model_path("pool_mixed"), NULL, NULL, NULL, 0, &mixed_cpu), "pool_mixed cpu");
  expect_ok(ortkit_random_inputs(&k, mixed_cpu, 31, 0, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, mixed_cpu, NULL, in, n_in, &want, &n_want), "pool_mixed cpu run");
  const char* nhwc_fp32[] = {"nhwc", "fp32"};
  expect_ok(ortkit_session(&k, model_path("pool_mixed"), the_device(), keys, nhwc_fp32, 2, &mixed), "pool_mixed");
  size_t nodes = 0, other = 0, pools = 0, transposes = 0;
  expect_ok(ortkit_placement(&k, mixed, &nodes, &other, 0), "placement");
  expect_ok(ortkit_count_on_gfxep(&k, mixed, "MaxPool", &pools), "MaxPools");
  expect_ok(ortkit_count_on_gfxep(&k, mixed, "Transpose", &transposes), "Transposes");
  assert_int_equal(other, 0);
  assert_int_equal(pools, 2);
  if (transposes < 4) fail_msg("pool_mixed layout=nhwc: %zu Transposes; the 2-D MaxPool should stay NCHW", transposes);
  expect_layout_agrees(mixed, in, n_in, want, n_want, 0, "pool_mixed layout=nhwc");
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(mixed);
  k.api->ReleaseSession(mixed_cpu);
}

/* Non-finite elements of the outputs. */
static size_t count_nonfinite(const ortkit_tensor* t, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t e = 0; e < t[i].count; e++) bad += !isfinite(t[i].data[e]);
  return bad;
}

/* The largest |x| over the outputs: a comparison against an output near zero would prove nothing. */
static double peak_of(const ortkit_tensor* t, size_t n) {
  double peak = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t e = 0; e < t[i].count; e++) peak = fmax(peak, fabs(t[i].data[e]));
  return peak;
}

/* Runs `runs` times and keeps the last Run's outputs. */
static void run_times(OrtSession* s, const ortkit_tensor* in, size_t n_in, int runs, ortkit_tensor** out,
                      size_t* n_out) {
  for (int r = 0; r < runs; r++) {
    if (r) ortkit_tensors_free(*out, *n_out);
    expect_ok(ortkit_run(&k, s, NULL, in, n_in, out, n_out), "run");
  }
}

/* fp16_overflow's middle activations reach about 1e6: lowered to float16 without the range guard
 * its output is NaN (so the model does overflow, and the check below can fail); with the guard
 * (the default) every Run is finite and within float16's rounding of ORT's float32 CPU EP, as the
 * nodes touching those values stay float32; precision=bf16 has float32's range and needs no guard. */
static void test_fp16_range_guard(void** state) {
  (void)state;
  ortkit_tensor *in = NULL, *want = NULL, *got = NULL;
  size_t n_in = 0, n_want = 0, n_got = 0;
  OrtSession *cpu = NULL, *s = NULL;
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_random_inputs(&k, cpu, 5, 24, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  const double peak = peak_of(want, n_want);
  assert_int_equal(count_nonfinite(want, n_want), 0);
  if (!(peak > 1.0)) fail_msg("fp16_overflow's float32 output peaks at %g: no signal to compare", peak);
  const char* keys[] = {"precision", "fp16_guard"};
  const char* unguarded[] = {"fp16", "0"};
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), the_device(), keys, unguarded, 2, &s), "unguarded");
  run_times(s, in, n_in, 2, &got, &n_got);
  if (count_nonfinite(got, n_got) == 0) fail_msg("without the guard float16 stayed finite: the model proves nothing");
  ortkit_tensors_free(got, n_got);
  k.api->ReleaseSession(s);
  /* a value other than 0 or 1 is refused, named */
  const char* bad[] = {"fp16", "yes"};
  OrtSession* none = NULL;
  expect_error(ortkit_session(&k, model_path("fp16_overflow"), the_device(), keys, bad, 2, &none), "'yes'");
  assert_null(none);
  const char* guarded[] = {"fp16", "1"};
  const char* bf16[] = {"bf16", "1"};
  const char* const* variants[] = {guarded, bf16};
  const double tol[] = {2e-2, 5e-2}; /* of the peak: float16's and bfloat16's rounding through three layers */
  for (int v = 0; v < 2; v++) {
    expect_ok(ortkit_session(&k, model_path("fp16_overflow"), the_device(), keys, variants[v], 2, &s), variants[v][0]);
    for (int r = 0; r < 4; r++) {
      expect_ok(ortkit_run(&k, s, NULL, in, n_in, &got, &n_got), "run");
      ortkit_diff d;
      assert_int_equal(count_nonfinite(got, n_got), 0);
      if (ortkit_compare(got, want, n_want, tol[v] * peak, 0, &d))
        fail_msg("precision=%s, Run %d: max abs error %g, peak %g", variants[v][0], r + 1, d.max_abs, peak);
      ortkit_tensors_free(got, n_got);
    }
    k.api->ReleaseSession(s);
  }
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(cpu);
}

/* The guard calibrates on the first Run's input. Here it is a thousand times dimmer than later
 * frames, so everything fits float16 and the mixed model is all float16; the first bright frame
 * then overflows (a Run the guard cannot take back), the output watch sees it, and the Runs after it
 * are float32 and right again. */
static void test_fp16_guard_watches_outputs(void** state) {
  (void)state;
  ortkit_tensor *dim = NULL, *bright = NULL, *want = NULL, *got = NULL;
  size_t n_dim = 0, n_bright = 0, n_want = 0, n_got = 0;
  OrtSession *cpu = NULL, *s = NULL;
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_random_inputs(&k, cpu, 6, 16, &bright, &n_bright), "inputs");
  expect_ok(ortkit_random_inputs(&k, cpu, 6, 16, &dim, &n_dim), "inputs");
  for (size_t e = 0; e < dim[0].count; e++) dim[0].data[e] *= 1e-3f;
  expect_ok(ortkit_run(&k, cpu, NULL, bright, n_bright, &want, &n_want), "cpu run");
  const double peak = peak_of(want, n_want);
  const char* keys[] = {"precision"};
  const char* fp16[] = {"fp16"};
  expect_ok(ortkit_session(&k, model_path("fp16_overflow"), the_device(), keys, fp16, 1, &s), "fp16 session");
  run_times(s, dim, n_dim, 3, &got, &n_got); /* calibrated on dim frames: float16 throughout */
  assert_int_equal(count_nonfinite(got, n_got), 0);
  ortkit_tensors_free(got, n_got);
  expect_ok(ortkit_run(&k, s, NULL, bright, n_bright, &got, &n_got), "first bright run");
  if (count_nonfinite(got, n_got) == 0)
    fail_msg("the bright frame stayed finite in float16: the watch is not exercised");
  ortkit_tensors_free(got, n_got);
  for (int r = 0; r < 3; r++) {
    expect_ok(ortkit_run(&k, s, NULL, bright, n_bright, &got, &n_got), "bright run");
    ortkit_diff d;
    assert_int_equal(count_nonfinite(got, n_got), 0);
    if (ortkit_compare(got, want, n_want, 1e-4 * peak, 1e-3, &d))
      fail_msg("after the watch, Run %d: max abs error %g (float32 expected), peak %g", r + 2, d.max_abs, peak);
    ortkit_tensors_free(got, n_got);
  }
  ortkit_tensors_free(dim, n_dim);
  ortkit_tensors_free(bright, n_bright);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

static void test_bad_option_value_is_named(void** state) {
  (void)state;
  const char* keys[] = {"allocator"};
  const char* values[] = {"huge"};
  OrtSession* s = NULL;
  expect_error(ortkit_session(&k, model_path("add_relu"), the_device(), keys, values, 1, &s), "'huge'");
  assert_null(s);
}

/* cuda_graph takes 0, 1 or ort; another value is named, with the allowed ones. */
static void test_cuda_graph_option_values(void** state) {
  (void)state;
  const char* keys[] = {"cuda_graph"};
  const char* off[] = {"0"};
  const char* own[] = {"1"};
  model_case c = {"add_relu", 1, 2, 0};
  check_model(&c, keys, off, 1);
  check_model(&c, keys, own, 1);
  const char* bad[] = {"yes"};
  OrtSession* s = NULL;
  OrtStatus* st = ortkit_session(&k, model_path("add_relu"), the_device(), keys, bad, 1, &s);
  assert_non_null(st);
  const char* msg = k.api->GetErrorMessage(st);
  if (!strstr(msg, "'yes'") || !strstr(msg, "ort")) fail_msg("bad cuda_graph value not named with the choices: %s", msg);
  k.api->ReleaseStatus(st);
  assert_null(s);
}

/* ---- cuda_graph=ort: ONNX Runtime's graph capture and replay ---- */

/* Device tensors bound once (IOBinding), as graph replay requires: the graph reads and writes these
 * very addresses on every replay. */
typedef struct bound_io {
  OrtAllocator* alloc;
  OrtMemoryInfo* cpu;
  OrtIoBinding* binding;
  size_t n_in, n_out;
  ortkit_tensor* in;   /* host inputs: names, shapes, current contents */
  ortkit_tensor* want; /* CPU EP outputs for the current inputs */
  OrtValue* dev_in[8];
  OrtValue* dev_out[8];
} bound_io;

/* A host float buffer as an OrtValue (no copy). */
static OrtValue* host_value(bound_io* io, float* data, size_t count, const int64_t* dims, size_t rank) {
  OrtValue* v = NULL;
  expect_ok(k.api->CreateTensorWithDataAsOrtValue(io->cpu, data, count * sizeof(float), dims, rank,
                                                  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v),
            "host tensor");
  return v;
}

/* Synchronous copy between a host tensor and a device one (no stream: done when it returns). */
static void copy_value(OrtValue* from, OrtValue* to) {
  const OrtValue* src[] = {from};
  OrtValue* dst[] = {to};
  expect_ok(k.api->CopyTensors(k.env, src, dst, NULL, 1), "copy");
}

/* New input contents (seed) written into the same device buffers, and the CPU EP's answer for them. */
static void refill_inputs(bound_io* io, OrtSession* ep, OrtSession* cpu, uint64_t seed, int64_t dyn) {
  ortkit_tensor* fresh = NULL;
  size_t n = 0;
  expect_ok(ortkit_random_inputs(&k, ep, seed, dyn, &fresh, &n), "inputs");
  assert_int_equal(n, io->n_in);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(fresh[i].count, io->in[i].count);
    memcpy(io->in[i].data, fresh[i].data, fresh[i].count * sizeof(float));
    OrtValue* h = host_value(io, io->in[i].data, io->in[i].count, io->in[i].dims, io->in[i].rank);
    copy_value(h, io->dev_in[i]);
    k.api->ReleaseValue(h);
  }
  ortkit_tensors_free(fresh, n);
  if (io->want) ortkit_tensors_free(io->want, io->n_out);
  io->want = NULL;
  size_t n_want = 0;
  expect_ok(ortkit_run(&k, cpu, NULL, io->in, io->n_in, &io->want, &n_want), "CPU EP run");
  assert_int_equal(n_want, io->n_out);
}

/* alloc: the device's shared allocator (one for the whole test: creating it again would replace it
 * under the tensors already allocated from it). */
static void bound_io_open(bound_io* io, OrtAllocator* alloc, OrtSession* ep, OrtSession* cpu, uint64_t seed,
                          int64_t dyn) {
  memset(io, 0, sizeof *io);
  io->alloc = alloc;
  expect_ok(k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &io->cpu), "cpu info");
  expect_ok(ortkit_random_inputs(&k, ep, seed, dyn, &io->in, &io->n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, io->in, io->n_in, &io->want, &io->n_out), "CPU EP run");
  assert_true(io->n_in <= 8 && io->n_out <= 8);
  expect_ok(k.api->CreateIoBinding(ep, &io->binding), "binding");
  for (size_t i = 0; i < io->n_in; i++) {
    expect_ok(k.api->CreateTensorAsOrtValue(io->alloc, io->in[i].dims, io->in[i].rank,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &io->dev_in[i]),
              "device input");
    expect_ok(k.api->BindInput(io->binding, io->in[i].name, io->dev_in[i]), "bind input");
  }
  for (size_t o = 0; o < io->n_out; o++) {
    expect_ok(k.api->CreateTensorAsOrtValue(io->alloc, io->want[o].dims, io->want[o].rank,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &io->dev_out[o]),
              "device output");
    expect_ok(k.api->BindOutput(io->binding, io->want[o].name, io->dev_out[o]), "bind output");
  }
  refill_inputs(io, ep, cpu, seed, dyn); /* uploads the first contents */
}

/* One Run of the binding, then its outputs (read back from the bound device buffers) against the CPU EP. */
static void run_and_check(bound_io* io, OrtSession* ep, OrtRunOptions* ro, const char* what) {
  expect_ok(k.api->RunWithBinding(ep, ro, io->binding), what);
  expect_ok(k.api->SynchronizeBoundOutputs(io->binding), "synchronize outputs");
  ortkit_tensor got[8];
  memset(got, 0, sizeof got);
  for (size_t o = 0; o < io->n_out; o++) {
    got[o] = io->want[o];
    got[o].data = calloc(io->want[o].count + 1, sizeof(float));
    OrtValue* h = host_value(io, got[o].data, got[o].count, got[o].dims, got[o].rank);
    copy_value(io->dev_out[o], h);
    k.api->ReleaseValue(h);
  }
  ortkit_diff d;
  int bad = ortkit_compare(got, io->want, io->n_out, ATOL_F32, RTOL_F32, &d);
  for (size_t o = 0; o < io->n_out; o++) free(got[o].data);
  if (bad) fail_msg("%s: %zu elements differ from the CPU EP (max abs %g)", what, d.mismatched, d.max_abs);
}

static void bound_io_close(bound_io* io) {
  k.api->ReleaseIoBinding(io->binding);
  for (size_t i = 0; i < io->n_in; i++) k.api->ReleaseValue(io->dev_in[i]);
  for (size_t o = 0; o < io->n_out; o++) k.api->ReleaseValue(io->dev_out[o]);
  ortkit_tensors_free(io->in, io->n_in);
  ortkit_tensors_free(io->want, io->n_out);
  k.api->ReleaseMemoryInfo(io->cpu);
}

static OrtRunOptions* graph_run_options(const char* id) {
  OrtRunOptions* ro = NULL;
  expect_ok(k.api->CreateRunOptions(&ro), "run options");
  if (id) expect_ok(k.api->AddRunConfigEntry(ro, "gpu_graph_id", id), "gpu_graph_id");
  return ro;
}

/* The reference backend cannot capture: the session is refused, naming the value and the backend.
 * On CUDA: the first Run warms up and captures (ORT repeats it internally), later Runs replay; new
 * input contents in the same buffers show that replays read the bound memory; gpu_graph_id=-1 runs
 * without a graph, and a second id with other shapes gets a graph of its own. */
static void test_cuda_graph_ort(void** state) {
  (void)state;
  const char* keys[] = {"cuda_graph"};
  const char* values[] = {"ort"};
  OrtSession *ep = NULL, *cpu = NULL;
  if (strcmp(backend, "reference") == 0) {
    OrtStatus* st = ortkit_session(&k, model_path("conv_net"), the_device(), keys, values, 1, &ep);
    assert_non_null(st);
    const char* msg = k.api->GetErrorMessage(st);
    if (!strstr(msg, "'graphs' = 'ort'") || !strstr(msg, "reference"))
      fail_msg("cuda_graph=ort on the reference backend: the error does not name the value and backend: %s", msg);
    k.api->ReleaseStatus(st);
    assert_null(ep);
    return;
  }
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), keys, values, 1, &ep), "cuda_graph=ort session");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "CPU EP session");
  OrtAllocator* alloc = NULL;
  expect_ok(k.api->CreateSharedAllocator(k.env, the_device(), OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator, NULL,
                                         &alloc),
            "device allocator");
  bound_io a;
  bound_io_open(&a, alloc, ep, cpu, 21, 17);
  OrtRunOptions* ro = graph_run_options(NULL); /* gpu_graph_id 0 */
  run_and_check(&a, ep, ro, "capture run (graph 0)");
  for (int r = 0; r < 4; r++) {
    if (r >= 1) refill_inputs(&a, ep, cpu, 40 + (uint64_t)r, 17);
    run_and_check(&a, ep, ro, "replay (graph 0)");
  }
  /* no graph: a normal run on the same buffers, between replays */
  OrtRunOptions* none = graph_run_options("-1");
  refill_inputs(&a, ep, cpu, 60, 17);
  for (int r = 0; r < 3; r++) run_and_check(&a, ep, none, "gpu_graph_id=-1");
  refill_inputs(&a, ep, cpu, 61, 17);
  run_and_check(&a, ep, ro, "replay (graph 0) after runs without a graph");
  /* graph 1: other shapes in other buffers; its own warm-ups and capture */
  bound_io b;
  bound_io_open(&b, alloc, ep, cpu, 22, 32);
  OrtRunOptions* ro1 = graph_run_options("1");
  run_and_check(&b, ep, ro1, "capture run (graph 1)");
  refill_inputs(&b, ep, cpu, 70, 32);
  run_and_check(&b, ep, ro1, "replay (graph 1)");
  refill_inputs(&a, ep, cpu, 71, 17);
  run_and_check(&a, ep, ro, "replay (graph 0) after graph 1");
  /* released, graph 1 is captured again on its next run */
  if (k.api->SessionReleaseCapturedGraph) {
    expect_ok(k.api->SessionReleaseCapturedGraph(ep, 1), "release graph 1");
    refill_inputs(&b, ep, cpu, 72, 32);
    run_and_check(&b, ep, ro1, "capture run (graph 1 again)");
    refill_inputs(&b, ep, cpu, 73, 32);
    run_and_check(&b, ep, ro1, "replay (graph 1 again)");
  }
  k.api->ReleaseRunOptions(ro);
  k.api->ReleaseRunOptions(ro1);
  k.api->ReleaseRunOptions(none);
  bound_io_close(&a);
  bound_io_close(&b);
  expect_ok(k.api->ReleaseSharedAllocator(k.env, the_device(), OrtDeviceMemoryType_DEFAULT), "release allocator");
  k.api->ReleaseSession(ep);
  k.api->ReleaseSession(cpu);
}

static void test_corrupt_model_fails_cleanly(void** state) {
  (void)state;
  OrtSessionOptions* so = NULL;
  expect_ok(k.api->CreateSessionOptions(&so), "options");
  const OrtEpDevice* d = the_device();
  expect_ok(k.api->SessionOptionsAppendExecutionProvider_V2(so, k.env, &d, 1, NULL, NULL, 0), "append");
  unsigned char junk[512];
  uint64_t x = 12345;
  for (size_t i = 0; i < sizeof junk; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    junk[i] = (unsigned char)(x >> 56);
  }
  OrtSession* s = NULL;
  OrtStatus* st = k.api->CreateSessionFromArray(k.env, junk, sizeof junk, so, &s);
  assert_non_null(st);
  assert_null(s);
  k.api->ReleaseStatus(st);
  /* a truncated real model fails the same way */
  FILE* f = fopen(model_path("conv_net"), "rb");
  assert_non_null(f);
  unsigned char buf[600];
  size_t got = fread(buf, 1, sizeof buf, f);
  fclose(f);
  st = k.api->CreateSessionFromArray(k.env, buf, got, so, &s);
  assert_non_null(st);
  k.api->ReleaseStatus(st);
  k.api->ReleaseSessionOptions(so);
}

/* A wrong input shape is caught by ORT or by gfxep's shape check, never computed. */
static void test_wrong_input_shape_is_an_error(void** state) {
  (void)state;
  OrtSession* s = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), the_device(), NULL, NULL, 0, &s), "session");
  ortkit_tensor in = {.name = "x", .rank = 4, .dims = {1, 5, 8, 8}, .count = 320};
  in.data = calloc(in.count, sizeof(float));
  ortkit_tensor* out = NULL;
  size_t n_out = 0;
  OrtStatus* st = ortkit_run(&k, s, NULL, &in, 1, &out, &n_out);
  assert_non_null(st);
  k.api->ReleaseStatus(st);
  /* a spatial size too small for a kernel with its pads (conv2: 3x3, stride 2, pads 0+1 on a 1x1
   * map) is a status naming the node, not a crash or garbage */
  ortkit_tensor tiny = {.name = "x", .rank = 4, .dims = {1, 3, 1, 1}, .count = 3};
  tiny.data = calloc(tiny.count, sizeof(float));
  st = ortkit_run(&k, s, NULL, &tiny, 1, &out, &n_out);
  assert_non_null(st);
  const char* msg = k.api->GetErrorMessage(st);
  if (!strstr(msg, "conv2") || !strstr(msg, "smaller than the dilated kernel"))
    fail_msg("tiny input error does not name the node and the problem: %s", msg);
  k.api->ReleaseStatus(st);
  free(in.data);
  free(tiny.data);
  k.api->ReleaseSession(s);
}

/* ---- memory, copies and streams through ORT's public API ---- */

static void test_copy_tensors_round_trip_on_stream(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  const OrtMemoryInfo* dev_mem = k.api->EpDevice_MemoryInfo(d, OrtDeviceMemoryType_DEFAULT);
  OrtSyncStream* stream = NULL;
  expect_ok(k.api->CreateSyncStreamForEpDevice(d, NULL, &stream), "stream");
  assert_non_null(k.api->SyncStream_GetHandle(stream));
  OrtAllocator* dev_alloc = NULL;
  expect_ok(k.api->CreateSharedAllocator(k.env, d, OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator, NULL, &dev_alloc),
            "shared allocator");
  int64_t shape[2] = {64, 33};
  float host_in[64 * 33], host_out[64 * 33];
  for (int i = 0; i < 64 * 33; i++) host_in[i] = (float)i * 0.5f - 7.0f;
  memset(host_out, 0, sizeof host_out);
  OrtMemoryInfo* cpu = NULL;
  expect_ok(k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu), "cpu info");
  OrtValue *src = NULL, *mid = NULL, *mid2 = NULL, *dst = NULL;
  expect_ok(k.api->CreateTensorWithDataAsOrtValue(cpu, host_in, sizeof host_in, shape, 2,
                                                  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &src), "src");
  expect_ok(k.api->CreateTensorWithDataAsOrtValue(cpu, host_out, sizeof host_out, shape, 2,
                                                  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &dst), "dst");
  expect_ok(k.api->CreateTensorAsOrtValue(dev_alloc, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &mid), "mid");
  expect_ok(k.api->CreateTensorAsOrtValue(dev_alloc, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &mid2), "mid2");
  const OrtMemoryInfo* mid_info = NULL;
  expect_ok(k.api->GetTensorMemoryInfo(mid, &mid_info), "mid info");
  int same = 0;
  expect_ok(k.api->CompareMemoryInfo(mid_info, dev_mem, &same), "compare");
  assert_int_equal(same, 0); /* 0 means equal */
  /* host -> device, device -> device, device -> host, all queued on one stream */
  const OrtValue* s1[] = {src};
  OrtValue* d1[] = {mid};
  expect_ok(k.api->CopyTensors(k.env, s1, d1, stream, 1), "H2D");
  const OrtValue* s2[] = {mid};
  OrtValue* d2[] = {mid2};
  expect_ok(k.api->CopyTensors(k.env, s2, d2, stream, 1), "D2D");
  const OrtValue* s3[] = {mid2};
  OrtValue* d3[] = {dst};
  expect_ok(k.api->CopyTensors(k.env, s3, d3, NULL, 1), "D2H (synchronous)");
  assert_memory_equal(host_in, host_out, sizeof host_in);

  OrtKeyValuePairs* stats = NULL;
  expect_ok(k.api->AllocatorGetStats(dev_alloc, &stats), "stats");
  const char* in_use = k.api->GetKeyValue(stats, "InUse");
  assert_non_null(in_use);
  assert_true(strtoull(in_use, NULL, 10) >= 2 * sizeof host_in);
  k.api->ReleaseKeyValuePairs(stats);

  k.api->ReleaseValue(src);
  k.api->ReleaseValue(dst);
  k.api->ReleaseValue(mid);
  k.api->ReleaseValue(mid2);
  k.api->ReleaseMemoryInfo(cpu);
  expect_ok(k.api->ReleaseSharedAllocator(k.env, d, OrtDeviceMemoryType_DEFAULT), "release allocator");
  k.api->ReleaseSyncStream(stream);
}

/* A run on an application stream (RunOptionsSetSyncStream) without host sync, then a sync. */
static void test_run_on_user_stream(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  OrtSession* s = NULL;
  expect_ok(ortkit_session(&k, model_path("add_relu"), d, NULL, NULL, 0, &s), "session");
  OrtSyncStream* stream = NULL;
  expect_ok(k.api->CreateSyncStreamForEpDevice(d, NULL, &stream), "stream");
  OrtRunOptions* ro = NULL;
  expect_ok(k.api->CreateRunOptions(&ro), "run options");
  k.api->RunOptionsSetSyncStream(ro, stream);
  ortkit_tensor *in = NULL, *a = NULL, *b = NULL;
  size_t n_in = 0, n_a = 0, n_b = 0;
  expect_ok(ortkit_random_inputs(&k, s, 3, 1, &in, &n_in), "inputs");
  for (int i = 0; i < 5; i++) {
    expect_ok(ortkit_run(&k, s, ro, in, n_in, &a, &n_a), "run on the user stream");
    if (b) {
      ortkit_diff diff;
      assert_int_equal(ortkit_compare(a, b, n_a, 0, 0, &diff), 0);
      ortkit_tensors_free(b, n_b);
    }
    b = a;
    n_b = n_a;
    a = NULL;
  }
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("add_relu"), NULL, NULL, NULL, 0, &cpu), "cpu");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &a, &n_a), "cpu run");
  ortkit_diff diff;
  assert_int_equal(ortkit_compare(b, a, n_a, ATOL_F32, RTOL_F32, &diff), 0);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(a, n_a);
  ortkit_tensors_free(b, n_b);
  k.api->ReleaseRunOptions(ro);
  k.api->ReleaseSyncStream(stream);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

/* ---- concurrency: one session, several threads, each on its own stream ---- */

#define THREADS 4
#define RUNS_PER_THREAD 25

typedef struct worker {
  OrtSession* session;
  const OrtEpDevice* device;
  ortkit_tensor* in;
  size_t n_in;
  ortkit_tensor* want;
  size_t n_want;
  int failures;
  char message[256];
} worker;

static void* worker_main(void* arg) {
  worker* w = arg;
  OrtSyncStream* stream = NULL;
  OrtRunOptions* ro = NULL;
  OrtStatus* s = k.api->CreateSyncStreamForEpDevice(w->device, NULL, &stream);
  if (!s) s = k.api->CreateRunOptions(&ro);
  if (!s) k.api->RunOptionsSetSyncStream(ro, stream);
  for (int r = 0; r < RUNS_PER_THREAD && !s; r++) {
    ortkit_tensor* got = NULL;
    size_t n_got = 0;
    s = ortkit_run(&k, w->session, ro, w->in, w->n_in, &got, &n_got);
    if (s) break;
    ortkit_diff d;
    if (ortkit_compare(got, w->want, n_got, ATOL_F32, RTOL_F32, &d)) {
      w->failures++;
      snprintf(w->message, sizeof w->message, "run %d: max abs %g", r, d.max_abs);
    }
    ortkit_tensors_free(got, n_got);
  }
  if (s) {
    w->failures++;
    snprintf(w->message, sizeof w->message, "%s", k.api->GetErrorMessage(s));
    k.api->ReleaseStatus(s);
  }
  if (ro) k.api->ReleaseRunOptions(ro);
  if (stream) k.api->ReleaseSyncStream(stream);
  return NULL;
}

static void test_concurrent_runs_on_separate_streams(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  OrtSession *s = NULL, *cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), d, NULL, NULL, 0, &s), "session");
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  worker w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].session = s;
    w[i].device = d;
    /* different inputs and even different shapes per thread: shared instances must not mix */
    expect_ok(ortkit_random_inputs(&k, s, 500 + (uint64_t)i, 12 + 4 * (i % 2), &w[i].in, &w[i].n_in), "inputs");
    expect_ok(ortkit_run(&k, cpu, NULL, w[i].in, w[i].n_in, &w[i].want, &w[i].n_want), "cpu");
  }
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    if (w[i].failures) printf("# thread %d: %d failures, %s\n", i, w[i].failures, w[i].message);
    failures += w[i].failures;
    ortkit_tensors_free(w[i].in, w[i].n_in);
    ortkit_tensors_free(w[i].want, w[i].n_want);
  }
  assert_int_equal(failures, 0);
  k.api->ReleaseSession(s);
  k.api->ReleaseSession(cpu);
}

/* ORT's profiling JSON holds one event per gfxep kernel with its device time (OrtEp::CreateProfiler):
 * conv_net has 9 nodes on gfxep, so each must appear by name, and the profiled run must still be
 * right. A second run without profiling replays as usual. */
static void test_profiling_shows_gfxep_kernels(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  char prefix[256];
  ortkit_temp_path(prefix, sizeof prefix, "gfxep_profile");
  OrtSessionOptions* so = NULL;
  expect_ok(k.api->CreateSessionOptions(&so), "options");
  expect_ok(k.api->EnableProfiling(so, ortkit_ort_path(prefix)), "enable profiling");
  expect_ok(k.api->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1"), "assignment info");
  expect_ok(k.api->SessionOptionsAppendExecutionProvider_V2(so, k.env, &d, 1, NULL, NULL, 0), "append EP");
  OrtSession* s = NULL;
  expect_ok(k.api->CreateSession(k.env, ortkit_ort_path(model_path("conv_net")), so, &s), "session");
  k.api->ReleaseSessionOptions(so);
  ortkit_tensor *in = NULL, *got = NULL, *want = NULL;
  size_t n_in = 0, n_got = 0, n_want = 0;
  expect_ok(ortkit_random_inputs(&k, s, 21, 32, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, s, NULL, in, n_in, &got, &n_got), "profiled run");
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("conv_net"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  ortkit_diff diff;
  assert_int_equal(ortkit_compare(got, want, n_want, ATOL_F32, RTOL_F32, &diff), 0);

  OrtAllocator* a = NULL;
  expect_ok(k.api->GetAllocatorWithDefaultOptions(&a), "allocator");
  char* path = NULL;
  expect_ok(k.api->SessionEndProfiling(s, a, &path), "end profiling");
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = 0;
  fclose(f);
  remove(path);
  a->Free(a, path);
  /* ORT's own optimizer may fuse some nodes first (Conv + Mul): every node it gave gfxep must appear */
  size_t on_gfxep = 0, elsewhere = 0;
  expect_ok(ortkit_placement(&k, s, &on_gfxep, &elsewhere, 0), "placement");
  assert_true(on_gfxep >= 6);
  size_t events = 0;
  for (const char* p = text; (p = strstr(p, "\"gfxep:")) != NULL; p++) events++;
  /* gfxep's own fusions (Conv + Relu) make one kernel of two nodes, named after both */
  if (events < 1 || events > on_gfxep)
    fail_msg("profile has %zu gfxep kernel events for %zu nodes on gfxep", events, on_gfxep);
  assert_non_null(strstr(text, "\"gfxep:conv1+relu1\""));
  assert_non_null(strstr(text, "\"op_name\" : \"Conv\"") ? text : strstr(text, "\"op_name\":\"Conv\""));
  ortkit_tensors_free(got, n_got);
  got = NULL;
  expect_ok(ortkit_run(&k, s, NULL, in, n_in, &got, &n_got), "run after profiling");
  assert_int_equal(ortkit_compare(got, want, n_want, ATOL_F32, RTOL_F32, &diff), 0);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(got, n_got);
  ortkit_tensors_free(want, n_want);
  k.api->ReleaseSession(cpu);
  k.api->ReleaseSession(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_is_listed_with_metadata),
      cmocka_unit_test(test_reference_only_when_asked),
      cmocka_unit_test(test_unregister_and_register_again),
      cmocka_unit_test(test_models_match_cpu_ep),
      cmocka_unit_test(test_dynamic_shapes_in_one_session),
      cmocka_unit_test(test_data_dependent_shapes_across_runs),
      cmocka_unit_test(test_valid_options),
      cmocka_unit_test(test_unknown_option_is_named),
      cmocka_unit_test(test_bad_option_value_is_named),
      cmocka_unit_test(test_corrupt_model_fails_cleanly),
      cmocka_unit_test(test_wrong_input_shape_is_an_error),
      cmocka_unit_test(test_copy_tensors_round_trip_on_stream),
      cmocka_unit_test(test_run_on_user_stream),
      cmocka_unit_test(test_concurrent_runs_on_separate_streams),
      cmocka_unit_test(test_profiling_shows_gfxep_kernels),
      cmocka_unit_test(test_precision_option),
      cmocka_unit_test(test_layout_option),
      cmocka_unit_test(test_layout_pooling),
      cmocka_unit_test(test_fp16_range_guard),
      cmocka_unit_test(test_fp16_guard_watches_outputs),
      cmocka_unit_test(test_cuda_graph_option_values),
      cmocka_unit_test(test_cuda_graph_ort),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
