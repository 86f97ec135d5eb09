/* gfxep — compile-time rewrites of the IR that keep its results and save work at run time. */
#ifndef GFXEP_IR_FUSE_H
#define GFXEP_IR_FUSE_H

#include "ir/graph.h"

/* Applies every fusion the graph allows, each logged at INFO:
 *   Conv (with or without bias) followed by Relu -> one Conv whose params.conv.activation is
 *   IR_ACT_RELU. Only when the Conv's output is read by the Relu alone and is no graph output.
 * The graph stays valid (ir_graph_validate); values a fusion made unused stay in the value table
 * with no producer and an empty shape. */
gfx_status ir_fuse(ir_graph* g);

#endif
