/* gfxep CUDA backend — host side of the resampling ops: checks and launches (kernels in
 * cuda_resize.cu and, for GridSample, cuda_grid_sample.cu). The Resize and GridSample geometry is a
 * few operations per run and travels to the kernel by value; a Resize keeps only its whole upscaling
 * factors, found once. */
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_resize.h"
#include "ir/shape.h"

static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, const gfx_shape* expected) {
  if (node->n_inputs < 1 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs);
  if (out[0].dtype != in[0].dtype)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output is %s but input is %s", ir_op_name(node->op),
                     cuda_node_name(node), gfx_dtype_name(out[0].dtype), gfx_dtype_name(in[0].dtype));
  if (!gfx_shape_equal(&out[0].shape, expected)) {
    char got[128], want[128];
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output shape %s, expected %s", ir_op_name(node->op),
                     cuda_node_name(node), gfx_shape_str(&out[0].shape, got, sizeof got),
                     gfx_shape_str(expected, want, sizeof want));
  }
  if (gfx_shape_numel(expected) > 0 && (!in[0].data || !out[0].data))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\": a tensor has no memory", ir_op_name(node->op),
                     cuda_node_name(node));
  return NULL;
}

/* A nearest upscaling by whole factors keeps them, and a linear or cubic one that upscales its rows by
 * a whole factor its phases, found once for the input shape it was prepared for (both walk every
 * output column); everything else is stateless. */
typedef struct resize_state {
  cuda_node_state base;
  gfx_shape input;
  int fx, fy;              /* nearest */
  int phased;
  cuda_resize_pattern phases; /* linear and cubic */
} resize_state;

static void resize_state_release(cuda_node_state* self) { free(self); }

gfx_status cuda_prepare_resize(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)scratch_bytes;
  ir_resize_geom g;
  gfx_shape expected;
  gfx_status s = ir_resize_geometry(node, &in[0], &g, &expected);
  int fx = 0, fy = 0;
  cuda_resize_pattern phases;
  int phased = 0;
  if (s || (!cuda_resize_nearest_factors(&g, &fx, &fy) && !(phased = cuda_resize_pattern_of(&g, &phases)))) {
    gfx_status_free(s); /* run reports it */
    return NULL;
  }
  resize_state* st = calloc(1, sizeof *st);
  if (!st)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: %s node \"%s\": no host memory for its state",
                     ir_op_name(node->op), cuda_node_name(node));
  st->base.release = resize_state_release;
  st->input = in[0];
  st->fx = fx;
  st->fy = fy;
  st->phased = phased;
  if (phased) st->phases = phases;
  *state = &st->base;
  return NULL;
}

gfx_status cuda_run_resize(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  ir_resize_geom g;
  gfx_shape expected;
  GFX_TRY(ir_resize_geometry(node, &in[0].shape, &g, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s is not handled", ir_op_name(node->op),
                     cuda_node_name(node), gfx_dtype_name(dtype));
  if (gfx_shape_numel(&expected) == 0) return NULL;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  const resize_state* st = (const resize_state*)state;
  cudaError_t err = cudaErrorNotSupported;
  if (st && gfx_shape_equal(&st->input, &in[0].shape))
    err = st->phased ? cuda_resize_up(dtype, in[0].data, out[0].data, &g, &st->phases, (cudaStream_t)ctx->stream)
                     : cuda_resize_nearest_up(dtype, in[0].data, out[0].data, &g, st->fx, st->fy,
                                              (cudaStream_t)ctx->stream);
  if (err == cudaErrorNotSupported) err = cuda_resize(dtype, in[0].data, out[0].data, g, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

gfx_status cuda_prepare_roi_align(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL;
}

gfx_status cuda_run_roi_align(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                              cuda_node_state* state) {
  (void)state;
  if (node->n_inputs != 3 || !in)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs; 3 are expected",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs);
  const gfx_shape shapes[3] = {in[0].shape, in[1].shape, in[2].shape};
  gfx_shape expected;
  GFX_TRY(ir_infer_roi_align(node, shapes, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || in[1].dtype != dtype ||
      in[2].dtype != GFX_DTYPE_I64)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": X %s, rois %s, batch_indices %s are not "
                     "handled", ir_op_name(node->op), cuda_node_name(node), gfx_dtype_name(dtype),
                     gfx_dtype_name(in[1].dtype), gfx_dtype_name(in[2].dtype));
  if (gfx_shape_numel(&expected) == 0) return NULL;
  if (!in[1].data || !in[2].data)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\": rois or batch_indices has no memory",
                     ir_op_name(node->op), cuda_node_name(node));
  const ir_roi_align_params* p = &node->params.roi_align;
  const cuda_roi_align_args a = {.n = in[0].shape.dims[0], .c = in[0].shape.dims[1], .h = in[0].shape.dims[2],
                                 .w = in[0].shape.dims[3], .regions = in[1].shape.dims[0], .out_h = p->out_h,
                                 .out_w = p->out_w, .sampling_ratio = p->sampling_ratio,
                                 .spatial_scale = p->spatial_scale, .half_pixel = p->half_pixel,
                                 .mode_max = p->mode_max};
  GFX_TRY(cuda_use_device(ctx->dev->index));
  cudaError_t err =
      cuda_roi_align(dtype, in[0].data, in[1].data, in[2].data, out[0].data, a, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

gfx_status cuda_prepare_space_depth(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                    cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL;
}

gfx_status cuda_run_space_depth(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                cuda_node_state* state) {
  (void)state;
  const int to_space = node->op == GFX_OP_DEPTH_TO_SPACE;
  gfx_shape expected;
  GFX_TRY(to_space ? ir_infer_depth_to_space(node, &in[0].shape, &expected)
                   : ir_infer_space_to_depth(node, &in[0].shape, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const size_t es = gfx_dtype_size(in[0].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s is not handled", ir_op_name(node->op),
                     cuda_node_name(node), gfx_dtype_name(in[0].dtype));
  if (gfx_shape_numel(&expected) == 0) return NULL;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  const ir_space_depth_params* p = &node->params.space_depth;
  cudaError_t err = cuda_space_depth(es, to_space, p->crd, to_space && p->nhwc_input, p->blocksize, expected.dims,
                                     in[0].data, out[0].data, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

gfx_status cuda_prepare_grid_sample(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                    cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL; /* stateless; run derives the geometry and checks the shapes */
}

gfx_status cuda_run_grid_sample(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                cuda_node_state* state) {
  (void)state;
  if (node->n_inputs != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs", ir_op_name(node->op),
                     cuda_node_name(node), node->n_inputs);
  ir_grid_geom g;
  gfx_shape expected;
  GFX_TRY(ir_grid_sample_geometry(node, &in[0].shape, &in[1].shape, &g, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype;
  const int grid_dtype = in[1].dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16) || (grid_dtype != GFX_DTYPE_F32 && grid_dtype != GFX_DTYPE_F16))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": input %s with grid %s is not handled",
                     ir_op_name(node->op), cuda_node_name(node), gfx_dtype_name(dtype), gfx_dtype_name(in[1].dtype));
  if (gfx_shape_numel(&expected) == 0) return NULL;
  if (!in[1].data)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\": the grid has no memory",
                     ir_op_name(node->op), cuda_node_name(node));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  cudaError_t err =
      cuda_grid_sample(dtype, grid_dtype, in[0].data, in[1].data, out[0].data, g, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}
