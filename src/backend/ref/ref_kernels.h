/* gfxep — reference backend internals shared by ref_backend.c and ref_kernels.c. Private to
 * src/backend/ref: everything else reaches the reference backend through gfx_backend_reference().
 */
#ifndef GFXEP_BACKEND_REF_REF_KERNELS_H
#define GFXEP_BACKEND_REF_REF_KERNELS_H

#include <stddef.h>

#include "backend/backend.h"

/* The reference backend's table; the registry (backend/registry.c) lists it. */
const gfx_backend* gfx_ref_backend_table(void);

/* NULL for device 0, the only reference device; otherwise GFX_ERR_INVALID_ARGUMENT naming it. */
gfx_status ref_check_device(int device);
/* GFX_ERR_DEVICE_LOST after inject_device_loss (until recovered), else NULL. */
gfx_status ref_check_alive(const char* what);

/* The gfx_backend kernel entries (see backend.h). The reference kernels keep no per-node state and
 * need no scratch memory. */
gfx_status ref_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state, size_t* scratch_bytes);
void ref_node_release(gfx_dev* dev, void* state);
gfx_status ref_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        void* state);

/* ---- checks every kernel makes (ref_kernels.c) ---- */

gfx_status ref_check_concrete_shape(const char* what, const gfx_shape* s);
/* a concrete shape, and memory behind it unless empty */
gfx_status ref_check_memory(const char* what, const gfx_tensor* t);
/* float32, a concrete shape, and memory behind it unless empty */
gfx_status ref_check_f32_tensor(const char* what, const gfx_tensor* t);
/* min_inputs..max_inputs float32 inputs (optional ones past min_inputs may be absent), one output */
gfx_status ref_check_node_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                             int max_inputs);
/* any handled type (ref_dtype_ok), a concrete shape, and memory behind it unless empty */
gfx_status ref_check_tensor(const char* what, const gfx_tensor* t);
/* min_inputs..max_inputs inputs, the first n_checked of them and the one output checked tensors */
gfx_status ref_check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                        int max_inputs, int n_checked);
/* t is of type want (NOT_SUPPORTED naming both types otherwise) */
gfx_status ref_check_dtype(const char* what, const gfx_tensor* t, int want);
gfx_status ref_check_shape_is(const char* what, const gfx_shape* actual, const gfx_shape* expected);
gfx_shape ref_make_shape4(int64_t d0, int64_t d1, int64_t d2, int64_t d3);

/* ---- numpy broadcasting through stride tables ---- */

/* Element strides of two operands along each dim of their broadcast shape. A stride is 0 where the
 * operand's dim is 1 or missing (numpy aligns shapes on their last dims), which makes the operand
 * repeat along that dim. */
typedef struct ref_broadcast_strides {
  int rank;
  int64_t dims[GFX_MAX_RANK]; /* the broadcast shape */
  int64_t a[GFX_MAX_RANK];
  int64_t b[GFX_MAX_RANK];
} ref_broadcast_strides;

/* Strides of `operand` (contiguous, row-major) along the dims of `full`, which it broadcasts to. */
void ref_operand_strides(const gfx_shape* operand, const gfx_shape* full, int64_t* strides);
void ref_broadcast_strides_init(ref_broadcast_strides* bs, const gfx_shape* full, const gfx_shape* a,
                                const gfx_shape* b);
/* Element offsets in a and b of the broadcast shape's element number `linear`. */
void ref_broadcast_offsets(const ref_broadcast_strides* bs, int64_t linear, int64_t* a_offset, int64_t* b_offset);

/* ref_interop.c */
int ref_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind);
gfx_status ref_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void ref_release_memory(gfx_dev* dev, void* import, void* mapped);

#endif
