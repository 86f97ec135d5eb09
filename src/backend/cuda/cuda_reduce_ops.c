/* gfxep CUDA backend — host side of the reduction, normalization and pooling ops: checks and launches. */
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"
