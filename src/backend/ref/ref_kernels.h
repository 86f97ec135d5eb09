/* gfxep — reference backend internals shared by ref_backend.c and ref_kernels.c. Private to
 * src/backend/ref: everything else reaches the reference backend through gfx_backend_reference().
 */
#ifndef GFXEP_BACKEND_REF_REF_KERNELS_H
#define GFXEP_BACKEND_REF_REF_KERNELS_H

#include <stddef.h>

#include "backend/backend.h"

/* NULL for device 0, the only reference device; otherwise GFX_ERR_INVALID_ARGUMENT naming it. */
gfx_status ref_check_device(int device);

/* The gfx_backend kernel entries (see backend.h). The reference kernels keep no per-node state and
 * need no scratch memory. */
gfx_status ref_node_prepare(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state, size_t* scratch_bytes);
void ref_node_release(int device, void* state);
gfx_status ref_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        void* state);

/* ref_interop.c */
int ref_can_import_memory(int device, gfx_ext_memory_kind kind);
gfx_status ref_import_memory(int device, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void ref_release_memory(int device, void* import, void* mapped);

#endif
