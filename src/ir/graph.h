/* gfxep — the internal graph (IR).
 *
 * src/ort builds an ir_graph in Compile from the ONNX Runtime subgraph it was given, copying
 * everything it needs (names, types, shapes, attributes, constant weights), so nothing here points
 * into ORT. The IR knows neither ORT nor any GPU API: it can be built and tested on its own.
 */
#ifndef GFXEP_IR_GRAPH_H
#define GFXEP_IR_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "ir/tensor.h"

typedef enum gfx_op {
  GFX_OP_NONE = 0,
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) GFX_OP_##id,
#include "ir/ops.def"
#undef GFX_OP
  GFX_OP_COUNT
} gfx_op;

#define IR_MAX_IO 8 /* inputs or outputs of one node */

/* ---- per-op parameters, filled by the op's parse function ---- */

typedef enum ir_auto_pad {
  IR_PAD_NOTSET = 0, /* explicit pads */
  IR_PAD_SAME_UPPER,
  IR_PAD_SAME_LOWER,
  IR_PAD_VALID,
} ir_auto_pad;

#define IR_MAX_SPATIAL 3

/* What a Conv or ConvTranspose applies after its bias; set by ir_fuse when an activation follows.
 * The formulas are those of the element-wise ops of the same names, with act_alpha / act_beta:
 *   LEAKY_RELU, ELU: alpha; HARD_SIGMOID: alpha, beta; CLIP: min in act_alpha, max in act_beta
 *   (-inf / +inf for an absent bound, which compare like no bound at all). */
typedef enum ir_conv_activation {
  IR_ACT_NONE = 0,
  IR_ACT_RELU,
  IR_ACT_LEAKY_RELU,
  IR_ACT_CLIP,
  IR_ACT_SIGMOID,
  IR_ACT_TANH,
  IR_ACT_HARD_SIGMOID,
  IR_ACT_HARD_SWISH,
  IR_ACT_ELU,
  IR_ACT_COUNT
} ir_conv_activation;

/* A Conv's residual input (set by ir_fuse when an Add of a same-shaped tensor r follows): input
 * IR_CONV_RESIDUAL_INPUT (inputs[2] is -1 when there is no bias), shaped exactly like the output. */
typedef enum ir_conv_residual {
  IR_RES_NONE = 0,
  IR_RES_ADD_THEN_ACT, /* y = act(conv + b + r), as in ResNet's relu(conv + shortcut) */
  IR_RES_ACT_THEN_ADD, /* y = act(conv + b) + r */
} ir_conv_residual;

#define IR_CONV_RESIDUAL_INPUT 3

/* A convolution chain (made by ir_fuse_for, ir/fuse_chain.c): Conv -> Conv, both 2-D 3x3 with stride
 * 1, dilation 1 and pads of 1 on every side, one group, no residual, one element type and layout, the
 * first conv's output read by the second alone. The fused Conv computes
 *   y = act(conv(act_a(conv(x, W_a) + B_a), W) + B)
 * without writing the first conv's output: inputs 1 and 2 are the second conv's W [Cout, Cmid, 3, 3]
 * and B (or -1), input IR_CONV_RESIDUAL_INPUT is -1, input IR_CONV_CHAIN_WEIGHT_INPUT is W_a
 * [Cmid, Cin, 3, 3] and the one after it B_a [Cmid] (or -1). act_a is params.conv.chain_activation
 * with chain_alpha / chain_beta; act is the node's own activation. */
#define IR_CONV_CHAIN_WEIGHT_INPUT 4

typedef struct ir_conv_params {
  int spatial;                      /* number of spatial dims (2 for NCHW) */
  int64_t group;
  int64_t kernel[IR_MAX_SPATIAL];   /* 0 when taken from the weight shape */
  int64_t strides[IR_MAX_SPATIAL];
  int64_t dilations[IR_MAX_SPATIAL];
  int64_t pads[2 * IR_MAX_SPATIAL]; /* begin..., end... as in ONNX; resolved at run time for auto_pad */
  ir_auto_pad auto_pad;
  /* Epilogue after the convolution and its bias (set by ir_fuse; all zero = none). */
  int activation;                            /* ir_conv_activation */
  float act_alpha, act_beta;                 /* the activation's parameters (see ir_conv_activation) */
  int residual;                              /* ir_conv_residual; Conv only */
  /* ConvTranspose only */
  int64_t output_padding[IR_MAX_SPATIAL];
  int64_t output_shape[IR_MAX_SPATIAL];      /* spatial output size when has_output_shape */
  int has_output_shape;
  int dtype;                                 /* element type of every operand (GFX_DTYPE_*); 0 = float32 */
  /* Conv only, 2-D only: X, Y and the residual are channels-last (N, H, W, C), as ONNX Runtime's layout
   * transformer hands them over (domain com.ms.internal.nhwc); W stays [M, C/group, kH, kW]. */
  int channels_last;
  /* with channels_last: X stays NCHW (the Transpose before it folded in by ir_fuse_for, ir/fuse_layout.c) */
  int nchw_input;
  /* with channels_last: W's elements are stored in [M, kH, kW, C/group] order, the order channels-last
   * kernels read; its declared shape stays ONNX's [M, C/group, kH, kW] (a constant W rewritten once by
   * ir_fuse_for, ir/fuse_layout.c, instead of on every run) */
  int weights_channels_last;
  /* Conv only: a convolution chain (see IR_CONV_CHAIN_WEIGHT_INPUT); the first conv's activation */
  int chain;
  int chain_activation;
  float chain_alpha, chain_beta;
} ir_conv_params;
#define IR_NHWC_DOMAIN "com.ms.internal.nhwc"

/* ---- element-wise params (ir/ops_elementwise.c) ---- */
/* Attributes of the element-wise ops, all with their ONNX meaning. A zeroed struct is valid for the
 * ops without attributes (Relu, Add, ...), so kernels may be handed nodes built without parse. */
typedef struct ir_elementwise_params {
  float alpha;          /* LeakyRelu, HardSigmoid, Elu, Selu */
  float beta;           /* HardSigmoid */
  float gamma;          /* Selu */
  int has_min, has_max; /* Clip: whether each bound applies */
  float min, max;       /* Clip bounds */
  int gelu_tanh;        /* Gelu: approximate="tanh" */
  float epsilon;        /* BatchNormalization */
} ir_elementwise_params;
/* end of element-wise params */

/* ---- layout params (ir/ops_layout.c) ---- */

/* Pad's modes; also how a strided copy plan (ir/layout.h) treats source coordinates outside the
 * source: a constant, the nearest edge element, a mirror image without the edge, or the periodic
 * continuation (Tile is the wrap mode of a plan). */
typedef enum ir_pad_mode { IR_PADMODE_CONSTANT = 0, IR_PADMODE_EDGE, IR_PADMODE_REFLECT, IR_PADMODE_WRAP } ir_pad_mode;

/* Everything the layout ops read from attributes and constant inputs, copied at parse time. Axes
 * are kept as written (possibly negative): the rank may only be known at run time. */
typedef struct ir_layout_params {
  int dtype;          /* element type of the data moved (the output's) */
  int has_ints;       /* ints was given (Transpose perm, Squeeze axes, Split sizes...) */
  int n_ints;
  int64_t ints[2 * GFX_MAX_RANK]; /* perm, shape, repeats, pads, split sizes, axes: per op */
  int64_t axis;                   /* Concat, Split, Gather, Flatten */
  int n_axes;                     /* Slice and Pad axes; 0 = all dims in order */
  int64_t axes[GFX_MAX_RANK];
  int64_t starts[GFX_MAX_RANK], ends[GFX_MAX_RANK], steps[GFX_MAX_RANK]; /* Slice; Shape uses starts[0]/ends[0] */
  int num_outputs;                /* Split-18's num_outputs, 0 when absent */
  int allowzero;                  /* Reshape-14 */
  ir_pad_mode mode;               /* Pad */
  unsigned char value[8];         /* Pad constant, ConstantOfShape value: one element of dtype */
  /* Split with a Squeeze and/or Transpose of an output fused in (ir/fuse.c): output i's dim k is
   * dim split_map[i][k] of its piece, the piece dims it leaves out are 1; split_map_rank[i] = 0
   * means output i is its piece as it is. */
  signed char split_map[IR_MAX_IO][GFX_MAX_RANK];
  signed char split_map_rank[IR_MAX_IO];
  /* Slice: a bit per input whose values are computed at run time (bit 1 starts, bit 2 ends): their
   * counts are known, their values are not until the executor reads them back and folds them into
   * starts/ends (ir_node_resolve, ir/dynamic.h); 0 once resolved, or when every list is constant */
  unsigned char value_inputs;
} ir_layout_params;
/* end of layout params */

/* ---- resampling params (ir/ops_resize.c) ---- */
/* Resize and Upsample over any dims of the input; the geometry for a concrete input shape comes
 * from ir_resize_geometry (ir/resize_geom.h), the enums from there too. */
typedef struct ir_resize_params {
  int rank;             /* input rank, known at parse */
  int mode;             /* IR_RESIZE_NEAREST, _LINEAR, _CUBIC */
  int coord;            /* IR_COORD_* */
  int nearest;          /* IR_NEAREST_* */
  int exclude_outside;
  int from_sizes;       /* 1: the output sizes are given (sizes), 0: scales are */
  int policy;           /* keep_aspect_ratio_policy with sizes: 0 stretch, 1 not_larger, 2 not_smaller */
  int policy_axes;      /* bit k: dim k takes part in the policy */
  int leading;          /* some dim before the last two may resize (ir_resize_geom.general then at run time) */
  float cubic_a;
  float extrapolation;
  float scales[GFX_MAX_RANK];  /* per dim, when from_sizes == 0 */
  int64_t sizes[GFX_MAX_RANK]; /* per dim, when from_sizes == 1; -1: the input's dim (axis not listed) */
  float roi[2 * GFX_MAX_RANK]; /* tf_crop_and_resize: the starts of every dim, then the ends (normalized) */
  /* sizes computed at run time: bit 3 until the executor reads them back and ir_node_resolve folds
   * entry k into sizes[size_axis[k]] (ir/dynamic.h); n_sizes entries were declared */
  unsigned char value_inputs;
  int8_t n_sizes;
  int8_t size_axis[GFX_MAX_RANK];
} ir_resize_params;

/* Where one operand of a fused attention lies in the tensor the node reads: element `offset`, then
 * `stride` elements per step along the logical dims [batch, heads, position, head element] (0 along
 * a broadcast dim). */
typedef struct ir_attention_view {
  int64_t offset;
  int64_t stride[4];
} ir_attention_view;

/* Attention (opset 23): Q, K, V of rank 4 [batch, heads, seq, head size] or rank 3 [batch, seq,
 * heads x head size] (q_num_heads/kv_num_heads given), K and V sharing kv heads that divide Q's;
 * an optional mask (bool: true attends; float: added to the scores); Y only.
 *
 * `fused` marks the node ir_fuse makes of MatMul(Q, Kᵀ), scalar scales, additive masks, Softmax and
 * MatMul(·, V) (ir/fuse_attention.c; parse never sets it): inputs 0, 1, 2 are the tensors Q, K and V
 * are read from in place, through the views q, k and v (a slice, transpose or split of a projection
 * needs no copy); input 3 (has_mask) and input 4 (has_mask2) are float masks of the inputs' type,
 * added to the scores in that order through mask_stride / mask2_stride; Y (of shape y_shape) is
 * written through view y. The sizes are fixed at fusion time from the declared shapes, and every
 * input must have in_numel[i] elements at run time. */
typedef struct ir_attention_params {
  int is_causal;         /* query i attends keys j <= i (upper-left aligned, no past) */
  int has_mask;          /* input 3 present */
  int mask_bool;         /* the mask is bool rather than Q's type */
  int64_t q_heads, kv_heads; /* rank 3: q_num_heads, kv_num_heads; rank 4: 0 (read from the shapes) */
  float scale;           /* 0: 1 / sqrt(head size); fused: the product's scale itself */
  /* fused only */
  int fused;
  int has_mask2;
  int64_t batch, heads, q_seq, kv_seq, head_size, v_head_size;
  ir_attention_view q, k, v, y;
  int64_t mask_stride[4], mask2_stride[4];
  int64_t in_numel[5];
  gfx_shape y_shape;
} ir_attention_params;

/* RoiAlign (opset 10, 16): X [N, C, H, W], rois [R, 4] of (x1, y1, x2, y2), batch_indices [R] */
typedef struct ir_roi_align_params {
  int mode_max;          /* mode "max" (1) or "avg" (0) */
  int half_pixel;        /* coordinate_transformation_mode half_pixel (opset 16's default) or output_half_pixel */
  int64_t out_h, out_w;  /* output_height, output_width */
  int64_t sampling_ratio; /* sample points per bin along each dim; 0: ceil(roi size / output size) */
  float spatial_scale;
} ir_roi_align_params;

/* DepthToSpace and SpaceToDepth, rank 4 */
typedef struct ir_space_depth_params {
  int64_t blocksize;
  int crd;              /* DepthToSpace mode CRD (1) or DCR (0) */
  int nhwc_input;       /* DepthToSpace only: the input is [N, H, W, C] (a channels-last Conv's output
                         * whose Transpose back to NCHW ir_fuse_for folded in); the output stays NCHW */
} ir_space_depth_params;

/* GridSample over rank-4 NCHW input; the enums and the sampling rules are in ir/grid_sample_geom.h */
typedef struct ir_grid_sample_params {
  int mode;             /* IR_GRID_NEAREST, _LINEAR, _CUBIC */
  int padding;          /* IR_GRID_PAD_ZEROS, _BORDER, _REFLECTION */
  int align_corners;
} ir_grid_sample_params;
/* end of resampling params */

/* ---- reduction params (ir/ops_reduce.c) ---- */
typedef enum ir_reduce_kind {
  IR_REDUCE_SUM = 0,
  IR_REDUCE_MEAN,
  IR_REDUCE_MAX,
  IR_REDUCE_MIN,
  IR_REDUCE_L2,
  IR_REDUCE_L1,
  IR_REDUCE_SUM_SQUARE,
  IR_REDUCE_ARGMAX, /* the index (int64) of the first (or, with select_last, last) extreme along one axis */
  IR_REDUCE_ARGMIN,
  IR_REDUCE_PROD,
  IR_REDUCE_LOG_SUM_EXP, /* max + log(sum(exp(x - max))): no overflow */
} ir_reduce_kind;

/* ReduceSum/Mean/Max/Min/L2, GlobalAveragePool, GlobalMaxPool. Axes are kept as written (possibly
 * negative) and resolved against the concrete rank at run time (ir_reduce_geometry). */
typedef struct ir_reduce_params {
  ir_reduce_kind kind;
  int8_t n_axes;                 /* 0: all axes, or none with noop_with_empty_axes */
  int8_t keepdims;
  int8_t noop;                   /* noop_with_empty_axes and no axes: the output is the input */
  int8_t global_pool;            /* reduce every dim from 2 on, keepdims */
  int8_t select_last;            /* ArgMax/ArgMin: the last index among equal extremes */
  int8_t axes[GFX_MAX_RANK];
} ir_reduce_params;

typedef enum ir_pool_kind { IR_POOL_MAX = 0, IR_POOL_AVERAGE } ir_pool_kind;

/* 2-D (NCHW) and 3-D (NCDHW) MaxPool / AveragePool. The arrays hold n_spatial entries in ONNX's
 * order (for 3-D: depth, height, width); pads holds the n_spatial begins, then the n_spatial ends. */
typedef struct ir_pool_params {
  ir_pool_kind kind;
  ir_auto_pad auto_pad;
  int8_t n_spatial; /* 2 or 3 */
  int8_t ceil_mode;
  int8_t count_include_pad;
  int8_t channels_last; /* 2-D only: X and Y are N, H, W, C (ONNX Runtime's layout transformer hands
                         * the node over in its internal NHWC domain, as for Conv) */
  int32_t kernel[3], strides[3], dilations[3];
  int32_t pads[6]; /* resolved at run time for auto_pad */
} ir_pool_params;

/* Softmax / LogSoftmax: rows of `axis` (opset >= 13) or, for opsets 11-12, the input flattened to
 * 2-D at `axis` with each row of the flattened matrix normalized. LpNormalization shares the
 * geometry: each row along `axis` divided by its L1 or L2 norm (lp = 1 or 2; 0 for the softmaxes). */
typedef struct ir_softmax_params {
  int8_t axis;
  int8_t log;
  int8_t flatten;
  int8_t lp;
} ir_softmax_params;

#define IR_NORM_RESIDUAL_INPUT 3

typedef enum ir_norm_kind { IR_NORM_LAYER = 0, IR_NORM_INSTANCE, IR_NORM_GROUP, IR_NORM_RMS } ir_norm_kind;

/* LayerNormalization, InstanceNormalization, GroupNormalization, RMSNormalization (no mean is
 * subtracted: the rows are divided by their root mean square). */
typedef struct ir_norm_params {
  ir_norm_kind kind;
  int8_t axis;              /* LayerNormalization, RMSNormalization, as written */
  int8_t per_channel;       /* GroupNormalization 21: scale and bias per channel (18: per group) */
  /* LayerNormalization with a residual Add fused in (ir/fuse_norm.c; parse never sets it): input 3,
   * of input 0's shape and type, is added to input 0 and the sum rounded to their type is
   * normalized; output 1, when the node has it, is that sum (no Mean/InvStdDev outputs then). */
  int8_t residual;
  /* InstanceNormalization of N x C x H x W with the nodes after it fused in (ir/fuse_norm.c; parse
   * never sets these): y = act(norm(x) + input 3) written with reflect padding around H and W, each
   * step rounded to the element type as the separate nodes rounded it. add_after: input
   * IR_NORM_RESIDUAL_INPUT, of X's shape, is added (a following Add); activation: IR_ACT_NONE or
   * IR_ACT_RELU (a following Relu); reflect_pad: Y is padded by out_pads (top, left, bottom, right;
   * each below the padded dim, a following Pad in reflect mode). */
  int8_t add_after;
  int8_t activation;
  int8_t reflect_pad;
  int32_t out_pads[4];
  int32_t num_groups;
  float epsilon;
} ir_norm_params;

/* Whether a normalization carries any of the fused epilogue above. */
static inline int ir_norm_has_epilogue(const ir_norm_params* p) {
  return p->add_after || p->activation != IR_ACT_NONE || p->reflect_pad;
}
/* LRN over the channels (dim 1) of N x C x spatial: y = x / (bias + alpha / size * sum of x^2 over
 * the channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2) inside the input)^beta. */
typedef struct ir_lrn_params {
  int64_t size;
  float alpha, beta, bias;
} ir_lrn_params;
/* end of reduction params */

/* ---- convolution params (ir/ops_nn.c) ---- */
/* Gemm: y = alpha * op(a) op(b) + beta * c, op = transpose when trans_* is set. MatMul parses as
 * alpha 1, beta 0, no transposes; ir_fuse may then set its trans_b (a Transpose of b folded in) and
 * alpha (a scalar Mul of the product folded in). MatMul never uses trans_a or beta. */
typedef struct ir_gemm_params {
  int trans_a, trans_b;
  float alpha, beta;
  int dtype; /* element type of every operand (GFX_DTYPE_*); 0 = float32 */
} ir_gemm_params;
/* end of convolution params */

/* ---- logic, Mod, scans and index params (ir/ops_index.c) ---- */
typedef enum ir_scatter_reduction {
  IR_SCATTER_NONE = 0, /* replace */
  IR_SCATTER_ADD,
  IR_SCATTER_MUL,
  IR_SCATTER_MAX,
  IR_SCATTER_MIN,
} ir_scatter_reduction;

/* Mod, CumSum, Range, Trilu, GatherElements, GatherND, ScatterElements, ScatterND: each reads only
 * its own fields; a zeroed struct is Mod with fmod 0, CumSum along axis 0, and so on. Axes are kept
 * as written (possibly negative) and resolved against the concrete rank at run time. */
typedef struct ir_index_params {
  int64_t axis;       /* CumSum (from its constant input), GatherElements, ScatterElements, TopK */
  int64_t k;          /* Trilu's diagonal offset (constant input; 0 when absent); TopK's count */
  int64_t count;      /* Range: the number of elements, from the constant start, limit and delta */
  double start, delta; /* Range of float32 */
  int64_t start_i, delta_i; /* Range of int32/int64 */
  int dtype;          /* Range: the output's element type; TopK: X's */
  int8_t fmod;        /* Mod: C fmod (1) or the remainder with the divisor's sign (0) */
  int8_t exclusive, reverse; /* CumSum */
  int8_t upper;       /* Trilu */
  int8_t batch_dims;  /* GatherND */
  int8_t reduction;   /* ir_scatter_reduction: ScatterElements, ScatterND */
  int8_t largest;     /* TopK: the k largest (1) or smallest (0); always sorted, ties by lower index */
  /* TopK: bit 1 when k is computed at run time (k is -1 until ir_node_resolve folds in the value the
   * executor read back, ir/dynamic.h) */
  unsigned char value_inputs;
} ir_index_params;
/* end of index params */

/* ---- quantization params (ir/ops_quant.c) ---- */
/* QuantizeLinear / DequantizeLinear: the scale (and zero point) are per tensor or, when they hold
 * more than one value, per entry along `axis` (as written, possibly negative; resolved against the
 * concrete rank at run time by ir_quant_geometry). */
typedef struct ir_quant_params {
  int64_t axis;
  int dtype;   /* the output's element type: int8/uint8 (Quantize), float32/float16/bfloat16 (Dequantize) */
} ir_quant_params;
/* end of quantization params */

/* ---- selection params: NonZero, NonMaxSuppression (ir/ops_select.c) ---- */
/* The two ops whose output count only the data decides. The IR runs each as a bounded node: output 0
 * at an upper bound the input shapes decide (NonZero: [max(rank, 1), numel(X)], columns past the
 * count unwritten; NonMaxSuppression: [batches x classes x min(max_output, boxes), 3], rows past the
 * count unwritten) and output 1, the count (int64 [1]); ir_graph_add_node follows it with a Slice of
 * the bound to the count (ir/dynamic.h), which the executor resolves once it has read the count. */
typedef struct ir_select_params {
  int dtype;              /* NonZero: X's element type; NonMaxSuppression: boxes' and scores' */
  int center_point_box;   /* NonMaxSuppression: boxes as [y1, x1, y2, x2] (0) or [x, y, w, h] centred (1) */
  int has_score_threshold; /* without one every box is a candidate */
  float iou_threshold;    /* a box is suppressed by a selected one whose IoU with it is above this */
  float score_threshold;  /* candidates score above this (strictly) */
  int64_t max_output;     /* boxes kept per batch and class, >= 0 (0: none) */
} ir_select_params;
/* end of selection params */

typedef union ir_params {
  ir_conv_params conv;
  /* element-wise members */
  ir_elementwise_params elementwise;

  /* layout members */
  ir_layout_params layout;

  /* resampling members */
  ir_resize_params resize;
  ir_space_depth_params space_depth;
  ir_grid_sample_params grid_sample;
  ir_roi_align_params roi_align;
  ir_attention_params attention;

  /* reduction members */
  ir_reduce_params reduce;
  ir_pool_params pool;
  ir_softmax_params softmax;
  ir_norm_params norm;
  ir_lrn_params lrn;

  /* convolution members */
  ir_gemm_params gemm;

  /* logic, Mod, scan and index members */
  ir_index_params index;

  /* quantization members */
  ir_quant_params quant;

  /* selection members (data-dependent output counts) */
  ir_select_params select;
} ir_params;

/* ---- graph ---- */

typedef struct ir_value {
  char* name;
  int dtype;
  gfx_shape shape;   /* declared shape; GFX_DIM_UNKNOWN for dims only known at run time */
  int producer;      /* node index, or -1 for graph inputs and constants */
  int graph_input;   /* index among the graph inputs, or -1 */
  int graph_output;  /* index among the graph outputs, or -1 */
  void* const_data;  /* host copy of a constant initializer (owned), or NULL */
  size_t const_bytes;
} ir_value;

/* How much a backend may round float32 products (the precision option). */
typedef enum ir_math_mode {
  IR_MATH_STRICT = 0,      /* float32 arithmetic throughout */
  IR_MATH_REDUCED_F32 = 1, /* float32 convolutions and matrix products may multiply with a shorter mantissa and
                            * accumulate in float32 (TF32 tensor cores on NVIDIA; precision=tf32) */
} ir_math_mode;

typedef struct ir_node {
  gfx_op op;
  char* name;
  int n_inputs, n_outputs;
  int inputs[IR_MAX_IO];  /* value indices; -1 for an absent optional input */
  int outputs[IR_MAX_IO];
  ir_params params;
  ir_math_mode math_mode;
} ir_node;

typedef struct ir_graph {
  ir_value* values;
  int n_values, cap_values;
  ir_node* nodes; /* topological order */
  int n_nodes, cap_nodes;
  int* inputs;    /* value indices, in the order the compiled node receives them */
  int n_inputs;
  int* outputs;
  int n_outputs;
} ir_graph;

ir_graph* ir_graph_new(void);
void ir_graph_free(ir_graph* g);
/* A deep copy (names, constants, nodes and their parameters). */
gfx_status ir_graph_clone(const ir_graph* g, ir_graph** out);

/* Adds a value (name copied) and returns its index through *index. */
gfx_status ir_graph_add_value(ir_graph* g, const char* name, int dtype, const gfx_shape* shape, int* index);
/* Finds a value by name; -1 if absent. */
int ir_graph_find_value(const ir_graph* g, const char* name);
/* Makes value index a constant holding a copy of bytes. The size must match dtype and shape. */
gfx_status ir_graph_set_constant(ir_graph* g, int index, const void* bytes, size_t size);
gfx_status ir_graph_add_input(ir_graph* g, int value);
gfx_status ir_graph_add_output(ir_graph* g, int value);
/* Appends a node; its params are filled by ir_op_parse. Nodes must be added in topological order
 * (each input produced by an earlier node, or a graph input or constant). */
gfx_status ir_graph_add_node(ir_graph* g, gfx_op op, const char* name, const int* inputs, int n_inputs,
                             const int* outputs, int n_outputs, const ir_params* params);
/* Checks the invariants the planner and executors rely on. */
gfx_status ir_graph_validate(const ir_graph* g);

/* ---- the op table ---- */

/* What parse sees of a node: its type signature and its attributes, through callbacks so that the
 * IR does not depend on who holds the attributes (ORT's OrtNode in production, a table in tests).
 * Each getter returns 1 when the attribute is present, 0 when absent, -1 when it is present with
 * another type. */
typedef struct ir_attr_reader {
  void* ctx;
  int (*get_int)(void* ctx, const char* name, int64_t* out);
  int (*get_float)(void* ctx, const char* name, float* out);
  /* Writes up to cap values and the full count in *n. */
  int (*get_ints)(void* ctx, const char* name, int64_t* out, size_t cap, size_t* n);
  /* Writes a NUL-terminated string, truncated to cap. */
  int (*get_string)(void* ctx, const char* name, char* out, size_t cap);
  /* A tensor attribute (ConstantOfShape's value): its element type, element count and, when its
   * bytes fit in cap, the bytes; -1 when it is no tensor or cannot be read, or holds more than cap
   * bytes. NULL in a reader that has no tensors: every tensor attribute reads as absent. */
  int (*get_tensor)(void* ctx, const char* name, int* dtype, int64_t* count, void* out, size_t cap);
  /* The names of all attributes the node carries, so that an attribute gfxep does not know makes
   * the node unsupported instead of being ignored. */
  int (*count)(void* ctx);
  const char* (*name_at)(void* ctx, int i);
} ir_attr_reader;

typedef struct ir_node_desc {
  const char* op_type;
  const char* domain;     /* "" or "ai.onnx" for the default domain */
  int since_version;      /* operator-set version of the node's schema */
  const char* name;
  int n_inputs, n_outputs;
  int input_dtypes[IR_MAX_IO];      /* GFX_DTYPE_UNDEFINED for an absent optional input */
  gfx_shape input_shapes[IR_MAX_IO]; /* rank -1 when even the rank is unknown */
  int input_is_const[IR_MAX_IO];
  /* the bytes of a constant input (a shape, axes, pads, scales...), NULL for any other input; valid
   * only while the node is being parsed: parse copies what it needs into ir_params */
  const void* input_const_data[IR_MAX_IO];
  size_t input_const_bytes[IR_MAX_IO];
  int output_dtypes[IR_MAX_IO];
  ir_attr_reader attrs;
  /* 0, or the type a partition computed in a lower precision (precision=fp16/bf16) gives the
   * node's float32 values: an attribute naming float32 (Cast's 'to') then means this type */
  int lowered_to;
} ir_node_desc;

/* Looks up the op and parses the node. On success *op and *params describe it. A node gfxep does
 * not run returns GFX_ERR_NOT_SUPPORTED with a message saying why, which callers log. */
gfx_status ir_op_parse(const ir_node_desc* desc, gfx_op* op, ir_params* params);

/* Whether gfxep parses the op (an ONNX op type) in ONNX Runtime's internal NHWC domain: Conv,
 * MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, Resize. */
int ir_op_channels_last_capable(const char* op_type);

/* The params the node (parsed from d as op and params, in the ONNX domain) would have after ONNX
 * Runtime's layout transformer hands it over channels-last: a 2-D Conv, a 2-D MaxPool or
 * AveragePool, a global pool of a rank-4 input (a mean or maximum over H and W of N, H, W, C), a
 * Resize of a rank-4 input with constant scales or sizes and neither roi nor axes (the transformer
 * permutes the scales or sizes, not those). A node already channels-last gives its own params.
 * GFX_ERR_NOT_SUPPORTED for any other node. */
gfx_status ir_params_channels_last(gfx_op op, const ir_node_desc* d, const ir_params* params, ir_params* out);

const char* ir_op_name(gfx_op op);
int ir_op_min_opset(gfx_op op);
const char* ir_op_summary(gfx_op op);
gfx_op ir_op_from_name(const char* onnx_name);
/* Whether the op's output 0 holds exactly the bytes of its input 0 (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity): the planner lets the output share the input's memory, and the executor then
 * skips the node. */
int ir_op_is_view(gfx_op op);

#endif
