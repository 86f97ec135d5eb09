/* gfxep — reference kernels of convolution and matrix products. Every dot product accumulates in
 * double and rounds once at the store, whatever the element type (float32, float16, bfloat16: see
 * ref_dtype.h), so the oracle is at least as exact as what it is compared with. */
#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/ops_nn.h"

/* ---- checks ---- */

static int is_float_dtype(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}

static gfx_status check_float_tensor(const char* what, const gfx_tensor* t, int dtype) {
  if (t->dtype != dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %s (%d); expected %s like output 0", what,
                     gfx_dtype_name(t->dtype), t->dtype, gfx_dtype_name(dtype));
  return ref_check_memory(what, t);
}

/* min_inputs..max_inputs inputs (those past min_inputs may be absent: NULL data) and one output,
 * all of one float type, written to *dtype. */
static gfx_status check_float_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                                 int max_inputs, int* dtype) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected %d to %d", node->n_inputs, min_inputs, max_inputs);
  if (node->n_outputs != 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; expected 1", node->n_outputs);
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  *dtype = out[0].dtype;
  if (!is_float_dtype(*dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "output 0 has element type %s (%d); float32, float16 and bfloat16 are implemented",
                     gfx_dtype_name(*dtype), *dtype);
  GFX_TRY(check_float_tensor("output 0", &out[0], *dtype));
  for (int i = 0; i < node->n_inputs; i++) {
    if (i >= min_inputs && !in[i].data) continue;
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    GFX_TRY(check_float_tensor(what, &in[i], *dtype));
  }
  return NULL;
}

/* ---- the fused epilogue: bias, activation, residual ---- */

static double clamp01(double v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

/* The same formulas, in the same double arithmetic, as the element-wise ops of the same names
 * (ref_elementwise.c), so that a fused node computes what the unfused pair computes. */
static double activate(const ir_conv_params* p, double x) {
  switch (p->activation) {
    case IR_ACT_RELU: return x < 0.0 ? 0.0 : x;
    case IR_ACT_LEAKY_RELU: return x < 0.0 ? p->act_alpha * x : x;
    case IR_ACT_SIGMOID: return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case IR_ACT_TANH: return tanh(x);
    case IR_ACT_HARD_SIGMOID: return clamp01((double)p->act_alpha * x + p->act_beta);
    case IR_ACT_HARD_SWISH: return x * clamp01(x / 6.0 + 0.5);
    case IR_ACT_CLIP: /* -inf / +inf stand for absent bounds */
      if (x < p->act_alpha) x = p->act_alpha;
      if (x > p->act_beta) x = p->act_beta;
      return x;
    case IR_ACT_ELU: return x < 0.0 ? p->act_alpha * expm1(x) : x;
    default: return x;
  }
}

/* One output element from its convolution sum (bias included) and its residual r (0 when none). */
static double epilogue(const ir_conv_params* p, double sum, double r) {
  if (p->residual == IR_RES_ACT_THEN_ADD) return activate(p, sum) + r;
  return activate(p, sum + r); /* IR_RES_ADD_THEN_ACT, or no residual (r = 0) */
}

/* ---- Conv (1-D as 2-D with a unit height, NCHW) ---- */

/* What the kernel and ir_conv_geometry assume of the parameters (the parser guarantees them, but a
 * node built by hand may not): 2 spatial dims after ir_conv_as_2d, strides and dilations >= 1, and
 * a known activation. */
static gfx_status check_conv2d_params(const ir_conv_params* p) {
  if (p->spatial != 2)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%d spatial dims; only 1-D and 2-D convolution are implemented", p->spatial);
  for (int i = 0; i < 2; i++) {
    if (p->strides[i] < 1 || p->dilations[i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "stride %lld and dilation %lld along spatial dim %d; both must be >= 1",
                       (long long)p->strides[i], (long long)p->dilations[i], i);
  }
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "activation %d is not implemented", p->activation);
  if (p->residual != IR_RES_NONE && p->residual != IR_RES_ADD_THEN_ACT && p->residual != IR_RES_ACT_THEN_ADD)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "residual mode %d is not implemented", p->residual);
  return NULL;
}

/* The geometry the loops index with must match the tensors they index, or they would read or
 * write outside them. x, w and y are the 2-D views; `transposed` swaps the weight's channel dims. */
static gfx_status check_conv2d_shapes(const ir_conv_geom* g, const gfx_shape* x, const gfx_shape* w, int transposed,
                                      const gfx_tensor* in, int has_bias, const gfx_shape* y) {
  if (g->group < 1 || g->c_in % g->group != 0 || g->c_out % g->group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels",
                     (long long)g->group, (long long)g->c_in, (long long)g->c_out);
  const gfx_shape xe = ref_make_shape4(g->n, g->c_in, g->in[0], g->in[1]);
  const gfx_shape we = transposed ? ref_make_shape4(g->c_in, g->c_out / g->group, g->kernel[0], g->kernel[1])
                                  : ref_make_shape4(g->c_out, g->c_in / g->group, g->kernel[0], g->kernel[1]);
  const gfx_shape ye = ref_make_shape4(g->n, g->c_out, g->out[0], g->out[1]);
  GFX_TRY(ref_check_shape_is("input 0 (X)", x, &xe));
  GFX_TRY(ref_check_shape_is("input 1 (W)", w, &we));
  if (has_bias) {
    const gfx_shape b = {.rank = 1, .dims = {g->c_out}};
    GFX_TRY(ref_check_shape_is("input 2 (B)", &in[2].shape, &b));
  }
  return ref_check_shape_is("output 0", y, &ye);
}

/* The typed buffers of one convolution. */
typedef struct conv_buffers {
  int dtype;
  const void *x, *w, *bias; /* bias NULL when absent */
  void* y;
  const void* residual; /* shaped like y; NULL when absent */
  int channels_last;    /* 2-D Conv: y and the residual are N, H, W, C */
  int x_channels_last;  /* and x (not for a channels-last Conv of an NCHW input) */
  int w_channels_last;  /* w's elements in [M, kH, kW, C/group] order (params.conv.weights_channels_last) */
} conv_buffers;

/* Element (n, c, h, w) of a 4-D tensor of C channels and H x W pixels, NCHW or channels-last. */
static int64_t at_nchw(int channels_last, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t h, int64_t w) {
  return channels_last ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

/* One output element before bias: the sum over the group's input channels and the kernel window
 * of x * w, skipping taps that fall in the padding (which reads as zero). */
static double conv2d_window_sum(const ir_conv_geom* g, const conv_buffers* b, int64_t n, int64_t oc, int64_t oh,
                                int64_t ow) {
  const int64_t channels = g->c_in / g->group;
  const int64_t first_channel = oc / (g->c_out / g->group) * channels;
  const int64_t H = g->in[0], W = g->in[1];
  const int64_t KH = g->kernel[0], KW = g->kernel[1];
  double sum = 0.0;
  for (int64_t c = 0; c < channels; c++) {
    /* w[oc][c][kh][kw], or w[oc][kh][kw][c] when stored channels-last */
    const int64_t taps = b->w_channels_last ? oc * KH * KW * channels + c : (oc * channels + c) * KH * KW;
    const int64_t tap_step = b->w_channels_last ? channels : 1;
    for (int64_t kh = 0; kh < KH; kh++) {
      const int64_t ih = oh * g->strides[0] - g->pad_begin[0] + kh * g->dilations[0];
      if (ih < 0 || ih >= H) continue;
      for (int64_t kw = 0; kw < KW; kw++) {
        const int64_t iw = ow * g->strides[1] - g->pad_begin[1] + kw * g->dilations[1];
        if (iw < 0 || iw >= W) continue;
        const int64_t xi = at_nchw(b->x_channels_last, g->c_in, H, W, n, first_channel + c, ih, iw);
        sum += ref_load(b->x, b->dtype, xi) * ref_load(b->w, b->dtype, taps + (kh * KW + kw) * tap_step);
      }
    }
  }
  return sum;
}

static void conv2d_nchw(const ir_conv_geom* g, const conv_buffers* b, const ir_conv_params* p) {
  const int64_t OH = g->out[0], OW = g->out[1];
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oc = 0; oc < g->c_out; oc++) {
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          const int64_t i = at_nchw(b->channels_last, g->c_out, OH, OW, n, oc, oh, ow);
          double sum = conv2d_window_sum(g, b, n, oc, oh, ow);
          if (b->bias) sum += ref_load(b->bias, b->dtype, oc);
          const double r = b->residual ? ref_load(b->residual, b->dtype, i) : 0.0;
          ref_store(b->y, b->dtype, i, epilogue(p, sum, r)); /* the one rounding */
        }
    }
}

/* The 2-D views of a convolution's tensors (ir_conv_as_2d) and its bias. */
static gfx_status conv_views(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int max_inputs,
                             int* dtype, ir_conv_params* p2, gfx_shape* x2, gfx_shape* w2, gfx_shape* y2,
                             int* has_bias) {
  GFX_TRY(check_float_io(node, in, out, 2, max_inputs, dtype));
  *has_bias = node->n_inputs >= 3 && in[2].data != NULL;
  if (node->params.conv.spatial == 1 && out[0].shape.rank != 3)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output 0 has rank %d; a 1-D convolution's has rank 3",
                     out[0].shape.rank);
  ir_conv_as_2d(&node->params.conv, &in[0].shape, &in[1].shape, p2, x2, w2);
  gfx_shape unused;
  ir_conv_as_2d(&node->params.conv, &out[0].shape, &out[0].shape, p2, y2, &unused);
  return check_conv2d_params(p2);
}

/* The residual input: present exactly when the params say so, shaped like the output (no
 * broadcasting) and not the output's own memory. */
static gfx_status check_residual(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out,
                                 const void** residual) {
  const int k = IR_CONV_RESIDUAL_INPUT;
  const int present = node->n_inputs > k && in[k].data != NULL;
  *residual = NULL;
  if (node->params.conv.residual == IR_RES_NONE) {
    if (present) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d is given but no residual mode is set", k);
    return NULL;
  }
  if (node->n_inputs <= k) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "residual mode set but no input %d", k);
  GFX_TRY(ref_check_shape_is("input 3 (residual)", &in[k].shape, &out[0].shape));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;
  if (!present) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "residual input %d has no data", k);
  if (in[k].data == out[0].data)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "residual input %d is the output's own memory", k);
  *residual = in[k].data;
  return NULL;
}

/* ---- Conv over three spatial dims (NCDHW: video, volumes) ---- */

static double conv3d_window_sum(const ir_conv_geom* g, const conv_buffers* b, int64_t n, int64_t oc,
                                const int64_t o[3]) {
  const int64_t channels = g->c_in / g->group;
  const int64_t first_channel = oc / (g->c_out / g->group) * channels;
  const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
  const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];
  double sum = 0.0;
  for (int64_t c = 0; c < channels; c++) {
    const int64_t volume = (n * g->c_in + first_channel + c) * D * H * W;
    const int64_t taps = (oc * channels + c) * KD * KH * KW;
    for (int64_t kd = 0; kd < KD; kd++) {
      const int64_t id = o[0] * g->strides[0] - g->pad_begin[0] + kd * g->dilations[0];
      if (id < 0 || id >= D) continue;
      for (int64_t kh = 0; kh < KH; kh++) {
        const int64_t ih = o[1] * g->strides[1] - g->pad_begin[1] + kh * g->dilations[1];
        if (ih < 0 || ih >= H) continue;
        for (int64_t kw = 0; kw < KW; kw++) {
          const int64_t iw = o[2] * g->strides[2] - g->pad_begin[2] + kw * g->dilations[2];
          if (iw < 0 || iw >= W) continue;
          sum += ref_load(b->x, b->dtype, volume + (id * H + ih) * W + iw) *
                 ref_load(b->w, b->dtype, taps + (kd * KH + kh) * KW + kw);
        }
      }
    }
  }
  return sum;
}

static gfx_status run_conv3d(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  int dtype;
  GFX_TRY(check_float_io(node, in, out, 2, IR_CONV_RESIDUAL_INPUT + 1, &dtype));
  const ir_conv_params* p = &node->params.conv;
  for (int i = 0; i < 3; i++)
    if (p->strides[i] < 1 || p->dilations[i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "stride %lld and dilation %lld along spatial dim %d; both must be >= 1",
                       (long long)p->strides[i], (long long)p->dilations[i], i);
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "activation %d is not implemented", p->activation);
  ir_conv_geom g;
  GFX_TRY(ir_conv_geometry(p, &in[0].shape, &in[1].shape, &g));
  if (g.group < 1 || g.c_in % g.group != 0 || g.c_out % g.group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels",
                     (long long)g.group, (long long)g.c_in, (long long)g.c_out);
  const int has_bias = node->n_inputs >= 3 && in[2].data != NULL;
  const gfx_shape xe = {5, {g.n, g.c_in, g.in[0], g.in[1], g.in[2]}};
  const gfx_shape we = {5, {g.c_out, g.c_in / g.group, g.kernel[0], g.kernel[1], g.kernel[2]}};
  const gfx_shape ye = {5, {g.n, g.c_out, g.out[0], g.out[1], g.out[2]}};
  GFX_TRY(ref_check_shape_is("input 0 (X)", &in[0].shape, &xe));
  GFX_TRY(ref_check_shape_is("input 1 (W)", &in[1].shape, &we));
  if (has_bias) {
    const gfx_shape be = {.rank = 1, .dims = {g.c_out}};
    GFX_TRY(ref_check_shape_is("input 2 (B)", &in[2].shape, &be));
  }
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &ye));
  const void* residual = NULL;
  GFX_TRY(check_residual(node, in, out, &residual));
  const conv_buffers b = {dtype, in[0].data, in[1].data, has_bias ? in[2].data : NULL, out[0].data, residual, 0, 0, 0};
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t oc = 0; oc < g.c_out; oc++)
      for (int64_t k = 0; k < plane; k++) {
        const int64_t o[3] = {k / (g.out[1] * g.out[2]), k / g.out[2] % g.out[1], k % g.out[2]};
        const int64_t i = (n * g.c_out + oc) * plane + k;
        double sum = conv3d_window_sum(&g, &b, n, oc, o);
        if (b.bias) sum += ref_load(b.bias, dtype, oc);
        const double r = residual ? ref_load(residual, dtype, i) : 0.0;
        ref_store(b.y, dtype, i, epilogue(p, sum, r)); /* the one rounding */
      }
  return NULL;
}

static gfx_status run_conv(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  if (node->params.conv.spatial == 3) return run_conv3d(node, in, out);
  int dtype, has_bias;
  ir_conv_params p;
  gfx_shape x, w, y;
  GFX_TRY(conv_views(node, in, out, IR_CONV_RESIDUAL_INPUT + 1, &dtype, &p, &x, &w, &y, &has_bias));
  ir_conv_geom g;
  GFX_TRY(ir_conv_geometry(&p, &x, &w, &g));
  /* the checks compare N, C, H, W: a channels-last tensor's dims reordered so */
  const int x_channels_last = p.channels_last && !p.nchw_input;
  const gfx_shape x_nchw = x_channels_last ? ir_nhwc_as_nchw(&x) : x, y_nchw = p.channels_last ? ir_nhwc_as_nchw(&y) : y;
  GFX_TRY(check_conv2d_shapes(&g, &x_nchw, &w, 0, in, has_bias, &y_nchw));
  const void* residual = NULL;
  GFX_TRY(check_residual(node, in, out, &residual));
  if (gfx_shape_numel(&y) == 0) return NULL;
  const conv_buffers b = {dtype, in[0].data, in[1].data, has_bias ? in[2].data : NULL, out[0].data, residual,
                          p.channels_last, x_channels_last, p.channels_last && p.weights_channels_last};
  conv2d_nchw(&g, &b, &p);
  return NULL;
}

/* ---- convolution chain (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT) ---- */

/* Input i as ir_conv_chain_shapes takes it: rank -1 for an optional input that is absent. */
static gfx_shape given_shape(const gfx_tensor* in, int i, int optional) {
  if (optional && !in[i].data) return (gfx_shape){.rank = -1};
  return in[i].shape;
}

/* A Conv node of the chain's, reading inputs x, w and b of the chain (b may be -1). */
static ir_node chain_part(const ir_node* chain, int x, int w, int b) {
  ir_node part = {.op = GFX_OP_CONV, .name = chain->name, .n_inputs = 3, .n_outputs = 1, .math_mode = chain->math_mode};
  for (int i = 0; i < IR_MAX_IO; i++) part.inputs[i] = part.outputs[i] = -1;
  part.inputs[0] = x;
  part.inputs[1] = w;
  part.inputs[2] = b;
  return part;
}

/* A chain runs as the pair it fused: the first convolution into a map of the node's type, rounded
 * there as the first Conv's output was, then the second from that map; so it computes the pair's
 * result bit for bit. */
static gfx_status run_conv_chain(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int wa = IR_CONV_CHAIN_WEIGHT_INPUT, ba = IR_CONV_CHAIN_WEIGHT_INPUT + 1;
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  if (node->n_inputs < wa + 1 || node->n_inputs > ba + 1 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "a convolution chain with %d inputs and %d outputs; it has %d or %d and 1", node->n_inputs,
                     node->n_outputs, wa + 1, ba + 1);
  const int dtype = out[0].dtype;
  if (!is_float_dtype(dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "output 0 has element type %s (%d); float32, float16 and bfloat16 are implemented",
                     gfx_dtype_name(dtype), dtype);
  gfx_shape shapes[IR_CONV_CHAIN_WEIGHT_INPUT + 2], mid_shape, y_shape;
  for (int i = 0; i < node->n_inputs; i++)
    shapes[i] = given_shape(in, i, i == 2 || i == IR_CONV_RESIDUAL_INPUT || i == ba);
  GFX_TRY(ir_conv_chain_shapes(&node->params.conv, node->n_inputs, shapes, &mid_shape, &y_shape));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &y_shape));
  int known;
  const size_t bytes = gfx_shape_bytes(&mid_shape, dtype, &known);
  char text[96];
  if (!known)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the middle map %s of the convolution chain has no size in memory",
                     gfx_shape_str(&mid_shape, text, sizeof text));
  void* mid = malloc(bytes + 1); /* + 1: an empty map still gets an address */
  if (!mid)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "the middle map %s of the convolution chain (%zu bytes)",
                     gfx_shape_str(&mid_shape, text, sizeof text), bytes);
  gfx_tensor mid_map = {mid, dtype, mid_shape};
  const gfx_tensor absent = {.data = NULL, .dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}};
  const int has_ba = node->n_inputs > ba;
  ir_node first = chain_part(node, node->inputs[0], node->inputs[wa], has_ba ? node->inputs[ba] : -1);
  ir_node second = chain_part(node, -1, node->inputs[1], node->inputs[2]);
  ir_conv_chain_split(&node->params.conv, &first.params.conv, &second.params.conv);
  const gfx_tensor first_in[3] = {in[0], in[wa], has_ba ? in[ba] : absent};
  const gfx_tensor second_in[3] = {mid_map, in[1], in[2]};
  gfx_status s = run_conv(&first, first_in, &mid_map);
  if (s) {
    s = gfx_status_wrap(s, "the chain's first convolution (X, W_a = input %d, B_a = input %d)", wa, ba);
  } else if ((s = run_conv(&second, second_in, out))) {
    s = gfx_status_wrap(s, "the chain's second convolution (the middle map, W = input 1, B = input 2)");
  }
  free(mid);
  return s;
}

/* ---- ConvTranspose (1-D as 2-D, NCHW) ---- */

/* One output element before bias, gathered: every input pixel ih whose scatter lands on oh, i.e.
 * ih * stride + kh * dilation = oh + pad_begin for some tap kh, over the group's input channels.
 * W is [c_in, c_out / group, kH, kW]. */
static double conv_transpose_sum(const ir_conv_geom* g, const conv_buffers* b, int64_t n, int64_t oc, int64_t oh,
                                 int64_t ow) {
  const int64_t in_per_group = g->c_in / g->group, out_per_group = g->c_out / g->group;
  const int64_t group = oc / out_per_group, ocg = oc % out_per_group;
  const int64_t H = g->in[0], W = g->in[1];
  const int64_t KH = g->kernel[0], KW = g->kernel[1];
  double sum = 0.0;
  for (int64_t c = group * in_per_group; c < (group + 1) * in_per_group; c++) {
    const int64_t plane = (n * g->c_in + c) * H * W;
    const int64_t taps = (c * out_per_group + ocg) * KH * KW;
    for (int64_t kh = 0; kh < KH; kh++) {
      const int64_t th = oh + g->pad_begin[0] - kh * g->dilations[0];
      if (th < 0 || th % g->strides[0] != 0 || th / g->strides[0] >= H) continue;
      const int64_t ih = th / g->strides[0];
      for (int64_t kw = 0; kw < KW; kw++) {
        const int64_t tw = ow + g->pad_begin[1] - kw * g->dilations[1];
        if (tw < 0 || tw % g->strides[1] != 0 || tw / g->strides[1] >= W) continue;
        const int64_t iw = tw / g->strides[1];
        sum += ref_load(b->x, b->dtype, plane + ih * W + iw) * ref_load(b->w, b->dtype, taps + kh * KW + kw);
      }
    }
  }
  return sum;
}

/* ---- ConvTranspose over three spatial dims (NCDHW) ---- */

/* One output element before bias, gathered as conv_transpose_sum does, over depth too. W is
 * [c_in, c_out / group, kD, kH, kW]. */
static double conv_transpose3d_sum(const ir_conv_geom* g, const conv_buffers* b, int64_t n, int64_t oc,
                                   const int64_t o[3]) {
  const int64_t in_per_group = g->c_in / g->group, out_per_group = g->c_out / g->group;
  const int64_t group = oc / out_per_group, ocg = oc % out_per_group;
  const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
  const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];
  double sum = 0.0;
  for (int64_t c = group * in_per_group; c < (group + 1) * in_per_group; c++) {
    const int64_t volume = (n * g->c_in + c) * D * H * W;
    const int64_t taps = (c * out_per_group + ocg) * KD * KH * KW;
    for (int64_t kd = 0; kd < KD; kd++) {
      const int64_t td = o[0] + g->pad_begin[0] - kd * g->dilations[0];
      if (td < 0 || td % g->strides[0] != 0 || td / g->strides[0] >= D) continue;
      const int64_t id = td / g->strides[0];
      for (int64_t kh = 0; kh < KH; kh++) {
        const int64_t th = o[1] + g->pad_begin[1] - kh * g->dilations[1];
        if (th < 0 || th % g->strides[1] != 0 || th / g->strides[1] >= H) continue;
        const int64_t ih = th / g->strides[1];
        for (int64_t kw = 0; kw < KW; kw++) {
          const int64_t tw = o[2] + g->pad_begin[2] - kw * g->dilations[2];
          if (tw < 0 || tw % g->strides[2] != 0 || tw / g->strides[2] >= W) continue;
          const int64_t iw = tw / g->strides[2];
          sum += ref_load(b->x, b->dtype, volume + (id * H + ih) * W + iw) *
                 ref_load(b->w, b->dtype, taps + (kd * KH + kh) * KW + kw);
        }
      }
    }
  }
  return sum;
}

static gfx_status run_conv_transpose3d(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  int dtype;
  GFX_TRY(check_float_io(node, in, out, 2, 3, &dtype));
  const ir_conv_params* p = &node->params.conv;
  if (p->residual != IR_RES_NONE) return gfx_error(GFX_ERR_NOT_SUPPORTED, "a residual input is implemented for Conv only");
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "activation %d is not implemented", p->activation);
  ir_conv_geom g;
  GFX_TRY(ir_conv_transpose_geometry(p, &in[0].shape, &in[1].shape, &g));
  if (g.group < 1 || g.c_in % g.group != 0 || g.c_out % g.group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels",
                     (long long)g.group, (long long)g.c_in, (long long)g.c_out);
  const int has_bias = node->n_inputs >= 3 && in[2].data != NULL;
  const gfx_shape ye = {5, {g.n, g.c_out, g.out[0], g.out[1], g.out[2]}};
  if (has_bias) {
    const gfx_shape be = {.rank = 1, .dims = {g.c_out}};
    GFX_TRY(ref_check_shape_is("input 2 (B)", &in[2].shape, &be));
  }
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &ye));
  const conv_buffers b = {dtype, in[0].data, in[1].data, has_bias ? in[2].data : NULL, out[0].data, NULL, 0, 0, 0};
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t oc = 0; oc < g.c_out; oc++)
      for (int64_t k = 0; k < plane; k++) {
        const int64_t o[3] = {k / (g.out[1] * g.out[2]), k / g.out[2] % g.out[1], k % g.out[2]};
        double sum = conv_transpose3d_sum(&g, &b, n, oc, o);
        if (b.bias) sum += ref_load(b.bias, dtype, oc);
        ref_store(b.y, dtype, (n * g.c_out + oc) * plane + k, activate(p, sum));
      }
  return NULL;
}

static gfx_status run_conv_transpose(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  if (node->params.conv.spatial == 3) return run_conv_transpose3d(node, in, out);
  int dtype, has_bias;
  ir_conv_params p;
  gfx_shape x, w, y;
  GFX_TRY(conv_views(node, in, out, 3, &dtype, &p, &x, &w, &y, &has_bias));
  if (p.residual != IR_RES_NONE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "a residual input is implemented for Conv only");
  ir_conv_geom g;
  GFX_TRY(ir_conv_transpose_geometry(&p, &x, &w, &g));
  GFX_TRY(check_conv2d_shapes(&g, &x, &w, 1, in, has_bias, &y));
  if (gfx_shape_numel(&y) == 0) return NULL;
  const conv_buffers b = {dtype, in[0].data, in[1].data, has_bias ? in[2].data : NULL, out[0].data, NULL, 0, 0, 0};
  const int64_t OH = g.out[0], OW = g.out[1];
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t oc = 0; oc < g.c_out; oc++) {
      const int64_t plane = (n * g.c_out + oc) * OH * OW;
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double sum = conv_transpose_sum(&g, &b, n, oc, oh, ow);
          if (b.bias) sum += ref_load(b.bias, dtype, oc);
          ref_store(b.y, dtype, plane + oh * OW + ow, activate(&p, sum));
        }
    }
  return NULL;
}

/* ---- MatMul ---- */

/* The leading rank-2 dims of a matrix operand: its batch shape. */
static gfx_shape batch_part(const gfx_shape* s) {
  gfx_shape b = *s;
  b.rank = s->rank - 2;
  return b;
}

static gfx_status check_matmul(const gfx_tensor* in, int trans_b, const ir_matmul_geom* g, const gfx_shape* batch) {
  const gfx_shape* a = &in[0].shape;
  const gfx_shape* b = &in[1].shape;
  const int64_t b_rows = trans_b ? g->n : g->k, b_cols = trans_b ? g->k : g->n; /* b's stored matrix */
  if (a->dims[a->rank - 2] != g->m || a->dims[a->rank - 1] != g->k || b->dims[b->rank - 2] != b_rows ||
      b->dims[b->rank - 1] != b_cols) {
    char as[192], bs[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shapes %s x %s%s do not match the geometry m=%lld k=%lld n=%lld",
                     gfx_shape_str(a, as, sizeof as), gfx_shape_str(b, bs, sizeof bs), trans_b ? " (transposed)" : "",
                     (long long)g->m, (long long)g->k, (long long)g->n);
  }
  if (gfx_shape_numel(batch) != g->batch) {
    char bs[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "batch shape %s does not hold the geometry's %lld matrices",
                     gfx_shape_str(batch, bs, sizeof bs), (long long)g->batch);
  }
  return NULL;
}

/* One product's operands: b's matrix is stored [k, n], or [n, k] when read transposed (trans_b). */
typedef struct matmul_operands {
  int dtype;
  const void *a, *b;
  void* y;
  int64_t m, k, n;
  int64_t b_row, b_col; /* element strides of b's matrix as [k, n] */
  double alpha;
} matmul_operands;

/* y[m, n] = alpha * a[m, k] x b[k, n] (element offsets a0, b0, y0), each element one double dot
 * product scaled and rounded once. */
static void matmul_2d(const matmul_operands* o, int64_t a0, int64_t b0, int64_t y0) {
  for (int64_t i = 0; i < o->m; i++)
    for (int64_t j = 0; j < o->n; j++) {
      double sum = 0.0;
      for (int64_t p = 0; p < o->k; p++)
        sum += ref_load(o->a, o->dtype, a0 + i * o->k + p) * ref_load(o->b, o->dtype, b0 + p * o->b_row + j * o->b_col);
      ref_store(o->y, o->dtype, y0 + i * o->n + j, o->alpha * sum);
    }
}

static gfx_status run_matmul(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  int dtype;
  GFX_TRY(check_float_io(node, in, out, 2, 2, &dtype));
  for (int i = 0; i < 2; i++) {
    if (in[i].shape.rank < 2) {
      char buf[192];
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "input %d has shape %s; only operands of rank >= 2 are implemented",
                       i, gfx_shape_str(&in[i].shape, buf, sizeof buf));
    }
  }
  const ir_gemm_params* p = &node->params.gemm;
  ir_matmul_geom g;
  GFX_TRY(ir_matmul_geometry(&in[0].shape, &in[1].shape, p->trans_b, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &g.out));
  const gfx_shape a_batch = batch_part(&in[0].shape);
  const gfx_shape b_batch = batch_part(&in[1].shape);
  gfx_shape batch;
  GFX_TRY(ir_broadcast_shapes(&a_batch, &b_batch, &batch));
  GFX_TRY(check_matmul(in, p->trans_b, &g, &batch));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;

  /* Each batch element of the output pairs one matrix of a with one of b, found through the same
   * broadcast stride tables as the elementwise ops, counted in matrices rather than elements. */
  ref_broadcast_strides bs;
  ref_broadcast_strides_init(&bs, &batch, &a_batch, &b_batch);
  const matmul_operands o = {.dtype = dtype, .a = in[0].data, .b = in[1].data, .y = out[0].data,
                             .m = g.m, .k = g.k, .n = g.n,
                             .b_row = p->trans_b ? 1 : g.n, .b_col = p->trans_b ? g.k : 1,
                             .alpha = (double)p->alpha};
  for (int64_t i = 0; i < g.batch; i++) {
    int64_t ia, ib;
    ref_broadcast_offsets(&bs, i, &ia, &ib);
    matmul_2d(&o, ia * g.m * g.k, ib * g.k * g.n, i * g.m * g.n);
  }
  return NULL;
}

/* ---- Gemm ---- */

static gfx_status run_gemm(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  int dtype;
  GFX_TRY(check_float_io(node, in, out, 2, 3, &dtype));
  const ir_gemm_params* p = &node->params.gemm;
  const int has_c = node->n_inputs >= 3 && in[2].data != NULL;
  ir_gemm_geom g;
  GFX_TRY(ir_gemm_geometry(p, &in[0].shape, &in[1].shape, has_c ? &in[2].shape : NULL, &g));
  const gfx_shape y = {.rank = 2, .dims = {g.m, g.n}};
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &y));
  const void* a = in[0].data;
  const void* b = in[1].data;
  /* element strides of op(a) [m, k] and op(b) [k, n] */
  const int64_t a_row = p->trans_a ? 1 : g.k, a_col = p->trans_a ? g.m : 1;
  const int64_t b_row = p->trans_b ? 1 : g.n, b_col = p->trans_b ? g.k : 1;
  for (int64_t i = 0; i < g.m; i++)
    for (int64_t j = 0; j < g.n; j++) {
      double sum = 0.0;
      for (int64_t q = 0; q < g.k; q++)
        sum += ref_load(a, dtype, i * a_row + q * a_col) * ref_load(b, dtype, q * b_row + j * b_col);
      double v = (double)p->alpha * sum;
      /* beta = 0 ignores C entirely, as ONNX Runtime does (0 * inf would be NaN) */
      if (has_c && p->beta != 0.0f) v += (double)p->beta * ref_load(in[2].data, dtype, i * g.c_row_stride + j * g.c_col_stride);
      ref_store(out[0].data, dtype, i * g.n + j, v);
    }
  return NULL;
}

gfx_status ref_run_conv(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  return node->params.conv.chain ? run_conv_chain(node, in, out) : run_conv(node, in, out);
}

gfx_status ref_run_conv_transpose(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                  gfx_tensor* out) {
  (void)ctx;
  return run_conv_transpose(node, in, out);
}

gfx_status ref_run_matmul(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  return run_matmul(node, in, out);
}

gfx_status ref_run_gemm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  return run_gemm(node, in, out);
}

/* ---- Attention ---- */

/* Whether key j is hidden from query i of (b, h) by causality or a false bool mask; *bias gets the
 * float masks' values, added in order. */
static int attention_masked(const ir_attention_params* p, const ir_attention_geom* g, const gfx_tensor* in,
                            int64_t b, int64_t h, int64_t i, int64_t j, double* bias) {
  *bias = 0.0;
  if (p->is_causal && j > i) return 1;
  if (!g->has_mask) return 0;
  const int64_t at = b * g->mask_stride[0] + h * g->mask_stride[1] + i * g->mask_stride[2] + j * g->mask_stride[3];
  if (p->mask_bool) return ((const uint8_t*)in[3].data)[at] == 0;
  *bias = ref_load(in[3].data, in[3].dtype, at);
  if (g->has_mask2) {
    const int64_t at2 = b * g->mask2_stride[0] + h * g->mask2_stride[1] + i * g->mask2_stride[2] + j * g->mask2_stride[3];
    *bias += ref_load(in[4].data, in[4].dtype, at2);
  }
  return 0;
}

/* One query row: scale * q.k plus the masks' bias for every key, the row maximum subtracted before
 * the exponentials, then the weighted sum of V. */
static void attention_row(const ir_attention_params* p, const ir_attention_geom* g, const gfx_tensor* in,
                          gfx_tensor* y, int64_t b, int64_t h, int64_t i, double* w) {
  const int dtype = in[0].dtype;
  const int64_t kh = h / g->group;
  const int64_t q0 = g->q_offset + b * g->q_stride[0] + h * g->q_stride[1] + i * g->q_stride[2];
  double max = -INFINITY;
  int64_t open = 0;
  for (int64_t j = 0; j < g->kv_seq; j++) {
    double bias;
    if (attention_masked(p, g, in, b, h, i, j, &bias)) {
      w[j] = NAN; /* marks a masked key */
      continue;
    }
    const int64_t k0 = g->k_offset + b * g->k_stride[0] + kh * g->k_stride[1] + j * g->k_stride[2];
    double dot = 0.0;
    for (int64_t d = 0; d < g->head_size; d++)
      dot += ref_load(in[0].data, dtype, q0 + d * g->q_stride[3]) * ref_load(in[1].data, dtype, k0 + d * g->k_stride[3]);
    w[j] = dot * g->scale + bias;
    max = open++ == 0 || w[j] > max ? w[j] : max;
  }
  /* no key left (every one hidden, or -inf in a float mask): a row of zeros, as ONNX Runtime gives */
  const int none = open == 0 || max == -INFINITY;
  double sum = 0.0;
  for (int64_t j = 0; j < g->kv_seq; j++) {
    w[j] = none || isnan(w[j]) ? 0.0 : exp(w[j] - max);
    sum += w[j];
  }
  const int64_t y0 = g->y_offset + b * g->y_stride[0] + h * g->y_stride[1] + i * g->y_stride[2];
  const int64_t v0 = g->v_offset + b * g->v_stride[0] + kh * g->v_stride[1];
  for (int64_t d = 0; d < g->v_head_size; d++) {
    double acc = 0.0;
    for (int64_t j = 0; j < g->kv_seq; j++)
      acc += w[j] * ref_load(in[2].data, dtype, v0 + j * g->v_stride[2] + d * g->v_stride[3]);
    ref_store(y->data, dtype, y0 + d * g->y_stride[3], none ? 0.0 : acc / sum);
  }
}

gfx_status ref_run_attention(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  const ir_attention_params* p = &node->params.attention;
  const int n = 3 + (p->has_mask != 0) + (p->fused && p->has_mask2);
  if (node->n_inputs < n || node->n_outputs != 1 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected %d and 1", node->n_inputs,
                     node->n_outputs, n);
  gfx_shape shapes[5];
  for (int i = 0; i < n; i++) shapes[i] = in[i].shape;
  ir_attention_geom g;
  GFX_TRY(ir_attention_geometry(p, shapes, &g));
  const int dtype = in[0].dtype;
  int ok = (dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && in[1].dtype == dtype &&
           in[2].dtype == dtype && out[0].dtype == dtype;
  if (p->has_mask && in[3].dtype != (p->mask_bool ? GFX_DTYPE_BOOL : dtype)) ok = 0;
  if (g.has_mask2 && in[4].dtype != dtype) ok = 0;
  if (!ok) return gfx_error(GFX_ERR_NOT_SUPPORTED, "Attention of %s inputs is not handled", gfx_dtype_name(dtype));
  if (!gfx_shape_equal(&out[0].shape, &g.y)) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "Y has the wrong shape");
  if (gfx_shape_numel(&g.y) == 0) return NULL;
  double* w = malloc(sizeof *w * (size_t)(g.kv_seq > 0 ? g.kv_seq : 1));
  if (!w) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "Attention: %lld scores", (long long)g.kv_seq);
  for (int64_t b = 0; b < g.batch; b++)
    for (int64_t h = 0; h < g.q_heads; h++)
      for (int64_t i = 0; i < g.q_seq; i++) attention_row(p, &g, in, &out[0], b, h, i, w);
  free(w);
  return NULL;
}
