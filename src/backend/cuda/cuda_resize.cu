// gfxep CUDA backend — kernels of the resampling ops.
#include <cuda_runtime.h>
