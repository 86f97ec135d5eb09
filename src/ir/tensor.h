/* gfxep — element types and shapes, shared by the IR, the backends and the ORT layer.
 *
 * Element type numbers are ONNX's (TensorProto.DataType), so converting from ORT is a cast and a
 * range check, never a table that can drift.
 */
#ifndef GFXEP_IR_TENSOR_H
#define GFXEP_IR_TENSOR_H

#include <stddef.h>
#include <stdint.h>

typedef enum gfx_dtype {
  GFX_DTYPE_UNDEFINED = 0,
  GFX_DTYPE_F32 = 1,
  GFX_DTYPE_U8 = 2,
  GFX_DTYPE_I8 = 3,
  GFX_DTYPE_I32 = 6,
  GFX_DTYPE_I64 = 7,
  GFX_DTYPE_BOOL = 9,
  GFX_DTYPE_F16 = 10,
  GFX_DTYPE_BF16 = 16,
} gfx_dtype;

/* Bytes per element, or 0 for a type gfxep does not handle. */
size_t gfx_dtype_size(int dtype);
const char* gfx_dtype_name(int dtype);

#define GFX_MAX_RANK 8
#define GFX_DIM_UNKNOWN (-1)

typedef struct gfx_shape {
  int rank;
  int64_t dims[GFX_MAX_RANK]; /* GFX_DIM_UNKNOWN where not known before run time */
} gfx_shape;

/* Element count of a fully known shape; -1 if a dim is unknown, negative or the product
 * overflows int64. A rank-0 shape has one element. */
int64_t gfx_shape_numel(const gfx_shape* s);

/* Bytes of a fully known shape of dtype; 0 with *ok = 0 when the size is unknown or overflows. */
size_t gfx_shape_bytes(const gfx_shape* s, int dtype, int* ok);

int gfx_shape_equal(const gfx_shape* a, const gfx_shape* b);
int gfx_shape_is_known(const gfx_shape* s);

/* Writes "[1,3,224,224]" (with ? for unknown dims) into buf; returns buf. */
const char* gfx_shape_str(const gfx_shape* s, char* buf, size_t size);

/* A tensor as kernels see it: a pointer in the backend's memory and a known shape, contiguous
 * row-major (C order). */
typedef struct gfx_tensor {
  void* data;
  int dtype;
  gfx_shape shape;
} gfx_tensor;

#endif
