/* gfxep reference backend — the one kind of external memory it can take: page-aligned host memory
 * (ORT 1.30's HOST_ALLOCATION). The reference "device" is host memory, so importing is mapping the
 * pointer itself. It lets the importer's validation and tensor views be tested where no GPU is. */
#include <stdlib.h>

#include "backend/ref/ref_kernels.h"

int ref_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind) {
  const int device = dev->index;
  return device == 0 && kind == GFX_EXT_MEMORY_HOST_ALLOCATION;
}

gfx_status ref_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped) {
  const int device = dev->index;
  *import = NULL;
  *mapped = NULL;
  if (!ref_can_import_memory(dev, desc->kind))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "reference backend: memory kind %d cannot be imported on device %d",
                     (int)desc->kind, device);
  if (desc->size == 0 || desc->offset >= desc->size)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: offset %zu and size %zu describe no memory",
                     desc->offset, desc->size);
  /* a token, so that an import is a distinct non-NULL object like on other backends */
  int* token = malloc(sizeof *token);
  if (!token) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: import record");
  *import = token;
  *mapped = (char*)desc->handle + desc->offset;
  return NULL;
}

void ref_release_memory(gfx_dev* dev, void* import, void* mapped) {
  const int device = dev->index;
  (void)device, (void)mapped;
  free(import);
}
