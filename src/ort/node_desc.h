/* gfxep — describes an OrtNode to the IR's op table (types, shapes, attributes through callbacks). */
#ifndef GFXEP_ORT_NODE_DESC_H
#define GFXEP_ORT_NODE_DESC_H

#include "ir/graph.h"
#include "ort/ort_common.h"

#define GFX_MAX_NODE_ATTRS 32

typedef struct gfx_node_reader {
  const OrtNode* node;
  const OrtOpAttr* attrs[GFX_MAX_NODE_ATTRS];
  int n_attrs;
} gfx_node_reader;

/* Fills desc (whose attrs read through r; both must outlive desc's use). A node gfxep cannot even
 * describe (non-tensor inputs, too many inputs or attributes) gets GFX_ERR_NOT_SUPPORTED. */
gfx_status gfx_node_describe(const OrtNode* node, gfx_node_reader* r, ir_node_desc* desc);

/* The same with only inputs [first, first + max_inputs) of the node (fewer where it has fewer), as inputs
 * 0.. of desc: how a Concat of more inputs than an IR node has is described piece by piece
 * (wide_concat.c). */
gfx_status gfx_node_describe_inputs(const OrtNode* node, size_t first, size_t max_inputs, gfx_node_reader* r,
                                    ir_node_desc* desc);

/* Whether node is a Concat of the default domain with more inputs than an IR node has (*n_inputs:
 * how many). */
int gfx_is_wide_concat(const OrtNode* node, size_t* n_inputs);

/* Element type and shape of a value; a non-tensor value gives GFX_ERR_NOT_SUPPORTED. */
gfx_status gfx_value_info_type(const OrtValueInfo* vi, int* dtype, gfx_shape* shape);

#endif
