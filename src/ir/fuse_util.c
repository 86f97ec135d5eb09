/* gfxep — helpers of the fusion passes (see ir/fuse_util.h). */
#include "ir/fuse_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "core/log.h"

gfx_status ir_fuse_count_readers(const ir_graph* g, int** readers, int extra) {
  *readers = calloc((size_t)g->n_values + (size_t)extra + 1, sizeof **readers);
  if (!*readers) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "counting the readers of %d values", g->n_values);
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0) (*readers)[g->nodes[n].inputs[i]]++;
  return NULL;
}

int ir_fuse_sole_reader(const ir_graph* g, const int* readers, int v) {
  if (readers[v] != 1) return -1;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v) return n;
  return -1;
}

void ir_fuse_remove_node(ir_graph* g, int index) {
  free(g->nodes[index].name);
  memmove(&g->nodes[index], &g->nodes[index + 1], sizeof g->nodes[0] * (size_t)(g->n_nodes - index - 1));
  g->n_nodes--;
  for (int n = index; n < g->n_nodes; n++)
    for (int o = 0; o < g->nodes[n].n_outputs; o++)
      if (g->nodes[n].outputs[o] >= 0) g->values[g->nodes[n].outputs[o]].producer = n;
}

void ir_fuse_retire_value(ir_graph* g, int v) {
  g->values[v].producer = -1;
  g->values[v].shape = (gfx_shape){.rank = 1, .dims = {0}};
}

void ir_fuse_join_names(ir_node* into, const ir_node* from) {
  const char* a = into->name ? into->name : "";
  const char* b = from->name ? from->name : "";
  char* both = malloc(strlen(a) + strlen(b) + 2);
  if (!both) return; /* the first name alone is still a name */
  sprintf(both, "%s+%s", a, b);
  free(into->name);
  into->name = both;
}

const char* ir_fuse_name_of(const ir_node* n) { return n->name ? n->name : ""; }

double ir_fuse_const_at(const ir_value* v, int64_t i) {
  const char* p = (const char*)v->const_data;
  uint16_t h;
  switch (v->dtype) {
    case GFX_DTYPE_F32: {
      float f;
      memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case GFX_DTYPE_F16: memcpy(&h, p + 2 * i, 2); return gfx_half_to_float(h);
    case GFX_DTYPE_BF16: memcpy(&h, p + 2 * i, 2); return gfx_bf16_to_float(h);
    default: return 0.0;
  }
}

/* A constant of `count` elements of the float type: its data, or NULL. */
const ir_value* ir_fuse_float_const(const ir_graph* g, int v, int dtype, int64_t count) {
  if (v < 0) return NULL;
  const ir_value* x = &g->values[v];
  if (!x->const_data || x->dtype != dtype || gfx_shape_numel(&x->shape) != count) return NULL;
  return x;
}

void ir_fuse_drop_if_unread(ir_graph* g, const int* readers, int v) {
  if (v < 0 || readers[v] != 0 || !g->values[v].const_data) return;
  free(g->values[v].const_data);
  g->values[v].const_data = NULL;
  g->values[v].const_bytes = 0;
  g->values[v].shape = (gfx_shape){.rank = 1, .dims = {0}};
}

int ir_fuse_scalar_const(const ir_graph* g, int v, int dtype, double* x) {
  const ir_value* c = ir_fuse_float_const(g, v, dtype, 1);
  if (!c) return 0;
  *x = ir_fuse_const_at(c, 0);
  return 1;
}

int ir_fuse_other_input(const ir_node* n, int v) {
  if (n->n_inputs != 2) return -1;
  if (n->inputs[0] == v) return n->inputs[1];
  if (n->inputs[1] == v) return n->inputs[0];
  return -1;
}

int ir_fuse_shape_known(const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK) return 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return 0;
  return 1;
}

int ir_fuse_accepted(const ir_fuse_target* target, const ir_graph* g, const ir_node* node) {
  if (!target || !target->supports) return 1;
  gfx_status s = target->supports(target->user, g, node);
  if (!s) return 1;
  gfx_log(GFX_LOG_VERBOSE, "gfxep: not fused into one %s ('%s'): %s", ir_op_name(node->op), ir_fuse_name_of(node),
          gfx_status_message(s));
  gfx_status_free(s);
  return 0;
}

void ir_fuse_const_put(void* base, int dtype, int64_t i, double x) {
  char* p = (char*)base;
  if (dtype == GFX_DTYPE_F32) {
    const float f = (float)x;
    memcpy(p + 4 * i, &f, 4);
  } else {
    const uint16_t h = dtype == GFX_DTYPE_F16 ? gfx_float_to_half((float)x) : gfx_float_to_bf16((float)x);
    memcpy(p + 2 * i, &h, 2);
  }
}
