/* gfxep CUDA backend — 1-D, 2-D and 3-D Conv (float32, float16, bfloat16; NC[D][H]W) with cuDNN's
 * legacy convolution API. A 1-D convolution runs as a 2-D one of height 1 (ir_conv_as_2d); a 3-D one
 * (video, volumes) through cuDNN's N-d descriptors, with symmetric pads only (cuda_conv_supported).
 *
 * node_prepare builds the descriptors and picks the algorithm once per input-shape signature;
 * node_run only queues work. Scratch holds cuDNN's workspace and, for asymmetric pads, a padded
 * copy of the input: cuDNN applies one pad to both sides of a dim, so the symmetric part
 * (min(begin, end)) goes to cuDNN and the rest is padded explicitly. This matters for auto_pad
 * SAME_* with even kernels or strides, which produces pads like (0, 1).
 *
 * Precision: for float32, CUDNN_FMA_MATH keeps every algorithm in true fp32 (CUDNN_DEFAULT_MATH would
 * allow TF32 tensor cores on Ampere and later), because results are compared with ONNX Runtime's CPU
 * kernels. float16 and bfloat16 use tensor cores with float accumulation (cuda_nn_types.h).
 *
 * Bias, a fused activation and a fused residual (ir_fuse) run inside cuDNN's fused call
 * (cudnnConvolutionBiasActivationForward) where it offers them: bias, then ReLU (or none, with the
 * implicit-precomputed-GEMM algorithm only), with a residual added before the activation. cuDNN's
 * convolution then writes the finished output once instead of the output being read and written again
 * by an epilogue kernel, which on an H100 cost 28 and 31 us of ESPCN's 310 (Nsight Compute).
 * Everything else (other activations, a residual added after the activation, no bias) runs as one
 * in-place epilogue kernel after the convolution (cuda_pad.h): one pass over the output however much
 * was fused. GFXEP_CUDA_CONV_FUSED=0 keeps the separate kernel for every Conv, to compare; 16-bit NCHW
 * keeps it unless GFXEP_CUDA_CONV_FUSED=1 (fused_epilogue_applies says why).
 *
 * A channels-last Conv (2-D, NHWC input and output: what ONNX Runtime's layout transformer hands over
 * with layout=nhwc) runs on cuDNN's NHWC descriptors, where its float16 tensor-core kernels are
 * fastest; its weights arrive as [M, C/group, kH, kW] and cuDNN wants them [M, kH, kW, C/group] for
 * that: constant weights are stored so once (params.conv.weights_channels_last, ir/fuse_layout.c), others
 * are rewritten into scratch on every run (cudnnTransformTensor; weights are small).
 * Its pads must be symmetric (cuda_supports_node). A 1x1 one of stride 1 is a plain matrix product
 * over the pixels and runs as one (cuda_conv_pointwise.h).
 *
 * A 16-bit 2-D Conv with at most four input channels (an image net's first layer) runs on the
 * project's own tensor-core kernel instead (cuda_conv_narrow.h), with its epilogue applied before the
 * store; GFXEP_CUDA_CONV_NARROW=0 keeps cuDNN for them.
 *
 * Tried and measured slower on the H200, so not here: those first layers (RGB through 5x5 or 9x9
 * windows, where cuDNN spends 283 us of ESPCN's 627 in float16) as an explicit im2col into scratch
 * plus one cuBLASLt product per slice of output rows took 327 us for that layer, and 374 against
 * cuDNN's 149 for the style-transfer net's 9x9 one.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "backend/cuda/cuda_conv_narrow.h"
#include "backend/cuda/cuda_conv_thin.h"
#include "backend/cuda/cuda_conv_tf32x3.h"
#include "backend/cuda/cuda_conv_pointwise.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_nn_types.h"
#include "backend/cuda/cuda_pad.h"
#include "ir/ops_nn.h"

/* The most workspace an algorithm may ask for: enough for the fast ones on large layers, small
 * next to the activations of any model that fits on the device. */
#define CONV_WORKSPACE_LIMIT ((size_t)256 << 20)

typedef struct conv_state {
  cuda_node_state base;
  int device;
  gfx_shape x_shape, w_shape; /* the signature this state was prepared for */
  int nothing_to_do;          /* the output has no elements */
  int has_bias;
  int dtype;      /* element type of every operand */
  cuda_conv_epilogue epilogue; /* activation and residual mode */
  int has_residual;
  int64_t out_elements, out_batch, out_channels, out_plane; /* for the epilogue */
  /* Explicit padding of the input into scratch (pads_input), plane by plane (N*C planes). */
  int pads_input;
  int64_t planes, in_h, in_w, pad_top, pad_left, padded_h, padded_w;
  size_t workspace_bytes; /* cuDNN's, at the start of scratch */
  size_t padded_offset;   /* where the padded input starts in scratch */
  size_t scratch_bytes;
  cudnnTensorDescriptor_t x_desc, y_desc; /* x_desc describes the padded input when pads_input */
  cudnnFilterDescriptor_t w_desc;
  /* channels-last: the weights as given (NCHW) and as cuDNN reads them (NHWC), and where in scratch */
  cudnnTensorDescriptor_t w_given_desc, w_nhwc_desc;
  size_t w_nhwc_offset;
  /* channels-last 1x1: one cuBLASLt product instead of cuDNN (cuda_conv_pointwise.h) */
  int pointwise;
  cuda_pointwise_product product;
  /* few input channels, 16-bit: the tensor-core kernel with the epilogue inside (cuda_conv_narrow.h) */
  int narrow;
  cuda_conv_narrow narrow_conv;
  /* few output channels, NCHW: the project's own kernel with the epilogue inside (cuda_conv_thin.h) */
  int thin;
  cuda_conv_thin thin_conv;
  /* float32 without TF32, NCHW: three TF32 tensor-core products per product (cuda_conv_tf32x3.h) */
  int tf32x3;
  cuda_conv_tf32x3 tf32x3_conv;
  cudnnConvolutionDescriptor_t conv_desc;
  cudnnConvolutionFwdAlgo_t algo;
  /* bias, activation and residual inside cuDNN's fused call (fused_epilogue_applies) */
  int fused;
  cudnnTensorDescriptor_t bias_desc;
  cudnnActivationDescriptor_t act_desc;
} conv_state;

/* The shapes cuDNN will see, in int as its legacy API takes them; spatial dims [0, spatial). */
typedef struct conv_dims {
  int spatial;                  /* 2, or 3 */
  int n, c_in, c_out, c_per_group, group;
  int in[3];                    /* input after explicit padding */
  int kernel[3];
  int pad[3];                   /* symmetric pads cuDNN applies */
  int stride[3], dilation[3];
  int out[3];
  int nhwc;                     /* channels-last input, output and (rewritten) weights */
} conv_dims;

static void conv_state_release(cuda_node_state* base) {
  conv_state* st = (conv_state*)base;
  cuda_pointwise_product_release(&st->product);
  if (st->act_desc) cudnnDestroyActivationDescriptor(st->act_desc);
  if (st->bias_desc) cudnnDestroyTensorDescriptor(st->bias_desc);
  if (st->w_nhwc_desc) cudnnDestroyTensorDescriptor(st->w_nhwc_desc);
  if (st->w_given_desc) cudnnDestroyTensorDescriptor(st->w_given_desc);
  if (st->conv_desc) cudnnDestroyConvolutionDescriptor(st->conv_desc);
  if (st->w_desc) cudnnDestroyFilterDescriptor(st->w_desc);
  if (st->y_desc) cudnnDestroyTensorDescriptor(st->y_desc);
  if (st->x_desc) cudnnDestroyTensorDescriptor(st->x_desc);
  free(st);
}

/* ---- geometry ---- */

static gfx_status check_shape(const ir_node* node, const char* what, const gfx_shape* actual, const gfx_shape* expected,
                              gfx_code code) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char actual_str[128], expected_str[128];
  return gfx_error(code, "cuda backend: Conv node \"%s\": %s shape %s, expected %s", cuda_node_name(node), what,
                   gfx_shape_str(actual, actual_str, sizeof actual_str),
                   gfx_shape_str(expected, expected_str, sizeof expected_str));
}

/* Output, weight and bias shapes agree with the geometry: the kernels index memory by them. */
static gfx_status check_shapes(const ir_node* node, const ir_conv_geom* g, const gfx_shape* in, const gfx_shape* out,
                               int has_bias) {
  const int sp = g->spatial;
  gfx_shape expected_out = {sp + 2, {g->n, g->c_out}};
  gfx_shape expected_w = {sp + 2, {g->c_out, g->group > 0 ? g->c_in / g->group : 0}};
  for (int i = 0; i < sp; i++) {
    expected_out.dims[2 + i] = g->out[i];
    expected_w.dims[2 + i] = g->kernel[i];
  }
  GFX_TRY(check_shape(node, "output", &out[0], &expected_out, GFX_ERR_INTERNAL));
  GFX_TRY(check_shape(node, "weight", &in[1], &expected_w, GFX_ERR_INVALID_ARGUMENT));
  gfx_shape expected_bias = {1, {g->c_out}};
  if (has_bias) GFX_TRY(check_shape(node, "bias", &in[2], &expected_bias, GFX_ERR_INVALID_ARGUMENT));
  return NULL;
}

static gfx_status to_int(const ir_node* node, const char* what, int64_t value, int* out) {
  if (value < 0 || value > INT_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": %s %lld is out of cuDNN's int range",
                     cuda_node_name(node), what, (long long)value);
  *out = (int)value;
  return NULL;
}

/* Splits each dim's pads into the symmetric part for cuDNN and the rest for explicit padding (2-D
 * only: a 3-D convolution with asymmetric pads is declined up front), and converts everything to
 * cuDNN's ints. */
static gfx_status plan_dims(const ir_node* node, const ir_conv_geom* g, conv_state* st, conv_dims* d) {
  const int sp = g->spatial;
  int64_t sym[3] = {0, 0, 0}, extra_begin[3] = {0, 0, 0}, extra_end[3] = {0, 0, 0}, padded[3] = {1, 1, 1};
  for (int i = 0; i < sp; i++) {
    if (g->pad_begin[i] < 0 || g->pad_end[i] < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\": negative pad (%lld, %lld) in spatial dim %d",
                       cuda_node_name(node), (long long)g->pad_begin[i], (long long)g->pad_end[i], i);
    sym[i] = g->pad_begin[i] < g->pad_end[i] ? g->pad_begin[i] : g->pad_end[i];
    extra_begin[i] = g->pad_begin[i] - sym[i];
    extra_end[i] = g->pad_end[i] - sym[i];
    padded[i] = g->in[i] + extra_begin[i] + extra_end[i];
    if ((extra_begin[i] || extra_end[i]) && sp != 2)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": asymmetric pads (%lld, %lld) in spatial dim %d of a 3-D convolution",
                       cuda_node_name(node), (long long)g->pad_begin[i], (long long)g->pad_end[i], i);
  }
  st->pads_input = extra_begin[0] || extra_end[0] || extra_begin[1] || extra_end[1];
  d->nhwc = node->params.conv.channels_last;
  if (st->pads_input && d->nhwc) /* cuda_supports_node declines these: the padding kernel is NCHW */
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": asymmetric pads on a channels-last input",
                     cuda_node_name(node));
  st->planes = g->n * g->c_in;
  st->in_h = g->in[0];
  st->in_w = g->in[1];
  st->pad_top = extra_begin[0];
  st->pad_left = extra_begin[1];
  st->padded_h = padded[0];
  st->padded_w = padded[1];
  /* The legacy API also computes element offsets in int. */
  int64_t in_count = st->planes, out_count = g->n * g->c_out, w_count = g->c_out * (g->c_in / g->group);
  for (int i = 0; i < sp; i++) {
    in_count *= padded[i];
    out_count *= g->out[i];
    w_count *= g->kernel[i];
  }
  int elements;
  GFX_TRY(to_int(node, "input elements", in_count, &elements));
  GFX_TRY(to_int(node, "output elements", out_count, &elements));
  GFX_TRY(to_int(node, "weight elements", w_count, &elements));
  d->spatial = sp;
  GFX_TRY(to_int(node, "batch", g->n, &d->n));
  GFX_TRY(to_int(node, "input channels", g->c_in, &d->c_in));
  GFX_TRY(to_int(node, "output channels", g->c_out, &d->c_out));
  GFX_TRY(to_int(node, "channels per group", g->c_in / g->group, &d->c_per_group));
  GFX_TRY(to_int(node, "group", g->group, &d->group));
  for (int i = 0; i < sp; i++) {
    GFX_TRY(to_int(node, "input size", padded[i], &d->in[i]));
    GFX_TRY(to_int(node, "kernel size", g->kernel[i], &d->kernel[i]));
    GFX_TRY(to_int(node, "pad", sym[i], &d->pad[i]));
    GFX_TRY(to_int(node, "stride", g->strides[i], &d->stride[i]));
    GFX_TRY(to_int(node, "dilation", g->dilations[i], &d->dilation[i]));
    GFX_TRY(to_int(node, "output size", g->out[i], &d->out[i]));
  }
  return NULL;
}

/* ---- descriptors ---- */

/* NC[D]HW, fully packed: 4-d descriptors for 2-D (what cuDNN ranks its 2-D algorithms for), N-d for 3-D. */
static gfx_status create_tensor_desc(const ir_node* node, const char* what, int dtype, int n, int c, const int* sp_dims,
                                     int spatial, int nhwc, cudnnTensorDescriptor_t* desc) {
  GFX_TRY(cuda_dnn_check(cudnnCreateTensorDescriptor(desc), "cudnnCreateTensorDescriptor(%s) for Conv node \"%s\"", what,
                         cuda_node_name(node)));
  if (spatial == 2)
    return cuda_dnn_check(cudnnSetTensor4dDescriptor(*desc, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                     cuda_nn_dnn_type(dtype), n, c, sp_dims[0], sp_dims[1]),
                          "cudnnSetTensor4dDescriptor(%s [%d,%d,%d,%d]%s) for Conv node \"%s\"", what, n, c, sp_dims[0],
                          sp_dims[1], nhwc ? " NHWC" : "", cuda_node_name(node));
  int dims[5] = {n, c, sp_dims[0], sp_dims[1], sp_dims[2]}, strides[5];
  strides[4] = 1;
  for (int i = 3; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
  return cuda_dnn_check(cudnnSetTensorNdDescriptor(*desc, cuda_nn_dnn_type(dtype), 5, dims, strides),
                        "cudnnSetTensorNdDescriptor(%s [%d,%d,%d,%d,%d]) for Conv node \"%s\"", what, dims[0], dims[1],
                        dims[2], dims[3], dims[4], cuda_node_name(node));
}

static gfx_status create_conv_desc(const ir_node* node, const conv_dims* d, int dtype,
                                   cudnnConvolutionDescriptor_t* desc) {
  const cudnnMathType_t math = cuda_nn_math_type(dtype, (node->math_mode == IR_MATH_REDUCED_F32));
  const char* name = cuda_node_name(node);
  GFX_TRY(cuda_dnn_check(cudnnCreateConvolutionDescriptor(desc), "cudnnCreateConvolutionDescriptor for Conv node \"%s\"",
                         name));
  if (d->spatial == 2)
    GFX_TRY(cuda_dnn_check(cudnnSetConvolution2dDescriptor(*desc, d->pad[0], d->pad[1], d->stride[0], d->stride[1],
                                                           d->dilation[0], d->dilation[1], CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT),
                           "cudnnSetConvolution2dDescriptor(pads %d,%d strides %d,%d dilations %d,%d) for Conv node \"%s\"",
                           d->pad[0], d->pad[1], d->stride[0], d->stride[1], d->dilation[0], d->dilation[1], name));
  else
    GFX_TRY(cuda_dnn_check(cudnnSetConvolutionNdDescriptor(*desc, 3, d->pad, d->stride, d->dilation,
                                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                           "cudnnSetConvolutionNdDescriptor(pads %d,%d,%d strides %d,%d,%d dilations %d,%d,%d) for Conv "
                           "node \"%s\"",
                           d->pad[0], d->pad[1], d->pad[2], d->stride[0], d->stride[1], d->stride[2], d->dilation[0],
                           d->dilation[1], d->dilation[2], name));
  GFX_TRY(cuda_dnn_check(cudnnSetConvolutionGroupCount(*desc, d->group),
                         "cudnnSetConvolutionGroupCount(%d) for Conv node \"%s\"", d->group, name));
  return cuda_dnn_check(cudnnSetConvolutionMathType(*desc, math), "cudnnSetConvolutionMathType(%d) for Conv node \"%s\"",
                        (int)math, name);
}

/* cuDNN's own output size must be the one ONNX shape inference gave, or the output would be
 * written with a different layout than the executor allocated. */
static gfx_status check_cudnn_output(const ir_node* node, const conv_state* st, const conv_dims* d) {
  int got[5] = {0};
  const int rank = d->spatial + 2;
  GFX_TRY(cuda_dnn_check(cudnnGetConvolutionNdForwardOutputDim(st->conv_desc, st->x_desc, st->w_desc, rank, got),
                         "cudnnGetConvolutionNdForwardOutputDim for Conv node \"%s\"", cuda_node_name(node)));
  int same = got[0] == d->n && got[1] == d->c_out;
  for (int i = 0; i < d->spatial; i++) same = same && got[2 + i] == d->out[i];
  if (!same)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: Conv node \"%s\": cuDNN computes output [%d,%d,%d,%d,%d] (rank %d), "
                     "expected spatial %d,%d,%d",
                     cuda_node_name(node), got[0], got[1], got[2], got[3], got[4], rank, d->out[0], d->out[1],
                     d->spatial > 2 ? d->out[2] : 0);
  return NULL;
}

/* On failure the caller releases the state, which frees whatever was created. */
static gfx_status create_descriptors(const ir_node* node, const conv_dims* d, conv_state* st) {
  GFX_TRY(create_tensor_desc(node, "input", st->dtype, d->n, d->c_in, d->in, d->spatial, d->nhwc, &st->x_desc));
  GFX_TRY(create_tensor_desc(node, "output", st->dtype, d->n, d->c_out, d->out, d->spatial, d->nhwc, &st->y_desc));
  /* the weights' rewrite on every run, [M, C/group, kH, kW] -> [M, kH, kW, C/group], unless stored so */
  if (d->nhwc && !node->params.conv.weights_channels_last) {
    GFX_TRY(create_tensor_desc(node, "weight as given", st->dtype, d->c_out, d->c_per_group, d->kernel, 2, 0,
                               &st->w_given_desc));
    GFX_TRY(create_tensor_desc(node, "weight channels-last", st->dtype, d->c_out, d->c_per_group, d->kernel, 2, 1,
                               &st->w_nhwc_desc));
  }
  GFX_TRY(cuda_dnn_check(cudnnCreateFilterDescriptor(&st->w_desc), "cudnnCreateFilterDescriptor for Conv node \"%s\"",
                         cuda_node_name(node)));
  if (d->spatial == 2)
    GFX_TRY(cuda_dnn_check(cudnnSetFilter4dDescriptor(st->w_desc, cuda_nn_dnn_type(st->dtype),
                                                      d->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                      d->c_out, d->c_per_group, d->kernel[0], d->kernel[1]),
                           "cudnnSetFilter4dDescriptor([%d,%d,%d,%d]) for Conv node \"%s\"", d->c_out, d->c_per_group,
                           d->kernel[0], d->kernel[1], cuda_node_name(node)));
  else {
    const int dims[5] = {d->c_out, d->c_per_group, d->kernel[0], d->kernel[1], d->kernel[2]};
    GFX_TRY(cuda_dnn_check(cudnnSetFilterNdDescriptor(st->w_desc, cuda_nn_dnn_type(st->dtype), CUDNN_TENSOR_NCHW, 5, dims),
                           "cudnnSetFilterNdDescriptor([%d,%d,%d,%d,%d]) for Conv node \"%s\"", dims[0], dims[1], dims[2],
                           dims[3], dims[4], cuda_node_name(node)));
  }
  GFX_TRY(create_conv_desc(node, d, st->dtype, &st->conv_desc));
  return check_cudnn_output(node, st, d);
}

/* ---- algorithm choice ---- */

/* The algorithm for a convolution geometry, chosen once per process and cached, keyed by the
 * geometry, the element type and whether TF32 is allowed. cuDNN's heuristic ranking is the default:
 * on the H200, measuring every candidate with cuDNN's Find (what PyTorch's cudnn.benchmark does) chose
 * slower algorithms for whole networks than the heuristic (ResNet-50 fp16 2.29 ms against 0.71 ms,
 * MobileNetV2 fp16 0.66 against 0.35; the same or worse on every zoo model): a candidate timed alone
 * is not how it runs among its neighbours. GFXEP_CONV_ALGO=find measures instead, to compare. */
typedef struct algo_key {
  conv_dims d;
  int dtype, allow_tf32, device;
} algo_key;

#define ALGO_CACHE_SIZE 512
static struct {
  algo_key key;
  cudnnConvolutionFwdAlgo_t algo;
  size_t memory;
} algo_cache[ALGO_CACHE_SIZE];
static int algo_cache_n;
static mtx_t algo_cache_lock;
static once_flag algo_cache_once = ONCE_FLAG_INIT;
static void algo_cache_init(void) { mtx_init(&algo_cache_lock, mtx_plain); }

static int algo_cache_find(const algo_key* key, cudnnConvolutionFwdAlgo_t* algo, size_t* memory) {
  call_once(&algo_cache_once, algo_cache_init);
  mtx_lock(&algo_cache_lock);
  int found = 0;
  for (int i = 0; i < algo_cache_n && !found; i++)
    if (memcmp(&algo_cache[i].key, key, sizeof *key) == 0) {
      *algo = algo_cache[i].algo;
      *memory = algo_cache[i].memory;
      found = 1;
    }
  mtx_unlock(&algo_cache_lock);
  return found;
}

static void algo_cache_add(const algo_key* key, cudnnConvolutionFwdAlgo_t algo, size_t memory) {
  mtx_lock(&algo_cache_lock);
  if (algo_cache_n < ALGO_CACHE_SIZE) {
    algo_cache[algo_cache_n].key = *key;
    algo_cache[algo_cache_n].algo = algo;
    algo_cache[algo_cache_n].memory = memory;
    algo_cache_n++;
  }
  mtx_unlock(&algo_cache_lock);
}

/* Algorithms whose intermediate results lose precision with 16-bit data: the FFT ones and the
 * non-fused Winograd keep transformed tiles in the data type. Measured on the H200: a float16 5x5
 * convolution over 33 channels came out up to 5 ulp off with the one cuDNN's heuristic ranked first. */
static int lossy_for_16bit(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

/* The first usable entry of a ranked list: succeeded, within the workspace limit, math allowed, and
 * for 16-bit data not one of the lossy transforms. */
static int pick(const cudnnConvolutionFwdAlgoPerf_t* perf, int returned, const conv_state* st, int allow_tf32) {
  const int half = st->dtype == GFX_DTYPE_F16 || st->dtype == GFX_DTYPE_BF16;
  for (int i = 0; i < returned; i++)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CONV_WORKSPACE_LIMIT &&
        cuda_nn_math_allowed(st->dtype, allow_tf32, perf[i].mathType) && !(half && lossy_for_16bit(perf[i].algo)))
      return i;
  return -1;
}

static gfx_status choose_algorithm(int device, const ir_node* node, const conv_dims* d, conv_state* st) {
  algo_key key;
  memset(&key, 0, sizeof key); /* padding bytes too: the key is compared with memcmp */
  key.d = *d;
  key.dtype = st->dtype;
  key.allow_tf32 = (node->math_mode == IR_MATH_REDUCED_F32);
  key.device = device;
  if (algo_cache_find(&key, &st->algo, &st->workspace_bytes)) return NULL;
  cudnnHandle_t handle = NULL;
  GFX_TRY(cuda_dnn_acquire(device, &handle));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0, best = -1;
  const char* mode = getenv("GFXEP_CONV_ALGO");
  const int measure = mode && strcmp(mode, "find") == 0;
  /* measuring runs on a stream of its own: the handle's last stream may be an application's stream
   * with work queued behind a semaphore the renderer has not signalled, and Find waits for its runs.
   * The heuristic when not measuring, or when measuring fails (e.g. no memory for a candidate). */
  cudaStream_t find_stream = NULL;
  if (measure && cudaStreamCreateWithFlags(&find_stream, cudaStreamNonBlocking) == cudaSuccess &&
      cudnnSetStream(handle, find_stream) == CUDNN_STATUS_SUCCESS &&
      cudnnFindConvolutionForwardAlgorithm(handle, st->x_desc, st->w_desc, st->conv_desc, st->y_desc,
                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf) == CUDNN_STATUS_SUCCESS)
    best = pick(perf, returned, st, (node->math_mode == IR_MATH_REDUCED_F32));
  if (find_stream) {
    cudaStreamSynchronize(find_stream);
    cudnnSetStream(handle, NULL);
    cudaStreamDestroy(find_stream);
  }
  (void)cudaGetLastError(); /* a failed candidate must not surface at the next launch check */
  gfx_status s = NULL;
  if (best < 0) {
    s = cuda_dnn_check(cudnnGetConvolutionForwardAlgorithm_v7(handle, st->x_desc, st->w_desc, st->conv_desc,
                                                              st->y_desc, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
                                                              perf),
                       "cudnnGetConvolutionForwardAlgorithm_v7 for Conv node \"%s\"", cuda_node_name(node));
    if (!s) best = pick(perf, returned, st, (node->math_mode == IR_MATH_REDUCED_F32));
  }
  cuda_dnn_release(device, handle);
  if (s) return s;
  if (best < 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "cuda backend: Conv node \"%s\": cuDNN offers no %s algorithm within %zu bytes of workspace (%d "
                     "candidates)",
                     cuda_node_name(node), gfx_dtype_name(st->dtype), CONV_WORKSPACE_LIMIT, returned);
  st->algo = perf[best].algo;
  st->workspace_bytes = perf[best].memory;
  algo_cache_add(&key, st->algo, st->workspace_bytes);
  return NULL;
}

/* ---- the fused epilogue ---- */

/* What cudnnConvolutionBiasActivationForward computes, y = act(conv(x) + z + bias): a bias, ReLU or
 * no activation (the latter with one algorithm only), the residual z added before the activation.
 * Not for 16-bit NCHW unless GFXEP_CUDA_CONV_FUSED=1: there it measured slower than the convolution
 * and the separate epilogue (MobileNetV2 float16 on an H100: 0.402 against 0.341 ms), where channels-
 * last 16-bit and float32 NCHW gained 4-22% on ESPCN, the UNet, ResNet-18/50 and
 * MobileNetV2. */
static int fused_epilogue_applies(const conv_state* st, const conv_dims* d) {
  if (!cuda_conv_fused_epilogue_allowed() || !st->has_bias) return 0;
  const int half = st->dtype == GFX_DTYPE_F16 || st->dtype == GFX_DTYPE_BF16;
  if (half && !d->nhwc && !cuda_conv_fused_epilogue_forced()) return 0;
  if (st->epilogue.residual != IR_RES_NONE && st->epilogue.residual != IR_RES_ADD_THEN_ACT) return 0;
  if (st->epilogue.activation == IR_ACT_RELU) return 1;
  return st->epilogue.activation == IR_ACT_NONE && st->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
}

/* The bias as a [1, C, 1, 1(, 1)] tensor in the output's layout, and the activation. */
static gfx_status plan_fused_epilogue(const ir_node* node, const conv_dims* d, conv_state* st) {
  const int ones[3] = {1, 1, 1};
  GFX_TRY(create_tensor_desc(node, "bias", st->dtype, 1, d->c_out, ones, d->spatial, d->nhwc, &st->bias_desc));
  GFX_TRY(cuda_dnn_check(cudnnCreateActivationDescriptor(&st->act_desc),
                         "cudnnCreateActivationDescriptor for Conv node \"%s\"", cuda_node_name(node)));
  const cudnnActivationMode_t mode =
      st->epilogue.activation == IR_ACT_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY;
  GFX_TRY(cuda_dnn_check(cudnnSetActivationDescriptor(st->act_desc, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0),
                         "cudnnSetActivationDescriptor(%d) for Conv node \"%s\"", (int)mode, cuda_node_name(node)));
  st->fused = 1;
  return NULL;
}

/* ---- prepare ---- */

static int has_bias_input(const ir_node* node, const gfx_shape* in) {
  return node->n_inputs > 2 && node->inputs[2] >= 0 && in[2].rank >= 0;
}

/* The fused activation and residual: known kinds, and a residual input shaped exactly like the
 * output (the epilogue reads it element for element). */
static gfx_status plan_epilogue(const ir_node* node, const gfx_shape* in, const gfx_shape* out, conv_state* st) {
  const ir_conv_params* p = &node->params.conv;
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": activation %d is not implemented",
                     cuda_node_name(node), p->activation);
  st->epilogue = (cuda_conv_epilogue){p->activation, p->act_alpha, p->act_beta, p->residual};
  const int k = IR_CONV_RESIDUAL_INPUT;
  st->has_residual = node->n_inputs > k && node->inputs[k] >= 0;
  if (p->residual == IR_RES_NONE) {
    if (st->has_residual)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\": input %d without a residual mode",
                       cuda_node_name(node), k);
    return NULL;
  }
  if (p->residual != IR_RES_ADD_THEN_ACT && p->residual != IR_RES_ACT_THEN_ADD)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": residual mode %d is not implemented",
                     cuda_node_name(node), p->residual);
  if (!st->has_residual)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\": residual mode without input %d",
                     cuda_node_name(node), k);
  return check_shape(node, "residual", &in[k], &out[0], GFX_ERR_INVALID_ARGUMENT);
}

/* Shapes, pads and the trivial cases; no library calls. */
static gfx_status plan_conv(const ir_node* node, const gfx_shape* in, const gfx_shape* out, conv_state* st,
                            conv_dims* d) {
  st->dtype = cuda_nn_dtype(node->params.conv.dtype);
  if (!st->dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": element type %s is not implemented",
                     cuda_node_name(node), gfx_dtype_name(node->params.conv.dtype));
  GFX_TRY(plan_epilogue(node, in, out, st));
  /* the 2-D views: a 1-D convolution gets a unit height (same memory) */
  ir_conv_params p2;
  gfx_shape view[3], out_view[1], unused;
  ir_conv_as_2d(&node->params.conv, &in[0], &in[1], &p2, &view[0], &view[1]);
  ir_conv_as_2d(&node->params.conv, &out[0], &out[0], &p2, &out_view[0], &unused);
  if (p2.channels_last) out_view[0] = ir_nhwc_as_nchw(&out[0]); /* checked against the geometry's N, C, H, W */
  view[2] = node->n_inputs > 2 ? in[2] : (gfx_shape){.rank = -1};
  if (node->params.conv.spatial == 1 && out[0].rank != 3)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: Conv node \"%s\": output rank %d for a 1-D convolution",
                     cuda_node_name(node), out[0].rank);
  ir_conv_geom g;
  gfx_status s = ir_conv_geometry(&p2, &view[0], &view[1], &g);
  if (s) return gfx_status_wrap(s, "cuda backend: Conv node \"%s\"", cuda_node_name(node));
  if (g.spatial != 2 && g.spatial != 3)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": %d spatial dims; 1-D, 2-D and 3-D convolution are implemented",
                     cuda_node_name(node), g.spatial);
  if (g.group <= 0 || g.c_in % g.group != 0 || g.c_out % g.group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\": group %lld does not divide channels %lld -> %lld",
                     cuda_node_name(node), (long long)g.group, (long long)g.c_in, (long long)g.c_out);
  st->has_bias = has_bias_input(node, in);
  GFX_TRY(check_shapes(node, &g, view, out_view, st->has_bias));
  st->x_shape = in[0];
  st->w_shape = in[1];
  st->out_elements = gfx_shape_numel(&out[0]);
  st->out_batch = g.n;
  st->out_channels = g.c_out;
  st->out_plane = g.out[0] * g.out[1] * (g.spatial == 3 ? g.out[2] : 1);
  st->nothing_to_do = st->out_elements == 0;
  if (st->nothing_to_do) return NULL;
  if (gfx_shape_numel(&in[0]) == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": empty input with a non-empty output",
                     cuda_node_name(node));
  return plan_dims(node, &g, st, d);
}

/* ---- the few-channel kernel ---- */

/* Whether the device and the environment let the few-channel kernel run (GFXEP_CUDA_CONV_NARROW=0 keeps cuDNN). */
static int narrow_allowed(int device, int* cc_major) {
  const char* choice = getenv("GFXEP_CUDA_CONV_NARROW");
  if (choice && strcmp(choice, "0") == 0) return 0;
  if (cudaDeviceGetAttribute(cc_major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

static int narrow_applies(int device, const ir_node* node, const conv_dims* d, int dtype) {
  int major = 0;
  return narrow_allowed(device, &major) && node->params.conv.spatial == 2 &&
         cuda_conv_narrow_applies(dtype, d->spatial, d->group, d->c_in, d->kernel, major);
}

gfx_status cuda_conv_supports_nchw_input(int device, const gfx_node_query* q) {
  const ir_conv_params* p = &q->params->conv;
  const gfx_shape* x = q->desc ? &q->desc->input_shapes[0] : NULL;
  const gfx_shape* w = q->desc ? &q->desc->input_shapes[1] : NULL;
  int major = 0;
  if (!x || x->rank != 4 || !w || w->rank != 4 || x->dims[1] < 1 || x->dims[1] > INT_MAX || w->dims[2] < 1 ||
      w->dims[3] < 1 || w->dims[2] > INT_MAX || w->dims[3] > INT_MAX || !narrow_allowed(device, &major) ||
      !cuda_conv_narrow_applies(q->desc->input_dtypes[0], p->spatial, (int)p->group, (int)x->dims[1],
                                (const int[]){(int)w->dims[2], (int)w->dims[3]}, major))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a channels-last Conv of an NCHW input runs only on the "
                     "few-channel kernel (16-bit, one group, at most %d channels and %d taps, compute capability 8.0)",
                     CUDA_CONV_NARROW_MAX_CHANNELS, CUDA_CONV_NARROW_MAX_TAPS);
  /* and only where the kernel can be planned: its input window must fit the device's shared memory */
  ir_conv_geom g = {0};
  gfx_status s = ir_conv_geometry(p, x, w, &g);
  int fits = !s && g.spatial == 2 && g.n >= 1 && g.c_out >= 1;
  gfx_status_free(s);
  const int64_t dims[] = {g.n, g.c_out, g.in[0], g.in[1], g.out[0], g.out[1], g.strides[0], g.strides[1],
                          g.dilations[0], g.dilations[1], g.pad_begin[0], g.pad_begin[1]};
  for (size_t i = 0; fits && i < sizeof dims / sizeof dims[0]; i++) fits = dims[i] >= 0 && dims[i] <= INT_MAX;
  if (fits) {
    cuda_conv_narrow plan = {.dtype = q->desc->input_dtypes[0], .channels_last = 1, .nchw_input = 1, .n = (int)g.n,
                             .c_in = (int)x->dims[1], .in_h = (int)g.in[0], .in_w = (int)g.in[1],
                             .c_out = (int)g.c_out, .out_h = (int)g.out[0], .out_w = (int)g.out[1],
                             .kernel_h = (int)w->dims[2], .kernel_w = (int)w->dims[3], .stride_h = (int)g.strides[0],
                             .stride_w = (int)g.strides[1], .dilation_h = (int)g.dilations[0],
                             .dilation_w = (int)g.dilations[1], .pad_top = (int)g.pad_begin[0],
                             .pad_left = (int)g.pad_begin[1]};
    s = cuda_use_device(device);
    fits = !s && cuda_conv_narrow_plan(&plan) == cudaSuccess;
    gfx_status_free(s);
    (void)cudaGetLastError();
  }
  if (!fits)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a channels-last Conv of an NCHW input whose geometry the "
                     "few-channel kernel cannot hold in this device's shared memory");
  return NULL;
}

gfx_status cuda_conv_supports_weights_channels_last(int device, const gfx_node_query* q) {
  const ir_conv_params* p = &q->params->conv;
  const char* choice = getenv("GFXEP_CUDA_CONV_STORED_WEIGHTS"); /* 0: rewrite W on every run, to compare */
  if (choice && strcmp(choice, "0") == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: weights stored channels-last are off "
                     "(GFXEP_CUDA_CONV_STORED_WEIGHTS=0)");
  if (!p->channels_last || p->spatial != 2 || p->nchw_input || p->chain)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: weights stored channels-last for a Conv that is not a "
                     "channels-last 2-D one of a channels-last input");
  const gfx_shape* x = q->desc ? &q->desc->input_shapes[0] : NULL;
  const gfx_shape* w = q->desc ? &q->desc->input_shapes[1] : NULL;
  if (!x || x->rank != 4 || !w || w->rank != 4 || x->dims[3] < 1 || x->dims[3] > INT_MAX || w->dims[2] < 1 ||
      w->dims[3] < 1 || w->dims[2] > INT_MAX || w->dims[3] > INT_MAX || p->group < 1 || p->group > INT_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: weights stored channels-last for a Conv of unknown shapes");
  int major = 0;
  if (narrow_allowed(device, &major) &&
      cuda_conv_narrow_applies(q->desc->input_dtypes[0], 2, (int)p->group, (int)x->dims[3],
                               (const int[]){(int)w->dims[2], (int)w->dims[3]}, major))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: weights stored channels-last for a Conv of %lld input "
                     "channels, which the few-channel kernel runs from weights as given", (long long)x->dims[3]);
  return NULL;
}

/* The kernel takes every pad itself, so the split into cuDNN's symmetric part and an explicit
 * padding (plan_dims) is undone: no padded copy, no workspace. */
static gfx_status plan_narrow(const ir_node* node, const conv_dims* d, conv_state* st) {
  cuda_conv_narrow* p = &st->narrow_conv;
  *p = (cuda_conv_narrow){.dtype = st->dtype, .channels_last = d->nhwc, .nchw_input = node->params.conv.nchw_input,
                          .n = d->n, .c_in = d->c_in,
                          .in_h = (int)st->in_h, .in_w = (int)st->in_w, .c_out = d->c_out, .out_h = d->out[0],
                          .out_w = d->out[1], .kernel_h = d->kernel[0], .kernel_w = d->kernel[1],
                          .stride_h = d->stride[0], .stride_w = d->stride[1], .dilation_h = d->dilation[0],
                          .dilation_w = d->dilation[1], .pad_top = d->pad[0] + (int)st->pad_top,
                          .pad_left = d->pad[1] + (int)st->pad_left, .epilogue = st->epilogue};
  GFX_TRY(cuda_use_device(st->device));
  GFX_TRY(cuda_check(cuda_conv_narrow_plan(p), "planning the few-channel kernel for Conv node \"%s\" (%d channels, "
                     "%dx%d window, stride %d,%d, dilation %d,%d)", cuda_node_name(node), d->c_in, d->kernel[0],
                     d->kernel[1], d->stride[0], d->stride[1], d->dilation[0], d->dilation[1]));
  st->pads_input = 0;
  st->workspace_bytes = 0;
  return NULL;
}

/* The few-output-channel kernel takes every pad itself, as the few-channel one does. 0 when its input
 * window does not fit (cuDNN then). */
static int plan_thin(const conv_dims* d, conv_state* st) {
  cuda_conv_thin* p = &st->thin_conv;
  *p = (cuda_conv_thin){.dtype = st->dtype, .n = d->n, .c_in = d->c_in, .in_h = (int)st->in_h, .in_w = (int)st->in_w,
                        .c_out = d->c_out, .out_h = d->out[0], .out_w = d->out[1], .kernel_h = d->kernel[0],
                        .kernel_w = d->kernel[1], .stride_h = d->stride[0], .stride_w = d->stride[1],
                        .dilation_h = d->dilation[0], .dilation_w = d->dilation[1],
                        .pad_top = d->pad[0] + (int)st->pad_top, .pad_left = d->pad[1] + (int)st->pad_left,
                        .epilogue = st->epilogue};
  if (cuda_conv_thin_plan(p) != cudaSuccess) return 0;
  st->pads_input = 0;
  st->workspace_bytes = 0;
  return 1;
}

/* The float32 tensor-core kernel takes every pad itself, as the few-channel one does. 0 when the
 * device is older than compute capability 8.0 or the chunk's window and weights do not fit (cuDNN then). */
static int plan_tf32x3(int device, const ir_node* node, const conv_dims* d, conv_state* st) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (!cuda_conv_tf32x3_applies(st->dtype, node->math_mode == IR_MATH_REDUCED_F32, d->spatial, d->group, d->nhwc,
                                d->c_in, d->c_out, d->kernel, major))
    return 0;
  cuda_conv_tf32x3* p = &st->tf32x3_conv;
  *p = (cuda_conv_tf32x3){.n = d->n, .c_in = d->c_in, .in_h = (int)st->in_h, .in_w = (int)st->in_w,
                          .c_out = d->c_out, .out_h = d->out[0], .out_w = d->out[1], .kernel_h = d->kernel[0],
                          .kernel_w = d->kernel[1], .stride_h = d->stride[0], .stride_w = d->stride[1],
                          .dilation_h = d->dilation[0], .dilation_w = d->dilation[1],
                          .pad_top = d->pad[0] + (int)st->pad_top, .pad_left = d->pad[1] + (int)st->pad_left,
                          .epilogue = st->epilogue};
  gfx_status s = cuda_use_device(device);
  const int planned = !s && cuda_conv_tf32x3_plan(p) == cudaSuccess;
  gfx_status_free(s);
  (void)cudaGetLastError();
  if (!planned) return 0;
  st->pads_input = 0;
  st->workspace_bytes = 0;
  return 1;
}

gfx_status cuda_prepare_conv(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             cuda_node_state** state, size_t* scratch_bytes) {
  if (node->params.conv.chain) return cuda_prepare_conv_chain(device, node, in, out, state, scratch_bytes);
  if (node->n_inputs < 2 || node->n_outputs < 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\" has %d inputs and %d outputs",
                     cuda_node_name(node), node->n_inputs, node->n_outputs);
  conv_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: Conv node \"%s\": no host memory for its state", cuda_node_name(node));
  st->base.release = conv_state_release;
  st->device = device;
  conv_dims d = {0}; /* stays unused when there is nothing to do */
  gfx_status s = plan_conv(node, in, out, st, &d);
  st->pointwise = !s && !st->nothing_to_do &&
                  cuda_pointwise_product_applies(d.nhwc, d.spatial, d.kernel, d.stride, d.dilation, d.pad,
                                                 st->pads_input, d.group) &&
                  !node->params.conv.nchw_input && !getenv("GFXEP_CUDA_NO_POINTWISE_PRODUCT");
  /* the few-channel kernel reads W as ONNX gives it (cuda_supports_node declines the other order there) */
  st->narrow = !s && !st->nothing_to_do && !st->pointwise && !node->params.conv.weights_channels_last &&
               narrow_applies(device, node, &d, st->dtype);
  if (!s && !st->nothing_to_do && node->params.conv.nchw_input && !st->narrow) /* cuda_supports_node declines these */
    s = gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: Conv node \"%s\": a channels-last Conv of an NCHW input runs "
                  "only on the few-channel kernel", cuda_node_name(node));
  if (!s && st->narrow) {
    s = plan_narrow(node, &d, st);
    /* a geometry whose input window does not fit the device's shared memory (wide strides or
     * dilations, or a device with less of it) stays with cuDNN; the NCHW-input kind has no other path
     * (cuda_conv_supports_nchw_input plans it before it is made) */
    if (s && !node->params.conv.nchw_input) {
      gfx_status_free(s);
      s = NULL;
      (void)cudaGetLastError();
      st->narrow = 0;
    }
  }
  st->thin = !s && !st->nothing_to_do && !st->pointwise && !st->narrow && !node->params.conv.weights_channels_last &&
             !node->params.conv.nchw_input && node->params.conv.spatial == 2 &&
             cuda_conv_thin_applies(st->dtype, d.spatial, d.group, d.nhwc, d.c_in, d.c_out, d.kernel) &&
             plan_thin(&d, st);
  st->tf32x3 = !s && !st->nothing_to_do && !st->pointwise && !st->narrow && !st->thin &&
               !node->params.conv.weights_channels_last && !node->params.conv.nchw_input &&
               node->params.conv.spatial == 2 && plan_tf32x3(device, node, &d, st);
  if (!s && (st->narrow || st->thin || st->tf32x3)) {
    /* planned above */
  } else if (!s && st->pointwise) {
    const cuda_pointwise_fusion fusion =
        cuda_pointwise_fusion_of(st->has_bias, st->epilogue.activation, st->has_residual ? st->epilogue.residual : IR_RES_NONE);
    s = cuda_pointwise_product_plan(device, node, st->dtype, (int64_t)d.n * d.out[0] * d.out[1], d.c_in, d.c_out,
                                    fusion, CONV_WORKSPACE_LIMIT, &st->product);
    st->fused = fusion.bias || fusion.relu || fusion.residual;
    if (!s) st->workspace_bytes = st->product.algo.workspaceSize;
  } else if (!s && !st->nothing_to_do) {
    s = create_descriptors(node, &d, st);
    if (!s) s = choose_algorithm(device, node, &d, st);
    if (!s && fused_epilogue_applies(st, &d)) s = plan_fused_epilogue(node, &d, st);
  }
  if (s) {
    conv_state_release(&st->base);
    return s;
  }
  if (!st->nothing_to_do) {
    size_t padded_bytes =
        st->pads_input ? (size_t)(st->planes * st->padded_h * st->padded_w) * gfx_dtype_size(st->dtype) : 0;
    st->padded_offset = cuda_round_up(st->workspace_bytes, CUDA_ALLOC_ALIGNMENT);
    st->w_nhwc_offset = cuda_round_up(st->padded_offset + padded_bytes, CUDA_ALLOC_ALIGNMENT);
    const size_t w_nhwc_bytes =
        d.nhwc && !st->pointwise && !st->narrow && !node->params.conv.weights_channels_last
            ? (size_t)gfx_shape_numel(&in[1]) * gfx_dtype_size(st->dtype)
            : 0;
    st->scratch_bytes = st->w_nhwc_offset + w_nhwc_bytes;
  }
  *state = &st->base;
  *scratch_bytes = st->scratch_bytes;
  return NULL;
}

/* ---- run ---- */

/* The input cuDNN reads: x itself, or its padded copy in scratch. */
static gfx_status padded_input(const gfx_exec_ctx* ctx, const ir_node* node, const conv_state* st, const void* x,
                               const void** input) {
  *input = x;
  if (!st->pads_input) return NULL;
  void* padded = (char*)ctx->scratch + st->padded_offset;
  GFX_TRY(cuda_check(cuda_pad2d(st->dtype, x, st->planes, st->in_h, st->in_w, st->pad_top, st->pad_left, padded, st->padded_h,
                                    st->padded_w, (cudaStream_t)ctx->stream),
                     "padding the input of Conv node \"%s\" on device %d", cuda_node_name(node), ctx->dev->index));
  *input = padded;
  return NULL;
}

static gfx_status run_epilogue(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                               const conv_state* st);

static gfx_status run_with_handle(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                  const conv_state* st, cudnnHandle_t handle) {
  const char* name = cuda_node_name(node);
  GFX_TRY(cuda_dnn_check(cudnnSetStream(handle, (cudaStream_t)ctx->stream), "cudnnSetStream for Conv node \"%s\"", name));
  const void* x = NULL;
  GFX_TRY(padded_input(ctx, node, st, in[0].data, &x));
  const float one = 1.0f, zero = 0.0f;
  void* workspace = st->workspace_bytes ? ctx->scratch : NULL;
  const void* w = in[1].data;
  if (st->w_nhwc_desc) {
    void* w_nhwc = (char*)ctx->scratch + st->w_nhwc_offset;
    GFX_TRY(cuda_dnn_check(cudnnTransformTensor(handle, &one, st->w_given_desc, w, &zero, st->w_nhwc_desc, w_nhwc),
                           "cudnnTransformTensor (weights to channels-last) for Conv node \"%s\" on device %d", name,
                           ctx->dev->index));
    w = w_nhwc;
  }
  if (st->fused) {
    /* z is the residual, or (weighted 0) the output itself: cuDNN requires one */
    const float alpha2 = st->has_residual ? 1.0f : 0.0f;
    const void* z = st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : out[0].data;
    cudnnStatus_t r = cudnnConvolutionBiasActivationForward(
        handle, &one, st->x_desc, x, st->w_desc, w, st->conv_desc, st->algo, workspace, st->workspace_bytes, &alpha2,
        st->y_desc, z, st->bias_desc, in[2].data, st->act_desc, st->y_desc, out[0].data);
    /* a combination cuDNN does not fuse for this geometry and algorithm runs unfused below */
    if (r != CUDNN_STATUS_NOT_SUPPORTED)
      return cuda_dnn_check(r, "cudnnConvolutionBiasActivationForward (algorithm %d) for Conv node \"%s\" on device %d",
                            (int)st->algo, name, ctx->dev->index);
  }
  GFX_TRY(cuda_dnn_check(cudnnConvolutionForward(handle, &one, st->x_desc, x, st->w_desc, w, st->conv_desc,
                                                 st->algo, workspace, st->workspace_bytes, &zero, st->y_desc,
                                                 out[0].data),
                         "cudnnConvolutionForward (algorithm %d) for Conv node \"%s\" on device %d", (int)st->algo, name,
                         ctx->dev->index));
  return run_epilogue(ctx, node, in, out, st);
}

/* Bias, activation and residual over the output, in place. */
static gfx_status run_epilogue(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                               const conv_state* st) {
  const char* name = cuda_node_name(node);
  const void* bias = st->has_bias ? in[2].data : NULL;
  const void* residual = st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : NULL;
  if (!bias && !residual && st->epilogue.activation == IR_ACT_NONE) return NULL;
  if (node->params.conv.channels_last)
    return cuda_check(cuda_conv_epilogue_nhwc_run(st->dtype, out[0].data, bias, residual, st->out_elements,
                                                  st->out_channels, st->epilogue, (cudaStream_t)ctx->stream),
                      "bias/activation/residual epilogue of Conv node \"%s\" on device %d", name, ctx->dev->index);
  return cuda_check(cuda_conv_epilogue_run(st->dtype, out[0].data, bias, residual, st->out_batch, st->out_channels,
                                           st->out_plane, st->epilogue, (cudaStream_t)ctx->stream),
                    "bias/activation/residual epilogue of Conv node \"%s\" on device %d", name, ctx->dev->index);
}

gfx_status cuda_run_conv(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  if (node->params.conv.chain) return cuda_run_conv_chain(ctx, node, in, out, state);
  conv_state* st = (conv_state*)state; /* the 1x1 product sets its bias pointer under its lock */
  GFX_TRY(cuda_lib_check_prepared(ctx, node, st, st ? st->device : -1,
                                  st ? (gfx_shape[]){st->x_shape, st->w_shape} : NULL, st ? 2 : 0, in,
                                  st ? st->scratch_bytes : 0));
  const int max_inputs = IR_CONV_RESIDUAL_INPUT + 1;
  GFX_TRY(cuda_nn_require_dtype(node, in, node->n_inputs < max_inputs ? node->n_inputs : max_inputs, st->dtype, "input"));
  GFX_TRY(cuda_nn_require_dtype(node, out, 1, st->dtype, "output"));
  if (st->nothing_to_do) return NULL;
  if (st->has_residual && (!in[IR_CONV_RESIDUAL_INPUT].data || in[IR_CONV_RESIDUAL_INPUT].data == out[0].data))
    /* cuDNN writes the output before the epilogue reads the residual */
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: Conv node \"%s\": residual input %s", cuda_node_name(node),
                     in[IR_CONV_RESIDUAL_INPUT].data ? "is the output's own memory" : "has no data");
  if (st->narrow) {
    GFX_TRY(cuda_use_device(ctx->dev->index));
    return cuda_check(cuda_conv_narrow_run(&st->narrow_conv, in[0].data, in[1].data, st->has_bias ? in[2].data : NULL,
                                           st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : NULL, out[0].data,
                                           (cudaStream_t)ctx->stream),
                      "few-channel Conv node \"%s\" on device %d", cuda_node_name(node), ctx->dev->index);
  }
  if (st->thin) {
    GFX_TRY(cuda_use_device(ctx->dev->index));
    return cuda_check(cuda_conv_thin_run(&st->thin_conv, in[0].data, in[1].data, st->has_bias ? in[2].data : NULL,
                                         st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : NULL, out[0].data,
                                         (cudaStream_t)ctx->stream),
                      "few-output-channel Conv node \"%s\" on device %d", cuda_node_name(node), ctx->dev->index);
  }
  if (st->tf32x3) {
    GFX_TRY(cuda_use_device(ctx->dev->index));
    return cuda_check(cuda_conv_tf32x3_run(&st->tf32x3_conv, in[0].data, in[1].data, st->has_bias ? in[2].data : NULL,
                                           st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : NULL, out[0].data,
                                           (cudaStream_t)ctx->stream),
                      "float32 tensor-core Conv node \"%s\" on device %d", cuda_node_name(node), ctx->dev->index);
  }
  if (st->pointwise) {
    GFX_TRY(cuda_use_device(ctx->dev->index));
    GFX_TRY(cuda_pointwise_product_run(ctx, node, &st->product, in[0].data, in[1].data,
                                       st->has_bias ? in[2].data : NULL,
                                       st->has_residual ? in[IR_CONV_RESIDUAL_INPUT].data : NULL, out[0].data,
                                       ctx->scratch, ctx->scratch ? ctx->scratch_bytes : 0));
    return st->fused ? NULL : run_epilogue(ctx, node, in, out, st);
  }
  cudnnHandle_t handle = NULL;
  GFX_TRY(cuda_dnn_acquire(ctx->dev->index, &handle)); /* also makes the device current */
  gfx_status s = run_with_handle(ctx, node, in, out, st, handle);
  cuda_dnn_release(ctx->dev->index, handle);
  return s;
}
