/* gfxep — reference kernels of the layout and data movement ops: plain C loops on host memory. */
#include "backend/ref/ref_kernels.h"

#include "ir/shape.h"
