#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

static gfx_log_sink g_sink;
static void* g_sink_user;

void gfx_log_set_sink(gfx_log_sink sink, void* user) {
  g_sink = sink;
  g_sink_user = user;
}

gfx_log_sink gfx_log_get_sink(void** user) {
  *user = g_sink_user;
  return g_sink;
}

void gfx_log(gfx_log_level level, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (g_sink) {
    g_sink(g_sink_user, level, buf);
  } else if (level >= GFX_LOG_WARNING) {
    fprintf(stderr, "gfxep: %s\n", buf);
  }
}
