/* gfxep — the OrtEp: one per session. */
#ifndef GFXEP_ORT_EP_H
#define GFXEP_ORT_EP_H

#include <stdatomic.h>

#include "backend/wrap.h"
#include "ort/device_objects.h"
#include "ort/options.h"

#define GFX_MAX_PROFILERS 16

struct gfx_profiler;
struct gfx_model;

/* A session-level graph (cuda_graph=ort), one per "gpu_graph_id" that has run. */
typedef struct gfx_ort_graph {
  int id;
  int runs;    /* warm-up runs done so far */
  void* exec;  /* the backend's replayable graph, NULL until captured */
  void* stream; /* the stream it was captured on, and replays on */
} gfx_ort_graph;

typedef struct gfx_ep {
  OrtEp base; /* first: ORT only sees this */
  gfx_device_set* devices; /* the factory's, shared by its EPs */
  gfx_device* device;
  const OrtLogger* logger;
  gfx_ep_options options;
  /* profilers ORT created for this EP and has not released (profiler.c) */
  pthread_mutex_t profilers_lock;
  struct gfx_profiler* profilers[GFX_MAX_PROFILERS];
  int n_profilers;
  int n_partitions; /* compiled so far, to name them in profiles */
  /* cuda_graph=ort (graph_capture.c); all guarded by capture_lock */
  gfx_shared_stream* run_stream; /* the one backend stream every session stream of this EP wraps */
  pthread_mutex_t capture_lock;
  gfx_ort_graph* graphs;
  int n_graphs, cap_graphs;
  struct {
    int pending;  /* this run is being captured (decided in OnRunStart) */
    int id;
    void* stream; /* set by the first Compute, which begins the capture on it */
  } capture;
  struct gfx_model** models; /* every compiled partition, to unpin their workspaces */
  int n_models, cap_models;
  uint64_t session_id;          /* process-unique, for the frame timings */
  atomic_uint_fast64_t runs;    /* Runs started, for the frame timings */
  int layout_nhwc;              /* layout=auto: the choice for the graph GetCapability saw last */
  unsigned nhwc_ops;          /* GFX_LAYOUT_NHWC_* bits: pooling and Resize op types ORT may hand over channels-last,
                                 * for the graph GetCapability saw last (ort/layout_choice.h) */
  uint64_t inject_loss_at_run;  /* GFXEP_INJECT_DEVICE_LOSS_AT_RUN: fault-injection tests (0: never) */
} gfx_ep;

OrtStatus* gfx_ep_create(gfx_device_set* devices, gfx_device* d, const OrtSessionOptions* so, const OrtLogger* logger,
                         OrtEp** out);
void gfx_ep_destroy(OrtEp* ep);

/* capability.c / compile.c */
OrtStatus* ORT_API_CALL gfx_ep_get_capability(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* info);
OrtStatus* ORT_API_CALL gfx_ep_compile(OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes,
                                       size_t count, OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes);
void ORT_API_CALL gfx_ep_release_compute_infos(OrtEp* this_ptr, OrtNodeComputeInfo** infos, size_t count);

/* The stream the calling thread's last Compute of this EP ran on (for OnRunEnd), or NULL. */
void* gfx_ep_last_stream(const gfx_ep* ep);
/* Called at the start of each run (OnRunStart). */
void gfx_ep_forget_last_stream(const gfx_ep* ep);

/* graph_capture.c: ONNX Runtime's graph capture (cuda_graph=ort). */
OrtStatus* gfx_capture_init(gfx_ep* ep);  /* at EP creation: checks the backend, sets the OrtEp entries */
void gfx_capture_destroy(gfx_ep* ep);
OrtStatus* gfx_capture_run_start(gfx_ep* ep, const OrtRunOptions* run_options);
OrtStatus* gfx_capture_run_end(gfx_ep* ep);
/* For a Compute of this EP on `stream`: *captured tells whether the run is being captured (the first
 * Compute of a capture run begins the capture on its stream), *pin_id the graph it belongs to. */
OrtStatus* gfx_capture_compute(gfx_ep* ep, void* stream, int* captured, int* pin_id);
/* Nonzero while the calling thread runs a capture run: copies that ORT makes then (feeds, fetches,
 * Memcpy nodes) would not be part of the graph, so the copy paths refuse them. */
int gfx_capture_thread_busy(void);
/* compile.c registers each partition's model, and forgets it when released */
OrtStatus* gfx_capture_add_model(gfx_ep* ep, struct gfx_model* m);
void gfx_capture_remove_model(gfx_ep* ep, struct gfx_model* m);

#endif
