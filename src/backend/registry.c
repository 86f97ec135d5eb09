/* gfxep — the backend registry: the built-in reference backend and the GPU backend modules.
 *
 * A GPU backend lives in its own shared object (libgfxep_<name>.so next to libgfxep.so; gfxep_<name>.dll
 * next to gfxep.dll on Windows) so that
 * libgfxep.so itself needs nothing from the CUDA toolkit or the Vulkan loader: where they are
 * missing it still loads, and the reason a backend is unavailable becomes a log line.
 */
#include "backend/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dynlib.h"

/* Built in (ref/ref_backend.c). */
const gfx_backend* gfx_ref_backend_table(void);

typedef struct entry {
  const char* name;
  const char* module; /* file name of the module, NULL for a built-in backend */
  const char* symbol; /* its gfx_backend_entry_fn */
  pthread_once_t once;
  const gfx_backend* backend;
  const char* why;      /* points into why_buf, or at a static string */
  char why_buf[4608];
  void* handle;         /* kept open for the life of the process: ORT may call into it until exit */
} entry;

/* A module's file name: libgfxep_cuda.so on Linux, gfxep_cuda.dll on Windows. */
#ifdef _WIN32
#define MODULE_FILE(name) name ".dll"
#else
#define MODULE_FILE(name) "lib" name ".so"
#endif

/* The order in which devices are offered: vendor APIs first, then portable ones, then the oracle. */
static entry entries[] = {
    {.name = "cuda", .module = MODULE_FILE("gfxep_cuda"), .symbol = "gfxep_cuda_backend", .once = PTHREAD_ONCE_INIT},
    {.name = "vulkan", .module = MODULE_FILE("gfxep_vulkan"), .symbol = "gfxep_vulkan_backend", .once = PTHREAD_ONCE_INIT},
    {.name = "reference", .once = PTHREAD_ONCE_INIT},
};
#define N_ENTRIES ((int)(sizeof entries / sizeof entries[0]))

static void load(entry* e) {
  if (!e->module) {
    e->backend = gfx_ref_backend_table();
    e->why = "";
    return;
  }
  e->why = e->why_buf;
  char path[4096];
  /* GFXEP_<NAME>_MODULE (e.g. GFXEP_CUDA_MODULE) names the module's file: for programs that link the
   * registry statically, and for trying another build of one backend */
  char env_name[64];
  snprintf(env_name, sizeof env_name, "GFXEP_%s_MODULE", e->name);
  for (char* c = env_name; *c; c++)
    if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
  const char* env_path = getenv(env_name);
  if (env_path && env_path[0]) {
    snprintf(path, sizeof path, "%s", env_path);
  } else {
    char folder[4000];
    if (gfx_dynlib_folder_of((const void*)&gfx_registry_get, folder, sizeof folder)) {
      snprintf(e->why_buf, sizeof e->why_buf, "cannot find the folder of the gfxep library");
      return;
    }
    snprintf(path, sizeof path, "%s%c%s", folder, GFX_PATH_SEP, e->module);
  }
  char err[4096];
  e->handle = gfx_dynlib_open(path, err, sizeof err);
  if (!e->handle) {
    snprintf(e->why_buf, sizeof e->why_buf, "%s", err);
    return;
  }
  gfx_backend_entry_fn fn;
  void* sym = gfx_dynlib_symbol(e->handle, e->symbol);
  memcpy(&fn, &sym, sizeof fn);
  const char* module_why = NULL;
  const gfx_backend* be = fn ? fn(&module_why) : NULL;
  if (!fn || (be && be->abi_version != GFX_BACKEND_ABI_VERSION)) {
    snprintf(e->why_buf, sizeof e->why_buf, "%s: no compatible %s entry (ABI %d expected)", path, e->symbol,
             GFX_BACKEND_ABI_VERSION);
    return;
  }
  if (!be) {
    snprintf(e->why_buf, sizeof e->why_buf, "%s: %s", path, module_why ? module_why : "the module offers nothing");
    return;
  }
  e->backend = be;
  e->why_buf[0] = 0;
}

/* pthread_once takes no argument: one trampoline per entry. */
#define TRAMPOLINE(i) \
  static void load_##i(void) { load(&entries[i]); }
TRAMPOLINE(0)
TRAMPOLINE(1)
TRAMPOLINE(2)
static void (*const loaders[])(void) = {load_0, load_1, load_2};
_Static_assert(sizeof loaders / sizeof loaders[0] == sizeof entries / sizeof entries[0], "one loader per entry");

int gfx_registry_count(void) { return N_ENTRIES; }

const char* gfx_registry_name(int i) { return i >= 0 && i < N_ENTRIES ? entries[i].name : NULL; }

const gfx_backend* gfx_registry_get(int i, const char** why) {
  if (i < 0 || i >= N_ENTRIES) {
    if (why) *why = "no such backend";
    return NULL;
  }
  pthread_once(&entries[i].once, loaders[i]);
  if (why) *why = entries[i].why;
  return entries[i].backend;
}

const gfx_backend* gfx_registry_find(const char* name, const char** why) {
  for (int i = 0; name && i < N_ENTRIES; i++)
    if (strcmp(entries[i].name, name) == 0) return gfx_registry_get(i, why);
  if (why) *why = "gfxep knows no backend of that name";
  return NULL;
}

const gfx_backend* gfx_registry_loaded(int i) { return i >= 0 && i < N_ENTRIES ? entries[i].backend : NULL; }

const gfx_backend* gfx_backend_reference(void) { return gfx_ref_backend_table(); }

gfx_dev* gfx_reference_device(void) {
  gfx_dev* dev = NULL;
  gfx_status s = gfx_ref_backend_table()->device_get(0, &dev);
  gfx_status_free(s); /* the reference device cannot fail to exist */
  return dev;
}
