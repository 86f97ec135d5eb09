/* gfxep — reference kernels: one plain C loop nest per op in ir/ops.def, on host memory.
 *
 * These kernels are the test oracle for the other backends, so they are written to be checked by
 * eye, not to be fast: no blocking, no vectors, no threads. Dot products (Conv, MatMul) accumulate
 * in double and round to float once, so the oracle is at least as exact as what it is compared with.
 *
 * Before touching memory every kernel checks that the shapes it was handed agree with each other
 * and with the output shape, using the IR's geometry helpers (ir/shape.h) as the single definition
 * of what an op's shapes mean. A bug upstream then becomes an error, never an out-of-bounds access.
 */
#include "backend/ref/ref_kernels.h"

#include <stdio.h>

#include "ir/shape.h"

/* ---- checks every kernel makes ---- */

static gfx_status check_concrete_shape(const char* what, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has rank %d; ranks 0..%d are supported", what, s->rank,
                     GFX_MAX_RANK);
  if (gfx_shape_numel(s) < 0) {
    char buf[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s, which is not a concrete shape", what,
                     gfx_shape_str(s, buf, sizeof buf));
  }
  return NULL;
}

/* A tensor a kernel reads or writes: float32, a concrete shape, and memory behind it unless it is
 * empty (an empty tensor may have no memory at all). */
static gfx_status check_f32_tensor(const char* what, const gfx_tensor* t) {
  if (t->dtype != GFX_DTYPE_F32)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %s (%d); only float32 is implemented", what,
                     gfx_dtype_name(t->dtype), t->dtype);
  GFX_TRY(check_concrete_shape(what, &t->shape));
  if (!t->data && gfx_shape_numel(&t->shape) > 0) {
    char buf[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s but no data", what,
                     gfx_shape_str(&t->shape, buf, sizeof buf));
  }
  return NULL;
}

/* The node has min_inputs..max_inputs inputs and one output, all float32 tensors. Inputs past
 * min_inputs are optional: one whose data is NULL is absent and is not checked. */
static gfx_status check_node_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                                int max_inputs) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected %d to %d", node->n_inputs, min_inputs,
                     max_inputs);
  if (node->n_outputs != 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; expected 1", node->n_outputs);
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  for (int i = 0; i < node->n_inputs; i++) {
    if (i >= min_inputs && !in[i].data) continue;
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    GFX_TRY(check_f32_tensor(what, &in[i]));
  }
  return check_f32_tensor("output 0", &out[0]);
}

static gfx_status check_shape_is(const char* what, const gfx_shape* actual, const gfx_shape* expected) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[192], e[192];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s; expected %s", what,
                   gfx_shape_str(actual, a, sizeof a), gfx_shape_str(expected, e, sizeof e));
}

static gfx_shape make_shape4(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  gfx_shape s = {.rank = 4, .dims = {d0, d1, d2, d3}};
  return s;
}

/* ---- numpy broadcasting through stride tables ---- */

/* Element strides of two operands along each dim of their broadcast shape. A stride is 0 where the
 * operand's dim is 1 or missing (numpy aligns shapes on their last dims), which makes the operand
 * repeat along that dim. */
typedef struct broadcast_strides {
  int rank;
  int64_t dims[GFX_MAX_RANK]; /* the broadcast shape */
  int64_t a[GFX_MAX_RANK];
  int64_t b[GFX_MAX_RANK];
} broadcast_strides;

/* Strides of `operand` (contiguous, row-major) along the dims of `full`, which it broadcasts to. */
static void operand_strides(const gfx_shape* operand, const gfx_shape* full, int64_t* strides) {
  int64_t stride = 1;
  for (int d = full->rank - 1; d >= 0; d--) {
    int operand_d = d - (full->rank - operand->rank);
    if (operand_d < 0) {
      strides[d] = 0;
      continue;
    }
    int64_t extent = operand->dims[operand_d];
    strides[d] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
}

static void broadcast_strides_init(broadcast_strides* bs, const gfx_shape* full, const gfx_shape* a,
                                   const gfx_shape* b) {
  bs->rank = full->rank;
  for (int d = 0; d < full->rank; d++) bs->dims[d] = full->dims[d];
  operand_strides(a, full, bs->a);
  operand_strides(b, full, bs->b);
}

/* Element offsets in a and b of the broadcast shape's element number `linear`, found by splitting
 * `linear` into coordinates, last dim fastest. Only called when no dim is 0. */
static void broadcast_offsets(const broadcast_strides* bs, int64_t linear, int64_t* a_offset, int64_t* b_offset) {
  int64_t a_off = 0, b_off = 0;
  for (int d = bs->rank - 1; d >= 0; d--) {
    int64_t coord = linear % bs->dims[d];
    linear /= bs->dims[d];
    a_off += coord * bs->a[d];
    b_off += coord * bs->b[d];
  }
  *a_offset = a_off;
  *b_offset = b_off;
}

/* ---- Add, Sub, Mul, Div ---- */

typedef float (*binary_fn)(float a, float b);

/* One float operation each: IEEE single arithmetic is already correctly rounded. */
static float add_f32(float a, float b) { return a + b; }
static float sub_f32(float a, float b) { return a - b; }
static float mul_f32(float a, float b) { return a * b; }
static float div_f32(float a, float b) { return a / b; }

static gfx_status run_binary(const ir_node* node, const gfx_tensor* in, gfx_tensor* out, binary_fn fn) {
  GFX_TRY(check_node_io(node, in, out, 2, 2));
  gfx_shape full;
  GFX_TRY(ir_broadcast_shapes(&in[0].shape, &in[1].shape, &full));
  GFX_TRY(check_shape_is("output 0", &out[0].shape, &full));

  const int64_t count = gfx_shape_numel(&full);
  if (count == 0) return NULL;
  broadcast_strides bs;
  broadcast_strides_init(&bs, &full, &in[0].shape, &in[1].shape);
  const float* a = in[0].data;
  const float* b = in[1].data;
  float* y = out[0].data;
  for (int64_t i = 0; i < count; i++) {
    int64_t ia, ib;
    broadcast_offsets(&bs, i, &ia, &ib);
    y[i] = fn(a[ia], b[ib]);
  }
  return NULL;
}

/* ---- Relu ---- */

static gfx_status run_relu(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_node_io(node, in, out, 1, 1));
  GFX_TRY(check_shape_is("output 0", &out[0].shape, &in[0].shape));
  const int64_t count = gfx_shape_numel(&in[0].shape);
  const float* x = in[0].data;
  float* y = out[0].data;
  /* Written as "x < 0" so that NaN, which compares false, passes through unchanged. */
  for (int64_t i = 0; i < count; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
  return NULL;
}

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
  const gfx_shape x = make_shape4(g->n, g->c_in, g->in[0], g->in[1]);
  const gfx_shape w = make_shape4(g->c_out, g->c_in / g->group, g->kernel[0], g->kernel[1]);
  const gfx_shape y = make_shape4(g->n, g->c_out, g->out[0], g->out[1]);
  GFX_TRY(check_shape_is("input 0 (X)", &in[0].shape, &x));
  GFX_TRY(check_shape_is("input 1 (W)", &in[1].shape, &w));
  if (has_bias) {
    const gfx_shape b = {.rank = 1, .dims = {g->c_out}};
    GFX_TRY(check_shape_is("input 2 (B)", &in[2].shape, &b));
  }
  return check_shape_is("output 0", &out[0].shape, &y);
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
  GFX_TRY(check_node_io(node, in, out, 2, 3));
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
  GFX_TRY(check_node_io(node, in, out, 2, 2));
  for (int i = 0; i < 2; i++) {
    if (in[i].shape.rank < 2) {
      char buf[192];
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "input %d has shape %s; only operands of rank >= 2 are implemented",
                       i, gfx_shape_str(&in[i].shape, buf, sizeof buf));
    }
  }
  ir_matmul_geom g;
  GFX_TRY(ir_matmul_geometry(&in[0].shape, &in[1].shape, &g));
  GFX_TRY(check_shape_is("output 0", &out[0].shape, &g.out));
  const gfx_shape a_batch = batch_part(&in[0].shape);
  const gfx_shape b_batch = batch_part(&in[1].shape);
  gfx_shape batch;
  GFX_TRY(ir_broadcast_shapes(&a_batch, &b_batch, &batch));
  GFX_TRY(check_matmul(in, &g, &batch));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;

  /* Each batch element of the output pairs one matrix of a with one of b, found through the same
   * broadcast stride tables as the elementwise ops, counted in matrices rather than elements. */
  broadcast_strides bs;
  broadcast_strides_init(&bs, &batch, &a_batch, &b_batch);
  const float* a = in[0].data;
  const float* b = in[1].data;
  float* y = out[0].data;
  for (int64_t i = 0; i < g.batch; i++) {
    int64_t ia, ib;
    broadcast_offsets(&bs, i, &ia, &ib);
    matmul_2d(a + ia * g.m * g.k, b + ib * g.k * g.n, y + i * g.m * g.n, g.m, g.k, g.n);
  }
  return NULL;
}

/* ---- the gfx_backend entries ---- */

gfx_status ref_node_prepare(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state, size_t* scratch_bytes) {
  (void)node;
  (void)in;
  (void)out;
  if (!state || !scratch_bytes)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: node_prepare given no outputs");
  *state = NULL;
  *scratch_bytes = 0;
  return ref_check_device(device);
}

void ref_node_release(int device, void* state) {
  (void)device;
  (void)state; /* node_prepare never makes any */
}

gfx_status ref_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        void* state) {
  (void)state;
  if (!ctx || !node) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: node_run given no %s",
                                      ctx ? "node" : "context");
  GFX_TRY(ref_check_device(ctx->device));
  gfx_status s;
  switch (node->op) {
    case GFX_OP_ADD: s = run_binary(node, in, out, add_f32); break;
    case GFX_OP_SUB: s = run_binary(node, in, out, sub_f32); break;
    case GFX_OP_MUL: s = run_binary(node, in, out, mul_f32); break;
    case GFX_OP_DIV: s = run_binary(node, in, out, div_f32); break;
    case GFX_OP_RELU: s = run_relu(node, in, out); break;
    case GFX_OP_CONV: s = run_conv(node, in, out); break;
    case GFX_OP_MATMUL: s = run_matmul(node, in, out); break;
    default:
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "reference backend: op %s not implemented", ir_op_name(node->op));
  }
  if (s)
    return gfx_status_wrap(s, "reference backend: %s node \"%s\"", ir_op_name(node->op),
                           node->name ? node->name : "");
  return NULL;
}
