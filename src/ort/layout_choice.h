/* gfxep — layout=auto: whether ONNX Runtime hands a graph's convolutions over channels-last, decided
 * from the nodes GetCapability takes (ORT asks for the EP's preferred layout right after that call,
 * and transforms the graph then).
 *
 * The rule is fitted to the H200 measurements of docs/performance.md (gfxep's layout table):
 * channels-last paid for 16-bit nets of dense convolutions that feed each other (sr64_x4 0.68x of
 * NCHW, ResNet-18 0.88x, UNet 0.89x, ESPCN 0.95x in float16) and lost where cuDNN's NHWC float32 or
 * depthwise kernels are slow (MobileNetV2 float16 1.46x, float32 nets up to 1.68x) or where ops that
 * stay NCHW sit between the convolutions, each wrapped in Transposes (style transfer's Pads and
 * InstanceNormalizations: 1.04x in float16).
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
  int layout_bound;   /* other nodes gfxep takes that read the channel axis and stay NCHW (pooling,
                       * normalization, resampling, ConvTranspose): ORT wraps each in Transposes */
  int channels_last;  /* nodes already channels-last: ORT's second call, after it chose NHWC */
} gfx_layout_census;

/* Counts one node gfxep takes; movable: a Conv whose channels-last form the backend also runs. */
void gfx_layout_census_add(gfx_layout_census* c, gfx_op op, const ir_params* params, int movable);

/* 1 for channels-last, 0 for NCHW; why (may be NULL) says which count decided, for the log. */
int gfx_layout_prefers_nhwc(const gfx_layout_census* c, int precision_16bit, char* why, size_t why_size);

#endif
