/* gfxep — parse and shape functions of the logic ops (Not, And, Or, Xor), Mod, and of the scans,
 * generators and index ops that follow them in the op table (see ir/ops.def). */
#include <math.h>
#include <string.h>

#include "ir/ops_common.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

static const char* const no_attrs[] = {NULL};

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* ---- Not, And, Or, Xor ---- */

/* bool operands and a bool result; And/Or/Xor broadcast (opset 7 on), Not has one operand. */
gfx_status ir_parse_logic(const ir_node_desc* d, ir_params* p) {
  (void)p;
  const int unary = ir_op_from_name(d->op_type) == GFX_OP_NOT;
  GFX_TRY(ir_check_io(d, unary ? 1 : 2, unary ? 1 : 2, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  return ir_check_same_type(d, 0, d->n_inputs - 1, IR_TYPE_BIT(GFX_DTYPE_BOOL), NULL);
}

/* ---- Mod ---- */

/* Two operands of one type. fmod=0 is the integer remainder with the divisor's sign; ONNX forbids
 * it for floats (ONNX Runtime fails such a node), so a float Mod is taken only with fmod=1. The
 * integer types gfxep computes are int32 and int64; the other integer widths stay with ORT. */
gfx_status ir_parse_mod(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"fmod", NULL}));
  int64_t fmod = 0;
  GFX_TRY(ir_attr_int(d, "fmod", 0, &fmod));
  if (fmod != 0 && fmod != 1) return IR_UNSUPPORTED(d, "fmod = %lld; 0 or 1 is expected", (long long)fmod);
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT | IR_TYPES_INDEX, &dtype));
  if (fmod == 0 && !(IR_TYPES_INDEX & IR_TYPE_BIT(dtype)))
    return IR_UNSUPPORTED(d, "fmod = 0 with %s operands; ONNX defines it for integers only", gfx_dtype_name(dtype));
  memset(&p->index, 0, sizeof p->index);
  p->index.fmod = (int8_t)fmod;
  return NULL;
}
