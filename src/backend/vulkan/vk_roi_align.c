/* gfxep Vulkan backend — RoiAlign (shaders/roi_align.comp), NCHW, as ref_resize.c computes it: avg
 * and max modes, half_pixel and output_half_pixel, adaptive and fixed sampling_ratio, positions in
 * float32 (ir/resize_geom.h); float32 and float16 X and rois, int64 batch indices (read as two
 * words, so without shaderInt64). bfloat16 is declined.
 *
 * Stateless: the geometry travels in the push constants and the pipeline is the device's cached
 * one. An invocation visits at most about (2H + 3) x (2W + 3) samples with an adaptive grid (the
 * shader skips those more than a pixel outside the plane), sampling_ratio^2 with a fixed one: on CPU
 * implementations, which end an invocation after 65535 loop turns, larger walks (or unknown
 * shapes) are declined. Tensors below 2^32 elements.
 */
#include <stdint.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/shape.h"

/* CPU implementations built on llvmpipe (lavapipe) end an invocation after 65535 loop turns in all
 * (vk_index.c): the walks of one invocation are kept below this there. */
#define SOFTWARE_WALK_LIMIT 60000
#define INVOCATIONS ((int64_t)65535 * 256) /* vk_dispatch_elements' largest grid */

/* roi_align.comp's push constants */
typedef struct roi_push {
  uint64_t x, rois, batch, y;
  uint32_t count, n, c, h, w, out_h, out_w, sampling_ratio, mode_max, half_pixel;
  float spatial_scale;
} roi_push;
_Static_assert(sizeof(roi_push) <= VK_PUSH_BYTES, "push layout");

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static gfx_status shader_for(vk_device* d, int dtype, vk_shader_id* out) {
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: RoiAlign of %s is not implemented",
                     gfx_dtype_name(dtype));
  if (!d->has_16bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: RoiAlign needs storageBuffer16BitAccess, which %s lacks",
                     d->info.name);
  *out = dtype == GFX_DTYPE_F16 ? VK_SHADER_ROI_ALIGN_F16 : VK_SHADER_ROI_ALIGN_F32;
  return NULL;
}

/* The loop turns of one invocation: its output elements (grid-stride) times the samples it visits
 * and the bisections, INT64_MAX when the shapes do not tell. */
static int64_t walk_turns(const gfx_node_query* q) {
  const gfx_shape* x = &q->desc->input_shapes[0];
  const gfx_shape* rois = &q->desc->input_shapes[1];
  if (!q->params || x->rank != 4 || rois->rank != 2 || rois->dims[0] < 0) return INT64_MAX;
  for (int i = 1; i < 4; i++)
    if (x->dims[i] < 0) return INT64_MAX;
  const ir_roi_align_params* p = &q->params->roi_align;
  const int64_t count = rois->dims[0] * x->dims[1] * p->out_h * p->out_w;
  const int64_t h = x->dims[2], w = x->dims[3], sr = p->sampling_ratio;
  const int64_t samples = sr > 0 ? sr * (sr + 1) : (2 * h + 4) * (2 * w + 4) + 128;
  return (count + INVOCATIONS - 1) / INVOCATIONS * samples;
}

gfx_status vk_supports_roi_align(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  vk_shader_id shader;
  GFX_TRY(shader_for(d, desc->input_dtypes[0], &shader));
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && walk_turns(q) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: RoiAlign walks more than %d samples in one invocation (or an unknown number), "
                     "which %s (a CPU implementation) cuts short", SOFTWARE_WALK_LIMIT, d->info.name);
  return NULL;
}

gfx_status vk_prepare_roi_align(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                void** state) {
  (void)d;
  *state = NULL; /* stateless: run derives the geometry */
  if (node->n_inputs != 3 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (RoiAlign): %d inputs and %d outputs",
                     label(node), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, 3));
  return vk_check_elements_u32(node, out, 1);
}

void vk_release_roi_align(vk_device* d, void* state) { (void)d, (void)state; }

static gfx_status bad_io(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (RoiAlign): %s", label(node), what);
}

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

gfx_status vk_run_roi_align(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, void* state) {
  (void)state;
  if (!in || !out || node->n_inputs != 3 || node->n_outputs != 1) return bad_io(node, "run without its tensors");
  const int t = in[0].dtype;
  if (in[1].dtype != t || out[0].dtype != t || in[2].dtype != GFX_DTYPE_I64)
    return bad_io(node, "X, rois and Y differ in type, or batch_indices are not int64");
  vk_shader_id shader = VK_SHADER_ROI_ALIGN_F32;
  GFX_TRY(shader_for(d, t, &shader));
  const gfx_shape shapes[3] = {in[0].shape, in[1].shape, in[2].shape};
  gfx_shape want;
  gfx_status s = ir_infer_roi_align(node, shapes, &want);
  if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (RoiAlign)", label(node));
  if (!gfx_shape_equal(&out[0].shape, &want)) return bad_io(node, "Y's shape differs from the inferred one");
  GFX_TRY(vk_check_elements_u32(node, shapes, 3));
  const int64_t count = gfx_shape_numel(&want);
  if (count == 0) return NULL;
  const ir_roi_align_params* p = &node->params.roi_align;
  if (p->sampling_ratio >= ((int64_t)1 << 31)) return bad_io(node, "sampling_ratio is 2^31 or more");
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &pipe));
  roi_push pc = {.x = addr(in[0].data),
                 .rois = addr(in[1].data),
                 .batch = addr(in[2].data),
                 .y = addr(out[0].data),
                 .count = (uint32_t)count,
                 .n = (uint32_t)in[0].shape.dims[0],
                 .c = (uint32_t)in[0].shape.dims[1],
                 .h = (uint32_t)in[0].shape.dims[2],
                 .w = (uint32_t)in[0].shape.dims[3],
                 .out_h = (uint32_t)p->out_h,
                 .out_w = (uint32_t)p->out_w,
                 .sampling_ratio = (uint32_t)(p->sampling_ratio > 0 ? p->sampling_ratio : 0),
                 .mode_max = (uint32_t)p->mode_max,
                 .half_pixel = (uint32_t)p->half_pixel,
                 .spatial_scale = p->spatial_scale};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, (uint64_t)count);
}
