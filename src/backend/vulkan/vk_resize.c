/* gfxep Vulkan backend — the resampling families of ops.def: resize (Resize, Upsample) and
 * space_depth (DepthToSpace, SpaceToDepth), both in shaders/resize.comp, and grid_sample
 * (GridSample, shaders/grid_sample.comp).
 *
 * Resize: node_prepare takes the geometry from the IR (ir_resize_geometry) and evaluates the IR's
 * coordinate mapping (ir/resize_geom.h: ir_resize_source_coord, ir_resize_outside and the nearest /
 * linear / cubic tap functions) on the host, in the same float arithmetic the reference uses, once
 * per output row and once per output column, into a small host-visible tap table; the shader only
 * forms the weighted sums (float32). So no coordinate rule is re-implemented in GLSL and rounding
 * ties land exactly where they land in the reference. Every mode, coordinate transformation and
 * nearest mode the IR parses is handled; an output shape equal to the input's is a copy, as in the
 * reference. A resize of a dim before the last two (the general geometry: a volume's depth, channels)
 * gets a table per dim and the shader's GENERAL variant. float32, float16 with shaderFloat16 + 16-bit
 * storage, and bfloat16 (16-bit words, computed in float32) with 16-bit storage.
 *
 * DepthToSpace (DCR, CRD) / SpaceToDepth: ir_space_depth_source mirrored in GLSL (resize.comp),
 * elements moved as bits of their size (1-byte ones need storageBuffer8BitAccess, 2-byte ones
 * storageBuffer16BitAccess).
 *
 * GridSample: the shader finds each output pixel's taps itself (the grid is data), mirroring
 * ir/grid_sample_geom.h in GLSL; every mode, padding mode and align_corners the IR parses, on 4-D
 * input; the input and the grid each float32, or float16 with shaderFloat16 + 16-bit storage.
 *
 * Element types are not in the node's params: the pipeline is picked at the first run and kept.
 * Tensors of 2^32 elements or more are refused at node_prepare (32-bit indices).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/grid_sample_geom.h"
#include "ir/resize_geom.h"
#include "ir/shape.h"

/* More tap-table entries (output rows + columns) than this are refused: no real image is that wide. */
#define MAX_TAP_ENTRIES ((int64_t)1 << 24)

/* resize.comp's Tap */
typedef struct gpu_tap {
  int32_t idx[4]; /* input indices along the axis; idx[0] < 0: outside the input */
  float w[4];
} gpu_tap;
_Static_assert(sizeof(gpu_tap) == 32, "gpu_tap layout");

/* resize.comp's General header, followed by the taps */
typedef struct gpu_general_head {
  int32_t rank;
  uint32_t pad0, pad1;
  float extrapolation;
  uint32_t axes[GFX_MAX_RANK][4]; /* out, in, taps, first entry */
} gpu_general_head;
_Static_assert(sizeof(gpu_general_head) == 16 + 16 * GFX_MAX_RANK && sizeof(gpu_general_head) % 16 == 0,
               "gpu_general_head layout");

typedef struct resize_push {
  uint64_t x, y, taps;
  uint32_t count, out_h, out_w, in_h, in_w;
  float extrapolation;
} resize_push;

typedef struct space_depth_push {
  uint64_t x, y;
  uint32_t count, to_space, crd, b, out_c, out_h, out_w;
} space_depth_push;

typedef struct grid_sample_push {
  uint64_t x, grid, y;
  uint32_t count, pixels, channels, in_h, in_w, padding, align_corners;
} grid_sample_push;

typedef struct resize_state {
  vk_family family; /* first: node_release dispatches on it */
  gfx_op op;
  uint32_t count;   /* output elements */
  int identity;     /* Resize: output shape == input shape, a copy */
  int taps;         /* Resize: 1, 2 or 4 */
  int general;      /* Resize: the general geometry (a leading dim resizes), resize.comp's GENERAL */
  vk_buffer table;  /* Resize: the tap table */
  resize_push rp;   /* Resize: everything but the addresses */
  space_depth_push sp; /* DepthToSpace / SpaceToDepth: everything but the addresses */
  grid_sample_push gp; /* GridSample: everything but the addresses */
  int grid_mode;       /* GridSample: IR_GRID_* mode, the shader's specialization constant */
  vk_pipe_slot slot; /* the pipeline for the shader of the last run */
} resize_state;

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int is_resize(gfx_op op) { return op == GFX_OP_RESIZE || op == GFX_OP_UPSAMPLE; }

/* Resize: float32, or float16 where the device has it; the general geometry's variant or the one of
 * the last two dims */
static gfx_status resize_shader(vk_device* d, gfx_op op, int dtype, int general, vk_shader_id* out) {
  if (dtype == GFX_DTYPE_F32) {
    *out = general ? VK_SHADER_RESIZE_GENERAL_F32 : VK_SHADER_RESIZE_F32;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16) {
    if (!d->has_f16)
      return gfx_error(GFX_ERR_NOT_SUPPORTED,
                       "vulkan backend: %s of float16 needs shaderFloat16 and storageBuffer16BitAccess, which %s lacks",
                       ir_op_name(op), d->info.name);
    *out = general ? VK_SHADER_RESIZE_GENERAL_F16 : VK_SHADER_RESIZE_F16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage) { /* 16-bit words, computed in float32 */
    *out = general ? VK_SHADER_RESIZE_GENERAL_BF16 : VK_SHADER_RESIZE_BF16;
    return NULL;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not implemented", ir_op_name(op),
                   gfx_dtype_name(dtype));
}

/* GridSample: the input and the grid each float32, or float16 where the device has it */
static gfx_status grid_sample_shader(vk_device* d, int dtype, int grid_dtype, vk_shader_id* out) {
  const int ok = (dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16) &&
                 (grid_dtype == GFX_DTYPE_F32 || grid_dtype == GFX_DTYPE_F16);
  if (!ok)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: GridSample of %s with a %s grid is not implemented",
                     gfx_dtype_name(dtype), gfx_dtype_name(grid_dtype));
  const int f16 = dtype == GFX_DTYPE_F16, grid_f16 = grid_dtype == GFX_DTYPE_F16;
  if ((f16 || grid_f16) && !d->has_f16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: GridSample of float16 needs shaderFloat16 and storageBuffer16BitAccess, which %s lacks",
                     d->info.name);
  *out = f16 ? (grid_f16 ? VK_SHADER_GRID_SAMPLE_F16 : VK_SHADER_GRID_SAMPLE_F16_G32)
             : (grid_f16 ? VK_SHADER_GRID_SAMPLE_F32_G16 : VK_SHADER_GRID_SAMPLE_F32);
  return NULL;
}

static gfx_status space_depth_shader(vk_device* d, gfx_op op, int dtype, vk_shader_id* out) {
  switch (gfx_dtype_size(dtype)) {
    case 1:
      if (!d->has_8bit_storage)
        return gfx_error(GFX_ERR_NOT_SUPPORTED,
                         "vulkan backend: %s of 1-byte elements needs storageBuffer8BitAccess, which %s lacks",
                         ir_op_name(op), d->info.name);
      *out = VK_SHADER_SPACE_DEPTH_1;
      return NULL;
    case 2:
      if (!d->has_16bit_storage)
        return gfx_error(GFX_ERR_NOT_SUPPORTED,
                         "vulkan backend: %s of 2-byte elements needs storageBuffer16BitAccess, which %s lacks",
                         ir_op_name(op), d->info.name);
      *out = VK_SHADER_SPACE_DEPTH_2;
      return NULL;
    case 4: *out = VK_SHADER_SPACE_DEPTH_4; return NULL;
    case 8: *out = VK_SHADER_SPACE_DEPTH_8; return NULL;
    default:
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not handled", ir_op_name(op),
                       gfx_dtype_name(dtype));
  }
}

gfx_status vk_supports_resize(vk_device* d, const gfx_node_query* q) {
  if (q->op == GFX_OP_DEPTH_TO_SPACE && q->params->space_depth.nhwc_input)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: DepthToSpace of a channels-last input");
  if (!q->desc) return NULL; /* no types to judge: the run checks them */
  vk_shader_id shader;
  const int dtype = q->desc->input_dtypes[0];
  if (q->op == GFX_OP_GRID_SAMPLE) return grid_sample_shader(d, dtype, q->desc->input_dtypes[1], &shader);
  return is_resize(q->op) ? resize_shader(d, q->op, dtype, 0, &shader) : space_depth_shader(d, q->op, dtype, &shader);
}

/* ---- prepare ---- */

/* The taps of output index i along axis a: the IR's definitions, evaluated exactly as the reference
 * evaluates them (ref_resize.c). */
static void axis_taps(const ir_resize_geom* g, const ir_resize_axis* a, int64_t i, gpu_tap* t) {
  memset(t, 0, sizeof *t);
  const float c = ir_resize_source_coord(a, g->coord, i);
  if (ir_resize_outside(a, g->coord, c)) {
    t->idx[0] = -1;
    return;
  }
  if (g->mode == IR_RESIZE_NEAREST) {
    t->idx[0] = (int32_t)ir_resize_nearest_index(a, g->nearest, c);
    t->w[0] = 1.0f;
  } else if (g->mode == IR_RESIZE_LINEAR) {
    int64_t i0, i1;
    ir_resize_linear_taps(a, c, &i0, &i1, &t->w[0], &t->w[1]);
    t->idx[0] = (int32_t)i0;
    t->idx[1] = (int32_t)i1;
  } else {
    int64_t idx[4];
    ir_resize_cubic_taps(a, g->cubic_a, g->exclude_outside, c, idx, t->w);
    for (int k = 0; k < 4; k++) t->idx[k] = (int32_t)idx[k];
  }
}

/* The general geometry's table: the header, then every axis's taps for each of its output indices
 * (ir_resize_axis_taps: one tap at the index itself for a dim kept as it is, none outside the input
 * under tf_crop_and_resize, marked by index -1). */
static gfx_status prepare_general(vk_device* d, const ir_resize_geom* g, resize_state* st) {
  int64_t entries = 0;
  for (int k = 0; k < g->rank; k++) entries += g->axes[k].out;
  if (entries > MAX_TAP_ENTRIES)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "an output of %lld indices over its dims is beyond the tap table's limit",
                     (long long)entries);
  GFX_TRY(vk_buffer_create(d, sizeof(gpu_general_head) + sizeof(gpu_tap) * (size_t)entries, VK_MEM_CONSTANTS,
                           &st->table));
  gpu_general_head* head = st->table.mapped;
  gpu_tap* taps = (gpu_tap*)(head + 1);
  memset(head, 0, sizeof *head);
  head->rank = g->rank;
  head->extrapolation = g->extrapolation;
  const int mode_taps = g->mode == IR_RESIZE_NEAREST ? 1 : g->mode == IR_RESIZE_LINEAR ? 2 : 4;
  uint32_t first = 0;
  for (int k = 0; k < g->rank; k++) {
    const ir_resize_axis* a = &g->axes[k];
    const int n = ir_resize_axis_kept(a) ? 1 : mode_taps;
    for (int64_t o = 0; o < a->out; o++) {
      int64_t idx[4] = {0, 0, 0, 0};
      float w[4] = {0, 0, 0, 0};
      gpu_tap* t = &taps[first + o];
      memset(t, 0, sizeof *t);
      const int got = ir_resize_axis_taps(g, a, o, idx, w);
      if (got == 0) {
        t->idx[0] = -1;
        continue;
      }
      /* the taps the shader walks (n) hold what the IR gave; a nearest or kept axis gives one */
      for (int j = 0; j < got && j < 4; j++) t->idx[j] = (int32_t)idx[j], t->w[j] = w[j];
    }
    head->axes[k][0] = (uint32_t)a->out;
    head->axes[k][1] = (uint32_t)a->in;
    head->axes[k][2] = (uint32_t)n;
    head->axes[k][3] = first;
    first += (uint32_t)a->out;
  }
  st->general = 1;
  st->rp.count = st->count;
  return NULL;
}

static gfx_status prepare_resize(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                 resize_state* st) {
  ir_resize_geom g;
  gfx_shape want;
  GFX_TRY(ir_resize_geometry(node, &in[0], &g, &want));
  if (!gfx_shape_equal(&want, &out[0])) {
    char a[96], b[96];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s", gfx_shape_str(&out[0], a, sizeof a),
                     gfx_shape_str(&want, b, sizeof b));
  }
  st->identity = g.identity;
  if (g.identity || st->count == 0) return NULL;
  if (g.general) return prepare_general(d, &g, st);
  if (g.h.out + g.w.out > MAX_TAP_ENTRIES)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "an output of %lld x %lld pixels is beyond the tap table's limit",
                     (long long)g.h.out, (long long)g.w.out);
  st->taps = g.mode == IR_RESIZE_NEAREST ? 1 : g.mode == IR_RESIZE_LINEAR ? 2 : 4;
  const size_t entries = (size_t)(g.h.out + g.w.out);
  GFX_TRY(vk_buffer_create(d, sizeof(gpu_tap) * entries, VK_MEM_CONSTANTS, &st->table));
  gpu_tap* t = st->table.mapped;
  for (int64_t y = 0; y < g.h.out; y++) axis_taps(&g, &g.h, y, &t[y]);
  for (int64_t x = 0; x < g.w.out; x++) axis_taps(&g, &g.w, x, &t[g.h.out + x]);
  st->rp.count = st->count;
  st->rp.out_h = (uint32_t)g.h.out;
  st->rp.out_w = (uint32_t)g.w.out;
  st->rp.in_h = (uint32_t)g.h.in;
  st->rp.in_w = (uint32_t)g.w.in;
  st->rp.extrapolation = g.extrapolation;
  return NULL;
}

static gfx_status prepare_space_depth(const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                      resize_state* st) {
  const int to_space = node->op == GFX_OP_DEPTH_TO_SPACE;
  if (to_space && node->params.space_depth.nhwc_input) /* vk_supports_resize declines these */
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "DepthToSpace of a channels-last input");
  gfx_shape want;
  GFX_TRY(to_space ? ir_infer_depth_to_space(node, in, &want) : ir_infer_space_to_depth(node, in, &want));
  if (!gfx_shape_equal(&want, &out[0])) {
    char a[96], b[96];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s", gfx_shape_str(&out[0], a, sizeof a),
                     gfx_shape_str(&want, b, sizeof b));
  }
  st->sp.count = st->count;
  st->sp.to_space = (uint32_t)to_space;
  st->sp.crd = (uint32_t)(node->params.space_depth.crd != 0);
  st->sp.b = (uint32_t)node->params.space_depth.blocksize;
  st->sp.out_c = (uint32_t)want.dims[1];
  st->sp.out_h = (uint32_t)want.dims[2];
  st->sp.out_w = (uint32_t)want.dims[3];
  return NULL;
}

static gfx_status prepare_grid_sample(const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                      resize_state* st) {
  ir_grid_geom g;
  gfx_shape want;
  GFX_TRY(ir_grid_sample_geometry(node, &in[0], &in[1], &g, &want));
  if (!gfx_shape_equal(&want, &out[0])) {
    char a[96], b[96];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s", gfx_shape_str(&out[0], a, sizeof a),
                     gfx_shape_str(&want, b, sizeof b));
  }
  /* every index below 2^32: the input and output by the callers' checks, the grid's 2 per pixel here */
  if (g.n * g.out_h * g.out_w * 2 > (int64_t)UINT32_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "a grid of %lld points is beyond 32-bit indexing",
                     (long long)(g.n * g.out_h * g.out_w));
  st->grid_mode = g.mode;
  st->gp.count = (uint32_t)(g.n * g.out_h * g.out_w);
  st->gp.pixels = (uint32_t)(g.out_h * g.out_w);
  st->gp.channels = (uint32_t)g.c;
  st->gp.in_h = (uint32_t)g.in_h;
  st->gp.in_w = (uint32_t)g.in_w;
  st->gp.padding = (uint32_t)g.padding;
  st->gp.align_corners = (uint32_t)g.align_corners;
  return NULL;
}

gfx_status vk_prepare_resize(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state) {
  *state = NULL;
  if (node->n_inputs < 1 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %d inputs and %d outputs", label(node),
                     ir_op_name(node->op), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, node->op == GFX_OP_GRID_SAMPLE ? 2 : 1));
  GFX_TRY(vk_check_elements_u32(node, out, 1));
  resize_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_RESIZE;
  st->op = node->op;
  st->count = (uint32_t)gfx_shape_numel(&out[0]);
  vk_pipe_slot_init(&st->slot);
  gfx_status s = node->op == GFX_OP_GRID_SAMPLE ? prepare_grid_sample(node, in, out, st)
                 : is_resize(node->op)          ? prepare_resize(d, node, in, out, st)
                                                : prepare_space_depth(node, in, out, st);
  if (s) {
    vk_release_resize(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_resize(vk_device* d, void* state) {
  resize_state* st = state;
  if (!st) return;
  if (st->table.buffer) vk_buffer_destroy(d, &st->table);
  vk_pipe_slot_destroy(&st->slot);
  free(st);
}

/* ---- run ---- */

gfx_status vk_run_resize(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state) {
  resize_state* st = state;
  if (!st || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     label(node), ir_op_name(node->op));
  if (gfx_shape_numel(&out[0].shape) != (int64_t)st->count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): output has %lld elements; node_prepare "
                     "saw %u", label(node), ir_op_name(node->op), (long long)gfx_shape_numel(&out[0].shape), st->count);
  if (st->count == 0) return NULL;
  const int dtype = in[0].dtype;
  if (out[0].dtype != dtype)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): output is %s, input %s", label(node),
                     ir_op_name(node->op), gfx_dtype_name(out[0].dtype), gfx_dtype_name(dtype));
  vk_shader_id shader;
  if (node->op == GFX_OP_GRID_SAMPLE) {
    if (node->n_inputs != 2)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %d inputs", label(node),
                       ir_op_name(node->op), node->n_inputs);
    GFX_TRY(grid_sample_shader(d, dtype, in[1].dtype, &shader));
  } else if (is_resize(node->op)) {
    GFX_TRY(resize_shader(d, node->op, dtype, st->general, &shader));
    if (st->identity)
      return in[0].data == out[0].data ? NULL
                                       : vk_copy(&d->dev, out[0].data, in[0].data, (size_t)st->count * gfx_dtype_size(dtype),
                                                 GFX_COPY_DEVICE_TO_DEVICE, ctx->stream);
  } else {
    GFX_TRY(space_depth_shader(d, node->op, dtype, &shader));
  }
  /* Resize: its tap count; GridSample: its mode */
  const int32_t spec[1] = {node->op == GFX_OP_GRID_SAMPLE ? st->grid_mode : st->taps};
  const int specialized = is_resize(node->op) || node->op == GFX_OP_GRID_SAMPLE;
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, specialized ? spec : NULL, specialized ? 1 : 0, &pipe));
  if (node->op == GFX_OP_GRID_SAMPLE) {
    grid_sample_push pc = st->gp;
    pc.x = (uint64_t)(uintptr_t)in[0].data;
    pc.grid = (uint64_t)(uintptr_t)in[1].data;
    pc.y = (uint64_t)(uintptr_t)out[0].data;
    return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, pc.count);
  }
  if (is_resize(node->op)) {
    resize_push pc = st->rp;
    pc.x = (uint64_t)(uintptr_t)in[0].data;
    pc.y = (uint64_t)(uintptr_t)out[0].data;
    pc.taps = st->table.address;
    return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
  }
  space_depth_push pc = st->sp;
  pc.x = (uint64_t)(uintptr_t)in[0].data;
  pc.y = (uint64_t)(uintptr_t)out[0].data;
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}
