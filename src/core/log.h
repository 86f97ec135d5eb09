/* gfxep — logging below src/ort.
 *
 * Layers that do not know ORT log through one process-wide sink that src/ort points at ORT's
 * logger. Without a sink, messages of WARNING and above go to stderr, so a unit test still shows
 * them.
 */
#ifndef GFXEP_CORE_LOG_H
#define GFXEP_CORE_LOG_H

#include "core/status.h"

typedef enum gfx_log_level {
  GFX_LOG_VERBOSE = 0,
  GFX_LOG_INFO = 1,
  GFX_LOG_WARNING = 2,
  GFX_LOG_ERROR = 3,
} gfx_log_level;

typedef void (*gfx_log_sink)(void* user, gfx_log_level level, const char* message);

/* Sets the sink (NULL restores stderr). Meant to be called once when the plugin is loaded. */
void gfx_log_set_sink(gfx_log_sink sink, void* user);
/* The sink in effect (NULL for stderr), to hand it to a separately loaded module. */
gfx_log_sink gfx_log_get_sink(void** user);

void gfx_log(gfx_log_level level, const char* fmt, ...) GFX_PRINTF(2, 3);

#endif
