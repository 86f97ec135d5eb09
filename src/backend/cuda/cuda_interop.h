/* gfxep CUDA backend — graphics interop entry points (cuda_interop.c), wired into the backend table. */
#ifndef GFXEP_BACKEND_CUDA_INTEROP_H
#define GFXEP_BACKEND_CUDA_INTEROP_H

#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"

int cuda_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind);
gfx_status cuda_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void cuda_release_memory(gfx_dev* dev, void* import, void* mapped);
int cuda_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind);
gfx_status cuda_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
void cuda_release_semaphore(gfx_dev* dev, void* semaphore);
gfx_status cuda_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status cuda_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status cuda_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note, size_t note_size);
gfx_status cuda_graphics_interop_deinit(gfx_dev* dev);

#endif
