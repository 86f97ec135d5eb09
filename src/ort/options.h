/* gfxep — EP options: what a user may set, with "ep.gfxep.<key>" session config entries (which
 * SessionOptionsAppendExecutionProvider_V2's keys become). Unknown keys and bad values are errors
 * that name the key, so a typo never passes silently. */
#ifndef GFXEP_ORT_OPTIONS_H
#define GFXEP_ORT_OPTIONS_H

#include "ort/ort_common.h"

typedef struct gfx_ep_options {
  int caching_allocator; /* allocator = caching (default) | direct */
  int log_partition;     /* log_partition = 0 (default) | 1: log each node left to ORT, and why, as warnings */
} gfx_ep_options;

#define GFXEP_OPTION_PREFIX "ep." GFXEP_EP_NAME "."

OrtStatus* gfx_ep_options_parse(const OrtSessionOptions* so, gfx_ep_options* out);

#endif
