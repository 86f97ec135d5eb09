/* gfxep demo — setting up ORT, gfxep and Vulkan, choosing defaults, running the modes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

static const uint32_t scene_spirv[] =
#include "scene_spv.h"
    ;
static const uint32_t present_spirv[] =
#include "present_spv.h"
    ;

#ifndef GFXEP_DEMO_MODEL
#define GFXEP_DEMO_MODEL "models/demo_denoiser.onnx"
#endif
#ifndef GFXEP_DEMO_FALLBACK_MODEL
#define GFXEP_DEMO_FALLBACK_MODEL "demo_filter.onnx"
#endif

static int ort_failed(demo_ctx* c, OrtStatus* s, const char* what, char* err, size_t n) {
  if (!s) return 0;
  snprintf(err, n, "%s: %s", what, c->k.api->GetErrorMessage(s));
  c->k.api->ReleaseStatus(s);
  return 1;
}

static int hex_to_uuid(const char* hex, uint8_t* uuid) {
  if (!hex || strlen(hex) != 32) return 0;
  for (int i = 0; i < 16; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 0;
    uuid[i] = (uint8_t)v;
  }
  return 1;
}

static int io_names(demo_ctx* c, char* err, size_t n) {
  OrtAllocator* a = NULL;
  char *in = NULL, *out = NULL;
  if (ort_failed(c, c->k.api->GetAllocatorWithDefaultOptions(&a), "allocator", err, n) ||
      ort_failed(c, c->k.api->SessionGetInputName(c->session, 0, a, &in), "input name", err, n) ||
      ort_failed(c, c->k.api->SessionGetOutputName(c->session, 0, a, &out), "output name", err, n))
    return -1;
  snprintf(c->input_name, sizeof c->input_name, "%s", in);
  snprintf(c->output_name, sizeof c->output_name, "%s", out);
  OrtStatus* s = c->k.api->AllocatorFree(a, in);
  if (s) c->k.api->ReleaseStatus(s);
  s = c->k.api->AllocatorFree(a, out);
  if (s) c->k.api->ReleaseStatus(s);
  return 0;
}

int demo_open(demo_ctx* c, demo_options* o, char* err, size_t n) {
  memset(c, 0, sizeof *c);
  demo_arm("setting up ONNX Runtime", 120);
  if (ortkit_open(&c->k, NULL, ORT_LOGGING_LEVEL_WARNING, err, n)) return -1;
  c->ia = c->k.api->GetInteropApi();
  printf("ONNX Runtime %s, plugin %s\n", c->k.version, ortkit_plugin_path());
  if (ort_failed(c, c->k.api->RegisterExecutionProviderLibrary(c->k.env, "gfxep", ortkit_plugin_path()), "register",
                 err, n))
    return -1;
  c->cuda = ortkit_find_devices(&c->k, "cuda", &c->device, 1) == 1;
  if (!c->cuda) {
    printf("No CUDA device is offered by gfxep here: running the copy-through-host pipeline on the reference\n"
           "backend (plain C on the CPU, slow by design) with lavapipe or whatever Vulkan device exists, at a small\n"
           "resolution. The zero-copy interop pipeline needs an NVIDIA GPU.\n");
    if (ort_failed(c, c->k.api->RegisterExecutionProviderLibrary(c->k.env, "gfxep.reference", ortkit_plugin_path()),
                   "register reference", err, n))
      return -1;
    if (ortkit_find_devices(&c->k, "reference", &c->device, 1) != 1) {
      snprintf(err, n, "gfxep offers neither a CUDA nor the reference device");
      return -1;
    }
    if (o->mode & DEMO_INTEROP) o->mode = DEMO_HOST;
  }
  c->width = o->width ? o->width : c->cuda ? 1920 : 160;
  c->height = o->height ? o->height : c->cuda ? 1080 : 96;
  c->frames = o->frames > 0 ? o->frames : c->cuda ? 300 : 30;

  /* the Vulkan device: the very GPU gfxep runs on, matched by UUID */
  demo_arm("setting up Vulkan", 60);
  uint8_t uuid[16];
  int have_uuid = c->cuda && hex_to_uuid(ortkit_device_meta(&c->k, c->device, "gfxep.device_uuid"), uuid);
  if (vkp_create(have_uuid ? uuid : NULL, c->cuda && (o->mode & DEMO_INTEROP), &c->vk, err, n)) return -1;
  printf("gfxep device: %s (%s backend); Vulkan device: %s%s\n",
         ortkit_device_meta(&c->k, c->device, "gfxep.device_name"), c->cuda ? "cuda" : "reference",
         vkp_device_name(c->vk), have_uuid ? " (matched by UUID)" : "");
  if (vkp_pipeline_create(c->vk, scene_spirv, sizeof scene_spirv, 2, 16, &c->scene, err, n) ||
      vkp_pipeline_create(c->vk, present_spirv, sizeof present_spirv, 3, 8, &c->present, err, n))
    return -1;
  if (o->dump_dir) return 0;

  /* the model: the one asked for, the trained one in the source tree, or the fixed filter */
  const char* model = o->model;
  static char fallback[1024];
  if (!model) {
    model = GFXEP_DEMO_MODEL;
    if (access(model, R_OK)) {
      snprintf(fallback, sizeof fallback, "%s/%s", GFXEP_MODELS_DIR, GFXEP_DEMO_FALLBACK_MODEL);
      model = fallback;
      printf("(no trained model at %s: using the fixed-filter model %s)\n", GFXEP_DEMO_MODEL, model);
    }
  }
  o->model = model;
  demo_arm("creating the session", 120);
  if (ort_failed(c, ortkit_session(&c->k, model, c->device, NULL, NULL, 0, &c->session), "session", err, n) ||
      io_names(c, err, n))
    return -1;
  size_t on_gfxep = 0, other = 0;
  if (ort_failed(c, ortkit_placement(&c->k, c->session, &on_gfxep, &other, 0), "placement", err, n)) return -1;
  printf("model %s: %zu nodes on gfxep, %zu on other EPs\n", model, on_gfxep, other);
  if (c->cuda && (o->mode & DEMO_INTEROP)) {
    OrtGraphicsInteropConfig cfg = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_VULKAN};
    if (ort_failed(c, c->ia->InitGraphicsInteropForEpDevice(c->device, &cfg), "InitGraphicsInterop", err, n)) return -1;
    c->interop_ready = 1;
    if (ort_failed(c, c->ia->CreateExternalResourceImporterForDevice(c->device, &c->importer), "importer", err, n))
      return -1;
    if (!c->importer) {
      snprintf(err, n, "gfxep's device has no importer");
      return -1;
    }
  }
  return 0;
}

/* Teardown in the documented order: sessions and importer, graphics interop, then Vulkan, then ORT. */
void demo_close(demo_ctx* c) {
  demo_arm("shutting down", 30);
  if (c->session) c->k.api->ReleaseSession(c->session);
  if (c->importer) c->ia->ReleaseExternalResourceImporter(c->importer);
  if (c->interop_ready) {
    OrtStatus* s = c->ia->DeinitGraphicsInteropForEpDevice(c->device);
    if (s) c->k.api->ReleaseStatus(s);
  }
  if (c->scene) vkp_pipeline_destroy(c->scene);
  if (c->present) vkp_pipeline_destroy(c->present);
  if (c->vk) vkp_destroy(c->vk);
  if (c->k.env) {
    OrtStatus* s = c->k.api->UnregisterExecutionProviderLibrary(c->k.env, "gfxep");
    if (s) c->k.api->ReleaseStatus(s);
    if (!c->cuda) {
      s = c->k.api->UnregisterExecutionProviderLibrary(c->k.env, "gfxep.reference");
      if (s) c->k.api->ReleaseStatus(s);
    }
    ortkit_close(&c->k);
  }
  alarm(0);
}

int demo_run(demo_ctx* c, const demo_options* o) {
  demo_report reports[2];
  memset(reports, 0, sizeof reports);
  int n = 0, rc = 0;
  printf("%d frames of %ux%u, %d in flight, PNG every %d frames into %s\n", c->frames, c->width, c->height, o->in_flight,
         o->every, o->out_dir);
  if ((o->mode & DEMO_INTEROP) && c->cuda) {
    reports[n].name = "interop";
    if (demo_run_interop(c, o, &reports[n])) rc = 1;
    n++;
  }
  if ((o->mode & DEMO_HOST) && !demo_stop_requested() && !rc) {
    reports[n].name = "copy_through_host";
    if (demo_run_host(c, o, &reports[n])) rc = 1;
    n++;
  }
  double max_abs = NAN, psnr_noisy = NAN, psnr_out = NAN;
  if (!rc && !demo_stop_requested() && demo_check_frame(c, o, &max_abs, &psnr_noisy, &psnr_out)) rc = 1;
  if (demo_report_write(c, o, reports, n, max_abs, psnr_noisy, psnr_out)) rc = 1;
  for (int i = 0; i < n; i++) demo_report_free(&reports[i]);
  if (demo_stop_requested()) printf("stopped by Ctrl-C: frames in flight finished, everything released\n");
  return rc;
}
