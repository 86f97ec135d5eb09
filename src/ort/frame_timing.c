/* gfxep — per-frame GPU timings and the watchdog (see frame_timing.h and include/gfxep.h). */
#include "ort/frame_timing.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/gfxep.h"
#include "backend/wrap.h"
#include "core/log.h"
#include "ort/ep.h"
#include "ort/profiler.h"

/* the layout the Python example (examples/frame_timings.py) mirrors with ctypes */
_Static_assert(sizeof(gfxep_frame_timing) == 288, "gfxep_frame_timing changed: update its version and the example");

#define FRAMES 64 /* per device: a renderer reads a few frames behind; 64 is a second at 60 fps */

/* The stamps of a frame, in the order the GPU reaches them. */
enum { S_WAIT_BEGIN, S_WAIT_END, S_RUN_BEGIN, S_RUN_END, S_SIGNAL, S_COUNT };

typedef struct frame {
  gfxep_frame_timing t;  /* what a reader gets; frame == 0: the slot is unused */
  void* stream;          /* the native stream the frame is on */
  unsigned written;      /* a bit per stamp written */
  int open;              /* still takes waits, a Run, signals */
  int run_begun, run_ended;
  const void* ep;        /* the session's EP, while its Run is being queued */
  void* wait_semaphore;  /* the last wait's backend semaphore, for the watchdog */
  uint64_t wait_queued_ns;
  int wait_done;         /* the watchdog saw S_WAIT_END reached */
  int abandoned;         /* a stamp could not be written, or the Run never ended: never complete, never
                          * read, and its slots reused only once the stamps it did write are reached */
  int in_run;            /* a partition's run is writing this frame's slot stamps: the slot stays taken */
  int has_limit;         /* the Run's session set the watchdog's limit for this frame's waits */
  unsigned limit_ms;     /* that limit (0: not watched) */
  /* RUN_BEGIN (0) and RUN_END (1) as stamped by a replayed graph itself (a reference each), or NULL:
   * then the frame's own slot holds the stamp */
  gfx_replay_stamps* ring[2];
  uint64_t replay[2];
} frame;

struct gfx_frame_log {
  gfx_device* device;
  void* stamps; /* FRAMES * S_COUNT backend stamps; slot = frame index * S_COUNT + stamp */
  pthread_mutex_t lock;
  frame frames[FRAMES];
  int newest; /* index of the newest frame, -1 before the first */
  atomic_uint timeout_ms;
  uint64_t dropped; /* frames not recorded because the ring was full of frames the GPU had not passed */
  int stalled;      /* frames whose wait the watchdog reported and that have not completed */
  char label[48];   /* "cuda:0", what frames carry as their device */
  gfx_frame_log* next; /* in the list of every log (all_logs) */
};

static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;
static gfx_frame_log* all_logs;
static atomic_uint_fast64_t frame_counter;

/* ---- the watchdog thread: runs while any log exists ---- */
static pthread_t watchdog_thread;
static int watchdog_running;
static pthread_cond_t watchdog_cond = PTHREAD_COND_INITIALIZER;
static int watchdog_stop;
#define WATCHDOG_PERIOD_MS 20

/* What a scan decided for a device, carried out after the locks are released: resuming a device runs
 * the releases held while it was stalled, which may wait (bounded) on the device. (A stall begins
 * inside the scan: marking it only sets a flag.) */
enum { STALL_KEEP, STALL_END };
static int watchdog_scan(gfx_frame_log* log);

static void* watchdog_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&logs_lock);
  while (!watchdog_stop) {
    gfx_dev* change[GFX_MAX_EP_DEVICES * 4];
    int what[GFX_MAX_EP_DEVICES * 4], n_change = 0;
    for (gfx_frame_log* l = all_logs; l; l = l->next) {
      int verdict = watchdog_scan(l);
      if (verdict != STALL_KEEP && n_change < GFX_MAX_EP_DEVICES * 4) {
        change[n_change] = l->device->dev;
        what[n_change++] = verdict;
      }
    }
    if (n_change) {
      /* the devices outlive their logs (backend devices live as long as the process) */
      pthread_mutex_unlock(&logs_lock);
      for (int i = 0; i < n_change; i++) gfx_backend_set_stalled(change[i], what[i] != STALL_END);
      pthread_mutex_lock(&logs_lock);
      continue;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += WATCHDOG_PERIOD_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&watchdog_cond, &logs_lock, &until);
  }
  pthread_mutex_unlock(&logs_lock);
  return NULL;
}

/* ---- stamps ---- */

static int slot_of(int index, int stamp) { return index * S_COUNT + stamp; }

/* Writes stamp `which` of frame `index`; a failure abandons the frame (its stamps written so far may
 * still be pending on the device, so its slots wait for them) but never fails the caller's wait, Run
 * or signal. */
static void write_stamp(gfx_frame_log* log, int index, int which, void* stream) {
  gfx_status s = gfx_backend_stamp_write(log->device->dev, log->stamps, slot_of(index, which), stream);
  if (s) {
    gfx_log(GFX_LOG_WARNING, "gfxep: frame timings: %s", gfx_status_message(s));
    gfx_status_free(s);
    log->frames[index].open = 0;
    log->frames[index].abandoned = 1;
    return;
  }
  log->frames[index].written |= 1u << which;
}

/* The device clock at written stamp `which`: from the frame's slot, or from the replay that stamped the
 * Run itself. GFX_ERR_NOT_READY until the device gets there, GFX_ERR_EXPIRED once a replay's ring
 * entry was taken over. */
static gfx_status stamp_ns(gfx_frame_log* log, int index, int which, uint64_t* ns) {
  const frame* f = &log->frames[index];
  const int r = which == S_RUN_BEGIN ? 0 : which == S_RUN_END ? 1 : -1;
  if (r >= 0 && f->ring[r]) {
    uint64_t begin = 0, end = 0;
    GFX_TRY(gfx_replay_stamps_read_ns(f->ring[r], f->replay[r], &begin, &end));
    *ns = r ? end : begin;
    return NULL;
  }
  return gfx_backend_stamp_read_ns(log->device->dev, log->stamps, slot_of(index, which), ns);
}

/* Whether the GPU has passed written stamp `which` (an overwritten replay entry: long since). */
static int reached(gfx_frame_log* log, int index, int which) {
  uint64_t ns = 0;
  gfx_status s = stamp_ns(log, index, which, &ns);
  const int passed = !s || gfx_status_code(s) == GFX_ERR_EXPIRED;
  gfx_status_free(s);
  return passed;
}

/* Whether the GPU has passed every stamp the frame wrote, so its slots may be written again: the
 * stamps of a frame are on one stream, in order, so the last one written tells (one query). */
static int all_reached(gfx_frame_log* log, int index) {
  if (log->frames[index].in_run) return 0;
  const unsigned w = log->frames[index].written;
  if (!w) return 1;
  int last = S_COUNT - 1;
  while (!(w & (1u << last))) last--;
  return reached(log, index, last);
}

/* Empties a slot of the ring, dropping its references to replay stamps. */
static void frame_clear(frame* f) {
  gfx_replay_stamps_unref(f->ring[0]);
  gfx_replay_stamps_unref(f->ring[1]);
  memset(f, 0, sizeof *f);
}

/* Fills in the figures once every written stamp is reached; returns whether the frame is complete.
 * A frame whose figures are gone (overwritten replay stamps) or make no sense (a timestamp counter that
 * wrapped inside it) is abandoned. */
static int resolve(gfx_frame_log* log, int index) {
  frame* f = &log->frames[index];
  if (f->t.flags & GFXEP_FRAME_COMPLETE) return 1;
  if (f->abandoned || !f->written || !f->run_ended) return 0;
  uint64_t ns[S_COUNT] = {0};
  int first = -1;
  for (int k = 0; k < S_COUNT; k++) {
    if (!(f->written & (1u << k))) continue;
    gfx_status s = stamp_ns(log, index, k, &ns[k]);
    if (s) {
      if (gfx_status_code(s) == GFX_ERR_EXPIRED) f->abandoned = 1;
      gfx_status_free(s);
      return 0;
    }
    if (first < 0) first = k;
    if (ns[k] < ns[first]) {
      f->abandoned = 1;
      return 0;
    }
  }
  double at[S_COUNT] = {0};
  int last = first;
  for (int k = first; k < S_COUNT; k++)
    if (f->written & (1u << k)) {
      at[k] = (double)(ns[k] - ns[first]) / 1e3;
      last = k;
    }
  const unsigned w = f->written;
  f->t.gpu_total_us = at[last];
  f->t.gpu_run_us = (w & (1u << S_RUN_BEGIN)) && (w & (1u << S_RUN_END)) ? at[S_RUN_END] - at[S_RUN_BEGIN] : 0;
  if (f->t.flags & GFXEP_FRAME_WAIT_TIME_UNKNOWN) f->t.gpu_wait_us = -1;
  else if ((w & (1u << S_WAIT_BEGIN)) && (w & (1u << S_WAIT_END))) f->t.gpu_wait_us = at[S_WAIT_END] - at[S_WAIT_BEGIN];
  f->t.gpu_signal_us = (w & (1u << S_SIGNAL)) && (w & (1u << S_RUN_END)) ? at[S_SIGNAL] - at[S_RUN_END] : 0;
  f->t.flags |= GFXEP_FRAME_COMPLETE;
  return 1;
}

/* ---- frames ---- */

/* The open frame on `stream`, or -1. */
static int open_frame(gfx_frame_log* log, void* stream) {
  for (int k = 0, i = log->newest; k < FRAMES && i >= 0; k++, i = (i + FRAMES - 1) % FRAMES) {
    frame* f = &log->frames[i];
    if (!f->t.frame) break;
    if (f->open && f->stream == stream) return i;
  }
  return -1;
}

/* Opens a frame on `stream`, closing the one open there; -1 (counted in `dropped`) when the slot it
 * would take holds a frame the GPU has not passed yet. */
static int new_frame(gfx_frame_log* log, void* stream) {
  int prev = open_frame(log, stream);
  if (prev >= 0) log->frames[prev].open = 0;
  int i = (log->newest + 1) % FRAMES;
  frame* f = &log->frames[i];
  /* an unread frame is overwritten once the GPU is past it: the ring keeps the newest frames */
  if (f->t.frame && !(f->t.flags & GFXEP_FRAME_COMPLETE) && !all_reached(log, i)) {
    if (log->dropped++ == 0)
      gfx_log(GFX_LOG_WARNING, "gfxep: %s device %d: frame timings dropped: the GPU is %d frames behind",
              log->device->backend_name, log->device->dev->index, FRAMES);
    return -1;
  }
  frame_clear(f);
  f->t.version = GFXEP_FRAME_TIMING_VERSION;
  f->t.frame = atomic_fetch_add(&frame_counter, 1) + 1;
  f->t.host_queued_ns = gfx_profiler_now_ns();
  memcpy(f->t.device, log->label, sizeof f->t.device);
  f->stream = stream;
  f->open = 1;
  log->newest = i;
  return i;
}

void gfx_frames_wait(gfx_device* d, void* stream, void* semaphore, uint64_t value, int after) {
  gfx_frame_log* log = d->frame_log;
  if (!log) return;
  pthread_mutex_lock(&log->lock);
  int i = open_frame(log, stream);
  if (i >= 0 && log->frames[i].run_begun) i = -1; /* a wait after the Run begins the next frame */
  if (!after) {
    if (i < 0) i = new_frame(log, stream);
    if (i >= 0 && !(log->frames[i].written & (1u << S_WAIT_BEGIN))) {
      if (gfx_backend_deferred_submit(d->dev)) log->frames[i].t.flags |= GFXEP_FRAME_WAIT_TIME_UNKNOWN;
      else write_stamp(log, i, S_WAIT_BEGIN, stream);
    }
  } else if (i >= 0) {
    frame* f = &log->frames[i];
    write_stamp(log, i, S_WAIT_END, stream);
    f->t.n_waits++;
    f->t.wait_value = value;
    f->wait_semaphore = semaphore;
    f->wait_queued_ns = gfx_profiler_now_ns();
    f->wait_done = 0;
  }
  pthread_mutex_unlock(&log->lock);
}

void gfx_frames_signal(gfx_device* d, void* stream, int after) {
  gfx_frame_log* log = d->frame_log;
  if (!log) return;
  pthread_mutex_lock(&log->lock);
  int i = open_frame(log, stream);
  if (i >= 0 && log->frames[i].run_ended) {
    /* where the stamp lands after the signal: CUDA queues it after; a deferred-submit backend signals at
     * the end of the submission that carries what is recorded, so its stamp goes in just before */
    int deferred = gfx_backend_deferred_submit(d->dev);
    if (after != deferred) write_stamp(log, i, S_SIGNAL, stream);
    if (after) log->frames[i].t.n_signals++;
  }
  pthread_mutex_unlock(&log->lock);
}

/* ---- runs: the thread that runs a session's Run queues all of it (ORT's sequential executor) ---- */

static _Thread_local struct {
  const gfx_ep* ep;
  uint64_t run, start_ns;
  char tag[64];
  int index;      /* the frame of this Run, -1 none */
  uint64_t frame; /* its number, to see that the slot still holds it */
  int begun;
  int computes;   /* partitions of the Run queued so far */
  int ended;      /* RUN_END written */
} run_mark;

void gfx_frames_run_start(gfx_ep* ep, const OrtRunOptions* run_options) {
  run_mark.ep = ep;
  run_mark.begun = 0;
  run_mark.computes = 0;
  run_mark.ended = 0;
  run_mark.index = -1;
  if (!ep->device->frame_log) return;
  run_mark.run = atomic_load(&ep->runs);
  run_mark.start_ns = gfx_profiler_now_ns();
  run_mark.tag[0] = 0;
  const char* tag = NULL;
  if (run_options) {
    OrtStatus* s = gfx_ort->RunOptionsGetRunTag(run_options, &tag);
    if (s) gfx_ort->ReleaseStatus(s);
    else if (tag) snprintf(run_mark.tag, sizeof run_mark.tag, "%s", tag);
  }
}

/* Marks the frame's Run ended (RUN_END written or named). */
static void run_ended(frame* f) {
  f->run_ended = 1;
  f->ep = NULL;
  f->t.host_run_us = (double)(gfx_profiler_now_ns() - run_mark.start_ns) / 1e3;
  run_mark.ended = 1;
}

void gfx_frames_compute(gfx_ep* ep, void* stream, gfx_run_stamps* req) {
  *req = (gfx_run_stamps){.begin_slot = -1, .end_slot = -1};
  gfx_frame_log* log = ep->device->frame_log;
  if (!log || run_mark.ep != ep || run_mark.ended) return;
  pthread_mutex_lock(&log->lock);
  if (!run_mark.begun) {
    run_mark.begun = 1;
    int i = open_frame(log, stream);
    if (i < 0 || log->frames[i].run_begun) i = new_frame(log, stream);
    if (i >= 0) {
      frame* f = &log->frames[i];
      f->run_begun = 1;
      f->ep = ep;
      f->t.session_id = ep->session_id;
      memcpy(f->t.session_name, ep->options.session_name, sizeof f->t.session_name);
      f->t.run = run_mark.run;
      memcpy(f->t.run_tag, run_mark.tag, sizeof f->t.run_tag);
      f->t.flags |= GFXEP_FRAME_HAS_RUN;
      /* the waits before this Run are watched with its session's limit */
      f->has_limit = 1;
      f->limit_ms = ep->options.wait_timeout_ms;
      run_mark.index = i;
      run_mark.frame = f->t.frame;
      req->begin_slot = slot_of(i, S_RUN_BEGIN);
    }
  }
  const int i = run_mark.index;
  if (i >= 0 && log->frames[i].t.frame == run_mark.frame && !log->frames[i].abandoned) {
    /* RUN_END comes from the Run's last partition, so that it costs no call of its own */
    if (run_mark.computes + 1 >= ep->n_partitions) req->end_slot = slot_of(i, S_RUN_END);
    req->stamps = log->stamps;
    log->frames[i].in_run = 1;
  } else {
    req->begin_slot = -1;
  }
  pthread_mutex_unlock(&log->lock);
}

/* After each Compute: records what its run stamped. A replay of a self-stamping graph names its
 * stamps (no host work was spent on them); anything else wrote the slots it was asked to. */
void gfx_frames_compute_done(gfx_ep* ep, void* stream, gfx_run_stamps* req) {
  (void)stream;
  gfx_frame_log* log = ep->device->frame_log;
  if (log && run_mark.ep == ep && run_mark.begun) {
    run_mark.computes++;
    const int i = run_mark.index;
    pthread_mutex_lock(&log->lock);
    if (i >= 0 && req->stamps && log->frames[i].t.frame == run_mark.frame) {
      frame* f = &log->frames[i];
      f->in_run = 0;
      if (req->begin_slot >= 0) {
        if (req->ring) {
          f->ring[0] = gfx_replay_stamps_ref(req->ring);
          f->replay[0] = req->replay;
          f->t.flags |= GFXEP_FRAME_RUN_SELF_STAMPED;
        }
        if (req->ring || req->begin_written) {
          f->written |= 1u << S_RUN_BEGIN;
        } else {
          f->open = 0; /* no begin: the frame can never be complete */
          f->abandoned = 1;
        }
      }
      if (req->end_slot >= 0 && !f->abandoned && (req->ring || req->end_written)) {
        if (req->ring) {
          f->ring[1] = gfx_replay_stamps_ref(req->ring);
          f->replay[1] = req->replay;
          f->t.flags |= GFXEP_FRAME_RUN_SELF_STAMPED;
        }
        f->written |= 1u << S_RUN_END;
        run_ended(f);
      }
    }
    pthread_mutex_unlock(&log->lock);
  }
  gfx_replay_stamps_unref(req->ring);
  req->ring = NULL;
}

/* OnRunEnd: RUN_END where the last partition did not write it (it failed, or the Run ran fewer
 * partitions than the session has); flushed then on a deferred-submit backend, so the stamp does not
 * wait for the next frame's submission. */
static void end_run(gfx_ep* ep, void* stream) {
  gfx_frame_log* log = ep->device->frame_log;
  if (!log || run_mark.ep != ep || !run_mark.begun || run_mark.index < 0 || run_mark.ended) return;
  pthread_mutex_lock(&log->lock);
  frame* f = &log->frames[run_mark.index];
  if (f->t.frame == run_mark.frame && stream && !f->abandoned && (f->written & (1u << S_RUN_BEGIN))) {
    write_stamp(log, run_mark.index, S_RUN_END, stream);
    run_ended(f);
    if (gfx_backend_deferred_submit(log->device->dev)) {
      gfx_status s = gfx_backend_stream_flush(log->device->dev, stream);
      if (s) gfx_log(GFX_LOG_WARNING, "gfxep: frame timings: %s", gfx_status_message(s));
      gfx_status_free(s);
    }
  } else if (f->t.frame == run_mark.frame) {
    f->open = 0; /* nothing to end it on: the frame will never complete */
    f->abandoned = 1;
  }
  run_mark.ended = 1;
  pthread_mutex_unlock(&log->lock);
}

void gfx_frames_run_end(gfx_ep* ep, void* stream) {
  end_run(ep, stream);
  run_mark.index = -1;
}

/* ---- the watchdog ---- */

/* With logs_lock held: reports waits pending longer than their limit (the session's whose Run follows
 * them, else the device's), once per frame; returns whether the device now begins or ends a stall. */
static int watchdog_scan(gfx_frame_log* log) {
  /* the device's limit (the newest session's) for waits no Run has claimed yet; a frame whose Run is
   * queued uses its session's */
  const unsigned device_limit = atomic_load(&log->timeout_ms);
  const int stalled_before = log->stalled > 0;
  pthread_mutex_lock(&log->lock);
  const uint64_t now = gfx_profiler_now_ns();
  for (int i = 0; i < FRAMES; i++) {
    frame* f = &log->frames[i];
    if (!f->t.frame || !f->t.n_waits || f->wait_done || !(f->written & (1u << S_WAIT_END))) continue;
    if (reached(log, i, S_WAIT_END)) {
      f->wait_done = 1;
      if (f->t.flags & GFXEP_FRAME_WAIT_TIMED_OUT) {
        log->stalled--;
        gfx_log(GFX_LOG_WARNING, "gfxep: %s: the wait of frame %" PRIu64 " for value %" PRIu64 " completed after %.0f ms",
                f->t.device, f->t.frame, f->t.wait_value, (double)(now - f->wait_queued_ns) / 1e6);
      }
      continue;
    }
    if (f->t.flags & GFXEP_FRAME_WAIT_TIMED_OUT) continue;
    const unsigned limit = f->has_limit ? f->limit_ms : device_limit;
    const double pending_ms = (double)(now - f->wait_queued_ns) / 1e6;
    if (!limit || pending_ms < (double)limit) continue;
    /* the device is marked stalled before anyone can see the report: an application that reacts to it
     * by releasing what the stalled work uses must find those releases held */
    if (log->stalled++ == 0) gfx_backend_set_stalled(log->device->dev, 1);
    f->t.flags |= GFXEP_FRAME_WAIT_TIMED_OUT;
    f->t.wait_stalled_ms = pending_ms;
    uint64_t current = 0;
    char current_text[48] = "unknown: the backend cannot read it";
    gfx_status s = gfx_backend_semaphore_value(log->device->dev, f->wait_semaphore, &current);
    if (!s) {
      f->t.wait_current_value = current;
      f->t.flags |= GFXEP_FRAME_WAIT_VALUE_KNOWN;
      snprintf(current_text, sizeof current_text, "%" PRIu64, current);
    }
    gfx_status_free(s);
    gfx_log(GFX_LOG_WARNING,
            "gfxep: %s: a wait on imported semaphore %p for value %" PRIu64 " (current value %s) has not completed "
            "after %.0f ms (frame %" PRIu64 ", session %" PRIu64 " '%s', run %" PRIu64
            "); the stream is stalled until the semaphore is signalled",
            f->t.device, f->wait_semaphore, f->t.wait_value, current_text, pending_ms, f->t.frame, f->t.session_id,
            f->t.session_name, f->t.run);
  }
  const int stalled_now = log->stalled > 0;
  pthread_mutex_unlock(&log->lock);
  return stalled_before && !stalled_now ? STALL_END : STALL_KEEP;
}

/* ---- the log's life ---- */

gfx_frame_log* gfx_frame_log_for(gfx_device* d) {
  if (d->frame_log || d->frame_log_failed) return d->frame_log;
  gfx_frame_log* log = calloc(1, sizeof *log);
  gfx_status s = log ? gfx_backend_stamps_create(d->dev, FRAMES * S_COUNT, &log->stamps)
                     : gfx_error(GFX_ERR_OUT_OF_MEMORY, "out of memory for the frame log");
  if (s) {
    gfx_log(GFX_LOG_INFO, "gfxep: %s device %d: no per-frame timings: %s", d->backend_name, d->dev->index,
            gfx_status_message(s));
    gfx_status_free(s);
    free(log);
    d->frame_log_failed = 1;
    return NULL;
  }
  log->device = d;
  log->newest = -1;
  snprintf(log->label, sizeof log->label, "%s:%d", d->backend_name, d->dev->index);
  atomic_init(&log->timeout_ms, 5000);
  pthread_mutex_init(&log->lock, NULL);
  pthread_mutex_lock(&logs_lock);
  log->next = all_logs;
  all_logs = log;
  if (!watchdog_running) {
    watchdog_stop = 0;
    watchdog_running = pthread_create(&watchdog_thread, NULL, watchdog_main, NULL) == 0;
    if (!watchdog_running) gfx_log(GFX_LOG_WARNING, "gfxep: cannot start the watchdog thread; waits are not watched");
  }
  pthread_mutex_unlock(&logs_lock);
  d->frame_log = log;
  return log;
}

void gfx_frame_log_retire(gfx_device* d) {
  gfx_frame_log* log = d->frame_log;
  if (!log) return;
  pthread_mutex_lock(&log->lock);
  const int stalled = log->stalled;
  pthread_mutex_unlock(&log->lock);
  if (stalled) return; /* its watchdog still has to see the stalled waits through */
  gfx_frame_log_destroy(d);
  d->frame_log_failed = 0;
}

void gfx_frame_log_set_timeout(gfx_device* d, unsigned ms) {
  if (d->frame_log) atomic_store(&d->frame_log->timeout_ms, ms);
}

void gfx_frame_log_destroy(gfx_device* d) {
  gfx_frame_log* log = d->frame_log;
  if (!log) return;
  int join = 0;
  pthread_mutex_lock(&logs_lock);
  for (gfx_frame_log** p = &all_logs; *p; p = &(*p)->next)
    if (*p == log) {
      *p = log->next;
      break;
    }
  if (!all_logs && watchdog_running) {
    watchdog_stop = 1;
    pthread_cond_signal(&watchdog_cond);
    watchdog_running = 0;
    join = 1;
  }
  pthread_mutex_unlock(&logs_lock);
  if (join) pthread_join(watchdog_thread, NULL);
  for (int i = 0; i < FRAMES; i++) frame_clear(&log->frames[i]);
  gfx_backend_stamps_destroy(d->dev, log->stamps);
  pthread_mutex_destroy(&log->lock);
  free(log);
  d->frame_log = NULL;
}

/* ---- the exported reader ---- */

static int matches(const frame* f, const char* session_name) {
  return !session_name || strcmp(f->t.session_name, session_name) == 0;
}

/* Frames of one log above after_frame, complete or reported, appended to out (sorted later). */
static int collect(gfx_frame_log* log, const char* session_name, uint64_t after_frame, gfxep_frame_timing* out,
                   int n, int capacity) {
  pthread_mutex_lock(&log->lock);
  int lost = gfx_backend_is_lost(log->device->dev);
  for (int i = 0; i < FRAMES && n < capacity; i++) {
    frame* f = &log->frames[i];
    if (!f->t.frame || f->t.frame <= after_frame || !matches(f, session_name)) continue;
    if (resolve(log, i)) f->open = 0; /* signals queued after it was read complete are not counted */
    else if (lost && f->run_ended) f->t.flags |= GFXEP_FRAME_DEVICE_LOST;
    if (f->t.flags & (GFXEP_FRAME_COMPLETE | GFXEP_FRAME_WAIT_TIMED_OUT | GFXEP_FRAME_DEVICE_LOST)) out[n++] = f->t;
  }
  pthread_mutex_unlock(&log->lock);
  return n;
}

static int by_frame(const void* a, const void* b) {
  uint64_t x = ((const gfxep_frame_timing*)a)->frame, y = ((const gfxep_frame_timing*)b)->frame;
  return x < y ? -1 : x > y;
}

#if defined(_WIN32)
#define GFXEP_EXPORT __declspec(dllexport)
#else
#define GFXEP_EXPORT __attribute__((visibility("default")))
#endif

GFXEP_EXPORT int gfxep_read_frame_timings(const char* session_name, uint64_t after_frame, gfxep_frame_timing* out,
                                          int capacity) {
  if (capacity <= 0) return 0;
  if (!out) return -1;
  /* gather everything above after_frame (at most FRAMES per log), then keep the oldest `capacity` */
  int cap_all = 0;
  pthread_mutex_lock(&logs_lock);
  for (gfx_frame_log* l = all_logs; l; l = l->next) cap_all += FRAMES;
  gfxep_frame_timing* all = cap_all ? malloc((size_t)cap_all * sizeof *all) : NULL;
  int n = 0;
  if (all)
    for (gfx_frame_log* l = all_logs; l; l = l->next) n = collect(l, session_name, after_frame, all, n, cap_all);
  pthread_mutex_unlock(&logs_lock);
  if (!all) return 0;
  qsort(all, (size_t)n, sizeof *all, by_frame);
  if (n > capacity) n = capacity;
  memcpy(out, all, (size_t)n * sizeof *out);
  free(all);
  return n;
}
