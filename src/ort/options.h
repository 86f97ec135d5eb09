/* gfxep — EP options: what a user may set, with "ep.gfxep.<key>" session config entries (which
 * SessionOptionsAppendExecutionProvider_V2's keys become). Unknown keys and bad values are errors
 * that name the key, so a typo never passes silently. */
#ifndef GFXEP_ORT_OPTIONS_H
#define GFXEP_ORT_OPTIONS_H

#include "ort/ort_common.h"

typedef struct gfx_ep_options {
  int caching_allocator; /* allocator = caching (default) | direct */
  int log_partition;     /* log_partition = 0 (default) | 1: log each node left to ORT, and why, as warnings */
  int graphs;            /* graphs (alias cuda_graph) = 1 (default) | 0 | ort (GFX_GRAPHS_*): how repeated
                          * runs replay as recorded partitions (CUDA graphs, Vulkan command buffers) */
  int precision;         /* precision = fp32 (default) | tf32 | fp16 | bf16 (GFX_PRECISION_*) */
  int layout;            /* layout = auto (default) | nchw | nhwc (GFX_LAYOUT_*): nhwc asks ONNX Runtime's layout
                          * transformer to hand 2-D Convs over channels-last (GetPreferredDataLayout), which
                          * the CUDA backend runs on cuDNN's NHWC kernels; ORT moves and cancels the
                          * transposes it inserts around them; auto: nhwc where the graph's Convs are
                          * worth it (ort/layout_choice.h), decided per graph in GetCapability */
  int fp16_guard;        /* fp16_guard = 1 (default) | 0: with precision=fp16, the range guard keeps values
                          * beyond float16's range in float32 and watches the outputs (exec/range_guard.h) */
  size_t device_memory_limit; /* device_memory_limit = bytes, decimal; 0 (default): none. Caps the device
                               * memory held by the session's allocator for ORT's tensors on the device
                               * (inputs copied in, outputs, values between partitions), cached blocks
                               * included; not gfxep's weights or partition workspaces. */
  char session_name[64]; /* session_name = text (default ""): the name frames carry in include/gfxep.h */
  int frame_timings;     /* frame_timings = 0 (default) | 1: per-frame GPU stamps (include/gfxep.h); off
                          * by default: they add 4-6 us of host time to a Run on the H200 (measured) */
  unsigned wait_timeout_ms; /* wait_timeout_ms = milliseconds, decimal (default 5000); 0: no watchdog. How
                             * long a wait on an imported semaphore may stay incomplete before it is
                             * reported: the waits before this session's Runs; waits no Run has
                             * claimed yet, by the newest session's */
} gfx_ep_options;

/* How float32 models are computed. fp32: float32 arithmetic (FMA, no TF32). tf32: convolutions and
 * matrix products may use TF32 tensor cores (10-bit mantissa products, float32 accumulation), as
 * PyTorch does by default for convolutions. fp16: each partition's float32 values are computed in
 * float16 (weights converted once at compile, float32 accumulation inside convolutions and matrix
 * products), with casts at the partition's float32 inputs and outputs; the range guard (fp16_guard)
 * keeps the nodes whose values reach float16's limit in float32. bf16: the same in bfloat16, which
 * has float32's range and an 8-bit mantissa. Models already in float16 are unaffected by all of them. */
/* Graph replay. OWN: each compiled partition captures and replays its own graph inside Compute, per
 * input-shape signature and set of addresses (gfx_model_use_graphs). ORT: ONNX Runtime's session-level
 * capture (OrtEp::IsGraphCaptureEnabled / ReplayGraph, graph_capture.c): the whole run is one graph
 * per "gpu_graph_id", replayed by ORT without calling Compute; needs a backend that can capture. */
enum { GFX_GRAPHS_OFF = 0, GFX_GRAPHS_OWN = 1, GFX_GRAPHS_ORT = 2 };

enum { GFX_LAYOUT_NCHW = 0, GFX_LAYOUT_NHWC = 1, GFX_LAYOUT_AUTO = 2 };

enum { GFX_PRECISION_FP32 = 0, GFX_PRECISION_TF32 = 1, GFX_PRECISION_FP16 = 2, GFX_PRECISION_BF16 = 3 };

#define GFXEP_OPTION_PREFIX "ep." GFXEP_EP_NAME "."

OrtStatus* gfx_ep_options_parse(const OrtSessionOptions* so, gfx_ep_options* out);

/* allocator.c: the allocator an EP with these options creates for `info` (caching per `allocator`;
 * device_memory_limit applies to DEFAULT device memory, not to HOST_ACCESSIBLE memory). */
struct gfx_device;
OrtStatus* gfx_allocator_create_for_ep(struct gfx_device* dev, const OrtMemoryInfo* info, const gfx_ep_options* o,
                                       OrtAllocator** out);

#endif
