#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gfx_status_s {
  gfx_code code;
  int is_static; /* 1 for the preallocated out-of-memory status, which is never freed */
  char message[]; /* NUL-terminated */
};

/* Returned when the status itself cannot be allocated. The CUDA module links its own copy of this
 * file, so "static" is a flag in the object rather than an address compare: either copy's free
 * recognises either copy's static status. */
static struct {
  gfx_code code;
  int is_static;
  char message[40];
} oom_status = {GFX_ERR_OUT_OF_MEMORY, 1, "out of host memory building an error"};

#define OOM_STATUS ((gfx_status)(void*)&oom_status)

gfx_status gfx_error_v(gfx_code code, const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  struct gfx_status_s* s = malloc(sizeof(*s) + (size_t)n + 1);
  if (!s) return OOM_STATUS;
  s->code = code == GFX_OK ? GFX_ERR_INTERNAL : code;
  s->is_static = 0;
  vsnprintf(s->message, (size_t)n + 1, fmt, ap);
  return s;
}

gfx_status gfx_error(gfx_code code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gfx_status s = gfx_error_v(code, fmt, ap);
  va_end(ap);
  return s;
}

gfx_code gfx_status_code(gfx_status s) { return s ? s->code : GFX_OK; }

const char* gfx_status_message(gfx_status s) { return s ? s->message : ""; }

void gfx_status_free(gfx_status s) {
  if (s && !s->is_static) free(s);
}

gfx_status gfx_status_wrap(gfx_status s, const char* fmt, ...) {
  if (!s || s->is_static) return s;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  gfx_status w = gfx_error(s->code, "%s: %s", prefix, s->message);
  gfx_status_free(s);
  return w;
}
