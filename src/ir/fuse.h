/* gfxep — compile-time rewrites of the IR that keep its results and save work at run time. */
#ifndef GFXEP_IR_FUSE_H
#define GFXEP_IR_FUSE_H

#include "ir/graph.h"

/* Applies the fusions whose nodes every backend runs, each logged at INFO, the fused node named "a+b":
 *   QuantizeLinear and DequantizeLinear of constants (a QDQ model's int8 weights and int32 biases, a
 *     quantization-aware model's float weights behind Q -> DQ): the constant each computes, in the
 *     run-time kernels' float32 arithmetic (ir/fuse_quant.c); first, so that the Conv or product
 *     after them sees constant weights. Not for a graph output, nor above 64 MiB.
 *   Conv -> BatchNormalization, the Conv's weights and bias and the BatchNormalization's parameters
 *     all constants: one Conv with the normalization folded into new weights and bias (the old
 *     constants are dropped when nothing else reads them).
 *   Conv or ConvTranspose -> Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish or Elu:
 *     one node whose params.conv.activation (with act_alpha / act_beta) is that activation.
 *   Conv -> Add(conv output, r), r of exactly the output's declared, fully known shape and type:
 *     one Conv with r as input IR_CONV_RESIDUAL_INPUT, in the Add's place in the node order;
 *     params.conv.residual says whether an activation fused before the Add applies before the add
 *     (IR_RES_ACT_THEN_ADD) or one fused after it applies to the sum (IR_RES_ADD_THEN_ACT, ResNet's
 *     relu(conv + shortcut)).
 *   Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), the constants scalars: one Gelu (exact),
 *     the form PyTorch exports Gelu in before opset 20.
 *   Transpose(x) -> MatMul(a, .) as its input 1 (b), the perm swapping exactly the last two dims:
 *     MatMul(a, x) with params.gemm.trans_b = 1 (attention's q @ k^T).
 *   MatMul -> Mul(product, c), c a one-element constant of the product's type (either operand order,
 *     nonzero and finite, rank at most the product's): one MatMul with params.gemm.alpha *= c
 *     (attention's scores * scale); alpha is float32, so float16/bfloat16 results round once, not twice.
 * Each only when the value that disappears is read by the next node alone, is no graph output, and
 * keeps its element type; the residual is never the value the Conv writes.
 * The graph stays valid (ir_graph_validate); values a fusion made unused stay in the value table
 * with no producer and an empty shape. */
gfx_status ir_fuse(ir_graph* g);

/* Who will run the graph: the fusions below make nodes not every backend runs, so they ask first
 * and leave the pattern as it is when the answer is no. */
typedef struct ir_fuse_target {
  /* NULL when the backend runs `node` (a node a fusion would make; its inputs and outputs are values
   * of g), or a status saying why not (freed by the caller). */
  gfx_status (*supports)(void* user, const ir_graph* g, const ir_node* node);
  void* user;
} ir_fuse_target;

/* ir_fuse, and before it (so that it sees the graph as ONNX Runtime gave it)
 *   attention (ir/fuse_attention.c): MatMul(Q, Kᵀ) -> scalar Mul/Div -> additive mask Adds (Reshapes
 *     between them allowed) -> Softmax over the last axis -> MatMul(., V) (-> Transpose), with Q, K
 *     and V each reached from the tensor it is cut from through layout nodes that move no data
 *     (Gather of one constant index, Split, Squeeze, Unsqueeze, Reshape, Transpose, a scalar Mul on
 *     Q or K): one Attention node (params.attention.fused) that reads Q, K, V in place and writes Y
 *     in the Transpose's layout; the layout nodes go too when nothing else reads them;
 * and after it
 *   convolution chain (ir/fuse_chain.c): Conv -> Conv, both 2-D with one group, a 3x3 window of
 *     stride 1 and dilation 1, pads of 1 on every side (explicit, or auto_pad SAME_UPPER/SAME_LOWER),
 *     no residual, X in their own layout (no nchw_input), one element type, one layout, the first's
 *     output read by the second alone (as its X) and no graph output: one Conv with
 *     params.conv.chain that computes both (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT), its pads
 *     written out (auto_pad NOTSET). Pairs only: three such Convs become a chain and a Conv. Only the
 *     weights' shapes need be known (a chain runs any batch and image size); first of these three;
 *   residual LayerNormalization (ir/fuse_norm.c): Add(a, b) of one shape -> LayerNormalization of
 *     the sum: one LayerNormalization of a + b (params.norm.residual) that also writes the sum when
 *     another node reads it;
 *   InstanceNormalization epilogue (ir/fuse_norm_epilogue.c): InstanceNormalization of a 4-D value -> Add of
 *     a same-shaped value -> Relu -> Pad in reflect mode of H and W only (each optional, in that
 *     order, each read only by the next): one InstanceNormalization that writes the last of them
 *     (params.norm.add_after, activation, reflect_pad);
 *   layout (ir/fuse_layout.c): Transpose NHWC -> NCHW -> DepthToSpace: one DepthToSpace that reads
 *     the channels-last tensor (params.space_depth.nhwc_input); Transpose NCHW -> NHWC -> channels-last
 *     Conv (no chain): one Conv that reads the NCHW tensor (params.conv.nchw_input); then a channels-last
 *     Conv's constant W of a window larger than 1x1, read by it alone: its elements reordered to
 *     [M, kH, kW, C/group] once (params.conv.weights_channels_last), not on every run.
 * Each of these only where every declared shape involved is known (the chain: its weights') and
 * `target` runs the fused node;
 * with no target the fused nodes are made without asking (for a caller that knows its backend runs
 * them: the reference backend runs every node). ir_fuse alone never makes them, so a caller that does
 * not know the backend is safe with it. */
gfx_status ir_fuse_for(ir_graph* g, const ir_fuse_target* target);

#endif
