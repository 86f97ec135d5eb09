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
  gfx_status s = ir_plan_memory_nodes(g, shapes, alignment, all, g->n_nodes, NULL, NULL, plan);
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

/* Bytes of the workspace alive from list position first to last, inclusive: an intermediate value
 * (value >= 0) or the scratch of the node at list position first (value < 0). */
typedef struct block {
  int first, last;
  int value;
  size_t len;   /* aligned */
  size_t bytes; /* as the value needs them, for the live bound */
  size_t offset;
} block;

/* Running order: at each position the blocks that start there take the best-fitting free range (in
 * the order they were listed), then the blocks that end there are released. Offsets into off[];
 * returns the workspace's end, or 0 with *ok = 0 when out of memory. */
static size_t place_in_order(const block* b, int n, int n_list, size_t* off, int* ok) {
  free_list fl = {0};
  size_t end = 0;
  int next = 0;
  int* ends = malloc(sizeof(int) * (size_t)(n + 1)); /* blocks by the position they end at */
  int* count = calloc((size_t)n_list + 2, sizeof(int));
  *ok = ends && count;
  if (*ok) {
    for (int i = 0; i < n; i++)
      if (b[i].last < n_list) count[b[i].last + 1]++;
    for (int k = 0; k < n_list; k++) count[k + 1] += count[k];
    for (int i = 0; i < n; i++)
      if (b[i].last < n_list) ends[count[b[i].last]++] = i;
    /* count[k] is now where position k's list ends; it starts where k - 1's ended */
    int released = 0;
    for (int k = 0; k < n_list && *ok; k++) {
      for (; next < n && b[next].first == k; next++) off[next] = take(&fl, &end, b[next].len);
      for (; released < count[k] && *ok; released++) *ok = free_list_insert(&fl, off[ends[released]], b[ends[released]].len);
    }
  }
  free(ends);
  free(count);
  free(fl.off);
  free(fl.len);
  return *ok ? end : 0;
}

typedef struct rank_key {
  size_t len;
  int first, index;
} rank_key;

/* larger first; then earlier; then in listing order (a total order: the plan does not depend on qsort) */
static int larger_first(const void* pa, const void* pb) {
  const rank_key *x = pa, *y = pb;
  if (x->len != y->len) return x->len > y->len ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->index < y->index ? -1 : 1;
}

/* Largest first: each block goes into the smallest gap, among the placed blocks whose lifetimes
 * overlap its own, that holds it, else above them all. */
static size_t place_largest_first(const block* b, int n, size_t* off, int* ok) {
  rank_key* order = malloc(sizeof(rank_key) * (size_t)(n + 1));
  int* placed = malloc(sizeof(int) * (size_t)(n + 1)); /* by offset */
  *ok = order && placed;
  size_t end = 0;
  if (*ok) {
    for (int i = 0; i < n; i++) order[i] = (rank_key){.len = b[i].len, .first = b[i].first, .index = i};
    qsort(order, (size_t)n, sizeof(rank_key), larger_first);
    for (int j = 0, n_placed = 0; j < n; j++) {
      const int i = order[j].index;
      const block* x = &b[i];
      size_t top = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
      for (int p = 0; p < n_placed; p++) {
        const block* y = &b[placed[p]];
        if (y->last < x->first || x->last < y->first) continue;
        const size_t at = off[placed[p]];
        if (at >= top + x->len && at - top < best_gap) {
          best = top;
          best_gap = at - top;
        }
        if (at + y->len > top) top = at + y->len;
      }
      const size_t o = best != SIZE_MAX ? best : top;
      off[i] = o;
      if (o + x->len > end) end = o + x->len;
      int p = n_placed++;
      for (; p > 0 && off[placed[p - 1]] > o; p--) placed[p] = placed[p - 1];
      placed[p] = i;
    }
  }
  free(order);
  free(placed);
  return *ok ? end : 0;
}

gfx_status ir_plan_memory_nodes(const ir_graph* g, const gfx_shape* shapes, size_t alignment, const int* nodes,
                                int n_list, const char* escapes, const size_t* scratch, ir_plan* plan) {
  memset(plan, 0, sizeof *plan);
  if (alignment == 0) alignment = 256;
  plan->n_values = g->n_values;
  plan->n_nodes = n_list;
  plan->offsets = malloc(sizeof(size_t) * (size_t)(g->n_values + 1));
  plan->sizes = calloc((size_t)g->n_values + 1, sizeof(size_t));
  plan->alias_of = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  plan->alias_offset = calloc((size_t)g->n_values + 1, sizeof(size_t));
  plan->scratch_offsets = malloc(sizeof(size_t) * (size_t)(n_list + 1));
  int* last_use = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  int* root = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char* mine = calloc((size_t)g->n_values + 1, 1); /* produced by a listed node */
  const size_t max_blocks = (size_t)g->n_values + (size_t)n_list + 1;
  block* blocks = malloc(sizeof(block) * max_blocks);
  size_t* off_a = malloc(sizeof(size_t) * max_blocks);
  size_t* off_b = malloc(sizeof(size_t) * max_blocks);
  size_t* dying = calloc((size_t)n_list + 1, sizeof(size_t));
  gfx_status s = NULL;
  if (!plan->offsets || !plan->sizes || !plan->alias_of || !plan->alias_offset || !plan->scratch_offsets ||
      !last_use || !root || !mine || !blocks || !off_a || !off_b || !dying) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "planning memory for %d values", g->n_values);
    goto done;
  }
  for (int k = 0; k < n_list; k++) {
    plan->scratch_offsets[k] = IR_PLAN_NO_OFFSET;
    for (int o = 0; o < g->nodes[nodes[k]].n_outputs; o++)
      if (g->nodes[nodes[k]].outputs[o] >= 0) mine[g->nodes[nodes[k]].outputs[o]] = 1;
  }
  /* Sizes above this cannot be planned without the offsets overflowing: refuse them (no device has
   * that much memory anyway). Keeping every size, scratch included, below SIZE_MAX / (2 * blocks)
   * bounds their sum. */
  size_t max_bytes = SIZE_MAX / 2 / max_blocks - alignment;
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
  for (int k = 0; scratch && k < n_list; k++)
    if (scratch[k] > max_bytes) {
      s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "node '%s' asks for %zu bytes of scratch, more than can be planned",
                    g->nodes[nodes[k]].name, scratch[k]);
      goto done;
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

  /* the blocks, in running order: each node's outputs, then its scratch */
  int n_blocks = 0;
  for (int k = 0; k < n_list; k++) {
    const ir_node* node = &g->nodes[nodes[k]];
    for (int o = 0; o < node->n_outputs; o++) {
      int v = node->outputs[o];
      if (v < 0 || !in_workspace(&g->values[v]) || plan->alias_of[v] >= 0) continue;
      const size_t len = align_up(plan->sizes[v] ? plan->sizes[v] : 1, alignment);
      blocks[n_blocks++] = (block){.first = k, .last = last_use[v], .value = v, .len = len, .bytes = plan->sizes[v]};
      plan->sum_bytes += len;
    }
    if (scratch && scratch[k]) {
      blocks[n_blocks++] = (block){.first = k, .last = k, .value = -1, .len = align_up(scratch[k], alignment)};
      plan->sum_bytes += blocks[n_blocks - 1].len;
    }
  }
  /* the live bound: intermediates only, as the values need them (dying[k]: what dies at position k) */
  size_t live = 0;
  for (int i = 0; i < n_blocks; i++)
    if (blocks[i].last < n_list) dying[blocks[i].last] += blocks[i].bytes;
  for (int k = 0, i = 0; k < n_list; k++) {
    for (; i < n_blocks && blocks[i].first == k; i++) live += blocks[i].bytes;
    if (live > plan->live_peak_bytes) plan->live_peak_bytes = live;
    live -= dying[k];
  }
  int ok_a, ok_b;
  const size_t end_a = place_in_order(blocks, n_blocks, n_list, off_a, &ok_a);
  const size_t end_b = place_largest_first(blocks, n_blocks, off_b, &ok_b);
  if (!ok_a || !ok_b) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "planning memory");
    goto done;
  }
  const size_t* off = end_b < end_a ? off_b : off_a;
  plan->workspace_bytes = end_b < end_a ? end_b : end_a;
  for (int i = 0; i < n_blocks; i++) {
    if (blocks[i].value >= 0) plan->offsets[blocks[i].value] = off[i];
    else plan->scratch_offsets[blocks[i].first] = off[i];
  }
done:
  free(last_use);
  free(root);
  free(mine);
  free(blocks);
  free(off_a);
  free(off_b);
  free(dying);
  if (s) ir_plan_free(plan);
  return s;
}

void ir_plan_free(ir_plan* plan) {
  free(plan->alias_of);
  free(plan->alias_offset);
  free(plan->offsets);
  free(plan->sizes);
  free(plan->scratch_offsets);
  memset(plan, 0, sizeof *plan);
}
