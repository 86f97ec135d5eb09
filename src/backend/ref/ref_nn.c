/* gfxep — reference kernels of convolution and matrix products. Dot products accumulate in double
 * and round once, so the oracle is at least as exact as what it is compared with. */
#include "backend/ref/ref_kernels.h"

#include "ir/shape.h"

/* ---- Conv (2-D, NCHW) ---- */

/* What the kernel and ir_conv_geometry assume of the parameters (the parser guarantees them, but a
 * node built by hand may not): 2 spatial dims, and strides and dilations of at least 1, which the
 * output size is divided by. */
static gfx_status check_conv2d_params(const ir_conv_params* p) {
  if (p->spatial != 2)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%d spatial dims; only 2-D convolution is implemented", p->spatial);
  for (int i = 0; i < 2; i++) {
    if (p->strides[i] < 1 || p->dilations[i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "stride %lld and dilation %lld along spatial dim %d; both must be >= 1",
                       (long long)p->strides[i], (long long)p->dilations[i], i);
  }
  return NULL;
}

/* The geometry the loops index with must match the tensors they index, or they would read or
 * write outside them. */
static gfx_status check_conv2d_shapes(const ir_conv_geom* g, const gfx_tensor* in, int has_bias,
                                      const gfx_tensor* out) {
  if (g->group < 1 || g->c_in % g->group != 0 || g->c_out % g->group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels",
                     (long long)g->group, (long long)g->c_in, (long long)g->c_out);
  const gfx_shape x = ref_make_shape4(g->n, g->c_in, g->in[0], g->in[1]);
  const gfx_shape w = ref_make_shape4(g->c_out, g->c_in / g->group, g->kernel[0], g->kernel[1]);
  const gfx_shape y = ref_make_shape4(g->n, g->c_out, g->out[0], g->out[1]);
  GFX_TRY(ref_check_shape_is("input 0 (X)", &in[0].shape, &x));
  GFX_TRY(ref_check_shape_is("input 1 (W)", &in[1].shape, &w));
  if (has_bias) {
    const gfx_shape b = {.rank = 1, .dims = {g->c_out}};
    GFX_TRY(ref_check_shape_is("input 2 (B)", &in[2].shape, &b));
  }
  return ref_check_shape_is("output 0", &out[0].shape, &y);
}

/* One output element before bias: the sum over the group's input channels and the kernel window
 * of x * w, skipping taps that fall in the padding (which reads as zero).
 *   image:  x for one batch item, [c_in, H, W]
 *   filter: w for one output channel, [c_in / group, kH, kW]
 *   first_channel: the group's first input channel */
static double conv2d_window_sum(const ir_conv_geom* g, const float* image, const float* filter,
                                int64_t first_channel, int64_t oh, int64_t ow) {
  const int64_t channels = g->c_in / g->group;
  const int64_t H = g->in[0], W = g->in[1];
  const int64_t KH = g->kernel[0], KW = g->kernel[1];
  double sum = 0.0;
  for (int64_t c = 0; c < channels; c++) {
    const float* plane = image + (first_channel + c) * H * W;
    const float* taps = filter + c * KH * KW;
    for (int64_t kh = 0; kh < KH; kh++) {
      const int64_t ih = oh * g->strides[0] - g->pad_begin[0] + kh * g->dilations[0];
      if (ih < 0 || ih >= H) continue;
      for (int64_t kw = 0; kw < KW; kw++) {
        const int64_t iw = ow * g->strides[1] - g->pad_begin[1] + kw * g->dilations[1];
        if (iw < 0 || iw >= W) continue;
        sum += (double)plane[ih * W + iw] * (double)taps[kh * KW + kw];
      }
    }
  }
  return sum;
}

static void conv2d_nchw(const ir_conv_geom* g, const float* x, const float* w, const float* bias, float* y) {
  const int64_t in_channels_per_group = g->c_in / g->group;
  const int64_t out_channels_per_group = g->c_out / g->group;
  const int64_t OH = g->out[0], OW = g->out[1];
  for (int64_t n = 0; n < g->n; n++) {
    const float* image = x + n * g->c_in * g->in[0] * g->in[1];
    for (int64_t oc = 0; oc < g->c_out; oc++) {
      const int64_t first_channel = oc / out_channels_per_group * in_channels_per_group;
      const float* filter = w + oc * in_channels_per_group * g->kernel[0] * g->kernel[1];
      float* plane = y + (n * g->c_out + oc) * OH * OW;
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double sum = conv2d_window_sum(g, image, filter, first_channel, oh, ow);
          if (bias) sum += (double)bias[oc];
          plane[oh * OW + ow] = (float)sum; /* the one rounding */
        }
    }
  }
}

static gfx_status run_conv(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(ref_check_node_io(node, in, out, 2, 3));
  const int has_bias = node->n_inputs >= 3 && in[2].data != NULL;
  GFX_TRY(check_conv2d_params(&node->params.conv));
  ir_conv_geom g;
  GFX_TRY(ir_conv_geometry(&node->params.conv, &in[0].shape, &in[1].shape, &g));
  GFX_TRY(check_conv2d_shapes(&g, in, has_bias, out));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;
  conv2d_nchw(&g, in[0].data, in[1].data, has_bias ? in[2].data : NULL, out[0].data);
  return NULL;
}

/* ---- MatMul ---- */

/* The leading rank-2 dims of a matrix operand: its batch shape. */
static gfx_shape batch_part(const gfx_shape* s) {
  gfx_shape b = *s;
  b.rank = s->rank - 2;
  return b;
}

static gfx_status check_matmul(const gfx_tensor* in, const ir_matmul_geom* g, const gfx_shape* batch) {
  const gfx_shape* a = &in[0].shape;
  const gfx_shape* b = &in[1].shape;
  if (a->dims[a->rank - 2] != g->m || a->dims[a->rank - 1] != g->k || b->dims[b->rank - 2] != g->k ||
      b->dims[b->rank - 1] != g->n) {
    char as[192], bs[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shapes %s x %s do not match the geometry m=%lld k=%lld n=%lld",
                     gfx_shape_str(a, as, sizeof as), gfx_shape_str(b, bs, sizeof bs), (long long)g->m,
                     (long long)g->k, (long long)g->n);
  }
  if (gfx_shape_numel(batch) != g->batch) {
    char bs[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "batch shape %s does not hold the geometry's %lld matrices",
                     gfx_shape_str(batch, bs, sizeof bs), (long long)g->batch);
  }
  return NULL;
}

/* y[m, n] = a[m, k] x b[k, n], each element one double dot product rounded once. */
static void matmul_2d(const float* a, const float* b, float* y, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; p++) sum += (double)a[i * k + p] * (double)b[p * n + j];
      y[i * n + j] = (float)sum;
    }
}

static gfx_status run_matmul(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(ref_check_node_io(node, in, out, 2, 2));
  for (int i = 0; i < 2; i++) {
    if (in[i].shape.rank < 2) {
      char buf[192];
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "input %d has shape %s; only operands of rank >= 2 are implemented",
                       i, gfx_shape_str(&in[i].shape, buf, sizeof buf));
    }
  }
  ir_matmul_geom g;
  GFX_TRY(ir_matmul_geometry(&in[0].shape, &in[1].shape, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &g.out));
  const gfx_shape a_batch = batch_part(&in[0].shape);
  const gfx_shape b_batch = batch_part(&in[1].shape);
  gfx_shape batch;
  GFX_TRY(ir_broadcast_shapes(&a_batch, &b_batch, &batch));
  GFX_TRY(check_matmul(in, &g, &batch));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;

  /* Each batch element of the output pairs one matrix of a with one of b, found through the same
   * broadcast stride tables as the elementwise ops, counted in matrices rather than elements. */
  ref_broadcast_strides bs;
  ref_broadcast_strides_init(&bs, &batch, &a_batch, &b_batch);
  const float* a = in[0].data;
  const float* b = in[1].data;
  float* y = out[0].data;
  for (int64_t i = 0; i < g.batch; i++) {
    int64_t ia, ib;
    ref_broadcast_offsets(&bs, i, &ia, &ib);
    matmul_2d(a + ia * g.m * g.k, b + ib * g.k * g.n, y + i * g.m * g.n, g.m, g.k, g.n);
  }
  return NULL;
}


gfx_status ref_run_conv(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  return run_conv(node, in, out);
}

gfx_status ref_run_matmul(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  return run_matmul(node, in, out);
}
