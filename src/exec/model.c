#include "exec/model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/wrap.h"
#include "core/log.h"
#include "ir/plan.h"
#include "ir/shape.h"

/* A captured run: the addresses it baked in, and its replayable graph. */
#define MAX_GRAPHS_PER_INSTANCE 8
typedef struct graph_entry {
  void** ptrs;  /* per value, as bound in the run that was captured */
  void* exec;   /* NULL until captured */
  int seen;     /* runs seen with these addresses */
  int failed;   /* capture failed once: these addresses run node by node */
  gfx_replay_stamps* stamps; /* the graph stamps its own begin and end (frame timings), or NULL */
  uint64_t replays;          /* launches of exec so far: the next one is replay number `replays` */
} graph_entry;

/* Everything that depends only on the input shapes. Built once per signature, then read-only except
 * for the graph cache (guarded by the model's lock). */
typedef struct instance {
  gfx_shape* input_shapes; /* the signature */
  gfx_shape* shapes;       /* per value */
  ir_plan plan;
  int* alias_root;         /* per value: the value whose memory it uses (itself unless a view's output) */
  size_t* alias_at;        /* per value: byte offset into alias_root's memory (a Split view's piece) */
  void** node_state;
  size_t* node_scratch;
  size_t scratch_offset;   /* node scratch lives after the planned intermediates */
  size_t workspace_bytes;  /* intermediates + the largest node scratch */
  graph_entry graphs[MAX_GRAPHS_PER_INSTANCE];
  int n_graphs;
  struct instance* next;
} instance;

/* Device memory one run uses while it is in flight. */
typedef struct workspace {
  void* base;
  size_t bytes;
  void* event;       /* recorded after the run's last node */
  void* last_stream; /* the stream of the run that used it last */
  int in_use;
  int pinned;        /* baked into a graph captured by the caller (pin_id): no other run may take it */
  int pin_id;
  void** ptrs;       /* per value: where it lives during the run */
  struct workspace* next;
} workspace;

struct gfx_model {
  gfx_dev* dev;
  ir_graph* graph;
  void* weights;       /* one device block for all constants */
  size_t weight_bytes;
  size_t* weight_offset; /* per value, or IR_PLAN_NO_OFFSET */
  pthread_mutex_t lock;
  instance* instances;
  int n_instances;
  int use_graphs;
  int stamp_replays; /* graphs captured from now on stamp their own replays (frame timings) */
  long long graph_launches;
  int active_runs; /* runs between instance lookup and workspace release, across threads */
  workspace* pool;
  int n_pool;
};

#define MAX_IDLE_WORKSPACES 4

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

const ir_graph* gfx_model_graph(const gfx_model* m) { return m->graph; }

static gfx_status upload_constants(gfx_model* m) {
  const ir_graph* g = m->graph;
  size_t a = gfx_backend_alignment(m->dev);
  m->weight_offset = malloc(sizeof(size_t) * (size_t)(g->n_values + 1));
  if (!m->weight_offset) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "weight table");
  size_t total = 0;
  for (int v = 0; v < g->n_values; v++) {
    m->weight_offset[v] = IR_PLAN_NO_OFFSET;
    if (!g->values[v].const_data) continue;
    m->weight_offset[v] = total;
    total += align_up(g->values[v].const_bytes ? g->values[v].const_bytes : 1, a);
  }
  if (total == 0) return NULL;
  GFX_TRY(gfx_backend_mem_alloc(m->dev, total, &m->weights));
  m->weight_bytes = total;
  for (int v = 0; v < g->n_values; v++) {
    if (m->weight_offset[v] == IR_PLAN_NO_OFFSET || g->values[v].const_bytes == 0) continue;
    gfx_status s = gfx_backend_copy(m->dev, (char*)m->weights + m->weight_offset[v], g->values[v].const_data,
                               g->values[v].const_bytes, GFX_COPY_HOST_TO_DEVICE, NULL);
    if (s) return gfx_status_wrap(s, "uploading constant '%s'", g->values[v].name);
  }
  return NULL;
}

static gfx_status instance_get(gfx_model* m, const gfx_tensor* inputs, instance** out);
static gfx_status workspace_acquire(gfx_model* m, size_t bytes, void* stream, workspace** out);

/* When every input shape is known at compile time, the only signature there will be is compiled now,
 * and a workspace allocated: the first Run then allocates nothing and prepares nothing. That keeps
 * memory allocation (which can synchronize the device) out of the frame loop, where a Run queued
 * behind a semaphore wait must return at once. */
static gfx_status prepare_static(gfx_model* m) {
  const ir_graph* g = m->graph;
  gfx_tensor* inputs = calloc((size_t)g->n_inputs + 1, sizeof *inputs);
  if (!inputs) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "static inputs");
  gfx_status s = NULL;
  int known = 1;
  for (int i = 0; i < g->n_inputs && known; i++) {
    const ir_value* v = &g->values[g->inputs[i]];
    known = v->shape.rank >= 0 && gfx_shape_is_known(&v->shape);
    inputs[i] = (gfx_tensor){.data = NULL, .dtype = v->dtype, .shape = v->shape};
  }
  if (known) {
    instance* in = NULL;
    workspace* w = NULL;
    s = instance_get(m, inputs, &in);
    if (!s) s = workspace_acquire(m, in->workspace_bytes, NULL, &w);
    if (!s) w->in_use = 0; /* idle, reusable by any stream: no work has touched it */
  }
  free(inputs);
  return s;
}

gfx_status gfx_model_create(gfx_dev* dev, ir_graph* graph, gfx_model** out) {
  *out = NULL;
  gfx_status s = ir_graph_validate(graph);
  if (s) {
    ir_graph_free(graph);
    return s;
  }
  gfx_model* m = calloc(1, sizeof *m);
  if (!m) {
    ir_graph_free(graph);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "model");
  }
  m->dev = dev;
  m->graph = graph;
  m->use_graphs = gfx_backend_can_capture(dev);
  pthread_mutex_init(&m->lock, NULL);
  s = upload_constants(m);
  if (!s) s = prepare_static(m);
  if (s) {
    gfx_model_free(m);
    return s;
  }
  *out = m;
  return NULL;
}

static void instance_free(const gfx_model* m, instance* in) {
  if (!in) return;
  for (int i = 0; i < in->n_graphs; i++) {
    gfx_backend_graph_destroy(m->dev, in->graphs[i].exec);
    gfx_replay_stamps_unref(in->graphs[i].stamps);
    free(in->graphs[i].ptrs);
  }
  if (in->node_state)
    for (int n = 0; n < m->graph->n_nodes; n++)
      gfx_backend_node_release(m->dev, in->node_state[n]);
  ir_plan_free(&in->plan);
  free(in->alias_root);
  free(in->alias_at);
  free(in->node_state);
  free(in->node_scratch);
  free(in->shapes);
  free(in->input_shapes);
  free(in);
}

static void workspace_free(const gfx_model* m, workspace* w) {
  if (!w) return;
  if (w->event) {
    /* a pooled workspace may still be read by queued work: let the device finish first (not while the
     * device is stalled on a wait that may never complete: the free below is then held until it resumes) */
    if (!gfx_backend_is_stalled(m->dev)) gfx_status_free(gfx_backend_event_sync(m->dev, w->event));
    gfx_backend_event_destroy(m->dev, w->event);
  }
  if (w->base) gfx_backend_mem_free(m->dev, w->base);
  free(w->ptrs);
  free(w);
}

void gfx_model_free(gfx_model* m) {
  if (!m) return;
  for (workspace* w = m->pool; w;) {
    workspace* next = w->next;
    workspace_free(m, w);
    w = next;
  }
  for (instance* in = m->instances; in;) {
    instance* next = in->next;
    instance_free(m, in);
    in = next;
  }
  if (m->weights) gfx_backend_mem_free(m->dev, m->weights);
  free(m->weight_offset);
  ir_graph_free(m->graph);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

static int same_signature(const instance* in, const gfx_tensor* inputs, int n) {
  for (int i = 0; i < n; i++)
    if (!gfx_shape_equal(&in->input_shapes[i], &inputs[i].shape)) return 0;
  return 1;
}

static gfx_status instance_build(const gfx_model* m, const gfx_tensor* inputs, instance** out) {
  const ir_graph* g = m->graph;
  instance* in = calloc(1, sizeof *in);
  if (!in) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "shape instance");
  gfx_status s = NULL;
  in->input_shapes = malloc(sizeof(gfx_shape) * (size_t)(g->n_inputs + 1));
  in->shapes = malloc(sizeof(gfx_shape) * (size_t)(g->n_values + 1));
  in->node_state = calloc((size_t)g->n_nodes + 1, sizeof(void*));
  in->node_scratch = calloc((size_t)g->n_nodes + 1, sizeof(size_t));
  if (!in->input_shapes || !in->shapes || !in->node_state || !in->node_scratch) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "shape instance");
    goto fail;
  }
  for (int i = 0; i < g->n_inputs; i++) in->input_shapes[i] = inputs[i].shape;
  if ((s = ir_infer_shapes(g, in->input_shapes, in->shapes))) goto fail;
  size_t a = gfx_backend_alignment(m->dev);
  if ((s = ir_plan_memory(g, in->shapes, a, &in->plan))) goto fail;
  /* views resolved to the memory's owner once here, not on every run; values are indexed in creation
   * order, not topological order, so follow each chain */
  in->alias_root = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  in->alias_at = malloc(sizeof(size_t) * (size_t)(g->n_values + 1));
  if (!in->alias_root || !in->alias_at) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "shape instance");
    goto fail;
  }
  for (int v = 0; v < g->n_values; v++) {
    int root = v;
    size_t at = 0;
    for (; in->plan.alias_of[root] >= 0; root = in->plan.alias_of[root]) at += in->plan.alias_offset[root];
    in->alias_root[v] = root;
    in->alias_at[v] = at;
  }
  size_t scratch = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    gfx_shape is[IR_MAX_IO], os[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++)
      is[i] = node->inputs[i] >= 0 ? in->shapes[node->inputs[i]] : (gfx_shape){.rank = -1};
    for (int o = 0; o < node->n_outputs; o++) os[o] = in->shapes[node->outputs[o]];
    s = gfx_backend_node_prepare(m->dev, node, is, os, &in->node_state[n], &in->node_scratch[n]);
    if (s) {
      s = gfx_status_wrap(s, "preparing node '%s' (%s)", node->name, ir_op_name(node->op));
      goto fail;
    }
    if (in->node_scratch[n] > scratch) scratch = in->node_scratch[n];
  }
  in->scratch_offset = in->plan.workspace_bytes;
  in->workspace_bytes = in->plan.workspace_bytes + align_up(scratch, a);
  *out = in;
  return NULL;
fail:
  instance_free(m, in);
  return s;
}

/* Finds or builds the instance for these input shapes. Instances live until the model dies. */
static gfx_status instance_get(gfx_model* m, const gfx_tensor* inputs, instance** out) {
  pthread_mutex_lock(&m->lock);
  for (instance* in = m->instances; in; in = in->next)
    if (same_signature(in, inputs, m->graph->n_inputs)) {
      *out = in;
      pthread_mutex_unlock(&m->lock);
      return NULL;
    }
  instance* in = NULL;
  gfx_status s = instance_build(m, inputs, &in);
  if (!s) {
    in->next = m->instances;
    m->instances = in;
    m->n_instances++;
    *out = in;
  }
  pthread_mutex_unlock(&m->lock);
  return s;
}

/* The instance for these input shapes if an earlier run built it; never builds one. */
static instance* instance_find(gfx_model* m, const gfx_tensor* inputs) {
  pthread_mutex_lock(&m->lock);
  instance* found = NULL;
  for (instance* in = m->instances; in && !found; in = in->next)
    if (same_signature(in, inputs, m->graph->n_inputs)) found = in;
  pthread_mutex_unlock(&m->lock);
  return found;
}

/* For a run being captured by the caller: an idle workspace of at least `bytes` that an earlier run
 * used on this same stream, so the stream orders it and no event needs asking; nothing is allocated
 * (allocating, or querying an event, is not allowed while a stream is captured). */
static gfx_status workspace_acquire_captured(gfx_model* m, size_t bytes, void* stream, workspace** out) {
  pthread_mutex_lock(&m->lock);
  workspace* pick = NULL;
  for (workspace* w = m->pool; w && !pick; w = w->next)
    if (!w->in_use && !w->pinned && w->bytes >= bytes && w->last_stream == stream) pick = w;
  if (pick) pick->in_use = 1;
  pthread_mutex_unlock(&m->lock);
  *out = pick;
  if (pick) return NULL;
  return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                   "no workspace of %zu bytes was used on this stream before the capture: the warm-up runs of "
                   "this graph did not run these input shapes on this stream",
                   bytes);
}

/* Takes a workspace of at least `bytes` for a run on `stream`, without waiting for the device. */
static gfx_status workspace_acquire(gfx_model* m, size_t bytes, void* stream, workspace** out) {
  pthread_mutex_lock(&m->lock);
  workspace* pick = NULL;
  int idle = 0;
  /* reusable at once: same stream (the device orders it) or the device is done with it */
  for (workspace* w = m->pool; w; w = w->next) {
    if (w->in_use || w->pinned) continue;
    idle++;
    if (w->bytes >= bytes && (w->last_stream == stream || gfx_backend_event_done(m->dev, w->event))) {
      pick = w;
      break;
    }
  }
  gfx_status s = NULL;
  if (!pick && idle >= MAX_IDLE_WORKSPACES) {
    /* enough idle ones exist: order this stream after the one that is big enough instead of growing */
    for (workspace* w = m->pool; w && !pick; w = w->next)
      if (!w->in_use && !w->pinned && w->bytes >= bytes) pick = w;
    if (pick && (s = gfx_backend_stream_wait_event(m->dev, stream, pick->event))) pick = NULL;
  }
  if (!pick && !s) {
    workspace* w = calloc(1, sizeof *w);
    if (!w) {
      s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "workspace");
    } else {
      w->ptrs = calloc((size_t)m->graph->n_values + 1, sizeof(void*));
      s = w->ptrs ? gfx_backend_event_create(m->dev, &w->event)
                  : gfx_error(GFX_ERR_OUT_OF_MEMORY, "workspace pointer table");
      if (!s && bytes) s = gfx_backend_mem_alloc(m->dev, bytes, &w->base);
      if (s) {
        workspace_free(m, w);
      } else {
        w->bytes = bytes;
        w->next = m->pool;
        m->pool = w;
        m->n_pool++;
        pick = w;
      }
    }
  }
  if (pick) pick->in_use = 1;
  pthread_mutex_unlock(&m->lock);
  *out = pick;
  return s;
}

static gfx_status workspace_release(gfx_model* m, workspace* w, void* stream) {
  gfx_status s = gfx_backend_event_record(m->dev, w->event, stream);
  pthread_mutex_lock(&m->lock);
  w->last_stream = stream;
  w->in_use = 0;
  pthread_mutex_unlock(&m->lock);
  return s;
}

/* Binds node n's tensors to this run's addresses and enqueues it on stream. */
static gfx_status run_node(gfx_model* m, const instance* in, workspace* w, void* stream, int n) {
  const ir_graph* g = m->graph;
  const ir_node* node = &g->nodes[n];
  /* a view whose output shares its input's memory has nothing to do; nor has a Split whose outputs
   * the plan made pieces of its input */
  if (ir_op_is_view(node->op) && node->inputs[0] >= 0 && w->ptrs[node->outputs[0]] == w->ptrs[node->inputs[0]])
    return NULL;
  if (node->op == GFX_OP_SPLIT && node->n_outputs > 0 && node->outputs[0] >= 0 &&
      in->plan.alias_of[node->outputs[0]] == node->inputs[0])
    return NULL;
  gfx_tensor ti[IR_MAX_IO], to[IR_MAX_IO];
  for (int i = 0; i < node->n_inputs; i++) {
    int v = node->inputs[i];
    if (v < 0) {
      ti[i] = (gfx_tensor){.data = NULL, .dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}};
      continue;
    }
    ti[i] = (gfx_tensor){.data = w->ptrs[v], .dtype = g->values[v].dtype, .shape = in->shapes[v]};
  }
  for (int o = 0; o < node->n_outputs; o++) {
    int v = node->outputs[o];
    to[o] = (gfx_tensor){.data = w->ptrs[v], .dtype = g->values[v].dtype, .shape = in->shapes[v]};
  }
  gfx_exec_ctx ctx = {
      .dev = m->dev,
      .stream = stream,
      .scratch = in->node_scratch[n] ? (char*)w->base + in->scratch_offset : NULL,
      .scratch_bytes = in->node_scratch[n],
  };
  gfx_status s = gfx_backend_node_run(&ctx, node, ti, to, in->node_state[n]);
  if (s) return gfx_status_wrap(s, "running node '%s' (%s)", node->name, ir_op_name(node->op));
  return NULL;
}

static gfx_status run_nodes(gfx_model* m, const instance* in, workspace* w, void* stream) {
  for (int n = 0; n < m->graph->n_nodes; n++) GFX_TRY(run_node(m, in, w, stream, n));
  return NULL;
}

/* run_nodes with a device timer before the first node and after each; the device is synchronized
 * before the trace is read. */
static gfx_status run_nodes_traced(gfx_model* m, const instance* in, workspace* w, void* stream,
                                   gfx_node_trace* trace) {
  const ir_graph* g = m->graph;
  void** timers = calloc((size_t)g->n_nodes + 1, sizeof(void*));
  if (!timers) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "profiling timers");
  gfx_status s = NULL;
  for (int t = 0; t <= g->n_nodes && !s; t++) s = gfx_backend_timer_create(m->dev, &timers[t]);
  /* hold the device back while the host queues every node (a cuDNN convolution takes the host some
   * 40 us to queue when not replayed), so that the timers measure the kernels back to back and not
   * the host's launch gaps */
  if (!s && gfx_backend_has_stream_hold(m->dev)) {
    double us = 2000.0 + 100.0 * g->n_nodes;
    s = gfx_backend_stream_hold(m->dev, stream, us < 200000.0 ? us : 200000.0);
  }
  if (!s) s = gfx_backend_event_record(m->dev, timers[0], stream);
  for (int n = 0; n < g->n_nodes && !s; n++) {
    s = run_node(m, in, w, stream, n);
    if (!s) s = gfx_backend_event_record(m->dev, timers[n + 1], stream);
  }
  for (int n = 0; n < g->n_nodes && !s; n++) {
    trace[n].node = n;
    s = gfx_backend_timer_elapsed_us(m->dev, timers[0], timers[n], &trace[n].start_us);
    if (!s) s = gfx_backend_timer_elapsed_us(m->dev, timers[n], timers[n + 1], &trace[n].device_us);
  }
  for (int t = 0; t <= g->n_nodes; t++)
    if (timers[t]) gfx_backend_event_destroy(m->dev, timers[t]);
  free(timers);
  return s;
}

void gfx_model_use_graphs(gfx_model* m, int enable) {
  m->use_graphs = enable && gfx_backend_can_capture(m->dev);
}

void gfx_model_stamp_replays(gfx_model* m, int enable) {
  pthread_mutex_lock(&m->lock);
  m->stamp_replays = enable && gfx_backend_has_replay_stamps(m->dev);
  pthread_mutex_unlock(&m->lock);
}

/* Launches entry e's graph, reporting which replay of its stamps it is. Replays of one graph use one
 * set of addresses, hence one workspace, which no two runs hold at once: they never race here. */
static gfx_status launch(gfx_model* m, graph_entry* e, void* exec, void* stream, gfx_run_stamps* st) {
  pthread_mutex_lock(&m->lock);
  gfx_replay_stamps* stamps = e->stamps;
  const uint64_t replay = e->replays;
  pthread_mutex_unlock(&m->lock);
  const int slots = !(stamps && st);
  if (slots) gfx_run_stamps_write(m->dev, st, 0, stream);
  gfx_status s = gfx_backend_graph_launch(m->dev, exec, stream);
  if (s) return s;
  pthread_mutex_lock(&m->lock);
  m->graph_launches++;
  e->replays++;
  pthread_mutex_unlock(&m->lock);
  if (!slots) {
    st->ring = gfx_replay_stamps_ref(stamps);
    st->replay = replay;
  } else {
    gfx_run_stamps_write(m->dev, st, 1, stream);
  }
  return NULL;
}

/* Nodes one by one, between the request's slot stamps. */
static gfx_status run_nodes_stamped(gfx_model* m, const instance* in, workspace* w, void* stream,
                                    gfx_run_stamps* st) {
  gfx_run_stamps_write(m->dev, st, 0, stream);
  gfx_status s = run_nodes(m, in, w, stream);
  if (!s) gfx_run_stamps_write(m->dev, st, 1, stream);
  return s;
}

/* The graph entry for this run's addresses (NULL when graphs are off or the cache is full). */
static graph_entry* graph_lookup(gfx_model* m, instance* in, void* const* ptrs) {
  size_t bytes = sizeof(void*) * (size_t)m->graph->n_values;
  for (int i = 0; i < in->n_graphs; i++)
    if (memcmp(in->graphs[i].ptrs, ptrs, bytes) == 0) return &in->graphs[i];
  if (in->n_graphs == MAX_GRAPHS_PER_INSTANCE) return NULL;
  graph_entry* e = &in->graphs[in->n_graphs];
  e->ptrs = malloc(bytes + 1);
  if (!e->ptrs) return NULL;
  memcpy(e->ptrs, ptrs, bytes);
  e->exec = NULL;
  e->seen = 0;
  e->failed = 0;
  e->stamps = NULL;
  e->replays = 0;
  in->n_graphs++;
  return e;
}

/* Runs the nodes directly, or replays / captures the graph of these addresses. The first run with
 * new addresses runs node by node (libraries load their kernels and create their handles then, which
 * a capture must not do); the second captures; later ones replay, costing one launch on the CPU. */
static gfx_status run_or_replay(gfx_model* m, instance* in, workspace* w, void* stream, gfx_run_stamps* st) {
  if (!m->use_graphs || !stream) return run_nodes_stamped(m, in, w, stream, st);
  pthread_mutex_lock(&m->lock);
  graph_entry* e = graph_lookup(m, in, w->ptrs);
  void* exec = e ? e->exec : NULL;
  /* capture only while this run is the model's only one: library handles and lazily loaded kernels
   * shared with a run on another thread must not be touched from inside a capture */
  int capture = e && !exec && !e->failed && e->seen >= 1 && m->active_runs == 1;
  const int stamp_replays = m->stamp_replays;
  if (e) e->seen++;
  pthread_mutex_unlock(&m->lock);
  if (exec) return launch(m, e, exec, stream, st);
  if (!capture) return run_nodes_stamped(m, in, w, stream, st);
  /* the ring is made before the capture: its allocations are not allowed inside one */
  gfx_replay_stamps* stamps = NULL;
  if (stamp_replays) {
    gfx_status r = gfx_replay_stamps_create(m->dev, GFX_REPLAY_STAMPS, &stamps);
    if (r) {
      gfx_log(GFX_LOG_INFO, "gfxep: this graph's replays will be stamped from the host: %s", gfx_status_message(r));
      gfx_status_free(r);
    }
  }
  gfx_status s = gfx_backend_capture_begin(m->dev, stream);
  if (s) {
    gfx_log(GFX_LOG_INFO, "graph capture unavailable, running node by node: %s", gfx_status_message(s));
    gfx_status_free(s);
    gfx_replay_stamps_unref(stamps);
    pthread_mutex_lock(&m->lock);
    e->failed = 1;
    pthread_mutex_unlock(&m->lock);
    return run_nodes_stamped(m, in, w, stream, st);
  }
  gfx_status r = stamps ? gfx_replay_stamps_record(stamps, 0, stream) : NULL;
  if (!r) r = run_nodes(m, in, w, stream);
  if (!r && stamps) r = gfx_replay_stamps_record(stamps, 1, stream);
  void* captured = NULL;
  s = gfx_backend_capture_end(m->dev, stream, r ? NULL : &captured);
  if (r || s) {
    /* nothing ran while capturing: log why, and run this one node by node */
    gfx_log(GFX_LOG_INFO, "graph capture failed, running node by node: %s", gfx_status_message(r ? r : s));
    gfx_status_free(r);
    gfx_status_free(s);
    gfx_replay_stamps_unref(stamps);
    pthread_mutex_lock(&m->lock);
    e->failed = 1;
    pthread_mutex_unlock(&m->lock);
    return run_nodes_stamped(m, in, w, stream, st);
  }
  pthread_mutex_lock(&m->lock);
  e->exec = captured;
  e->stamps = stamps;
  pthread_mutex_unlock(&m->lock);
  return launch(m, e, captured, stream, st);
}

/* How a run goes: node_trace (profiling) or pin (a run the caller captures into its own graph). */
typedef struct run_mode {
  gfx_node_trace* trace;
  gfx_run_stamps* stamps; /* frame timings: what to stamp (not with trace or captured) */
  int captured; /* the caller captures the stream: allocate nothing, record nothing, pin the workspace */
  int pin_id;
} run_mode;

static gfx_status model_run(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs, void* user,
                            const run_mode* mode) {
  const ir_graph* g = m->graph;
  for (int i = 0; i < g->n_inputs; i++) {
    const ir_value* v = &g->values[g->inputs[i]];
    if (inputs[i].dtype != v->dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input '%s' is %s, the model expects %s", v->name,
                       gfx_dtype_name(inputs[i].dtype), gfx_dtype_name(v->dtype));
  }
  instance* in = NULL;
  workspace* w = NULL;
  if (mode->captured) {
    in = instance_find(m, inputs);
    if (!in)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "input shapes not seen before the capture (a captured run may not prepare a new shape "
                       "signature: warm up these shapes first, or give them their own graph)");
    GFX_TRY(workspace_acquire_captured(m, in->workspace_bytes, stream, &w));
  } else {
    GFX_TRY(instance_get(m, inputs, &in));
    GFX_TRY(workspace_acquire(m, in->workspace_bytes, stream, &w));
  }
  pthread_mutex_lock(&m->lock);
  m->active_runs++;
  pthread_mutex_unlock(&m->lock);

  gfx_status s = NULL;
  for (int v = 0; v < g->n_values; v++) {
    if (in->plan.offsets[v] != IR_PLAN_NO_OFFSET)
      w->ptrs[v] = (char*)w->base + in->plan.offsets[v];
    else if (m->weight_offset[v] != IR_PLAN_NO_OFFSET)
      w->ptrs[v] = (char*)m->weights + m->weight_offset[v];
    else
      w->ptrs[v] = NULL;
  }
  for (int i = 0; i < g->n_inputs; i++) w->ptrs[g->inputs[i]] = inputs[i].data;
  for (int o = 0; o < g->n_outputs && !s; o++) {
    int v = g->outputs[o];
    void* dst = NULL;
    s = outputs(user, o, &in->shapes[v], &dst);
    if (s) break;
    if (g->values[v].producer >= 0) {
      w->ptrs[v] = dst;
    } else if (in->plan.sizes[v]) {
      /* an output that is a graph input or a constant: no node writes it, so copy it */
      const void* src = g->values[v].graph_input >= 0 ? inputs[g->values[v].graph_input].data
                                                      : (char*)m->weights + m->weight_offset[v];
      s = gfx_backend_copy(m->dev, dst, src, in->plan.sizes[v], GFX_COPY_DEVICE_TO_DEVICE, stream);
    }
  }
  /* views share their source's memory (set after the outputs are bound: a view may read a graph
   * output) */
  for (int v = 0; v < g->n_values; v++)
    if (in->alias_root[v] != v)
      w->ptrs[v] = w->ptrs[in->alias_root[v]] ? (char*)w->ptrs[in->alias_root[v]] + in->alias_at[v] : NULL;
  if (!s) {
    if (mode->trace) s = run_nodes_traced(m, in, w, stream, mode->trace);
    else if (mode->captured) s = run_nodes(m, in, w, stream); /* never a graph inside a capture */
    else s = run_or_replay(m, in, w, stream, mode->stamps);
  }
  pthread_mutex_lock(&m->lock);
  m->active_runs--;
  pthread_mutex_unlock(&m->lock);
  if (mode->captured) {
    /* an event recorded now would belong to the capture, and could not be asked later: the pinned
     * workspace is ordered by its stream until gfx_model_unpin records one */
    pthread_mutex_lock(&m->lock);
    w->in_use = 0;
    w->last_stream = stream;
    w->pinned = !s;
    w->pin_id = mode->pin_id;
    pthread_mutex_unlock(&m->lock);
    return s;
  }
  gfx_status r = workspace_release(m, w, stream);
  if (!s) s = r;
  else gfx_status_free(r);
  return s;
}

gfx_status gfx_model_run(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs, void* user) {
  run_mode mode = {0};
  return model_run(m, stream, inputs, outputs, user, &mode);
}

gfx_status gfx_model_run_stamped(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                 void* user, gfx_run_stamps* stamps) {
  stamps->begin_written = stamps->end_written = 0;
  stamps->ring = NULL;
  stamps->replay = 0;
  run_mode mode = {.stamps = stamps};
  return model_run(m, stream, inputs, outputs, user, &mode);
}

gfx_status gfx_model_run_captured(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                  void* user, int pin_id) {
  if (!stream) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "a captured run needs a stream");
  run_mode mode = {.captured = 1, .pin_id = pin_id};
  return model_run(m, stream, inputs, outputs, user, &mode);
}

gfx_status gfx_model_unpin(gfx_model* m, int pin_id, void* stream) {
  gfx_status s = NULL;
  pthread_mutex_lock(&m->lock);
  for (workspace* w = m->pool; w; w = w->next) {
    if (!w->pinned || w->pin_id != pin_id) continue;
    /* replays queued on `stream` may still use it: a run on another stream waits for this event */
    gfx_status r = stream ? gfx_backend_event_record(m->dev, w->event, stream) : NULL;
    if (!s) s = r;
    else gfx_status_free(r);
    w->last_stream = stream;
    w->pinned = 0;
  }
  pthread_mutex_unlock(&m->lock);
  return s;
}

gfx_status gfx_model_run_traced(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs,
                                void* user, gfx_node_trace* trace) {
  if (!gfx_backend_has_timers(m->dev) || !trace)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "the %s backend cannot time its kernels", gfx_backend_name(m->dev));
  run_mode mode = {.trace = trace};
  return model_run(m, stream, inputs, outputs, user, &mode);
}

void gfx_model_get_stats(gfx_model* m, gfx_model_stats* out) {
  pthread_mutex_lock(&m->lock);
  out->signatures = m->n_instances;
  out->weight_bytes = m->weight_bytes;
  out->workspace_bytes = 0;
  out->workspaces = m->n_pool;
  out->graphs = 0;
  for (instance* in = m->instances; in; in = in->next)
    for (int i = 0; i < in->n_graphs; i++) out->graphs += in->graphs[i].exec != NULL;
  out->graph_launches = m->graph_launches;
  out->live_bound_bytes = out->scratch_bytes = 0;
  for (instance* in = m->instances; in; in = in->next) {
    if (in->plan.live_peak_bytes > out->live_bound_bytes) out->live_bound_bytes = in->plan.live_peak_bytes;
    const size_t scratch = in->workspace_bytes - in->scratch_offset;
    if (scratch > out->scratch_bytes) out->scratch_bytes = scratch;
  }
  for (workspace* w = m->pool; w; w = w->next) out->workspace_bytes += w->bytes;
  pthread_mutex_unlock(&m->lock);
}
