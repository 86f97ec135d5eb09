/* gfxep — end-to-end graphics interop with a real Vulkan producer (GPU machine).
 *
 * Frame after frame, with several frames in flight and GPU-side synchronization only:
 *   Vulkan fills the input buffer and signals timeline A = f
 *   -> WaitSemaphore(A, f) on the run's stream -> Run (imported input and output, the application's
 *      stream, disable_synchronize_execution_providers=1) -> SignalSemaphore(B, f)
 *   -> Vulkan waits for B = f on the GPU, copies the output to host-visible memory, signals its own
 *      timeline C = f, and the host checks the exact values once C (Vulkan-signalled) reaches f.
 * The host never waits on a value CUDA signals (DEVICE.md: such waits hung); every wait runs under a
 * watchdog (alarm) that fails the test with a message instead of hanging.
 *
 * Also: asynchrony (with A held back, Wait+Run+Signal return to the CPU and the output is untouched
 * until the host releases A), two sessions and two streams of one session interleaved, and timings:
 * the interop frame round trip against the same frame done by copying through host memory.
 * Prints JSON lines and "N passed, M failed". Exit 77 where no CUDA device or Vulkan fd export exists.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/gfxep.h"
#include "ortkit.h"
#include "vk_producer.h"

#define SIDE 64
#define CHANNELS 4
#define ELEMS (CHANNELS * SIDE * SIDE)
#define BYTES (ELEMS * sizeof(float))
#define IN_FLIGHT 3
#define FRAMES 1000
#define WAIT_NS 10000000000ull /* 10 s for any Vulkan-signalled value */

static ortkit k;
static const OrtInteropApi* ia;
static vkp_ctx* vk;
static char err[1024];
static int passed, failed;
static const char* stage = "start";

static void watchdog(int sig) {
  (void)sig;
  static const char msg[] = "\nFAIL: watchdog: a GPU wait did not finish in time (stage follows)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  w = write(2, stage, strlen(stage));
  (void)w;
  _exit(3);
}

static void arm(const char* what, unsigned seconds) {
  stage = what;
  alarm(seconds);
}

static int check(int ok, const char* what) {
  if (ok) passed++;
  else {
    failed++;
    printf("FAIL: %s\n", what);
  }
  return ok;
}

static int ort_ok(OrtStatus* s, const char* what) { return !ortkit_failed(&k, s, what); }

/* The gfxep backend under test (GFXEP_TEST_BACKEND: cuda, the default, or vulkan). With vulkan, gfxep
 * runs on the producer's own VkDevice and queue: no queue-family ownership transfer to an external
 * API then, since the memory never leaves the device's one queue. */
static const char* backend = "cuda";
static unsigned release_flag = VKP_RELEASE_TO_EXTERNAL, acquire_flag = VKP_ACQUIRE_FROM_EXTERNAL;
/* gfxep submits to the producer's own queue (Vulkan backend): a queue runs its submissions in order,
 * so nothing the producer submits later can overtake gfxep's submission that waits for A */
static int one_queue;

static double percentile(double* v, int n, double p) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return v[(int)(p * (n - 1) + 0.5)];
}

/* ---- one lane: a session, a stream, two imported semaphores, IN_FLIGHT imported buffer pairs ---- */

typedef struct lane {
  OrtSession* session;
  OrtSyncStream* streams[2];  /* runs alternate between them when two are used */
  int n_streams;
  OrtRunOptions* run_options[2];
  vkp_sem *ready, *done, *read; /* A: Vulkan -> CUDA, B: CUDA -> Vulkan, C: Vulkan's own */
  OrtExternalSemaphoreHandle *ready_h, *done_h;
  vkp_buffer *in[IN_FLIGHT], *out[IN_FLIGHT];
  OrtExternalMemoryHandle *in_h[IN_FLIGHT], *out_h[IN_FLIGHT];
  OrtValue *x[IN_FLIGHT], *y[IN_FLIGHT];
  vkp_host_buffer* readback[IN_FLIGHT];
  float base;
} lane;

static OrtExternalResourceImporter* importer;
static const OrtEpDevice* device;

static int import_buffer(vkp_buffer* b, OrtExternalMemoryHandle** h, OrtValue** v) {
  int fd = -1;
  size_t alloc = 0;
  if (vkp_buffer_export_fd(b, &fd, &alloc, err, sizeof err)) return check(0, err);
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                   .handle_type = ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD,
                                   .native_handle = (void*)(intptr_t)fd,
                                   .size_bytes = alloc,
                                   .offset_bytes = 0};
  int ok = ort_ok(ia->ImportMemory(importer, &d, h), "ImportMemory");
  close(fd); /* gfxep imported a duplicate: the application's fd stays its own */
  int64_t shape[4] = {1, CHANNELS, SIDE, SIDE};
  OrtExternalTensorDescriptor t = {.version = ORT_API_VERSION, .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                   .shape = shape, .rank = 4, .offset_bytes = 0};
  return ok && ort_ok(ia->CreateTensorFromMemory(importer, *h, &t, v), "CreateTensorFromMemory");
}

static int import_semaphore(vkp_sem* s, OrtExternalSemaphoreHandle** h) {
  int fd = -1;
  if (vkp_timeline_export_fd(s, &fd, err, sizeof err)) return check(0, err);
  OrtExternalSemaphoreDescriptor d = {.version = ORT_API_VERSION,
                                      .type = ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD,
                                      .native_handle = (void*)(intptr_t)fd};
  int ok = ort_ok(ia->ImportSemaphore(importer, &d, h), "ImportSemaphore");
  close(fd);
  return ok;
}

static const char* const* lane_keys;
static const char* const* lane_values;
static size_t lane_n_options;

static int lane_create(lane* l, const char* model, int n_streams, float base) {
  memset(l, 0, sizeof *l);
  l->base = base;
  l->n_streams = n_streams;
  if (!ort_ok(ortkit_session(&k, model, device, lane_keys, lane_values, lane_n_options, &l->session), "session"))
    return 0;
  for (int s = 0; s < n_streams; s++) {
    if (!ort_ok(k.api->CreateSyncStreamForEpDevice(device, NULL, &l->streams[s]), "stream") ||
        !ort_ok(k.api->CreateRunOptions(&l->run_options[s]), "run options") ||
        !ort_ok(k.api->AddRunConfigEntry(l->run_options[s], "disable_synchronize_execution_providers", "1"), "cfg"))
      return 0;
    k.api->RunOptionsSetSyncStream(l->run_options[s], l->streams[s]);
  }
  if (vkp_timeline_create(vk, 0, 1, &l->ready, err, sizeof err) ||
      vkp_timeline_create(vk, 0, 1, &l->done, err, sizeof err) ||
      vkp_timeline_create(vk, 0, 0, &l->read, err, sizeof err))
    return check(0, err);
  if (!import_semaphore(l->ready, &l->ready_h) || !import_semaphore(l->done, &l->done_h)) return 0;
  for (int i = 0; i < IN_FLIGHT; i++) {
    if (vkp_buffer_create_exportable(vk, BYTES, &l->in[i], err, sizeof err) ||
        vkp_buffer_create_exportable(vk, BYTES, &l->out[i], err, sizeof err) ||
        vkp_host_buffer_create(vk, BYTES, &l->readback[i], err, sizeof err))
      return check(0, err);
    if (!import_buffer(l->in[i], &l->in_h[i], &l->x[i]) || !import_buffer(l->out[i], &l->out_h[i], &l->y[i])) return 0;
  }
  return 1;
}

/* Teardown in the documented order: GPU idle (last Vulkan-signalled value reached), tensors, memory
 * and semaphore handles, streams, then the Vulkan objects. */
static void lane_destroy(lane* l) {
  for (int i = 0; i < IN_FLIGHT; i++) {
    if (l->x[i]) k.api->ReleaseValue(l->x[i]);
    if (l->y[i]) k.api->ReleaseValue(l->y[i]);
    if (l->in_h[i]) ia->ReleaseExternalMemoryHandle(l->in_h[i]);
    if (l->out_h[i]) ia->ReleaseExternalMemoryHandle(l->out_h[i]);
  }
  if (l->ready_h) ia->ReleaseExternalSemaphoreHandle(l->ready_h);
  if (l->done_h) ia->ReleaseExternalSemaphoreHandle(l->done_h);
  for (int s = 0; s < l->n_streams; s++) {
    if (l->run_options[s]) k.api->ReleaseRunOptions(l->run_options[s]);
    if (l->streams[s]) k.api->ReleaseSyncStream(l->streams[s]);
  }
  if (l->session) k.api->ReleaseSession(l->session);
  for (int i = 0; i < IN_FLIGHT; i++) {
    if (l->in[i]) vkp_buffer_destroy(l->in[i]);
    if (l->out[i]) vkp_buffer_destroy(l->out[i]);
    if (l->readback[i]) vkp_host_buffer_destroy(l->readback[i]);
  }
  if (l->ready) vkp_timeline_destroy(l->ready);
  if (l->done) vkp_timeline_destroy(l->done);
  if (l->read) vkp_timeline_destroy(l->read);
}

static float expected(float x) { return fmaxf(2.0f * x + 1.0f, 0.0f); }

static float frame_base(const lane* l, uint64_t f) { return l->base + (float)(f % 64) * 0.25f; }

/* Queues frame f: fill (signals A=f), Wait/Run/Signal (B=f), copy back (waits B=f, signals C=f).
 * Adds the host time spent in gfxep's three calls to *ort_us. */
/* 0 for frames ordered by the one queue gfxep shares with the producer (Vulkan backend): no
 * WaitSemaphore / SignalSemaphore, the copy waits on nothing */
static int use_semaphores = 1;

static int lane_submit(lane* l, uint64_t f, double* ort_us) {
  int slot = (int)(f % IN_FLIGHT), s = (int)(f % (uint64_t)l->n_streams);
  vkp_sync fill = {.signal_sem = l->ready, .signal_value = f, .flags = release_flag,
                   .write_timestamps = 1, .timestamp_slot = (uint32_t)(2 * slot)};
  if (vkp_submit_fill(vk, l->in[slot], 0, ELEMS, frame_base(l, f), 0.25f, &fill, err, sizeof err)) return check(0, err);
  uint64_t t0 = ortkit_now_ns();
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  if ((use_semaphores && !ort_ok(ia->WaitSemaphore(importer, l->ready_h, l->streams[s], f), "WaitSemaphore")) ||
      !ort_ok(k.api->Run(l->session, l->run_options[s], in_names, (const OrtValue* const*)&l->x[slot], 1, out_names,
                         1, &l->y[slot]),
              "Run") ||
      (use_semaphores && !ort_ok(ia->SignalSemaphore(importer, l->done_h, l->streams[s], f), "SignalSemaphore")))
    return 0;
  if (ort_us) *ort_us += (double)(ortkit_now_ns() - t0) / 1e3;
  vkp_sync copy = {.wait_sem = use_semaphores ? l->done : NULL, .wait_value = f, .signal_sem = l->read,
                   .signal_value = f, .flags = acquire_flag, .write_timestamps = 1,
                   .timestamp_slot = (uint32_t)(2 * slot + 1)};
  if (vkp_submit_copy(vk, l->out[slot], 0, l->readback[slot], 0, BYTES, &copy, err, sizeof err)) return check(0, err);
  return 1;
}

/* GPU-clock stages of one frame, from Vulkan timestamps: the fill, the gap between the end of the
 * fill and the start of the copy (hop to CUDA, the wait, the Run's kernels, the signal, hop back),
 * the copy, and the whole round trip. */
typedef struct frame_times {
  double fill_us, cuda_segment_us, copy_us, round_trip_us;
} frame_times;

/* Waits (on Vulkan's own timeline) for frame f's readback and checks every value exactly. */
static int lane_check(lane* l, uint64_t f, frame_times* times) {
  int slot = (int)(f % IN_FLIGHT);
  if (vkp_timeline_wait_host(l->read, f, WAIT_NS, err, sizeof err)) return check(0, err);
  float* y = NULL;
  if (vkp_host_buffer_map(l->readback[slot], (void**)&y, err, sizeof err)) return check(0, err);
  float base = frame_base(l, f);
  for (uint64_t i = 0; i < ELEMS; i++) {
    float want = expected(vkp_fill_value(base, 0.25f, i));
    if (y[i] != want) {
      printf("FAIL: frame %llu element %llu: %g, expected %g\n", (unsigned long long)f, (unsigned long long)i, y[i],
             want);
      failed++;
      return 0;
    }
  }
  if (times && vkp_has_timestamps(vk)) {
    uint64_t fb, fe, cb, ce;
    if (!vkp_read_timestamps(vk, (uint32_t)(2 * slot), &fb, &fe, err, sizeof err) &&
        !vkp_read_timestamps(vk, (uint32_t)(2 * slot + 1), &cb, &ce, err, sizeof err)) {
      times->fill_us = (double)(fe - fb) / 1e3;
      times->cuda_segment_us = (double)(cb - fe) / 1e3;
      times->copy_us = (double)(ce - cb) / 1e3;
      times->round_trip_us = (double)(ce - fb) / 1e3;
    }
  }
  return 1;
}

/* ---- phases ---- */

static void phase_frames_as(const char* model, const char* key) {
  lane l;
  arm("frames: setup", 60);
  if (!lane_create(&l, model, 1, -32.0f)) {
    lane_destroy(&l);
    return;
  }
  static double ort_us[FRAMES], rt_us[FRAMES], fill_us[FRAMES], seg_us[FRAMES], copy_us[FRAMES];
  int good = 1, n_rt = 0;
  uint64_t t0 = 0;
  for (uint64_t f = 1; f <= FRAMES && good; f++) {
    arm("frames: loop", 20);
    if (f > IN_FLIGHT) {
      frame_times t = {-1, -1, -1, -1};
      good = lane_check(&l, f - IN_FLIGHT, &t);
      if (t.round_trip_us >= 0) {
        fill_us[n_rt] = t.fill_us;
        seg_us[n_rt] = t.cuda_segment_us;
        copy_us[n_rt] = t.copy_us;
        rt_us[n_rt++] = t.round_trip_us;
      }
    }
    if (f == 11) t0 = ortkit_now_ns(); /* steady state from here */
    ort_us[f - 1] = 0;
    if (good) good = lane_submit(&l, f, &ort_us[f - 1]);
  }
  for (uint64_t f = FRAMES - IN_FLIGHT + 1; f <= FRAMES && good; f++) good = lane_check(&l, f, NULL);
  double seconds = (double)(ortkit_now_ns() - t0) / 1e9;
  check(good, "frames: every value of every frame exact");
  if (good) {
    double cpu50 = percentile(ort_us + 10, FRAMES - 10, 0.5), cpu99 = percentile(ort_us + 10, FRAMES - 10, 0.99);
    double rt50 = n_rt ? percentile(rt_us, n_rt, 0.5) : -1, rt99 = n_rt ? percentile(rt_us, n_rt, 0.99) : -1;
    double seg50 = n_rt ? percentile(seg_us, n_rt, 0.5) : -1, seg99 = n_rt ? percentile(seg_us, n_rt, 0.99) : -1;
    double fill50 = n_rt ? percentile(fill_us, n_rt, 0.5) : -1, copy50 = n_rt ? percentile(copy_us, n_rt, 0.5) : -1;
    printf("{\"%s\": {\"frames\": %d, \"in_flight\": %d, \"elements\": %d, \"fps\": %.0f, "
           "\"cpu_us_wait_run_signal_p50\": %.1f, \"cpu_us_wait_run_signal_p99\": %.1f, "
           "\"gpu_round_trip_us_p50\": %.1f, \"gpu_round_trip_us_p99\": %.1f, \"gpu_fill_us_p50\": %.1f, "
           "\"gpu_between_fill_and_copy_us_p50\": %.1f, \"gpu_between_fill_and_copy_us_p99\": %.1f, "
           "\"gpu_copy_us_p50\": %.1f}}\n",
           key, FRAMES, IN_FLIGHT, ELEMS, (FRAMES - 10) / seconds, cpu50, cpu99, rt50, rt99, fill50, seg50, seg99,
           copy50);
  }
  arm("frames: teardown", 30);
  lane_destroy(&l);
}

static void phase_frames(const char* model) { phase_frames_as(model, "interop_frames"); }

/* The same frames on the one queue gfxep shares with the producer, ordered by that queue alone (the
 * barriers gfxep's submissions begin and end with): exact results, and the semaphores' own cost as
 * the difference from interop_frames. */
static void phase_frames_queue_order(const char* model) {
  use_semaphores = 0;
  phase_frames_as(model, "interop_frames_queue_order");
  use_semaphores = 1;
}

/* With A held back, gfxep's calls return and the output stays untouched until the host signals A. */
static void phase_asynchrony(const char* model) {
  lane l;
  arm("asynchrony: setup", 60);
  if (!lane_create(&l, model, 1, 0.0f)) {
    lane_destroy(&l);
    return;
  }
  const uint64_t f = 1;
  /* sentinel: the output buffer filled with a pattern the model cannot produce (negative values) */
  vkp_sync prep = {.signal_sem = l.read, .signal_value = 1};
  if (vkp_submit_fill(vk, l.out[1], 0, ELEMS, -1000.0f, 0.25f, &prep, err, sizeof err) ||
      vkp_timeline_wait_host(l.read, 1, WAIT_NS, err, sizeof err)) {
    check(0, err);
    lane_destroy(&l);
    return;
  }
  /* the input is written now, but A = 1 is not signalled: that is the held-back producer */
  vkp_sync fill = {.signal_sem = l.read, .signal_value = 2, .flags = release_flag};
  vkp_submit_fill(vk, l.in[1], 0, ELEMS, frame_base(&l, f), 0.25f, &fill, err, sizeof err);
  vkp_timeline_wait_host(l.read, 2, WAIT_NS, err, sizeof err);
  arm("asynchrony: calls with the producer held back", 10);
  uint64_t t0 = ortkit_now_ns();
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  int ok = ort_ok(ia->WaitSemaphore(importer, l.ready_h, l.streams[0], f), "WaitSemaphore") &&
           ort_ok(k.api->Run(l.session, l.run_options[0], in_names, (const OrtValue* const*)&l.x[1], 1, out_names, 1,
                             &l.y[1]),
                  "Run") &&
           ort_ok(ia->SignalSemaphore(importer, l.done_h, l.streams[0], f), "SignalSemaphore");
  double returned_ms = (double)(ortkit_now_ns() - t0) / 1e6;
  check(ok, "asynchrony: Wait, Run and Signal succeed with the producer held back");
  check(returned_ms < 250, "asynchrony: Wait+Run+Signal returned to the CPU while the GPU waits");
  /* peek at the output without waiting for B: it must still be the sentinel. On one queue the peek
   * would queue behind gfxep's held-back submission (and wait for the release below): skipped there. */
  int untouched = 0;
  float* y = NULL;
  if (one_queue) {
    printf("# asynchrony: peek skipped: gfxep shares the producer's queue, which runs submissions in order\n");
    untouched = -1;
  } else {
    vkp_sync peek = {.signal_sem = l.read, .signal_value = 3};
    vkp_submit_copy(vk, l.out[1], 0, l.readback[1], 0, BYTES, &peek, err, sizeof err);
    arm("asynchrony: peek", 10);
    if (!vkp_timeline_wait_host(l.read, 3, WAIT_NS, err, sizeof err) &&
        !vkp_host_buffer_map(l.readback[1], (void**)&y, err, sizeof err)) {
      untouched = 1;
      for (int i = 0; i < ELEMS && untouched; i++) untouched = y[i] == vkp_fill_value(-1000.0f, 0.25f, (uint64_t)i);
    }
    check(untouched, "asynchrony: output untouched while the producer holds its signal back");
  }
  /* release the producer from the host; Vulkan then waits for B on the GPU and reads the result */
  arm("asynchrony: release", 20);
  vkp_timeline_signal_host(l.ready, f, err, sizeof err);
  vkp_sync copy = {.wait_sem = l.done, .wait_value = f, .signal_sem = l.read, .signal_value = one_queue ? 3 : 4,
                   .flags = acquire_flag};
  vkp_submit_copy(vk, l.out[1], 0, l.readback[1], 0, BYTES, &copy, err, sizeof err);
  int correct = 0;
  if (!vkp_timeline_wait_host(l.read, one_queue ? 3 : 4, WAIT_NS, err, sizeof err) &&
      !vkp_host_buffer_map(l.readback[1], (void**)&y, err, sizeof err)) {
    correct = 1;
    for (int i = 0; i < ELEMS && correct; i++)
      correct = y[i] == expected(vkp_fill_value(frame_base(&l, f), 0.25f, (uint64_t)i));
  }
  check(correct, "asynchrony: correct output once the producer signals");
  printf("{\"asynchrony\": {\"wait_run_signal_returned_ms\": %.3f, \"output_untouched_while_held\": %d, "
         "\"correct_after_release\": %d}}\n",
         returned_ms, untouched, correct);
  arm("asynchrony: teardown", 30);
  lane_destroy(&l);
}

/* A wait that is never satisfied: the producer never signals A. The host's wait for the frame (on the
 * Vulkan-signalled C) must give up with a diagnostic after its bound instead of hanging; releasing
 * the producer afterwards lets everything drain, and the lane is usable again. */
static void phase_unsignalled(const char* model) {
  lane l;
  arm("unsignalled: setup", 60);
  if (!lane_create(&l, model, 1, 0.0f)) {
    lane_destroy(&l);
    return;
  }
  const uint64_t f = 1;
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  int ok = ort_ok(ia->WaitSemaphore(importer, l.ready_h, l.streams[0], f), "WaitSemaphore") &&
           ort_ok(k.api->Run(l.session, l.run_options[0], in_names, (const OrtValue* const*)&l.x[0], 1, out_names, 1,
                             &l.y[0]),
                  "Run") &&
           ort_ok(ia->SignalSemaphore(importer, l.done_h, l.streams[0], f), "SignalSemaphore");
  vkp_sync copy = {.wait_sem = l.done, .wait_value = f, .signal_sem = l.read, .signal_value = f,
                   .flags = acquire_flag};
  ok = ok && !vkp_submit_copy(vk, l.out[0], 0, l.readback[0], 0, BYTES, &copy, err, sizeof err);
  arm("unsignalled: bounded wait", 20);
  uint64_t t0 = ortkit_now_ns();
  int timed_out = vkp_timeline_wait_host(l.read, f, 2000000000ull, err, sizeof err) != 0;
  double waited_s = (double)(ortkit_now_ns() - t0) / 1e9;
  check(ok && timed_out, "unsignalled: the bounded wait gives up instead of hanging");
  printf("{\"unsignalled_wait\": {\"timed_out\": %d, \"waited_s\": %.2f, \"message\": \"%s\"}}\n", timed_out,
         waited_s, timed_out ? err : "");
  /* release the producer; the frame then completes, with the right values */
  arm("unsignalled: release", 20);
  vkp_timeline_signal_host(l.ready, f, err, sizeof err);
  /* the input was never written, so only completion is checked here; values are checked elsewhere */
  int drained = !vkp_timeline_wait_host(l.read, f, WAIT_NS, err, sizeof err);
  check(drained, "unsignalled: the frame completes once the producer signals");
  arm("unsignalled: teardown", 30);
  lane_destroy(&l);
}

/* The watchdog: a wait that the producer never signals is reported through the frame timings (and
 * ORT's log) within the session's wait_timeout_ms; releasing everything of gfxep's meanwhile returns
 * at once (the releases that would block are held); once the producer signals, the frame drains and
 * completes with its whole stall in gpu_wait_us. */
static gfxep_read_frame_timings_fn read_frames;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void phase_watchdog(const char* model) {
  if (!read_frames) {
    check(0, "watchdog: the plugin exports gfxep_read_frame_timings");
    return;
  }
  /* frame_timings: the Run's stamps name the session that the frame (and the report) belongs to */
  static const char* keys[] = {"session_name", "wait_timeout_ms", "frame_timings"};
  static const char* values[] = {"watchdog", "300", "1"};
  lane_keys = keys;
  lane_values = values;
  lane_n_options = 3;
  lane l;
  arm("watchdog: setup", 60);
  int created = lane_create(&l, model, 1, 0.0f);
  lane_keys = lane_values = NULL;
  lane_n_options = 0;
  if (!created) {
    lane_destroy(&l);
    return;
  }
  /* a newer session on the device with a far longer limit: the watchdog still uses the limit of the
   * session whose Run follows the wait (300 ms), not the newest session's */
  static const char* long_keys[] = {"wait_timeout_ms"};
  static const char* long_values[] = {"60000"};
  OrtSession* newer = NULL;
  ort_ok(ortkit_session(&k, model, device, long_keys, long_values, 1, &newer), "a newer session with a long limit");
  gfxep_frame_timing f[64];
  int before_n = read_frames(NULL, 0, f, 64);
  uint64_t before = before_n > 0 ? f[before_n - 1].frame : 0;
  const uint64_t v = 1;
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  int ok = ort_ok(ia->WaitSemaphore(importer, l.ready_h, l.streams[0], v), "WaitSemaphore") &&
           ort_ok(k.api->Run(l.session, l.run_options[0], in_names, (const OrtValue* const*)&l.x[0], 1, out_names, 1,
                             &l.y[0]),
                  "Run") &&
           ort_ok(ia->SignalSemaphore(importer, l.done_h, l.streams[0], v), "SignalSemaphore");
  vkp_sync copy = {.wait_sem = l.done, .wait_value = v, .signal_sem = l.read, .signal_value = v,
                   .flags = acquire_flag};
  ok = ok && !vkp_submit_copy(vk, l.out[0], 0, l.readback[0], 0, BYTES, &copy, err, sizeof err);
  check(ok, "watchdog: Wait, Run and Signal queued");
  /* the report: polled, never waiting on the GPU */
  arm("watchdog: report", 20);
  uint64_t t0 = ortkit_now_ns();
  gfxep_frame_timing got = {0};
  int reported = 0;
  while (!reported && ortkit_now_ns() - t0 < 5000000000ull) {
    int n = read_frames("watchdog", before, f, 64);
    for (int i = 0; i < n; i++)
      if (f[i].flags & GFXEP_FRAME_WAIT_TIMED_OUT) {
        got = f[i];
        reported = 1;
      }
    if (!reported) sleep_ms(10);
  }
  double seen_ms = (double)(ortkit_now_ns() - t0) / 1e6;
  check(reported, "watchdog: the never-signalled wait is reported");
  check(reported && got.wait_value == v && got.wait_stalled_ms >= 300.0 && got.run == 1 &&
            !(got.flags & GFXEP_FRAME_COMPLETE),
        "watchdog: the report names the value, the stall and the run");
  printf("{\"watchdog\": {\"reported\": %d, \"seen_after_ms\": %.0f, \"stalled_ms\": %.0f, \"value\": %llu, "
         "\"current_known\": %d}}\n",
         reported, seen_ms, got.wait_stalled_ms, (unsigned long long)got.wait_value,
         (got.flags & GFXEP_FRAME_WAIT_VALUE_KNOWN) != 0);
  /* releasing gfxep's objects while the stream is stalled must not block, nor free what the stalled
   * work still reads (node states, recorded graphs, memory): those releases are held until it resumes */
  double release_ms = -1;
  {
    arm("watchdog: release while stalled", 20);
    t0 = ortkit_now_ns();
    for (int i = 0; i < IN_FLIGHT; i++) {
      k.api->ReleaseValue(l.x[i]);
      k.api->ReleaseValue(l.y[i]);
      ia->ReleaseExternalMemoryHandle(l.in_h[i]);
      ia->ReleaseExternalMemoryHandle(l.out_h[i]);
      l.x[i] = l.y[i] = NULL;
      l.in_h[i] = l.out_h[i] = NULL;
    }
    ia->ReleaseExternalSemaphoreHandle(l.ready_h);
    ia->ReleaseExternalSemaphoreHandle(l.done_h);
    l.ready_h = l.done_h = NULL;
    k.api->ReleaseRunOptions(l.run_options[0]);
    k.api->ReleaseSyncStream(l.streams[0]);
    l.run_options[0] = NULL;
    l.streams[0] = NULL;
    k.api->ReleaseSession(l.session);
    l.session = NULL;
    release_ms = (double)(ortkit_now_ns() - t0) / 1e6;
    check(release_ms < 2000.0, "watchdog: releasing everything while stalled returns at once");
  }
  /* the producer signals: the frame drains, the held releases are done, the frame completes */
  arm("watchdog: drain (signal)", 30);
  vkp_timeline_signal_host(l.ready, v, err, sizeof err);
  arm("watchdog: drain (wait for the copy)", 30);
  int drained = !vkp_timeline_wait_host(l.read, v, WAIT_NS, err, sizeof err);
  printf("# watchdog: drained %d (%s)\n", drained, drained ? "" : err);
  arm("watchdog: drain (frame complete)", 30);
  check(drained, "watchdog: the frame drains once the producer signals");
  int complete = 0;
  t0 = ortkit_now_ns();
  while (!complete && ortkit_now_ns() - t0 < 2000000000ull) {
    int n = read_frames("watchdog", before, f, 64);
    for (int i = 0; i < n; i++)
      if (f[i].frame == got.frame && (f[i].flags & GFXEP_FRAME_COMPLETE)) {
        got = f[i];
        complete = 1;
      }
    if (!complete) sleep_ms(10);
  }
  check(complete && (got.gpu_wait_us < 0 || got.gpu_wait_us >= 300000.0),
        "watchdog: the frame completes, its stall in the wait time");
  printf("{\"watchdog_drain\": {\"release_ms\": %.1f, \"complete\": %d, \"gpu_wait_us\": %.0f, \"gpu_run_us\": %.1f}}\n",
         release_ms, complete, got.gpu_wait_us, got.gpu_run_us);
  if (newer) k.api->ReleaseSession(newer);
  arm("watchdog: teardown", 30);
  lane_destroy(&l);
}

/* Two sessions, the first alternating between two streams, frames interleaved. */
static void phase_concurrency(const char* model) {
  lane a, b;
  arm("concurrency: setup", 60);
  int ok = lane_create(&a, model, 2, -40.0f) && lane_create(&b, model, 1, 8.0f);
  const uint64_t frames = 200;
  for (uint64_t f = 1; f <= frames && ok; f++) {
    arm("concurrency: loop", 20);
    if (f > IN_FLIGHT) ok = lane_check(&a, f - IN_FLIGHT, NULL) && lane_check(&b, f - IN_FLIGHT, NULL);
    if (ok) ok = lane_submit(&a, f, NULL) && lane_submit(&b, f, NULL);
  }
  for (uint64_t f = frames - IN_FLIGHT + 1; f <= frames && ok; f++) ok = lane_check(&a, f, NULL) && lane_check(&b, f, NULL);
  check(ok, "concurrency: two sessions and two streams of one session, interleaved, all exact");
  printf("{\"concurrency\": {\"frames_per_lane\": %llu, \"lanes\": 2, \"streams\": 3, \"ok\": %d}}\n",
         (unsigned long long)frames, ok);
  arm("concurrency: teardown", 30);
  lane_destroy(&a);
  lane_destroy(&b);
}

/* The same frame through host memory: Vulkan -> host -> ORT (it copies to the GPU and back) -> host
 * -> Vulkan, every step waited for on the CPU. */
static void phase_copy_through_host(const char* model) {
  arm("host path: setup", 60);
  OrtSession* s = NULL;
  vkp_buffer *in = NULL, *out = NULL;
  vkp_host_buffer *down = NULL, *up = NULL;
  vkp_sem* t = NULL;
  int ok = ort_ok(ortkit_session(&k, model, device, NULL, NULL, 0, &s), "session") &&
           !vkp_buffer_create_exportable(vk, BYTES, &in, err, sizeof err) &&
           !vkp_buffer_create_exportable(vk, BYTES, &out, err, sizeof err) &&
           !vkp_host_buffer_create(vk, BYTES, &down, err, sizeof err) &&
           !vkp_host_buffer_create(vk, BYTES, &up, err, sizeof err) && !vkp_timeline_create(vk, 0, 0, &t, err, sizeof err);
  static double us[200];
  uint64_t v = 0;
  for (int f = 0; f < 200 && ok; f++) {
    arm("host path: loop", 20);
    uint64_t t0 = ortkit_now_ns();
    vkp_sync fill = {.signal_sem = t, .signal_value = ++v};
    vkp_submit_fill(vk, in, 0, ELEMS, (float)(f % 64) * 0.25f, 0.25f, &fill, err, sizeof err);
    vkp_sync copy = {.wait_sem = t, .wait_value = v, .signal_sem = t, .signal_value = v + 1};
    v++;
    vkp_submit_copy(vk, in, 0, down, 0, BYTES, &copy, err, sizeof err);
    float *x = NULL, *y = NULL;
    ok = !vkp_timeline_wait_host(t, v, WAIT_NS, err, sizeof err) && !vkp_host_buffer_map(down, (void**)&x, err, sizeof err) &&
         !vkp_host_buffer_map(up, (void**)&y, err, sizeof err);
    if (!ok) break;
    ortkit_tensor tin = {.name = "x", .rank = 4, .dims = {1, CHANNELS, SIDE, SIDE}, .count = ELEMS, .data = x};
    ortkit_tensor* res = NULL;
    size_t n = 0;
    ok = ort_ok(ortkit_run(&k, s, NULL, &tin, 1, &res, &n), "host-path run");
    if (!ok) break;
    memcpy(y, res[0].data, BYTES);
    ortkit_tensors_free(res, n);
    vkp_host_buffer_flush(up, err, sizeof err);
    vkp_sync upload = {.signal_sem = t, .signal_value = ++v};
    vkp_submit_upload(vk, up, 0, out, 0, BYTES, &upload, err, sizeof err);
    ok = !vkp_timeline_wait_host(t, v, WAIT_NS, err, sizeof err);
    us[f] = (double)(ortkit_now_ns() - t0) / 1e3;
    if (ok && f == 0) ok = y[5] == expected(vkp_fill_value(0.0f, 0.25f, 5));
  }
  check(ok, "host path: frames round-trip through host memory");
  if (ok)
    printf("{\"copy_through_host\": {\"frames\": 200, \"frame_us_p50\": %.1f, \"frame_us_p99\": %.1f}}\n",
           percentile(us + 10, 190, 0.5), percentile(us + 10, 190, 0.99));
  if (t) vkp_timeline_destroy(t);
  if (in) vkp_buffer_destroy(in);
  if (out) vkp_buffer_destroy(out);
  if (down) vkp_host_buffer_destroy(down);
  if (up) vkp_host_buffer_destroy(up);
  if (s) k.api->ReleaseSession(s);
}

/* The Run alone on the same stream and imported tensors, synchronized on the host each time: what the
 * inference costs without the two cross-API hops. */
static void phase_run_only(const char* model) {
  lane l;
  arm("run only: setup", 60);
  if (!lane_create(&l, model, 1, 0.0f)) {
    lane_destroy(&l);
    return;
  }
  OrtRunOptions* ro = NULL;
  int ok = ort_ok(k.api->CreateRunOptions(&ro), "run options");
  if (ok) k.api->RunOptionsSetSyncStream(ro, l.streams[0]); /* synchronized: Run returns when done */
  static double us[300];
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  for (int i = 0; i < 300 && ok; i++) {
    arm("run only: loop", 20);
    uint64_t t0 = ortkit_now_ns();
    ok = ort_ok(k.api->Run(l.session, ro, in_names, (const OrtValue* const*)&l.x[0], 1, out_names, 1, &l.y[0]), "run");
    us[i] = (double)(ortkit_now_ns() - t0) / 1e3;
  }
  check(ok, "run only: synchronized runs on imported tensors");
  if (ok)
    printf("{\"run_only\": {\"runs\": 300, \"host_us_p50\": %.1f, \"host_us_p99\": %.1f}}\n",
           percentile(us + 10, 290, 0.5), percentile(us + 10, 290, 0.99));
  if (ro) k.api->ReleaseRunOptions(ro);
  lane_destroy(&l);
}

/* One frame at a time through the interop path, host clock from the fill's submission to the host
 * seeing the result: comparable with the host path above. */
static void phase_serial_latency(const char* model) {
  lane l;
  arm("serial: setup", 60);
  if (!lane_create(&l, model, 1, 4.0f)) {
    lane_destroy(&l);
    return;
  }
  static double us[200];
  int ok = 1;
  for (uint64_t f = 1; f <= 200 && ok; f++) {
    arm("serial: loop", 20);
    uint64_t t0 = ortkit_now_ns();
    ok = lane_submit(&l, f, NULL) && lane_check(&l, f, NULL);
    us[f - 1] = (double)(ortkit_now_ns() - t0) / 1e3;
  }
  check(ok, "serial: one frame at a time through the interop path");
  if (ok)
    printf("{\"interop_serial\": {\"frames\": 200, \"frame_us_p50\": %.1f, \"frame_us_p99\": %.1f}}\n",
           percentile(us + 10, 190, 0.5), percentile(us + 10, 190, 0.99));
  arm("serial: teardown", 30);
  lane_destroy(&l);
}

static int hex_to_uuid(const char* hex, uint8_t* uuid) {
  if (!hex || strlen(hex) != 32) return 0;
  for (int i = 0; i < 16; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 0;
    uuid[i] = (uint8_t)v;
  }
  return 1;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* the JSON lines survive the watchdog's _exit */
  signal(SIGALRM, watchdog);
  arm("ORT setup", 60);
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  ia = k.api->GetInteropApi();
  const char* want = getenv("GFXEP_TEST_BACKEND");
  if (want && want[0]) backend = want;
  const int on_vulkan = strcmp(backend, "vulkan") == 0;
  if (on_vulkan) release_flag = acquire_flag = 0;
  one_queue = on_vulkan;
  char registration[64];
  snprintf(registration, sizeof registration, "gfxep.%s", backend);
  if (!ort_ok(k.api->RegisterExecutionProviderLibrary(k.env, registration, ortkit_plugin_path()), "register")) return 1;
  if (ortkit_find_devices(&k, backend, &device, 1) != 1) {
    printf("# no gfxep %s device: skipped\n", backend);
    return 77;
  }
  printf("{\"backend\": \"%s\"}\n", backend);
  /* the Vulkan device is the one whose UUID gfxep publishes for its EP device */
  uint8_t uuid[16];
  if (!check(hex_to_uuid(ortkit_device_meta(&k, device, "gfxep.device_uuid"), uuid), "EP device publishes a UUID"))
    return 1;
  arm("Vulkan setup", 60);
  if (vkp_create(uuid, 1, &vk, err, sizeof err)) {
    printf("# Vulkan producer unavailable: %s\n", err);
    return strstr(err, "no device") || strstr(err, "extension") ? 77 : 1;
  }
  printf("# Vulkan device %s matched by UUID\n", vkp_device_name(vk));
  OrtGraphicsInteropConfig cfg = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_VULKAN};
  OrtKeyValuePairs* options = NULL;
  if (on_vulkan) {
    /* the renderer's own instance, device and queue: gfxep records into its own command pools on
     * that device and submits to that queue, so a frame's hand-offs are submissions on one queue */
    const char* keys[VKP_GFXEP_OPTIONS];
    const char* values[VKP_GFXEP_OPTIONS];
    char storage[VKP_GFXEP_OPTIONS][64];
    int n_opt = vkp_gfxep_options(vk, keys, values, storage);
    k.api->CreateKeyValuePairs(&options);
    for (int i = 0; i < n_opt; i++) k.api->AddKeyValuePair(options, keys[i], values[i]);
    cfg.additional_options = options;
  }
  check(ort_ok(ia->InitGraphicsInteropForEpDevice(device, &cfg), "InitGraphicsInterop"), "InitGraphicsInterop");
  if (options) k.api->ReleaseKeyValuePairs(options);
  if (!ort_ok(ia->CreateExternalResourceImporterForDevice(device, &importer), "importer") || !importer)
    return check(0, "importer"), 1;
  char model[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(model, sizeof model, "%s/frame_affine.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR);

  read_frames = (gfxep_read_frame_timings_fn)ortkit_plugin_symbol(GFXEP_READ_FRAME_TIMINGS);

  phase_asynchrony(model);
  phase_unsignalled(model);
  phase_watchdog(model);
  phase_frames(model);
  if (one_queue) phase_frames_queue_order(model);
  phase_concurrency(model);
  phase_run_only(model);
  phase_serial_latency(model);
  phase_copy_through_host(model);

  arm("teardown", 30);
  ia->ReleaseExternalResourceImporter(importer);
  check(ort_ok(ia->DeinitGraphicsInteropForEpDevice(device), "DeinitGraphicsInterop"), "DeinitGraphicsInterop");
  vkp_finish(vk, WAIT_NS, err, sizeof err);
  vkp_destroy(vk);
  ort_ok(k.api->UnregisterExecutionProviderLibrary(k.env, registration), "unregister");
  ortkit_close(&k);
  alarm(0);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
