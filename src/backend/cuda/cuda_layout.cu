// gfxep CUDA backend — kernels of the layout and data movement ops.
#include <cuda_runtime.h>
