/* gfxep — reference kernels of the selections whose count the data decides: NonZero and
 * NonMaxSuppression, as bounded nodes (ir/ops_select.h): output 0 at its upper bound, written up to
 * the count, and output 1 the count.
 *
 * NonMaxSuppression follows ONNX Runtime's CPU kernel step for step: per batch and class the
 * candidates (above the score threshold, when there is one) in descending score with ties to the
 * lower index, each kept unless a box kept before it overlaps it by more than the IoU threshold, until
 * max_output_boxes_per_class are kept; the overlap test is ORT's float32 arithmetic (ir_nms_suppresses).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"
#include "ir/ops_select.h"

static gfx_status check_tensor(const char* what, const gfx_tensor* t, int dtype) {
  if (dtype) GFX_TRY(ref_check_dtype(what, t, dtype));
  return ref_check_tensor(what, t);
}

/* The bound and the count as the IR shapes them (out[0] must be `bound`, out[1] [1], both int64). */
static gfx_status check_outputs(const ir_node* node, gfx_tensor* out, const gfx_shape* bound) {
  if (node->n_outputs != 2 || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; the bound and the count are expected", node->n_outputs);
  GFX_TRY(check_tensor("output 0", &out[0], GFX_DTYPE_I64));
  GFX_TRY(check_tensor("output 1", &out[1], GFX_DTYPE_I64));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, bound));
  const gfx_shape one = {.rank = 1, .dims = {1}};
  GFX_TRY(ref_check_shape_is("output 1", &out[1].shape, &one));
  if (!out[1].data) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output 1 (the count) has no data");
  return NULL;
}

/* The element's bits (little-endian hosts: the low bytes of a uint64). */
static uint64_t bits_at(const void* data, size_t size, int64_t i) {
  uint64_t b = 0;
  memcpy(&b, (const char*)data + (size_t)i * size, size);
  return b;
}

gfx_status ref_run_nonzero(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (node->n_inputs != 1 || !in) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected 1", node->n_inputs);
  GFX_TRY(check_tensor("input 0", &in[0], 0));
  int64_t rows, numel;
  GFX_TRY(ir_nonzero_geometry(&in[0].shape, &rows, &numel));
  const gfx_shape bound = {.rank = 2, .dims = {rows, numel}};
  GFX_TRY(check_outputs(node, out, &bound));
  const size_t size = gfx_dtype_size(in[0].dtype);
  int64_t* y = out[0].data;
  int64_t count = 0;
  for (int64_t e = 0; e < numel; e++) {
    if (!ir_nonzero_bits(in[0].dtype, bits_at(in[0].data, size, e))) continue;
    /* coordinates of e, last dim fastest; a scalar's is 0 */
    int64_t rest = e;
    for (int d = in[0].shape.rank - 1; d >= 0; d--) {
      y[d * numel + count] = rest % in[0].shape.dims[d];
      rest /= in[0].shape.dims[d];
    }
    if (in[0].shape.rank == 0) y[count] = 0;
    count++;
  }
  *(int64_t*)out[1].data = count;
  return NULL;
}

/* ---- NonMaxSuppression ---- */

typedef struct nms_candidate {
  float score;
  int64_t index;
} nms_candidate;

/* Merge sort of c[0..n) into ORT's order (ir_nms_before) through tmp. */
static void nms_sort(nms_candidate* c, nms_candidate* tmp, int64_t n) {
  if (n < 2) return;
  const int64_t h = n / 2;
  nms_sort(c, tmp, h);
  nms_sort(c + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n)
    tmp[o++] = ir_nms_before(c[j].score, c[j].index, c[i].score, c[i].index) ? c[j++] : c[i++];
  while (i < h) tmp[o++] = c[i++];
  while (j < n) tmp[o++] = c[j++];
  memcpy(c, tmp, sizeof *c * (size_t)n);
}

gfx_status ref_run_nms(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  const ir_select_params* p = &node->params.select;
  if (node->n_inputs < 2 || node->n_inputs > 5 || !in)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected 2 to 5", node->n_inputs);
  GFX_TRY(check_tensor("boxes", &in[0], 0));
  GFX_TRY(check_tensor("scores", &in[1], in[0].dtype));
  if (in[0].dtype != GFX_DTYPE_F32 && in[0].dtype != GFX_DTYPE_F16 && in[0].dtype != GFX_DTYPE_BF16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "boxes are %s; a float type is expected", gfx_dtype_name(in[0].dtype));
  ir_nms_geom g;
  GFX_TRY(ir_nms_geometry(p, &in[0].shape, &in[1].shape, &g));
  const gfx_shape bound = {.rank = 2, .dims = {g.bound, 3}};
  GFX_TRY(check_outputs(node, out, &bound));
  int64_t* y = out[0].data;
  int64_t count = 0;
  if (g.per_class > 0 && g.boxes > 0) {
    const size_t n = (size_t)g.boxes;
    nms_candidate* cand = malloc(sizeof *cand * 2 * n);
    float* box = malloc(sizeof(float) * 5 * n); /* per box: ORT's [y_min, x_min, y_max, x_max] and area */
    int64_t* kept = malloc(sizeof(int64_t) * (size_t)g.per_class);
    if (!cand || !box || !kept) {
      free(cand), free(box), free(kept);
      return gfx_error(GFX_ERR_OUT_OF_MEMORY, "NonMaxSuppression: no memory for %lld boxes", (long long)g.boxes);
    }
    for (int64_t b = 0; b < g.batches; b++) {
      for (int64_t i = 0; i < g.boxes; i++) {
        float raw[4];
        for (int k = 0; k < 4; k++) raw[k] = (float)ref_load(in[0].data, in[0].dtype, (b * g.boxes + i) * 4 + k);
        ir_nms_box(raw, p->center_point_box, &box[5 * i], &box[5 * i + 4]);
      }
      for (int64_t c = 0; c < g.classes; c++) {
        const int64_t base = (b * g.classes + c) * g.boxes;
        int64_t m = 0;
        for (int64_t i = 0; i < g.boxes; i++) {
          const float s = (float)ref_load(in[1].data, in[1].dtype, base + i);
          if (p->has_score_threshold && !(s > p->score_threshold)) continue;
          cand[m++] = (nms_candidate){s, i};
        }
        nms_sort(cand, cand + n, m);
        int64_t n_kept = 0;
        for (int64_t r = 0; r < m && n_kept < g.per_class; r++) {
          const float* a = &box[5 * cand[r].index];
          int keep = 1;
          for (int64_t q = 0; q < n_kept && keep; q++) {
            const float* k = &box[5 * kept[q]];
            keep = !ir_nms_suppresses(a, a[4], k, k[4], p->iou_threshold);
          }
          if (!keep) continue;
          kept[n_kept++] = cand[r].index;
          y[3 * count + 0] = b;
          y[3 * count + 1] = c;
          y[3 * count + 2] = cand[r].index;
          count++;
        }
      }
    }
    free(cand), free(box), free(kept);
  }
  *(int64_t*)out[1].data = count;
  return NULL;
}
