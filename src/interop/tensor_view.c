#include "interop/tensor_view.h"

gfx_status gfx_tensor_view_check(size_t region_size, size_t tensor_offset, const int64_t* shape, size_t rank,
                                 size_t element_size, size_t max_rank, size_t* bytes) {
  *bytes = 0;
  if (element_size == 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "element type has no fixed size");
  if (rank > max_rank) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "rank %zu exceeds %zu", rank, max_rank);
  if (rank > 0 && !shape) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shape is NULL for rank %zu", rank);
  size_t total = element_size;
  for (size_t i = 0; i < rank; i++) {
    if (shape[i] < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shape[%zu] = %lld is negative", i, (long long)shape[i]);
    uint64_t d = (uint64_t)shape[i];
    if (d != 0 && total > SIZE_MAX / d)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shape[%zu] = %lld makes the tensor larger than memory can address",
                       i, (long long)shape[i]);
    total *= (size_t)d;
  }
  if (tensor_offset > region_size)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "tensor offset %zu is past the end of the %zu-byte region",
                     tensor_offset, region_size);
  if (total > region_size - tensor_offset)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "tensor of %zu bytes at offset %zu does not fit in the %zu-byte imported region", total,
                     tensor_offset, region_size);
  *bytes = total;
  return NULL;
}
