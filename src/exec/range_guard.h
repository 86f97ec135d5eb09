/* gfxep — the float16 range guard: a partition lowered to float16 that never turns a finite result
 * into inf or NaN silently.
 *
 * It starts on the partition as the model declares it (float32), with a range probe on every float32
 * value (ir/mixed_precision.h): the first Runs are float32 and correct. When the probes of a Run have
 * come back — read asynchronously, no host wait — it composes the mixed graph (the nodes touching a
 * value near float16's limit stay float32, all others run lowered), logs what it kept, and later
 * Runs take that model. The mixed model watches its outputs (sum |x| of each): should one come back
 * inf or NaN, later Runs go back to float32 and the log says so. The watch reads every Run's probes
 * for the first checks, then one Run in 64, so it costs a replay a few small kernels and rarely a copy.
 *
 * Thread-safe: concurrent Runs take the model current when they begin; models the guard has moved
 * past stay alive until gfx_range_guard_free, as Runs may still be using them.
 */
#ifndef GFXEP_EXEC_RANGE_GUARD_H
#define GFXEP_EXEC_RANGE_GUARD_H

#include "exec/model.h"

typedef struct gfx_range_guard gfx_range_guard;

typedef struct gfx_range_guard_config {
  const char* partition; /* its name in the log ("partition 3") */
  int use_graphs;        /* gfx_model_use_graphs for every model the guard makes */
  int stamp_replays;     /* gfx_model_stamp_replays likewise */
} gfx_range_guard_config;

/* Takes ownership of full (the partition in float32, not fused) and lowered (the same partition with
 * its float32 values lowered: node first_lowered + k is full's node k) in every case. */
gfx_status gfx_range_guard_create(gfx_dev* dev, ir_graph* full, ir_graph* lowered, int first_lowered,
                                  const gfx_range_guard_config* config, gfx_range_guard** out);
void gfx_range_guard_free(gfx_range_guard* g);

/* Begins a Run: takes up the probes that have come back, and returns the model to run now. */
gfx_model* gfx_range_guard_begin(gfx_range_guard* g);
/* Outputs of `model` from this index on are the guard's probes: hand them to gfx_range_guard_probe. */
int gfx_range_guard_first_probe(const gfx_range_guard* g, const gfx_model* model);
/* The device memory of a probe output (index >= gfx_range_guard_first_probe). */
gfx_status gfx_range_guard_probe(gfx_range_guard* g, int index, void** data);
/* Ends a Run of `model` on `stream` that succeeded: queues the copy of its probes back to the host
 * when a check is due. */
void gfx_range_guard_end(gfx_range_guard* g, gfx_model* model, void* stream);

/* The model Runs take now (for statistics). */
gfx_model* gfx_range_guard_current(gfx_range_guard* g);

#endif
