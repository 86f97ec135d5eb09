/* gfxep — what the files of the CUDA backend share with each other, and nothing else.
 *
 * This header may include CUDA headers: it is private to src/backend/cuda/, whose only export is
 * gfxep_cuda_backend (see gfxep_cuda.lds).
 */
#ifndef GFXEP_BACKEND_CUDA_INTERNAL_H
#define GFXEP_BACKEND_CUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "backend/backend.h"

#define GFX_CUDA_PRINTF(fmt_index, first_arg) GFX_PRINTF(fmt_index, first_arg)

/* Ordinals at or above this are rejected; per-device tables (library handles) are this long. */
#define CUDA_MAX_DEVICES 64

/* What mem_alloc guarantees: cudaMalloc returns at least 256-byte aligned memory. */
#define CUDA_ALLOC_ALIGNMENT 256

/* ---- errors (cuda_errors.c) ---- */

/* NULL when err is cudaSuccess; otherwise an error status "<what>: <cuda message> (<cuda name>)",
 * where <what> is the printf-style context. Allocation failures get GFX_ERR_OUT_OF_MEMORY, the
 * sticky errors that leave the context unusable (a fault in a kernel) GFX_ERR_DEVICE_LOST, every
 * other failure GFX_ERR_DEVICE. Also clears the runtime's (non-sticky) last error, so that a later
 * cudaGetLastError after a kernel launch reports that launch and not this old failure. */
gfx_status cuda_check(cudaError_t err, const char* what_fmt, ...) GFX_CUDA_PRINTF(2, 3);

/* The same for cuBLAS(Lt) and cuDNN statuses. */
gfx_status cuda_blas_check(cublasStatus_t status, const char* what_fmt, ...) GFX_CUDA_PRINTF(2, 3);
gfx_status cuda_dnn_check(cudnnStatus_t status, const char* what_fmt, ...) GFX_CUDA_PRINTF(2, 3);

/* ---- devices (cuda_device.c) ---- */

/* Number of CUDA devices, 0 (quietly) when there is no driver or no GPU. Queried once. */
int cuda_device_count(void);
gfx_status cuda_device_info(gfx_dev* dev, gfx_device_info* out);
gfx_status cuda_device_get(int index, gfx_dev** out);
const gfx_backend* cuda_backend_table(void);

/* Checks the ordinal and makes it the calling thread's current device. Every entry point that
 * touches a device calls this first. */
gfx_status cuda_use_device(int device);

/* After cudaDeviceReset: the context's library handles and loaded kernels are gone, and this thread
 * must make the device current again (cuda_device.c, cuda_handles.c). */
void cuda_forget_context(int device);

/* ---- CUDA-in-Graphics (cuda_cig.c) ---- */
/* The device's CIG context (a CUcontext), NULL when it has none; making it the thread's current one. */
void* cuda_cig_context(int device);
gfx_status cuda_cig_make_current(int device);
void cuda_forget_handles(int device);

/* ---- frame stamps (cuda_stamps.c) ---- */
gfx_status cuda_stamps_create(gfx_dev* dev, int count, void** out);
void cuda_stamps_destroy(gfx_dev* dev, void* stamps);
gfx_status cuda_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream);
gfx_status cuda_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns);
gfx_status cuda_replay_stamps_create(gfx_dev* dev, int capacity, void** out);
void cuda_replay_stamps_destroy(gfx_dev* dev, void* ring);
gfx_status cuda_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream);
gfx_status cuda_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns);

/* ---- faults (cuda_faults.c) ---- */
gfx_status cuda_inject_device_loss(gfx_dev* dev, void* stream);
gfx_status cuda_device_recover(gfx_dev* dev);

/* ---- graph capture (cuda_graph.c) ---- */
/* Whether the calling thread is between cuda_capture_begin and cuda_capture_end. Library handles
 * must not be created then: their first allocations would belong to the captured graph. */
int cuda_thread_is_capturing(void);

/* ---- library handles (cuda_handles.c) ---- */

/* The device's cuBLASLt handle, created on first use and kept for the life of the process.
 * cuBLASLt handles are thread-safe, so one per device is shared by every caller. */
gfx_status cuda_blaslt_handle(int device, cublasLtHandle_t* handle);

/* A cuDNN handle for the calling thread's exclusive use until it is given back. cuDNN handles carry
 * a stream and must not be used by two threads at once, so they are pooled per device. */
gfx_status cuda_dnn_acquire(int device, cudnnHandle_t* handle);
void cuda_dnn_release(int device, cudnnHandle_t handle);

/* ---- per-node state ---- */

/* node_release gets only the state pointer, so every state starts with its own release function. */
typedef struct cuda_node_state {
  void (*release)(struct cuda_node_state* self);
} cuda_node_state;

/* ---- kernels (cuda_kernels.c dispatches to these) ---- */

gfx_status cuda_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes);
void cuda_node_release(gfx_dev* dev, void* state);
gfx_status cuda_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         void* state);

/* The node's name for messages ("" when it has none). */
const char* cuda_node_name(const ir_node* node);

/* NULL when a channels-last Conv of an NCHW input (params.conv.nchw_input) can run on device: only
 * the few-channel kernel takes one (cuda_conv_narrow.h). */
gfx_status cuda_conv_supports_nchw_input(int device, const gfx_node_query* q);

/* NULL when a Conv whose W is stored channels-last (params.conv.weights_channels_last) runs on device:
 * a channels-last 2-D Conv that cuDNN (or the 1x1 product) takes, not the few-channel kernel, which
 * reads W as ONNX gives it. */
gfx_status cuda_conv_supports_weights_channels_last(int device, const gfx_node_query* q);

/* A Conv node that is a convolution chain (params.conv.chain): NULL where the chain kernel runs it on
 * device and pays (cuda_conv_chain_ops.c); cuda_prepare_conv and cuda_run_conv hand such nodes to the
 * two functions after it. */
gfx_status cuda_conv_chain_supports(int device, const gfx_node_query* q);
gfx_status cuda_prepare_conv_chain(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                   cuda_node_state** state, size_t* scratch_bytes);
gfx_status cuda_run_conv_chain(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                               cuda_node_state* state);

/* Each kernel family of ir/ops.def provides cuda_prepare_<kernel> (per-signature state and scratch,
 * may leave *state NULL) and cuda_run_<kernel>; cuda_kernels.c declares and dispatches them. */

/* ---- small helpers ---- */

/* cuBLASLt's compute type for a node: float32 accumulation; float32 data with TF32 tensor-core
 * products only when the node allows it (precision=tf32). */
static inline cublasComputeType_t cuda_blas_compute_type(const ir_node* node, int dtype) {
  return (node->math_mode == IR_MATH_REDUCED_F32) && (dtype == GFX_DTYPE_F32 || dtype == 0) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* The largest power of two (capped at CUDA_ALLOC_ALIGNMENT) that divides value. */
static inline size_t cuda_alignment_of(uintptr_t value) {
  size_t align = 1;
  while (align < CUDA_ALLOC_ALIGNMENT && (value & align) == 0) align <<= 1;
  return align;
}

static inline size_t cuda_round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

#endif
