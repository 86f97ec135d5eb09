/* gfxep — geometry of the convolution and matrix-product ops beyond ir/shape.h, shared by the
 * parse/infer functions (ir/ops_nn.c), the IR fusions (ir/fuse.c) and the kernels of every backend.
 */
#ifndef GFXEP_IR_OPS_NN_H
#define GFXEP_IR_OPS_NN_H

#include "ir/shape.h"

/* ConvTranspose geometry with pads resolved (explicit pads, auto_pad or output_shape). The fields
 * keep their Conv meaning seen from the transposed op: in = X's spatial dims, out = Y's,
 * c_in = X's channels, c_out = W dim 1 x group, kernel = W's spatial dims. The pads are the ones
 * cropped from the full transposed result of size stride*(in-1) + output_padding + dilated kernel. */
gfx_status ir_conv_transpose_geometry(const ir_conv_params* p, const gfx_shape* x, const gfx_shape* w,
                                      ir_conv_geom* g);

/* A 1-D convolution as a 2-D one of height 1: the same memory, a unit dim inserted after the
 * channels of x and w, and 2-D parameters whose first spatial dim does nothing. 2-D parameters and
 * shapes are copied through unchanged. */
void ir_conv_as_2d(const ir_conv_params* p, const gfx_shape* x, const gfx_shape* w, ir_conv_params* p2,
                   gfx_shape* x2, gfx_shape* w2);

/* A convolution chain (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT) as the two Conv nodes it fused would
 * have their parameters: `first` reads X with W_a and B_a and writes the middle map, `second` reads
 * that with W and B and writes Y. Neither is a chain. */
void ir_conv_chain_split(const ir_conv_params* chain, ir_conv_params* first, ir_conv_params* second);

/* A chain node's middle map (which it never writes) and output from the node's input shapes (in:
 * n_inputs of them, rank -1 for an absent one), with every check a kernel relies on: the chain's fixed
 * geometry (2-D, one group, 3x3, stride 1, dilation 1, pads of 1, no residual, X in the node's own
 * layout), W_a's input channels against X's, W's against W_a's output channels, and the biases. */
gfx_status ir_conv_chain_shapes(const ir_conv_params* p, int n_inputs, const gfx_shape* in, gfx_shape* mid,
                                gfx_shape* y);

/* Gemm: a [m, k] (or [k, m] transposed), b [k, n] (or [n, k]), c broadcast to [m, n] with element
 * strides c_row_stride / c_col_stride (0 along a broadcast dim). */
typedef struct ir_gemm_geom {
  int64_t m, n, k;
  int has_c;
  int64_t c_row_stride, c_col_stride;
} ir_gemm_geom;

/* c may be NULL (or rank < 0) for an absent C. */
gfx_status ir_gemm_geometry(const ir_gemm_params* p, const gfx_shape* a, const gfx_shape* b, const gfx_shape* c,
                            ir_gemm_geom* g);

/* Attention: the sizes, and the element offsets and strides of Q, K, V and Y in the tensors they are
 * read from or written to, per batch, head, sequence position and element of the head (Y: the
 * same); the masks' strides over the scores [batch, q heads, q seq, kv seq] (0 along a broadcast
 * dim). kv head of q head h: h / group. An Attention node as parsed has no offsets and unit strides
 * along the head; a fused one (ir_attention_params.fused) has the views the fusion found. */
typedef struct ir_attention_geom {
  int64_t batch, q_heads, kv_heads, group, q_seq, kv_seq, head_size, v_head_size;
  int64_t q_offset, k_offset, v_offset, y_offset;
  int64_t q_stride[4], k_stride[4], v_stride[4], y_stride[4];
  int has_mask, has_mask2;
  int64_t mask_stride[4], mask2_stride[4];
  float scale;
  gfx_shape y;
} ir_attention_geom;

/* in: the node's inputs (Q, K, V, then the masks it has). */
gfx_status ir_attention_geometry(const ir_attention_params* p, const gfx_shape* in, ir_attention_geom* g);

#endif
