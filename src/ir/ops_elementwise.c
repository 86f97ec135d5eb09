/* gfxep — parse functions of the element-wise ops (see ir/ops.def). */
#include <string.h>

#include "ir/ops_common.h"

gfx_status ir_parse_binary(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(ir_check_float32(d));
  for (int i = 0; i < 2; i++)
    if (d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return IR_UNSUPPORTED(d, "input %d is absent", i);
  return NULL;
}

gfx_status ir_parse_unary(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  return ir_check_float32(d);
}
