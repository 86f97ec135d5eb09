#include "ir/plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Free ranges of the workspace, kept sorted by offset and coalesced. */
typedef struct free_list {
  size_t* off;
  size_t* len;
  int n, cap;
} free_list;

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static int free_list_insert(free_list* f, size_t off, size_t len) {
  if (f->n == f->cap) {
    int cap = f->cap ? f->cap * 2 : 16;
    size_t* o = realloc(f->off, sizeof(size_t) * (size_t)cap);
    if (!o) return 0;
    f->off = o;
    size_t* l = realloc(f->len, sizeof(size_t) * (size_t)cap);
    if (!l) return 0;
    f->len = l;
    f->cap = cap;
  }
  int i = 0;
  while (i < f->n && f->off[i] < off) i++;
  memmove(f->off + i + 1, f->off + i, sizeof(size_t) * (size_t)(f->n - i));
  memmove(f->len + i + 1, f->len + i, sizeof(size_t) * (size_t)(f->n - i));
  f->off[i] = off;
  f->len[i] = len;
  f->n++;
  /* coalesce with the neighbours */
  if (i + 1 < f->n && f->off[i] + f->len[i] == f->off[i + 1]) {
    f->len[i] += f->len[i + 1];
    memmove(f->off + i + 1, f->off + i + 2, sizeof(size_t) * (size_t)(f->n - i - 2));
    memmove(f->len + i + 1, f->len + i + 2, sizeof(size_t) * (size_t)(f->n - i - 2));
    f->n--;
  }
  if (i > 0 && f->off[i - 1] + f->len[i - 1] == f->off[i]) {
    f->len[i - 1] += f->len[i];
    memmove(f->off + i, f->off + i + 1, sizeof(size_t) * (size_t)(f->n - i - 1));
    memmove(f->len + i, f->len + i + 1, sizeof(size_t) * (size_t)(f->n - i - 1));
    f->n--;
  }
  return 1;
}

/* Best fit among the free ranges; otherwise grows the workspace end (reusing a free tail). */
static size_t take(free_list* f, size_t* end, size_t len) {
  int best = -1;
  for (int i = 0; i < f->n; i++)
    if (f->len[i] >= len && (best < 0 || f->len[i] < f->len[best])) best = i;
  if (best >= 0) {
    size_t off = f->off[best];
    f->off[best] += len;
    f->len[best] -= len;
    if (f->len[best] == 0) {
      memmove(f->off + best, f->off + best + 1, sizeof(size_t) * (size_t)(f->n - best - 1));
      memmove(f->len + best, f->len + best + 1, sizeof(size_t) * (size_t)(f->n - best - 1));
      f->n--;
    }
    return off;
  }
  if (f->n > 0 && f->off[f->n - 1] + f->len[f->n - 1] == *end) {
    size_t off = f->off[f->n - 1];
    f->n--;
    *end = off + len;
    return off;
  }
  size_t off = *end;
  *end += len;
  return off;
}

static int in_workspace(const ir_value* v) { return v->producer >= 0 && v->graph_output < 0; }

/* Byte alignment a Split's piece must keep to be a view: what vectorized kernels load at once. */
#define IR_SPLIT_VIEW_ALIGNMENT 16

/* Whether Split node `node` can leave its outputs as views of its input: every dim before the axis
 * is 1 (so each output is one contiguous piece of the input, in order), every output lives in the
 * workspace, and every piece starts 16-byte aligned. ViT's q/k/v split of the fused projection is
 * this case. */
static int split_is_view(const ir_graph* g, const ir_node* node, const gfx_shape* shapes, const size_t* sizes) {
  if (node->op != GFX_OP_SPLIT || node->n_inputs < 1 || node->inputs[0] < 0) return 0;
  for (int o = 0; o < node->n_outputs; o++)
    if (node->params.layout.split_map_rank[o]) return 0; /* a fused Transpose: that output is a copy */
  const gfx_shape* x = &shapes[node->inputs[0]];
  if (x->rank < 1) return 0;
  int64_t axis = node->params.layout.axis;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return 0;
  for (int k = 0; k < axis; k++)
    if (x->dims[k] != 1) return 0;
  size_t offset = 0;
  for (int o = 0; o < node->n_outputs; o++) {
    const int v = node->outputs[o];
    if (v < 0 || !in_workspace(&g->values[v]) || offset % IR_SPLIT_VIEW_ALIGNMENT) return 0;
    offset += sizes[v];
  }
  return offset == sizes[node->inputs[0]];
}

gfx_status ir_plan_memory(const ir_graph* g, const gfx_shape* shapes, size_t alignment, ir_plan* plan) {
  int* all = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  if (!all) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "planning memory for %d nodes", g->n_nodes);
  for (int n = 0; n < g->n_nodes; n++) all[n] = n;
  gfx_status s = ir_plan_memory_nodes(g, shapes, alignment, all, g->n_nodes, NULL, plan);
  free(all);
  return s;
}

/* Whether every dim of s is known, so that it has a size. */
static int sized(const gfx_shape* s) {
  if (s->rank < 0) return 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return 0;
  return 1;
}

gfx_status ir_plan_memory_nodes(const ir_graph* g, const gfx_shape* shapes, size_t alignment, const int* nodes,
                                int n_list, const char* escapes, ir_plan* plan) {
  memset(plan, 0, sizeof *plan);
  if (alignment == 0) alignment = 256;
  plan->n_values = g->n_values;
  plan->offsets = malloc(sizeof(size_t) * (size_t)(g->n_values + 1));
  plan->sizes = calloc((size_t)g->n_values + 1, sizeof(size_t));
  plan->alias_of = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  plan->alias_offset = calloc((size_t)g->n_values + 1, sizeof(size_t));
  int* last_use = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  int* root = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char* mine = calloc((size_t)g->n_values + 1, 1); /* produced by a listed node */
  free_list fl = {0};
  gfx_status s = NULL;
  if (!plan->offsets || !plan->sizes || !plan->alias_of || !plan->alias_offset || !last_use || !root || !mine) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "planning memory for %d values", g->n_values);
    goto done;
  }
  for (int k = 0; k < n_list; k++)
    for (int o = 0; o < g->nodes[nodes[k]].n_outputs; o++)
      if (g->nodes[nodes[k]].outputs[o] >= 0) mine[g->nodes[nodes[k]].outputs[o]] = 1;
  /* Sizes above this cannot be planned without the offsets overflowing: refuse them (no device has
   * that much memory anyway). Keeping every size below SIZE_MAX / (2 * n_values) bounds their sum. */
  size_t max_bytes = SIZE_MAX / 2 / ((size_t)g->n_values + 1) - alignment;
  for (int v = 0; v < g->n_values; v++) {
    plan->offsets[v] = IR_PLAN_NO_OFFSET;
    plan->alias_of[v] = -1;
    root[v] = v;
    last_use[v] = -1; /* a value nobody reads dies right after its producer (set below) */
    /* values of other stages may not have shapes yet: only the listed nodes' values must */
    if (!mine[v] && !sized(&shapes[v])) continue;
    int ok;
    plan->sizes[v] = gfx_shape_bytes(&shapes[v], g->values[v].dtype, &ok);
    if (!ok) {
      s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "value '%s' has no computable size", g->values[v].name);
      goto done;
    }
    if (plan->sizes[v] > max_bytes) {
      s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "value '%s' needs %zu bytes, more than can be planned", g->values[v].name,
                    plan->sizes[v]);
      goto done;
    }
  }
  /* positions in the list, not node indices: the list is the order the nodes run in */
  for (int k = 0; k < n_list; k++) {
    const ir_node* node = &g->nodes[nodes[k]];
    for (int o = 0; o < node->n_outputs; o++)
      if (node->outputs[o] >= 0) last_use[node->outputs[o]] = k;
  }
  for (int k = 0; k < n_list; k++) {
    const ir_node* node = &g->nodes[nodes[k]];
    for (int i = 0; i < node->n_inputs; i++)
      if (node->inputs[i] >= 0) last_use[node->inputs[i]] = k;
  }
  /* read after the listed nodes (by a later stage, or read back): alive to the end */
  if (escapes)
    for (int v = 0; v < g->n_values; v++)
      if (escapes[v]) last_use[v] = INT_MAX;
  /* views share their input's memory; the memory's owner (root) lives until the last reader of any
   * of its views (the list is in topological order, so a view's input has its root already) */
  for (int k = 0; k < n_list; k++) {
    const ir_node* node = &g->nodes[nodes[k]];
    if (split_is_view(g, node, shapes, plan->sizes)) {
      const int in = node->inputs[0];
      size_t offset = 0;
      for (int o = 0; o < node->n_outputs; o++) {
        const int out = node->outputs[o];
        plan->alias_of[out] = in;
        plan->alias_offset[out] = offset;
        root[out] = root[in];
        offset += plan->sizes[out];
      }
      continue;
    }
    if (!ir_op_is_view(node->op) || node->n_inputs < 1 || node->inputs[0] < 0 || node->n_outputs != 1) continue;
    int in = node->inputs[0], out = node->outputs[0];
    if (!in_workspace(&g->values[out]) || plan->sizes[out] != plan->sizes[in]) continue;
    plan->alias_of[out] = in;
    root[out] = root[in];
  }
  for (int v = 0; v < g->n_values; v++)
    if (root[v] != v && last_use[v] > last_use[root[v]]) last_use[root[v]] = last_use[v];

  size_t end = 0, live = 0;
  for (int k = 0; k < n_list; k++) {
    const ir_node* node = &g->nodes[nodes[k]];
    for (int o = 0; o < node->n_outputs; o++) {
      int v = node->outputs[o];
      if (!in_workspace(&g->values[v]) || plan->alias_of[v] >= 0) continue;
      size_t len = align_up(plan->sizes[v] ? plan->sizes[v] : 1, alignment);
      plan->offsets[v] = take(&fl, &end, len);
      plan->sum_bytes += len;
      live += plan->sizes[v];
    }
    if (live > plan->live_peak_bytes) plan->live_peak_bytes = live;
    /* release what dies here: inputs read for the last time, outputs nobody reads */
    for (int j = 0; j < node->n_inputs + node->n_outputs; j++) {
      int v = j < node->n_inputs ? node->inputs[j] : node->outputs[j - node->n_inputs];
      if (v < 0 || !in_workspace(&g->values[v]) || last_use[v] != k || plan->offsets[v] == IR_PLAN_NO_OFFSET ||
          plan->alias_of[v] >= 0)
        continue;
      /* the same value can appear twice among a node's inputs: release it once */
      int seen = 0;
      for (int i = 0; i < j; i++) {
        int u = i < node->n_inputs ? node->inputs[i] : node->outputs[i - node->n_inputs];
        seen |= u == v;
      }
      if (seen) continue;
      size_t len = align_up(plan->sizes[v] ? plan->sizes[v] : 1, alignment);
      live -= plan->sizes[v];
      if (!free_list_insert(&fl, plan->offsets[v], len)) {
        s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "planning memory");
        goto done;
      }
    }
  }
  plan->workspace_bytes = end;
done:
  free(last_use);
  free(root);
  free(mine);
  free(fl.off);
  free(fl.len);
  if (s) ir_plan_free(plan);
  return s;
}

void ir_plan_free(ir_plan* plan) {
  free(plan->alias_of);
  free(plan->alias_offset);
  free(plan->offsets);
  free(plan->sizes);
  memset(plan, 0, sizeof *plan);
}
