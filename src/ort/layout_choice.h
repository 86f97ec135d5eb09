/* gfxep — layout=auto: whether ONNX Runtime hands a graph's convolutions over channels-last, decided
 * from the nodes GetCapability takes (ORT asks for the EP's preferred layout right after that call,
 * and transforms the graph then).
 *
 * The rule is fitted to the H200 measurements of docs/performance.md (gfxep's layout table):
 * channels-last paid for 16-bit nets of dense convolutions that feed each other (sr64_x4 0.68x of
 * NCHW, ResNet-18 0.88x, UNet 0.89x, ESPCN 0.95x in float16) and lost where cuDNN's NHWC float32 or
 * depthwise kernels are slow (MobileNetV2 float16 1.46x, float32 nets up to 1.68x) or where ops that
 * stay NCHW sit between the convolutions, each wrapped in Transposes (style transfer's Pads and
 * InstanceNormalizations: 1.04x in float16). In float32 it paid only for nets whose Convs are mostly
 * 1x1 (run channels-last as one cuBLASLt product each): ResNet-50 0.88x of NCHW on an H100, against
 * 1.4x to 2.6x for the 3x3 nets (ESPCN, UNet, style transfer).
 */
#ifndef GFXEP_ORT_LAYOUT_CHOICE_H
#define GFXEP_ORT_LAYOUT_CHOICE_H

#include <stddef.h>

#include "ir/graph.h"

typedef struct gfx_layout_census {
  int convs;          /* Convs gfxep takes */
  int convs_movable;  /* of them, 2-D ones the backend runs channels-last too */
  int convs_grouped;  /* of them, with group > 1 (depthwise ones among them) */
  int convs_16bit;    /* of them, in float16 or bfloat16 */
  int convs_pointwise; /* of them, 1x1 of stride 1 with no pads (a product over the pixels channels-last) */
  int layout_bound;   /* other nodes gfxep takes that read the channel axis and stay NCHW (pooling,
                       * normalization, resampling, ConvTranspose): ORT wraps each in Transposes */
  int channels_last;  /* nodes already channels-last: ORT's second call, after it chose NHWC */
  unsigned nhwc_taken;  /* GFX_LAYOUT_NHWC_* bits: pooling and Resize op types gfxep takes */
  unsigned nhwc_fixed;  /* of them, those with a node the backend cannot run channels-last */
} gfx_layout_census;

/* The op types besides Conv that gfxep may have ORT's layout transformer hand over channels-last
 * (pooling, Resize), as bits. */
enum {
  GFX_LAYOUT_NHWC_MAX_POOL = 1,
  GFX_LAYOUT_NHWC_AVERAGE_POOL = 2,
  GFX_LAYOUT_NHWC_GLOBAL_AVERAGE_POOL = 4,
  GFX_LAYOUT_NHWC_GLOBAL_MAX_POOL = 8,
  GFX_LAYOUT_NHWC_RESIZE = 16,
};

/* The GFX_LAYOUT_NHWC_* bit of an op (or of an ONNX op type for the name form), 0 for others. */
unsigned gfx_layout_nhwc_bit(gfx_op op);
unsigned gfx_layout_nhwc_bit_of_type(const char* op_type);

/* Counts one node gfxep takes; movable: a Conv, pooling or Resize node whose channels-last form the
 * backend also runs. A movable pooling or Resize node does not count as layout-bound: ORT converts it
 * with the Convs (unless another node of its op type cannot go: a slight undercount then), and the
 * Transposes around it cancel. */
void gfx_layout_census_add(gfx_layout_census* c, gfx_op op, const ir_params* params, int movable, int pointwise);

/* The op types besides Conv ORT's layout transformer may convert for this graph: every node of the type
 * gfxep takes runs channels-last (ORT converts per op type, and a converted node gfxep then could
 * not take would have no kernel anywhere). */
static inline unsigned gfx_layout_convertible_ops(const gfx_layout_census* c) {
  return c->nhwc_taken & ~c->nhwc_fixed;
}

/* 1 for channels-last, 0 for NCHW; why (may be NULL) says which count decided, for the log. */
int gfx_layout_prefers_nhwc(const gfx_layout_census* c, int precision_16bit, char* why, size_t why_size);

#endif
