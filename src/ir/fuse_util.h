/* gfxep — what the fusion passes (ir/fuse.c and the ir/fuse_*.c passes) share: reader
 * counts, node removal, names, constants. Private to src/ir. */
#ifndef GFXEP_IR_FUSE_UTIL_H
#define GFXEP_IR_FUSE_UTIL_H

#include "ir/fuse.h"
#include "ir/graph.h"

/* How many node inputs read each value (n_values + extra entries, caller frees). A pass that keeps
 * the counts exact while it rewrites can use one count throughout. */
gfx_status ir_fuse_count_readers(const ir_graph* g, int** readers, int extra);
/* The only node that reads value v, or -1. */
int ir_fuse_sole_reader(const ir_graph* g, const int* readers, int v);
/* Removes node `index`, keeping the order of the others and their values' producer indices. The
 * caller updates the reader counts. */
void ir_fuse_remove_node(ir_graph* g, int index);
/* A value no node writes or reads any more stays in the table (indices elsewhere point past it);
 * an empty shape keeps the planner from sizing it, which a dynamic declared shape would fail. */
void ir_fuse_retire_value(ir_graph* g, int v);
/* The fused node carries both names ("a+b"), so logs and profiles still show where each came from. */
void ir_fuse_join_names(ir_node* into, const ir_node* from);
const char* ir_fuse_name_of(const ir_node* n);
/* Element i of a float constant (float32, float16 or bfloat16) as a double. */
double ir_fuse_const_at(const ir_value* v, int64_t i);
/* Stores x as element i of float data of type dtype (float32, float16 or bfloat16), rounded once. */
void ir_fuse_const_put(void* base, int dtype, int64_t i, double x);
/* A constant of `count` elements of the float type: its data, or NULL. */
const ir_value* ir_fuse_float_const(const ir_graph* g, int v, int dtype, int64_t count);
/* The value of a one-element float constant of type dtype, into *x; 0 when v is anything else. */
int ir_fuse_scalar_const(const ir_graph* g, int v, int dtype, double* x);
/* A constant nobody reads any more: its bytes are not uploaded. */
void ir_fuse_drop_if_unread(ir_graph* g, const int* readers, int v);
/* The other input of a two-input node n, given one of them, or -1. */
int ir_fuse_other_input(const ir_node* n, int v);
/* Whether every dim of the declared shape is known. */
int ir_fuse_shape_known(const gfx_shape* s);

/* QuantizeLinear or DequantizeLinear `node` of constants only (not a graph output, at most 64 MiB of
 * result): replaced by its output as a constant, computed as the run-time kernels compute it;
 * *folded gets its size in bytes (at least 1), or 0 when the node stays. */
gfx_status ir_fuse_fold_quant(ir_graph* g, int* readers, int node, size_t* folded);

/* 1 when the target runs node (or there is no target); 0 otherwise, with the reason logged. */
int ir_fuse_accepted(const ir_fuse_target* target, const ir_graph* g, const ir_node* node);

/* The passes ir_fuse_for runs besides ir_fuse's own; *count gets how many fusions each made. */
gfx_status ir_fuse_attention(ir_graph* g, const ir_fuse_target* target, int* count);
gfx_status ir_fuse_residual_norm(ir_graph* g, const ir_fuse_target* target, int* count);
gfx_status ir_fuse_norm_epilogue(ir_graph* g, const ir_fuse_target* target, int* count);
gfx_status ir_fuse_layout(ir_graph* g, const ir_fuse_target* target, int* count);
gfx_status ir_fuse_chains(ir_graph* g, const ir_fuse_target* target, int* count);

#endif
