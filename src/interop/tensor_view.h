/* gfxep — checks that a tensor view fits inside an imported memory region.
 *
 * ONNX Runtime checks nothing about external tensor descriptors; a wrong shape or offset would make
 * inference read or write outside the application's allocation on the GPU. Every size is computed
 * with overflow checks, and the message names the offending value.
 */
#ifndef GFXEP_INTEROP_TENSOR_VIEW_H
#define GFXEP_INTEROP_TENSOR_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* region_size: bytes mapped (allocation size minus the memory descriptor's offset).
 * tensor_offset: the tensor's start within the region. On success *bytes is the tensor's size. */
gfx_status gfx_tensor_view_check(size_t region_size, size_t tensor_offset, const int64_t* shape, size_t rank,
                                 size_t element_size, size_t max_rank, size_t* bytes);

#endif
