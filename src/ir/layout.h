/* gfxep — the layout ops' shared primitive: a strided copy plan.
 *
 * Transpose, Slice, Pad, Tile, Expand, Concat (one plan per input) and Split (one plan per output)
 * all write a box of output elements, each read from one source element whose coordinate along
 * every dim is start + i * step of the output coordinate i. A source coordinate outside [0, extent)
 * is resolved by the plan's mode: a constant, the nearest edge, a reflection or a wrap-around. The
 * plan is computed from the node and concrete shapes here, once, so every backend implements only
 * the primitive: a loop (reference) or one kernel per element size (CUDA).
 *
 * Reshape, Flatten, Squeeze and Unsqueeze move no element: they are a plain copy. Gather, Shape
 * and ConstantOfShape have helpers of their own below.
 */
#ifndef GFXEP_IR_LAYOUT_H
#define GFXEP_IR_LAYOUT_H

#include <stdint.h>

#include "ir/graph.h"

typedef struct ir_copy_plan {
  int rank;                          /* of the box written (the output's rank); 0 = one element */
  ir_pad_mode mode;                  /* for source coordinates outside the source */
  int elem_size;                     /* bytes per element: 1, 2, 4 or 8 */
  int64_t count;                     /* elements written: the product of dims */
  int64_t dims[GFX_MAX_RANK];        /* the box */
  int64_t dst_offset;                /* element offset of the box in the destination */
  int64_t src_offset;                /* element offset added to every source element read: 0 in
                                      * ir_layout_plan's plans; only ir_copy_plan_simplify sets it,
                                      * whose plans the reference and Vulkan backends run (CUDA's
                                      * kernels take ir_layout_plan's plans and do not read it) */
  int64_t dst_strides[GFX_MAX_RANK]; /* destination element strides along the box dims */
  int64_t src_extent[GFX_MAX_RANK];  /* valid source coordinates along each box dim: [0, extent) */
  int64_t src_start[GFX_MAX_RANK];
  int64_t src_step[GFX_MAX_RANK];
  int64_t src_strides[GFX_MAX_RANK]; /* source element strides along each box dim */
  unsigned char value[8];            /* the constant of IR_PADMODE_CONSTANT, one element */
} ir_copy_plan;

#ifdef __CUDACC__
#define IR_LAYOUT_FN static inline __host__ __device__
#else
#define IR_LAYOUT_FN static inline
#endif

/* A source coordinate c outside [0, n) resolved by the plan's mode; -1 for the constant. The one
 * definition of the rule: the reference loop and the CUDA kernels both call it. */
IR_LAYOUT_FN int64_t ir_resolve_coord(int64_t c, int64_t n, ir_pad_mode mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case IR_PADMODE_EDGE: return c < 0 ? 0 : n - 1;
    case IR_PADMODE_REFLECT: {
      if (n == 1) return 0;
      /* one reflection off either end, a pad's usual reach, without the division below (a GPU
       * kernel resolving a row's border elements spends ~100 instructions on a 64-bit modulo) */
      if (c < 0 && c > -n) return -c;
      if (c >= n && c < 2 * n - 1) return 2 * (n - 1) - c;
      const int64_t period = 2 * (n - 1);
      int64_t m = c % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
    case IR_PADMODE_WRAP: {
      if (c < 0 && c >= -n) return c + n;
      if (c >= n && c < 2 * n) return c - n;
      int64_t m = c % n;
      return m < 0 ? m + n : m;
    }
    default: return -1;
  }
}

/* How a node runs: a plain copy (the bytes of input 0 to output 0), copy plans, Gather, Shape's
 * values or a fill with params.value. */
typedef enum ir_layout_kind {
  IR_LAYOUT_COPY,
  IR_LAYOUT_PLANS,
  IR_LAYOUT_GATHER,
  IR_LAYOUT_SHAPE,
  IR_LAYOUT_FILL,
} ir_layout_kind;

ir_layout_kind ir_layout_kind_of(gfx_op op);

/* The output shapes of any layout node (its infer function of ir/ops.def). */
gfx_status ir_layout_infer(const ir_node* node, const gfx_shape* in, gfx_shape* out);

/* A shape list of Reshape (entries >= -1, at most one -1; with allowzero not both 0 and -1), Expand
 * or ConstantOfShape (entries >= 0), every entry at most 2^31: INVALID_ARGUMENT naming the entry. */
gfx_status ir_check_shape_list(gfx_op op, const int64_t* v, int n, int allowzero);
/* "[a,b,...]" into buf (cap bytes); returns buf. */
const char* ir_shape_list_str(const int64_t* v, int n, char* buf, size_t cap);

/* The number of plans the node runs (Concat: one per input, Split: one per output, else 1). */
int ir_layout_plan_count(const ir_node* node);

/* Plan number `index` of a plan-kind node, from its concrete input and output shapes (as inferred).
 * Plans of Concat write into output 0 at their offset; plan i of Split writes output i and reads
 * input 0. Errors name the offending dims; the result never indexes outside the tensors. */
gfx_status ir_layout_plan(const ir_node* node, const gfx_shape* in, const gfx_shape* out, int index,
                          ir_copy_plan* plan);

/* The same copy as `in` with fewer dims and, where it can, wider elements (at most max_elem_size
 * bytes: 16 where the caller moves vectors; 8 at most where the plan may write its constant): dims
 * whose source coordinates never leave the source have their start and step folded into
 * src_offset and the strides, the ones of size 1 dropped, neighbours that are contiguous in both
 * tensors merged, and a contiguous last dim grouped into elements of k x elem_size bytes when every
 * offset and stride allows. The caller must then check that its two tensors' addresses are
 * multiples of out->elem_size (and use `in` otherwise). */
void ir_copy_plan_simplify(const ir_copy_plan* in, int max_elem_size, ir_copy_plan* out);

/* Source element offset of plan element `linear` (0 <= linear < count), or -1 when the element is
 * the plan's constant. Destination offset in *dst. The reference definition of the primitive; the
 * CUDA kernel does the same arithmetic. */
int64_t ir_copy_plan_source(const ir_copy_plan* plan, int64_t linear, int64_t* dst);

/* Gather as outer x indices x inner blocks: out[o, j, i] = data[o, idx[j], i], with axis_dim the
 * data's extent along the axis. */
typedef struct ir_gather_geom {
  int64_t outer, n_indices, inner, axis_dim;
} ir_gather_geom;

gfx_status ir_gather_geometry(const ir_node* node, const gfx_shape* data, const gfx_shape* indices,
                              ir_gather_geom* g);

/* Shape's output values for a concrete input shape: *n of them (n <= GFX_MAX_RANK). */
void ir_shape_values(const ir_node* node, const gfx_shape* in, int64_t* values, int* n);

#endif
