/* gfxep Vulkan backend — QuantizeLinear and DequantizeLinear (shaders/quant.comp), as ref_quant.c
 * computes them: float32 arithmetic, round half to even, saturation to int8/uint8.
 *
 * Stateless, like the CUDA kernels: the geometry (ir_quant_geometry) is a few integer operations per
 * run and travels in the push constants; the pipeline is the device's cached one for the types.
 * Quantize: float32 or float16 x and scale, int8/uint8 y and zero point; Dequantize: int8, uint8 or
 * int32 x and zero point, float32 or float16 scale and y. float16 moves as 16-bit words
 * (storageBuffer16BitAccess), converted bit by bit; the 1-byte types need storageBuffer8BitAccess.
 * bfloat16 is declined. Tensors below 2^32 elements.
 */
#include <stdint.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"

/* quant.comp's push constants and integer type codes */
typedef struct quant_push {
  uint64_t x, scale, zp, y;
  uint32_t count, len, inner;
} quant_push;
_Static_assert(sizeof(quant_push) <= VK_PUSH_BYTES, "push layout");
enum { Q_I8 = 0, Q_U8 = 1, Q_I32 = 2 };

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int int_code(int dtype, int quantize) {
  switch (dtype) {
    case GFX_DTYPE_I8: return Q_I8;
    case GFX_DTYPE_U8: return Q_U8;
    case GFX_DTYPE_I32: return quantize ? -1 : Q_I32; /* Quantize produces 8-bit types only */
    default: return -1;
  }
}

/* The shader for the float type f and integer type q of the op, or why not. */
static gfx_status shader_for(vk_device* d, gfx_op op, int f, int q, vk_shader_id* out) {
  const int quantize = op == GFX_OP_QUANTIZE_LINEAR;
  if (int_code(q, quantize) < 0 || (f != GFX_DTYPE_F32 && f != GFX_DTYPE_F16))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s between %s and %s is not implemented", ir_op_name(op),
                     gfx_dtype_name(f), gfx_dtype_name(q));
  /* the module declares int8 storage whatever the integer type */
  if (!d->has_8bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s needs storageBuffer8BitAccess, which %s lacks",
                     ir_op_name(op), d->info.name);
  if (!d->has_16bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s needs storageBuffer16BitAccess, which %s lacks",
                     ir_op_name(op), d->info.name);
  *out = f == GFX_DTYPE_F16 ? VK_SHADER_QUANT_F16 : VK_SHADER_QUANT_F32;
  return NULL;
}

gfx_status vk_supports_quant(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  const int quantize = q->op == GFX_OP_QUANTIZE_LINEAR;
  vk_shader_id shader;
  return shader_for(d, q->op, quantize ? desc->input_dtypes[0] : desc->output_dtypes[0],
                    quantize ? desc->output_dtypes[0] : desc->input_dtypes[0], &shader);
}

gfx_status vk_prepare_quant(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state) {
  (void)d;
  *state = NULL; /* stateless: run derives the geometry */
  if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %d inputs and %d outputs",
                     label(node), ir_op_name(node->op), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, 1));
  return vk_check_elements_u32(node, out, 1);
}

void vk_release_quant(vk_device* d, void* state) { (void)d, (void)state; }

static gfx_status bad_io(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %s", label(node), ir_op_name(node->op),
                   what);
}

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

gfx_status vk_run_quant(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                        gfx_tensor* out, void* state) {
  (void)state;
  if (!in || !out || node->n_inputs < 2 || node->n_inputs > 3 || node->n_outputs != 1)
    return bad_io(node, "run without its tensors");
  const int quantize = node->op == GFX_OP_QUANTIZE_LINEAR, has_zp = node->n_inputs > 2 && node->inputs[2] >= 0;
  const int f = quantize ? in[0].dtype : out[0].dtype, qt = quantize ? out[0].dtype : in[0].dtype;
  if (in[1].dtype != f || (has_zp && in[2].dtype != qt) || out[0].dtype != node->params.quant.dtype)
    return bad_io(node, "x, the scale, the zero point and y are not a pair of types of the op");
  vk_shader_id shader;
  GFX_TRY(shader_for(d, node->op, f, qt, &shader));
  ir_quant_geom g;
  gfx_status s = ir_quant_geometry(&node->params.quant, &in[0].shape, &in[1].shape, has_zp ? &in[2].shape : NULL, &g);
  if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  if (!gfx_shape_equal(&out[0].shape, &in[0].shape)) return bad_io(node, "y's shape differs from x's");
  GFX_TRY(vk_check_elements_u32(node, &in[0].shape, 1));
  if (g.count == 0) return NULL;
  const int32_t spec[3] = {quantize, int_code(qt, quantize), has_zp};
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, shader, spec, 3, &pipe));
  quant_push pc = {.x = addr(in[0].data),
                   .scale = addr(in[1].data),
                   .zp = has_zp ? addr(in[2].data) : 0,
                   .y = addr(out[0].data),
                   .count = (uint32_t)g.count,
                   .len = g.per_axis ? (uint32_t)g.len : 1u,
                   .inner = g.per_axis ? (uint32_t)g.inner : 1u};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, g.count);
}
