/* gfxep Vulkan backend — TopK (shaders/topk.comp and, for long lines, shaders/topk_radix.comp), as
 * ref_index.c's ref_run_topk computes it: the k
 * largest or smallest elements of every line along the axis, sorted, ties to the lower index, NaN
 * as if the largest value; values bit for bit and int64 indices.
 *
 * Stateless: the geometry (ir_topk_geometry) travels in the push constants and the pipeline is the
 * device's cached one for the element type. float32, float16, bfloat16, int32 and int64 (compared as
 * two 32-bit words, so without shaderInt64). The module moves 16-bit words, so
 * it needs storageBuffer16BitAccess. Every invocation of topk.comp walks its whole line; a contiguous
 * float32/float16 line of 4096 elements or more with k up to 2048 goes to topk_radix.comp instead,
 * one workgroup per line (a radix selection, then a sort of the k). On CPU implementations, which end
 * an invocation after 65535 loop turns, longer walks are declined. Tensors below 2^32 elements.
 */
#include <stdint.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

/* CPU implementations built on llvmpipe (lavapipe) end an invocation after 65535 loop turns in all
 * (vk_index.c): the walks of one invocation are kept below this there. */
#define SOFTWARE_WALK_LIMIT 60000
#define INVOCATIONS ((int64_t)65535 * 256) /* vk_dispatch_elements' largest grid */

/* Lines the radix kernel takes (topk_radix.comp): contiguous float lines of at least
 * RADIX_MIN_LEN elements, k up to its shared candidate list */
#define RADIX_MIN_LEN 4096
#define RADIX_MAX_K 2048
#define RADIX_GROUP 256

typedef struct topk_radix_push {
  uint64_t x, values, indices;
  uint32_t lines, len, k, largest, sort_n;
} topk_radix_push;
_Static_assert(sizeof(topk_radix_push) <= VK_PUSH_BYTES, "push layout");

/* topk.comp's push constants and type codes */
typedef struct topk_push {
  uint64_t x, values, indices;
  uint32_t count, len, inner, k, largest;
} topk_push;
_Static_assert(sizeof(topk_push) <= VK_PUSH_BYTES, "push layout");
enum { T_F32 = 0, T_F16 = 1, T_I32 = 2, T_I64 = 3, T_BF16 = 4 };

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int type_code(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: return T_F32;
    case GFX_DTYPE_F16: return T_F16;
    case GFX_DTYPE_I32: return T_I32;
    case GFX_DTYPE_I64: return T_I64;
    case GFX_DTYPE_BF16: return T_BF16;
    default: return -1;
  }
}

static gfx_status check_type(vk_device* d, int dtype) {
  if (type_code(dtype) < 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: TopK of %s is not implemented", gfx_dtype_name(dtype));
  if (!d->has_16bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: TopK needs storageBuffer16BitAccess, which %s lacks",
                     d->info.name);
  return NULL;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* topk_radix.comp's shared memory: the histogram, a prefix-sum row, the candidates' keys and indices */
#define RADIX_SHARED_BYTES (4 * 256 + 4 * RADIX_GROUP + 8 * RADIX_MAX_K + 8)

/* Whether the radix kernel takes lines of this geometry and k on this device (Vulkan guarantees only
 * 16 KiB of shared memory). */
static int radix_path(const vk_device* d, int dtype, const ir_axis_geom* g, int64_t k) {
  return (dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && g->inner == 1 &&
         g->len >= RADIX_MIN_LEN &&
         g->len < ((int64_t)1 << 31) && k >= 1 && k <= RADIX_MAX_K &&
         d->props.limits.maxComputeSharedMemorySize >= RADIX_SHARED_BYTES;
}

/* The power of two the radix kernel's sort runs over: at least k, at least 2. */
static uint32_t sort_size(int64_t k) {
  uint32_t n = 2;
  while ((int64_t)n < k) n <<= 1;
  return n;
}

/* The loop turns of one invocation of the radix kernel per line: four histogram passes, the gather
 * with its two prefix sums per chunk, the digit search (one invocation) and the sort's stages. */
static int64_t radix_line_turns(const ir_axis_geom* g, int64_t k) {
  const int64_t chunks = ceil_div(g->len, RADIX_GROUP);
  int64_t log_n = 0;
  for (uint32_t n = sort_size(k); n > 1; n >>= 1) log_n++;
  const int64_t sort = log_n * (log_n + 1) / 2 * ceil_div(sort_size(k), RADIX_GROUP);
  return 4 * chunks + 4 * 256 + chunks * (1 + 2 * 8) + sort + ceil_div(k, RADIX_GROUP);
}

/* The loop turns of one invocation, INT64_MAX when the shape does not tell: for the rank kernel its
 * elements (grid-stride) times its line, for the radix kernel its lines times a line's turns. k is
 * the node's (0 when computed at run time: then only the rank kernel's bound applies). */
static int64_t walk_turns(const vk_device* d, const gfx_node_query* q) {
  const gfx_shape* s = &q->desc->input_shapes[0];
  if (s->rank < 1 || !q->params) return INT64_MAX;
  int64_t count = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return INT64_MAX;
    count *= s->dims[i];
  }
  ir_axis_geom g;
  gfx_status st = ir_axis_geometry(s, q->params->index.axis, &g);
  if (st) {
    gfx_status_free(st);
    return INT64_MAX;
  }
  const int64_t k = q->params->index.k;
  if (radix_path(d, q->desc->input_dtypes[0], &g, k))
    return ceil_div(g.outer, 65535) * radix_line_turns(&g, k);
  return (count + INVOCATIONS - 1) / INVOCATIONS * (g.len + 1);
}

gfx_status vk_supports_topk(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  GFX_TRY(check_type(d, desc->input_dtypes[0]));
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && walk_turns(d, q) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: TopK walks more than %d elements in one invocation (or an unknown number), which "
                     "%s (a CPU implementation) cuts short", SOFTWARE_WALK_LIMIT, d->info.name);
  return NULL;
}

gfx_status vk_prepare_topk(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                           void** state) {
  (void)d;
  *state = NULL; /* stateless: run derives the geometry */
  if (node->n_inputs != 2 || node->n_outputs != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (TopK): %d inputs and %d outputs",
                     label(node), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, 1));
  return vk_check_elements_u32(node, out, 2);
}

void vk_release_topk(vk_device* d, void* state) { (void)d, (void)state; }

static gfx_status bad_io(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (TopK): %s", label(node), what);
}

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

gfx_status vk_run_topk(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                       gfx_tensor* out, void* state) {
  (void)state;
  if (!in || !out || node->n_inputs != 2 || node->n_outputs != 2) return bad_io(node, "run without its tensors");
  const int t = in[0].dtype;
  if (out[0].dtype != t || out[1].dtype != GFX_DTYPE_I64)
    return bad_io(node, "Values differ from X in type, or Indices are not int64");
  GFX_TRY(check_type(d, t));
  const ir_index_params* p = &node->params.index;
  ir_axis_geom g;
  gfx_shape want[2];
  gfx_status s = ir_infer_topk(node, &in[0].shape, want);
  if (!s) s = ir_topk_geometry(&in[0].shape, p->axis, p->k, &g);
  if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (TopK)", label(node));
  if (!gfx_shape_equal(&out[0].shape, &want[0]) || !gfx_shape_equal(&out[1].shape, &want[1]))
    return bad_io(node, "the outputs' shapes are not X's with k along the axis");
  GFX_TRY(vk_check_elements_u32(node, &in[0].shape, 1));
  const int64_t count = g.outer * g.len * g.inner;
  if (p->k == 0 || count == 0) return NULL;
  vk_pipe* pipe;
  if (radix_path(d, t, &g, p->k)) {
    const vk_shader_id radix = t == GFX_DTYPE_F16    ? VK_SHADER_TOPK_RADIX_F16
                               : t == GFX_DTYPE_BF16 ? VK_SHADER_TOPK_RADIX_BF16
                                                     : VK_SHADER_TOPK_RADIX_F32;
    GFX_TRY(vk_pipeline_get(d, radix, NULL, 0, &pipe));
    topk_radix_push rp = {.x = addr(in[0].data),
                          .values = addr(out[0].data),
                          .indices = addr(out[1].data),
                          .lines = (uint32_t)g.outer,
                          .len = (uint32_t)g.len,
                          .k = (uint32_t)p->k,
                          .largest = (uint32_t)(p->largest != 0),
                          .sort_n = sort_size(p->k)};
    const uint32_t groups = (uint32_t)(g.outer < 65535 ? g.outer : 65535); /* a workgroup per line */
    return vk_dispatch_groups(d, ctx->stream, pipe, &rp, sizeof rp, NULL, &groups, 1);
  }
  const int32_t spec[1] = {type_code(t)};
  GFX_TRY(vk_pipeline_get(d, VK_SHADER_TOPK, spec, 1, &pipe));
  topk_push pc = {.x = addr(in[0].data),
                  .values = addr(out[0].data),
                  .indices = addr(out[1].data),
                  .count = (uint32_t)count,
                  .len = (uint32_t)g.len,
                  .inner = (uint32_t)g.inner,
                  .k = (uint32_t)p->k,
                  .largest = (uint32_t)(p->largest != 0)};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, (uint64_t)count);
}
