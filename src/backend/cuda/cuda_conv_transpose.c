/* gfxep CUDA backend — 1-D and 2-D ConvTranspose (float32, float16, bfloat16; NC[H]W) with cuDNN's
 * backward-data convolution.
 *
 * ConvTranspose is the gradient of a convolution with respect to its input: its X plays dy, W
 * ([c_in, c_out / group, kH, kW], the forward filter's layout) the filter, and Y the dx of a
 * forward convolution with the same strides, dilations and group. cuDNN crops one symmetric pad
 * per spatial dim; asymmetric pads (explicit, auto_pad SAME_* or from output_shape) are handled by
 * computing with the smaller pad into scratch and cropping the rest with a copy kernel.
 * output_padding (always below the stride, the parser makes sure) is the remainder cuDNN infers
 * from dx's size.
 *
 * node_prepare builds the descriptors and picks the algorithm once per input-shape signature;
 * node_run only queues work (graph-capture safe). Scratch holds cuDNN's workspace, then the
 * uncropped result when there is one. Bias and activation are one epilogue kernel.
 */
#include <limits.h>
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_nn_types.h"
#include "backend/cuda/cuda_pad.h"
#include "ir/ops_nn.h"

#define CONV_TRANSPOSE_WORKSPACE_LIMIT ((size_t)256 << 20)

typedef struct conv_transpose_state {
  cuda_node_state base;
  int device;
  gfx_shape x_shape, w_shape; /* the signature this state was prepared for */
  int nothing_to_do;
  int has_bias;
  int dtype;
  cuda_conv_epilogue epilogue; /* the fused activation (no residual for ConvTranspose) */
  int64_t out_elements, out_batch, out_channels, out_plane; /* for the epilogue */
  /* cropping the symmetric result (planes = N * c_out) */
  int crops;
  int64_t planes, full_h, full_w, crop_top, crop_left, out_h, out_w;
  size_t workspace_bytes; /* cuDNN's, at the start of scratch */
  size_t full_offset;     /* where the uncropped result starts in scratch */
  size_t scratch_bytes;
  cudnnTensorDescriptor_t x_desc, y_desc; /* y_desc describes the uncropped result when crops */
  cudnnFilterDescriptor_t w_desc;
  cudnnConvolutionDescriptor_t conv_desc;
  cudnnConvolutionBwdDataAlgo_t algo;
} conv_transpose_state;

/* cuDNN's ints. */
typedef struct ct_dims {
  int n, c_in, h, w;          /* X, cuDNN's dy */
  int c_out, out_per_group, kh, kw;
  int full_h, full_w;         /* cuDNN's dx: the output before the asymmetric part of the pads is cropped */
  int pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, group;
} ct_dims;

static const char* op_name = "ConvTranspose";

static void state_release(cuda_node_state* base) {
  conv_transpose_state* st = (conv_transpose_state*)base;
  if (st->conv_desc) cudnnDestroyConvolutionDescriptor(st->conv_desc);
  if (st->w_desc) cudnnDestroyFilterDescriptor(st->w_desc);
  if (st->y_desc) cudnnDestroyTensorDescriptor(st->y_desc);
  if (st->x_desc) cudnnDestroyTensorDescriptor(st->x_desc);
  free(st);
}

static gfx_status to_int(const ir_node* node, const char* what, int64_t value, int* out) {
  if (value < 0 || value > INT_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s %lld is out of cuDNN's int range", op_name,
                     cuda_node_name(node), what, (long long)value);
  *out = (int)value;
  return NULL;
}

static gfx_status check_shape(const ir_node* node, const char* what, const gfx_shape* actual, const gfx_shape* expected,
                              gfx_code code) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[128], e[128];
  return gfx_error(code, "cuda backend: %s node \"%s\": %s shape %s, expected %s", op_name, cuda_node_name(node), what,
                   gfx_shape_str(actual, a, sizeof a), gfx_shape_str(expected, e, sizeof e));
}

/* Splits the pads into cuDNN's symmetric part and the crop, and converts to ints. */
static gfx_status plan_dims(const ir_node* node, const ir_conv_geom* g, conv_transpose_state* st, ct_dims* d) {
  int64_t sym[2], full[2];
  for (int i = 0; i < 2; i++) {
    sym[i] = g->pad_begin[i] < g->pad_end[i] ? g->pad_begin[i] : g->pad_end[i];
    full[i] = g->out[i] + g->pad_begin[i] + g->pad_end[i] - 2 * sym[i];
  }
  st->crops = full[0] != g->out[0] || full[1] != g->out[1];
  st->planes = g->n * g->c_out;
  st->full_h = full[0];
  st->full_w = full[1];
  st->crop_top = g->pad_begin[0] - sym[0];
  st->crop_left = g->pad_begin[1] - sym[1];
  st->out_h = g->out[0];
  st->out_w = g->out[1];
  int elements;
  GFX_TRY(to_int(node, "input elements", g->n * g->c_in * g->in[0] * g->in[1], &elements));
  GFX_TRY(to_int(node, "uncropped output elements", st->planes * full[0] * full[1], &elements));
  GFX_TRY(to_int(node, "weight elements", g->c_in * (g->c_out / g->group) * g->kernel[0] * g->kernel[1], &elements));
  GFX_TRY(to_int(node, "batch", g->n, &d->n));
  GFX_TRY(to_int(node, "input channels", g->c_in, &d->c_in));
  GFX_TRY(to_int(node, "input height", g->in[0], &d->h));
  GFX_TRY(to_int(node, "input width", g->in[1], &d->w));
  GFX_TRY(to_int(node, "output channels", g->c_out, &d->c_out));
  GFX_TRY(to_int(node, "output channels per group", g->c_out / g->group, &d->out_per_group));
  GFX_TRY(to_int(node, "kernel height", g->kernel[0], &d->kh));
  GFX_TRY(to_int(node, "kernel width", g->kernel[1], &d->kw));
  GFX_TRY(to_int(node, "uncropped height", full[0], &d->full_h));
  GFX_TRY(to_int(node, "uncropped width", full[1], &d->full_w));
  GFX_TRY(to_int(node, "pad height", sym[0], &d->pad_h));
  GFX_TRY(to_int(node, "pad width", sym[1], &d->pad_w));
  GFX_TRY(to_int(node, "stride height", g->strides[0], &d->stride_h));
  GFX_TRY(to_int(node, "stride width", g->strides[1], &d->stride_w));
  GFX_TRY(to_int(node, "dilation height", g->dilations[0], &d->dilation_h));
  GFX_TRY(to_int(node, "dilation width", g->dilations[1], &d->dilation_w));
  return to_int(node, "group", g->group, &d->group);
}

static gfx_status create_tensor_desc(const ir_node* node, const char* what, int dtype, int n, int c, int h, int w,
                                     cudnnTensorDescriptor_t* desc) {
  GFX_TRY(cuda_dnn_check(cudnnCreateTensorDescriptor(desc), "cudnnCreateTensorDescriptor(%s) for %s node \"%s\"", what,
                         op_name, cuda_node_name(node)));
  return cuda_dnn_check(cudnnSetTensor4dDescriptor(*desc, CUDNN_TENSOR_NCHW, cuda_nn_dnn_type(dtype), n, c, h, w),
                        "cudnnSetTensor4dDescriptor(%s [%d,%d,%d,%d]) for %s node \"%s\"", what, n, c, h, w, op_name,
                        cuda_node_name(node));
}

/* The forward convolution of dx must give dy's size back, or cuDNN would index another layout. */
static gfx_status check_forward_dims(const ir_node* node, const conv_transpose_state* st, const ct_dims* d) {
  int n = 0, c = 0, h = 0, w = 0;
  GFX_TRY(cuda_dnn_check(cudnnGetConvolution2dForwardOutputDim(st->conv_desc, st->y_desc, st->w_desc, &n, &c, &h, &w),
                         "cudnnGetConvolution2dForwardOutputDim for %s node \"%s\"", op_name, cuda_node_name(node)));
  if (n != d->n || c != d->c_in || h != d->h || w != d->w)
    return gfx_error(GFX_ERR_INTERNAL,
                     "cuda backend: %s node \"%s\": the uncropped output [%d,%d,%d,%d] convolves to [%d,%d,%d,%d], not "
                     "the input [%d,%d,%d,%d]",
                     op_name, cuda_node_name(node), d->n, d->c_out, d->full_h, d->full_w, n, c, h, w, d->n, d->c_in,
                     d->h, d->w);
  return NULL;
}

static gfx_status create_descriptors(const ir_node* node, const ct_dims* d, conv_transpose_state* st) {
  const char* name = cuda_node_name(node);
  GFX_TRY(create_tensor_desc(node, "input", st->dtype, d->n, d->c_in, d->h, d->w, &st->x_desc));
  GFX_TRY(create_tensor_desc(node, "output", st->dtype, d->n, d->c_out, d->full_h, d->full_w, &st->y_desc));
  GFX_TRY(cuda_dnn_check(cudnnCreateFilterDescriptor(&st->w_desc), "cudnnCreateFilterDescriptor for %s node \"%s\"",
                         op_name, name));
  GFX_TRY(cuda_dnn_check(cudnnSetFilter4dDescriptor(st->w_desc, cuda_nn_dnn_type(st->dtype), CUDNN_TENSOR_NCHW, d->c_in,
                                                    d->out_per_group, d->kh, d->kw),
                         "cudnnSetFilter4dDescriptor([%d,%d,%d,%d]) for %s node \"%s\"", d->c_in, d->out_per_group,
                         d->kh, d->kw, op_name, name));
  GFX_TRY(cuda_dnn_check(cudnnCreateConvolutionDescriptor(&st->conv_desc),
                         "cudnnCreateConvolutionDescriptor for %s node \"%s\"", op_name, name));
  GFX_TRY(cuda_dnn_check(cudnnSetConvolution2dDescriptor(st->conv_desc, d->pad_h, d->pad_w, d->stride_h, d->stride_w,
                                                         d->dilation_h, d->dilation_w, CUDNN_CROSS_CORRELATION,
                                                         CUDNN_DATA_FLOAT),
                         "cudnnSetConvolution2dDescriptor(pads %d,%d strides %d,%d dilations %d,%d) for %s node \"%s\"",
                         d->pad_h, d->pad_w, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w, op_name, name));
  GFX_TRY(cuda_dnn_check(cudnnSetConvolutionGroupCount(st->conv_desc, d->group),
                         "cudnnSetConvolutionGroupCount(%d) for %s node \"%s\"", d->group, op_name, name));
  GFX_TRY(cuda_dnn_check(cudnnSetConvolutionMathType(st->conv_desc, cuda_nn_math_type(st->dtype, (node->math_mode == IR_MATH_REDUCED_F32))),
                         "cudnnSetConvolutionMathType for %s node \"%s\"", op_name, name));
  return check_forward_dims(node, st, d);
}

/* cuDNN's heuristic ranking, best first: the first algorithm within the workspace limit (and, for
 * float32, in true fp32). */
static gfx_status choose_algorithm(int device, const ir_node* node, conv_transpose_state* st) {
  cudnnHandle_t handle = NULL;
  GFX_TRY(cuda_dnn_acquire(device, &handle));
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int returned = 0;
  gfx_status s = cuda_dnn_check(
      cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, st->w_desc, st->x_desc, st->conv_desc, st->y_desc,
                                                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf),
      "cudnnGetConvolutionBackwardDataAlgorithm_v7 for %s node \"%s\"", op_name, cuda_node_name(node));
  cuda_dnn_release(device, handle);
  if (s) return s;
  for (int i = 0; i < returned; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > CONV_TRANSPOSE_WORKSPACE_LIMIT ||
        !cuda_nn_math_allowed(st->dtype, (node->math_mode == IR_MATH_REDUCED_F32), perf[i].mathType))
      continue;
    st->algo = perf[i].algo;
    st->workspace_bytes = perf[i].memory;
    return NULL;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED,
                   "cuda backend: %s node \"%s\": cuDNN offers no %s backward-data algorithm within %zu bytes of "
                   "workspace (%d candidates)",
                   op_name, cuda_node_name(node), gfx_dtype_name(st->dtype), CONV_TRANSPOSE_WORKSPACE_LIMIT, returned);
}

/* Shapes, pads and the trivial cases; no library calls. */
static gfx_status plan(const ir_node* node, const gfx_shape* in, const gfx_shape* out, conv_transpose_state* st,
                       ct_dims* d) {
  const ir_conv_params* p = &node->params.conv;
  st->dtype = cuda_nn_dtype(p->dtype);
  if (!st->dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": element type %s is not implemented", op_name,
                     cuda_node_name(node), gfx_dtype_name(p->dtype));
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": activation %d is not implemented", op_name,
                     cuda_node_name(node), p->activation);
  if (p->residual != IR_RES_NONE || node->n_inputs > 3)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": a residual input is implemented for Conv only",
                     op_name, cuda_node_name(node));
  st->epilogue = (cuda_conv_epilogue){p->activation, p->act_alpha, p->act_beta, IR_RES_NONE};
  if (p->spatial == 1 && out[0].rank != 3)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output rank %d for a 1-D op", op_name,
                     cuda_node_name(node), out[0].rank);
  ir_conv_params p2;
  gfx_shape x, w, y, unused;
  ir_conv_as_2d(p, &in[0], &in[1], &p2, &x, &w);
  ir_conv_as_2d(p, &out[0], &out[0], &p2, &y, &unused);
  if (p2.spatial != 2)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %d spatial dims, 1-D and 2-D are implemented",
                     op_name, cuda_node_name(node), p->spatial);
  ir_conv_geom g;
  gfx_status s = ir_conv_transpose_geometry(&p2, &x, &w, &g);
  if (s) return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", op_name, cuda_node_name(node));
  const gfx_shape expected_y = {4, {g.n, g.c_out, g.out[0], g.out[1]}};
  GFX_TRY(check_shape(node, "output", &y, &expected_y, GFX_ERR_INTERNAL));
  st->has_bias = node->n_inputs > 2 && node->inputs[2] >= 0 && in[2].rank >= 0;
  const gfx_shape expected_bias = {1, {g.c_out}};
  if (st->has_bias) GFX_TRY(check_shape(node, "bias", &in[2], &expected_bias, GFX_ERR_INVALID_ARGUMENT));
  st->x_shape = in[0];
  st->w_shape = in[1];
  st->out_elements = gfx_shape_numel(&out[0]);
  st->out_batch = g.n;
  st->out_channels = g.c_out;
  st->out_plane = g.out[0] * g.out[1];
  st->nothing_to_do = st->out_elements == 0;
  if (st->nothing_to_do) return NULL;
  if (gfx_shape_numel(&in[0]) == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": empty input with a non-empty output", op_name,
                     cuda_node_name(node));
  return plan_dims(node, &g, st, d);
}

gfx_status cuda_prepare_conv_transpose(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                       cuda_node_state** state, size_t* scratch_bytes) {
  if (node->n_inputs < 2 || node->n_outputs < 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs", op_name,
                     cuda_node_name(node), node->n_inputs, node->n_outputs);
  conv_transpose_state* st = calloc(1, sizeof *st);
  if (!st)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: %s node \"%s\": no host memory for its state", op_name,
                     cuda_node_name(node));
  st->base.release = state_release;
  st->device = device;
  ct_dims d = {0};
  gfx_status s = plan(node, in, out, st, &d);
  if (!s && !st->nothing_to_do) {
    s = create_descriptors(node, &d, st);
    if (!s) s = choose_algorithm(device, node, st);
  }
  if (s) {
    state_release(&st->base);
    return s;
  }
  if (!st->nothing_to_do) {
    size_t full_bytes = st->crops ? (size_t)(st->planes * st->full_h * st->full_w) * gfx_dtype_size(st->dtype) : 0;
    st->full_offset = cuda_round_up(st->workspace_bytes, CUDA_ALLOC_ALIGNMENT);
    st->scratch_bytes = st->full_offset + full_bytes;
  }
  *state = &st->base;
  *scratch_bytes = st->scratch_bytes;
  return NULL;
}

static gfx_status run_with_handle(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                  const conv_transpose_state* st, cudnnHandle_t handle) {
  const char* name = cuda_node_name(node);
  GFX_TRY(cuda_dnn_check(cudnnSetStream(handle, (cudaStream_t)ctx->stream), "cudnnSetStream for %s node \"%s\"",
                         op_name, name));
  void* full = st->crops ? (char*)ctx->scratch + st->full_offset : out[0].data;
  const float one = 1.0f, zero = 0.0f;
  void* workspace = st->workspace_bytes ? ctx->scratch : NULL;
  GFX_TRY(cuda_dnn_check(cudnnConvolutionBackwardData(handle, &one, st->w_desc, in[1].data, st->x_desc, in[0].data,
                                                      st->conv_desc, st->algo, workspace, st->workspace_bytes, &zero,
                                                      st->y_desc, full),
                         "cudnnConvolutionBackwardData (algorithm %d) for %s node \"%s\" on device %d", (int)st->algo,
                         op_name, name, ctx->dev->index));
  if (st->crops)
    GFX_TRY(cuda_check(cuda_pad2d(st->dtype, full, st->planes, st->full_h, st->full_w, -st->crop_top, -st->crop_left,
                                  out[0].data, st->out_h, st->out_w, (cudaStream_t)ctx->stream),
                       "cropping the output of %s node \"%s\" on device %d", op_name, name, ctx->dev->index));
  const void* bias = st->has_bias ? in[2].data : NULL;
  if (!bias && st->epilogue.activation == IR_ACT_NONE) return NULL;
  return cuda_check(cuda_conv_epilogue_run(st->dtype, out[0].data, bias, NULL, st->out_batch, st->out_channels,
                                           st->out_plane, st->epilogue, (cudaStream_t)ctx->stream),
                    "bias/activation epilogue of %s node \"%s\" on device %d", op_name, name, ctx->dev->index);
}

gfx_status cuda_run_conv_transpose(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                   cuda_node_state* state) {
  const conv_transpose_state* st = (const conv_transpose_state*)state;
  GFX_TRY(cuda_lib_check_prepared(ctx, node, st, st ? st->device : -1,
                                  st ? (gfx_shape[]){st->x_shape, st->w_shape} : NULL, st ? 2 : 0, in,
                                  st ? st->scratch_bytes : 0));
  GFX_TRY(cuda_nn_require_dtype(node, in, node->n_inputs < 3 ? node->n_inputs : 3, st->dtype, "input"));
  GFX_TRY(cuda_nn_require_dtype(node, out, 1, st->dtype, "output"));
  if (st->nothing_to_do) return NULL;
  cudnnHandle_t handle = NULL;
  GFX_TRY(cuda_dnn_acquire(ctx->dev->index, &handle)); /* also makes the device current */
  gfx_status s = run_with_handle(ctx, node, in, out, st, handle);
  cuda_dnn_release(ctx->dev->index, handle);
  return s;
}
