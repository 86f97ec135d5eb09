/* gfxep — element access for the reference kernels, whatever the element type.
 *
 * Reference kernels compute in double and convert on load and store, so one loop serves float32,
 * float16, bfloat16 and the integer types; a store rounds once, as the GPU kernels do. Slow by
 * design: the reference backend is an oracle.
 */
#ifndef GFXEP_BACKEND_REF_REF_DTYPE_H
#define GFXEP_BACKEND_REF_REF_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "core/half.h"
#include "ir/tensor.h"

static inline double ref_load(const void* base, int dtype, int64_t i) {
  const char* p = (const char*)base;
  switch (dtype) {
    case GFX_DTYPE_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case GFX_DTYPE_F16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return gfx_half_to_float(v); }
    case GFX_DTYPE_BF16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return gfx_bf16_to_float(v); }
    case GFX_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case GFX_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case GFX_DTYPE_I8: return (int8_t)p[i];
    case GFX_DTYPE_U8: return (uint8_t)p[i];
    case GFX_DTYPE_BOOL: return p[i] != 0;
    default: return 0.0;
  }
}

/* Integer stores truncate toward zero (as a C cast does); bool stores v != 0. */
static inline void ref_store(void* base, int dtype, int64_t i, double v) {
  char* p = (char*)base;
  switch (dtype) {
    case GFX_DTYPE_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case GFX_DTYPE_F16: { uint16_t h = gfx_float_to_half((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case GFX_DTYPE_BF16: { uint16_t h = gfx_float_to_bf16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case GFX_DTYPE_I64: { int64_t x = (int64_t)v; memcpy(p + 8 * i, &x, 8); break; }
    case GFX_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case GFX_DTYPE_I8: p[i] = (char)(int8_t)v; break;
    case GFX_DTYPE_U8: p[i] = (char)(uint8_t)v; break;
    case GFX_DTYPE_BOOL: p[i] = v != 0.0; break;
    default: break;
  }
}

/* Whether ref_load/ref_store handle dtype. */
static inline int ref_dtype_ok(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: case GFX_DTYPE_F16: case GFX_DTYPE_BF16: case GFX_DTYPE_I64: case GFX_DTYPE_I32:
    case GFX_DTYPE_I8: case GFX_DTYPE_U8: case GFX_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

#endif
