/* gfxep CUDA backend — Conv nodes that are convolution chains (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT),
 * run by the chain kernel (cuda_conv_chain.h). ir_fuse_for asks cuda_conv_chain_supports before it
 * makes a chain, so a chain node reaches this backend only where the kernel runs it and pays. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_conv_chain.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_nn_types.h"

typedef struct chain_state {
  cuda_node_state base;
  int device;
  gfx_shape expected[IR_CONV_CHAIN_WEIGHT_INPUT + 1]; /* inputs 0..4 as prepared (rank -1: absent) */
  int has_first_bias;
  cuda_conv_chain plan;
} chain_state;

static void chain_state_release(cuda_node_state* base) { free(base); }

static int dim_ok(int64_t v) { return v >= 1 && v <= INT_MAX; }

/* The kernel's dims from the shapes of x, the first weights and the second weights; NOT_SUPPORTED
 * naming the value that does not fit a chain of two 3x3 convolutions. */
static gfx_status chain_dims(const char* name, const ir_conv_params* p, int dtype, const gfx_shape* x,
                             const gfx_shape* w_first, const gfx_shape* w, cuda_conv_chain* c) {
  char xs[96], as[96], bs[96];
  if (x->rank != 4 || w_first->rank != 4 || w->rank != 4)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\": input %s, weights %s and %s "
                     "(rank 4 each wanted)", name, gfx_shape_str(x, xs, sizeof xs), gfx_shape_str(w_first, as, sizeof as),
                     gfx_shape_str(w, bs, sizeof bs));
  const int64_t c_in = p->channels_last ? x->dims[3] : x->dims[1];
  const int64_t h = p->channels_last ? x->dims[1] : x->dims[2], wd = p->channels_last ? x->dims[2] : x->dims[3];
  const int ok = dim_ok(x->dims[0]) && dim_ok(h) && dim_ok(wd) && dim_ok(c_in) && w_first->dims[1] == c_in &&
                 dim_ok(w_first->dims[0]) && w->dims[1] == w_first->dims[0] && dim_ok(w->dims[0]) &&
                 w_first->dims[2] == 3 && w_first->dims[3] == 3 && w->dims[2] == 3 && w->dims[3] == 3;
  if (!ok)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\": input %s with weights %s then %s "
                     "is no chain of two 3x3 convolutions", name, gfx_shape_str(x, xs, sizeof xs),
                     gfx_shape_str(w_first, as, sizeof as), gfx_shape_str(w, bs, sizeof bs));
  *c = (cuda_conv_chain){.dtype = dtype, .channels_last = p->channels_last, .n = (int)x->dims[0], .h = (int)h,
                         .w = (int)wd, .c_in = (int)c_in, .c_mid = (int)w_first->dims[0], .c_out = (int)w->dims[0],
                         .first = {.activation = p->chain_activation, .alpha = p->chain_alpha, .beta = p->chain_beta},
                         .second = {.activation = p->activation, .alpha = p->act_alpha, .beta = p->act_beta}};
  return NULL;
}

/* The geometry the kernel is limited to, beyond its channel counts (the fusion checks the same). */
static gfx_status check_geometry(const char* name, const ir_conv_params* p) {
  int ok = !p->nchw_input && p->residual == IR_RES_NONE && p->spatial == 2 && p->group == 1 &&
           p->auto_pad == IR_PAD_NOTSET;
  for (int i = 0; ok && i < 2; i++)
    ok = p->strides[i] == 1 && p->dilations[i] == 1 && p->pads[i] == 1 && p->pads[2 + i] == 1;
  if (!ok)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\": only 3x3 convolutions of stride 1, "
                     "dilation 1, pads 1 and one group, without a residual, are implemented", name);
  return NULL;
}

/* Plans the kernel for c on device: NOT_SUPPORTED where it does not apply or fit. */
static gfx_status plan_on(int device, const char* name, cuda_conv_chain* c) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    major = 0;
  }
  if (!cuda_conv_chain_applies(c->dtype, c->c_in, c->c_mid, c->c_out, major))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\" of %s, %d -> %d -> %d channels: the "
                     "kernel takes float16 or bfloat16, input and middle channels multiples of 16, at most %d channels, "
                     "compute capability 8.0 (this device: %d)", name, gfx_dtype_name(c->dtype), c->c_in, c->c_mid,
                     c->c_out, CUDA_CONV_CHAIN_MAX_CHANNELS, major);
  GFX_TRY(cuda_use_device(device));
  const cudaError_t err = cuda_conv_chain_plan(c);
  if (err == cudaSuccess) return NULL;
  (void)cudaGetLastError();
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\" (%d -> %d -> %d channels, %dx%d): no "
                   "tile fits this device's shared memory (%s)", name, c->c_in, c->c_mid, c->c_out, c->h, c->w,
                   cudaGetErrorString(err));
}

/* Whether the chain pays against the two convolutions apart (cuDNN, with its bias and activation
 * pass), by GFXEP_CUDA_CONV_CHAIN: "1" wherever the kernel runs (the tests, and models to measure),
 * anything else never. Measured on an H100 in float16, channels-last, the chain has not paid yet:
 * ESPCN x2's 64 -> 32 -> 12 at 540x960 took 243 us in the chain kernel against 228 us for cuDNN's two
 * convolutions and their epilogues (Nsight Compute, locked clocks), the UNet denoiser's 64 -> 32 -> 3
 * at 512x512 147 us against 117 us; NCHW chains (every input element its own 2-byte load into shared
 * memory) were slower still (ESPCN 0.631 against 0.450 ms end to end). The kernel is latency-bound at
 * 16 warps per multiprocessor (its shared memory allows one block), with 11 instructions issued per
 * tensor-core product. */
static gfx_status check_pays(const char* name) {
  const char* choice = getenv("GFXEP_CUDA_CONV_CHAIN");
  if (choice && strcmp(choice, "1") == 0) return NULL;
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\": the two convolutions apart are "
                   "faster on the shapes measured (GFXEP_CUDA_CONV_CHAIN=1 fuses them)", name);
}

gfx_status cuda_conv_chain_supports(int device, const gfx_node_query* q) {
  const char* name = q->desc && q->desc->name ? q->desc->name : "";
  if (!q->desc || q->desc->n_inputs <= IR_CONV_CHAIN_WEIGHT_INPUT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: convolution chain \"%s\" without its first weights", name);
  GFX_TRY(check_geometry(name, &q->params->conv));
  cuda_conv_chain c;
  GFX_TRY(chain_dims(name, &q->params->conv, q->desc->input_dtypes[0], &q->desc->input_shapes[0],
                     &q->desc->input_shapes[IR_CONV_CHAIN_WEIGHT_INPUT], &q->desc->input_shapes[1], &c));
  GFX_TRY(plan_on(device, name, &c));
  return check_pays(name);
}

static int has_input(const ir_node* node, int i) { return node->n_inputs > i && node->inputs[i] >= 0; }

gfx_status cuda_prepare_conv_chain(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                   cuda_node_state** state, size_t* scratch_bytes) {
  (void)out;
  const char* name = cuda_node_name(node);
  if (!has_input(node, IR_CONV_CHAIN_WEIGHT_INPUT) || node->n_outputs < 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: convolution chain \"%s\" has %d inputs (its first weights "
                     "are input %d) and %d outputs", name, node->n_inputs, IR_CONV_CHAIN_WEIGHT_INPUT, node->n_outputs);
  GFX_TRY(check_geometry(name, &node->params.conv));
  chain_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: convolution chain \"%s\": no host memory for its state", name);
  st->base.release = chain_state_release;
  st->device = device;
  for (int i = 0; i <= IR_CONV_CHAIN_WEIGHT_INPUT; i++) {
    st->expected[i] = in[i];
    if (!has_input(node, i)) st->expected[i].rank = -1;
  }
  st->has_first_bias = has_input(node, IR_CONV_CHAIN_WEIGHT_INPUT + 1);
  const int dtype = node->params.conv.dtype ? node->params.conv.dtype : GFX_DTYPE_F32;
  gfx_status s = chain_dims(name, &node->params.conv, dtype, &in[0], &in[IR_CONV_CHAIN_WEIGHT_INPUT], &in[1], &st->plan);
  if (!s) s = plan_on(device, name, &st->plan);
  if (s) {
    free(st);
    return s;
  }
  *state = &st->base;
  *scratch_bytes = 0;
  return NULL;
}

gfx_status cuda_run_conv_chain(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                               cuda_node_state* state) {
  const chain_state* st = (const chain_state*)state;
  GFX_TRY(cuda_lib_check_prepared(ctx, node, st, st ? st->device : -1, st ? st->expected : NULL,
                                  st ? IR_CONV_CHAIN_WEIGHT_INPUT + 1 : 0, in, 0));
  const int bias_input = IR_CONV_CHAIN_WEIGHT_INPUT + 1;
  const void* first_bias = st->has_first_bias ? in[bias_input].data : NULL;
  if (st->has_first_bias && (!first_bias || in[bias_input].shape.rank != 1 || in[bias_input].shape.dims[0] != st->plan.c_mid))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: convolution chain \"%s\": the first bias (input %d) must "
                     "have %d elements", cuda_node_name(node), bias_input, st->plan.c_mid);
  const gfx_tensor typed[] = {in[0], in[1], in[2], in[IR_CONV_CHAIN_WEIGHT_INPUT], st->has_first_bias ? in[bias_input] : in[3]};
  GFX_TRY(cuda_nn_require_dtype(node, typed, 5, st->plan.dtype, "input"));
  GFX_TRY(cuda_nn_require_dtype(node, out, 1, st->plan.dtype, "output"));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return cuda_check(cuda_conv_chain_run(&st->plan, in[0].data, in[IR_CONV_CHAIN_WEIGHT_INPUT].data, first_bias,
                                        in[1].data, has_input(node, 2) ? in[2].data : NULL, out[0].data,
                                        (cudaStream_t)ctx->stream),
                    "convolution chain \"%s\" on device %d", cuda_node_name(node), ctx->dev->index);
}
