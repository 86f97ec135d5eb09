#include "ir/graph.h"

#include "ir/dynamic.h"

#include <stdlib.h>
#include <string.h>

ir_graph* ir_graph_new(void) { return calloc(1, sizeof(ir_graph)); }

void ir_graph_free(ir_graph* g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) {
    free(g->values[i].name);
    free(g->values[i].const_data);
  }
  for (int i = 0; i < g->n_nodes; i++) free(g->nodes[i].name);
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g);
}

static char* copy_string(const char* s) {
  size_t n = strlen(s ? s : "") + 1;
  char* c = malloc(n);
  if (c) memcpy(c, s ? s : "", n);
  return c;
}

/* Grows *array (of elem bytes each) so that index `need` fits. */
static int grow(void** array, int* cap, int need, size_t elem) {
  if (need < *cap) return 1;
  int n = *cap ? *cap * 2 : 16;
  while (n <= need) n *= 2;
  void* p = realloc(*array, (size_t)n * elem);
  if (!p) return 0;
  memset((char*)p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
  *array = p;
  *cap = n;
  return 1;
}

gfx_status ir_graph_add_value(ir_graph* g, const char* name, int dtype, const gfx_shape* shape, int* index) {
  if (shape && (shape->rank < -1 || shape->rank > GFX_MAX_RANK))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "value '%s' has rank %d; gfxep handles up to %d", name, shape->rank,
                     GFX_MAX_RANK);
  if (!grow((void**)&g->values, &g->cap_values, g->n_values, sizeof(ir_value)))
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "adding value '%s'", name);
  ir_value* v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = copy_string(name);
  if (!v->name) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "adding value '%s'", name);
  v->dtype = dtype;
  v->shape = shape ? *shape : (gfx_shape){.rank = -1};
  v->producer = -1;
  v->graph_input = -1;
  v->graph_output = -1;
  *index = g->n_values++;
  return NULL;
}

int ir_graph_find_value(const ir_graph* g, const char* name) {
  for (int i = 0; i < g->n_values; i++)
    if (strcmp(g->values[i].name, name) == 0) return i;
  return -1;
}

gfx_status ir_graph_set_constant(ir_graph* g, int index, const void* bytes, size_t size) {
  ir_value* v = &g->values[index];
  int ok;
  size_t want = gfx_shape_bytes(&v->shape, v->dtype, &ok);
  if (!ok || want != size)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "constant '%s' has %zu bytes, its type and shape need %zu", v->name,
                     size, want);
  void* copy = malloc(size ? size : 1);
  if (!copy) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "copying constant '%s' (%zu bytes)", v->name, size);
  if (size) memcpy(copy, bytes, size);
  free(v->const_data);
  v->const_data = copy;
  v->const_bytes = size;
  return NULL;
}

static gfx_status append_index(int** array, int* n, int value) {
  int* p = realloc(*array, sizeof(int) * (size_t)(*n + 1));
  if (!p) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "growing the graph's input/output list");
  p[(*n)++] = value;
  *array = p;
  return NULL;
}

gfx_status ir_graph_add_input(ir_graph* g, int value) {
  g->values[value].graph_input = g->n_inputs;
  return append_index(&g->inputs, &g->n_inputs, value);
}

gfx_status ir_graph_add_output(ir_graph* g, int value) {
  g->values[value].graph_output = g->n_outputs;
  return append_index(&g->outputs, &g->n_outputs, value);
}

gfx_status ir_graph_add_node(ir_graph* g, gfx_op op, const char* name, const int* inputs, int n_inputs,
                             const int* outputs, int n_outputs, const ir_params* params) {
  /* NonZero and NonMaxSuppression as ONNX writes them: a bounded node and a Slice of its count */
  if (ir_op_is_selection(op) && n_outputs == 1 && outputs && params)
    return ir_graph_add_selection(g, op, name, inputs, n_inputs, outputs[0], params);
  if (n_inputs > IR_MAX_IO || n_outputs > IR_MAX_IO || n_outputs < 1)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "node '%s' has %d inputs and %d outputs; gfxep handles 1..%d", name,
                     n_inputs, n_outputs, IR_MAX_IO);
  for (int i = 0; i < n_inputs; i++)
    if (inputs[i] < -1 || inputs[i] >= g->n_values)
      return gfx_error(GFX_ERR_INTERNAL, "node '%s' input %d refers to value %d of %d", name, i, inputs[i],
                       g->n_values);
  for (int i = 0; i < n_outputs; i++) {
    if (outputs[i] < 0 || outputs[i] >= g->n_values)
      return gfx_error(GFX_ERR_INTERNAL, "node '%s' output %d refers to value %d of %d", name, i, outputs[i],
                       g->n_values);
    if (g->values[outputs[i]].producer >= 0 || g->values[outputs[i]].const_data ||
        g->values[outputs[i]].graph_input >= 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "node '%s' writes '%s', which already has a producer", name,
                       g->values[outputs[i]].name);
  }
  if (!grow((void**)&g->nodes, &g->cap_nodes, g->n_nodes, sizeof(ir_node)))
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "adding node '%s'", name);
  ir_node* node = &g->nodes[g->n_nodes];
  memset(node, 0, sizeof *node);
  node->op = op;
  node->name = copy_string(name);
  if (!node->name) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "adding node '%s'", name);
  node->n_inputs = n_inputs;
  node->n_outputs = n_outputs;
  memcpy(node->inputs, inputs, sizeof(int) * (size_t)n_inputs);
  memcpy(node->outputs, outputs, sizeof(int) * (size_t)n_outputs);
  if (params) node->params = *params;
  for (int i = 0; i < n_outputs; i++) g->values[outputs[i]].producer = g->n_nodes;
  g->n_nodes++;
  return NULL;
}

gfx_status ir_graph_validate(const ir_graph* g) {
  /* a value is available once it is a graph input, a constant, or produced by an earlier node */
  char* ready = calloc((size_t)g->n_values + 1, 1);
  if (!ready) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "validating the graph");
  gfx_status s = NULL;
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i].graph_input >= 0 || g->values[i].const_data) ready[i] = 1;
  for (int n = 0; n < g->n_nodes && !s; n++) {
    const ir_node* node = &g->nodes[n];
    if (node->op <= GFX_OP_NONE || node->op >= GFX_OP_COUNT) {
      s = gfx_error(GFX_ERR_INTERNAL, "node '%s' has no op", node->name);
      break;
    }
    for (int i = 0; i < node->n_inputs && !s; i++)
      if (node->inputs[i] >= 0 && !ready[node->inputs[i]])
        s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "node '%s' reads '%s' before anything produces it", node->name,
                      g->values[node->inputs[i]].name);
    for (int o = 0; o < node->n_outputs; o++) ready[node->outputs[o]] = 1;
  }
  for (int i = 0; i < g->n_outputs && !s; i++)
    if (!ready[g->outputs[i]])
      s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "graph output '%s' is never produced", g->values[g->outputs[i]].name);
  for (int i = 0; i < g->n_values && !s; i++)
    if (gfx_dtype_size(g->values[i].dtype) == 0 && (g->values[i].producer >= 0 || g->values[i].graph_input >= 0))
      s = gfx_error(GFX_ERR_NOT_SUPPORTED, "value '%s' has element type %d, which gfxep does not handle",
                    g->values[i].name, g->values[i].dtype);
  free(ready);
  return s;
}

gfx_status ir_graph_clone(const ir_graph* g, ir_graph** out) {
  *out = NULL;
  ir_graph* c = ir_graph_new();
  if (!c) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "copying a graph");
  gfx_status s = NULL;
  for (int i = 0; i < g->n_values && !s; i++) {
    const ir_value* v = &g->values[i];
    int index = -1;
    s = ir_graph_add_value(c, v->name, v->dtype, &v->shape, &index);
    if (!s && v->const_data) s = ir_graph_set_constant(c, index, v->const_data, v->const_bytes);
  }
  for (int i = 0; i < g->n_inputs && !s; i++) s = ir_graph_add_input(c, g->inputs[i]);
  for (int i = 0; i < g->n_nodes && !s; i++) {
    const ir_node* n = &g->nodes[i];
    s = ir_graph_add_node(c, n->op, n->name, n->inputs, n->n_inputs, n->outputs, n->n_outputs, &n->params);
    if (!s) c->nodes[i].math_mode = n->math_mode;
  }
  for (int i = 0; i < g->n_outputs && !s; i++) s = ir_graph_add_output(c, g->outputs[i]);
  if (s) {
    ir_graph_free(c);
    return s;
  }
  *out = c;
  return NULL;
}
