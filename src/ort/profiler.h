/* gfxep — the EP profiler (OrtEp::CreateProfiler, ORT >= 1.25): gfxep's kernels with device times in
 * ONNX Runtime's profiling output. See profiler.c. */
#ifndef GFXEP_ORT_PROFILER_H
#define GFXEP_ORT_PROFILER_H

#include <stdint.h>

#include "exec/model.h"
#include "ort/ort_common.h"

typedef struct gfx_profiler gfx_profiler;
struct gfx_ep;

OrtStatus* ORT_API_CALL gfx_ep_create_profiler(OrtEp* this_ptr, OrtEpProfilerImpl** out);

/* The active profiler that owns a Compute of ep on the calling thread, or NULL when none is active
 * (the common case, and then Compute runs as usual). *correlation: ORT's enclosing event, or 0. */
gfx_profiler* gfx_profiler_for_compute(struct gfx_ep* ep, uint64_t* correlation);
uint64_t gfx_profiler_now_ns(void);
/* Called as the EP dies: its profilers forget it (ORT may release them afterwards). */
void gfx_profiler_detach_all(struct gfx_ep* ep);
/* Records one traced partition run (trace: one entry per node of g) that started at compute_start_ns. */
void gfx_profiler_record(gfx_profiler* p, uint64_t compute_start_ns, const char* partition, uint64_t correlation,
                         const ir_graph* g, const gfx_node_trace* trace);

#endif
