/* gfxep — ONNX Runtime's session-level graph capture (EP option cuda_graph=ort).
 *
 * ORT drives it: for each "gpu_graph_id" (run option, default 0; -1 = neither capture nor replay) it
 * runs the model normally (OnRunStart, Compute, OnRunEnd) until IsGraphCaptured says yes, then calls
 * ReplayGraph instead of running anything. gfxep counts WARMUP_RUNS ordinary runs per id (they build
 * the shape signature, the workspaces, library handles and kernels, and fill the allocator's cache),
 * and captures the next one:
 *   - OnRunStart marks the run as a capture run. It cannot begin the capture itself: it is not told
 *     the run's stream.
 *   - The run's first Compute begins the capture on the stream ORT gives it; every Compute of the run
 *     then enqueues its nodes directly (gfx_model_run_captured: nothing allocated, no event asked, no
 *     graph of the model's own inside ORT's), pinning the workspace the graph bakes in.
 *   - OnRunEnd ends the capture, keeps the graph, and launches it at once (nothing ran while captured).
 *   - ReplayGraph launches it on the stream it was captured on, without waiting.
 *
 * Streams: every session stream this EP creates wraps one backend stream of the EP (run_stream), so
 * warm-ups, the capture and the replays all use the same stream whichever stream wrapper ORT hands
 * out. An application stream set per run (RunOptionsSetSyncStream) is used instead when present; the
 * graph then replays on the stream of the run that captured it, so such an application keeps one
 * stream per graph id.
 *
 * Runs are serialized (IsConcurrentRunSupported is false in this mode): a capture records whatever
 * any thread queues on the stream, so no other run may share it meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/model.h"
#include "ort/ep.h"

/* Ordinary runs per graph id before the one that is captured (ORT tries at most 8 runs). */
#define WARMUP_RUNS 2

static gfx_ep* as_ep(const OrtEp* e) { return (gfx_ep*)(void*)e; }

/* The EP whose capture run the calling thread is in, or NULL. */
static _Thread_local const gfx_ep* capturing_ep;

int gfx_capture_thread_busy(void) { return capturing_ep != NULL; }

/* Under capture_lock. */
static gfx_ort_graph* find_graph(gfx_ep* ep, int id) {
  for (int i = 0; i < ep->n_graphs; i++)
    if (ep->graphs[i].id == id) return &ep->graphs[i];
  return NULL;
}

/* Under capture_lock. */
static gfx_ort_graph* find_or_add_graph(gfx_ep* ep, int id) {
  gfx_ort_graph* g = find_graph(ep, id);
  if (g) return g;
  if (ep->n_graphs == ep->cap_graphs) {
    int cap = ep->cap_graphs ? 2 * ep->cap_graphs : 4;
    gfx_ort_graph* grown = realloc(ep->graphs, sizeof *grown * (size_t)cap);
    if (!grown) return NULL;
    ep->graphs = grown;
    ep->cap_graphs = cap;
  }
  g = &ep->graphs[ep->n_graphs++];
  memset(g, 0, sizeof *g);
  g->id = id;
  return g;
}

/* Under capture_lock: every partition's workspace pinned for graph id is free again once the work
 * queued on `stream` so far is done. */
static gfx_status unpin_all(gfx_ep* ep, int id, void* stream) {
  gfx_status s = NULL;
  for (int i = 0; i < ep->n_models; i++) {
    gfx_status r = gfx_model_unpin(ep->models[i], id, stream);
    if (!s) s = r;
    else gfx_status_free(r);
  }
  return s;
}

/* Under capture_lock: ends a capture run that is under way without keeping anything (its Compute
 * failed, or OnRunEnd never came). */
static void abandon_capture(gfx_ep* ep) {
  if (ep->capture.stream) gfx_status_free(gfx_backend_capture_end(ep->device->dev, ep->capture.stream, NULL));
  gfx_status_free(unpin_all(ep, ep->capture.id, ep->capture.stream));
  ep->capture.pending = 0;
  ep->capture.stream = NULL;
  capturing_ep = NULL;
}

/* The run's "gpu_graph_id": 0 when absent, -1 for no capture; anything else that is not an integer
 * of int range (or is below -1) is an error naming it. */
static OrtStatus* graph_id_of(const OrtRunOptions* ro, int* id) {
  *id = 0;
  const char* v = ro ? gfx_ort->GetRunConfigEntry(ro, "gpu_graph_id") : NULL;
  if (!v || !v[0]) return NULL;
  char* end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < -1 || x > 0x7fffffffL)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: run option 'gpu_graph_id' = '%s' is not -1 or a graph id >= 0",
                         v);
  *id = (int)x;
  return NULL;
}

OrtStatus* gfx_capture_run_start(gfx_ep* ep, const OrtRunOptions* run_options) {
  int id = 0;
  ORT_TRY(graph_id_of(run_options, &id));
  pthread_mutex_lock(&ep->capture_lock);
  if (ep->capture.pending) abandon_capture(ep); /* the last capture run ended without OnRunEnd */
  OrtStatus* s = NULL;
  if (id >= 0) {
    gfx_ort_graph* g = find_or_add_graph(ep, id);
    if (!g) {
      s = gfx_ort_error(ORT_FAIL, "gfxep: out of memory recording gpu_graph_id %d", id);
    } else if (!g->exec && g->runs >= WARMUP_RUNS) {
      ep->capture.pending = 1;
      ep->capture.id = id;
      ep->capture.stream = NULL;
      capturing_ep = ep;
    } else if (!g->exec) {
      g->runs++;
    }
  }
  pthread_mutex_unlock(&ep->capture_lock);
  return s;
}

OrtStatus* gfx_capture_compute(gfx_ep* ep, void* stream, int* captured, int* pin_id) {
  *captured = 0;
  *pin_id = -1;
  pthread_mutex_lock(&ep->capture_lock);
  OrtStatus* s = NULL;
  if (ep->capture.pending) {
    if (!stream) {
      s = gfx_ort_error(ORT_EP_FAIL, "gfxep: cuda_graph=ort: the run gave gfxep no stream to capture");
    } else if (!ep->capture.stream) {
      gfx_status st = gfx_backend_capture_begin(ep->device->dev, stream);
      if (st)
        s = gfx_to_ort(gfx_status_wrap(st, "gfxep: cuda_graph=ort: beginning the capture of gpu_graph_id %d",
                                       ep->capture.id));
      else
        ep->capture.stream = stream;
    } else if (ep->capture.stream != stream) {
      s = gfx_ort_error(ORT_EP_FAIL,
                        "gfxep: cuda_graph=ort: the partitions of one run came on different streams; a captured "
                        "run must queue all its work on one stream");
    }
    if (!s) {
      *captured = 1;
      *pin_id = ep->capture.id;
    }
  }
  pthread_mutex_unlock(&ep->capture_lock);
  return s;
}

OrtStatus* gfx_capture_run_end(gfx_ep* ep) {
  pthread_mutex_lock(&ep->capture_lock);
  OrtStatus* s = NULL;
  if (ep->capture.pending) {
    gfx_dev* dev = ep->device->dev;
    int id = ep->capture.id;
    void* stream = ep->capture.stream;
    gfx_ort_graph* g = find_graph(ep, id);
    void* exec = NULL;
    gfx_status st = NULL;
    if (!stream)
      st = gfx_error(GFX_ERR_INVALID_ARGUMENT, "the run queued no work on gfxep, so there is nothing to capture");
    else
      st = gfx_backend_capture_end(dev, stream, &exec);
    ep->capture.pending = 0;
    ep->capture.stream = NULL;
    capturing_ep = NULL;
    if (!st && g) {
      g->exec = exec;
      g->stream = stream;
      /* the captured work did not run: this run's results come from the graph's first launch */
      st = gfx_backend_graph_launch(dev, exec, stream);
    } else if (!st) {
      gfx_backend_graph_destroy(dev, exec);
      st = gfx_error(GFX_ERR_INTERNAL, "gpu_graph_id %d vanished during its capture", id);
    }
    if (st) {
      if (stream) gfx_status_free(unpin_all(ep, id, stream));
      s = gfx_to_ort(gfx_status_wrap(st,
                                     "gfxep: cuda_graph=ort: capturing gpu_graph_id %d failed (a captured run may "
                                     "not allocate device memory, wait for the device or copy from host memory: "
                                     "bind inputs and outputs in device memory with IOBinding and keep the "
                                     "shapes of the warm-up runs)",
                                     id));
    }
  }
  pthread_mutex_unlock(&ep->capture_lock);
  return s;
}

/* ---- OrtEp entries ---- */

static bool ORT_API_CALL is_graph_capture_enabled(const OrtEp* this_ptr) {
  return as_ep(this_ptr)->options.graphs == GFX_GRAPHS_ORT;
}

static bool ORT_API_CALL is_graph_captured(const OrtEp* this_ptr, int graph_annotation_id) {
  gfx_ep* ep = as_ep(this_ptr);
  pthread_mutex_lock(&ep->capture_lock);
  gfx_ort_graph* g = graph_annotation_id >= 0 ? find_graph(ep, graph_annotation_id) : NULL;
  bool captured = g && g->exec;
  pthread_mutex_unlock(&ep->capture_lock);
  return captured;
}

static OrtStatus* ORT_API_CALL replay_graph(OrtEp* this_ptr, int graph_annotation_id) {
  gfx_ep* ep = as_ep(this_ptr);
  pthread_mutex_lock(&ep->capture_lock);
  gfx_ort_graph* g = graph_annotation_id >= 0 ? find_graph(ep, graph_annotation_id) : NULL;
  gfx_status st = g && g->exec ? gfx_backend_graph_launch(ep->device->dev, g->exec, g->stream)
                               : gfx_error(GFX_ERR_INVALID_ARGUMENT, "no graph was captured for gpu_graph_id %d",
                                           graph_annotation_id);
  pthread_mutex_unlock(&ep->capture_lock);
  return st ? gfx_to_ort(gfx_status_wrap(st, "gfxep: replaying gpu_graph_id %d", graph_annotation_id)) : NULL;
}

static OrtGraphCaptureNodeAssignmentPolicy ORT_API_CALL capture_policy(const OrtEp* this_ptr) {
  (void)this_ptr;
  /* a node left on the CPU would run between the graph's parts at capture and never on replay */
  return OrtGraphCaptureNodeAssignmentPolicy_ALL_NODES_ON_EP;
}

/* The graph is destroyed now (a launch still in flight completes first: the backend defers the
 * destruction), its workspaces become free once the replays queued so far are done, and the id starts
 * over with warm-up runs. */
static OrtStatus* ORT_API_CALL release_captured_graph(OrtEp* this_ptr, int graph_annotation_id) {
  gfx_ep* ep = as_ep(this_ptr);
  pthread_mutex_lock(&ep->capture_lock);
  OrtStatus* s = NULL;
  gfx_ort_graph* g = find_graph(ep, graph_annotation_id);
  if (ep->capture.pending && ep->capture.id == graph_annotation_id) {
    s = gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: gpu_graph_id %d is being captured by a run now",
                      graph_annotation_id);
  } else if (g && g->exec) {
    gfx_backend_graph_destroy(ep->device->dev, g->exec);
    s = gfx_to_ort(unpin_all(ep, g->id, g->stream));
    g->exec = NULL;
    g->stream = NULL;
    g->runs = 0;
  }
  pthread_mutex_unlock(&ep->capture_lock);
  return s;
}

OrtStatus* gfx_capture_init(gfx_ep* ep) {
  pthread_mutex_init(&ep->capture_lock, NULL);
  if (ep->options.graphs != GFX_GRAPHS_ORT) return NULL;
  if (!gfx_backend_can_capture(ep->device->dev))
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: option 'graphs' = 'ort' needs a backend that records partitions; the %s backend "
                         "does not (use graphs=0)",
                         ep->device->backend_name);
  if (gfx_ort_minor < 26)
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: option 'graphs' = 'ort' needs ONNX Runtime 1.26 or newer (graph capture "
                         "entries of OrtEp); this one offers API version %d",
                         gfx_ort_minor);
  ORT_TRY(gfx_shared_stream_create(ep->device, &ep->run_stream));
  OrtEp* b = &ep->base;
  b->IsGraphCaptureEnabled = is_graph_capture_enabled;
  b->IsGraphCaptured = is_graph_captured;
  b->ReplayGraph = replay_graph;
  b->GetGraphCaptureNodeAssignmentPolicy = capture_policy;
  if (gfx_ort_minor >= 27) b->ReleaseCapturedGraph = release_captured_graph;
  return NULL;
}

/* At EP destruction: ORT has released the compiled partitions or will not run them again. */
void gfx_capture_destroy(gfx_ep* ep) {
  pthread_mutex_lock(&ep->capture_lock);
  if (ep->capture.pending) abandon_capture(ep);
  for (int i = 0; i < ep->n_graphs; i++)
    if (ep->graphs[i].exec) gfx_backend_graph_destroy(ep->device->dev, ep->graphs[i].exec);
  free(ep->graphs);
  free(ep->models);
  ep->graphs = NULL;
  ep->models = NULL;
  ep->n_graphs = ep->n_models = 0;
  pthread_mutex_unlock(&ep->capture_lock);
  gfx_shared_stream_release(ep->run_stream);
  ep->run_stream = NULL;
  pthread_mutex_destroy(&ep->capture_lock);
}

OrtStatus* gfx_capture_add_model(gfx_ep* ep, struct gfx_model* m) {
  pthread_mutex_lock(&ep->capture_lock);
  OrtStatus* s = NULL;
  if (ep->n_models == ep->cap_models) {
    int cap = ep->cap_models ? 2 * ep->cap_models : 4;
    struct gfx_model** grown = realloc(ep->models, sizeof *grown * (size_t)cap);
    if (grown) {
      ep->models = grown;
      ep->cap_models = cap;
    } else {
      s = gfx_ort_error(ORT_FAIL, "gfxep: out of memory recording a compiled partition");
    }
  }
  if (!s) ep->models[ep->n_models++] = m;
  pthread_mutex_unlock(&ep->capture_lock);
  return s;
}

void gfx_capture_remove_model(gfx_ep* ep, struct gfx_model* m) {
  pthread_mutex_lock(&ep->capture_lock);
  for (int i = 0; i < ep->n_models; i++)
    if (ep->models[i] == m) {
      ep->models[i] = ep->models[--ep->n_models];
      break;
    }
  pthread_mutex_unlock(&ep->capture_lock);
}
