#include "exec/model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/registry.h"
#include "backend/wrap.h"
#include "core/log.h"
#include "ir/dynamic.h"
#include "ir/layout.h"
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

/* Resolved later stages kept per instance (the least recently used one goes when a new one comes);
 * a stage whose values keep changing is built per Run beyond that, and freed after it. */
#define MAX_CHILDREN 8

/* Everything that depends only on the input shapes (stage 0) or, for a later stage, on them and the
 * values read back before it. A root (stage 0) is built once per input-shape signature; a stage s >= 1
 * hangs below the instance of stage s - 1 it follows, keyed by the values read between them. Read-only
 * once built except for the graph cache and the bookkeeping (guarded by the model's lock). */
typedef struct instance {
  gfx_shape* input_shapes; /* stage 0: the signature */
  int64_t* key;            /* stage >= 1: the values read back before it, concatenated */
  int n_key;
  int stage;
  struct instance* parent;
  struct instance* children; /* the cached later stages that follow this one */
  int n_children;
  int refs;                  /* stage >= 1: runs using it now */
  int cached;                /* stage >= 1: in its parent's list (else freed when refs drops to 0) */
  uint64_t used;             /* the model's tick when it was last taken */
  gfx_shape* shapes;       /* per value: this stage's and every earlier one's */
  const ir_node** nodes;   /* the stage's nodes in run order: the graph's, or resolved copies */
  ir_node* resolved;       /* copies of the nodes with value inputs, values folded in */
  ir_plan plan;            /* the values this stage's nodes produce */
  void** node_state;       /* per node of the stage */
  size_t* node_scratch;
  size_t scratch_peak;     /* the largest node scratch (planned among the intermediates: plan.scratch_offsets) */
  size_t workspace_bytes;  /* intermediates and node scratch */
  graph_entry graphs[MAX_GRAPHS_PER_INSTANCE]; /* stage 0 only */
  int n_graphs;
  struct instance* next;   /* siblings */
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
  void** ptrs;       /* per value: where it lives during the run (the first stage's workspace holds the run's) */
  void* host;        /* host memory the device writes values read back into (made on first need) */
  void* read_event;  /* recorded after those copies */
  struct workspace* next;
} workspace;

/* The stages of a partition (exec/model.h): stage s runs every node whose shapes are known once the
 * values read back before it are; stage 0 needs none. */
typedef struct stage_info {
  int* nodes;      /* graph node indices, in graph order */
  int n_nodes;
  int* reads;      /* values read back before this stage (stage >= 1) */
  int n_reads;
  int* outputs;    /* graph outputs whose value this stage produces (stage 0: also inputs and constants) */
  int n_outputs;
} stage_info;

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
  /* stages */
  int n_stages;
  stage_info* stages;
  char* escapes;       /* per value: read after the stage that produces it (by a later stage, or back) */
  int* host_stage;     /* per value: the stage once resolved which the host computes it from shapes and
                        * constants alone (shape arithmetic, never read back), or -1 */
  int* read_slot;      /* per value: its place among the values read back, or -1 */
  int n_read_values;
  size_t read_bytes;   /* host bytes the largest boundary reads */
  uint64_t tick;
  long long value_reads;  /* boundaries read back so far */
  long long stage_builds; /* later-stage instances built so far */
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

/* ---- stages ---- */

static gfx_status append(int** list, int* n, int value) {
  int* p = realloc(*list, sizeof(int) * (size_t)(*n + 1));
  if (!p) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage lists");
  p[(*n)++] = value;
  *list = p;
  return NULL;
}

/* A small int32/int64 value by its declared shape: what shape arithmetic computes. */
static int small_int_value(const ir_value* v) {
  if (v->dtype != GFX_DTYPE_I64 && v->dtype != GFX_DTYPE_I32) return 0;
  if (v->shape.rank < 0 || !gfx_shape_is_known(&v->shape)) return 0;
  const int64_t n = gfx_shape_numel(&v->shape);
  return n >= 0 && n <= IR_MAX_VALUE_ELEMS;
}

/* Splits the graph into stages. A node's stage is the latest of its producers', and, for each value
 * input, the stage once resolved which that value is known on the host: where the value is shape
 * arithmetic (Shape, constants and int32/int64 nodes of a few elements over them: Gather, Slice,
 * Concat, Min, Add, Cast, Unsqueeze...) the host computes it from the shapes of that stage, with no
 * read (host_stage); otherwise one past the stage of its producer (a graph input counts as stage
 * 0), once it is read back. Each value read back is read before the first stage that needs it; every
 * value read after the stage that produced it escapes that stage's plan. */
static gfx_status analyze_stages(gfx_model* m) {
  const ir_graph* g = m->graph;
  int* node_stage = calloc((size_t)g->n_nodes + 1, sizeof(int));
  int* value_stage = calloc((size_t)g->n_values + 1, sizeof(int));
  int* read_at = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  m->escapes = calloc((size_t)g->n_values + 1, 1);
  m->read_slot = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  m->host_stage = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  gfx_status s = NULL;
  if (!node_stage || !value_stage || !read_at || !m->escapes || !m->read_slot || !m->host_stage) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage analysis");
    goto done;
  }
  for (int v = 0; v < g->n_values; v++) {
    read_at[v] = -1, m->read_slot[v] = -1;
    m->host_stage[v] = g->values[v].const_data && small_int_value(&g->values[v]) ? 0 : -1;
  }
  int n_stages = 1;
  for (int n = 0; n < g->n_nodes && !s; n++) {
    const ir_node* node = &g->nodes[n];
    const unsigned mask = ir_node_value_inputs(node);
    int st = 0;
    for (int i = 0; i < node->n_inputs; i++) {
      const int v = node->inputs[i];
      if (v < 0) {
        if (mask & (1u << i))
          s = gfx_error(GFX_ERR_INTERNAL, "node '%s': its value input %d is absent", node->name, i);
        continue;
      }
      int at = value_stage[v];
      if (mask & (1u << i)) at = m->host_stage[v] >= 0 ? m->host_stage[v] : at + 1;
      if (at > st) st = at;
    }
    node_stage[n] = st;
    for (int o = 0; o < node->n_outputs; o++)
      if (node->outputs[o] >= 0) value_stage[node->outputs[o]] = st;
    if (st + 1 > n_stages) n_stages = st + 1;
    for (int i = 0; i < node->n_inputs; i++) {
      const int v = node->inputs[i];
      if (v < 0 || !(mask & (1u << i)) || m->host_stage[v] >= 0) continue;
      if (read_at[v] < 0 || st < read_at[v]) read_at[v] = st;
    }
    /* shape arithmetic: a Shape is known once its input's shape is; a small int node over values the
     * host knows is known when the last of them is */
    const int out = node->n_outputs == 1 ? node->outputs[0] : -1;
    if (out >= 0 && !mask && small_int_value(&g->values[out])) {
      int hs = -1;
      if (node->op == GFX_OP_SHAPE && node->inputs[0] >= 0) {
        hs = value_stage[node->inputs[0]];
      } else if (node->n_inputs > 0) {
        hs = 0;
        for (int i = 0; i < node->n_inputs && hs >= 0; i++) {
          const int v = node->inputs[i];
          if (v < 0) continue;
          if (m->host_stage[v] < 0) hs = -1;
          else if (m->host_stage[v] > hs) hs = m->host_stage[v];
        }
      }
      m->host_stage[out] = hs;
    }
  }
  if (s) goto done;
  m->n_stages = n_stages;
  m->stages = calloc((size_t)n_stages, sizeof *m->stages);
  if (!m->stages) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage lists");
    goto done;
  }
  for (int n = 0; n < g->n_nodes && !s; n++) {
    stage_info* si = &m->stages[node_stage[n]];
    s = append(&si->nodes, &si->n_nodes, n);
    const ir_node* node = &g->nodes[n];
    for (int i = 0; i < node->n_inputs; i++) {
      const int v = node->inputs[i];
      if (v >= 0 && g->values[v].producer >= 0 && value_stage[v] < node_stage[n]) m->escapes[v] = 1;
    }
  }
  for (int v = 0; v < g->n_values && !s; v++) {
    if (read_at[v] < 0) continue;
    m->escapes[v] = 1;
    m->read_slot[v] = m->n_read_values++;
    s = append(&m->stages[read_at[v]].reads, &m->stages[read_at[v]].n_reads, v);
  }
  for (int st = 1; st < n_stages; st++) {
    const size_t bytes = (size_t)m->stages[st].n_reads * IR_MAX_VALUE_ELEMS * sizeof(int64_t);
    if (bytes > m->read_bytes) m->read_bytes = bytes;
  }
  for (int o = 0; o < g->n_outputs && !s; o++) {
    const int v = g->outputs[o];
    const int st = g->values[v].producer >= 0 ? value_stage[v] : 0;
    s = append(&m->stages[st].outputs, &m->stages[st].n_outputs, o);
  }
done:
  free(node_stage);
  free(value_stage);
  free(read_at);
  return s;
}

static gfx_status instance_get(gfx_model* m, const gfx_tensor* inputs, instance** out);
static gfx_status workspace_acquire(gfx_model* m, size_t bytes, void* stream, workspace** out);

/* When every input shape is known at compile time, the only signature there will be is compiled now,
 * and a workspace allocated: the first Run then allocates nothing and prepares nothing. That keeps
 * memory allocation (which can synchronize the device) out of the frame loop, where a Run queued
 * behind a semaphore wait must return at once. (A partition in stages prepares its first stage.) */
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
  s = analyze_stages(m);
  if (!s) s = upload_constants(m);
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
  for (instance* c = in->children; c;) {
    instance* next = c->next;
    instance_free(m, c);
    c = next;
  }
  for (int i = 0; i < in->n_graphs; i++) {
    gfx_backend_graph_destroy(m->dev, in->graphs[i].exec);
    gfx_replay_stamps_unref(in->graphs[i].stamps);
    free(in->graphs[i].ptrs);
  }
  if (in->node_state)
    for (int k = 0; k < m->stages[in->stage].n_nodes; k++) gfx_backend_node_release(m->dev, in->node_state[k]);
  ir_plan_free(&in->plan);
  free(in->node_state);
  free(in->node_scratch);
  free(in->nodes);
  free(in->resolved);
  free(in->shapes);
  free(in->input_shapes);
  free(in->key);
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
  if (w->read_event) gfx_backend_event_destroy(m->dev, w->read_event);
  if (w->host) gfx_backend_host_free(m->dev, w->host);
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
  if (m->stages)
    for (int st = 0; st < m->n_stages; st++) {
      free(m->stages[st].nodes);
      free(m->stages[st].reads);
      free(m->stages[st].outputs);
    }
  free(m->stages);
  free(m->escapes);
  free(m->read_slot);
  free(m->host_stage);
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

/* Values the host computed while resolving a stage (shape arithmetic), so that each is computed once. */
#define HOST_MEMO 32
typedef struct host_memo {
  int n;
  int value[HOST_MEMO];
  ir_value_data data[HOST_MEMO];
} host_memo;

/* Computes value v (host_stage[v] >= 0) on the host from the shapes resolved so far and the
 * constants: a Shape from its input's shape, a constant from its bytes, any other node by its
 * reference kernel (plain C on host memory: the test oracle is the definition) over its inputs
 * computed the same way. */
static gfx_status host_value(const gfx_model* m, const gfx_shape* shapes, int v, host_memo* memo, ir_value_data* out) {
  for (int i = 0; i < memo->n; i++)
    if (memo->value[i] == v) {
      *out = memo->data[i];
      return NULL;
    }
  const ir_graph* g = m->graph;
  const ir_value* val = &g->values[v];
  memset(out, 0, sizeof *out);
  out->shape = shapes[v];
  const int64_t n = gfx_shape_numel(&out->shape);
  if (m->host_stage[v] < 0 || n < 0 || n > IR_MAX_VALUE_ELEMS)
    return gfx_error(GFX_ERR_INTERNAL, "value '%s' is no shape arithmetic of at most %d elements", val->name,
                     IR_MAX_VALUE_ELEMS);
  out->n = (int)n;
  const int i64 = val->dtype == GFX_DTYPE_I64;
  const ir_node* node = val->producer >= 0 ? &g->nodes[val->producer] : NULL;
  if (node && node->op == GFX_OP_SHAPE) {
    int got = 0;
    ir_shape_values(node, &shapes[node->inputs[0]], out->v, &got);
    if (got != out->n) return gfx_error(GFX_ERR_INTERNAL, "Shape '%s' gave %d values for %d", node->name, got, out->n);
  } else {
    unsigned char raw[IR_MAX_VALUE_ELEMS * 8];
    if (val->const_data) {
      if (val->const_bytes < (size_t)n * (i64 ? 8 : 4))
        return gfx_error(GFX_ERR_INTERNAL, "constant '%s' holds %zu bytes", val->name, val->const_bytes);
      memcpy(raw, val->const_data, (size_t)n * (i64 ? 8 : 4));
    } else {
      if (!node) return gfx_error(GFX_ERR_INTERNAL, "value '%s' has no producer", val->name);
      ir_value_data args[IR_MAX_IO];
      unsigned char bufs[IR_MAX_IO][IR_MAX_VALUE_ELEMS * 8];
      gfx_tensor ti[IR_MAX_IO], to[1];
      for (int i = 0; i < node->n_inputs; i++) {
        const int u = node->inputs[i];
        if (u < 0) {
          ti[i] = (gfx_tensor){.data = NULL, .dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}};
          continue;
        }
        GFX_TRY(host_value(m, shapes, u, memo, &args[i]));
        const int u64 = g->values[u].dtype == GFX_DTYPE_I64;
        for (int e = 0; e < args[i].n; e++) {
          if (u64) {
            memcpy(bufs[i] + 8 * e, &args[i].v[e], 8);
          } else {
            const int32_t x = (int32_t)args[i].v[e];
            memcpy(bufs[i] + 4 * e, &x, 4);
          }
        }
        ti[i] = (gfx_tensor){.data = bufs[i], .dtype = g->values[u].dtype, .shape = args[i].shape};
      }
      to[0] = (gfx_tensor){.data = raw, .dtype = val->dtype, .shape = out->shape};
      gfx_exec_ctx ctx = {.dev = gfx_reference_device()};
      gfx_status s = gfx_backend_node_run(&ctx, node, ti, to, NULL);
      if (s) return gfx_status_wrap(s, "computing '%s' on the host from shapes", val->name);
    }
    for (int e = 0; e < out->n; e++) {
      if (i64) {
        memcpy(&out->v[e], raw + 8 * e, 8);
      } else {
        int32_t x;
        memcpy(&x, raw + 4 * e, 4);
        out->v[e] = x;
      }
    }
  }
  if (memo->n < HOST_MEMO) {
    memo->value[memo->n] = v;
    memo->data[memo->n++] = *out;
  }
  return NULL;
}

/* Resolves, infers, plans and prepares stage `in->stage` on top of in->shapes (the earlier stages'
 * shapes, already there). values: the values read back so far, by read slot; the values the host
 * computes from shapes are computed here, once the shapes they need are. */
static gfx_status stage_build(const gfx_model* m, instance* in, const ir_value_data* values) {
  const ir_graph* g = m->graph;
  const stage_info* si = &m->stages[in->stage];
  const int n = si->n_nodes;
  in->nodes = calloc((size_t)n + 1, sizeof *in->nodes);
  in->resolved = calloc((size_t)n + 1, sizeof *in->resolved);
  in->node_state = calloc((size_t)n + 1, sizeof(void*));
  in->node_scratch = calloc((size_t)n + 1, sizeof(size_t));
  if (!in->nodes || !in->resolved || !in->node_state || !in->node_scratch)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage %d of %d nodes", in->stage, n);
  host_memo memo = {0};
  for (int k = 0; k < n; k++) {
    const ir_node* node = &g->nodes[si->nodes[k]];
    const unsigned mask = ir_node_value_inputs(node);
    in->nodes[k] = node;
    if (mask) {
      ir_value_data vals[IR_MAX_IO];
      memset(vals, 0, sizeof vals);
      for (int i = 0; i < node->n_inputs; i++) {
        const int v = node->inputs[i];
        if (!(mask & (1u << i)) || v < 0) continue;
        if (m->host_stage[v] >= 0) GFX_TRY(host_value(m, in->shapes, v, &memo, &vals[i]));
        else if (values && m->read_slot[v] >= 0) vals[i] = values[m->read_slot[v]];
        else return gfx_error(GFX_ERR_INTERNAL, "node '%s' needs value '%s', which stage %d does not have", node->name,
                              g->values[v].name, in->stage);
      }
      GFX_TRY(ir_node_resolve(node, vals, &in->resolved[k]));
      in->nodes[k] = &in->resolved[k];
    }
    GFX_TRY(ir_infer_node(g, in->nodes[k], in->shapes));
  }
  /* the nodes' scratch first: the plan puts it among the intermediates */
  for (int k = 0; k < n; k++) {
    const ir_node* node = in->nodes[k];
    gfx_shape is[IR_MAX_IO], os[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++)
      is[i] = node->inputs[i] >= 0 ? in->shapes[node->inputs[i]] : (gfx_shape){.rank = -1};
    for (int o = 0; o < node->n_outputs; o++) os[o] = in->shapes[node->outputs[o]];
    gfx_status s = gfx_backend_node_prepare(m->dev, node, is, os, &in->node_state[k], &in->node_scratch[k]);
    if (s) return gfx_status_wrap(s, "preparing node '%s' (%s)", node->name, ir_op_name(node->op));
    if (in->node_scratch[k] > in->scratch_peak) in->scratch_peak = in->node_scratch[k];
  }
  GFX_TRY(ir_plan_memory_nodes(g, in->shapes, gfx_backend_alignment(m->dev), si->nodes, n, m->escapes,
                               in->node_scratch, &in->plan));
  in->workspace_bytes = in->plan.workspace_bytes;
  return NULL;
}

static gfx_status instance_build(const gfx_model* m, const gfx_tensor* inputs, instance** out) {
  const ir_graph* g = m->graph;
  instance* in = calloc(1, sizeof *in);
  if (!in) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "shape instance");
  gfx_status s = NULL;
  in->input_shapes = malloc(sizeof(gfx_shape) * (size_t)(g->n_inputs + 1));
  in->shapes = malloc(sizeof(gfx_shape) * (size_t)(g->n_values + 1));
  if (!in->input_shapes || !in->shapes) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "shape instance");
    goto fail;
  }
  for (int i = 0; i < g->n_inputs; i++) in->input_shapes[i] = inputs[i].shape;
  if ((s = ir_infer_inputs(g, in->input_shapes, in->shapes))) goto fail;
  if ((s = stage_build(m, in, NULL))) goto fail;
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

/* The instance of the stage after `parent` for the values just read (key), taken for this run
 * (refs). Found among the cached ones, or built: cached when there is room or an idle least recently
 * used one can go, otherwise kept for this run only. */
static gfx_status child_get(gfx_model* m, instance* parent, const int64_t* key, int n_key,
                            const ir_value_data* values, instance** out) {
  pthread_mutex_lock(&m->lock);
  const uint64_t tick = ++m->tick;
  for (instance* c = parent->children; c; c = c->next)
    if (c->n_key == n_key && (n_key == 0 || memcmp(c->key, key, sizeof(int64_t) * (size_t)n_key) == 0)) {
      c->refs++;
      c->used = tick;
      *out = c;
      pthread_mutex_unlock(&m->lock);
      return NULL;
    }
  const ir_graph* g = m->graph;
  gfx_status s = NULL;
  instance* in = calloc(1, sizeof *in);
  if (!in) {
    pthread_mutex_unlock(&m->lock);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage instance");
  }
  in->stage = parent->stage + 1;
  in->parent = parent;
  in->n_key = n_key;
  in->key = malloc(sizeof(int64_t) * (size_t)(n_key + 1));
  in->shapes = malloc(sizeof(gfx_shape) * (size_t)(g->n_values + 1));
  if (!in->key || !in->shapes) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "stage instance");
  } else {
    if (n_key) memcpy(in->key, key, sizeof(int64_t) * (size_t)n_key);
    memcpy(in->shapes, parent->shapes, sizeof(gfx_shape) * (size_t)g->n_values);
    s = stage_build(m, in, values);
  }
  if (s) {
    instance_free(m, in);
    pthread_mutex_unlock(&m->lock);
    return s;
  }
  m->stage_builds++;
  if (parent->n_children >= MAX_CHILDREN) {
    /* the least recently used idle one goes (no run holds it, nor anything below it: a run holds
     * every stage of its path) */
    instance **victim = NULL, **at = &parent->children;
    for (; *at; at = &(*at)->next)
      if ((*at)->refs == 0 && (!victim || (*at)->used < (*victim)->used)) victim = at;
    if (victim) {
      instance* v = *victim;
      *victim = v->next;
      parent->n_children--;
      instance_free(m, v);
    }
  }
  if (parent->n_children < MAX_CHILDREN) {
    in->next = parent->children;
    parent->children = in;
    parent->n_children++;
    in->cached = 1;
  }
  in->refs = 1;
  in->used = tick;
  *out = in;
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

static void child_put(gfx_model* m, instance* in) {
  if (!in) return;
  pthread_mutex_lock(&m->lock);
  if (--in->refs == 0 && !in->cached) instance_free(m, in);
  pthread_mutex_unlock(&m->lock);
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

/* Binds node k of the instance's stage to this run's addresses and enqueues it on stream. */
static gfx_status run_node(gfx_model* m, const instance* in, void* const* ptrs, void* base, void* stream, int k) {
  const ir_graph* g = m->graph;
  const ir_node* node = in->nodes[k];
  /* a view whose output shares its input's memory has nothing to do; nor has a Split whose outputs
   * the plan made pieces of its input */
  if (ir_op_is_view(node->op) && node->inputs[0] >= 0 && ptrs[node->outputs[0]] == ptrs[node->inputs[0]])
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
    ti[i] = (gfx_tensor){.data = ptrs[v], .dtype = g->values[v].dtype, .shape = in->shapes[v]};
  }
  for (int o = 0; o < node->n_outputs; o++) {
    int v = node->outputs[o];
    to[o] = (gfx_tensor){.data = ptrs[v], .dtype = g->values[v].dtype, .shape = in->shapes[v]};
  }
  gfx_exec_ctx ctx = {
      .dev = m->dev,
      .stream = stream,
      .scratch = in->node_scratch[k] ? (char*)base + in->plan.scratch_offsets[k] : NULL,
      .scratch_bytes = in->node_scratch[k],
  };
  gfx_status s = gfx_backend_node_run(&ctx, node, ti, to, in->node_state[k]);
  if (s) return gfx_status_wrap(s, "running node '%s' (%s)", node->name, ir_op_name(node->op));
  return NULL;
}

static gfx_status run_nodes(gfx_model* m, const instance* in, void* const* ptrs, void* base, void* stream) {
  for (int k = 0; k < m->stages[in->stage].n_nodes; k++) GFX_TRY(run_node(m, in, ptrs, base, stream, k));
  return NULL;
}

/* Per-node device timers of a traced run, across its stages: timers[0] before the first node, then
 * one after each node in the order they ran. */
typedef struct run_trace {
  gfx_node_trace* trace;
  void** timers;
  int n_run;
} run_trace;

static gfx_status run_nodes_timed(gfx_model* m, const instance* in, void* const* ptrs, void* base, void* stream,
                                  run_trace* t) {
  const stage_info* si = &m->stages[in->stage];
  for (int k = 0; k < si->n_nodes; k++) {
    GFX_TRY(run_node(m, in, ptrs, base, stream, k));
    t->trace[t->n_run].node = si->nodes[k];
    GFX_TRY(gfx_backend_event_record(m->dev, t->timers[++t->n_run], stream));
  }
  return NULL;
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
  gfx_status s = run_nodes(m, in, w->ptrs, w->base, stream);
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

/* Runs the first stage's nodes directly, or replays / captures the graph of these addresses. The
 * first run with new addresses runs node by node (libraries load their kernels and create their
 * handles then, which a capture must not do); the second captures; later ones replay, costing one
 * launch on the CPU. In a partition of several stages only the first is recorded (its addresses are
 * bound before any value is read back); the later stages depend on values read during the Run and
 * always run node by node, after the read, so a replay never stands for shapes it was not recorded
 * with. st is NULL there: the stamps go around the whole Run instead. */
static gfx_status run_or_replay(gfx_model* m, instance* in, workspace* w, void* stream, gfx_run_stamps* st) {
  if (!m->use_graphs || !stream) return run_nodes_stamped(m, in, w, stream, st);
  pthread_mutex_lock(&m->lock);
  graph_entry* e = graph_lookup(m, in, w->ptrs);
  void* exec = e ? e->exec : NULL;
  /* capture only while this run is the model's only one: library handles and lazily loaded kernels
   * shared with a run on another thread must not be touched from inside a capture */
  int capture = e && !exec && !e->failed && e->seen >= 1 && m->active_runs == 1;
  const int stamp_replays = m->stamp_replays && m->n_stages == 1;
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
  if (!r) r = run_nodes(m, in, w->ptrs, w->base, stream);
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

/* Gives the values stage `in` produces their addresses for this run: its graph outputs from the
 * caller, its intermediates in its workspace (base), its views their source's memory. */
static gfx_status bind_stage(gfx_model* m, const instance* in, void** ptrs, void* base, const gfx_tensor* inputs,
                             gfx_output_fn outputs, void* user, void* stream) {
  const ir_graph* g = m->graph;
  const stage_info* si = &m->stages[in->stage];
  for (int k = 0; k < si->n_outputs; k++) {
    const int o = si->outputs[k], v = g->outputs[o];
    void* dst = NULL;
    GFX_TRY(outputs(user, o, &in->shapes[v], &dst));
    if (g->values[v].producer >= 0) {
      ptrs[v] = dst;
    } else if (in->plan.sizes[v]) {
      /* an output that is a graph input or a constant: no node writes it, so copy it */
      const void* src = g->values[v].graph_input >= 0 ? inputs[g->values[v].graph_input].data
                                                      : (char*)m->weights + m->weight_offset[v];
      GFX_TRY(gfx_backend_copy(m->dev, dst, src, in->plan.sizes[v], GFX_COPY_DEVICE_TO_DEVICE, stream));
    }
  }
  /* in run order, so that a view's source (an earlier node's output, possibly a graph output bound
   * above, or a value of an earlier stage) has its address already */
  for (int k = 0; k < si->n_nodes; k++) {
    const ir_node* node = &g->nodes[si->nodes[k]];
    for (int o = 0; o < node->n_outputs; o++) {
      const int v = node->outputs[o];
      if (v < 0) continue;
      if (in->plan.alias_of[v] >= 0) {
        void* src = ptrs[in->plan.alias_of[v]];
        ptrs[v] = src ? (char*)src + in->plan.alias_offset[v] : NULL;
      } else if (in->plan.offsets[v] != IR_PLAN_NO_OFFSET) {
        ptrs[v] = (char*)base + in->plan.offsets[v];
      }
    }
  }
  return NULL;
}

/* Reads back the values stage `st` needs (each at most IR_MAX_VALUE_ELEMS int32/int64 elements, in
 * device memory) with one copy each and ONE host wait for all of them: an event after the copies,
 * waited for with the backend's bound on host waits (event_sync: 60 s on CUDA and Vulkan, then a
 * status). The values land in vals (by read slot) and, concatenated, in key. */
static gfx_status read_values(gfx_model* m, const instance* parent, workspace* w0, void* stream, int st,
                              ir_value_data* vals, int64_t* key, int* n_key) {
  const ir_graph* g = m->graph;
  const stage_info* si = &m->stages[st];
  if (!w0->host) GFX_TRY(gfx_backend_host_alloc(m->dev, m->read_bytes ? m->read_bytes : 8, &w0->host));
  if (!w0->read_event) GFX_TRY(gfx_backend_event_create(m->dev, &w0->read_event));
  for (int r = 0; r < si->n_reads; r++) {
    const int v = si->reads[r];
    const ir_value* val = &g->values[v];
    const gfx_shape* shape = &parent->shapes[v];
    const int64_t n = gfx_shape_numel(shape);
    if (val->dtype != GFX_DTYPE_I64 && val->dtype != GFX_DTYPE_I32)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "value '%s', which decides shapes, is %s; int32 or int64 is expected",
                       val->name, gfx_dtype_name(val->dtype));
    if (n < 0 || n > IR_MAX_VALUE_ELEMS) {
      char b[96];
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "value '%s', which decides shapes, has shape %s; at most %d elements are read back", val->name,
                       gfx_shape_str(shape, b, sizeof b), IR_MAX_VALUE_ELEMS);
    }
    const void* src = val->const_data ? (char*)m->weights + m->weight_offset[v] : w0->ptrs[v];
    const size_t bytes = (size_t)n * gfx_dtype_size(val->dtype);
    if (bytes && !src) return gfx_error(GFX_ERR_INTERNAL, "value '%s' has no memory to read back", val->name);
    if (bytes)
      GFX_TRY(gfx_backend_copy(m->dev, (char*)w0->host + (size_t)r * IR_MAX_VALUE_ELEMS * sizeof(int64_t), src, bytes,
                               GFX_COPY_DEVICE_TO_HOST, stream));
  }
  if (stream) {
    GFX_TRY(gfx_backend_event_record(m->dev, w0->read_event, stream));
    gfx_status s = gfx_backend_event_sync(m->dev, w0->read_event);
    if (s) return gfx_status_wrap(s, "waiting for the values stage %d of the partition depends on", st);
  }
  pthread_mutex_lock(&m->lock);
  m->value_reads++;
  pthread_mutex_unlock(&m->lock);
  int nk = 0;
  for (int r = 0; r < si->n_reads; r++) {
    const int v = si->reads[r];
    ir_value_data* d = &vals[m->read_slot[v]];
    d->shape = parent->shapes[v];
    d->n = (int)gfx_shape_numel(&d->shape);
    const char* at = (const char*)w0->host + (size_t)r * IR_MAX_VALUE_ELEMS * sizeof(int64_t);
    for (int i = 0; i < d->n; i++) {
      if (g->values[v].dtype == GFX_DTYPE_I64) {
        memcpy(&d->v[i], at + 8 * i, 8);
      } else {
        int32_t x;
        memcpy(&x, at + 4 * i, 4);
        d->v[i] = x;
      }
      key[nk++] = d->v[i];
    }
  }
  *n_key = nk;
  return NULL;
}

#define MAX_STAGES_ON_STACK 8

static gfx_status model_run(gfx_model* m, void* stream, const gfx_tensor* inputs, gfx_output_fn outputs, void* user,
                            const run_mode* mode) {
  const ir_graph* g = m->graph;
  for (int i = 0; i < g->n_inputs; i++) {
    const ir_value* v = &g->values[g->inputs[i]];
    if (inputs[i].dtype != v->dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input '%s' is %s, the model expects %s", v->name,
                       gfx_dtype_name(inputs[i].dtype), gfx_dtype_name(v->dtype));
  }
  const int staged = m->n_stages > 1;
  if (mode->captured && staged)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "this partition's shapes depend on values computed during the Run (%d stages, read back between "
                     "them): a recording made by the caller cannot replay that read",
                     m->n_stages);
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

  /* the later stages' instances and workspaces this run takes */
  instance* stage_in_local[MAX_STAGES_ON_STACK];
  workspace* stage_ws_local[MAX_STAGES_ON_STACK];
  instance** stage_in = stage_in_local;
  workspace** stage_ws = stage_ws_local;
  ir_value_data* vals = NULL;
  int64_t* key = NULL;
  run_trace rt = {.trace = mode->trace};
  gfx_status s = NULL;
  if (staged) {
    if (m->n_stages > MAX_STAGES_ON_STACK) {
      stage_in = calloc((size_t)m->n_stages, sizeof *stage_in);
      stage_ws = calloc((size_t)m->n_stages, sizeof *stage_ws);
    }
    vals = calloc((size_t)m->n_read_values + 1, sizeof *vals);
    key = malloc(sizeof(int64_t) * ((size_t)m->n_read_values * IR_MAX_VALUE_ELEMS + 1));
    if (!stage_in || !stage_ws || !vals || !key) s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "a run of %d stages", m->n_stages);
  }
  for (int st = 0; st < m->n_stages && stage_in && stage_ws; st++) stage_in[st] = NULL, stage_ws[st] = NULL;
  if (!s && stage_in) stage_in[0] = in;
  if (!s && stage_ws) stage_ws[0] = w;

  void** ptrs = w->ptrs;
  if (!s) {
    for (int v = 0; v < g->n_values; v++)
      ptrs[v] = m->weight_offset[v] != IR_PLAN_NO_OFFSET ? (char*)m->weights + m->weight_offset[v] : NULL;
    for (int i = 0; i < g->n_inputs; i++) ptrs[g->inputs[i]] = inputs[i].data;
    s = bind_stage(m, in, ptrs, w->base, inputs, outputs, user, stream);
  }
  /* profiling: a device timer before the first node and after each */
  if (!s && mode->trace) {
    rt.timers = calloc((size_t)g->n_nodes + 1, sizeof(void*));
    if (!rt.timers) s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "profiling timers");
    for (int t = 0; t <= g->n_nodes && !s; t++) s = gfx_backend_timer_create(m->dev, &rt.timers[t]);
    /* hold the device back while the host queues the first stage's nodes (a cuDNN convolution takes
     * the host some 40 us to queue when not replayed), so that the timers measure the kernels back to
     * back and not the host's launch gaps */
    if (!s && gfx_backend_has_stream_hold(m->dev)) {
      double us = 2000.0 + 100.0 * m->stages[0].n_nodes;
      s = gfx_backend_stream_hold(m->dev, stream, us < 200000.0 ? us : 200000.0);
    }
    if (!s) s = gfx_backend_event_record(m->dev, rt.timers[0], stream);
  }
  /* a staged run's stamps go around all of its stages */
  if (!s && staged && !mode->trace && !mode->captured) gfx_run_stamps_write(m->dev, mode->stamps, 0, stream);
  if (!s) {
    if (mode->trace) s = run_nodes_timed(m, in, ptrs, w->base, stream, &rt);
    else if (mode->captured) s = run_nodes(m, in, ptrs, w->base, stream); /* never a graph inside a capture */
    else s = run_or_replay(m, in, w, stream, staged ? NULL : mode->stamps);
  }
  for (int st = 1; st < m->n_stages && !s; st++) {
    int n_key = 0;
    s = read_values(m, stage_in[st - 1], w, stream, st, vals, key, &n_key);
    if (!s) s = child_get(m, stage_in[st - 1], key, n_key, vals, &stage_in[st]);
    if (!s && stage_in[st]->workspace_bytes) s = workspace_acquire(m, stage_in[st]->workspace_bytes, stream, &stage_ws[st]);
    void* base = stage_ws[st] ? stage_ws[st]->base : NULL;
    if (!s) s = bind_stage(m, stage_in[st], ptrs, base, inputs, outputs, user, stream);
    if (!s) s = mode->trace ? run_nodes_timed(m, stage_in[st], ptrs, base, stream, &rt)
                            : run_nodes(m, stage_in[st], ptrs, base, stream);
  }
  if (!s && staged && !mode->trace && !mode->captured) gfx_run_stamps_write(m->dev, mode->stamps, 1, stream);
  if (mode->trace && rt.timers) {
    for (int k = 0; k < rt.n_run && !s; k++) {
      s = gfx_backend_timer_elapsed_us(m->dev, rt.timers[0], rt.timers[k], &rt.trace[k].start_us);
      if (!s) s = gfx_backend_timer_elapsed_us(m->dev, rt.timers[k], rt.timers[k + 1], &rt.trace[k].device_us);
    }
    for (int t = 0; t <= g->n_nodes; t++)
      if (rt.timers[t]) gfx_backend_event_destroy(m->dev, rt.timers[t]);
    free(rt.timers);
  }
  pthread_mutex_lock(&m->lock);
  m->active_runs--;
  pthread_mutex_unlock(&m->lock);
  gfx_status r = NULL;
  if (staged && stage_in && stage_ws) {
    for (int st = m->n_stages - 1; st >= 1; st--) {
      if (stage_ws[st]) {
        gfx_status q = workspace_release(m, stage_ws[st], stream);
        if (!r) r = q;
        else gfx_status_free(q);
      }
      child_put(m, stage_in[st]);
    }
  }
  if (stage_in != stage_in_local) free(stage_in);
  if (stage_ws != stage_ws_local) free(stage_ws);
  free(vals);
  free(key);
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
  gfx_status q = workspace_release(m, w, stream);
  if (!r) r = q;
  else gfx_status_free(q);
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

int gfx_model_stages(const gfx_model* m) { return m->n_stages; }

static int count_children(const instance* in) {
  int n = 0;
  for (const instance* c = in->children; c; c = c->next) n += 1 + count_children(c);
  return n;
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
    if (in->scratch_peak > out->scratch_bytes) out->scratch_bytes = in->scratch_peak;
  }
  for (workspace* w = m->pool; w; w = w->next) out->workspace_bytes += w->bytes;
  out->stages = m->n_stages;
  out->value_reads = m->value_reads;
  out->stage_builds = m->stage_builds;
  out->stage_instances = 0;
  for (instance* in = m->instances; in; in = in->next) out->stage_instances += count_children(in);
  pthread_mutex_unlock(&m->lock);
}
