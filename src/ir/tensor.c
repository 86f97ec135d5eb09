#include "ir/tensor.h"

#include <stdio.h>
#include <string.h>

size_t gfx_dtype_size(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: case GFX_DTYPE_I32: return 4;
    case GFX_DTYPE_I64: return 8;
    case GFX_DTYPE_F16: case GFX_DTYPE_BF16: return 2;
    case GFX_DTYPE_U8: case GFX_DTYPE_I8: case GFX_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

const char* gfx_dtype_name(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: return "float32";
    case GFX_DTYPE_U8: return "uint8";
    case GFX_DTYPE_I8: return "int8";
    case GFX_DTYPE_I32: return "int32";
    case GFX_DTYPE_I64: return "int64";
    case GFX_DTYPE_BOOL: return "bool";
    case GFX_DTYPE_F16: return "float16";
    case GFX_DTYPE_BF16: return "bfloat16";
    default: return "unsupported";
  }
}

int64_t gfx_shape_numel(const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK) return -1; /* rank unknown: no size either */
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->dims[i];
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

size_t gfx_shape_bytes(const gfx_shape* s, int dtype, int* ok) {
  int64_t n = gfx_shape_numel(s);
  size_t es = gfx_dtype_size(dtype);
  if (n < 0 || es == 0 || (uint64_t)n > SIZE_MAX / es) {
    *ok = 0;
    return 0;
  }
  *ok = 1;
  return (size_t)n * es;
}

int gfx_shape_equal(const gfx_shape* a, const gfx_shape* b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

int gfx_shape_is_known(const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK) return 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return 0;
  return 1;
}

const char* gfx_shape_str(const gfx_shape* s, char* buf, size_t size) {
  size_t used = 0;
  if (size == 0) return buf;
  buf[0] = 0;
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < s->rank && used < size; i++) {
    if (s->dims[i] < 0)
      used += (size_t)snprintf(buf + used, size - used, "%s?", i ? "," : "");
    else
      used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}
