/* gfxep CUDA backend — graphics interop entry points (cuda_interop.c), wired into the backend table. */
#ifndef GFXEP_BACKEND_CUDA_INTEROP_H
#define GFXEP_BACKEND_CUDA_INTEROP_H

#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"

int cuda_can_import_memory(int device, gfx_ext_memory_kind kind);
gfx_status cuda_import_memory(int device, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void cuda_release_memory(int device, void* import, void* mapped);
int cuda_can_import_semaphore(int device, gfx_ext_semaphore_kind kind);
gfx_status cuda_import_semaphore(int device, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
void cuda_release_semaphore(int device, void* semaphore);
gfx_status cuda_wait_semaphore(int device, void* semaphore, uint64_t value, void* stream);
gfx_status cuda_signal_semaphore(int device, void* semaphore, uint64_t value, void* stream);
gfx_status cuda_graphics_interop_init(int device, gfx_graphics_api api, void* queue, const void* nv_blob, char* note,
                                      size_t note_size);
gfx_status cuda_graphics_interop_deinit(int device);

#endif
