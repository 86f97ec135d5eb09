/* gfxep — OrtEpProfilerImpl: puts gfxep's kernels, with their device times, into ONNX Runtime's
 * profiling JSON.
 *
 * While a profiler of this EP is active, compiled partitions run node by node with a device timer
 * between nodes (gfx_model_run_traced) instead of replaying a graph, and wait for the device before
 * Compute returns: profiling measures, it does not race. Each node becomes one KERNEL event named
 * "gfxep:<node name>" whose timestamp is the node's start on the device clock mapped onto ORT's
 * timeline (the partition's first node starts when its Compute was called) and whose duration is its
 * device time; its args say the op, the partition and the correlation id of ORT's enclosing event.
 *
 * A session-level profiler (EnableProfiling) sees every Compute of the EP. A run-level profiler
 * (RunOptionsEnableProfiling) sees only the Computes of its run: ORT calls StartEvent, Compute and
 * StopEvent of one event on one thread, so the profiler whose event is open on the calling thread
 * owns the Compute.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ort/ep.h"
#include "ort/profiler.h"

typedef struct recorded_event {
  char name[160];
  char op[48];
  char partition[24];
  char correlation[24];
  int64_t timestamp_us;
  int64_t duration_us;
} recorded_event;

struct gfx_profiler {
  OrtEpProfilerImpl base; /* first: ORT only sees this */
  gfx_ep* ep;
  pthread_mutex_t lock;
  int active;
  int64_t start_offset_ns; /* ORT's clock at our start, relative to its profiling start */
  uint64_t start_ns;       /* our clock when profiling started */
  recorded_event* events;
  size_t n_events, cap_events;
};

/* The events open on this thread, innermost last, with the profiler each belongs to. */
#define MAX_OPEN_EVENTS 16
static _Thread_local struct {
  gfx_profiler* profiler[MAX_OPEN_EVENTS];
  uint64_t id[MAX_OPEN_EVENTS];
  int depth;
} open_events;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static gfx_profiler* as_profiler(OrtEpProfilerImpl* p) { return (gfx_profiler*)(void*)p; }

static void detach(gfx_profiler* p) {
  gfx_ep* ep = p->ep;
  if (!ep) return; /* the EP went first */
  pthread_mutex_lock(&ep->profilers_lock);
  for (int i = 0; i < ep->n_profilers; i++)
    if (ep->profilers[i] == p) {
      ep->profilers[i] = ep->profilers[--ep->n_profilers];
      break;
    }
  pthread_mutex_unlock(&ep->profilers_lock);
}

static void ORT_API_CALL release(OrtEpProfilerImpl* this_ptr) {
  gfx_profiler* p = as_profiler(this_ptr);
  detach(p);
  for (int i = 0; i < open_events.depth; i++)
    if (open_events.profiler[i] == p) open_events.profiler[i] = NULL;
  pthread_mutex_destroy(&p->lock);
  free(p->events);
  free(p);
}

static OrtStatus* ORT_API_CALL start_profiling(OrtEpProfilerImpl* this_ptr, int64_t start_offset_ns) {
  gfx_profiler* p = as_profiler(this_ptr);
  pthread_mutex_lock(&p->lock);
  p->start_offset_ns = start_offset_ns;
  p->start_ns = now_ns();
  p->n_events = 0;
  p->active = 1;
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static OrtStatus* ORT_API_CALL start_event(OrtEpProfilerImpl* this_ptr, uint64_t id) {
  if (open_events.depth < MAX_OPEN_EVENTS) {
    open_events.profiler[open_events.depth] = as_profiler(this_ptr);
    open_events.id[open_events.depth] = id;
  }
  open_events.depth++;
  return NULL;
}

static OrtStatus* ORT_API_CALL stop_event(OrtEpProfilerImpl* this_ptr, uint64_t id, const OrtProfilingEvent* event) {
  (void)this_ptr, (void)id, (void)event;
  if (open_events.depth > 0) open_events.depth--;
  return NULL;
}

static OrtStatus* ORT_API_CALL end_profiling(OrtEpProfilerImpl* this_ptr, OrtProfilingEventsContainer* container) {
  gfx_profiler* p = as_profiler(this_ptr);
  pthread_mutex_lock(&p->lock);
  p->active = 0;
  OrtStatus* s = NULL;
  int pid = -1;
  for (size_t i = 0; i < p->n_events && !s; i++) {
    const recorded_event* e = &p->events[i];
    const char* keys[] = {"op_name", "partition", "device", "ort_correlation_id"};
    const char* values[] = {e->op, e->partition, "gpu_clock", e->correlation};
    OrtProfilingEvent* ev = NULL;
    s = gfx_ep_api->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, pid, -1, e->name, e->timestamp_us,
                                         e->duration_us, keys, values, 4, &ev);
    if (!s) {
      const OrtProfilingEvent* one[] = {ev};
      s = gfx_ep_api->ProfilingEventsContainer_AddEvents(container, one, 1);
      gfx_ep_api->ReleaseProfilingEvent(ev);
    }
  }
  p->n_events = 0;
  pthread_mutex_unlock(&p->lock);
  return s;
}

OrtStatus* ORT_API_CALL gfx_ep_create_profiler(OrtEp* this_ptr, OrtEpProfilerImpl** out) {
  gfx_ep* ep = (gfx_ep*)(void*)this_ptr;
  *out = NULL;
  gfx_profiler* p = calloc(1, sizeof *p);
  if (!p) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating a profiler");
  pthread_mutex_lock(&ep->profilers_lock);
  if (ep->n_profilers == GFX_MAX_PROFILERS) {
    pthread_mutex_unlock(&ep->profilers_lock);
    free(p);
    return gfx_ort_error(ORT_FAIL, "gfxep: more than %d profilers at once", GFX_MAX_PROFILERS);
  }
  ep->profilers[ep->n_profilers++] = p;
  pthread_mutex_unlock(&ep->profilers_lock);
  p->ep = ep;
  pthread_mutex_init(&p->lock, NULL);
  p->base.ort_version_supported = ORT_API_VERSION;
  p->base.Release = release;
  p->base.StartProfiling = start_profiling;
  p->base.StartEvent = start_event;
  p->base.StopEvent = stop_event;
  p->base.EndProfiling = end_profiling;
  *out = &p->base;
  return NULL;
}

gfx_profiler* gfx_profiler_for_compute(gfx_ep* ep, uint64_t* correlation) {
  *correlation = 0;
  /* the innermost event open on this thread that belongs to an active profiler of this EP */
  int depth = open_events.depth < MAX_OPEN_EVENTS ? open_events.depth : MAX_OPEN_EVENTS;
  gfx_profiler* found = NULL;
  pthread_mutex_lock(&ep->profilers_lock);
  for (int i = depth - 1; i >= 0 && !found; i--)
    for (int k = 0; k < ep->n_profilers && !found; k++)
      if (open_events.profiler[i] == ep->profilers[k] && ep->profilers[k]->active) {
        found = ep->profilers[k];
        *correlation = open_events.id[i];
      }
  /* no event open on this thread: a session-level profiler still sees the Compute */
  for (int k = 0; k < ep->n_profilers && !found; k++)
    if (ep->profilers[k]->active) found = ep->profilers[k];
  pthread_mutex_unlock(&ep->profilers_lock);
  return found;
}

uint64_t gfx_profiler_now_ns(void) { return now_ns(); }

void gfx_profiler_detach_all(gfx_ep* ep) {
  pthread_mutex_lock(&ep->profilers_lock);
  for (int i = 0; i < ep->n_profilers; i++) ep->profilers[i]->ep = NULL;
  ep->n_profilers = 0;
  pthread_mutex_unlock(&ep->profilers_lock);
}

void gfx_profiler_record(gfx_profiler* p, uint64_t compute_start_ns, const char* partition, uint64_t correlation,
                         const ir_graph* g, const gfx_node_trace* trace) {
  pthread_mutex_lock(&p->lock);
  if (p->active && p->n_events + (size_t)g->n_nodes > p->cap_events) {
    size_t cap = (p->cap_events ? p->cap_events * 2 : 256) + (size_t)g->n_nodes;
    recorded_event* grown = realloc(p->events, cap * sizeof *grown);
    if (grown) {
      p->events = grown;
      p->cap_events = cap;
    }
  }
  for (int n = 0; p->active && n < g->n_nodes && p->n_events < p->cap_events; n++) {
    recorded_event* e = &p->events[p->n_events++];
    const ir_node* node = &g->nodes[trace[n].node];
    snprintf(e->name, sizeof e->name, "gfxep:%s", node->name && node->name[0] ? node->name : ir_op_name(node->op));
    snprintf(e->op, sizeof e->op, "%s", ir_op_name(node->op));
    snprintf(e->partition, sizeof e->partition, "%s", partition);
    snprintf(e->correlation, sizeof e->correlation, "%llu", (unsigned long long)correlation);
    double start_ns = (double)p->start_offset_ns + (double)(int64_t)(compute_start_ns - p->start_ns) + trace[n].start_us * 1e3;
    e->timestamp_us = (int64_t)(start_ns / 1e3);
    e->duration_us = (int64_t)(trace[n].device_us + 0.5);
  }
  pthread_mutex_unlock(&p->lock);
}
