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

/* The device of `backend` gfxep offers under `registration` (registered now), or 0; with gpu_only, a
 * CPU implementation (lavapipe) does not count. */
static int find_backend(demo_ctx* c, const char* registration, const char* backend, int gpu_only, char* err,
                        size_t n) {
  if (ort_failed(c, c->k.api->RegisterExecutionProviderLibrary(c->k.env, registration, ortkit_plugin_path()),
                 "register", err, n))
    return -1;
  const OrtEpDevice* devs[8];
  size_t found = ortkit_find_devices(&c->k, backend, devs, 8);
  if (found) {
    c->device = devs[0]; /* ortkit lists GPUs before CPU implementations */
    if (!gpu_only || ortkit_device_meta(&c->k, c->device, "gfxep.pci_bus_id")) {
      c->backend = backend;
      c->registration = registration;
      return 1;
    }
    c->device = NULL;
  }
  OrtStatus* s = c->k.api->UnregisterExecutionProviderLibrary(c->k.env, registration);
  if (s) c->k.api->ReleaseStatus(s);
  return 0;
}

/* The backend asked for, or with "auto" the first of: cuda (plain "gfxep" registration), a Vulkan GPU,
 * a CPU Vulkan (lavapipe: the zero-copy pipeline still runs, on the CPU, at a small resolution; its
 * tiled convolutions keep it about as fast as the reference backend's copy-through-host frames) and
 * the reference backend. */
static int choose_device(demo_ctx* c, const demo_options* o, char* err, size_t n) {
  static const struct {
    const char* backend;
    const char* registration;
    int gpu_only; /* with auto */
  } order[] = {{"cuda", "gfxep", 0},
               {"vulkan", "gfxep.vulkan", 1},
               {"vulkan", "gfxep.vulkan", 0},
               {"reference", "gfxep.reference", 0}};
  const char* want = o->backend ? o->backend : "auto";
  const int automatic = !strcmp(want, "auto");
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (!automatic && (strcmp(want, order[i].backend) != 0 || order[i].gpu_only)) continue;
    int found = find_backend(c, order[i].registration, order[i].backend, automatic && order[i].gpu_only, err, n);
    if (found) return found < 0 ? -1 : 0;
  }
  snprintf(err, n, "gfxep offers no %s device here", automatic ? "cuda, vulkan or reference" : want);
  return -1;
}

/* The renderer's VkDevice and queue handed to gfxep's Vulkan backend: before any session on it. */
static int share_vulkan_device(demo_ctx* c, char* err, size_t n) {
  const char* keys[VKP_GFXEP_OPTIONS];
  const char* values[VKP_GFXEP_OPTIONS];
  char storage[VKP_GFXEP_OPTIONS][64];
  int count = vkp_gfxep_options(c->vk, keys, values, storage);
  OrtKeyValuePairs* kv = NULL;
  c->k.api->CreateKeyValuePairs(&kv);
  for (int i = 0; i < count; i++) c->k.api->AddKeyValuePair(kv, keys[i], values[i]);
  OrtGraphicsInteropConfig cfg = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_VULKAN,
                                  .additional_options = kv};
  OrtStatus* s = c->ia->InitGraphicsInteropForEpDevice(c->device, &cfg);
  c->k.api->ReleaseKeyValuePairs(kv);
  if (ort_failed(c, s, "InitGraphicsInterop with the renderer's VkDevice", err, n)) return -1;
  c->interop_ready = 1;
  return 0;
}

int demo_open(demo_ctx* c, demo_options* o, char* err, size_t n) {
  memset(c, 0, sizeof *c);
  demo_arm("setting up ONNX Runtime", 120);
  if (ortkit_open(&c->k, NULL, ORT_LOGGING_LEVEL_WARNING, err, n)) return -1;
  c->ia = c->k.api->GetInteropApi();
  printf("ONNX Runtime %s, plugin %s\n", c->k.version, ortkit_plugin_path_text());
  if (choose_device(c, o, err, n)) return -1;
  const int vulkan = strcmp(c->backend, "vulkan") == 0;
  /* a device without a name in PCI terms is a CPU implementation (lavapipe, the reference backend) */
  c->software = !strcmp(c->backend, "reference") || !ortkit_device_meta(&c->k, c->device, "gfxep.pci_bus_id");
  c->zero_copy = strcmp(c->backend, "reference") != 0;
  c->one_queue = vulkan;
  if (!c->zero_copy) {
    printf("No GPU or Vulkan device is offered by gfxep here: running the copy-through-host pipeline on the\n"
           "reference backend (plain C on the CPU, slow by design) at a small resolution.\n");
    if (o->mode & DEMO_INTEROP) o->mode = DEMO_HOST;
  }
  if (c->zero_copy && c->software)
    printf("No GPU is offered by gfxep here: running the zero-copy pipeline on a CPU implementation of Vulkan\n"
           "(gfxep's Vulkan backend on the renderer's own VkDevice) at a small resolution.\n");
  c->width = o->width ? o->width : c->software ? 160 : 1920;
  c->height = o->height ? o->height : c->software ? 96 : 1080;
  c->frames = o->frames > 0 ? o->frames : c->software ? 30 : 300;

  /* the Vulkan device: the very GPU gfxep runs on, matched by UUID */
  demo_arm("setting up Vulkan", 60);
  uint8_t uuid[16];
  int have_uuid = c->zero_copy && hex_to_uuid(ortkit_device_meta(&c->k, c->device, "gfxep.device_uuid"), uuid);
  /* CUDA needs the renderer's semaphores exported; on one queue they are optional */
  if (vkp_create(have_uuid ? uuid : NULL, c->zero_copy && !vulkan && (o->mode & DEMO_INTEROP), &c->vk, err, n))
    return -1;
  c->use_semaphores = !vulkan || vkp_has_semaphore_fd(c->vk);
  printf("gfxep device: %s (%s backend); Vulkan device: %s%s\n",
         ortkit_device_meta(&c->k, c->device, "gfxep.device_name"), c->backend, vkp_device_name(c->vk),
         have_uuid ? " (matched by UUID)" : "");
  if (vulkan) {
    if (share_vulkan_device(c, err, n)) return -1;
    printf("gfxep records on the renderer's own VkDevice and queue; frames ordered by %s\n",
           c->use_semaphores ? "timeline semaphores" : "that queue alone (the device exports no semaphores)");
  }
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
  /* gfxep's per-frame GPU timings split the frame's GPU time into its wait, inference and signal; the
   * reader is an export of the plugin ORT loaded */
  c->read_frames = (gfxep_read_frame_timings_fn)ortkit_plugin_symbol(GFXEP_READ_FRAME_TIMINGS);
  const char* keys[] = {"frame_timings", "session_name", "precision"};
  const char* values[] = {"1", "gfxep-demo", o->precision};
  if (ort_failed(c, ortkit_session(&c->k, model, c->device, keys, values, o->precision ? 3 : 2, &c->session),
                 "session", err, n) ||
      io_names(c, err, n))
    return -1;
  size_t on_gfxep = 0, other = 0;
  if (ort_failed(c, ortkit_placement(&c->k, c->session, &on_gfxep, &other, 0), "placement", err, n)) return -1;
  printf("model %s: %zu nodes on gfxep, %zu on other EPs, precision %s\n", model, on_gfxep, other,
         o->precision ? o->precision : "fp32");
  if (c->zero_copy && (o->mode & DEMO_INTEROP)) {
    if (!vulkan) {
      OrtGraphicsInteropConfig cfg = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_VULKAN};
      if (ort_failed(c, c->ia->InitGraphicsInteropForEpDevice(c->device, &cfg), "InitGraphicsInterop", err, n))
        return -1;
      c->interop_ready = 1;
    }
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
    if (s) {
      fprintf(stderr, "gfxep-demo: DeinitGraphicsInterop: %s\n", c->k.api->GetErrorMessage(s));
      c->k.api->ReleaseStatus(s);
    }
  }
  if (c->scene) vkp_pipeline_destroy(c->scene);
  if (c->present) vkp_pipeline_destroy(c->present);
  if (c->vk) vkp_destroy(c->vk);
  if (c->k.env) {
    if (c->registration) {
      OrtStatus* s = c->k.api->UnregisterExecutionProviderLibrary(c->k.env, c->registration);
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
  if ((o->mode & DEMO_INTEROP) && c->zero_copy) {
    reports[n].name = c->one_queue ? "interop_one_queue" : "interop";
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
