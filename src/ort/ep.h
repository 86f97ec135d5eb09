/* gfxep — the OrtEp: one per session. */
#ifndef GFXEP_ORT_EP_H
#define GFXEP_ORT_EP_H

#include "ort/factory.h"
#include "ort/options.h"

#define GFX_MAX_PROFILERS 16

struct gfx_profiler;

typedef struct gfx_ep {
  OrtEp base; /* first: ORT only sees this */
  gfx_factory* factory;
  gfx_device* device;
  const OrtLogger* logger;
  gfx_ep_options options;
  /* profilers ORT created for this EP and has not released (profiler.c) */
  pthread_mutex_t profilers_lock;
  struct gfx_profiler* profilers[GFX_MAX_PROFILERS];
  int n_profilers;
  int n_partitions; /* compiled so far, to name them in profiles */
} gfx_ep;

OrtStatus* gfx_ep_create(gfx_factory* f, gfx_device* d, const OrtSessionOptions* so, const OrtLogger* logger,
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

#endif
