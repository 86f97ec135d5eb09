/* gfxep CUDA backend — host side of the resampling ops: checks and launches. */
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"
