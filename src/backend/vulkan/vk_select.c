/* gfxep Vulkan backend — NonZero and NonMaxSuppression as bounded nodes (ir/ops_select.h): output 0
 * written at its bound, output 1 the count, which the executor reads back to cut output 0
 * (ir/dynamic.h). Both give exactly the reference backend's rows, in its order.
 *
 * NonZero (shaders/nonzero.comp): three dispatches in one command buffer: per-chunk counts into node
 * scratch, their prefix sums (one workgroup, which writes the count), the coordinates. Elements of 1
 * to 8 bytes; 1- and 2-byte ones need storageBuffer8BitAccess / storageBuffer16BitAccess. Outputs
 * below 2^32 elements. Every loop of the shader is short (at most chunks / 256 turns), so CPU
 * implementations run it whole.
 *
 * NonMaxSuppression (shaders/nms.comp): six dispatches (candidates ranked by counting, their boxes,
 * a greedy walk per (batch, class) in one workgroup, row offsets, rows), float32/float16/bfloat16,
 * up to 65536 boxes per class (the walk's removal bits live in shared memory). The ranking walks
 * every box of a class per candidate and the greedy walk every later candidate per kept box: on CPU
 * implementations, which end an invocation after 65535 loop turns, classes of more boxes than
 * SOFTWARE_NMS_BOXES are declined.
 */
#include <stdint.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_select.h"

#define NZ_CHUNK (256 * 16) /* nonzero.comp's CHUNK */
#define NZ_MAX_CHUNKS 65535u

typedef struct nonzero_push {
  uint64_t x, y, count, chunks_addr;
  uint32_t numel, chunks, phase, rank;
  uint32_t keep_lo, keep_hi;
  uint32_t dims[GFX_MAX_RANK];
} nonzero_push;
_Static_assert(sizeof(nonzero_push) <= VK_PUSH_BYTES, "push layout");

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
}

/* The bits of an element of dtype that make it nonzero (a float's sign bit alone does not:
 * ir_nonzero_bits), or 0 for a type NonZero does not take. */
static uint64_t keep_bits(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: return 0x7fffffffu;
    case GFX_DTYPE_F16:
    case GFX_DTYPE_BF16: return 0x7fffu;
    case GFX_DTYPE_I32: return 0xffffffffu;
    case GFX_DTYPE_I64: return UINT64_MAX;
    case GFX_DTYPE_I8:
    case GFX_DTYPE_U8:
    case GFX_DTYPE_BOOL: return 0xffu;
    default: return 0;
  }
}

static gfx_status shader_for(vk_device* d, int dtype, vk_shader_id* out) {
  if (keep_bits(dtype) == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonZero of %s is not implemented", gfx_dtype_name(dtype));
  switch (gfx_dtype_size(dtype)) {
    case 1:
      if (!d->has_8bit_storage)
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonZero of %s needs storageBuffer8BitAccess, which "
                         "%s lacks", gfx_dtype_name(dtype), d->info.name);
      *out = VK_SHADER_NONZERO_1;
      return NULL;
    case 2:
      if (!d->has_16bit_storage)
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonZero of %s needs storageBuffer16BitAccess, which "
                         "%s lacks", gfx_dtype_name(dtype), d->info.name);
      *out = VK_SHADER_NONZERO_2;
      return NULL;
    case 4: *out = VK_SHADER_NONZERO_4; return NULL;
    default:
      if (!d->has_int64)
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonZero needs shaderInt64, which %s lacks", d->info.name);
      *out = VK_SHADER_NONZERO_8;
      return NULL;
  }
}

/* ---- NonMaxSuppression ---- */

#define NMS_GROUP 256
#define NMS_MAX_BOXES 65536     /* nms.comp's MAX_BOXES */
#define SOFTWARE_NMS_BOXES 2000 /* 2000 + 2000^2 / 256 loop turns stay below llvmpipe's 65535 */
#define MAX_GROUPS 65535u

typedef struct nms_push {
  uint64_t boxes, scores, y, count, scratch;
  uint32_t segments, n, classes, cap;
  uint32_t phase, center, has_score_threshold, pad0;
  float iou_threshold, score_threshold;
} nms_push;
_Static_assert(sizeof(nms_push) <= VK_PUSH_BYTES, "push layout");

/* nms.comp's scratch in 32-bit words: 6 per candidate (box, area, order), cap per segment for the
 * kept boxes, 3 per segment (counts and offset). */
static uint64_t nms_scratch_words(const ir_nms_geom* g) {
  const uint64_t segments = (uint64_t)(g->batches * g->classes);
  return 6 * segments * (uint64_t)g->boxes + segments * (uint64_t)g->per_class + 3 * segments;
}

static gfx_status nms_shader(vk_device* d, int dtype, vk_shader_id* out) {
  switch (dtype) {
    case GFX_DTYPE_F32: *out = VK_SHADER_NMS_F32; break;
    case GFX_DTYPE_F16: *out = VK_SHADER_NMS_F16; break;
    case GFX_DTYPE_BF16: *out = VK_SHADER_NMS_BF16; break;
    default:
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression of %s boxes is not implemented",
                       gfx_dtype_name(dtype));
  }
  if (dtype != GFX_DTYPE_F32 && !d->has_16bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression of %s needs storageBuffer16BitAccess, "
                     "which %s lacks", gfx_dtype_name(dtype), d->info.name);
  if (!d->has_int64)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression needs shaderInt64, which %s lacks",
                     d->info.name);
  return NULL;
}

/* What the shader's 32-bit indices, its shared removal bits and (on CPU devices) its walks allow. */
static gfx_status nms_limits(vk_device* d, const ir_nms_geom* g) {
  const int64_t segments = g->batches * g->classes;
  if (g->boxes > NMS_MAX_BOXES)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression of %lld boxes per class; up to %d are "
                     "handled", (long long)g->boxes, NMS_MAX_BOXES);
  if (nms_scratch_words(g) >= ((uint64_t)1 << 32) || 3 * g->bound >= ((int64_t)1 << 32) ||
      segments * g->boxes >= ((int64_t)1 << 32))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression of %lld x %lld boxes: beyond 32-bit "
                     "indices", (long long)segments, (long long)g->boxes);
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU &&
      (g->boxes > SOFTWARE_NMS_BOXES || segments * g->boxes > (int64_t)MAX_GROUPS * NMS_GROUP))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonMaxSuppression of %lld x %lld boxes: longer walks "
                     "than %s (a CPU implementation) runs in one invocation", (long long)segments,
                     (long long)g->boxes, d->info.name);
  return NULL;
}

static gfx_status supports_nms(vk_device* d, const gfx_node_query* q) {
  if (!q->desc || q->desc->n_inputs < 2) return NULL; /* no types to judge: the run checks them */
  const ir_node_desc* desc = q->desc;
  vk_shader_id shader;
  GFX_TRY(nms_shader(d, desc->input_dtypes[0], &shader));
  if (!q->params) return NULL;
  ir_nms_geom g;
  gfx_status s = ir_nms_geometry(&q->params->select, &desc->input_shapes[0], &desc->input_shapes[1], &g);
  if (s) { /* shapes not known yet: judged when prepared */
    gfx_status_free(s);
    return vk_cpu_needs_shapes(d, "NonMaxSuppression");
  }
  return nms_limits(d, &g);
}

static gfx_status prepare_nms(vk_device* d, const ir_node* node, const gfx_shape* in, size_t* scratch_bytes) {
  ir_nms_geom g;
  gfx_status s = ir_nms_geometry(&node->params.select, &in[0], &in[1], &g);
  if (!s) s = nms_limits(d, &g);
  if (s) return node_error(node, s);
  if (scratch_bytes) *scratch_bytes = sizeof(uint32_t) * (size_t)(nms_scratch_words(&g) > 0 ? nms_scratch_words(&g) : 1);
  return NULL;
}

static uint32_t clamp_groups(int64_t n) { return n < 1 ? 1 : n > (int64_t)MAX_GROUPS ? MAX_GROUPS : (uint32_t)n; }

static gfx_status run_nms(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                          gfx_tensor* out) {
  const ir_select_params* p = &node->params.select;
  if (node->n_inputs < 2 || node->n_inputs > 5 || node->n_outputs != 2)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs", node->n_inputs,
                                      node->n_outputs));
  const int dtype = in[0].dtype;
  if (in[1].dtype != dtype)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "boxes are %s and scores %s; one float type is expected",
                                      gfx_dtype_name(dtype), gfx_dtype_name(in[1].dtype)));
  vk_shader_id shader;
  ir_nms_geom g;
  gfx_status s = nms_shader(d, dtype, &shader);
  if (!s) s = ir_nms_geometry(p, &in[0].shape, &in[1].shape, &g);
  if (!s) s = nms_limits(d, &g);
  if (s) return node_error(node, s);
  const gfx_shape bound = {.rank = 2, .dims = {g.bound, 3}};
  if (!gfx_shape_equal(&out[0].shape, &bound) || out[0].dtype != GFX_DTYPE_I64 || out[1].dtype != GFX_DTYPE_I64 ||
      gfx_shape_numel(&out[1].shape) != 1 || !out[1].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "the outputs are not int64 [%lld, 3] and one int64 "
                                      "count", (long long)g.bound));
  const int64_t segments = g.batches * g.classes;
  if (g.bound == 0 || g.boxes == 0 || segments == 0)
    return vk_memset_zero(&d->dev, out[1].data, sizeof(int64_t), ctx->stream);
  if (!in[0].data || !in[1].data || !out[0].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "boxes, scores or the rows have no memory"));
  const size_t need = sizeof(uint32_t) * (size_t)nms_scratch_words(&g);
  if (!ctx->scratch || ctx->scratch_bytes < need || (uintptr_t)ctx->scratch % 16)
    return node_error(node, gfx_error(GFX_ERR_INTERNAL, "%zu bytes of 16-byte aligned scratch, %zu given", need,
                                      ctx->scratch ? ctx->scratch_bytes : 0));
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &pipe));
  nms_push pc = {.boxes = addr(in[0].data),
                 .scores = addr(in[1].data),
                 .y = addr(out[0].data),
                 .count = addr(out[1].data),
                 .scratch = addr(ctx->scratch),
                 .segments = (uint32_t)segments,
                 .n = (uint32_t)g.boxes,
                 .classes = (uint32_t)g.classes,
                 .cap = (uint32_t)g.per_class,
                 .center = (uint32_t)(p->center_point_box != 0),
                 .has_score_threshold = (uint32_t)(p->has_score_threshold != 0),
                 .iou_threshold = p->iou_threshold,
                 .score_threshold = p->score_threshold};
  const int64_t candidates = segments * g.boxes;
  const uint32_t groups[6] = {clamp_groups((segments + NMS_GROUP - 1) / NMS_GROUP),
                              clamp_groups((candidates + NMS_GROUP - 1) / NMS_GROUP),
                              clamp_groups((candidates + NMS_GROUP - 1) / NMS_GROUP),
                              clamp_groups(segments), 1, clamp_groups(segments)};
  return vk_dispatch_groups(d, ctx->stream, pipe, &pc, sizeof pc, &pc.phase, groups, 6);
}

/* ---- the family ---- */

gfx_status vk_supports_select(vk_device* d, const gfx_node_query* q) {
  if (q->op == GFX_OP_NON_MAX_SUPPRESSION) return supports_nms(d, q);
  if (q->op != GFX_OP_NON_ZERO)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s is not implemented yet", ir_op_name(q->op));
  if (!d->has_int64) /* the coordinates are int64 */
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: NonZero needs shaderInt64, which %s lacks", d->info.name);
  if (!q->desc || q->desc->n_inputs < 1) return NULL; /* no type to judge: the run checks it */
  vk_shader_id shader;
  return shader_for(d, q->desc->input_dtypes[0], &shader);
}

/* The chunks X splits into, after checking what the shader's 32-bit indices and one-dimensional grid
 * allow. */
static gfx_status nonzero_chunks(const ir_node* node, const gfx_shape* x, int64_t* rows, int64_t* numel,
                                 uint32_t* chunks) {
  gfx_status s = ir_nonzero_geometry(x, rows, numel);
  if (s) return node_error(node, s);
  if (*rows * *numel >= ((int64_t)1 << 32))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%lld coordinates; below 2^32 are handled",
                                      (long long)(*rows * *numel)));
  const int64_t n = (*numel + NZ_CHUNK - 1) / NZ_CHUNK;
  if (n > (int64_t)NZ_MAX_CHUNKS)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%lld elements; up to %lld are handled",
                                      (long long)*numel, (long long)NZ_MAX_CHUNKS * NZ_CHUNK));
  *chunks = (uint32_t)n;
  return NULL;
}

gfx_status vk_prepare_select(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes) {
  (void)out;
  *state = NULL; /* stateless: run derives everything from the shapes */
  if (node->op == GFX_OP_NON_MAX_SUPPRESSION) return prepare_nms(d, node, in, scratch_bytes);
  if (node->op != GFX_OP_NON_ZERO || node->n_inputs != 1 || node->n_outputs != 2)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%d inputs and %d outputs", node->n_inputs,
                                      node->n_outputs));
  int64_t rows, numel;
  uint32_t chunks;
  GFX_TRY(nonzero_chunks(node, &in[0], &rows, &numel, &chunks));
  if (scratch_bytes) *scratch_bytes = sizeof(uint32_t) * (size_t)(chunks > 0 ? chunks : 1);
  return NULL;
}

void vk_release_select(vk_device* d, void* state) { (void)d, (void)state; }

gfx_status vk_run_select(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state) {
  (void)state;
  if (in && out && node->op == GFX_OP_NON_MAX_SUPPRESSION) return run_nms(d, ctx, node, in, out);
  if (!in || !out || node->op != GFX_OP_NON_ZERO || node->n_inputs != 1 || node->n_outputs != 2)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "run without its tensors"));
  int64_t rows, numel;
  uint32_t chunks;
  GFX_TRY(nonzero_chunks(node, &in[0].shape, &rows, &numel, &chunks));
  const gfx_shape bound = {.rank = 2, .dims = {rows, numel}}, one = {.rank = 1, .dims = {1}};
  if (!gfx_shape_equal(&out[0].shape, &bound) || out[0].dtype != GFX_DTYPE_I64 || out[1].dtype != GFX_DTYPE_I64 ||
      gfx_shape_numel(&out[1].shape) != gfx_shape_numel(&one) || !out[1].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "the outputs are not int64 [%lld, %lld] and one int64 "
                                      "count", (long long)rows, (long long)numel));
  if (numel == 0) return vk_memset_zero(&d->dev, out[1].data, sizeof(int64_t), ctx->stream);
  const int dtype = in[0].dtype;
  vk_shader_id shader;
  gfx_status s = shader_for(d, dtype, &shader);
  if (s) return node_error(node, s);
  if (!in[0].data || !out[0].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "X or the coordinates have no memory"));
  const size_t need = sizeof(uint32_t) * chunks;
  if (!ctx->scratch || ctx->scratch_bytes < need)
    return node_error(node, gfx_error(GFX_ERR_INTERNAL, "%zu bytes of scratch, %zu given", need,
                                      ctx->scratch ? ctx->scratch_bytes : 0));
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &pipe));
  const uint64_t keep = keep_bits(dtype);
  nonzero_push pc;
  memset(&pc, 0, sizeof pc);
  pc.x = addr(in[0].data), pc.y = addr(out[0].data), pc.count = addr(out[1].data);
  pc.chunks_addr = addr(ctx->scratch);
  pc.numel = (uint32_t)numel, pc.chunks = chunks, pc.rank = (uint32_t)in[0].shape.rank;
  pc.keep_lo = (uint32_t)keep, pc.keep_hi = (uint32_t)(keep >> 32);
  for (int i = 0; i < in[0].shape.rank; i++) pc.dims[i] = (uint32_t)in[0].shape.dims[i];
  /* counts, their prefix sums (one workgroup), the coordinates */
  const uint32_t groups[3] = {chunks, 1, chunks};
  return vk_dispatch_groups(d, ctx->stream, pipe, &pc, sizeof pc, &pc.phase, groups, 3);
}
