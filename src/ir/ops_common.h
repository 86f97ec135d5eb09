/* gfxep — what the op table's parse functions (ir/ops*.c) share: reading attributes and constant
 * inputs, and the checks every op makes before claiming a node.
 *
 * Every helper returns GFX_ERR_NOT_SUPPORTED (via IR_UNSUPPORTED) when the node is not one gfxep
 * takes, with a message naming the op, the node and the offending attribute or value.
 */
#ifndef GFXEP_IR_OPS_COMMON_H
#define GFXEP_IR_OPS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"

#define IR_UNSUPPORTED(d, ...) \
  gfx_status_wrap(gfx_error(GFX_ERR_NOT_SUPPORTED, __VA_ARGS__), "%s '%s'", (d)->op_type, (d)->name)

/* Every attribute on the node must be in `known` (NULL-terminated). */
gfx_status ir_check_known_attrs(const ir_node_desc* d, const char* const* known);
/* min_in..max_in inputs (the first min_in present) and exactly n_out outputs. */
gfx_status ir_check_io(const ir_node_desc* d, int min_in, int max_in, int n_out);

/* Bit masks of element types for ir_check_types. */
/* 0 for a dtype outside 0..31 (a malformed model's), never a shift past the word's width */
#define IR_TYPE_BIT(dtype) ((unsigned)(dtype) < 32u ? 1u << (unsigned)(dtype) : 0u)
#define IR_TYPES_FLOAT (IR_TYPE_BIT(GFX_DTYPE_F32) | IR_TYPE_BIT(GFX_DTYPE_F16) | IR_TYPE_BIT(GFX_DTYPE_BF16))
#define IR_TYPES_INDEX (IR_TYPE_BIT(GFX_DTYPE_I32) | IR_TYPE_BIT(GFX_DTYPE_I64))
/* Input `i` (when present) has one of the types in mask. */
gfx_status ir_check_input_type(const ir_node_desc* d, int i, unsigned mask);
/* Inputs first..last (those present) and every output share one element type, in mask; it is
 * written to *dtype when dtype is not NULL. The common case: a float op in float32, float16 or
 * bfloat16, all operands alike. */
gfx_status ir_check_same_type(const ir_node_desc* d, int first, int last, unsigned mask, int* dtype);
/* The previous foundation's check: every input and output float32. */
gfx_status ir_check_float32(const ir_node_desc* d);

/* Attribute getters: NULL and the value (or `fallback` when absent), or NOT_SUPPORTED when the
 * attribute has another type. */
gfx_status ir_attr_int(const ir_node_desc* d, const char* name, int64_t fallback, int64_t* out);
gfx_status ir_attr_float(const ir_node_desc* d, const char* name, float fallback, float* out);
/* A string attribute; fallback when absent. */
gfx_status ir_attr_string(const ir_node_desc* d, const char* name, const char* fallback, char* out, size_t cap);
/* A tensor attribute of one element of at most 8 bytes into value (*dtype its element type);
 * *present = 0 when absent. NOT_SUPPORTED for another kind of attribute, an unreadable one or one
 * of another size. */
gfx_status ir_attr_scalar_tensor(const ir_node_desc* d, const char* name, int* dtype, unsigned char value[8],
                                 int* present);
/* An int list of at most cap entries; *n = 0 and *present = 0 when absent. */
gfx_status ir_attr_ints(const ir_node_desc* d, const char* name, int64_t* out, size_t cap, size_t* n, int* present);
/* An int list of exactly `want` entries, each >= min_value (absent: *present = 0, out untouched). */
gfx_status ir_read_ints(const ir_node_desc* d, const char* name, int64_t* out, size_t want, int64_t min_value,
                        int* present);

/* Reads constant input i as integers (int32 or int64 tensors), at most cap of them: *n receives the
 * count. NOT_SUPPORTED when the input is absent, not constant, not an integer type or too long. */
gfx_status ir_const_ints(const ir_node_desc* d, int i, int64_t* out, size_t cap, size_t* n);
/* Reads constant input i as floats (float32, float16, bfloat16 or float64), at most cap. */
gfx_status ir_const_floats(const ir_node_desc* d, int i, float* out, size_t cap, size_t* n);

/* Normalizes an axis in [-rank, rank) to [0, rank). */
gfx_status ir_norm_axis(const ir_node_desc* d, int64_t axis, int rank, int* out);

#endif
