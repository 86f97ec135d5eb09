/* gfxep — shape propagation: every value's concrete shape from the graph inputs' shapes.
 *
 * Compile knows the declared shapes (some dims dynamic); Compute knows the real input shapes.
 * ir_infer_shapes runs once per new input-shape signature and the result is cached by the
 * executor, so the per-run cost is a signature compare.
 */
#ifndef GFXEP_IR_SHAPE_H
#define GFXEP_IR_SHAPE_H

#include "ir/graph.h"

/* input_shapes: one per graph input, in graph input order. shapes: n_values entries, filled for
 * every value (constants and inputs included). Errors name the node and the offending dims. */
gfx_status ir_infer_shapes(const ir_graph* g, const gfx_shape* input_shapes, gfx_shape* shapes);
/* The two halves of ir_infer_shapes, for an executor that infers a partition in stages: every value
 * gets its declared shape and the inputs their given ones (checked against the declared); then one
 * node's outputs from its inputs' shapes (which must be known), checked against what the model
 * declares. `node` may be a resolved copy of a graph node (ir/dynamic.h). */
gfx_status ir_infer_inputs(const ir_graph* g, const gfx_shape* input_shapes, gfx_shape* shapes);
gfx_status ir_infer_node(const ir_graph* g, const ir_node* node, gfx_shape* shapes);

/* Numpy broadcasting of two shapes; error when a pair of dims is neither equal nor 1. */
gfx_status ir_broadcast_shapes(const gfx_shape* a, const gfx_shape* b, gfx_shape* out);

/* Convolution geometry with auto_pad resolved against concrete shapes. */
typedef struct ir_conv_geom {
  int spatial;
  int64_t n, c_in, c_out, group;
  int64_t in[IR_MAX_SPATIAL];      /* input spatial dims */
  int64_t kernel[IR_MAX_SPATIAL];
  int64_t out[IR_MAX_SPATIAL];
  int64_t strides[IR_MAX_SPATIAL];
  int64_t dilations[IR_MAX_SPATIAL];
  int64_t pad_begin[IR_MAX_SPATIAL];
  int64_t pad_end[IR_MAX_SPATIAL];
} ir_conv_geom;

/* x is the input as the node holds it: NCHW, or NHWC where p->channels_last. */
gfx_status ir_conv_geometry(const ir_conv_params* p, const gfx_shape* x, const gfx_shape* w, ir_conv_geom* g);
/* Y's shape from the geometry: N, C, spatial dims, or N, H, W, C where channels_last. */
gfx_shape ir_conv_output_shape(const ir_conv_geom* g, int channels_last);
/* A 4-D shape's dims reordered from N, H, W, C to N, C, H, W, and back; other ranks unchanged. */
gfx_shape ir_nhwc_as_nchw(const gfx_shape* s);
gfx_shape ir_nchw_as_nhwc(const gfx_shape* s);

/* MatMul geometry: out = a[batch..., m, k] x b[batch..., k, n] with broadcast batch dims; with
 * trans_b (a Transpose fused into the MatMul, see ir/fuse.h) b is stored as [batch..., n, k]. */
typedef struct ir_matmul_geom {
  int64_t m, n, k;
  int64_t batch;                 /* product of the broadcast output batch dims */
  gfx_shape out;                 /* full output shape */
} ir_matmul_geom;

gfx_status ir_matmul_geometry(const gfx_shape* a, const gfx_shape* b, int trans_b, ir_matmul_geom* g);

/* Per-op inference entry points named in ops.def. in[i] are the node's input shapes (rank -1 for
 * absent optional inputs); out[] receives n_outputs shapes. */
typedef gfx_status (*ir_infer_fn)(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_broadcast(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_same(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_conv(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_matmul(const ir_node* node, const gfx_shape* in, gfx_shape* out);
/* reductions, normalizations, pooling, softmax (ir/ops_reduce.c) */
gfx_status ir_infer_reduce(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_pool(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_softmax(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_norm(const ir_node* node, const gfx_shape* in, gfx_shape* out);
/* resampling (ir/ops_resize.c) */
gfx_status ir_infer_resize(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_depth_to_space(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_space_to_depth(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_roi_align(const ir_node* node, const gfx_shape* in, gfx_shape* out);
/* element-wise (ir/ops_elementwise.c) */
gfx_status ir_infer_broadcast_all(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_prelu(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_batchnorm(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_conv_transpose(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_gemm(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_attention(const ir_node* node, const gfx_shape* in, gfx_shape* out);

#endif
