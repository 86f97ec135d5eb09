/* gfxep — reference kernels: one plain C loop nest per op in ir/ops.def, on host memory.
 *
 * These kernels are the test oracle for the other backends, so they are written to be checked by
 * eye, not to be fast: no blocking, no vectors, no threads. Dot products (Conv, MatMul) accumulate
 * in double and round to float once, so the oracle is at least as exact as what it is compared with.
 *
 * Before touching memory every kernel checks that the shapes it was handed agree with each other
 * and with the output shape, using the IR's geometry helpers (ir/shape.h) as the single definition
 * of what an op's shapes mean. A bug upstream then becomes an error, never an out-of-bounds access.
 */
#include "backend/ref/ref_kernels.h"

#include <stdio.h>

#include "backend/ref/ref_dtype.h"
#include "ir/shape.h"

/* ---- checks every kernel makes ---- */

gfx_status ref_check_concrete_shape(const char* what, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has rank %d; ranks 0..%d are supported", what, s->rank,
                     GFX_MAX_RANK);
  if (gfx_shape_numel(s) < 0) {
    char buf[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s, which is not a concrete shape", what,
                     gfx_shape_str(s, buf, sizeof buf));
  }
  return NULL;
}

/* A concrete shape, and memory behind it unless the tensor is empty (an empty tensor may have no
 * memory at all). */
gfx_status ref_check_memory(const char* what, const gfx_tensor* t) {
  GFX_TRY(ref_check_concrete_shape(what, &t->shape));
  if (!t->data && gfx_shape_numel(&t->shape) > 0) {
    char buf[192];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s but no data", what,
                     gfx_shape_str(&t->shape, buf, sizeof buf));
  }
  return NULL;
}

/* A tensor a kernel reads or writes: float32 with ref_check_memory's shape and memory. */
gfx_status ref_check_f32_tensor(const char* what, const gfx_tensor* t) {
  if (t->dtype != GFX_DTYPE_F32)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %s (%d); only float32 is implemented", what,
                     gfx_dtype_name(t->dtype), t->dtype);
  return ref_check_memory(what, t);
}

/* The node has min_inputs..max_inputs inputs and one output, all float32 tensors. Inputs past
 * min_inputs are optional: one whose data is NULL is absent and is not checked. */
gfx_status ref_check_node_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                                int max_inputs) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected %d to %d", node->n_inputs, min_inputs,
                     max_inputs);
  if (node->n_outputs != 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; expected 1", node->n_outputs);
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  for (int i = 0; i < node->n_inputs; i++) {
    if (i >= min_inputs && !in[i].data) continue;
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    GFX_TRY(ref_check_f32_tensor(what, &in[i]));
  }
  return ref_check_f32_tensor("output 0", &out[0]);
}

/* A tensor of any type the reference backend handles (ref_dtype_ok), with a concrete shape and
 * memory behind it unless it is empty. */
gfx_status ref_check_tensor(const char* what, const gfx_tensor* t) {
  if (!ref_dtype_ok(t->dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %s (%d), which is not handled", what,
                     gfx_dtype_name(t->dtype), t->dtype);
  return ref_check_memory(what, t);
}

gfx_status ref_check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                        int max_inputs, int n_checked) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected %d to %d", node->n_inputs, min_inputs,
                     max_inputs);
  if (node->n_outputs != 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; expected 1", node->n_outputs);
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  for (int i = 0; i < n_checked; i++) {
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    GFX_TRY(ref_check_tensor(what, &in[i]));
  }
  return ref_check_tensor("output 0", &out[0]);
}

gfx_status ref_check_dtype(const char* what, const gfx_tensor* t, int want) {
  if (t->dtype == want) return NULL;
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is %s; %s is expected", what, gfx_dtype_name(t->dtype),
                   gfx_dtype_name(want));
}

gfx_status ref_check_shape_is(const char* what, const gfx_shape* actual, const gfx_shape* expected) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[192], e[192];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s; expected %s", what,
                   gfx_shape_str(actual, a, sizeof a), gfx_shape_str(expected, e, sizeof e));
}

gfx_shape ref_make_shape4(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  gfx_shape s = {.rank = 4, .dims = {d0, d1, d2, d3}};
  return s;
}

/* ---- numpy broadcasting through stride tables ---- */


/* Strides of `operand` (contiguous, row-major) along the dims of `full`, which it broadcasts to. */
void ref_operand_strides(const gfx_shape* operand, const gfx_shape* full, int64_t* strides) {
  int64_t stride = 1;
  for (int d = full->rank - 1; d >= 0; d--) {
    int operand_d = d - (full->rank - operand->rank);
    if (operand_d < 0) {
      strides[d] = 0;
      continue;
    }
    int64_t extent = operand->dims[operand_d];
    strides[d] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
}

void ref_broadcast_strides_init(ref_broadcast_strides* bs, const gfx_shape* full, const gfx_shape* a,
                                   const gfx_shape* b) {
  bs->rank = full->rank;
  for (int d = 0; d < full->rank; d++) bs->dims[d] = full->dims[d];
  ref_operand_strides(a, full, bs->a);
  ref_operand_strides(b, full, bs->b);
}

/* Element offsets in a and b of the broadcast shape's element number `linear`, found by splitting
 * `linear` into coordinates, last dim fastest. Only called when no dim is 0. */
void ref_broadcast_offsets(const ref_broadcast_strides* bs, int64_t linear, int64_t* a_offset, int64_t* b_offset) {
  int64_t a_off = 0, b_off = 0;
  for (int d = bs->rank - 1; d >= 0; d--) {
    int64_t coord = linear % bs->dims[d];
    linear /= bs->dims[d];
    a_off += coord * bs->a[d];
    b_off += coord * bs->b[d];
  }
  *a_offset = a_off;
  *b_offset = b_off;
}

/* ---- the gfx_backend entries ---- */

gfx_status ref_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state, size_t* scratch_bytes) {
  const int device = dev->index;
  (void)node;
  (void)in;
  (void)out;
  if (!state || !scratch_bytes)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: node_prepare given no outputs");
  *state = NULL;
  *scratch_bytes = 0;
  return ref_check_device(device);
}

void ref_node_release(gfx_dev* dev, void* state) {
  (void)dev;
  (void)state; /* node_prepare never makes any */
}

/* every kernel family the op table names (ir/ops.def), declared here so that a family file needs no
 * header; a family without its ref_run_<kernel> fails to link */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) \
  gfx_status ref_run_##kernel(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);
#include "ir/ops.def"
#undef GFX_OP

typedef gfx_status (*ref_run_fn)(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);
static const ref_run_fn run_table[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) [GFX_OP_##id] = ref_run_##kernel,
#include "ir/ops.def"
#undef GFX_OP
};

gfx_status ref_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        void* state) {
  (void)state;
  if (!ctx || !node) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: node_run given no %s",
                                      ctx ? "node" : "context");
  GFX_TRY(ref_check_device(ctx->dev->index));
  GFX_TRY(ref_check_alive("node_run"));
  if (node->op <= GFX_OP_NONE || node->op >= GFX_OP_COUNT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "reference backend: op %d not implemented", (int)node->op);
  gfx_status s = run_table[node->op](ctx, node, in, out);
  if (s)
    return gfx_status_wrap(s, "reference backend: %s node \"%s\"", ir_op_name(node->op),
                           node->name ? node->name : "");
  return NULL;
}
