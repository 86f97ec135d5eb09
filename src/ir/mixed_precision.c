/* gfxep — mixed precision (see mixed_precision.h). */
#include "ir/mixed_precision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tensor.h"

/* ---- probes ---- */

/* The one attribute a probe's reduction carries: keepdims = 0 (a scalar). */
static int probe_get_int(void* ctx, const char* name, int64_t* out) {
  (void)ctx;
  if (strcmp(name, "keepdims") != 0) return 0;
  *out = 0;
  return 1;
}
static int probe_count(void* ctx) { return ctx ? 1 : 0; }
static const char* probe_name_at(void* ctx, int i) {
  (void)ctx, (void)i;
  return "keepdims";
}

/* Parses a one-input float32 node of the default domain at opset 13, as if ORT had handed it over,
 * so its parameters are exactly what the op's parser makes of them. */
static gfx_status parse_probe_node(const char* op_type, const gfx_shape* shape, int reduction, gfx_op* op,
                                   ir_params* params) {
  static int reduction_marker;
  ir_node_desc d;
  memset(&d, 0, sizeof d);
  d.op_type = op_type;
  d.domain = "";
  d.since_version = 13;
  d.name = op_type;
  d.n_inputs = 1;
  d.n_outputs = 1;
  d.input_dtypes[0] = GFX_DTYPE_F32;
  d.input_shapes[0] = *shape;
  d.output_dtypes[0] = GFX_DTYPE_F32;
  d.attrs.ctx = reduction ? &reduction_marker : NULL;
  d.attrs.get_int = probe_get_int;
  d.attrs.count = probe_count;
  d.attrs.name_at = probe_name_at;
  return ir_op_parse(&d, op, params);
}

/* Adds `op_type`(v) as a new value of the given shape; returns its index. */
static gfx_status add_probe_node(ir_graph* g, const char* op_type, int v, const gfx_shape* out_shape, int reduction,
                                 int* out) {
  gfx_op op;
  ir_params params;
  GFX_TRY(parse_probe_node(op_type, &g->values[v].shape, reduction, &op, &params));
  char name[64];
  snprintf(name, sizeof name, "gfxep.range.%d.%s", g->n_values, op_type);
  GFX_TRY(ir_graph_add_value(g, name, GFX_DTYPE_F32, out_shape, out));
  return ir_graph_add_node(g, op, name, &v, 1, out, 1, &params);
}

gfx_status ir_add_range_probes(ir_graph* g, ir_probe_set set, int** probed, int* n_probed) {
  *probed = NULL;
  *n_probed = 0;
  int* watch = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  if (!watch) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "range probes");
  int n = 0;
  if (set == IR_PROBE_OUTPUTS) {
    for (int i = 0; i < g->n_outputs; i++)
      if (g->values[g->outputs[i]].dtype == GFX_DTYPE_F32) watch[n++] = g->outputs[i];
  } else {
    for (int v = 0; v < g->n_values; v++) {
      const ir_value* x = &g->values[v];
      if (x->dtype == GFX_DTYPE_F32 && !x->const_data && (x->producer >= 0 || x->graph_input >= 0)) watch[n++] = v;
    }
  }
  const gfx_shape scalar = {.rank = 0};
  gfx_status s = NULL;
  for (int k = 0; k < n && !s; k++) {
    int probe = -1;
    if (set == IR_PROBE_OUTPUTS) {
      s = add_probe_node(g, "ReduceL1", watch[k], &scalar, 1, &probe);
    } else {
      int magnitude = -1;
      const gfx_shape shape = g->values[watch[k]].shape;
      s = add_probe_node(g, "Abs", watch[k], &shape, 0, &magnitude);
      if (!s) s = add_probe_node(g, "ReduceMax", magnitude, &scalar, 1, &probe);
    }
    if (!s) s = ir_graph_add_output(g, probe);
  }
  if (s) {
    free(watch);
    return s;
  }
  *probed = watch;
  *n_probed = n;
  return NULL;
}

/* ---- which nodes stay float32 ---- */

/* Whether a float32 constant holds a value float16 cannot (beyond 65504, or not finite). */
static int constant_beyond_half(const ir_value* v) {
  const float* f = v->const_data;
  for (size_t i = 0; i < v->const_bytes / sizeof(float); i++)
    if (!(fabsf(f[i]) <= 65504.0f)) return 1;
  return 0;
}

int ir_float32_nodes(const ir_graph* full, const float* max_abs, float limit, uint8_t* keep, int* worst) {
  *worst = -1;
  uint8_t* hot = calloc((size_t)full->n_values + 1, 1);
  if (!hot) { /* cannot tell: everything stays float32 */
    memset(keep, 1, (size_t)full->n_nodes);
    return full->n_nodes;
  }
  for (int v = 0; v < full->n_values; v++) {
    const ir_value* x = &full->values[v];
    if (x->dtype != GFX_DTYPE_F32) continue;
    if (x->const_data) {
      hot[v] = (uint8_t)constant_beyond_half(x);
    } else if (max_abs[v] >= 0.0f || isnan(max_abs[v])) {
      hot[v] = !(max_abs[v] < limit);
      if (hot[v] && isfinite(max_abs[v]) && (*worst < 0 || max_abs[v] > max_abs[*worst])) *worst = v;
    }
  }
  int kept = 0;
  for (int k = 0; k < full->n_nodes; k++) {
    const ir_node* n = &full->nodes[k];
    int h = 0;
    for (int i = 0; i < n->n_inputs && !h; i++) h = n->inputs[i] >= 0 && hot[n->inputs[i]];
    for (int i = 0; i < n->n_outputs && !h; i++) h = hot[n->outputs[i]];
    keep[k] = (uint8_t)h;
    kept += h;
  }
  free(hot);
  return kept;
}

/* ---- composing the mixed graph ---- */

/* The name a value has in the mixed graph when it is held in a type other than the one it was
 * written in ("x:float16"). */
static void typed_name(char* out, size_t cap, const char* name, int dtype) {
  snprintf(out, cap, "%s:%s", name, gfx_dtype_name(dtype));
}

static gfx_status add_cast(ir_graph* g, int from, int to) {
  ir_params none;
  memset(&none, 0, sizeof none);
  char name[320];
  snprintf(name, sizeof name, "precision cast of '%s'", g->values[from].name);
  return ir_graph_add_node(g, GFX_OP_CAST, name, &from, 1, &to, 1, &none);
}

/* The mixed graph's value for value sv of src (full or lowered) as src's node reads it: its type
 * there. Constants are copied in each type they are read in; a value written in one type and read in
 * the other goes through one Cast, shared by all its readers. */
static gfx_status read_value(ir_graph* m, const ir_graph* full, const ir_graph* src, int sv, int* out) {
  const ir_value* s = &src->values[sv];
  const int fv = ir_graph_find_value(full, s->name);
  if (fv < 0) return gfx_error(GFX_ERR_INTERNAL, "mixed precision: '%s' is not in the float32 graph", s->name);
  char key[300];
  if (s->const_data) {
    if (s->dtype == full->values[fv].dtype) snprintf(key, sizeof key, "%s", s->name);
    else typed_name(key, sizeof key, s->name, s->dtype);
    int mv = ir_graph_find_value(m, key);
    if (mv < 0) {
      GFX_TRY(ir_graph_add_value(m, key, s->dtype, &s->shape, &mv));
      GFX_TRY(ir_graph_set_constant(m, mv, s->const_data, s->const_bytes));
    }
    *out = mv;
    return NULL;
  }
  const int home = ir_graph_find_value(m, s->name);
  if (home < 0) return gfx_error(GFX_ERR_INTERNAL, "mixed precision: '%s' is read before it is written", s->name);
  if (m->values[home].dtype == s->dtype) {
    *out = home;
    return NULL;
  }
  typed_name(key, sizeof key, s->name, s->dtype);
  int mv = ir_graph_find_value(m, key);
  if (mv < 0) {
    const gfx_shape shape = m->values[home].shape;
    GFX_TRY(ir_graph_add_value(m, key, s->dtype, &shape, &mv));
    GFX_TRY(add_cast(m, home, mv));
  }
  *out = mv;
  return NULL;
}

static gfx_status compose(ir_graph* m, const ir_graph* full, const ir_graph* lowered, int first_lowered,
                          const uint8_t* keep) {
  for (int i = 0; i < full->n_inputs; i++) {
    const ir_value* x = &full->values[full->inputs[i]];
    int v = -1;
    GFX_TRY(ir_graph_add_value(m, x->name, x->dtype, &x->shape, &v));
    GFX_TRY(ir_graph_add_input(m, v));
  }
  for (int k = 0; k < full->n_nodes; k++) {
    const ir_graph* src = keep[k] ? full : lowered;
    const int at = keep[k] ? k : first_lowered + k;
    if (at >= src->n_nodes || src->nodes[at].op != full->nodes[k].op)
      return gfx_error(GFX_ERR_INTERNAL, "mixed precision: node %d of the lowered graph is not '%s'", at,
                       full->nodes[k].name);
    const ir_node* n = &src->nodes[at];
    int ins[IR_MAX_IO], outs[IR_MAX_IO];
    for (int i = 0; i < n->n_inputs; i++) {
      ins[i] = -1;
      if (n->inputs[i] >= 0) GFX_TRY(read_value(m, full, src, n->inputs[i], &ins[i]));
    }
    for (int i = 0; i < n->n_outputs; i++) {
      const ir_value* y = &src->values[n->outputs[i]];
      GFX_TRY(ir_graph_add_value(m, y->name, y->dtype, &y->shape, &outs[i]));
    }
    GFX_TRY(ir_graph_add_node(m, n->op, n->name, ins, n->n_inputs, outs, n->n_outputs, &n->params));
    m->nodes[m->n_nodes - 1].math_mode = n->math_mode;
  }
  for (int i = 0; i < full->n_outputs; i++) {
    int v = -1;
    GFX_TRY(read_value(m, full, full, full->outputs[i], &v));
    GFX_TRY(ir_graph_add_output(m, v));
  }
  return NULL;
}

gfx_status ir_mixed_graph(const ir_graph* full, const ir_graph* lowered, int first_lowered, const uint8_t* keep,
                          ir_graph** out) {
  *out = NULL;
  ir_graph* m = ir_graph_new();
  if (!m) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "mixed-precision graph");
  gfx_status s = compose(m, full, lowered, first_lowered, keep);
  if (s) {
    ir_graph_free(m);
    return s;
  }
  *out = m;
  return NULL;
}
