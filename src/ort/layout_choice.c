/* gfxep — layout=auto (see the header). */
#include "ort/layout_choice.h"

#include <stdio.h>
#include <string.h>

unsigned gfx_layout_nhwc_bit(gfx_op op) {
  switch (op) {
    case GFX_OP_MAX_POOL: return GFX_LAYOUT_NHWC_MAX_POOL;
    case GFX_OP_AVERAGE_POOL: return GFX_LAYOUT_NHWC_AVERAGE_POOL;
    case GFX_OP_GLOBAL_AVERAGE_POOL: return GFX_LAYOUT_NHWC_GLOBAL_AVERAGE_POOL;
    case GFX_OP_GLOBAL_MAX_POOL: return GFX_LAYOUT_NHWC_GLOBAL_MAX_POOL;
    case GFX_OP_RESIZE: return GFX_LAYOUT_NHWC_RESIZE;
    default: return 0;
  }
}

unsigned gfx_layout_nhwc_bit_of_type(const char* op_type) {
  const gfx_op op = ir_op_from_name(op_type);
  return op == GFX_OP_NONE ? 0 : gfx_layout_nhwc_bit(op);
}

static int layout_bound(gfx_op op) {
  switch (op) {
    case GFX_OP_BATCH_NORM:
    case GFX_OP_INSTANCE_NORMALIZATION:
    case GFX_OP_GROUP_NORMALIZATION:
    case GFX_OP_LRN:
    case GFX_OP_MAX_POOL:
    case GFX_OP_AVERAGE_POOL:
    case GFX_OP_GLOBAL_AVERAGE_POOL:
    case GFX_OP_GLOBAL_MAX_POOL:
    case GFX_OP_CONV_TRANSPOSE:
    case GFX_OP_DEPTH_TO_SPACE:
    case GFX_OP_SPACE_TO_DEPTH:
    case GFX_OP_RESIZE:
    case GFX_OP_UPSAMPLE:
    case GFX_OP_GRID_SAMPLE:
    case GFX_OP_ROI_ALIGN:
      return 1;
    default:
      return 0;
  }
}

void gfx_layout_census_add(gfx_layout_census* c, gfx_op op, const ir_params* params, int movable, int pointwise) {
  const unsigned bit = gfx_layout_nhwc_bit(op);
  if (bit) {
    c->nhwc_taken |= bit;
    if (!movable) c->nhwc_fixed |= bit;
  }
  if (op != GFX_OP_CONV) {
    c->layout_bound += layout_bound(op) && !(bit && movable);
    return;
  }
  const ir_conv_params* p = &params->conv;
  c->convs++;
  c->convs_movable += movable;
  c->convs_grouped += p->group > 1;
  c->convs_16bit += p->dtype == GFX_DTYPE_F16 || p->dtype == GFX_DTYPE_BF16;
  c->convs_pointwise += pointwise;
  c->channels_last += p->channels_last;
}

int gfx_layout_prefers_nhwc(const gfx_layout_census* c, int precision_16bit, char* why, size_t why_size) {
  char scratch[8];
  if (!why) {
    why = scratch;
    why_size = sizeof scratch;
  }
  const int sixteen = precision_16bit ? c->convs : c->convs_16bit;
  if (c->channels_last) {
    snprintf(why, why_size, "%d Convs already channels-last", c->channels_last);
    return 1;
  }
  if (c->convs < 2) {
    snprintf(why, why_size, "%d Conv%s", c->convs, c->convs == 1 ? "" : "s");
    return 0;
  }
  if (c->convs_movable < c->convs) {
    snprintf(why, why_size, "%d of %d Convs have no channels-last kernel", c->convs - c->convs_movable, c->convs);
    return 0;
  }
  /* float32: only deep nets whose Convs are mostly 1x1 products (cuDNN's float32 NHWC windows are
   * slow, and a few Convs do not pay for the Transposes at the graph's edges) */
  if (sixteen < c->convs && (2 * c->convs_pointwise < c->convs || c->convs < 8)) {
    snprintf(why, why_size, "%d of %d Convs compute in float32, %d of them 1x1", c->convs - sixteen, c->convs,
             c->convs_pointwise);
    return 0;
  }
  if (4 * c->convs_grouped > c->convs) {
    snprintf(why, why_size, "%d of %d Convs grouped or depthwise", c->convs_grouped, c->convs);
    return 0;
  }
  if (2 * c->layout_bound > c->convs) {
    snprintf(why, why_size, "%d pooling, normalization or resampling nodes between %d Convs", c->layout_bound,
             c->convs);
    return 0;
  }
  snprintf(why, why_size, "%d %s Convs, %d grouped, %d 1x1, %d pooling, normalization or resampling nodes", c->convs,
           sixteen < c->convs ? "float32" : "16-bit", c->convs_grouped, c->convs_pointwise, c->layout_bound);
  return 1;
}
