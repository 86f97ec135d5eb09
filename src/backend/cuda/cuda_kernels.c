/* gfxep CUDA backend — per-node dispatch: node_prepare, node_release and node_run over ir/ops.def,
 * through a table built from the op table's kernel column.
 */
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"

const char* cuda_node_name(const ir_node* node) { return node->name ? node->name : ""; }

static gfx_status require_io_counts(const ir_node* node, int min_inputs, int min_outputs) {
  if (node->n_inputs < min_inputs || node->n_outputs < min_outputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs, expected %d and %d",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs, min_inputs,
                     min_outputs);
  return NULL;
}

/* ---- the backend entries ---- */

/* every kernel family the op table names (ir/ops.def), declared here so that a family file needs no
 * header; a family without its cuda_prepare_<kernel> and cuda_run_<kernel> fails to link */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary)                                              \
  gfx_status cuda_prepare_##kernel(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out, \
                                   cuda_node_state** state, size_t* scratch_bytes);                            \
  gfx_status cuda_run_##kernel(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out, \
                               cuda_node_state* state);
#include "ir/ops.def"
#undef GFX_OP

typedef gfx_status (*prepare_fn)(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                 cuda_node_state** state, size_t* scratch_bytes);
typedef gfx_status (*run_fn)(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                             cuda_node_state* state);
static const struct {
  prepare_fn prepare;
  run_fn run;
} kernel_table[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) \
  [GFX_OP_##id] = {cuda_prepare_##kernel, cuda_run_##kernel},
#include "ir/ops.def"
#undef GFX_OP
};

static gfx_status op_not_implemented(const ir_node* node) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: op %d not implemented", (int)node->op);
}

gfx_status cuda_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes) {
  const int device = dev->index;
  *state = NULL;
  *scratch_bytes = 0;
  if (node->op <= GFX_OP_NONE || node->op >= GFX_OP_COUNT) return op_not_implemented(node);
  cuda_node_state* node_state = NULL;
  GFX_TRY(kernel_table[node->op].prepare(device, node, in, out, &node_state, scratch_bytes));
  *state = node_state;
  return NULL;
}

void cuda_node_release(gfx_dev* dev, void* state) {
  (void)dev; /* library descriptors belong to no device */
  cuda_node_state* node_state = state;
  if (node_state) node_state->release(node_state);
}

gfx_status cuda_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         void* state) {
  if (node->op <= GFX_OP_NONE || node->op >= GFX_OP_COUNT) return op_not_implemented(node);
  return kernel_table[node->op].run(ctx, node, in, out, state);
}
