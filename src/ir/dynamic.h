/* gfxep — nodes whose output shapes the data decides, not the input shapes alone.
 *
 * There are two kinds, and the IR reduces the second to the first:
 *
 *  - Value inputs. A node whose shapes (and parameters) need the VALUES of small int64/int32 inputs
 *    that are computed at run time: TopK's k, Slice's starts and ends, the shape of Reshape, Expand and
 *    ConstantOfShape. Parse leaves them unresolved
 *    and marks the inputs (ir_node_value_inputs); the executor reads their values back from the device
 *    once they are computed and ir_node_resolve folds them into a copy of the node's parameters,
 *    exactly as parse folds a constant input: from then on the copy is an ordinary node, which every
 *    backend's kernel runs without knowing where its k came from.
 *
 *  - Selections whose count only the data knows: NonZero and NonMaxSuppression. ir_graph_add_node
 *    adds such a node (with the one output ONNX gives it) as a bounded node, whose output 0 is written
 *    at an upper bound the input shapes decide and whose output 1 is the count (int64 [1]), followed by
 *    a Slice of the bound to the count along the counted axis, the count being that Slice's `ends`: a
 *    value input. So the kernels of both ops have static shapes, the count leaves the device as a
 *    value input like any other, and the copy of the kept part is a small strided copy.
 *
 * The executor (exec/model.c) splits a partition into stages at these reads: a stage runs every node
 * whose shapes are known, then one host read fetches every value the next stage needs.
 */
#ifndef GFXEP_IR_DYNAMIC_H
#define GFXEP_IR_DYNAMIC_H

#include "ir/graph.h"

/* The most elements a value input may hold (Slice's starts and ends: one per dim). */
#define IR_MAX_VALUE_ELEMS GFX_MAX_RANK

/* A value input as read back: its shape and its elements as int64. */
typedef struct ir_value_data {
  gfx_shape shape;
  int n;
  int64_t v[IR_MAX_VALUE_ELEMS];
} ir_value_data;

/* A bit per input of `node` whose value its shapes need and which is computed at run time; 0 for a
 * node whose shapes follow from its input shapes (every node once resolved). */
unsigned ir_node_value_inputs(const ir_node* node);

/* Whether a node parsed as (op, params) has output shapes the data decides: a value input, or a
 * selection (NonZero, NonMaxSuppression). What GetCapability asks before a node exists. */
int ir_op_data_dependent(gfx_op op, const ir_params* params);

/* Whether op is added as a bounded node followed by a Slice of its count (NonZero, NonMaxSuppression). */
int ir_op_is_selection(gfx_op op);

/* *out = *node with the values of its value inputs (values[i] for each bit i of
 * ir_node_value_inputs) folded into its parameters; out->name points at node's. INVALID_ARGUMENT,
 * naming the node and the value, for a value the op cannot take (a negative k, a k of another
 * shape than [1], a list of another length than declared). */
gfx_status ir_node_resolve(const ir_node* node, const ir_value_data* values, ir_node* out);

/* The expansion ir_graph_add_node applies to a selection op given with one output (the ONNX form):
 * the bounded node writing `name`:gfxep.bound and `name`:gfxep.count, then the Slice `name`:gfxep.take
 * writing outputs[0]. Called by ir_graph_add_node; not for direct use. */
gfx_status ir_graph_add_selection(ir_graph* g, gfx_op op, const char* name, const int* inputs, int n_inputs,
                                  int output, const ir_params* params);

#endif
