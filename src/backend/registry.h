/* gfxep — the backends gfxep knows, in the order their devices are offered.
 *
 * The only file outside a backend's own folder that knows backends by name. The reference backend
 * is built into libgfxep; the GPU backends are modules (libgfxep_<name>.so next to libgfxep.so)
 * loaded on first use, so that libgfxep loads where their libraries (the CUDA toolkit, the Vulkan
 * loader) are missing and says why instead.
 */
#ifndef GFXEP_BACKEND_REGISTRY_H
#define GFXEP_BACKEND_REGISTRY_H

#include "backend/backend.h"

int gfx_registry_count(void);
/* The name of entry i ("cuda"), known without loading it. */
const char* gfx_registry_name(int i);
/* Entry i, loaded on first call; NULL with the reason in *why (static storage) when it cannot be had. */
const gfx_backend* gfx_registry_get(int i, const char** why);
/* The backend called name, loaded on first call; NULL with the reason in *why when absent. */
const gfx_backend* gfx_registry_find(const char* name, const char** why);
/* Entry i if it was loaded already, else NULL (never loads it). */
const gfx_backend* gfx_registry_loaded(int i);

/* The reference backend's one device (always present): tests and tools use it directly. */
gfx_dev* gfx_reference_device(void);
const gfx_backend* gfx_backend_reference(void);

#endif
