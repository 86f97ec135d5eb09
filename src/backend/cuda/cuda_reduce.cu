// gfxep CUDA backend — kernels of the reduction, normalization and pooling ops.
#include <cuda_runtime.h>
