/* gfxep Vulkan backend — NonZero as a bounded node (shaders/nonzero.comp; ir/ops_select.h): output 0
 * written at its bound [rows, numel], output 1 the count of nonzero elements, which the executor reads
 * back to cut output 0 (ir/dynamic.h). The coordinates and their order are the reference backend's.
 *
 * Three dispatches in one command buffer: per-chunk counts into node scratch, their prefix sums (one
 * workgroup, which writes the count), the coordinates. Elements of 1 to 8 bytes; 1- and 2-byte ones
 * need storageBuffer8BitAccess / storageBuffer16BitAccess. Outputs below 2^32 elements. Every loop of
 * the shader is short (at most chunks / 256 turns), so CPU implementations run it whole.
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

gfx_status vk_supports_select(vk_device* d, const gfx_node_query* q) {
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
  (void)d, (void)out;
  *state = NULL; /* stateless: run derives everything from the shapes */
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

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

gfx_status vk_run_select(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state) {
  (void)state;
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
  vk_stream* st = vk_stream_acquire(d, ctx->stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(st, &cb);
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
    /* counts, their prefix sums (one workgroup), the coordinates */
    const uint32_t groups[3] = {chunks, 1, chunks};
    for (uint32_t phase = 0; phase < 3; phase++) {
      pc.phase = phase;
      vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
      vkCmdDispatch(cb, groups[phase], 1, 1);
      vk_cmd_barrier(cb);
    }
  }
  return vk_stream_release(d, ctx->stream, st, status);
}
