/* gfxep — compile-time fusions (see ir/fuse.h). */
#include "ir/fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

/* How many node inputs read each value (n_values entries, caller frees). */
static gfx_status count_readers(const ir_graph* g, int** readers) {
  *readers = calloc((size_t)g->n_values + 1, sizeof **readers);
  if (!*readers) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "counting the readers of %d values", g->n_values);
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0) (*readers)[g->nodes[n].inputs[i]]++;
  return NULL;
}

/* The only node that reads value v, or -1. */
static int sole_reader(const ir_graph* g, const int* readers, int v) {
  if (readers[v] != 1) return -1;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v) return n;
  return -1;
}

/* Removes node `index`, whose outputs nothing reads any more, keeping the order of the others and
 * their values' producer indices. */
static void remove_node(ir_graph* g, int index) {
  free(g->nodes[index].name);
  memmove(&g->nodes[index], &g->nodes[index + 1], sizeof g->nodes[0] * (size_t)(g->n_nodes - index - 1));
  g->n_nodes--;
  for (int n = index; n < g->n_nodes; n++)
    for (int o = 0; o < g->nodes[n].n_outputs; o++)
      if (g->nodes[n].outputs[o] >= 0) g->values[g->nodes[n].outputs[o]].producer = n;
}

/* A value no node writes or reads any more stays in the table (indices elsewhere point past it);
 * an empty shape keeps the planner from sizing it, which a dynamic declared shape would fail. */
static void retire_value(ir_graph* g, int v) {
  g->values[v].producer = -1;
  g->values[v].shape = (gfx_shape){.rank = 1, .dims = {0}};
}

/* Conv -> Relu becomes one Conv with a Relu activation, writing the Relu's output. */
static int fuse_conv_relu(ir_graph* g, const int* readers, int conv) {
  ir_node* c = &g->nodes[conv];
  if (c->op != GFX_OP_CONV || c->params.conv.activation != IR_ACT_NONE || c->n_outputs != 1) return 0;
  const int mid = c->outputs[0];
  if (mid < 0 || g->values[mid].graph_output >= 0) return 0;
  const int r = sole_reader(g, readers, mid);
  if (r < 0 || g->nodes[r].op != GFX_OP_RELU || g->nodes[r].n_inputs != 1 || g->nodes[r].n_outputs != 1) return 0;
  const int y = g->nodes[r].outputs[0];
  if (g->values[y].dtype != g->values[mid].dtype) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Conv '%s' and Relu '%s' into one Conv with a Relu activation", c->name,
          g->nodes[r].name);
  /* the fused node carries both names, so logs and profiles still show where each came from */
  const char* a = c->name ? c->name : "";
  const char* b = g->nodes[r].name ? g->nodes[r].name : "";
  char* both = malloc(strlen(a) + strlen(b) + 2);
  if (both) {
    sprintf(both, "%s+%s", a, b);
    free(c->name);
    c->name = both;
  }
  c->params.conv.activation = IR_ACT_RELU;
  c->outputs[0] = y;
  g->values[y].producer = conv;
  retire_value(g, mid);
  remove_node(g, r); /* r > conv: the graph is in topological order */
  return 1;
}

gfx_status ir_fuse(ir_graph* g) {
  if (!g) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no graph to fuse");
  for (int n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].op != GFX_OP_CONV) continue;
    int* readers = NULL;
    GFX_TRY(count_readers(g, &readers));
    fuse_conv_relu(g, readers, n);
    free(readers);
  }
  return ir_graph_validate(g);
}
