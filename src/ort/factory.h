/* gfxep — the OrtEpFactory: which devices gfxep offers to ONNX Runtime, and the objects shared by the
 * sessions that use them. */
#ifndef GFXEP_ORT_FACTORY_H
#define GFXEP_ORT_FACTORY_H

#include "ort/device.h"

typedef struct gfx_factory {
  OrtEpFactory base; /* first: ORT only sees this */
  const OrtLogger* logger;
  char registered_name[256];
  /* The backend the registration name asks for ("gfxep.vulkan" -> "vulkan"), or "" for every backend
   * that is offered by default. */
  char only_backend[64];
  gfx_device_set set;
} gfx_factory;

OrtStatus* gfx_factory_create(const char* registered_name, const OrtLogger* logger, gfx_factory** out);
void gfx_factory_destroy(gfx_factory* f);

#endif
