/* gfxep CUDA backend — host side of the layout and data movement ops: checks and launches. */
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"
