/* gfxep — the headless Vulkan producer (tools/vkp/vk_producer.h) on whatever Vulkan device is present:
 * lavapipe on the development machines, where VK_KHR_external_semaphore_fd is missing. Set
 * VKP_NEED_SEM_FD=1 to require semaphore fds (on a GPU that has them).
 *
 * Every host wait here is on a value that Vulkan itself signals (a vkp_submit_* signal or a host
 * signal), never on a foreign one, and each is bounded; an alarm() watchdog ends the whole test with
 * a message if anything hangs anyway.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_producer.h"

/* SPIR-V of tools/vkp/shaders/{test_add,scene,present}.comp (bare initializer lists, see vkp.cmake) */
static const uint32_t test_add_spirv[] =
#include "test_add_spv.h"
    ;
static const uint32_t scene_spirv[] =
#include "scene_spv.h"
    ;
static const uint32_t present_spirv[] =
#include "present_spv.h"
    ;

/* push constants, as the shaders declare them */
typedef struct add_push {
  uint32_t count;
} add_push;
typedef struct scene_push {
  uint32_t width, height, frame;
  float noise_sigma;
} scene_push;
typedef struct present_push {
  uint32_t width, height;
} present_push;

#define WAIT_NS 10000000000ull /* 10 s: generous for lavapipe on 2 cores */
#define WATCHDOG_S 50          /* below ctest's 60 s TIMEOUT, so the message is ours */

typedef struct fixture {
  vkp_ctx* ctx;
} fixture;

static char err[1024];

/* ---- watchdog ---- */

static void watchdog_fired(int sig) {
  (void)sig;
  static const char msg[] = "test_vk_producer: watchdog: no progress for " "50" " s (a hung Vulkan wait?)\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(1);
}

static void arm_watchdog(void) {
  signal(SIGALRM, watchdog_fired);
  alarm(WATCHDOG_S);
}

/* ---- helpers ---- */

static int env_is_one(const char* name) {
  const char* v = getenv(name);
  return v && strcmp(v, "1") == 0;
}

#define CHECK_OK(call)                                        \
  do {                                                        \
    err[0] = '\0';                                            \
    int rc_ = (call);                                         \
    if (rc_ != 0) fail_msg("%s failed: %s", #call, err);      \
  } while (0)

static vkp_ctx* ctx_of(void** state) { return ((fixture*)*state)->ctx; }

/* counts elements of data[0..count) that differ from the fill pattern, printing the first */
static size_t pattern_mismatches(const float* data, size_t count, float base, float step) {
  size_t bad = 0;
  for (size_t i = 0; i < count; i++) {
    float want = vkp_fill_value(base, step, i);
    if (data[i] == want) continue;
    if (bad == 0) print_error("first mismatch at %zu: got %.9g, want %.9g\n", i, (double)data[i], (double)want);
    bad++;
  }
  return bad;
}

static const float* map_floats(vkp_host_buffer* hb) {
  void* p = NULL;
  CHECK_OK(vkp_host_buffer_map(hb, &p, err, sizeof err));
  return p;
}

/* fill count floats at byte offset, copy them to the host buffer at host_offset, wait, return the map */
static const float* fill_and_read(vkp_ctx* ctx, vkp_buffer* buf, size_t offset, size_t count, float base, float step,
                                  vkp_host_buffer* host, size_t host_offset, vkp_sem* timeline, uint64_t* value) {
  vkp_sync fill = {.signal_sem = timeline, .signal_value = *value + 1};
  vkp_sync copy = {.wait_sem = timeline, .wait_value = *value + 1, .signal_sem = timeline, .signal_value = *value + 2};
  CHECK_OK(vkp_submit_fill(ctx, buf, offset, count, base, step, &fill, err, sizeof err));
  CHECK_OK(vkp_submit_copy(ctx, buf, offset, host, host_offset, count * sizeof(float), &copy, err, sizeof err));
  *value += 2;
  CHECK_OK(vkp_timeline_wait_host(timeline, *value, WAIT_NS, err, sizeof err));
  return map_floats(host) + host_offset / sizeof(float);
}

static float* map_floats_rw(vkp_host_buffer* hb) {
  void* p = NULL;
  CHECK_OK(vkp_host_buffer_map(hb, &p, err, sizeof err));
  return p;
}

static const uint32_t* map_words(vkp_host_buffer* hb) {
  void* p = NULL;
  CHECK_OK(vkp_host_buffer_map(hb, &p, err, sizeof err));
  return p;
}

static uint32_t groups_of(uint32_t items, uint32_t local_size) { return (items + local_size - 1) / local_size; }

/* ---- fixture ---- */

static int setup(void** state) {
  arm_watchdog();
  fixture* f = calloc(1, sizeof *f);
  if (!f) return -1;
  if (vkp_create(NULL, env_is_one("VKP_NEED_SEM_FD"), &f->ctx, err, sizeof err) != 0) {
    print_error("vkp_create: %s\n", err);
    free(f);
    return -1;
  }
  print_message("Vulkan device: %s (semaphore fds: %s, timestamps: %s)\n", vkp_device_name(f->ctx),
                vkp_has_semaphore_fd(f->ctx) ? "yes" : "no", vkp_has_timestamps(f->ctx) ? "yes" : "no");
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture* f = *state;
  if (f) {
    vkp_destroy(f->ctx);
    free(f);
  }
  return 0;
}

/* ---- context ---- */

static void test_device_identity(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  assert_true(strlen(vkp_device_name(ctx)) > 0);
  assert_non_null(vkp_device_uuid(ctx));
  /* choosing by the UUID it reported finds the same device again */
  vkp_ctx* again = NULL;
  CHECK_OK(vkp_create(vkp_device_uuid(ctx), 0, &again, err, sizeof err));
  assert_string_equal(vkp_device_name(again), vkp_device_name(ctx));
  assert_memory_equal(vkp_device_uuid(again), vkp_device_uuid(ctx), VKP_UUID_SIZE);
  vkp_destroy(again);
}

static void test_unknown_uuid_lists_devices(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  uint8_t nowhere[VKP_UUID_SIZE];
  memset(nowhere, 0xee, sizeof nowhere);
  static int sentinel;
  vkp_ctx* none = (vkp_ctx*)(void*)&sentinel; /* must be reset to NULL */
  err[0] = '\0';
  assert_int_equal(vkp_create(nowhere, 0, &none, err, sizeof err), -1);
  assert_null(none);
  print_message("expected error: %s\n", err);
  assert_non_null(strstr(err, "eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee"));
  assert_non_null(strstr(err, vkp_device_name(ctx))); /* the devices found are listed */
}

static void test_semaphore_fd_requirement(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  vkp_ctx* strict = NULL;
  err[0] = '\0';
  int rc = vkp_create(vkp_device_uuid(ctx), 1, &strict, err, sizeof err);
  if (vkp_has_semaphore_fd(ctx)) {
    assert_int_equal(rc, 0);
    vkp_destroy(strict);
  } else {
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "VK_KHR_external_semaphore_fd"));
    print_message("without semaphore fds, as expected here: %s\n", err);
  }
}

/* ---- buffers and semaphores ---- */

static void test_exportable_buffer_fd(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t size = (1u << 20) + 12; /* not a round size: the allocation may be larger */
  vkp_buffer* buf = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, size, &buf, err, sizeof err));
  assert_int_equal(vkp_buffer_size(buf), size);
  int fd = -1;
  size_t allocation_size = 0;
  CHECK_OK(vkp_buffer_export_fd(buf, &fd, &allocation_size, err, sizeof err));
  assert_true(fd >= 0);
  assert_true(allocation_size >= size);
  close(fd); /* the fd is ours; the buffer stays valid */
  int second = -1;
  CHECK_OK(vkp_buffer_export_fd(buf, &second, NULL, err, sizeof err));
  assert_true(second >= 0);
  close(second);
  vkp_buffer_destroy(buf);
}

static void test_exportable_timeline(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  vkp_sem* sem = NULL;
  err[0] = '\0';
  int rc = vkp_timeline_create(ctx, 0, 1, &sem, err, sizeof err);
  if (!vkp_has_semaphore_fd(ctx)) {
    assert_int_equal(rc, -1);
    assert_null(sem);
    assert_non_null(strstr(err, "VK_KHR_external_semaphore_fd"));
    return;
  }
  assert_int_equal(rc, 0);
  int fd = -1;
  CHECK_OK(vkp_timeline_export_fd(sem, &fd, err, sizeof err));
  assert_true(fd >= 0);
  close(fd);
  vkp_timeline_destroy(sem);
}

static void test_plain_timeline_is_not_exportable(void** state) {
  vkp_sem* sem = NULL;
  CHECK_OK(vkp_timeline_create(ctx_of(state), 0, 0, &sem, err, sizeof err));
  int fd = 123;
  assert_int_equal(vkp_timeline_export_fd(sem, &fd, err, sizeof err), -1);
  assert_int_equal(fd, -1);
  vkp_timeline_destroy(sem);
}

/* ---- work ---- */

static void test_fill_copy_readback(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t count = 300001; /* not a multiple of the workgroup size nor of the pattern period */
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  vkp_sem* timeline = NULL;
  uint64_t value = 0;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &host, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));

  const float* got = fill_and_read(ctx, buf, 0, count, 0.0f, 0.25f, host, 0, timeline, &value);
  assert_int_equal(pattern_mismatches(got, count, 0.0f, 0.25f), 0);
  assert_true(got[0] < 0.0f && got[1023] > 0.0f); /* negatives and positives: a Relu would matter */
  assert_true(got[0] == -128.0f && got[1023] == 127.75f);

  /* a second frame on the same objects sees the new values, not stale ones */
  got = fill_and_read(ctx, buf, 0, count, 3.0f, -0.5f, host, 0, timeline, &value);
  assert_int_equal(pattern_mismatches(got, count, 3.0f, -0.5f), 0);

  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

static void test_fill_at_offset_leaves_the_rest(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t total = 4096, first = 1000, count = 1500; /* byte offset 4000: not storage-aligned */
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  vkp_sem* timeline = NULL;
  uint64_t value = 10;
  CHECK_OK(vkp_buffer_create_exportable(ctx, total * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, total * sizeof(float), &host, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, value, 0, &timeline, err, sizeof err));

  const float* all = fill_and_read(ctx, buf, 0, total, 1.0f, 1.0f, host, 0, timeline, &value);
  assert_int_equal(pattern_mismatches(all, total, 1.0f, 1.0f), 0);
  const float* part = fill_and_read(ctx, buf, first * sizeof(float), count, -2.0f, 0.125f, host,
                                    first * sizeof(float), timeline, &value);
  assert_int_equal(pattern_mismatches(part, count, -2.0f, 0.125f), 0);
  /* copy the whole buffer back: outside [first, first + count) it still holds the first fill */
  vkp_sync copy = {.signal_sem = timeline, .signal_value = ++value};
  CHECK_OK(vkp_submit_copy(ctx, buf, 0, host, 0, total * sizeof(float), &copy, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, value, WAIT_NS, err, sizeof err));
  all = map_floats(host);
  assert_int_equal(pattern_mismatches(all, first, 1.0f, 1.0f), 0);
  for (size_t i = first + count; i < total; i++) assert_true(all[i] == vkp_fill_value(1.0f, 1.0f, i));

  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

/* The host stands in for CUDA: the fill waits on the GPU for a value signalled from outside the
 * queue. The host then waits only on the later value the copy signals (a Vulkan signal). */
static void test_gpu_waits_for_host_signal(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t count = 5000;
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  vkp_sem* gate = NULL;
  vkp_sem* done = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &host, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &gate, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &done, err, sizeof err));

  vkp_sync fill = {.wait_sem = gate, .wait_value = 5, .signal_sem = done, .signal_value = 1};
  vkp_sync copy = {.wait_sem = done, .wait_value = 1, .signal_sem = done, .signal_value = 2};
  CHECK_OK(vkp_submit_fill(ctx, buf, 0, count, 16.0f, 2.0f, &fill, err, sizeof err));
  CHECK_OK(vkp_submit_copy(ctx, buf, 0, host, 0, count * sizeof(float), &copy, err, sizeof err));

  /* gated: nothing may complete before the signal */
  err[0] = '\0';
  assert_int_equal(vkp_timeline_wait_host(done, 2, 50000000ull, err, sizeof err), -1);
  assert_non_null(strstr(err, "timed out"));

  CHECK_OK(vkp_timeline_signal_host(gate, 5, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(done, 2, WAIT_NS, err, sizeof err));
  assert_int_equal(pattern_mismatches(map_floats(host), count, 16.0f, 2.0f), 0);

  vkp_timeline_destroy(done);
  vkp_timeline_destroy(gate);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

/* More submissions than ring slots, none waited for by the caller: the ring must recycle slots only
 * once they are done, and the last fill must win. */
static void test_ring_recycles_slots(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t count = 2048;
  const int rounds = 3 * VKP_RING_SIZE + 1;
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &host, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  uint64_t value = 0;
  for (int i = 0; i < rounds; i++) {
    vkp_sync sync = {.wait_sem = timeline, .wait_value = value, .signal_sem = timeline, .signal_value = value + 1};
    CHECK_OK(vkp_submit_fill(ctx, buf, 0, count, (float)i, 1.0f, &sync, err, sizeof err));
    value++;
  }
  vkp_sync copy = {.wait_sem = timeline, .wait_value = value, .signal_sem = timeline, .signal_value = value + 1};
  CHECK_OK(vkp_submit_copy(ctx, buf, 0, host, 0, count * sizeof(float), &copy, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, value + 1, WAIT_NS, err, sizeof err));
  assert_int_equal(pattern_mismatches(map_floats(host), count, (float)(rounds - 1), 1.0f), 0);
  CHECK_OK(vkp_finish(ctx, WAIT_NS, err, sizeof err));

  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

static void test_upload_roundtrip(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t count = 777;
  vkp_buffer* buf = NULL;
  vkp_host_buffer* up = NULL;
  vkp_host_buffer* down = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &up, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &down, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  assert_int_equal(vkp_host_buffer_size(up), count * sizeof(float));

  void* p = NULL;
  CHECK_OK(vkp_host_buffer_map(up, &p, err, sizeof err));
  float* src = p;
  for (size_t i = 0; i < count; i++) src[i] = (float)i * -1.5f;
  CHECK_OK(vkp_host_buffer_flush(up, err, sizeof err));
  vkp_sync upload = {.signal_sem = timeline, .signal_value = 1};
  vkp_sync copy = {.wait_sem = timeline, .wait_value = 1, .signal_sem = timeline, .signal_value = 2};
  CHECK_OK(vkp_submit_upload(ctx, up, 0, buf, 0, count * sizeof(float), &upload, err, sizeof err));
  CHECK_OK(vkp_submit_copy(ctx, buf, 0, down, 0, count * sizeof(float), &copy, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 2, WAIT_NS, err, sizeof err));
  const float* got = map_floats(down);
  for (size_t i = 0; i < count; i++) assert_true(got[i] == (float)i * -1.5f);

  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(down);
  vkp_host_buffer_destroy(up);
  vkp_buffer_destroy(buf);
}

/* The flags a CUDA hand-off uses (release after the fill, acquire before the copy), here with
 * nothing in between: the data must come through unchanged. */
static void test_external_ownership_flags(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const size_t count = 4000;
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, count * sizeof(float), &host, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  vkp_sync fill = {.signal_sem = timeline, .signal_value = 1, .flags = VKP_RELEASE_TO_EXTERNAL};
  vkp_sync copy = {.wait_sem = timeline, .wait_value = 1, .signal_sem = timeline, .signal_value = 2,
                   .flags = VKP_ACQUIRE_FROM_EXTERNAL};
  CHECK_OK(vkp_submit_fill(ctx, buf, 0, count, -7.0f, 0.5f, &fill, err, sizeof err));
  CHECK_OK(vkp_submit_copy(ctx, buf, 0, host, 0, count * sizeof(float), &copy, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 2, WAIT_NS, err, sizeof err));
  assert_int_equal(pattern_mismatches(map_floats(host), count, -7.0f, 0.5f), 0);
  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

static void test_timestamps(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  uint64_t begin = 0, end = 0;
  if (!vkp_has_timestamps(ctx)) {
    print_message("no timestamps on this queue: skipped\n");
    return;
  }
  assert_int_equal(vkp_read_timestamps(ctx, 5, &begin, &end, err, sizeof err), -1); /* never written */
  assert_non_null(strstr(err, "never written"));

  const size_t count = 1u << 20;
  vkp_buffer* buf = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, count * sizeof(float), &buf, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  vkp_sync sync = {.signal_sem = timeline, .signal_value = 1, .write_timestamps = 1, .timestamp_slot = 5};
  CHECK_OK(vkp_submit_fill(ctx, buf, 0, count, 0.0f, 1.0f, &sync, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 1, WAIT_NS, err, sizeof err));
  CHECK_OK(vkp_read_timestamps(ctx, 5, &begin, &end, err, sizeof err));
  print_message("fill of %zu floats: %.3f ms of GPU time\n", count, (double)(end - begin) / 1e6);
  assert_true(end >= begin);
  assert_true(end - begin < 10000000000ull);

  vkp_sync bad_slot = {.write_timestamps = 1, .timestamp_slot = VKP_TIMESTAMP_SLOTS};
  assert_int_equal(vkp_submit_fill(ctx, buf, 0, count, 0.0f, 1.0f, &bad_slot, err, sizeof err), -1);
  vkp_timeline_destroy(timeline);
  vkp_buffer_destroy(buf);
}

static void test_argument_errors(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  vkp_buffer* buf = NULL;
  vkp_host_buffer* host = NULL;
  CHECK_OK(vkp_buffer_create_exportable(ctx, 1024, &buf, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, 512, &host, err, sizeof err));

  assert_int_equal(vkp_submit_fill(ctx, buf, 0, 257, 0.0f, 1.0f, NULL, err, sizeof err), -1); /* 1028 bytes */
  assert_non_null(strstr(err, "overrun"));
  assert_int_equal(vkp_submit_fill(ctx, buf, 2, 4, 0.0f, 1.0f, NULL, err, sizeof err), -1); /* misaligned */
  assert_int_equal(vkp_submit_fill(ctx, buf, 0, 0, 0.0f, 1.0f, NULL, err, sizeof err), -1);
  assert_int_equal(vkp_submit_fill(ctx, buf, 0, SIZE_MAX / 2, 0.0f, 1.0f, NULL, err, sizeof err), -1);
  assert_int_equal(vkp_submit_copy(ctx, buf, 0, host, 0, 1024, NULL, err, sizeof err), -1); /* host too small */
  assert_non_null(strstr(err, "host buffer"));
  assert_int_equal(vkp_submit_copy(ctx, buf, 1000, host, 0, 100, NULL, err, sizeof err), -1);
  assert_non_null(strstr(err, "device buffer"));
  vkp_sync bad_flags = {.flags = 0x100};
  assert_int_equal(vkp_submit_copy(ctx, buf, 0, host, 0, 16, &bad_flags, err, sizeof err), -1);
  vkp_buffer* none = NULL;
  assert_int_equal(vkp_buffer_create_exportable(ctx, 0, &none, err, sizeof err), -1);
  assert_null(none);
  /* a NULL error buffer is allowed */
  assert_int_equal(vkp_submit_fill(ctx, buf, 0, 0, 0.0f, 1.0f, NULL, NULL, 0), -1);

  /* nothing was submitted by the failures: the context still works */
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  uint64_t value = 0;
  const float* got = fill_and_read(ctx, buf, 0, 128, 0.0f, 1.0f, host, 0, timeline, &value);
  assert_int_equal(pattern_mismatches(got, 128, 0.0f, 1.0f), 0);
  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(host);
  vkp_buffer_destroy(buf);
}

/* ---- generic dispatch ---- */

static vkp_binding device_binding(vkp_buffer* b) { return (vkp_binding){.buffer = b}; }
static vkp_binding host_binding(vkp_host_buffer* h) { return (vkp_binding){.host = h}; }

/* test_add through the generic API, mixing a host input, a device input written by a fill, and a
 * device output read back by a copy; then host buffers only, with timestamps. Sums are exact. */
static void test_dispatch_add(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const uint32_t count = 1000; /* not a multiple of the local size (64) */
  const size_t bytes = count * sizeof(float);
  vkp_pipeline* add = NULL;
  vkp_host_buffer *a = NULL, *result = NULL;
  vkp_buffer *b = NULL, *sum = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, test_add_spirv, sizeof test_add_spirv, 3, sizeof(add_push), &add, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, bytes, &a, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, bytes, &result, err, sizeof err));
  CHECK_OK(vkp_buffer_create_exportable(ctx, bytes, &b, err, sizeof err));
  CHECK_OK(vkp_buffer_create_exportable(ctx, bytes, &sum, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));

  float* in = map_floats_rw(a);
  for (uint32_t i = 0; i < count; i++) in[i] = (float)i * 0.5f;
  CHECK_OK(vkp_host_buffer_flush(a, err, sizeof err));
  const add_push push = {count};
  const vkp_binding mixed[3] = {host_binding(a), device_binding(b), device_binding(sum)};
  vkp_sync fill = {.signal_sem = timeline, .signal_value = 1};
  vkp_sync dispatch = {.wait_sem = timeline, .wait_value = 1, .signal_sem = timeline, .signal_value = 2};
  vkp_sync copy = {.wait_sem = timeline, .wait_value = 2, .signal_sem = timeline, .signal_value = 3};
  CHECK_OK(vkp_submit_fill(ctx, b, 0, count, 0.0f, 0.25f, &fill, err, sizeof err));
  CHECK_OK(vkp_submit_dispatch(ctx, add, mixed, 3, &push, sizeof push, groups_of(count, 64), 1, 1, &dispatch, err,
                               sizeof err));
  CHECK_OK(vkp_submit_copy(ctx, sum, 0, result, 0, bytes, &copy, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 3, WAIT_NS, err, sizeof err));
  const float* got = map_floats(result);
  for (uint32_t i = 0; i < count; i++) assert_true(got[i] == (float)i * 0.5f + vkp_fill_value(0.0f, 0.25f, i));

  /* host buffers only (one bound twice), straight into the host-visible result, with timestamps */
  const vkp_binding host_only[3] = {host_binding(a), host_binding(a), host_binding(result)};
  vkp_sync timed = {.signal_sem = timeline, .signal_value = 4,
                    .write_timestamps = vkp_has_timestamps(ctx), .timestamp_slot = 7};
  CHECK_OK(vkp_submit_dispatch(ctx, add, host_only, 3, &push, sizeof push, groups_of(count, 64), 1, 1, &timed, err,
                               sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 4, WAIT_NS, err, sizeof err));
  got = map_floats(result);
  for (uint32_t i = 0; i < count; i++) assert_true(got[i] == (float)i);
  if (vkp_has_timestamps(ctx)) {
    uint64_t begin = 0, end = 0;
    CHECK_OK(vkp_read_timestamps(ctx, 7, &begin, &end, err, sizeof err));
    assert_true(end >= begin);
  }

  vkp_timeline_destroy(timeline);
  vkp_buffer_destroy(sum);
  vkp_buffer_destroy(b);
  vkp_host_buffer_destroy(result);
  vkp_host_buffer_destroy(a);
  vkp_pipeline_destroy(add);
}

static void expect_failure(int rc, const char* fragment) {
  assert_int_equal(rc, -1);
  if (!strstr(err, fragment)) fail_msg("error \"%s\" does not mention \"%s\"", err, fragment);
}

static void test_pipeline_argument_errors(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  static int sentinel;
  vkp_pipeline* p = (vkp_pipeline*)(void*)&sentinel; /* must be reset to NULL */
  const uint32_t not_spirv[4] = {0x12345678u, 0, 0, 0};
  const size_t size = sizeof test_add_spirv;
  expect_failure(vkp_pipeline_create(ctx, NULL, size, 3, 4, &p, err, sizeof err), "no SPIR-V");
  assert_null(p);
  expect_failure(vkp_pipeline_create(ctx, test_add_spirv, size - 2, 3, 4, &p, err, sizeof err), "32-bit words");
  expect_failure(vkp_pipeline_create(ctx, not_spirv, sizeof not_spirv, 3, 4, &p, err, sizeof err), "not SPIR-V");
  expect_failure(vkp_pipeline_create(ctx, test_add_spirv, size, 0, 4, &p, err, sizeof err), "n_buffers 0");
  expect_failure(vkp_pipeline_create(ctx, test_add_spirv, size, VKP_MAX_BINDINGS + 1, 4, &p, err, sizeof err),
                 "n_buffers");
  expect_failure(vkp_pipeline_create(ctx, test_add_spirv, size, 3, 132, &p, err, sizeof err), "push_size 132");
  expect_failure(vkp_pipeline_create(ctx, test_add_spirv, size, 3, 6, &p, err, sizeof err), "push_size 6");
  assert_int_equal(vkp_pipeline_create(ctx, NULL, 0, 3, 4, &p, NULL, 0), -1); /* NULL err is fine */
  vkp_pipeline_destroy(NULL);
}

static void test_dispatch_argument_errors(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  vkp_pipeline* add = NULL;
  vkp_host_buffer* h = NULL;
  vkp_buffer* d = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, test_add_spirv, sizeof test_add_spirv, 3, sizeof(add_push), &add, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, 256, &h, err, sizeof err));
  CHECK_OK(vkp_buffer_create_exportable(ctx, 256, &d, err, sizeof err));
  const add_push push = {64};
  const vkp_binding good[3] = {host_binding(h), device_binding(d), host_binding(h)};
  const vkp_binding both[3] = {host_binding(h), {.buffer = d, .host = h}, host_binding(h)};
  const vkp_binding neither[3] = {host_binding(h), {0}, host_binding(h)};

  expect_failure(vkp_submit_dispatch(ctx, add, good, 2, &push, sizeof push, 1, 1, 1, NULL, err, sizeof err),
                 "2 bindings given");
  expect_failure(vkp_submit_dispatch(ctx, add, NULL, 3, &push, sizeof push, 1, 1, 1, NULL, err, sizeof err), "NULL");
  expect_failure(vkp_submit_dispatch(ctx, add, both, 3, &push, sizeof push, 1, 1, 1, NULL, err, sizeof err),
                 "binding 1 must name exactly one");
  expect_failure(vkp_submit_dispatch(ctx, add, neither, 3, &push, sizeof push, 1, 1, 1, NULL, err, sizeof err),
                 "binding 1 must name exactly one");
  expect_failure(vkp_submit_dispatch(ctx, add, good, 3, &push, 8, 1, 1, 1, NULL, err, sizeof err), "8 push-constant");
  expect_failure(vkp_submit_dispatch(ctx, add, good, 3, NULL, sizeof push, 1, 1, 1, NULL, err, sizeof err), "NULL");
  expect_failure(vkp_submit_dispatch(ctx, add, good, 3, &push, sizeof push, 0, 1, 1, NULL, err, sizeof err),
                 "0 groups along x");
  expect_failure(vkp_submit_dispatch(ctx, add, good, 3, &push, sizeof push, 1, 1, UINT32_MAX, NULL, err, sizeof err),
                 "along z");
  vkp_sync bad_slot = {.write_timestamps = 1, .timestamp_slot = VKP_TIMESTAMP_SLOTS};
  assert_int_equal(vkp_submit_dispatch(ctx, add, good, 3, &push, sizeof push, 1, 1, 1, &bad_slot, err, sizeof err), -1);
  expect_failure(vkp_submit_dispatch(NULL, add, good, 3, &push, sizeof push, 1, 1, 1, NULL, err, sizeof err), "NULL");

  /* nothing was submitted by the failures: a good dispatch still works (sum = h + d into h) */
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  vkp_sync sync = {.signal_sem = timeline, .signal_value = 1};
  CHECK_OK(vkp_submit_dispatch(ctx, add, good, 3, &push, sizeof push, 1, 1, 1, &sync, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 1, WAIT_NS, err, sizeof err));
  vkp_timeline_destroy(timeline);
  vkp_buffer_destroy(d);
  vkp_host_buffer_destroy(h);
  vkp_pipeline_destroy(add);
}

/* ---- the demo's shaders ---- */

typedef struct scene_target {
  vkp_host_buffer *clean, *noisy;
} scene_target;

/* renders frame into host buffers (plus `spare` floats each, prefilled with a sentinel) and waits */
static void render_scene(vkp_ctx* ctx, vkp_pipeline* scene, uint32_t w, uint32_t h, uint32_t frame, float sigma,
                         size_t spare, scene_target* t) {
  const size_t floats = 3u * w * h + spare;
  CHECK_OK(vkp_host_buffer_create(ctx, floats * sizeof(float), &t->clean, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, floats * sizeof(float), &t->noisy, err, sizeof err));
  float* clean = map_floats_rw(t->clean);
  float* noisy = map_floats_rw(t->noisy);
  for (size_t i = 0; i < floats; i++) clean[i] = noisy[i] = -7.0f;
  CHECK_OK(vkp_host_buffer_flush(t->clean, err, sizeof err));
  CHECK_OK(vkp_host_buffer_flush(t->noisy, err, sizeof err));
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  const scene_push push = {w, h, frame, sigma};
  const vkp_binding bindings[2] = {host_binding(t->clean), host_binding(t->noisy)};
  vkp_sync sync = {.signal_sem = timeline, .signal_value = 1};
  CHECK_OK(vkp_submit_dispatch(ctx, scene, bindings, 2, &push, sizeof push, groups_of(w, 16), groups_of(h, 16), 1,
                               &sync, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 1, WAIT_NS, err, sizeof err));
  vkp_timeline_destroy(timeline);
}

static void free_scene(scene_target* t) {
  vkp_host_buffer_destroy(t->noisy);
  vkp_host_buffer_destroy(t->clean);
}

static size_t count_outside_unit(const float* v, size_t count) {
  size_t outside = 0;
  for (size_t i = 0; i < count; i++) outside += !(v[i] >= 0.0f && v[i] <= 1.0f);
  return outside;
}

/* The noise is zero-mean with std noise_sigma, unclamped; clean stays in [0, 1]; sigma 0 gives
 * noisy == clean; a frame renders identically twice and differently from a later frame. */
static void test_scene_statistics(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const uint32_t w = 64, h = 64;
  const size_t count = 3u * w * h;
  const float sigma = 0.1f;
  vkp_pipeline* scene = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, scene_spirv, sizeof scene_spirv, 2, sizeof(scene_push), &scene, err, sizeof err));
  scene_target a, again, later, quiet;
  render_scene(ctx, scene, w, h, 7, sigma, 0, &a);
  const float* clean = map_floats(a.clean);
  const float* noisy = map_floats(a.noisy);

  assert_int_equal(count_outside_unit(clean, count), 0);
  size_t changed = 0;
  double sum = 0.0, sum_sq = 0.0;
  for (size_t i = 0; i < count; i++) {
    double d = (double)noisy[i] - (double)clean[i];
    changed += noisy[i] != clean[i];
    sum += d;
    sum_sq += d * d;
  }
  double mean = sum / (double)count;
  double std = sqrt(sum_sq / (double)count - mean * mean);
  print_message("scene 64x64 frame 7, sigma %.2f: noise mean %+.5f std %.5f, %zu of %zu values changed, "
                "%zu noisy values outside [0, 1]\n",
                (double)sigma, mean, std, changed, count, count_outside_unit(noisy, count));
  assert_true(changed > count * 99 / 100);
  assert_true(fabs(mean) < 0.02);
  assert_true(fabs(std - sigma) < 0.3 * sigma);
  assert_true(count_outside_unit(noisy, count) > 0); /* not clamped */

  /* recognisable: the top row is sky (bluer than red on average) */
  double top_r = 0.0, top_b = 0.0;
  for (uint32_t x = 0; x < w; x++) {
    top_r += clean[x];
    top_b += clean[2u * w * h + x];
  }
  assert_true(top_b > top_r);

  render_scene(ctx, scene, w, h, 7, sigma, 0, &again);
  assert_memory_equal(map_floats(again.clean), clean, count * sizeof(float));
  assert_memory_equal(map_floats(again.noisy), noisy, count * sizeof(float));

  render_scene(ctx, scene, w, h, 37, sigma, 0, &later); /* half a second later */
  const float* moved = map_floats(later.clean);
  size_t differ = 0;
  for (size_t i = 0; i < count; i++) differ += fabsf(moved[i] - clean[i]) > 0.01f;
  print_message("frame 37 vs frame 7: %zu of %zu clean values differ by > 0.01\n", differ, count);
  assert_true(differ > count / 20);

  render_scene(ctx, scene, w, h, 7, 0.0f, 0, &quiet);
  assert_memory_equal(map_floats(quiet.noisy), map_floats(quiet.clean), count * sizeof(float));
  assert_memory_equal(map_floats(quiet.clean), clean, count * sizeof(float));

  free_scene(&quiet);
  free_scene(&later);
  free_scene(&again);
  free_scene(&a);
  vkp_pipeline_destroy(scene);
}

/* sizes that are not multiples of 16: nothing is written past 3*W*H */
static void test_scene_odd_size_stays_in_bounds(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const uint32_t w = 37, h = 21;
  const size_t count = 3u * w * h, spare = 64;
  vkp_pipeline* scene = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, scene_spirv, sizeof scene_spirv, 2, sizeof(scene_push), &scene, err, sizeof err));
  scene_target t;
  render_scene(ctx, scene, w, h, 3, 0.05f, spare, &t);
  const float* clean = map_floats(t.clean);
  const float* noisy = map_floats(t.noisy);
  assert_int_equal(count_outside_unit(clean, count), 0);
  for (size_t i = count; i < count + spare; i++) assert_true(clean[i] == -7.0f && noisy[i] == -7.0f);
  free_scene(&t);
  vkp_pipeline_destroy(scene);
}

#define DIVIDER 0xFF202020u

static uint32_t pack_rgba(uint32_t r, uint32_t g, uint32_t b) { return r | g << 8 | b << 16 | 0xFFu << 24; }

static void fill_planes(float* nchw, size_t plane, float r, float g, float b) {
  for (size_t i = 0; i < plane; i++) {
    nchw[i] = r;
    nchw[plane + i] = g;
    nchw[2 * plane + i] = b;
  }
}

/* Constant inputs: 0.5 -> 128 (byte = floor(v * 255 + 0.5)), 0.25 -> 64, clamping below 0 and above
 * 1, NaN -> 0, R in the low byte, the divider at columns W-1 and W, nothing written past [H][2W]. */
static void test_present_constant_input(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const uint32_t w = 20, h = 8, spare = 16;
  const size_t plane = (size_t)w * h, pixels = 2 * plane;
  vkp_pipeline* present = NULL;
  vkp_host_buffer *left = NULL, *right = NULL, *out = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, present_spirv, sizeof present_spirv, 3, sizeof(present_push), &present, err,
                               sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, 3 * plane * sizeof(float), &left, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, 3 * plane * sizeof(float), &right, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, (pixels + spare) * sizeof(uint32_t), &out, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));
  fill_planes(map_floats_rw(left), plane, 0.5f, -3.0f, 7.0f);
  fill_planes(map_floats_rw(right), plane, 0.25f, 1.0f, NAN);
  uint32_t* words = (uint32_t*)(void*)map_floats_rw(out);
  for (size_t i = 0; i < pixels + spare; i++) words[i] = 0xDEADBEEFu;
  CHECK_OK(vkp_host_buffer_flush(left, err, sizeof err));
  CHECK_OK(vkp_host_buffer_flush(right, err, sizeof err));
  CHECK_OK(vkp_host_buffer_flush(out, err, sizeof err));

  const present_push push = {w, h};
  const vkp_binding bindings[3] = {host_binding(left), host_binding(right), host_binding(out)};
  vkp_sync sync = {.signal_sem = timeline, .signal_value = 1};
  CHECK_OK(vkp_submit_dispatch(ctx, present, bindings, 3, &push, sizeof push, groups_of(2 * w, 16), groups_of(h, 16),
                               1, &sync, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 1, WAIT_NS, err, sizeof err));
  const uint32_t* got = map_words(out);
  const uint32_t want_left = pack_rgba(128, 0, 255), want_right = pack_rgba(64, 255, 0);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < 2 * w; x++) {
      uint32_t want = (x == w - 1 || x == w) ? DIVIDER : x < w ? want_left : want_right;
      if (got[y * 2 * w + x] != want) fail_msg("pixel (%u, %u): 0x%08x, want 0x%08x", x, y, got[y * 2 * w + x], want);
    }
  const uint8_t* bytes = (const uint8_t*)got; /* memory order R, G, B, A on this little-endian host */
  assert_int_equal(bytes[0], 128);
  assert_int_equal(bytes[1], 0);
  assert_int_equal(bytes[2], 255);
  assert_int_equal(bytes[3], 255);
  for (size_t i = pixels; i < pixels + spare; i++) assert_int_equal(got[i], 0xDEADBEEFu);

  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(out);
  vkp_host_buffer_destroy(right);
  vkp_host_buffer_destroy(left);
  vkp_pipeline_destroy(present);
}

static uint32_t to_byte(float v) {
  float c = v != v ? 0.0f : v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
  return (uint32_t)floorf(c * 255.0f + 0.5f);
}

static int near_byte(uint32_t got, uint32_t want) { return got + 1 >= want && got <= want + 1; }

/* The demo's chain on device buffers: scene -> (released to the "external" API and acquired back, the
 * flags a CUDA hop uses) -> present into a host buffer. Compared with a host-buffer render of the same
 * frame, within one unit per byte (fused multiply-adds may round differently). */
static void test_scene_to_present_on_device_buffers(void** state) {
  vkp_ctx* ctx = ctx_of(state);
  const uint32_t w = 48, h = 32;
  const size_t plane = (size_t)w * h, bytes = 3 * plane * sizeof(float);
  vkp_pipeline *scene = NULL, *present = NULL;
  vkp_buffer *clean = NULL, *noisy = NULL;
  vkp_host_buffer* out = NULL;
  vkp_sem* timeline = NULL;
  CHECK_OK(vkp_pipeline_create(ctx, scene_spirv, sizeof scene_spirv, 2, sizeof(scene_push), &scene, err, sizeof err));
  CHECK_OK(vkp_pipeline_create(ctx, present_spirv, sizeof present_spirv, 3, sizeof(present_push), &present, err,
                               sizeof err));
  CHECK_OK(vkp_buffer_create_exportable(ctx, bytes, &clean, err, sizeof err));
  CHECK_OK(vkp_buffer_create_exportable(ctx, bytes, &noisy, err, sizeof err));
  CHECK_OK(vkp_host_buffer_create(ctx, 2 * plane * sizeof(uint32_t), &out, err, sizeof err));
  CHECK_OK(vkp_timeline_create(ctx, 0, 0, &timeline, err, sizeof err));

  const scene_push sp = {w, h, 5, 0.08f};
  const present_push pp = {w, h};
  const vkp_binding scene_bindings[2] = {device_binding(clean), device_binding(noisy)};
  const vkp_binding present_bindings[3] = {device_binding(noisy), device_binding(clean), host_binding(out)};
  vkp_sync render = {.signal_sem = timeline, .signal_value = 1, .flags = VKP_RELEASE_TO_EXTERNAL};
  vkp_sync show = {.wait_sem = timeline, .wait_value = 1, .signal_sem = timeline, .signal_value = 2,
                   .flags = VKP_ACQUIRE_FROM_EXTERNAL};
  CHECK_OK(vkp_submit_dispatch(ctx, scene, scene_bindings, 2, &sp, sizeof sp, groups_of(w, 16), groups_of(h, 16), 1,
                               &render, err, sizeof err));
  CHECK_OK(vkp_submit_dispatch(ctx, present, present_bindings, 3, &pp, sizeof pp, groups_of(2 * w, 16),
                               groups_of(h, 16), 1, &show, err, sizeof err));
  CHECK_OK(vkp_timeline_wait_host(timeline, 2, WAIT_NS, err, sizeof err));

  scene_target ref;
  render_scene(ctx, scene, w, h, 5, 0.08f, 0, &ref);
  const float* ref_clean = map_floats(ref.clean);
  const float* ref_noisy = map_floats(ref.noisy);
  const uint32_t* got = map_words(out);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < 2 * w; x++) {
      uint32_t pixel = got[y * 2 * w + x];
      if (x == w - 1 || x == w) {
        assert_int_equal(pixel, DIVIDER);
        continue;
      }
      const float* src = x < w ? ref_noisy : ref_clean;
      size_t i = (size_t)y * w + (x < w ? x : x - w);
      for (int c = 0; c < 3; c++) {
        uint32_t want = to_byte(src[c * plane + i]), byte = (pixel >> (8 * c)) & 0xFFu;
        if (!near_byte(byte, want)) fail_msg("pixel (%u, %u) channel %d: %u, want %u", x, y, c, byte, want);
      }
      assert_int_equal(pixel >> 24, 255);
    }

  free_scene(&ref);
  vkp_timeline_destroy(timeline);
  vkp_host_buffer_destroy(out);
  vkp_buffer_destroy(noisy);
  vkp_buffer_destroy(clean);
  vkp_pipeline_destroy(present);
  vkp_pipeline_destroy(scene);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_identity),
      cmocka_unit_test(test_unknown_uuid_lists_devices),
      cmocka_unit_test(test_semaphore_fd_requirement),
      cmocka_unit_test(test_exportable_buffer_fd),
      cmocka_unit_test(test_exportable_timeline),
      cmocka_unit_test(test_plain_timeline_is_not_exportable),
      cmocka_unit_test(test_fill_copy_readback),
      cmocka_unit_test(test_fill_at_offset_leaves_the_rest),
      cmocka_unit_test(test_gpu_waits_for_host_signal),
      cmocka_unit_test(test_ring_recycles_slots),
      cmocka_unit_test(test_upload_roundtrip),
      cmocka_unit_test(test_external_ownership_flags),
      cmocka_unit_test(test_timestamps),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_dispatch_add),
      cmocka_unit_test(test_pipeline_argument_errors),
      cmocka_unit_test(test_dispatch_argument_errors),
      cmocka_unit_test(test_scene_statistics),
      cmocka_unit_test(test_scene_odd_size_stays_in_bounds),
      cmocka_unit_test(test_present_constant_input),
      cmocka_unit_test(test_scene_to_present_on_device_buffers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
