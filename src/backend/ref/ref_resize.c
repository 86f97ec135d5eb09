/* gfxep — reference kernels of the resampling ops: plain C loops on host memory. */
#include "backend/ref/ref_kernels.h"

#include "ir/shape.h"
