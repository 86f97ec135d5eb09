/* gfxep CUDA backend — host side of Attention, as parsed and as fused (ir/fuse_attention.c): checks,
 * the choice of kernel and the launch (kernels in cuda_attention.cu and cuda_attention_tiled.cu).
 * Stateless: the geometry travels to the kernels by value; only the row kernel on rows of more keys
 * than fit in shared memory asks for scratch.
 *
 * GFXEP_CUDA_ATTENTION=rows runs every node on the row kernel (to compare the tiled kernels with);
 * =simt runs float32 on the tiled float32 kernel, which is otherwise not chosen (measured slower). */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_internal.h"
#include "ir/ops_nn.h"

static cuda_attention_args attention_args(const ir_attention_params* p, const ir_attention_geom* g) {
  cuda_attention_args a = {.batch = g->batch, .q_heads = g->q_heads, .group = g->group, .q_seq = g->q_seq,
                           .kv_seq = g->kv_seq, .head_size = g->head_size, .v_head_size = g->v_head_size,
                           .mask_kind = !g->has_mask ? 0 : p->mask_bool ? 1 : 2, .has_mask2 = g->has_mask2,
                           .is_causal = p->is_causal, .scale = g->scale};
  for (int k = 0; k < 4; k++) {
    a.q_stride[k] = g->q_stride[k], a.k_stride[k] = g->k_stride[k];
    a.v_stride[k] = g->v_stride[k], a.y_stride[k] = g->y_stride[k];
    a.mask_stride[k] = g->mask_stride[k], a.mask2_stride[k] = g->mask2_stride[k];
  }
  return a;
}

static int rows_only(void) {
  const char* e = getenv("GFXEP_CUDA_ATTENTION");
  return e && strcmp(e, "rows") == 0;
}

/* The kernel for this node on this device. */
static cuda_attention_path path_for(int device, int dtype, const cuda_attention_args* a) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    major = 0; /* unknown: no tensor-core path */
  }
  return cuda_attention_choose(dtype, a, major, rows_only());
}

static int n_inputs_of(const ir_attention_params* p) {
  return 3 + (p->has_mask != 0) + (p->fused && p->has_mask2);
}

gfx_status cuda_prepare_attention(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  cuda_node_state** state, size_t* scratch_bytes) {
  (void)out, (void)state;
  const ir_attention_params* p = &node->params.attention;
  if (node->n_inputs < n_inputs_of(p)) return NULL; /* run reports it */
  ir_attention_geom g;
  gfx_status s = ir_attention_geometry(p, in, &g);
  if (s) {
    gfx_status_free(s);
    return NULL;
  }
  const cuda_attention_args a = attention_args(p, &g);
  /* the element type is the node's: any float type gives the same path choice for scratch */
  *scratch_bytes = cuda_attention_scratch(&a, path_for(device, GFX_DTYPE_F32, &a));
  return NULL;
}

gfx_status cuda_run_attention(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                              cuda_node_state* state) {
  (void)state;
  const ir_attention_params* p = &node->params.attention;
  const int n = n_inputs_of(p);
  if (node->n_inputs < n || node->n_outputs != 1 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs);
  gfx_shape shapes[5];
  for (int i = 0; i < n; i++) shapes[i] = in[i].shape;
  ir_attention_geom g;
  GFX_TRY(ir_attention_geometry(p, shapes, &g));
  const int dtype = in[0].dtype;
  int ok = (dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && in[1].dtype == dtype &&
           in[2].dtype == dtype && out[0].dtype == dtype;
  if (p->has_mask && in[3].dtype != (p->mask_bool ? GFX_DTYPE_BOOL : dtype)) ok = 0;
  if (g.has_mask2 && in[4].dtype != dtype) ok = 0;
  if (!ok)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s inputs are not handled",
                     ir_op_name(node->op), cuda_node_name(node), gfx_dtype_name(dtype));
  if (!gfx_shape_equal(&out[0].shape, &g.y))
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": Y has the wrong shape", ir_op_name(node->op),
                     cuda_node_name(node));
  if (gfx_shape_numel(&g.y) == 0) return NULL;
  const size_t es = gfx_dtype_size(dtype);
  /* the views' offsets (0 for an Attention node as parsed) */
  const char* q = (const char*)in[0].data + (size_t)g.q_offset * es;
  const char* k = (const char*)in[1].data + (size_t)g.k_offset * es;
  const char* v = (const char*)in[2].data + (size_t)g.v_offset * es;
  char* y = (char*)out[0].data + (size_t)g.y_offset * es;
  cuda_attention_args a = attention_args(p, &g);
  const cuda_attention_path path = path_for(ctx->dev->index, dtype, &a);
  a.vector_loads = cuda_attention_vector_loads(&a, q, k, v, es);
  const size_t need = cuda_attention_scratch(&a, path);
  if (need > ctx->scratch_bytes || (need && !ctx->scratch))
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": %zu bytes of scratch, %zu given",
                     ir_op_name(node->op), cuda_node_name(node), need, ctx->scratch_bytes);
  GFX_TRY(cuda_use_device(ctx->dev->index));
  cudaError_t err = cuda_attention(dtype, path, q, k, v, p->has_mask ? in[3].data : NULL, g.has_mask2 ? in[4].data : NULL,
                                   y, a, ctx->scratch, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}
