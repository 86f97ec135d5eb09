/* gfxep Vulkan backend — Attention (shaders/attention.comp), as parsed (opset 23: masks, causal,
 * grouped kv heads) and as fused by ir/fuse_attention.c (strided views of Q, K, V and Y, up to two
 * float masks; taken only when asked, see fused_asked): the row kernel of the CUDA backend, one
 * workgroup per query row, the scores in node scratch (a row per workgroup).
 *
 * node_prepare resolves the IR's geometry (ir_attention_geometry) into a small host-visible block the
 * shader reads by address, and asks for the scratch. float32, float16 with shaderFloat16 + 16-bit
 * storage, and bfloat16 (16-bit words) with 16-bit storage; the module reads bool masks as bytes, so it needs
 * storageBuffer8BitAccess. Tensors below 2^32 elements. Each invocation walks a row's keys once per
 * element of the head it writes: on CPU implementations, which end an invocation after 65535 loop
 * turns, longer walks (or shapes not known when the node is claimed) are declined.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_nn.h"

#define ATT_GROUP 256
#define MAX_GROUPS 65535u
#define SCRATCH_CAP ((size_t)64 << 20) /* score rows in flight are capped to this much scratch */
#define SOFTWARE_WALK_LIMIT 60000

typedef struct attention_geom_gpu {
  uint32_t batch, q_heads, group, q_seq;
  uint32_t kv_seq, head_size, v_head_size, rows;
  uint32_t mask_kind, has_mask2, is_causal;
  float scale;
  uint32_t q_stride[4], k_stride[4], v_stride[4], y_stride[4], mask_stride[4], mask2_stride[4];
} attention_geom_gpu;
_Static_assert(sizeof(attention_geom_gpu) == 48 + 6 * 16, "attention_geom_gpu layout");

typedef struct attention_push {
  uint64_t q, k, v, mask, mask2, y, scores, geom;
} attention_push;
_Static_assert(sizeof(attention_push) <= VK_PUSH_BYTES, "push layout");

typedef struct attention_state {
  vk_family family; /* first: node_release dispatches on it */
  vk_buffer geom;
  uint32_t groups;
  int64_t q_offset, k_offset, v_offset, y_offset; /* the views' element offsets */
  size_t scratch;
  vk_pipe* pipe;
} attention_state;

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static gfx_status shader_for(vk_device* d, int dtype, vk_shader_id* out) {
  if (!d->has_8bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Attention needs storageBuffer8BitAccess, which %s lacks",
                     d->info.name);
  if (dtype == GFX_DTYPE_F32) {
    *out = VK_SHADER_ATTENTION_F32;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16 && d->has_f16) {
    *out = VK_SHADER_ATTENTION_F16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage) { /* 16-bit words, float32 arithmetic */
    *out = VK_SHADER_ATTENTION_BF16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Attention of float16 needs shaderFloat16 and "
                     "storageBuffer16BitAccess, which %s lacks", d->info.name);
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Attention of %s is not implemented", gfx_dtype_name(dtype));
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The workgroups for g's rows: as many as rows, within the grid and the scratch cap. */
static uint32_t groups_for(const ir_attention_geom* g) {
  const int64_t rows = g->batch * g->q_heads * g->q_seq;
  int64_t cap = g->kv_seq > 0 ? (int64_t)(SCRATCH_CAP / (sizeof(float) * (size_t)g->kv_seq)) : (int64_t)MAX_GROUPS;
  if (cap > (int64_t)MAX_GROUPS) cap = MAX_GROUPS;
  if (cap < 1) cap = 1;
  return (uint32_t)(rows < 1 ? 1 : rows < cap ? rows : cap);
}

/* The loop turns of one invocation: its rows times (the score walk, the weights, the output walk). */
static int64_t walk_turns(const ir_attention_geom* g) {
  const int64_t rows = g->batch * g->q_heads * g->q_seq;
  const int64_t per_row = ceil_div(g->kv_seq, ATT_GROUP) * (g->head_size + 2) + ceil_div(g->v_head_size, ATT_GROUP) * g->kv_seq;
  return ceil_div(rows, groups_for(g)) * per_row;
}

/* What the shader's 32-bit indices allow, and on CPU devices its walks. */
static gfx_status check_geometry(vk_device* d, const ir_attention_geom* g) {
  const int64_t rows = g->batch * g->q_heads * g->q_seq;
  if (rows >= ((int64_t)1 << 32) || (int64_t)groups_for(g) * g->kv_seq >= ((int64_t)1 << 32))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Attention of %lld rows of %lld keys: beyond 32-bit indices",
                     (long long)rows, (long long)g->kv_seq);
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && walk_turns(g) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Attention of %lld keys walks longer than %s (a CPU "
                     "implementation) runs in one invocation", (long long)g->kv_seq, d->info.name);
  return NULL;
}

/* A fused attention (ir/fuse_attention.c asks) runs here only with GFXEP_VULKAN_FUSED_ATTENTION=1:
 * the unfused products it replaces (MatMul on cooperative matrices, Softmax) are the path measured on
 * the H200; this row kernel has not been timed against them. */
static int fused_asked(void) {
  const char* e = getenv("GFXEP_VULKAN_FUSED_ATTENTION");
  return e && strcmp(e, "1") == 0;
}

gfx_status vk_supports_attention(vk_device* d, const gfx_node_query* q) {
  if (q->params && q->params->attention.fused && !fused_asked())
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a fused attention stays unfused (its products are the "
                     "measured path; GFXEP_VULKAN_FUSED_ATTENTION=1 takes it)");
  if (!q->desc) return NULL; /* no types to judge: the run checks them */
  vk_shader_id shader;
  GFX_TRY(shader_for(d, q->desc->input_dtypes[0], &shader));
  if (!q->params) return NULL;
  const ir_attention_params* p = &q->params->attention;
  ir_attention_geom g;
  gfx_status s = ir_attention_geometry(p, q->desc->input_shapes, &g);
  if (s) { /* shapes not known yet: judged when prepared */
    gfx_status_free(s);
    return vk_cpu_needs_shapes(d, "Attention");
  }
  return check_geometry(d, &g);
}

static uint32_t u32(int64_t v) { return (uint32_t)v; }

gfx_status vk_prepare_attention(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                void** state, size_t* scratch_bytes) {
  (void)out;
  *state = NULL;
  const ir_attention_params* p = &node->params.attention;
  ir_attention_geom g;
  gfx_status s = ir_attention_geometry(p, in, &g);
  if (!s) s = check_geometry(d, &g);
  for (int i = 0; !s && i < node->n_inputs; i++) s = vk_check_elements_u32(node, &in[i], 1);
  if (!s) s = vk_check_elements_u32(node, &g.y, 1);
  if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (Attention)", label(node));
  attention_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_ATTENTION;
  st->groups = groups_for(&g);
  st->q_offset = g.q_offset, st->k_offset = g.k_offset, st->v_offset = g.v_offset, st->y_offset = g.y_offset;
  st->scratch = sizeof(float) * (size_t)st->groups * (size_t)(g.kv_seq > 0 ? g.kv_seq : 1);
  attention_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  gg.batch = u32(g.batch), gg.q_heads = u32(g.q_heads), gg.group = u32(g.group > 0 ? g.group : 1);
  gg.q_seq = u32(g.q_seq), gg.kv_seq = u32(g.kv_seq), gg.head_size = u32(g.head_size);
  gg.v_head_size = u32(g.v_head_size), gg.rows = u32(g.batch * g.q_heads * g.q_seq);
  gg.mask_kind = !g.has_mask ? 0 : p->mask_bool ? 1 : 2;
  gg.has_mask2 = (uint32_t)(g.has_mask2 != 0);
  gg.is_causal = (uint32_t)(p->is_causal != 0);
  gg.scale = g.scale;
  for (int k = 0; k < 4; k++) {
    gg.q_stride[k] = u32(g.q_stride[k]), gg.k_stride[k] = u32(g.k_stride[k]), gg.v_stride[k] = u32(g.v_stride[k]);
    gg.y_stride[k] = u32(g.y_stride[k]), gg.mask_stride[k] = u32(g.mask_stride[k]);
    gg.mask2_stride[k] = u32(g.mask2_stride[k]);
  }
  s = vk_buffer_create(d, sizeof gg, VK_MEM_CONSTANTS, &st->geom);
  if (s) {
    free(st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (Attention)", label(node));
  }
  memcpy(st->geom.mapped, &gg, sizeof gg);
  if (scratch_bytes) *scratch_bytes = st->scratch;
  *state = st;
  return NULL;
}

void vk_release_attention(vk_device* d, void* state) {
  attention_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  free(st);
}

static uint64_t addr_at(const void* p, int64_t offset, size_t es) {
  return p ? (uint64_t)(uintptr_t)p + (uint64_t)offset * es : 0;
}

gfx_status vk_run_attention(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, void* state) {
  attention_state* st = state;
  const ir_attention_params* p = &node->params.attention;
  const int n_in = 3 + (p->has_mask != 0) + (p->fused && p->has_mask2);
  if (!st || !in || !out || node->n_inputs < n_in || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (Attention) run without its state or tensors",
                     label(node));
  const int dtype = in[0].dtype;
  int ok = in[1].dtype == dtype && in[2].dtype == dtype && out[0].dtype == dtype;
  if (p->has_mask && in[3].dtype != (p->mask_bool ? GFX_DTYPE_BOOL : dtype)) ok = 0;
  if (p->fused && p->has_mask2 && in[4].dtype != dtype) ok = 0;
  if (!ok)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (Attention): inputs and output of %s do not "
                     "agree in type", label(node), gfx_dtype_name(dtype));
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;
  if (!ctx->scratch || ctx->scratch_bytes < st->scratch)
    return gfx_error(GFX_ERR_INTERNAL, "vulkan backend: node '%s' (Attention): %zu bytes of scratch, %zu given",
                     label(node), st->scratch, ctx->scratch ? ctx->scratch_bytes : 0);
  if (!st->pipe) {
    vk_shader_id shader;
    GFX_TRY(shader_for(d, dtype, &shader));
    GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &st->pipe)); /* the same for every run: the type is the node's */
  }
  const size_t es = gfx_dtype_size(dtype);
  attention_push pc = {.q = addr_at(in[0].data, st->q_offset, es),
                       .k = addr_at(in[1].data, st->k_offset, es),
                       .v = addr_at(in[2].data, st->v_offset, es),
                       .mask = p->has_mask ? addr_at(in[3].data, 0, 1) : 0,
                       .mask2 = p->fused && p->has_mask2 ? addr_at(in[4].data, 0, 1) : 0,
                       .y = addr_at(out[0].data, st->y_offset, es),
                       .scores = addr_at(ctx->scratch, 0, 1),
                       .geom = st->geom.address};
  return vk_dispatch_groups(d, ctx->stream, st->pipe, &pc, sizeof pc, NULL, &st->groups, 1);
}
