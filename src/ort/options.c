#include "ort/options.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef OrtStatus* (*option_setter)(gfx_ep_options* o, const char* key, const char* value);

static OrtStatus* bad_value(const char* key, const char* value, const char* allowed) {
  return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: option '%s' = '%s' is not one of: %s", key, value, allowed);
}

static OrtStatus* set_allocator(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "caching") == 0) o->caching_allocator = 1;
  else if (strcmp(value, "direct") == 0) o->caching_allocator = 0;
  else return bad_value(key, value, "caching, direct");
  return NULL;
}

static OrtStatus* set_log_partition(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "1") == 0) o->log_partition = 1;
  else if (strcmp(value, "0") == 0) o->log_partition = 0;
  else return bad_value(key, value, "0, 1");
  return NULL;
}

/* A decimal number: digits only (no sign, space, suffix or hex), at most max. */
static int parse_decimal(const char* value, unsigned long long max, unsigned long long* out) {
  if (!(value[0] >= '0' && value[0] <= '9')) return 0;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(value, &end, 10);
  if (errno || *end || v > max) return 0;
  *out = v;
  return 1;
}

/* A byte count within size_t. */
static OrtStatus* set_device_memory_limit(gfx_ep_options* o, const char* key, const char* value) {
  unsigned long long v;
  if (!parse_decimal(value, SIZE_MAX, &v))
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: option '%s' = '%s' is not a byte count", key, value);
  o->device_memory_limit = (size_t)v;
  return NULL;
}

static OrtStatus* set_graphs(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "1") == 0) o->graphs = GFX_GRAPHS_OWN;
  else if (strcmp(value, "0") == 0) o->graphs = GFX_GRAPHS_OFF;
  else if (strcmp(value, "ort") == 0) o->graphs = GFX_GRAPHS_ORT;
  else return bad_value(key, value, "0, 1, ort");
  return NULL;
}

static OrtStatus* set_precision(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "fp32") == 0) o->precision = GFX_PRECISION_FP32;
  else if (strcmp(value, "tf32") == 0) o->precision = GFX_PRECISION_TF32;
  else if (strcmp(value, "fp16") == 0) o->precision = GFX_PRECISION_FP16;
  else if (strcmp(value, "bf16") == 0) o->precision = GFX_PRECISION_BF16;
  else return bad_value(key, value, "fp32, tf32, fp16, bf16");
  return NULL;
}

static OrtStatus* set_layout(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "nchw") == 0) o->layout = GFX_LAYOUT_NCHW;
  else if (strcmp(value, "nhwc") == 0) o->layout = GFX_LAYOUT_NHWC;
  else if (strcmp(value, "auto") == 0) o->layout = GFX_LAYOUT_AUTO;
  else return bad_value(key, value, "nchw, nhwc, auto");
  return NULL;
}

static OrtStatus* set_fp16_guard(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "1") == 0) o->fp16_guard = 1;
  else if (strcmp(value, "0") == 0) o->fp16_guard = 0;
  else return bad_value(key, value, "0, 1");
  return NULL;
}

static OrtStatus* set_session_name(gfx_ep_options* o, const char* key, const char* value) {
  if (strlen(value) >= sizeof o->session_name)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: option '%s' = '%s' is longer than %zu characters", key, value,
                         sizeof o->session_name - 1);
  snprintf(o->session_name, sizeof o->session_name, "%s", value);
  return NULL;
}

static OrtStatus* set_frame_timings(gfx_ep_options* o, const char* key, const char* value) {
  if (strcmp(value, "1") == 0) o->frame_timings = 1;
  else if (strcmp(value, "0") == 0) o->frame_timings = 0;
  else return bad_value(key, value, "0, 1");
  return NULL;
}

/* Milliseconds, decimal digits only, at most one day. */
static OrtStatus* set_wait_timeout(gfx_ep_options* o, const char* key, const char* value) {
  unsigned long long v;
  if (!parse_decimal(value, 86400000ull, &v))
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: option '%s' = '%s' is not a number of milliseconds from 0 to 86400000", key, value);
  o->wait_timeout_ms = (unsigned)v;
  return NULL;
}

static const struct {
  const char* key;
  option_setter set;
} known[] = {
    {"session_name", set_session_name},
    {"frame_timings", set_frame_timings},
    {"wait_timeout_ms", set_wait_timeout},
    {"allocator", set_allocator},
    {"log_partition", set_log_partition},
    {"graphs", set_graphs},
    {"cuda_graph", set_graphs}, /* the name the option had while CUDA was the only backend; kept as an alias */
    {"device_memory_limit", set_device_memory_limit},
    {"precision", set_precision},
    {"layout", set_layout},
    {"fp16_guard", set_fp16_guard},
};

OrtStatus* gfx_ep_options_parse(const OrtSessionOptions* so, gfx_ep_options* out) {
  memset(out, 0, sizeof *out);
  out->caching_allocator = 1;
  out->graphs = GFX_GRAPHS_OWN;
  out->frame_timings = 0;
  out->wait_timeout_ms = 5000;
  out->fp16_guard = 1;
  /* channels-last only where it measured faster (16-bit dense convolution nets); NCHW for the rest and
   * on backends without channels-last convolutions (ort/layout_choice.h) */
  out->layout = GFX_LAYOUT_AUTO;
  OrtKeyValuePairs* entries = NULL;
  ORT_TRY(gfx_ort->GetSessionOptionsConfigEntries(so, &entries));
  const char* const* keys = NULL;
  const char* const* values = NULL;
  size_t n = 0;
  gfx_ort->GetKeyValuePairs(entries, &keys, &values, &n);
  OrtStatus* s = NULL;
  size_t plen = strlen(GFXEP_OPTION_PREFIX);
  for (size_t i = 0; i < n && !s; i++) {
    if (strncmp(keys[i], GFXEP_OPTION_PREFIX, plen) != 0) continue;
    const char* key = keys[i] + plen;
    size_t k = 0;
    while (k < sizeof known / sizeof known[0] && strcmp(known[k].key, key) != 0) k++;
    if (k == sizeof known / sizeof known[0])
      s = gfx_ort_error(ORT_INVALID_ARGUMENT,
                        "gfxep: unknown option '%s' (known: allocator, log_partition, device_memory_limit, graphs "
                        "(alias cuda_graph), precision, layout, fp16_guard, session_name, frame_timings, wait_timeout_ms)",
                        key);
    else
      s = known[k].set(out, key, values[i]);
  }
  gfx_ort->ReleaseKeyValuePairs(entries);
  return s;
}
