/* gfxep — a compiled partition bound to one backend device, and its executor.
 *
 * gfx_model_create uploads the constants once. gfx_model_run resolves shapes for the inputs it is
 * given — once per new input-shape signature, cached afterwards — plans intermediate memory, asks
 * the caller for the output buffers, and enqueues every node on the caller's stream. It does not
 * wait for the device: with a stream, the run returns as soon as the work is queued.
 *
 * Concurrent runs of one model on different streams are safe: signature instances are shared and
 * immutable once built, and each run takes its own workspace from a pool whose entries are reused
 * only when the device is done with them or ordered on the same stream.
 *
 * STAGES. Where output shapes depend on data (ir/dynamic.h: a TopK whose k, or a Slice whose starts or
 * ends, are computed in the partition or given as its inputs; the count of a NonZero or a
 * NonMaxSuppression), the partition runs in stages. Stage 0 holds every node whose shapes follow
 * from the input shapes; stage s + 1 the nodes that need a value stage s (or an earlier one, or an
 * input) computed. Between two stages the executor copies the values the next stage needs (a few
 * int64 each) to host memory and waits for them with ONE bounded host wait (the backend's event_sync:
 * 60 s on CUDA and Vulkan, then a status), folds them into the nodes that need them, and resolves,
 * plans and prepares the next stage: its instance hangs below the previous stage's, keyed by the
 * values read (the last MAX_CHILDREN kept; new values beyond that build a stage for one Run). Each
 * stage plans its own workspace; values a later stage reads stay alive to the end of the Run. Graph
 * outputs are requested from the caller (gfx_output_fn) in the stage that produces them, so an output
 * whose shape the data decides is allocated once its shape is known. Only stage 0 is ever recorded
 * and replayed (gfx_model_use_graphs): its addresses and shapes are known before any read; the later
 * stages run node by node after each read, so a replay never runs shapes it was not recorded with. A
 * partition without such nodes is one stage, exactly as before: no read, no wait. A value that is
 * shape arithmetic (a Shape, constants, small int32/int64 nodes over them) is never read: the host
 * computes it while resolving the stage whose shapes it needs (the reference kernels on host memory),
 * so it costs no stage and no wait.
 */
#ifndef GFXEP_EXEC_MODEL_H
#define GFXEP_EXEC_MODEL_H

#include "backend/backend.h"
#include "exec/run_stamps.h"
#include "ir/graph.h"

typedef struct gfx_model gfx_model;

/* Called once per graph output after shape resolution; returns the memory to write that output
 * into (device memory of the model's backend), which must hold the shape's bytes. */
typedef gfx_status (*gfx_output_fn)(void* user, int index, const gfx_shape* shape, void** data);

/* Takes ownership of graph in every case (it is freed on failure). */
gfx_status gfx_model_create(gfx_dev* dev, ir_graph* graph, gfx_model** out);
void gfx_model_free(gfx_model* m);

/* inputs: one per graph input, in order, in the backend's device memory. */
gfx_status gfx_model_run(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs, void* user);

/* Runs like gfx_model_run and stamps the run's begin and end on the device for the frame timings
 * (run_stamps.h): a replay of a graph captured after gfx_model_stamp_replays(m, 1) names its replay
 * stamps, any other run writes the requested slot stamps around its work. */
gfx_status gfx_model_run_stamped(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                 void* user, gfx_run_stamps* stamps);
/* Graphs captured from now on stamp their own replays, where the backend can (replay stamps). */
void gfx_model_stamp_replays(gfx_model* m, int enable);
/* Replays a self-stamping graph keeps figures for: as many as the frame timings' ring holds. */
#define GFX_REPLAY_STAMPS 64

/* Runs like gfx_model_run while the caller captures `stream` into a graph of its own (identified by
 * pin_id) that will replay this run's work without calling the model again. Therefore it allocates
 * nothing, waits for nothing and queries no event: the input shapes must have run before (their
 * signature is prepared) and an idle workspace must have last been used on this stream; otherwise it
 * fails, naming why, without touching the stream. A partition of several stages fails so too (its
 * Run reads values back, which a recording cannot replay). The workspace it uses (whose addresses the graph bakes
 * in) is pinned: no other run takes it until gfx_model_unpin(pin_id). Replays of one graph on one
 * stream share it safely, as the stream orders them. Never replays or captures a graph of its own. */
gfx_status gfx_model_run_captured(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                  void* user, int pin_id);
/* Releases the workspaces pinned for pin_id once the work queued on `stream` so far is done (an event
 * recorded there orders later runs on other streams); `stream` must not be capturing. */
gfx_status gfx_model_unpin(gfx_model* m, int pin_id, void* stream);

/* One node of a traced run: where it started on the device clock, relative to the start of the run's
 * first node, and how long the device spent on it (microseconds). */
typedef struct gfx_node_trace {
  int node;
  double start_us;
  double device_us;
} gfx_node_trace;

/* Runs like gfx_model_run, but node by node (never a replayed graph) with a device timer between
 * nodes, and waits for the device before it returns: trace receives one entry per node of
 * gfx_model_graph(m). A diagnostic mode for profilers; GFX_ERR_NOT_SUPPORTED when the backend has no
 * timers. */
gfx_status gfx_model_run_traced(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                void* user, gfx_node_trace* trace);

typedef struct gfx_model_stats {
  int signatures;          /* input-shape signatures compiled so far */
  size_t weight_bytes;     /* device memory held by constants */
  size_t workspace_bytes;  /* device memory held by the workspace pool */
  size_t live_bound_bytes; /* the most intermediate bytes alive at once in any signature's node order
                            * (unaligned, no node scratch): with weight_bytes, the lower bound of what a
                            * single run needs */
  size_t scratch_bytes;    /* the largest node scratch of any signature (library workspaces) */
  int workspaces;          /* entries in the workspace pool */
  int graphs;              /* captured graphs */
  long long graph_launches; /* runs replayed from a graph */
  int stages;              /* 1, or the stages of a partition whose shapes depend on data */
  long long value_reads;   /* host reads between stages so far (one per stage boundary per Run) */
  long long stage_builds;  /* later-stage instances resolved and prepared so far */
  int stage_instances;     /* later-stage instances kept now */
} gfx_model_stats;

/* Whether runs may be replayed as captured graphs (default on where the backend can capture). A run
 * whose every address (inputs, outputs, intermediates, weights) matches an earlier run's replays that
 * run's graph; the second run with the same addresses captures it. */
void gfx_model_use_graphs(gfx_model* m, int enable);

void gfx_model_get_stats(gfx_model* m, gfx_model_stats* out);
/* The partition's stages: 1 when every shape follows from the input shapes. */
int gfx_model_stages(const gfx_model* m);
const ir_graph* gfx_model_graph(const gfx_model* m);

#endif
