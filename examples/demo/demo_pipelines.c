/* gfxep demo — the two pipelines (zero-copy interop, copy through host memory), the numeric check of a
 * frame against ORT's CPU EP, and the training-data dump.
 *
 * The host waits only on values Vulkan itself signals (never on a value CUDA signals: such waits hung
 * on the H200 machine), and every wait is bounded by the watchdog.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo.h"

#define WAIT_NS 10000000000ull
#define WARMUP_FRAMES 3

typedef struct push_scene {
  uint32_t width, height, frame;
  float noise_sigma;
} push_scene;

typedef struct push_present {
  uint32_t width, height;
} push_present;

typedef struct slot {
  vkp_buffer *clean, *noisy, *out, *rgba;
  vkp_host_buffer* rgba_host; /* the composed image of a kept frame lands here */
  OrtExternalMemoryHandle *noisy_mem, *out_mem;
  OrtValue *x, *y;
  uint64_t value; /* the timeline value of the frame in this slot (0: none) */
  uint64_t submitted_ns; /* host clock when the frame's render was submitted */
  uint32_t frame; /* the frame's number in the animation */
  int kept;
} slot;

typedef struct pipeline {
  demo_ctx* c;
  const demo_options* o;
  slot slots[DEMO_MAX_IN_FLIGHT];
  int n_slots;
  vkp_sem *ready, *done, *presented; /* A: Vulkan -> gfxep, B: gfxep -> Vulkan, C: Vulkan's own */
  OrtExternalSemaphoreHandle *ready_h, *done_h;
  OrtSyncStream* stream;
  OrtRunOptions* run_options;
  vkp_host_buffer *host_in, *host_out; /* the copy-through-host pipeline's staging */
  demo_keep keep[64];
  int n_keep;
  char err[1024];
} pipeline;

static size_t frame_bytes(const demo_ctx* c) { return (size_t)c->width * c->height * 3 * sizeof(float); }
static size_t rgba_bytes(const demo_ctx* c) { return (size_t)c->width * 2 * c->height * sizeof(uint32_t); }

static int fail(pipeline* p, const char* what) {
  fprintf(stderr, "\ngfxep-demo: %s: %s\n", what, p->err);
  return -1;
}

static int ort_fail(pipeline* p, OrtStatus* s, const char* what) {
  if (!s) return 0;
  snprintf(p->err, sizeof p->err, "%s", p->c->k.api->GetErrorMessage(s));
  p->c->k.api->ReleaseStatus(s);
  return fail(p, what);
}

/* ---- resources ---- */

static int import_buffer(pipeline* p, vkp_buffer* b, OrtExternalMemoryHandle** mem, OrtValue** value) {
  demo_ctx* c = p->c;
  int fd = -1;
  size_t alloc = 0;
  if (vkp_buffer_export_fd(b, &fd, &alloc, p->err, sizeof p->err)) return fail(p, "exporting a buffer");
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                   .handle_type = ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD,
                                   .native_handle = (void*)(intptr_t)fd,
                                   .size_bytes = alloc,
                                   .offset_bytes = 0};
  OrtStatus* s = c->ia->ImportMemory(c->importer, &d, mem);
  close(fd); /* gfxep imported a duplicate: the fd stays the application's to close */
  if (ort_fail(p, s, "ImportMemory")) return -1;
  int64_t shape[4] = {1, 3, c->height, c->width};
  OrtExternalTensorDescriptor t = {.version = ORT_API_VERSION, .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                   .shape = shape, .rank = 4, .offset_bytes = 0};
  return ort_fail(p, c->ia->CreateTensorFromMemory(c->importer, *mem, &t, value), "CreateTensorFromMemory");
}

static int import_semaphore(pipeline* p, vkp_sem* sem, OrtExternalSemaphoreHandle** h) {
  int fd = -1;
  if (vkp_timeline_export_fd(sem, &fd, p->err, sizeof p->err)) return fail(p, "exporting a semaphore");
  OrtExternalSemaphoreDescriptor d = {.version = ORT_API_VERSION,
                                      .type = ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD,
                                      .native_handle = (void*)(intptr_t)fd};
  OrtStatus* s = p->c->ia->ImportSemaphore(p->c->importer, &d, h);
  close(fd);
  return ort_fail(p, s, "ImportSemaphore");
}

static int pipeline_create(pipeline* p, demo_ctx* c, const demo_options* o, int interop) {
  memset(p, 0, sizeof *p);
  p->c = c;
  p->o = o;
  p->n_slots = interop ? o->in_flight : 1;
  demo_arm("allocating frame buffers", 60);
  for (int i = 0; i < p->n_slots; i++) {
    slot* s = &p->slots[i];
    if (vkp_buffer_create_exportable(c->vk, frame_bytes(c), &s->clean, p->err, sizeof p->err) ||
        vkp_buffer_create_exportable(c->vk, frame_bytes(c), &s->noisy, p->err, sizeof p->err) ||
        vkp_buffer_create_exportable(c->vk, frame_bytes(c), &s->out, p->err, sizeof p->err) ||
        vkp_buffer_create_exportable(c->vk, rgba_bytes(c), &s->rgba, p->err, sizeof p->err) ||
        vkp_host_buffer_create(c->vk, rgba_bytes(c), &s->rgba_host, p->err, sizeof p->err))
      return fail(p, "allocating frame buffers");
    if (interop && (import_buffer(p, s->noisy, &s->noisy_mem, &s->x) || import_buffer(p, s->out, &s->out_mem, &s->y)))
      return -1;
  }
  const int semaphores = interop && c->use_semaphores;
  if (vkp_timeline_create(c->vk, 0, semaphores, &p->ready, p->err, sizeof p->err) ||
      vkp_timeline_create(c->vk, 0, semaphores, &p->done, p->err, sizeof p->err) ||
      vkp_timeline_create(c->vk, 0, 0, &p->presented, p->err, sizeof p->err))
    return fail(p, "creating timeline semaphores");
  if (interop) {
    if (semaphores && (import_semaphore(p, p->ready, &p->ready_h) || import_semaphore(p, p->done, &p->done_h)))
      return -1;
    if (ort_fail(p, c->k.api->CreateSyncStreamForEpDevice(c->device, NULL, &p->stream), "stream") ||
        ort_fail(p, c->k.api->CreateRunOptions(&p->run_options), "run options") ||
        ort_fail(p, c->k.api->AddRunConfigEntry(p->run_options, "disable_synchronize_execution_providers", "1"),
                 "run options"))
      return -1;
    c->k.api->RunOptionsSetSyncStream(p->run_options, p->stream);
  } else if (vkp_host_buffer_create(c->vk, frame_bytes(c), &p->host_in, p->err, sizeof p->err) ||
             vkp_host_buffer_create(c->vk, frame_bytes(c), &p->host_out, p->err, sizeof p->err)) {
    return fail(p, "allocating staging buffers");
  }
  return 0;
}

/* Release in order: GPU work finished (the caller waited on the last Vulkan-signalled value), then
 * tensors, imports, stream, then the Vulkan objects. */
static void pipeline_destroy(pipeline* p) {
  demo_ctx* c = p->c;
  for (int i = 0; i < p->n_slots; i++) {
    slot* s = &p->slots[i];
    if (s->x) c->k.api->ReleaseValue(s->x);
    if (s->y) c->k.api->ReleaseValue(s->y);
    if (s->noisy_mem) c->ia->ReleaseExternalMemoryHandle(s->noisy_mem);
    if (s->out_mem) c->ia->ReleaseExternalMemoryHandle(s->out_mem);
  }
  if (p->ready_h) c->ia->ReleaseExternalSemaphoreHandle(p->ready_h);
  if (p->done_h) c->ia->ReleaseExternalSemaphoreHandle(p->done_h);
  if (p->run_options) c->k.api->ReleaseRunOptions(p->run_options);
  if (p->stream) c->k.api->ReleaseSyncStream(p->stream);
  vkp_finish(c->vk, WAIT_NS, p->err, sizeof p->err);
  for (int i = 0; i < p->n_slots; i++) {
    slot* s = &p->slots[i];
    if (s->clean) vkp_buffer_destroy(s->clean);
    if (s->noisy) vkp_buffer_destroy(s->noisy);
    if (s->out) vkp_buffer_destroy(s->out);
    if (s->rgba) vkp_buffer_destroy(s->rgba);
    if (s->rgba_host) vkp_host_buffer_destroy(s->rgba_host);
  }
  if (p->host_in) vkp_host_buffer_destroy(p->host_in);
  if (p->host_out) vkp_host_buffer_destroy(p->host_out);
  if (p->ready) vkp_timeline_destroy(p->ready);
  if (p->done) vkp_timeline_destroy(p->done);
  if (p->presented) vkp_timeline_destroy(p->presented);
  for (int i = 0; i < p->n_keep; i++) free(p->keep[i].rgba);
}

/* ---- recording ---- */

static uint32_t groups(uint32_t n) { return (n + 15) / 16; }

static int submit_scene(pipeline* p, slot* s, uint32_t frame, const vkp_sync* sync) {
  const demo_ctx* c = p->c;
  push_scene push = {c->width, c->height, frame, p->o->noise};
  vkp_binding b[2] = {{.buffer = s->clean}, {.buffer = s->noisy}};
  if (vkp_submit_dispatch(c->vk, c->scene, b, 2, &push, sizeof push, groups(c->width), groups(c->height), 1, sync,
                          p->err, sizeof p->err))
    return fail(p, "rendering");
  return 0;
}

static int submit_present(pipeline* p, slot* s, int to_host, const vkp_sync* sync) {
  const demo_ctx* c = p->c;
  push_present push = {c->width, c->height};
  vkp_binding b[3] = {{.buffer = s->noisy}, {.buffer = s->out}, {.buffer = to_host ? NULL : s->rgba,
                                                                   .host = to_host ? s->rgba_host : NULL}};
  if (vkp_submit_dispatch(c->vk, c->present, b, 3, &push, sizeof push, groups(2 * c->width), groups(c->height), 1,
                          sync, p->err, sizeof p->err))
    return fail(p, "presenting");
  return 0;
}

static int keep_frame(pipeline* p, slot* s, int frame) {
  if (p->n_keep == (int)(sizeof p->keep / sizeof p->keep[0])) return 0;
  void* src = NULL;
  if (vkp_host_buffer_map(s->rgba_host, &src, p->err, sizeof p->err)) return fail(p, "reading a kept frame");
  uint32_t* copy = malloc(rgba_bytes(p->c));
  if (!copy) return 0;
  memcpy(copy, src, rgba_bytes(p->c));
  p->keep[p->n_keep++] = (demo_keep){frame, copy};
  return 0;
}

/* gfxep's frames completed since the last call (each Run's wait, inference and signal on the GPU). */
static void record_gfxep_frames(demo_ctx* c, demo_report* r) {
  if (!c->read_frames) return;
  gfxep_frame_timing f[16];
  int n;
  while ((n = c->read_frames("gfxep-demo", c->last_frame, f, 16)) > 0) {
    for (int i = 0; i < n; i++) {
      c->last_frame = f[i].frame;
      if (!r || !(f[i].flags & GFXEP_FRAME_COMPLETE)) continue;
      if (f[i].gpu_wait_us >= 0 && f[i].n_waits) series_add(&r->gfxep_wait_us, f[i].gpu_wait_us);
      series_add(&r->gfxep_run_us, f[i].gpu_run_us);
      if (f[i].n_signals) series_add(&r->gfxep_signal_us, f[i].gpu_signal_us);
      series_add(&r->gfxep_total_us, f[i].gpu_total_us);
    }
  }
}

static void record_times(pipeline* p, int slot_index, demo_report* r) {
  uint64_t rb, re, pb, pe;
  if (vkp_read_timestamps(p->c->vk, (uint32_t)(2 * slot_index), &rb, &re, p->err, sizeof p->err) ||
      vkp_read_timestamps(p->c->vk, (uint32_t)(2 * slot_index + 1), &pb, &pe, p->err, sizeof p->err))
    return;
  series_add(&r->render_us, (double)(re - rb) / 1e3);
  series_add(&r->between_us, (double)(pb - re) / 1e3);
  series_add(&r->present_us, (double)(pe - pb) / 1e3);
  series_add(&r->round_trip_us, (double)(pe - rb) / 1e3);
}

/* ---- the zero-copy pipeline ---- */

/* Queues frame `frame` into slot i with timeline value v: render (signals A=v), gfxep's Wait/Run/Signal
 * (B=v), present (waits B=v on the GPU, signals C=v). With gfxep on the renderer's own queue and no
 * semaphores to share, render, Run and present are ordered by that queue alone; the buffers then
 * never leave the queue family, so no ownership transfer either. */
static int interop_frame(pipeline* p, int i, uint64_t v, uint32_t frame, int kept, demo_report* r) {
  demo_ctx* c = p->c;
  slot* s = &p->slots[i];
  const int sems = c->use_semaphores;
  const unsigned release = c->one_queue ? 0 : VKP_RELEASE_TO_EXTERNAL, acquire = c->one_queue ? 0 : VKP_ACQUIRE_FROM_EXTERNAL;
  vkp_sync render = {.signal_sem = sems ? p->ready : NULL, .signal_value = v, .flags = release,
                     .write_timestamps = vkp_has_timestamps(c->vk), .timestamp_slot = (uint32_t)(2 * i)};
  s->submitted_ns = ortkit_now_ns();
  if (submit_scene(p, s, frame, &render)) return -1;
  const char* in_names[] = {c->input_name};
  const char* out_names[] = {c->output_name};
  uint64_t t0 = ortkit_now_ns();
  if ((sems && ort_fail(p, c->ia->WaitSemaphore(c->importer, p->ready_h, p->stream, v), "WaitSemaphore")) ||
      ort_fail(p, c->k.api->Run(c->session, p->run_options, in_names, (const OrtValue* const*)&s->x, 1, out_names, 1,
                                &s->y),
               "Run") ||
      (sems && ort_fail(p, c->ia->SignalSemaphore(c->importer, p->done_h, p->stream, v), "SignalSemaphore")))
    return -1;
  if (r) series_add(&r->ort_us, (double)(ortkit_now_ns() - t0) / 1e3);
  vkp_sync present = {.wait_sem = sems ? p->done : NULL, .wait_value = v, .signal_sem = p->presented,
                      .signal_value = v, .flags = acquire, .write_timestamps = vkp_has_timestamps(c->vk),
                      .timestamp_slot = (uint32_t)(2 * i + 1)};
  if (submit_present(p, s, kept, &present)) return -1;
  s->value = v;
  s->frame = frame;
  s->kept = kept;
  return 0;
}

/* Waits (Vulkan-signalled value) until slot i is free again; collects its frame's results. */
static int interop_reclaim(pipeline* p, int i, demo_report* r, int measure) {
  slot* s = &p->slots[i];
  if (!s->value) return 0;
  demo_arm("waiting for a frame to come back", 10);
  uint64_t t0 = ortkit_now_ns();
  if (vkp_timeline_wait_host(p->presented, s->value, WAIT_NS, p->err, sizeof p->err))
    return fail(p, "waiting for a presented frame");
  if (measure) {
    uint64_t now = ortkit_now_ns();
    series_add(&r->ring_wait_us, (double)(now - t0) / 1e3);
    /* the frame's latency: from its render's submit to the host seeing it presented, queued behind
     * the frames in flight before it */
    series_add(&r->frame_us, (double)(now - s->submitted_ns) / 1e3);
    record_times(p, i, r);
  }
  record_gfxep_frames(p->c, measure ? r : NULL); /* warm-up frames are read and dropped */
  if (s->kept && keep_frame(p, s, (int)s->frame)) return -1;
  s->value = 0;
  return 0;
}

int demo_run_interop(demo_ctx* c, const demo_options* o, demo_report* r) {
  pipeline p;
  int rc = pipeline_create(&p, c, o, 1);
  uint64_t v = 0;
  /* warm-up, one frame at a time: the first Run for a frame size chooses cuDNN algorithms and
   * allocates its workspace, which may synchronize; no frame loop should contain that */
  for (int w = 0; w < WARMUP_FRAMES && !rc; w++) {
    rc = interop_frame(&p, 0, ++v, 0, 0, NULL);
    if (!rc) rc = interop_reclaim(&p, 0, r, 0);
  }
  uint64_t start = ortkit_now_ns(), last_print = start;
  int done = 0;
  for (int f = 0; f < c->frames && !rc && !demo_stop_requested(); f++) {
    int i = f % p.n_slots;
    rc = interop_reclaim(&p, i, r, 1);
    if (rc) break;
    demo_arm("submitting a frame", 10);
    uint64_t t0 = ortkit_now_ns();
    rc = interop_frame(&p, i, ++v, (uint32_t)f, f % o->every == 0, r);
    series_add(&r->cpu_us, (double)(ortkit_now_ns() - t0) / 1e3);
    done++;
    uint64_t now = ortkit_now_ns();
    if (now - last_print > 500000000ull) {
      demo_progress("interop", done, c->frames, done / ((double)(now - start) / 1e9), series_mean(&r->cpu_us));
      last_print = now;
    }
  }
  for (int i = 0; i < p.n_slots && !rc; i++) rc = interop_reclaim(&p, i, r, 1);
  r->frames = done;
  r->seconds = (double)(ortkit_now_ns() - start) / 1e9;
  demo_progress("interop", done, c->frames, done / r->seconds, series_mean(&r->cpu_us));
  fprintf(stderr, "\n");
  if (!rc) rc = demo_write_pngs(c, o->out_dir, "interop", p.keep, p.n_keep);
  /* on an error, the frames still in flight must finish before anything is released */
  for (int i = 0; i < p.n_slots; i++)
    if (p.slots[i].value) vkp_timeline_wait_host(p.presented, p.slots[i].value, WAIT_NS, p.err, sizeof p.err);
  pipeline_destroy(&p);
  return rc;
}

/* ---- the copy-through-host pipeline ---- */

static int host_frame(pipeline* p, uint64_t* v, uint32_t frame, int kept, demo_report* r) {
  demo_ctx* c = p->c;
  slot* s = &p->slots[0];
  uint64_t t0 = ortkit_now_ns();
  vkp_sync render = {.signal_sem = p->presented, .signal_value = ++*v};
  if (submit_scene(p, s, frame, &render)) return -1;
  vkp_sync down = {.wait_sem = p->presented, .wait_value = *v, .signal_sem = p->presented, .signal_value = *v + 1};
  ++*v;
  if (vkp_submit_copy(c->vk, s->noisy, 0, p->host_in, 0, frame_bytes(c), &down, p->err, sizeof p->err))
    return fail(p, "copying the frame to the host");
  demo_arm("host path: download", 10);
  float *x = NULL, *y = NULL;
  if (vkp_timeline_wait_host(p->presented, *v, WAIT_NS, p->err, sizeof p->err) ||
      vkp_host_buffer_map(p->host_in, (void**)&x, p->err, sizeof p->err) ||
      vkp_host_buffer_map(p->host_out, (void**)&y, p->err, sizeof p->err))
    return fail(p, "reading the frame on the host");
  OrtMemoryInfo* cpu = NULL;
  OrtValue *xin = NULL, *yout = NULL;
  int64_t shape[4] = {1, 3, c->height, c->width};
  const char* in_names[] = {c->input_name};
  const char* out_names[] = {c->output_name};
  OrtStatus* st = c->k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu);
  if (!st) st = c->k.api->CreateTensorWithDataAsOrtValue(cpu, x, frame_bytes(c), shape, 4,
                                                         ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &xin);
  if (!st) st = c->k.api->CreateTensorWithDataAsOrtValue(cpu, y, frame_bytes(c), shape, 4,
                                                         ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &yout);
  if (!st) st = c->k.api->Run(c->session, NULL, in_names, (const OrtValue* const*)&xin, 1, out_names, 1, &yout);
  if (xin) c->k.api->ReleaseValue(xin);
  if (yout) c->k.api->ReleaseValue(yout);
  if (cpu) c->k.api->ReleaseMemoryInfo(cpu);
  if (ort_fail(p, st, "Run with host tensors")) return -1;
  if (vkp_host_buffer_flush(p->host_out, p->err, sizeof p->err)) return fail(p, "flushing the result");
  vkp_sync up = {.signal_sem = p->presented, .signal_value = ++*v};
  if (vkp_submit_upload(c->vk, p->host_out, 0, s->out, 0, frame_bytes(c), &up, p->err, sizeof p->err))
    return fail(p, "uploading the result");
  vkp_sync present = {.wait_sem = p->presented, .wait_value = *v, .signal_sem = p->presented, .signal_value = *v + 1,
                      .write_timestamps = vkp_has_timestamps(c->vk), .timestamp_slot = 1};
  ++*v;
  if (submit_present(p, s, kept, &present)) return -1;
  demo_arm("host path: present", 10);
  if (vkp_timeline_wait_host(p->presented, *v, WAIT_NS, p->err, sizeof p->err)) return fail(p, "presenting");
  if (r) series_add(&r->frame_us, (double)(ortkit_now_ns() - t0) / 1e3);
  if (kept && keep_frame(p, s, (int)frame)) return -1;
  return 0;
}

int demo_run_host(demo_ctx* c, const demo_options* o, demo_report* r) {
  pipeline p;
  int rc = pipeline_create(&p, c, o, 0);
  uint64_t v = 0;
  for (int w = 0; w < WARMUP_FRAMES && !rc; w++) rc = host_frame(&p, &v, 0, 0, NULL);
  uint64_t start = ortkit_now_ns(), last_print = start;
  int done = 0;
  for (int f = 0; f < c->frames && !rc && !demo_stop_requested(); f++) {
    rc = host_frame(&p, &v, (uint32_t)f, f % o->every == 0, r);
    done++;
    uint64_t now = ortkit_now_ns();
    if (now - last_print > 500000000ull) {
      demo_progress("copy through host", done, c->frames, done / ((double)(now - start) / 1e9), series_mean(&r->frame_us));
      last_print = now;
    }
  }
  r->frames = done;
  r->seconds = (double)(ortkit_now_ns() - start) / 1e9;
  demo_progress("copy through host", done, c->frames, done / r->seconds, series_mean(&r->frame_us));
  fprintf(stderr, "\n");
  if (!rc) rc = demo_write_pngs(c, o->out_dir, "host", p.keep, p.n_keep);
  pipeline_destroy(&p);
  return rc;
}

/* ---- the numeric check ---- */

static double psnr(const float* a, const float* b, size_t n) {
  double mse = 0;
  for (size_t i = 0; i < n; i++) mse += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  mse /= (double)n;
  return 10.0 * log10(1.0 / (mse > 1e-12 ? mse : 1e-12));
}

int demo_check_frame(demo_ctx* c, const demo_options* o, double* max_abs, double* psnr_noisy, double* psnr_out) {
  pipeline p;
  int interop = c->importer != NULL;
  int rc = pipeline_create(&p, c, o, interop);
  size_t n = (size_t)c->width * c->height * 3;
  float *noisy = malloc(n * sizeof(float)), *clean = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  vkp_host_buffer* back = NULL;
  if (!rc && (!noisy || !clean || !out || vkp_host_buffer_create(c->vk, frame_bytes(c), &back, p.err, sizeof p.err)))
    rc = fail(&p, "allocating the check buffers");
  const uint32_t frame = 1234;
  uint64_t v = 0;
  if (!rc && interop) {
    rc = interop_frame(&p, 0, ++v, frame, 0, NULL);
    if (!rc) rc = interop_reclaim(&p, 0, NULL, 0);
  } else if (!rc) {
    rc = host_frame(&p, &v, frame, 0, NULL);
  }
  /* read noisy, clean and the model's output back to the host, Vulkan-signalled only */
  slot* s = &p.slots[0];
  vkp_buffer* srcs[3] = {s->noisy, s->clean, s->out};
  float* dsts[3] = {noisy, clean, out};
  for (int k = 0; k < 3 && !rc; k++) {
    vkp_sync sync = {.signal_sem = p.presented, .signal_value = ++v};
    demo_arm("check: reading back", 10);
    void* m = NULL;
    if (vkp_submit_copy(c->vk, srcs[k], 0, back, 0, frame_bytes(c), &sync, p.err, sizeof p.err) ||
        vkp_timeline_wait_host(p.presented, v, WAIT_NS, p.err, sizeof p.err) ||
        vkp_host_buffer_map(back, &m, p.err, sizeof p.err)) {
      rc = fail(&p, "reading back the check frame");
      break;
    }
    memcpy(dsts[k], m, frame_bytes(c));
  }
  /* the same noisy frame through ORT's CPU EP */
  if (!rc) {
    OrtSession* cpu = NULL;
    ortkit_tensor in = {.rank = 4, .dims = {1, 3, c->height, c->width}, .count = n, .data = noisy};
    snprintf(in.name, sizeof in.name, "%s", c->input_name);
    ortkit_tensor* want = NULL;
    size_t n_want = 0;
    demo_arm("check: the CPU EP", 300);
    OrtStatus* st = ortkit_session(&c->k, o->model, NULL, NULL, NULL, 0, &cpu);
    if (!st) st = ortkit_run(&c->k, cpu, NULL, &in, 1, &want, &n_want);
    if (!ort_fail(&p, st, "running the check frame on the CPU EP")) {
      double worst = 0, peak = 0;
      for (size_t i = 0; i < n; i++) {
        double d = fabs((double)out[i] - want[0].data[i]);
        if (!(d <= worst)) worst = d;
        if (fabs(want[0].data[i]) > peak) peak = fabs(want[0].data[i]);
      }
      *max_abs = worst;
      *psnr_noisy = psnr(noisy, clean, n);
      *psnr_out = psnr(out, clean, n);
      printf("check frame %u: gfxep vs ORT's CPU EP max abs error %.3g; PSNR against the clean frame: noisy %.2f dB, "
             "denoised %.2f dB\n",
             frame, worst, *psnr_noisy, *psnr_out);
      /* per precision, against the float32 CPU EP: float32 arithmetic within 1e-4; TF32 products
       * (10-bit mantissas) within 1e-4 + 5e-3 of the output's peak; float16 (11 significant bits, the
       * zoo's bound) within 1e-3 + 2e-2 of it */
      const char* prec = o->precision ? o->precision : "fp32";
      const double bound = !strcmp(prec, "fp16") ? 1e-3 + 2e-2 * peak : !strcmp(prec, "tf32") ? 1e-4 + 5e-3 * peak : 1e-4;
      if (!(worst <= bound)) {
        fprintf(stderr, "gfxep-demo: the frame differs from ORT's CPU EP by %g (allowed at %s: %g)\n", worst, prec,
                bound);
        rc = -1;
      }
    } else {
      rc = -1;
    }
    ortkit_tensors_free(want, n_want);
    if (cpu) c->k.api->ReleaseSession(cpu);
  }
  if (back) vkp_host_buffer_destroy(back);
  free(noisy);
  free(clean);
  free(out);
  pipeline_destroy(&p);
  return rc;
}

/* ---- training data ---- */

int demo_dump(demo_ctx* c, const demo_options* o) {
  pipeline p;
  int rc = pipeline_create(&p, c, o, 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/shape.txt", o->dump_dir);
  if (!rc) mkdir(o->dump_dir, 0755); /* an existing folder is fine; fopen reports any real problem */
  FILE* f = rc ? NULL : fopen(path, "w");
  if (!rc && !f) {
    fprintf(stderr, "gfxep-demo: cannot write %s\n", path);
    rc = -1;
  }
  if (f) {
    fprintf(f, "3 %u %u\n", c->height, c->width);
    fclose(f);
  }
  slot* s = &p.slots[0];
  uint64_t v = 0;
  for (int i = 0; i < c->frames && !rc; i++) {
    uint32_t frame = (uint32_t)i * 7u; /* spread over the animation */
    vkp_sync render = {.signal_sem = p.presented, .signal_value = ++v};
    rc = submit_scene(&p, s, frame, &render);
    const char* names[2] = {"clean", "noisy"};
    vkp_buffer* srcs[2] = {s->clean, s->noisy};
    for (int k = 0; k < 2 && !rc; k++) {
      vkp_sync copy = {.wait_sem = p.presented, .wait_value = v, .signal_sem = p.presented, .signal_value = v + 1};
      ++v;
      void* m = NULL;
      demo_arm("dump", 10);
      if (vkp_submit_copy(c->vk, srcs[k], 0, p.host_in, 0, frame_bytes(c), &copy, p.err, sizeof p.err) ||
          vkp_timeline_wait_host(p.presented, v, WAIT_NS, p.err, sizeof p.err) ||
          vkp_host_buffer_map(p.host_in, &m, p.err, sizeof p.err)) {
        rc = fail(&p, "dumping a frame");
        break;
      }
      snprintf(path, sizeof path, "%s/%s_%05d.f32", o->dump_dir, names[k], i);
      FILE* out = fopen(path, "wb");
      if (!out || fwrite(m, 1, frame_bytes(c), out) != frame_bytes(c)) {
        fprintf(stderr, "gfxep-demo: writing %s failed\n", path);
        rc = -1;
      }
      if (out) fclose(out);
    }
  }
  if (!rc) printf("wrote %d clean/noisy pairs of %ux%u into %s\n", c->frames, c->width, c->height, o->dump_dir);
  pipeline_destroy(&p);
  return rc ? 1 : 0;
}
