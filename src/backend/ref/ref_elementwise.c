/* gfxep — reference kernels of the element-wise ops: plain C loops on host memory. */
#include "backend/ref/ref_kernels.h"

#include "ir/shape.h"

/* ---- Add, Sub, Mul, Div ---- */

typedef float (*binary_fn)(float a, float b);

/* One float operation each: IEEE single arithmetic is already correctly rounded. */
static float add_f32(float a, float b) { return a + b; }
static float sub_f32(float a, float b) { return a - b; }
static float mul_f32(float a, float b) { return a * b; }
static float div_f32(float a, float b) { return a / b; }

static gfx_status run_binary(const ir_node* node, const gfx_tensor* in, gfx_tensor* out, binary_fn fn) {
  GFX_TRY(ref_check_node_io(node, in, out, 2, 2));
  gfx_shape full;
  GFX_TRY(ir_broadcast_shapes(&in[0].shape, &in[1].shape, &full));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &full));

  const int64_t count = gfx_shape_numel(&full);
  if (count == 0) return NULL;
  ref_broadcast_strides bs;
  ref_broadcast_strides_init(&bs, &full, &in[0].shape, &in[1].shape);
  const float* a = in[0].data;
  const float* b = in[1].data;
  float* y = out[0].data;
  for (int64_t i = 0; i < count; i++) {
    int64_t ia, ib;
    ref_broadcast_offsets(&bs, i, &ia, &ib);
    y[i] = fn(a[ia], b[ib]);
  }
  return NULL;
}

/* ---- Relu ---- */

static gfx_status run_relu(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(ref_check_node_io(node, in, out, 1, 1));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  const int64_t count = gfx_shape_numel(&in[0].shape);
  const float* x = in[0].data;
  float* y = out[0].data;
  /* Written as "x < 0" so that NaN, which compares false, passes through unchanged. */
  for (int64_t i = 0; i < count; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
  return NULL;
}


gfx_status ref_run_binary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  switch (node->op) {
    case GFX_OP_ADD: return run_binary(node, in, out, add_f32);
    case GFX_OP_SUB: return run_binary(node, in, out, sub_f32);
    case GFX_OP_MUL: return run_binary(node, in, out, mul_f32);
    case GFX_OP_DIV: return run_binary(node, in, out, div_f32);
    default: return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is no binary op", ir_op_name(node->op));
  }
}

gfx_status ref_run_unary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  switch (node->op) {
    case GFX_OP_RELU: return run_relu(node, in, out);
    default: return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is no unary op", ir_op_name(node->op));
  }
}
