/* gfxep — finds and loads the CUDA backend module at run time.
 *
 * The CUDA backend lives in its own shared object (libgfxep_cuda.so, next to libgfxep.so) so that
 * libgfxep.so itself needs nothing from the CUDA toolkit: on a machine without cuBLAS, cuDNN or a
 * GPU it still loads, and the reason CUDA is unavailable becomes a log line instead of a failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static const gfx_backend* cuda_backend;
static char cuda_why[4608] = "not loaded";
static void* cuda_module; /* kept open for the life of the process: ORT may call into it until exit */

static void load_cuda(void) {
  Dl_info info;
  char path[4096];
  if (!dladdr((void*)&gfx_backend_cuda, &info) || !info.dli_fname) {
    snprintf(cuda_why, sizeof cuda_why, "cannot find the folder of libgfxep");
    return;
  }
  const char* slash = strrchr(info.dli_fname, '/');
  int dir_len = slash ? (int)(slash - info.dli_fname) : 1;
  snprintf(path, sizeof path, "%.*s/libgfxep_cuda.so", dir_len, slash ? info.dli_fname : ".");
  cuda_module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!cuda_module) {
    const char* e = dlerror();
    snprintf(cuda_why, sizeof cuda_why, "%s", e ? e : path);
    return;
  }
  gfx_backend_entry_fn entry = (gfx_backend_entry_fn)dlsym(cuda_module, GFX_CUDA_BACKEND_ENTRY);
  const gfx_backend* be = entry ? entry() : NULL;
  if (!be || be->abi_version != GFX_BACKEND_ABI_VERSION) {
    snprintf(cuda_why, sizeof cuda_why, "%s: no compatible %s entry (ABI %d expected)", path,
             GFX_CUDA_BACKEND_ENTRY, GFX_BACKEND_ABI_VERSION);
    return;
  }
  cuda_backend = be;
  cuda_why[0] = 0;
}

const gfx_backend* gfx_backend_cuda(const char** why) {
  pthread_once(&cuda_once, load_cuda);
  if (why) *why = cuda_why;
  return cuda_backend;
}

const gfx_backend* gfx_backend_cuda_loaded(void) { return cuda_backend; }
