/* gfxep — value inputs and selections (see dynamic.h). */
#include "ir/dynamic.h"

#include <stdio.h>
#include <string.h>

#include "ir/layout.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

unsigned ir_node_value_inputs(const ir_node* node) {
  switch (node->op) {
    case GFX_OP_TOP_K: return node->params.index.value_inputs;
    case GFX_OP_SLICE:
    case GFX_OP_RESHAPE:
    case GFX_OP_EXPAND:
    case GFX_OP_CONSTANT_OF_SHAPE: return node->params.layout.value_inputs;
    case GFX_OP_RESIZE: return node->params.resize.value_inputs;
    default: return 0;
  }
}

int ir_op_is_selection(gfx_op op) { return op == GFX_OP_NON_ZERO || op == GFX_OP_NON_MAX_SUPPRESSION; }

int ir_op_data_dependent(gfx_op op, const ir_params* params) {
  if (ir_op_is_selection(op)) return 1;
  if (op == GFX_OP_TOP_K) return params->index.value_inputs != 0;
  if (op == GFX_OP_SLICE || op == GFX_OP_RESHAPE || op == GFX_OP_EXPAND || op == GFX_OP_CONSTANT_OF_SHAPE)
    return params->layout.value_inputs != 0;
  if (op == GFX_OP_RESIZE) return params->resize.value_inputs != 0;
  return 0;
}

/* A list value for `n` entries: a 1-D tensor of exactly that many. */
static gfx_status check_list(const ir_node* node, const char* what, int input, const ir_value_data* v, int n) {
  if (v->shape.rank != 1 || v->n != n)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "%s '%s': %s (input %d, computed at run time) has shape %s; %d entries were declared",
                     ir_op_name(node->op), node->name, what, input, SHAPE_STR(&v->shape), n);
  return NULL;
}

gfx_status ir_node_resolve(const ir_node* node, const ir_value_data* values, ir_node* out) {
  *out = *node;
  const unsigned mask = ir_node_value_inputs(node);
  switch (node->op) {
    case GFX_OP_TOP_K: {
      if (!(mask & 2u)) return NULL;
      const ir_value_data* k = &values[1];
      if (k->shape.rank != 1 || k->n != 1)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                         "TopK '%s': k (input 1, computed at run time) has shape %s; a 1-D tensor of one element is "
                         "expected",
                         node->name, SHAPE_STR(&k->shape));
      if (k->v[0] < 0)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "TopK '%s': k (input 1, computed at run time) = %lld is negative",
                         node->name, (long long)k->v[0]);
      out->params.index.k = k->v[0];
      out->params.index.value_inputs = 0;
      return NULL;
    }
    case GFX_OP_SLICE: {
      ir_layout_params* p = &out->params.layout;
      if (mask & 2u) {
        GFX_TRY(check_list(node, "starts", 1, &values[1], p->n_axes));
        memcpy(p->starts, values[1].v, sizeof(int64_t) * (size_t)p->n_axes);
      }
      if (mask & 4u) {
        GFX_TRY(check_list(node, "ends", 2, &values[2], p->n_axes));
        memcpy(p->ends, values[2].v, sizeof(int64_t) * (size_t)p->n_axes);
      }
      p->value_inputs = 0;
      return NULL;
    }
    case GFX_OP_RESHAPE:
    case GFX_OP_EXPAND:
    case GFX_OP_CONSTANT_OF_SHAPE: {
      ir_layout_params* p = &out->params.layout;
      const int i = node->op == GFX_OP_CONSTANT_OF_SHAPE ? 0 : 1;
      if (!(mask & (1u << i))) return NULL;
      GFX_TRY(check_list(node, "shape", i, &values[i], p->n_ints));
      gfx_status s = ir_check_shape_list(node->op, values[i].v, p->n_ints, p->allowzero);
      if (s)
        return gfx_status_wrap(s, "%s '%s': shape (input %d, computed at run time) %s", ir_op_name(node->op),
                               node->name, i, ir_shape_list_str(values[i].v, p->n_ints, (char[96]){0}, 96));
      memcpy(p->ints, values[i].v, sizeof(int64_t) * (size_t)p->n_ints);
      p->value_inputs = 0;
      return NULL;
    }
    case GFX_OP_RESIZE: {
      ir_resize_params* p = &out->params.resize;
      if (!(mask & 8u)) return NULL;
      GFX_TRY(check_list(node, "sizes", 3, &values[3], p->n_sizes));
      for (int k = 0; k < p->n_sizes; k++) {
        if (values[3].v[k] < 0 || values[3].v[k] > ((int64_t)1 << 31))
          return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                           "Resize '%s': sizes (input 3, computed at run time) entry %d is %lld, outside 0..2^31",
                           node->name, k, (long long)values[3].v[k]);
        p->sizes[p->size_axis[k]] = values[3].v[k];
      }
      p->value_inputs = 0;
      return NULL;
    }
    default: return NULL;
  }
}

/* A new int64 value named `base`:`suffix`, of `shape` (rank -1: unknown), holding `data` when it is not
 * NULL (n entries). */
static gfx_status add_i64(ir_graph* g, const char* base, const char* suffix, const gfx_shape* shape,
                          const int64_t* data, int n, int* index) {
  char name[512];
  snprintf(name, sizeof name, "%s:%s", base, suffix);
  GFX_TRY(ir_graph_add_value(g, name, GFX_DTYPE_I64, shape, index));
  if (data) GFX_TRY(ir_graph_set_constant(g, *index, data, sizeof(int64_t) * (size_t)n));
  return NULL;
}

gfx_status ir_graph_add_selection(ir_graph* g, gfx_op op, const char* name, const int* inputs, int n_inputs,
                                  int output, const ir_params* params) {
  if (!ir_op_is_selection(op)) return gfx_error(GFX_ERR_INTERNAL, "%s is no selection", ir_op_name(op));
  if (output < 0 || output >= g->n_values)
    return gfx_error(GFX_ERR_INTERNAL, "node '%s' output refers to value %d of %d", name, output, g->n_values);
  /* refused before anything is added: the graph is unchanged when this fails */
  const ir_value* y_value = &g->values[output];
  if (y_value->producer >= 0 || y_value->const_data || y_value->graph_input >= 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "node '%s' writes '%s', which already has a producer", name,
                     y_value->name);
  /* NonZero keeps the first `count` columns of [rank, bound], NonMaxSuppression the first rows */
  const int64_t axis = op == GFX_OP_NON_ZERO ? 1 : 0;
  const char* y = g->values[output].name;
  char base[400];
  snprintf(base, sizeof base, "%s", y);
  const gfx_shape unknown = {.rank = -1}, one = {.rank = 1, .dims = {1}};
  int bound = -1, count = -1, starts = -1, axes = -1;
  const int64_t zero = 0;
  GFX_TRY(add_i64(g, base, "gfxep.bound", &unknown, NULL, 0, &bound));
  GFX_TRY(add_i64(g, base, "gfxep.count", &one, NULL, 0, &count));
  GFX_TRY(add_i64(g, base, "gfxep.take_starts", &one, &zero, 1, &starts));
  GFX_TRY(add_i64(g, base, "gfxep.take_axes", &one, &axis, 1, &axes));
  const int outs[2] = {bound, count};
  GFX_TRY(ir_graph_add_node(g, op, name, inputs, n_inputs, outs, 2, params));
  ir_params take;
  memset(&take, 0, sizeof take);
  take.layout.dtype = GFX_DTYPE_I64;
  take.layout.n_axes = 1;
  take.layout.has_ints = 1;
  take.layout.axes[0] = axis;
  take.layout.starts[0] = 0;
  take.layout.ends[0] = 0; /* the count, once read back */
  take.layout.steps[0] = 1;
  take.layout.value_inputs = 1u << 2;
  char take_name[512];
  snprintf(take_name, sizeof take_name, "%s:gfxep.take", name);
  const int take_in[4] = {bound, starts, count, axes};
  return ir_graph_add_node(g, GFX_OP_SLICE, take_name, take_in, 4, &output, 1, &take);
}
