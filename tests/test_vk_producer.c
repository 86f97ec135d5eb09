/* gfxep — the headless Vulkan producer (tests/vk_producer.h) on whatever Vulkan device is present:
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

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_producer.h"

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
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
