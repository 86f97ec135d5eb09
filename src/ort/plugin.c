/* gfxep — the two symbols ONNX Runtime looks up in a plugin EP library. The only other export is the
 * frame-timing reader of include/gfxep.h (frame_timing.c)
 * (see gfxep.lds; on Windows, the only functions marked dllexport). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"
#include "backend/registry.h"
#include "ort/factory.h"

#if defined(_WIN32)
#include <windows.h>
#define GFXEP_EXPORT __declspec(dllexport)

/* ONNX Runtime unloads the plugin at UnregisterExecutionProviderLibrary, yet objects it got from the
 * plugin (a data transfer, sessions created meanwhile) can outlive that, and the backend modules keep
 * pointers into this library: pinned, it stays mapped until the process ends (on Linux, the link
 * option -z nodelete does the same). */
static void keep_loaded(void) {
  HMODULE self = NULL;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                     (LPCWSTR)(const void*)&keep_loaded, &self);
}
#else
#define GFXEP_EXPORT __attribute__((visibility("default")))
static void keep_loaded(void) {}
#endif

/* Negotiates the API: gfxep is built against ORT_API_VERSION (29) and needs at least 1.24's EP API
 * (GetTensorElementTypeAndShapeDataReference, the graph accessors). It refuses older runtimes with
 * a status instead of calling functions they lack; newer ones serve the 1.29 tables unchanged. */
static OrtStatus* init_api(const OrtApiBase* base) {
  const char* version = base->GetVersionString();
  int major = 0, minor = 0;
  if (sscanf(version, "%d.%d", &major, &minor) != 2) major = minor = 0;
  if (major != 1 || minor < 24) {
    const OrtApi* any = base->GetApi(1);
    char msg[160];
    snprintf(msg, sizeof msg, "gfxep needs ONNX Runtime 1.24 or newer (built for 1.%d); this is %s", ORT_API_VERSION,
             version);
    return any ? any->CreateStatus(ORT_NOT_IMPLEMENTED, msg) : NULL;
  }
  int use = minor < ORT_API_VERSION ? minor : ORT_API_VERSION;
  const OrtApi* api = base->GetApi((uint32_t)use);
  if (!api) {
    const OrtApi* any = base->GetApi(1);
    return any ? any->CreateStatus(ORT_FAIL, "gfxep: ONNX Runtime refused its own API version") : NULL;
  }
  gfx_ort = api;
  gfx_ep_api = api->GetEpApi();
  gfx_ort_minor = use;
  gfx_ort_runtime_minor = minor;
  return NULL;
}

/* Live factories: the log sink points at ORT's default logger only while one exists. */
static atomic_int live_factories;

GFXEP_EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* ort_api_base,
                                          const OrtLogger* default_logger, OrtEpFactory** factories,
                                          size_t max_factories, size_t* num_factories) {
  *num_factories = 0;
  keep_loaded();
  OrtStatus* s = init_api(ort_api_base);
  if (s || !gfx_ort) return s;
  if (max_factories < 1) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: no room for a factory");
  gfx_ort_install_log_sink(default_logger);
  gfx_factory* f = NULL;
  ORT_TRY(gfx_factory_create(registered_name, default_logger, &f));
  factories[0] = &f->base;
  *num_factories = 1;
  atomic_fetch_add(&live_factories, 1);
  return NULL;
}

GFXEP_EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  if (!factory) return NULL;
  gfx_factory_destroy((gfx_factory*)(void*)factory);
  if (atomic_fetch_sub(&live_factories, 1) == 1) {
    gfx_log_set_sink(NULL, NULL);
    for (int i = 0; i < gfx_registry_count(); i++) {
      const gfx_backend* be = gfx_registry_loaded(i);
      if (be && be->set_log_sink) be->set_log_sink(NULL, NULL);
    }
  }
  return NULL;
}
