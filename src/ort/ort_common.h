/* gfxep — what every file in src/ort shares: the ORT API tables, status conversion, logging.
 *
 * src/ort is the only part of gfxep that includes ONNX Runtime headers. The API tables are fetched
 * once in CreateEpFactories (plugin.c) and never change afterwards.
 */
#ifndef GFXEP_ORT_COMMON_H
#define GFXEP_ORT_COMMON_H

#include <onnxruntime_c_api.h>

#include "core/status.h"

#define GFXEP_EP_NAME "gfxep"
#define GFXEP_VENDOR "gfxep"
#define GFXEP_VENDOR_ID 0u /* gfxep has no PCI vendor id of its own */
#define GFXEP_VERSION "0.1.0"

extern const OrtApi* gfx_ort;
extern const OrtEpApi* gfx_ep_api;
extern int gfx_ort_minor;         /* the API version in use: min(runtime's 1.Y, ORT_API_VERSION) */
extern int gfx_ort_runtime_minor; /* the runtime's own 1.Y, for values newer runtimes define */

/* Converts (and frees) a gfx_status into an OrtStatus for ORT. NULL stays NULL. */
OrtStatus* gfx_to_ort(gfx_status s);
/* Converts (and releases) an OrtStatus from an ORT call into a gfx_status. */
gfx_status gfx_from_ort(OrtStatus* s);
/* An error OrtStatus with a printf-style message. */
OrtStatus* gfx_ort_error(OrtErrorCode code, const char* fmt, ...) GFX_PRINTF(2, 3);

/* Returns from the enclosing OrtStatus*-returning function when an ORT call fails. */
#define ORT_TRY(expr)                   \
  do {                                  \
    OrtStatus* ort_try_s_ = (expr);     \
    if (ort_try_s_) return ort_try_s_;  \
  } while (0)

/* Logs through ORT's logger (falls back to the process-wide sink when logger is NULL). */
void gfx_ort_log(const OrtLogger* logger, OrtLoggingLevel level, const char* fmt, ...) GFX_PRINTF(3, 4);

/* Whether a message at this level would be logged (so callers can skip formatting it). */
int gfx_ort_log_enabled(const OrtLogger* logger, OrtLoggingLevel level);

/* Points the core logging sink at ORT's default logger. */
void gfx_ort_install_log_sink(const OrtLogger* default_logger);

#endif
