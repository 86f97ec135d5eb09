/* gfxep — memory planning for one input-shape signature.
 *
 * Intermediate values (produced by a node, not a graph output) are packed into one workspace by
 * lifetime: a value lives from its producer to its last consumer, and values whose lifetimes do not
 * overlap may share bytes. Graph inputs and outputs live in ORT's buffers and constants in the
 * model's weight memory, so they get no workspace offset.
 *
 * The output of a view op (ir_op_is_view) that is not a graph output shares its input's memory:
 * it gets no bytes of its own, and its input's lifetime stretches to cover the view's readers.
 *
 * A node's scratch (a library's workspace, per-node temporaries) is planned the same way, as bytes
 * alive only while that node runs: it lands in a gap the intermediates leave at that node where one is
 * large enough, so a partition holds its intermediates and its scratch together, not one after the
 * other.
 *
 * Two placements are tried and the smaller kept: in running order, each value into the best-fitting
 * free range when its producer runs (what an allocator would do), and largest first, each value into
 * the best-fitting gap among the already placed values that are alive at the same time (which leaves
 * fewer gaps too small for what comes later).
 */
#ifndef GFXEP_IR_PLAN_H
#define GFXEP_IR_PLAN_H

#include <stddef.h>

#include "ir/graph.h"

#define IR_PLAN_NO_OFFSET ((size_t)-1)

typedef struct ir_plan {
  int n_values;
  /* per value: the value whose memory it shares (the output of a view op such as Reshape, whose
   * input outlives it as long as needed; or one output of a Split whose parts are contiguous
   * pieces of its input), or -1. An alias has no workspace offset of its own: it starts
   * alias_offset bytes into the memory of alias_of. */
  int* alias_of;
  size_t* alias_offset;
  size_t* offsets;        /* per value: byte offset in the workspace, or IR_PLAN_NO_OFFSET */
  size_t* sizes;          /* per value: bytes (0 for empty tensors) */
  size_t workspace_bytes; /* total, a multiple of the alignment */
  size_t sum_bytes;       /* what the intermediates and the scratch would take without sharing, for reports */
  size_t live_peak_bytes; /* the most bytes of intermediates alive at once in this node order, unaligned,
                           * scratch not counted: the lower bound any plan of this order needs for the
                           * intermediates (workspace_bytes is what this plan takes, scratch included) */
  int n_nodes;            /* entries of scratch_offsets: the planned nodes, in the order they run */
  size_t* scratch_offsets; /* per planned node: byte offset of its scratch, or IR_PLAN_NO_OFFSET if none */
} ir_plan;

gfx_status ir_plan_memory(const ir_graph* g, const gfx_shape* shapes, size_t alignment, ir_plan* plan);
/* The plan of one stage of a partition (exec/model.c): the values the listed nodes produce (node
 * indices, in the order they run), in a workspace of their own. Values other nodes produce get no
 * offset and need no shape; a value with escapes[v] set (read after the listed nodes, by a later stage
 * or read back to the host) is never released. A view may alias a value of an earlier stage.
 * scratch (NULL: none) gives per listed node the bytes of scratch it needs while it runs.
 * ir_plan_memory is this over every node, with nothing escaping and no scratch. */
gfx_status ir_plan_memory_nodes(const ir_graph* g, const gfx_shape* shapes, size_t alignment, const int* nodes,
                                int n_list, const char* escapes, const size_t* scratch, ir_plan* plan);
void ir_plan_free(ir_plan* plan);

#endif
