#include "ort/ort_common.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/log.h"

const OrtApi* gfx_ort;
const OrtEpApi* gfx_ep_api;
int gfx_ort_minor;
int gfx_ort_runtime_minor;

static OrtErrorCode to_ort_code(gfx_code c) {
  switch (c) {
    case GFX_ERR_INVALID_ARGUMENT: return ORT_INVALID_ARGUMENT;
    case GFX_ERR_NOT_SUPPORTED: return ORT_NOT_IMPLEMENTED;
    case GFX_ERR_OUT_OF_MEMORY: return ORT_FAIL;
    case GFX_ERR_DEVICE: return ORT_EP_FAIL;
    case GFX_ERR_DEVICE_LOST: return ORT_EP_FAIL;
    default: return ORT_FAIL;
  }
}

OrtStatus* gfx_to_ort(gfx_status s) {
  if (!s) return NULL;
  OrtStatus* o = gfx_ort->CreateStatus(to_ort_code(gfx_status_code(s)), gfx_status_message(s));
  gfx_status_free(s);
  return o;
}

gfx_status gfx_from_ort(OrtStatus* s) {
  if (!s) return NULL;
  gfx_code code;
  switch (gfx_ort->GetErrorCode(s)) {
    case ORT_INVALID_ARGUMENT: code = GFX_ERR_INVALID_ARGUMENT; break;
    case ORT_NOT_IMPLEMENTED: code = GFX_ERR_NOT_SUPPORTED; break;
    default: code = GFX_ERR_INTERNAL;
  }
  gfx_status g = gfx_error(code, "onnxruntime: %s", gfx_ort->GetErrorMessage(s));
  gfx_ort->ReleaseStatus(s);
  return g;
}

OrtStatus* gfx_ort_error(OrtErrorCode code, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return gfx_ort->CreateStatus(code, buf);
}

static void log_message(const OrtLogger* logger, OrtLoggingLevel level, const char* msg) {
  OrtStatus* s = gfx_ort->Logger_LogMessage(logger, level, msg, ORT_FILE, __LINE__, "gfxep");
  if (s) gfx_ort->ReleaseStatus(s);
}

void gfx_ort_log(const OrtLogger* logger, OrtLoggingLevel level, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (logger && gfx_ort)
    log_message(logger, level, buf);
  else
    gfx_log((gfx_log_level)(level >= ORT_LOGGING_LEVEL_ERROR ? GFX_LOG_ERROR : level >= ORT_LOGGING_LEVEL_WARNING ? GFX_LOG_WARNING : GFX_LOG_INFO), "%s", buf);
}

static void sink(void* user, gfx_log_level level, const char* message) {
  OrtLoggingLevel l = level == GFX_LOG_ERROR     ? ORT_LOGGING_LEVEL_ERROR
                      : level == GFX_LOG_WARNING ? ORT_LOGGING_LEVEL_WARNING
                      : level == GFX_LOG_INFO    ? ORT_LOGGING_LEVEL_INFO
                                                 : ORT_LOGGING_LEVEL_VERBOSE;
  log_message((const OrtLogger*)user, l, message);
}

void gfx_ort_install_log_sink(const OrtLogger* default_logger) {
  if (default_logger) gfx_log_set_sink(sink, (void*)default_logger);
}

int gfx_ort_log_enabled(const OrtLogger* logger, OrtLoggingLevel level) {
  if (!logger || !gfx_ort) return 0;
  OrtLoggingLevel current = ORT_LOGGING_LEVEL_FATAL;
  OrtStatus* s = gfx_ort->Logger_GetLoggingSeverityLevel(logger, &current);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return 0;
  }
  return level >= current;
}
