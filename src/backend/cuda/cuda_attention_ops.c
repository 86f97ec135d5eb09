/* gfxep CUDA backend — host side of Attention: checks and the launch (kernel in
 * cuda_attention.cu). Stateless: the geometry travels to the kernel by value; only a row of more
 * keys than fit in shared memory asks for scratch. */
#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_internal.h"
#include "ir/ops_nn.h"

static cuda_attention_args attention_args(const ir_attention_params* p, const ir_attention_geom* g) {
  cuda_attention_args a = {.batch = g->batch, .q_heads = g->q_heads, .group = g->group, .q_seq = g->q_seq,
                           .kv_seq = g->kv_seq, .head_size = g->head_size, .v_head_size = g->v_head_size,
                           .mask_kind = !g->has_mask ? 0 : p->mask_bool ? 1 : 2, .is_causal = p->is_causal,
                           .scale = g->scale};
  for (int k = 0; k < 3; k++) {
    a.q_stride[k] = g->q_stride[k], a.k_stride[k] = g->k_stride[k];
    a.v_stride[k] = g->v_stride[k], a.y_stride[k] = g->y_stride[k];
  }
  for (int k = 0; k < 4; k++) a.mask_stride[k] = g->mask_stride[k];
  return a;
}

gfx_status cuda_prepare_attention(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)state;
  const ir_attention_params* p = &node->params.attention;
  if (node->n_inputs < (p->has_mask ? 4 : 3)) return NULL; /* run reports it */
  ir_attention_geom g;
  gfx_status s = ir_attention_geometry(p, in, &g);
  if (s) {
    gfx_status_free(s);
    return NULL;
  }
  const cuda_attention_args a = attention_args(p, &g);
  *scratch_bytes = cuda_attention_scratch(&a);
  return NULL;
}

gfx_status cuda_run_attention(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                              cuda_node_state* state) {
  (void)state;
  const ir_attention_params* p = &node->params.attention;
  const int n = p->has_mask ? 4 : 3;
  if (node->n_inputs < n || node->n_outputs != 1 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs);
  gfx_shape shapes[4];
  for (int i = 0; i < n; i++) shapes[i] = in[i].shape;
  ir_attention_geom g;
  GFX_TRY(ir_attention_geometry(p, shapes, &g));
  const int dtype = in[0].dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || in[1].dtype != dtype ||
      in[2].dtype != dtype || out[0].dtype != dtype ||
      (p->has_mask && in[3].dtype != (p->mask_bool ? GFX_DTYPE_BOOL : dtype)))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s inputs are not handled",
                     ir_op_name(node->op), cuda_node_name(node), gfx_dtype_name(dtype));
  if (!gfx_shape_equal(&out[0].shape, &g.y))
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": Y has the wrong shape", ir_op_name(node->op),
                     cuda_node_name(node));
  if (gfx_shape_numel(&g.y) == 0) return NULL;
  const cuda_attention_args a = attention_args(p, &g);
  const size_t need = cuda_attention_scratch(&a);
  if (need > ctx->scratch_bytes || (need && !ctx->scratch))
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": %zu bytes of scratch, %zu given",
                     ir_op_name(node->op), cuda_node_name(node), need, ctx->scratch_bytes);
  GFX_TRY(cuda_use_device(ctx->dev->index));
  cudaError_t err = cuda_attention(dtype, in[0].data, in[1].data, in[2].data, p->has_mask ? in[3].data : NULL,
                                   out[0].data, a, ctx->scratch, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}
