/* gfxep — parse functions of convolution and matrix products (see ir/ops.def). */
#include <string.h>

#include "ir/ops_common.h"

gfx_status ir_parse_matmul(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(ir_check_float32(d));
  for (int i = 0; i < 2; i++)
    if (d->input_shapes[i].rank < 2)
      return IR_UNSUPPORTED(d, "input %d has rank %d; operands of rank >= 2 are handled", i, d->input_shapes[i].rank);
  return NULL;
}

gfx_status ir_parse_conv(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"auto_pad", "dilations", "group", "kernel_shape", "pads",
                                                      "strides", NULL}));
  GFX_TRY(ir_check_float32(d));
  int rank = d->input_shapes[1].rank >= 0 ? d->input_shapes[1].rank : d->input_shapes[0].rank;
  if (rank != 4) return IR_UNSUPPORTED(d, "rank %d; 2-D convolution (rank 4, NCHW) is handled", rank);
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank != rank)
    return IR_UNSUPPORTED(d, "input rank %d and weight rank %d differ", d->input_shapes[0].rank, rank);
  ir_conv_params c;
  memset(&c, 0, sizeof c);
  c.spatial = rank - 2;
  c.group = 1;
  for (int i = 0; i < c.spatial; i++) c.strides[i] = c.dilations[i] = 1;

  int present;
  GFX_TRY(ir_read_ints(d, "kernel_shape", c.kernel, (size_t)c.spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "strides", c.strides, (size_t)c.spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "dilations", c.dilations, (size_t)c.spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "pads", c.pads, 2 * (size_t)c.spatial, 0, &present));
  int64_t group = 1;
  int r = d->attrs.get_int ? d->attrs.get_int(d->attrs.ctx, "group", &group) : 0;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute 'group' is not an int");
  if (group < 1) return IR_UNSUPPORTED(d, "group = %lld (must be >= 1)", (long long)group);
  c.group = group;

  char pad[32] = "NOTSET";
  r = d->attrs.get_string ? d->attrs.get_string(d->attrs.ctx, "auto_pad", pad, sizeof pad) : 0;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute 'auto_pad' is not a string");
  if (strcmp(pad, "NOTSET") == 0)
    c.auto_pad = IR_PAD_NOTSET;
  else if (strcmp(pad, "SAME_UPPER") == 0)
    c.auto_pad = IR_PAD_SAME_UPPER;
  else if (strcmp(pad, "SAME_LOWER") == 0)
    c.auto_pad = IR_PAD_SAME_LOWER;
  else if (strcmp(pad, "VALID") == 0)
    c.auto_pad = IR_PAD_VALID;
  else
    return IR_UNSUPPORTED(d, "auto_pad = '%s' is not an ONNX value", pad);
  if (c.auto_pad != IR_PAD_NOTSET && present) {
    for (int i = 0; i < 2 * c.spatial; i++)
      if (c.pads[i] != 0) return IR_UNSUPPORTED(d, "both auto_pad = '%s' and non-zero pads are set", pad);
  }

  if (c.auto_pad == IR_PAD_SAME_UPPER || c.auto_pad == IR_PAD_SAME_LOWER)
    for (int i = 0; i < c.spatial; i++)
      if (c.dilations[i] != 1)
        /* ONNX Runtime's own kernels refuse this combination, so there is no oracle to agree with */
        return IR_UNSUPPORTED(d, "auto_pad = '%s' with dilations > 1", pad);

  const gfx_shape* w = &d->input_shapes[1];
  if (w->rank == 4 && w->dims[1] > 0 && d->input_shapes[0].rank == 4 && d->input_shapes[0].dims[1] > 0 &&
      (w->dims[1] > INT64_MAX / c.group || w->dims[1] * c.group != d->input_shapes[0].dims[1]))
    return IR_UNSUPPORTED(d, "weight %lld input channels x group %lld != input channels %lld", (long long)w->dims[1],
                       (long long)c.group, (long long)d->input_shapes[0].dims[1]);
  p->conv = c;
  return NULL;
}
