/* gfxep — status values shared by every layer below src/ort.
 *
 * A gfx_status is NULL on success, or a heap object holding an error code and a message. This is
 * the same convention as OrtStatus, so src/ort converts one into the other at the boundary and no
 * layer below it ever needs ORT headers. Nothing in gfxep aborts: errors travel up as statuses.
 */
#ifndef GFXEP_CORE_STATUS_H
#define GFXEP_CORE_STATUS_H

#include <stdarg.h>

typedef enum gfx_code {
  GFX_OK = 0,
  GFX_ERR_INVALID_ARGUMENT, /* the caller passed something wrong; the message names it */
  GFX_ERR_NOT_SUPPORTED,    /* a valid request this build or device cannot serve */
  GFX_ERR_OUT_OF_MEMORY,    /* device or host allocation failed */
  GFX_ERR_DEVICE,           /* the GPU runtime reported an error */
  GFX_ERR_INTERNAL,         /* a gfxep invariant was broken: a bug */
  GFX_ERR_NOT_READY,        /* asked without waiting, and the device has not got there yet */
  GFX_ERR_DEVICE_LOST,      /* the device is gone (a sticky CUDA error, VK_ERROR_DEVICE_LOST): every later
                             * call on it fails the same way until it is recovered */
  GFX_ERR_EXPIRED,          /* asked about a record the device has since written over (a ring entry) */
} gfx_code;

typedef struct gfx_status_s* gfx_status;

/* printf-style checking of format strings. MinGW's default printf attribute is Microsoft's, which
 * knows no %zu; gfxep formats with the C99 (gnu) rules everywhere (built with
 * __USE_MINGW_ANSI_STDIO=1 there). */
#if defined(__MINGW32__)
#define GFX_PRINTF(fmt_index, first_arg) __attribute__((format(gnu_printf, fmt_index, first_arg)))
#elif defined(__GNUC__)
#define GFX_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define GFX_PRINTF(fmt_index, first_arg)
#endif

/* Makes an error status with a printf-style message. Never returns NULL for a code other than
 * GFX_OK: if memory for the message cannot be had, a static out-of-memory status is returned. */
gfx_status gfx_error(gfx_code code, const char* fmt, ...) GFX_PRINTF(2, 3);
gfx_status gfx_error_v(gfx_code code, const char* fmt, va_list ap);

gfx_code gfx_status_code(gfx_status s);
const char* gfx_status_message(gfx_status s);
void gfx_status_free(gfx_status s);

/* Prefixes context to an error's message ("loading weights: <message>") and returns it. */
gfx_status gfx_status_wrap(gfx_status s, const char* fmt, ...) GFX_PRINTF(2, 3);

#define GFX_TRY(expr)                 \
  do {                                \
    gfx_status gfx_try_s_ = (expr);   \
    if (gfx_try_s_) return gfx_try_s_; \
  } while (0)

#endif
