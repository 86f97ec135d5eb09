/* gfxep — reference kernels of the logic ops, Mod, and the scans, generators and index ops that
 * follow them in the op table: plain C loops on host memory.
 *
 * Float types compute in double and round once at the store (ref_dtype.h); integers compute in
 * int64. Every index read from a tensor is checked before it is used: an index outside its axis is
 * an error (GFX_ERR_INVALID_ARGUMENT naming the entry), never an access outside a tensor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

/* ---- checks ---- */

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}
static int is_int_type(int dtype) { return dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64; }


/* Exact integer load and store (int32 stores keep the low 32 bits). */
static int64_t load_int(const void* base, int dtype, int64_t i) {
  if (dtype == GFX_DTYPE_I64) {
    int64_t v;
    memcpy(&v, (const char*)base + 8 * i, 8);
    return v;
  }
  int32_t v;
  memcpy(&v, (const char*)base + 4 * i, 4);
  return v;
}

static void store_int(void* base, int dtype, int64_t i, int64_t v) {
  if (dtype == GFX_DTYPE_I64) {
    memcpy((char*)base + 8 * i, &v, 8);
    return;
  }
  const uint32_t u = (uint32_t)(uint64_t)v;
  memcpy((char*)base + 4 * i, &u, 4);
}

/* The broadcast of two operands, which the output must have. */
static gfx_status broadcast_two(const gfx_tensor* in, const gfx_tensor* out, ref_broadcast_strides* bs) {
  gfx_shape full;
  GFX_TRY(ir_broadcast_shapes(&in[0].shape, &in[1].shape, &full));
  GFX_TRY(ref_check_shape_is("output 0", &out->shape, &full));
  ref_broadcast_strides_init(bs, &full, &in[0].shape, &in[1].shape);
  return NULL;
}

/* ---- Not, And, Or, Xor ---- */

static int logic_op(gfx_op op, int a, int b) {
  switch (op) {
    case GFX_OP_AND: return a && b;
    case GFX_OP_OR: return a || b;
    case GFX_OP_XOR: return a != b;
    default: return !a; /* Not */
  }
}

/* bool tensors hold one byte per element; any nonzero byte reads as true */
gfx_status ref_run_logic(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  const int n = node->op == GFX_OP_NOT ? 1 : 2;
  GFX_TRY(ref_check_io(node, in, out, n, n, n));
  for (int i = 0; i < n; i++) GFX_TRY(ref_check_dtype(i ? "input 1" : "input 0", &in[i], GFX_DTYPE_BOOL));
  GFX_TRY(ref_check_dtype("output 0", &out[0], GFX_DTYPE_BOOL));
  const unsigned char* a = in[0].data;
  unsigned char* y = out[0].data;
  if (n == 1) {
    GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
    const int64_t count = gfx_shape_numel(&in[0].shape);
    for (int64_t i = 0; i < count; i++) y[i] = (unsigned char)logic_op(node->op, a[i] != 0, 0);
    return NULL;
  }
  ref_broadcast_strides bs;
  GFX_TRY(broadcast_two(in, &out[0], &bs));
  const unsigned char* b = in[1].data;
  const int64_t count = gfx_shape_numel(&out[0].shape);
  for (int64_t e = 0; e < count; e++) {
    int64_t ia, ib;
    ref_broadcast_offsets(&bs, e, &ia, &ib);
    y[e] = (unsigned char)logic_op(node->op, a[ia] != 0, b[ib] != 0);
  }
  return NULL;
}

/* ---- Mod ---- */

/* The integer remainder: truncated (fmod=1, C's %) or with the divisor's sign (fmod=0, Python's %).
 * A divisor of 0 gives 0, as numpy (ONNX's reference implementation) does; ONNX Runtime's CPU EP
 * has no defined result there (its process traps on x86). A divisor of -1 gives 0 too, which
 * also keeps INT64_MIN % -1 (an overflow in C) from being computed. The GPU kernels do the same. */
static int64_t mod_int(int64_t a, int64_t b, int fmod) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

gfx_status ref_run_mod(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 2, 2, 2));
  const int t = in[0].dtype;
  const int c_fmod = node->params.index.fmod;
  if (!(is_int_type(t) || (c_fmod && is_float_type(t))))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "Mod with fmod=%d of %s operands is not handled", c_fmod,
                     gfx_dtype_name(t));
  GFX_TRY(ref_check_dtype("input 1", &in[1], t));
  GFX_TRY(ref_check_dtype("output 0", &out[0], t));
  ref_broadcast_strides bs;
  GFX_TRY(broadcast_two(in, &out[0], &bs));
  const int64_t count = gfx_shape_numel(&out[0].shape);
  for (int64_t e = 0; e < count; e++) {
    int64_t ia, ib;
    ref_broadcast_offsets(&bs, e, &ia, &ib);
    if (is_int_type(t))
      store_int(out[0].data, t, e, mod_int(load_int(in[0].data, t, ia), load_int(in[1].data, t, ib), c_fmod));
    else /* fmod is exact: no rounding at the store */
      ref_store(out[0].data, t, e, fmod(ref_load(in[0].data, t, ia), ref_load(in[1].data, t, ib)));
  }
  return NULL;
}

/* ---- CumSum ---- */

/* One line along the axis: element j of the line is base + j * inner. Floats sum in double and
 * round once per output; integers sum in int64 with wrap-around (an int32 sum keeps its low bits,
 * as int32 arithmetic would). */
static void cumsum_line(const gfx_tensor* x, gfx_tensor* y, int64_t base, const ir_axis_geom* g, int exclusive,
                        int reverse) {
  const int t = x->dtype;
  double fsum = 0.0;
  uint64_t isum = 0;
  for (int64_t step = 0; step < g->len; step++) {
    const int64_t j = reverse ? g->len - 1 - step : step;
    const int64_t at = base + j * g->inner;
    if (is_int_type(t)) {
      const uint64_t v = (uint64_t)load_int(x->data, t, at);
      if (!exclusive) isum += v;
      store_int(y->data, t, at, (int64_t)isum);
      if (exclusive) isum += v;
    } else {
      const double v = ref_load(x->data, t, at);
      if (!exclusive) fsum += v;
      ref_store(y->data, t, at, fsum);
      if (exclusive) fsum += v;
    }
  }
}

/* input 1 (the axis) was read at parse time */
gfx_status ref_run_cumsum(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 1, 2, 1));
  const int t = in[0].dtype;
  if (!is_int_type(t) && !is_float_type(t))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 is %s, which CumSum does not handle", gfx_dtype_name(t));
  GFX_TRY(ref_check_dtype("output 0", &out[0], t));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  ir_axis_geom g;
  GFX_TRY(ir_axis_geometry(&in[0].shape, node->params.index.axis, &g));
  const ir_index_params* p = &node->params.index;
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++)
      cumsum_line(&in[0], &out[0], o * g.len * g.inner + i, &g, p->exclusive, p->reverse);
  return NULL;
}

/* ---- Range ---- */

/* Element i is start + i * delta (the ONNX formula), in double for float32, rounded once; in int64
 * with wrap-around for integers. The inputs were read at parse time. */
gfx_status ref_run_range(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx, (void)in;
  GFX_TRY(ref_check_io(node, in, out, 0, 3, 0));
  const ir_index_params* p = &node->params.index;
  GFX_TRY(ref_check_dtype("output 0", &out[0], p->dtype));
  const gfx_shape want = {.rank = 1, .dims = {p->count}};
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  for (int64_t i = 0; i < p->count; i++) {
    if (is_int_type(p->dtype))
      store_int(out[0].data, p->dtype, i, (int64_t)((uint64_t)p->start_i + (uint64_t)i * (uint64_t)p->delta_i));
    else
      ref_store(out[0].data, p->dtype, i, p->start + (double)i * p->delta);
  }
  return NULL;
}

/* ---- Trilu ---- */

/* Elements are copied as bytes (any element type); those outside the triangle become 0. */
gfx_status ref_run_trilu(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 1, 2, 1));
  GFX_TRY(ref_check_dtype("output 0", &out[0], in[0].dtype));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  ir_trilu_geom g;
  GFX_TRY(ir_trilu_geometry(&in[0].shape, &g));
  const size_t es = gfx_dtype_size(in[0].dtype);
  const ir_index_params* p = &node->params.index;
  const int64_t count = gfx_shape_numel(&in[0].shape);
  for (int64_t e = 0; e < count; e++) {
    const int64_t col = e % g.cols, row = e / g.cols % g.rows;
    char* dst = (char*)out[0].data + (size_t)e * es;
    if (ir_trilu_keeps(p->upper, p->k, row, col))
      memmove(dst, (const char*)in[0].data + (size_t)e * es, es);
    else
      memset(dst, 0, es);
  }
  return NULL;
}

/* ---- GatherElements, GatherND, ScatterElements, ScatterND ---- */

/* Index entry i of an int32/int64 tensor, resolved against dim: negative ones count from the end;
 * one outside [-dim, dim) is an error naming it. */
static gfx_status index_at(const gfx_tensor* indices, int64_t i, int64_t dim, int64_t* out) {
  const int64_t v = load_int(indices->data, indices->dtype, i);
  if (v < -dim || v >= dim)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "index %lld (entry %lld) is outside [-%lld, %lld)", (long long)v,
                     (long long)i, (long long)dim, (long long)dim);
  *out = v < 0 ? v + dim : v;
  return NULL;
}

/* The data offset of GatherElements/ScatterElements index entry e. */
static gfx_status elements_offset(const ir_elements_geom* g, const gfx_tensor* indices, int64_t e, int64_t* out) {
  int64_t idx = 0, off = 0, rest = e;
  GFX_TRY(index_at(indices, e, g->axis_dim, &idx));
  for (int d = g->rank - 1; d >= 0; d--) {
    const int64_t c = rest % g->idx_dims[d];
    rest /= g->idx_dims[d];
    off += (d == g->axis ? idx : c) * g->data_strides[d];
  }
  *out = off;
  return NULL;
}

/* The data offset of the slice GatherND/ScatterND index tuple t selects. */
static gfx_status nd_offset(const ir_nd_geom* g, const gfx_tensor* indices, int64_t t, int64_t* out) {
  int64_t off = t / g->n * g->data_batch_stride;
  for (int k = 0; k < g->m; k++) {
    int64_t idx = 0;
    GFX_TRY(index_at(indices, t * g->m + k, g->dims[k], &idx));
    off += idx * g->strides[k];
  }
  *out = off;
  return NULL;
}

/* dst[at] = reduce(dst[at], src[from]) in the data's type (a plain copy for reduction none). */
static void scatter_one(gfx_tensor* dst, int64_t at, const gfx_tensor* src, int64_t from, int reduction) {
  const int t = dst->dtype;
  if (reduction == IR_SCATTER_NONE) {
    const size_t es = gfx_dtype_size(t);
    memcpy((char*)dst->data + (size_t)at * es, (const char*)src->data + (size_t)from * es, es);
  } else if (is_int_type(t)) {
    const int64_t cur = load_int(dst->data, t, at), v = load_int(src->data, t, from);
    store_int(dst->data, t, at, ir_scatter_reduce_i(reduction, cur, v));
  } else {
    const double cur = ref_load(dst->data, t, at), v = ref_load(src->data, t, from);
    ref_store(dst->data, t, at, ir_scatter_reduce_f(reduction, cur, v));
  }
}

/* Inputs: data and indices (and updates); the output has the data's type. */
static gfx_status check_index_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int n) {
  GFX_TRY(ref_check_io(node, in, out, n, n, n));
  if (!is_int_type(in[1].dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "input 1 (the indices) is %s; int32 or int64 is expected",
                     gfx_dtype_name(in[1].dtype));
  if (n == 3) GFX_TRY(ref_check_dtype("input 2", &in[2], in[0].dtype));
  GFX_TRY(ref_check_dtype("output 0", &out[0], in[0].dtype));
  const int reduction = node->params.index.reduction;
  if (reduction != IR_SCATTER_NONE && !is_int_type(in[0].dtype) && !is_float_type(in[0].dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "a reduction of %s data is not handled", gfx_dtype_name(in[0].dtype));
  return NULL;
}

static gfx_status run_gather_elements(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_index_io(node, in, out, 2));
  ir_elements_geom g;
  GFX_TRY(ir_elements_geometry(&in[0].shape, &in[1].shape, NULL, node->params.index.axis, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[1].shape));
  const size_t es = gfx_dtype_size(in[0].dtype);
  for (int64_t e = 0; e < g.count; e++) {
    int64_t off;
    GFX_TRY(elements_offset(&g, &in[1], e, &off));
    memcpy((char*)out[0].data + (size_t)e * es, (const char*)in[0].data + (size_t)off * es, es);
  }
  return NULL;
}

static gfx_status run_gather_nd(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_index_io(node, in, out, 2));
  ir_nd_geom g;
  gfx_shape want;
  GFX_TRY(ir_nd_geometry(&in[0].shape, &in[1].shape, NULL, node->params.index.batch_dims, &g, &want));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  const size_t es = gfx_dtype_size(in[0].dtype);
  for (int64_t t = 0; t < g.batch * g.n; t++) {
    int64_t off;
    GFX_TRY(nd_offset(&g, &in[1], t, &off));
    if (g.slice > 0)
      memcpy((char*)out[0].data + (size_t)(t * g.slice) * es, (const char*)in[0].data + (size_t)off * es,
             (size_t)g.slice * es);
  }
  return NULL;
}

/* Scatters apply their updates in order, so with reduction none the last of duplicate indices wins
 * (ONNX leaves that case undefined; ONNX Runtime's CPU EP does the same). */
static gfx_status run_scatter_elements(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_index_io(node, in, out, 3));
  ir_elements_geom g;
  GFX_TRY(ir_elements_geometry(&in[0].shape, &in[1].shape, &in[2].shape, node->params.index.axis, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  /* every index is checked before anything is written */
  for (int64_t e = 0; e < g.count; e++) {
    int64_t off;
    GFX_TRY(elements_offset(&g, &in[1], e, &off));
  }
  const int64_t n = gfx_shape_numel(&in[0].shape);
  if (n > 0 && out[0].data != in[0].data) memmove(out[0].data, in[0].data, (size_t)n * gfx_dtype_size(in[0].dtype));
  for (int64_t e = 0; e < g.count; e++) {
    int64_t off;
    GFX_TRY(elements_offset(&g, &in[1], e, &off));
    scatter_one(&out[0], off, &in[2], e, node->params.index.reduction);
  }
  return NULL;
}

static gfx_status run_scatter_nd(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_index_io(node, in, out, 3));
  ir_nd_geom g;
  GFX_TRY(ir_nd_geometry(&in[0].shape, &in[1].shape, &in[2].shape, 0, &g, NULL));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  for (int64_t t = 0; t < g.n; t++) {
    int64_t off;
    GFX_TRY(nd_offset(&g, &in[1], t, &off));
  }
  const int64_t n = gfx_shape_numel(&in[0].shape);
  if (n > 0 && out[0].data != in[0].data) memmove(out[0].data, in[0].data, (size_t)n * gfx_dtype_size(in[0].dtype));
  for (int64_t t = 0; t < g.n; t++) {
    int64_t off;
    GFX_TRY(nd_offset(&g, &in[1], t, &off));
    for (int64_t s = 0; s < g.slice; s++)
      scatter_one(&out[0], off + s, &in[2], t * g.slice + s, node->params.index.reduction);
  }
  return NULL;
}

gfx_status ref_run_index(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  switch (node->op) {
    case GFX_OP_GATHER_ELEMENTS: return run_gather_elements(node, in, out);
    case GFX_OP_GATHER_ND: return run_gather_nd(node, in, out);
    case GFX_OP_SCATTER_ELEMENTS: return run_scatter_elements(node, in, out);
    case GFX_OP_SCATTER_ND: return run_scatter_nd(node, in, out);
    default: return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is not an index op", ir_op_name(node->op));
  }
}

/* ---- TopK ---- */

/* One line of X along the axis: its elements at base + j * inner, j < len. */
typedef struct topk_line {
  const gfx_tensor* x;
  int64_t base, inner;
  int largest, is_float;
} topk_line;

/* Whether element j of the line comes before element i in TopK's order (ir/ops_index.h). */
static int topk_before(const topk_line* l, int64_t j, int64_t i) {
  const int64_t a = l->base + j * l->inner, b = l->base + i * l->inner;
  if (l->is_float)
    return ir_topk_before_float(ref_load(l->x->data, l->x->dtype, a), j, ref_load(l->x->data, l->x->dtype, b), i,
                                l->largest);
  return ir_topk_before_int(load_int(l->x->data, l->x->dtype, a), j, load_int(l->x->data, l->x->dtype, b), i,
                            l->largest);
}

/* Sorts order[0..n) (positions along the line) into TopK's order: a merge sort through tmp. The
 * order is total (ties broken by position), so any correct sort gives this one result. */
static void topk_sort(const topk_line* l, int64_t* order, int64_t* tmp, int64_t n) {
  if (n < 2) return;
  const int64_t h = n / 2;
  topk_sort(l, order, tmp, h);
  topk_sort(l, order + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = topk_before(l, order[j], order[i]) ? order[j++] : order[i++];
  while (i < h) tmp[o++] = order[i++];
  while (j < n) tmp[o++] = order[j++];
  memcpy(order, tmp, (size_t)n * sizeof *order);
}

/* Values (X's type, copied bit for bit) and int64 Indices of the k first elements of every line. */
gfx_status ref_run_topk(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (node->n_inputs != 2 || node->n_outputs != 2 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 2 and 2", node->n_inputs,
                     node->n_outputs);
  GFX_TRY(ref_check_tensor("input 0", &in[0]));
  GFX_TRY(ref_check_tensor("output 0", &out[0]));
  GFX_TRY(ref_check_tensor("output 1", &out[1]));
  if (!is_float_type(in[0].dtype) && !is_int_type(in[0].dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "X is %s; float or int32/int64 is expected", gfx_dtype_name(in[0].dtype));
  GFX_TRY(ref_check_dtype("output 0", &out[0], in[0].dtype));
  GFX_TRY(ref_check_dtype("output 1", &out[1], GFX_DTYPE_I64));
  const ir_index_params* p = &node->params.index;
  ir_axis_geom g;
  gfx_shape want[2];
  GFX_TRY(ir_infer_topk(node, &in[0].shape, want));
  GFX_TRY(ir_topk_geometry(&in[0].shape, p->axis, p->k, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want[0]));
  GFX_TRY(ref_check_shape_is("output 1", &out[1].shape, &want[1]));
  if (p->k == 0 || g.outer * g.inner == 0) return NULL;
  int64_t* order = malloc(2 * (size_t)g.len * sizeof *order);
  if (!order) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "TopK: no memory for a line of %lld", (long long)g.len);
  const size_t es = gfx_dtype_size(in[0].dtype);
  topk_line l = {.x = &in[0], .inner = g.inner, .largest = p->largest, .is_float = is_float_type(in[0].dtype)};
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t c = 0; c < g.inner; c++) {
      l.base = o * g.len * g.inner + c;
      for (int64_t j = 0; j < g.len; j++) order[j] = j;
      topk_sort(&l, order, order + g.len, g.len);
      for (int64_t r = 0; r < p->k; r++) {
        const int64_t dst = (o * p->k + r) * g.inner + c;
        const int64_t src = l.base + order[r] * g.inner;
        memcpy((char*)out[0].data + (size_t)dst * es, (const char*)in[0].data + (size_t)src * es, es);
        ((int64_t*)out[1].data)[dst] = order[r];
      }
    }
  free(order);
  return NULL;
}
