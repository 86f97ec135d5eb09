/* gfxep — scaled-dot-product attention written out as MatMul, Softmax and MatMul, fused into one
 * Attention node that reads Q, K and V where they lie (see ir/fuse.h).
 *
 * Exporters write attention as q @ kᵀ, a scale, optional additive masks, Softmax, @ v, and reach
 * q, k and v from one projection through layout nodes: Reshape to [.., 3, heads, head size], a
 * Transpose, Gather or Split(+Squeeze) of the three parts, a Transpose for kᵀ. ONNX Runtime's
 * transpose optimizer moves those Transposes around (past the Gathers, into [0, 2, 3, 1] for kᵀ)
 * but leaves every one of them a pure relabelling of the projection's elements. So instead of
 * matching a fixed list of shapes, each operand is walked back node by node through ops that move
 * no data, and the elements it reads are described as a strided view of the tensor the walk ends
 * at (offset plus a stride per dim); the fused node reads through that view, and the copies the
 * layout nodes made (ViT's Split, Transposes) disappear with them.
 *
 * A walk stops where a value is read by a node outside the pattern, is a graph output, or its
 * producer is no view; nodes shared by the three walks (a Split, a Transpose before three Gathers)
 * go only when all of their outputs are read inside the pattern. Every size is fixed from the
 * declared shapes, which must be fully known; the node records the element count of each input it
 * was made for and the geometry refuses anything else at run time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ir/fuse_util.h"

#define CHAIN_MAX 12 /* layout nodes one operand may pass through */
#define CORE_MAX 12  /* MatMul, the nodes on the scores, Softmax, MatMul, Transpose */
#define MASKS_MAX 2

/* A value as a strided view of another tensor's elements. */
typedef struct strided {
  int rank;
  int64_t dims[GFX_MAX_RANK];
  int64_t stride[GFX_MAX_RANK];
  int64_t offset;
  double scale; /* a scalar Mul/Div the walk passed */
} strided;

/* One operand's way back from the product to the tensor it is read from: node[i] writes value[i]
 * from value[i + 1]; value[0] is the operand, value[len] the source. */
typedef struct chain {
  int len;
  int node[CHAIN_MAX];
  int value[CHAIN_MAX + 1];
} chain;

static int is_float(int dtype) { return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16; }

static const gfx_shape* shape_of(const ir_graph* g, int v) { return &g->values[v].shape; }

/* Contiguous (row-major) strides of dims. */
static void contiguous(int rank, const int64_t* dims, int64_t* stride) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    stride[i] = s;
    s *= dims[i];
  }
}

/* The strides that view the same elements, in the same row-major order, with new dims, when that
 * needs no copy (numpy's no-copy reshape): dims of size 1 are dropped from the old view, then each
 * group of old dims whose product equals that of a group of new dims must be contiguous within
 * itself, and the new group's strides follow from its innermost one. 0 when it needs a copy. */
static int reshape_view(const strided* from, int new_rank, const int64_t* new_dims, int64_t* new_stride) {
  int64_t od[GFX_MAX_RANK], os[GFX_MAX_RANK], n_old = 1, n_new = 1;
  int on = 0;
  for (int i = 0; i < from->rank; i++) {
    n_old *= from->dims[i];
    if (from->dims[i] != 1) od[on] = from->dims[i], os[on++] = from->stride[i];
  }
  for (int i = 0; i < new_rank; i++) n_new *= new_dims[i];
  if (n_old != n_new || n_old <= 0) return 0;
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_rank && oi < on) {
    int64_t np = new_dims[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= new_rank) return 0;
        np *= new_dims[nj++];
      } else {
        if (oj >= on) return 0;
        op *= od[oj++];
      }
    }
    for (int k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return 0; /* those old dims do not merge without a copy */
    new_stride[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; k--) new_stride[k - 1] = new_stride[k] * new_dims[k];
    ni = nj++;
    oi = oj++;
  }
  for (int k = ni; k < new_rank; k++) new_stride[k] = 0; /* trailing dims of size 1 */
  return 1;
}

/* The one element of an integer constant (Gather's index), into *x. */
static int int_scalar(const ir_graph* g, int v, int64_t* x, int* index_rank) {
  if (v < 0) return 0;
  const ir_value* c = &g->values[v];
  if (!c->const_data || gfx_shape_numel(&c->shape) != 1 || c->shape.rank > 1) return 0;
  if (c->dtype == GFX_DTYPE_I64) {
    memcpy(x, c->const_data, 8);
  } else if (c->dtype == GFX_DTYPE_I32) {
    int32_t w;
    memcpy(&w, c->const_data, 4);
    *x = w;
  } else {
    return 0;
  }
  *index_rank = c->shape.rank;
  return 1;
}

/* Whether op moves no element: its output is its input's elements in the same order, only the dims
 * differ. */
static int is_reshape_like(gfx_op op) {
  return op == GFX_OP_RESHAPE || op == GFX_OP_SQUEEZE || op == GFX_OP_UNSQUEEZE || op == GFX_OP_FLATTEN ||
         op == GFX_OP_IDENTITY;
}

/* The scalar a Mul or Div by a constant multiplies its other input by, and that input; 0 when node n
 * is no such scaling. */
static int scaling(const ir_graph* g, const ir_node* n, int* data, double* factor) {
  if ((n->op != GFX_OP_MUL && n->op != GFX_OP_DIV) || n->n_inputs != 2 || n->n_outputs != 1) return 0;
  const int y = n->outputs[0], dtype = g->values[y].dtype;
  double c;
  for (int i = 0; i < 2; i++) {
    if (n->op == GFX_OP_DIV && i == 0) continue; /* c / x is no scaling */
    if (n->inputs[1 - i] < 0 || !ir_fuse_scalar_const(g, n->inputs[i], dtype, &c)) continue;
    if (c == 0.0 || !isfinite(c)) return 0;
    /* a scalar of higher rank than x would broadcast x up */
    if (g->values[n->inputs[i]].shape.rank > g->values[n->inputs[1 - i]].shape.rank) return 0;
    *data = n->inputs[1 - i];
    *factor = n->op == GFX_OP_MUL ? c : 1.0 / c;
    return 1;
  }
  return 0;
}

/* The input node n reads the elements of value `out` from, when n is a node a walk may pass (see
 * the file comment); -1 otherwise. with_scale: a scalar Mul/Div may be passed too. */
static int view_input(const ir_graph* g, const ir_node* n, int with_scale) {
  if (n->n_inputs < 1 || n->inputs[0] < 0) return -1;
  if (is_reshape_like(n->op) || n->op == GFX_OP_TRANSPOSE) return n->n_outputs == 1 ? n->inputs[0] : -1;
  if (n->op == GFX_OP_GATHER) {
    int64_t idx;
    int rank;
    return n->n_inputs == 2 && n->n_outputs == 1 && int_scalar(g, n->inputs[1], &idx, &rank) ? n->inputs[0] : -1;
  }
  if (n->op == GFX_OP_SPLIT) {
    for (int o = 0; o < n->n_outputs; o++)
      if (n->params.layout.split_map_rank[o]) return -1; /* an output written transposed already */
    return n->inputs[0];
  }
  int data;
  double factor;
  if (with_scale && scaling(g, n, &data, &factor)) return data;
  return -1;
}

/* Walks back from operand value v while the producers are nodes a view can pass. */
static void walk_back(const ir_graph* g, int v, int with_scale, chain* c) {
  c->len = 0;
  c->value[0] = v;
  while (c->len < CHAIN_MAX) {
    const ir_value* x = &g->values[v];
    if (x->producer < 0 || x->graph_output >= 0 || !ir_fuse_shape_known(&x->shape)) return;
    const ir_node* n = &g->nodes[x->producer];
    const int in = view_input(g, n, with_scale);
    if (in < 0 || g->values[in].dtype != x->dtype || !ir_fuse_shape_known(&g->values[in].shape)) return;
    c->node[c->len++] = x->producer;
    c->value[c->len] = in;
    v = in;
  }
}

/* The view of node n's output `out` given the view of its data input; 0 when it is no strided view
 * (a Reshape that would need a copy). */
static int apply(const ir_graph* g, const ir_node* n, int out, strided* v) {
  const gfx_shape* os = shape_of(g, out);
  strided r = *v;
  if (is_reshape_like(n->op)) {
    if (!reshape_view(v, os->rank, os->dims, r.stride)) return 0;
    r.rank = os->rank;
    memcpy(r.dims, os->dims, sizeof r.dims);
  } else if (n->op == GFX_OP_TRANSPOSE) {
    const ir_layout_params* p = &n->params.layout;
    if (p->has_ints && p->n_ints != v->rank) return 0;
    for (int k = 0; k < v->rank; k++) {
      const int64_t from = p->has_ints ? p->ints[k] : v->rank - 1 - k;
      if (from < 0 || from >= v->rank) return 0;
      r.dims[k] = v->dims[from];
      r.stride[k] = v->stride[from];
    }
  } else if (n->op == GFX_OP_GATHER) {
    int64_t idx;
    int idx_rank;
    const int64_t axis = n->params.layout.axis < 0 ? n->params.layout.axis + v->rank : n->params.layout.axis;
    if (!int_scalar(g, n->inputs[1], &idx, &idx_rank) || axis < 0 || axis >= v->rank) return 0;
    if (idx < 0) idx += v->dims[axis];
    if (idx < 0 || idx >= v->dims[axis]) return 0;
    r.offset += idx * v->stride[axis];
    if (idx_rank == 0) { /* a scalar index drops the dim */
      r.rank--;
      for (int k = (int)axis; k < r.rank; k++) r.dims[k] = v->dims[k + 1], r.stride[k] = v->stride[k + 1];
    } else {
      r.dims[axis] = 1;
    }
  } else if (n->op == GFX_OP_SPLIT) {
    const int64_t axis = n->params.layout.axis < 0 ? n->params.layout.axis + v->rank : n->params.layout.axis;
    if (axis < 0 || axis >= v->rank) return 0;
    int64_t start = 0;
    int o = 0;
    for (; o < n->n_outputs && n->outputs[o] != out; o++) {
      if (n->outputs[o] < 0 || !ir_fuse_shape_known(shape_of(g, n->outputs[o]))) return 0;
      start += shape_of(g, n->outputs[o])->dims[axis];
    }
    if (o == n->n_outputs) return 0;
    r.offset += start * v->stride[axis];
    r.dims[axis] = os->dims[axis];
  } else {
    int data;
    double factor;
    if (!scaling(g, n, &data, &factor)) return 0;
    r.scale *= factor;
  }
  /* what the node declares is what the view must be */
  if (r.rank != os->rank) return 0;
  for (int k = 0; k < r.rank; k++)
    if (r.dims[k] != os->dims[k]) return 0;
  *v = r;
  return 1;
}

/* The view of c's operand from its source; when a node cannot be passed as a view, the chain is cut
 * below it (its output becomes the source) and 0 is returned, so the caller checks again. */
static int compose(const ir_graph* g, chain* c, strided* v) {
  const gfx_shape* s = shape_of(g, c->value[c->len]);
  v->rank = s->rank;
  memcpy(v->dims, s->dims, sizeof v->dims);
  contiguous(s->rank, s->dims, v->stride);
  v->offset = 0;
  v->scale = 1.0;
  for (int i = c->len - 1; i >= 0; i--)
    if (!apply(g, &g->nodes[c->node[i]], c->value[i], v)) {
      c->len = i;
      return 0;
    }
  return 1;
}

/* ---- the pattern around one Softmax ---- */

typedef struct pattern {
  int mm1, softmax, mm2, transpose; /* transpose: -1 when Y is the product itself */
  int core[CORE_MAX], n_core;       /* every node of the scores' path, the products and the Transpose */
  int n_masks;
  int mask[MASKS_MAX];              /* in the order the Adds apply them */
  int mask_at[MASKS_MAX];           /* the value each mask is added to (its shape is the scores' there) */
  double scale;                     /* scalar Muls/Divs on the scores */
  chain q, k, v;
  int y;
} pattern;

static int in_list(const int* list, int n, int x) {
  for (int i = 0; i < n; i++)
    if (list[i] == x) return 1;
  return 0;
}

/* Whether value v is read only by nodes in `inside` and is no graph output. */
static int read_inside(const ir_graph* g, int v, const int* inside, int n_inside) {
  if (g->values[v].graph_output >= 0) return 0;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v && !in_list(inside, n_inside, n)) return 0;
  return 1;
}

/* The nodes that would go: the core and every chain's. */
static int absorbed(const pattern* p, int* list) {
  int n = 0;
  for (int i = 0; i < p->n_core; i++) list[n++] = p->core[i];
  const chain* cs[3] = {&p->q, &p->k, &p->v};
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < cs[c]->len; i++)
      if (!in_list(list, n, cs[c]->node[i])) list[n++] = cs[c]->node[i];
  return n;
}

/* Cuts the chains until every node they absorb writes only values read inside the pattern and read
 * by the fused node neither as a source nor as a mask. 1 when something was cut. */
static int settle_chains(const ir_graph* g, pattern* p) {
  int list[CORE_MAX + 3 * CHAIN_MAX];
  const int n = absorbed(p, list);
  chain* cs[3] = {&p->q, &p->k, &p->v};
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < cs[c]->len; i++) {
      const ir_node* node = &g->nodes[cs[c]->node[i]];
      int ok = 1;
      for (int o = 0; o < node->n_outputs && ok; o++) {
        const int out = node->outputs[o];
        if (out < 0) continue;
        ok = read_inside(g, out, list, n) && !in_list(p->mask, p->n_masks, out);
        for (int d = 0; d < 3 && ok; d++) ok = cs[d]->value[cs[d]->len] != out;
      }
      if (!ok) {
        cs[c]->len = i;
        return 1;
      }
    }
  return 0;
}

/* Walks from value v (the Softmax's input at first) back to the first MatMul: scalar scalings, which
 * must come before any mask (walking back: seen_scale says one came after), additive masks, and
 * Reshapes, each value read by the next node alone. An Add whose operands could both be the scores
 * is tried both ways. */
static int match_scores(const ir_graph* g, const int* readers, pattern* p, int v, int seen_scale, int depth) {
  const ir_value* x = &g->values[v];
  const int dtype = g->values[g->nodes[p->softmax].inputs[0]].dtype;
  if (depth > CORE_MAX - 4 || x->producer < 0 || x->graph_output >= 0 || readers[v] != 1 || x->dtype != dtype ||
      !ir_fuse_shape_known(&x->shape))
    return 0;
  const int at = x->producer;
  const ir_node* n = &g->nodes[at];
  const pattern saved = *p;
  p->core[p->n_core++] = at;
  if (n->op == GFX_OP_MATMUL && n->n_outputs == 1) {
    p->mm1 = at;
    return 1;
  }
  int data;
  double factor;
  if (scaling(g, n, &data, &factor)) {
    p->scale *= factor;
    if (match_scores(g, readers, p, data, 1, depth + 1)) return 1;
  } else if (n->op == GFX_OP_ADD && n->n_inputs == 2 && n->n_outputs == 1 && !seen_scale && p->n_masks < MASKS_MAX) {
    for (int side = 0; side < 2; side++) {
      data = n->inputs[side];
      const int m = n->inputs[1 - side];
      /* the scores keep the Add's shape; the mask broadcasts to it (checked with its strides) */
      if (data < 0 || m < 0 || data == m || !gfx_shape_equal(shape_of(g, data), &x->shape) ||
          g->values[m].dtype != dtype || !ir_fuse_shape_known(shape_of(g, m)) || shape_of(g, m)->rank > x->shape.rank)
        continue;
      /* walking back meets the last Add first */
      for (int k = p->n_masks; k > 0; k--) p->mask[k] = p->mask[k - 1], p->mask_at[k] = p->mask_at[k - 1];
      p->mask[0] = m;
      p->mask_at[0] = v;
      p->n_masks++;
      if (match_scores(g, readers, p, data, seen_scale, depth + 1)) return 1;
      *p = saved;
      p->core[p->n_core++] = at;
    }
  } else if (is_reshape_like(n->op) && n->n_outputs == 1 && n->inputs[0] >= 0) {
    if (match_scores(g, readers, p, n->inputs[0], seen_scale, depth + 1)) return 1;
  }
  *p = saved;
  return 0;
}

/* Strides of the product's batch dims [batch, heads] for a view whose leading dims broadcast
 * against out_dims[0 .. r - 2). */
static int batch_strides(const strided* v, int r, const int64_t* out_dims, int64_t* sb, int64_t* sh) {
  const int nb = r - 2, vb = v->rank - 2;
  int64_t st[2] = {0, 0};
  if (vb > nb || nb < 1 || nb > 2) return 0;
  for (int k = 0; k < nb; k++) {
    const int vk = k - (nb - vb);
    if (vk < 0 || v->dims[vk] == 1) continue; /* broadcast */
    if (v->dims[vk] != out_dims[k]) return 0;
    st[k] = v->stride[vk];
  }
  *sb = nb == 2 ? st[0] : 0;
  *sh = nb == 2 ? st[1] : st[0];
  return 1;
}

/* A mask added to the scores where they have shape `at`: its broadcast strides there, seen through
 * the reshapes back to the product's shape out[r], as strides over [batch, heads, query, key]. */
static int mask_strides(const ir_graph* g, int m, const gfx_shape* at, int r, const int64_t* out_dims, int64_t* st) {
  const gfx_shape* ms = shape_of(g, m);
  strided v = {.rank = at->rank};
  memcpy(v.dims, at->dims, sizeof v.dims);
  int64_t mst[GFX_MAX_RANK];
  contiguous(ms->rank, ms->dims, mst);
  for (int k = 0; k < at->rank; k++) {
    const int mk = k - (at->rank - ms->rank);
    if (mk < 0 || ms->dims[mk] == 1) {
      v.stride[k] = 0;
    } else if (ms->dims[mk] == at->dims[k]) {
      v.stride[k] = mst[mk];
    } else {
      return 0;
    }
  }
  int64_t s[GFX_MAX_RANK];
  if (!reshape_view(&v, r, out_dims, s)) return 0;
  if (r == 4) {
    for (int k = 0; k < 4; k++) st[k] = s[k];
  } else {
    st[0] = 0, st[1] = s[0], st[2] = s[1], st[3] = s[2];
  }
  const int64_t sizes[4] = {r == 4 ? out_dims[0] : 1, out_dims[r - 3], out_dims[r - 2], out_dims[r - 1]};
  for (int k = 0; k < 4; k++)
    if (sizes[k] == 1) st[k] = 0;
  return 1;
}

static void set_view(ir_attention_view* view, int64_t offset, int64_t b, int64_t h, int64_t s, int64_t d,
                     const int64_t* sizes) {
  view->offset = offset;
  view->stride[0] = sizes[0] == 1 ? 0 : b;
  view->stride[1] = sizes[1] == 1 ? 0 : h;
  view->stride[2] = sizes[2] == 1 ? 0 : s;
  view->stride[3] = sizes[3] == 1 ? 0 : d;
}

/* The fused node's parameters from the matched pattern; 0 when some view does not fit. */
static int build_params(const ir_graph* g, pattern* p, ir_attention_params* a) {
  const ir_node* mm1 = &g->nodes[p->mm1];
  const ir_node* mm2 = &g->nodes[p->mm2];
  const gfx_shape* o1 = shape_of(g, mm1->outputs[0]);
  const gfx_shape* o2 = shape_of(g, mm2->outputs[0]);
  const int r = o1->rank;
  memset(a, 0, sizeof *a);
  a->fused = 1;
  a->batch = r == 4 ? o1->dims[0] : 1;
  a->heads = o1->dims[r - 3];
  a->q_seq = o1->dims[r - 2];
  a->kv_seq = o1->dims[r - 1];
  a->v_head_size = o2->dims[r - 1];
  strided q, k, v;
  if (!compose(g, &p->q, &q) || !compose(g, &p->k, &k) || !compose(g, &p->v, &v)) return -1; /* cut: again */
  if (q.rank < 2 || k.rank < 2 || v.rank < 2) return 0;
  const int sources[3] = {p->q.value[p->q.len], p->k.value[p->k.len], p->v.value[p->v.len]};
  for (int i = 0; i < 3; i++)
    if (!ir_fuse_shape_known(shape_of(g, sources[i]))) return 0;
  a->head_size = q.dims[q.rank - 1];
  int64_t b, h;
  const int64_t qsz[4] = {a->batch, a->heads, a->q_seq, a->head_size};
  const int64_t ksz[4] = {a->batch, a->heads, a->kv_seq, a->head_size};
  const int64_t vsz[4] = {a->batch, a->heads, a->kv_seq, a->v_head_size};
  const int64_t ysz[4] = {a->batch, a->heads, a->q_seq, a->v_head_size};
  if (!batch_strides(&q, r, o1->dims, &b, &h) || q.dims[q.rank - 2] != a->q_seq) return 0;
  set_view(&a->q, q.offset, b, h, q.stride[q.rank - 2], q.stride[q.rank - 1], qsz);
  /* K arrives as kᵀ [.., head, keys] (or as K [.., keys, head] with trans_b) */
  const int tk = mm1->params.gemm.trans_b;
  if (!batch_strides(&k, r, o1->dims, &b, &h) || k.dims[k.rank - (tk ? 2 : 1)] != a->kv_seq ||
      k.dims[k.rank - (tk ? 1 : 2)] != a->head_size)
    return 0;
  set_view(&a->k, k.offset, b, h, k.stride[k.rank - (tk ? 2 : 1)], k.stride[k.rank - (tk ? 1 : 2)], ksz);
  const int tv = mm2->params.gemm.trans_b;
  if (!batch_strides(&v, r, o2->dims, &b, &h) || v.dims[v.rank - (tv ? 1 : 2)] != a->kv_seq ||
      v.dims[v.rank - (tv ? 2 : 1)] != a->v_head_size)
    return 0;
  set_view(&a->v, v.offset, b, h, v.stride[v.rank - (tv ? 1 : 2)], v.stride[v.rank - (tv ? 2 : 1)], vsz);
  if (v.scale != 1.0) return 0;
  /* Y: the product's elements, in the Transpose's layout when one was absorbed */
  int64_t ys[GFX_MAX_RANK];
  const gfx_shape* yshape = shape_of(g, p->y);
  if (p->transpose >= 0) {
    const ir_layout_params* tp = &g->nodes[p->transpose].params.layout;
    int64_t cs[GFX_MAX_RANK];
    contiguous(r, yshape->dims, cs);
    if (yshape->rank != r || (tp->has_ints && tp->n_ints != r)) return 0;
    for (int t = 0; t < r; t++) {
      const int64_t from = tp->has_ints ? tp->ints[t] : r - 1 - t;
      if (from < 0 || from >= r) return 0;
      ys[from] = cs[t];
    }
  } else {
    contiguous(r, o2->dims, ys);
  }
  set_view(&a->y, 0, r == 4 ? ys[0] : 0, ys[r - 3], ys[r - 2], ys[r - 1], ysz);
  a->y_shape = *yshape;
  for (int m = 0; m < p->n_masks; m++)
    if (!mask_strides(g, p->mask[m], shape_of(g, p->mask_at[m]), r, o1->dims, m ? a->mask2_stride : a->mask_stride))
      return 0;
  a->has_mask = p->n_masks > 0;
  a->has_mask2 = p->n_masks > 1;
  const double scale = p->scale * q.scale * k.scale * (double)mm1->params.gemm.alpha;
  if (!isfinite((float)scale) || (float)scale == 0.0f) return 0;
  a->scale = (float)scale;
  const int ins[5] = {sources[0], sources[1], sources[2], p->n_masks > 0 ? p->mask[0] : -1,
                      p->n_masks > 1 ? p->mask[1] : -1};
  for (int i = 0; i < 3 + p->n_masks; i++) a->in_numel[i] = gfx_shape_numel(shape_of(g, ins[i]));
  return 1;
}

/* The MatMul after the Softmax, the optional Transpose after it, and the checks on both products. */
static int match_products(const ir_graph* g, const int* readers, pattern* p) {
  const ir_node* sm = &g->nodes[p->softmax];
  const int probs = sm->outputs[0];
  p->mm2 = ir_fuse_sole_reader(g, readers, probs);
  if (p->mm2 <= p->softmax || g->values[probs].graph_output >= 0) return 0;
  const ir_node* mm1 = &g->nodes[p->mm1];
  const ir_node* mm2 = &g->nodes[p->mm2];
  if (mm2->op != GFX_OP_MATMUL || mm2->n_inputs != 2 || mm2->inputs[0] != probs || mm2->inputs[1] == probs ||
      mm2->params.gemm.alpha != 1.0f || mm1->n_inputs != 2 || mm1->inputs[0] < 0 || mm1->inputs[1] < 0)
    return 0;
  const int o1 = mm1->outputs[0], o2 = mm2->outputs[0], dtype = g->values[o1].dtype;
  const gfx_shape *s1 = shape_of(g, o1), *s2 = shape_of(g, o2);
  if (!is_float(dtype) || g->values[o2].dtype != dtype || !ir_fuse_shape_known(s2) || s1->rank != s2->rank ||
      (s1->rank != 3 && s1->rank != 4) || !gfx_shape_equal(shape_of(g, probs), s1))
    return 0;
  for (int i = 0; i < s1->rank - 1; i++) /* batch dims and queries */
    if (s1->dims[i] != s2->dims[i]) return 0;
  for (int i = 0; i < 2; i++)
    if (g->values[mm1->inputs[i]].dtype != dtype || g->values[mm2->inputs[i]].dtype != dtype) return 0;
  p->core[p->n_core++] = p->softmax;
  p->core[p->n_core++] = p->mm2;
  p->y = o2;
  p->transpose = -1;
  const int t = ir_fuse_sole_reader(g, readers, o2);
  if (t > p->mm2 && g->values[o2].graph_output < 0 && g->nodes[t].op == GFX_OP_TRANSPOSE && g->nodes[t].n_inputs == 1 &&
      g->nodes[t].n_outputs == 1 &&
      g->values[g->nodes[t].outputs[0]].dtype == dtype && ir_fuse_shape_known(shape_of(g, g->nodes[t].outputs[0]))) {
    p->transpose = t;
    p->core[p->n_core++] = t;
    p->y = g->nodes[t].outputs[0];
  }
  return 1;
}

/* Replaces the pattern with the fused node in the slot of its last node. */
static void rewrite(ir_graph* g, const pattern* p, const ir_node* fused) {
  int list[CORE_MAX + 3 * CHAIN_MAX];
  const int n = absorbed(p, list);
  int slot = list[0];
  for (int i = 1; i < n; i++) slot = list[i] > slot ? list[i] : slot;
  /* values the gone nodes wrote, and the constants only they read (indices, shapes, scalars) */
  int consts[IR_MAX_IO * (CORE_MAX + 3 * CHAIN_MAX)], n_consts = 0;
  for (int i = 0; i < n; i++) {
    const ir_node* node = &g->nodes[list[i]];
    for (int o = 0; o < node->n_outputs; o++)
      if (node->outputs[o] >= 0 && node->outputs[o] != p->y) ir_fuse_retire_value(g, node->outputs[o]);
    for (int k = 0; k < node->n_inputs; k++)
      if (node->inputs[k] >= 0 && g->values[node->inputs[k]].const_data) consts[n_consts++] = node->inputs[k];
  }
  free(g->nodes[slot].name);
  g->nodes[slot] = *fused;
  g->values[p->y].producer = slot;
  /* highest first, so that the lower indices still name the same nodes */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (list[j] > list[i]) {
        const int t = list[i];
        list[i] = list[j];
        list[j] = t;
      }
  for (int i = 0; i < n; i++)
    if (list[i] != slot) ir_fuse_remove_node(g, list[i]);
  int* readers = NULL;
  gfx_status s = ir_fuse_count_readers(g, &readers, 0);
  if (s) { /* out of memory: the constants stay uploaded, which costs only memory */
    gfx_status_free(s);
    return;
  }
  for (int i = 0; i < n_consts; i++) ir_fuse_drop_if_unread(g, readers, consts[i]);
  free(readers);
}

/* Fuses the attention whose Softmax is node sm; 1 when it did. */
static gfx_status fuse_at(ir_graph* g, const ir_fuse_target* target, int sm, int* done) {
  *done = 0;
  const ir_node* s = &g->nodes[sm];
  if (s->op != GFX_OP_SOFTMAX || s->n_inputs != 1 || s->n_outputs != 1 || s->inputs[0] < 0) return NULL;
  const ir_softmax_params* sp = &s->params.softmax;
  const gfx_shape* xs = shape_of(g, s->inputs[0]);
  if (sp->log || sp->lp || xs->rank < 1 || (sp->axis < 0 ? sp->axis + xs->rank : sp->axis) != xs->rank - 1) return NULL;
  int* readers = NULL;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 0));
  pattern p;
  memset(&p, 0, sizeof p);
  p.softmax = sm;
  p.scale = 1.0;
  int ok = match_scores(g, readers, &p, s->inputs[0], 0, 0) && match_products(g, readers, &p);
  ir_attention_params a;
  if (ok) {
    const ir_node* mm1 = &g->nodes[p.mm1];
    walk_back(g, mm1->inputs[0], 1, &p.q);
    walk_back(g, mm1->inputs[1], 1, &p.k);
    walk_back(g, g->nodes[p.mm2].inputs[1], 0, &p.v);
    for (int c = 0; c < p.n_masks && ok; c++) /* a mask computed by a node the pattern removes */
      ok = g->values[p.mask[c]].producer < 0 || !in_list(p.core, p.n_core, g->values[p.mask[c]].producer);
    int r = 0;
    for (int round = 0; ok && round < 4 * CHAIN_MAX; round++) {
      while (settle_chains(g, &p)) {
      }
      if ((r = build_params(g, &p, &a)) >= 0) break;
    }
    ok = ok && r == 1;
  }
  free(readers);
  if (!ok) return NULL;
  for (int c = 0; c < p.n_masks; c++) { /* a mask written by a chain's node */
    int list[CORE_MAX + 3 * CHAIN_MAX];
    const int n = absorbed(&p, list);
    if (g->values[p.mask[c]].producer >= 0 && in_list(list, n, g->values[p.mask[c]].producer)) return NULL;
  }
  ir_node fused;
  memset(&fused, 0, sizeof fused);
  fused.op = GFX_OP_ATTENTION;
  fused.math_mode = g->nodes[p.mm1].math_mode;
  fused.params.attention = a;
  fused.n_inputs = 3 + p.n_masks;
  for (int i = 0; i < IR_MAX_IO; i++) fused.inputs[i] = fused.outputs[i] = -1;
  fused.inputs[0] = p.q.value[p.q.len];
  fused.inputs[1] = p.k.value[p.k.len];
  fused.inputs[2] = p.v.value[p.v.len];
  for (int m = 0; m < p.n_masks; m++) fused.inputs[3 + m] = p.mask[m];
  fused.n_outputs = 1;
  fused.outputs[0] = p.y;
  const char* n1 = ir_fuse_name_of(&g->nodes[p.mm1]);
  const char* n2 = ir_fuse_name_of(&g->nodes[p.mm2]);
  const char* ns = ir_fuse_name_of(&g->nodes[p.softmax]);
  fused.name = malloc(strlen(n1) + strlen(ns) + strlen(n2) + 3);
  if (!fused.name) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "naming a fused attention");
  sprintf(fused.name, "%s+%s+%s", n1, ns, n2);
  if (!ir_fuse_accepted(target, g, &fused)) {
    free(fused.name);
    return NULL;
  }
  int list[CORE_MAX + 3 * CHAIN_MAX];
  const int gone = absorbed(&p, list);
  gfx_log(GFX_LOG_INFO,
          "gfxep: fused attention '%s': %d nodes into one Attention (%lld x %lld heads, %lld queries, %lld keys, head "
          "%lld, scale %g, %d mask%s)",
          fused.name, gone, (long long)a.batch, (long long)a.heads, (long long)a.q_seq, (long long)a.kv_seq,
          (long long)a.head_size, (double)a.scale, p.n_masks, p.n_masks == 1 ? "" : "s");
  rewrite(g, &p, &fused);
  *done = 1;
  return NULL;
}

gfx_status ir_fuse_attention(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].op != GFX_OP_SOFTMAX) continue;
    int done = 0;
    GFX_TRY(fuse_at(g, target, n, &done));
    if (done) {
      (*count)++;
      n = -1; /* the indices moved: look again from the start */
    }
  }
  return NULL;
}
