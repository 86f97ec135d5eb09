/* gfxep CUDA backend — capture of a run's kernels into a CUDA graph, and its replay.
 *
 * Capture is thread-local (cudaStreamCaptureModeThreadLocal): another thread's unrelated CUDA calls
 * do not break it, while a forbidden call on this thread (an allocation, a synchronization) makes the
 * capture fail, which the executor notices and answers by running node by node. */
#include "backend/cuda/cuda_graph.h"

#include <stdlib.h>

#include "backend/cuda/cuda_fill.h"
#include "core/log.h"

static _Thread_local int capturing;

int cuda_thread_is_capturing(void) { return capturing; }

gfx_status cuda_capture_begin(gfx_dev* dev, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  if (!stream) return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: the legacy default stream cannot be captured");
  GFX_TRY(cuda_check(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal),
                     "cudaStreamBeginCapture on device %d", device));
  capturing = 1;
  return NULL;
}

/* What a captured graph holds, in ORT's log at INFO, once per capture (never per replay): a replay's
 * host cost (cudaGraphLaunch) depends on what the graph holds, more than on its size (on an H100 a
 * float16 UNet's 27 kernels and 7 memsets took 12.8 us, a style net's 114 kernels and 3 memsets 8.1;
 * architecture.md), so this says where a partition's enqueue time goes; logged after the memsets
 * became fill kernels. */
static void log_graph_contents(int device, cudaGraph_t g) {
  size_t n = 0;
  if (cudaGraphGetNodes(g, NULL, &n) != cudaSuccess) return;
  cudaGraphNode_t* nodes = n ? malloc(n * sizeof *nodes) : NULL;
  size_t kernels = 0, copies = 0, sets = 0, others = 0;
  if (nodes && cudaGraphGetNodes(g, nodes, &n) == cudaSuccess) {
    for (size_t i = 0; i < n; i++) {
      enum cudaGraphNodeType type;
      if (cudaGraphNodeGetType(nodes[i], &type) != cudaSuccess) continue;
      if (type == cudaGraphNodeTypeKernel) kernels++;
      else if (type == cudaGraphNodeTypeMemcpy) copies++;
      else if (type == cudaGraphNodeTypeMemset) sets++;
      else others++;
    }
  }
  free(nodes);
  (void)cudaGetLastError();
  gfx_log(GFX_LOG_INFO, "cuda backend: captured a graph on device %d: %zu nodes (%zu kernels, %zu copies, %zu memsets, "
          "%zu others)", device, n, kernels, copies, sets, others);
}

/* Whether memset nodes become kernel nodes (cuda_fill.h): by default, since each small memset node
 * (the libraries' calls leave them: a float16 UNet's graph held 7) added about 1.2 us to every
 * cudaGraphLaunch on an H100 while a fill kernel added next to nothing (gfxep-graph-launch-cost: 27
 * kernels and 7 memsets of 4 KiB 9.9 us, as fill kernels 1.4; the UNet's replayed Run 20.3 us p50
 * against 5.5, the same outputs); GFXEP_CUDA_GRAPH_FILL_KERNELS=0 keeps the memset nodes, to compare. */
static int fill_kernels_wanted(void) {
  const char* env = getenv("GFXEP_CUDA_GRAPH_FILL_KERNELS");
  return !(env && env[0] == '0');
}

/* Every memset node of g swapped for a kernel node with the same dependencies and dependents. */
static cudaError_t memsets_to_kernels(cudaGraph_t g) {
  size_t n = 0;
  cudaError_t e = cudaGraphGetNodes(g, NULL, &n);
  cudaGraphNode_t* nodes = e == cudaSuccess && n ? malloc(n * sizeof *nodes) : NULL;
  if (e == cudaSuccess && n && !nodes) return cudaErrorMemoryAllocation;
  if (e == cudaSuccess && n) e = cudaGraphGetNodes(g, nodes, &n);
  for (size_t i = 0; e == cudaSuccess && i < n; i++) {
    enum cudaGraphNodeType type;
    e = cudaGraphNodeGetType(nodes[i], &type);
    if (e != cudaSuccess || type != cudaGraphNodeTypeMemset) continue;
    struct cudaMemsetParams m;
    size_t n_deps = 0, n_next = 0;
    e = cudaGraphMemsetNodeGetParams(nodes[i], &m);
    if (e == cudaSuccess) e = cudaGraphNodeGetDependencies(nodes[i], NULL, NULL, &n_deps);
    if (e == cudaSuccess) e = cudaGraphNodeGetDependentNodes(nodes[i], NULL, NULL, &n_next);
    cudaGraphNode_t* around = e == cudaSuccess ? malloc((n_deps + n_next + 1) * sizeof *around) : NULL;
    if (e == cudaSuccess && !around) e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess && n_deps) e = cudaGraphNodeGetDependencies(nodes[i], around, NULL, &n_deps);
    if (e == cudaSuccess && n_next) e = cudaGraphNodeGetDependentNodes(nodes[i], around + n_deps, NULL, &n_next);
    cudaGraphNode_t fill = NULL;
    if (e == cudaSuccess) e = cuda_fill_add_node(g, around, n_deps, &m, &fill);
    for (size_t k = 0; e == cudaSuccess && k < n_next; k++) e = cudaGraphAddDependencies(g, &fill, &around[n_deps + k], NULL, 1);
    if (e == cudaSuccess) e = cudaGraphDestroyNode(nodes[i]);
    free(around);
  }
  free(nodes);
  return e;
}

gfx_status cuda_capture_end(gfx_dev* dev, void* stream, void** graph) {
  const int device = dev->index;
  capturing = 0;
  GFX_TRY(cuda_use_device(device));
  cudaGraph_t g = NULL;
  gfx_status s = cuda_check(cudaStreamEndCapture((cudaStream_t)stream, &g), "cudaStreamEndCapture on device %d", device);
  if (!s && graph && fill_kernels_wanted())
    s = cuda_check(memsets_to_kernels(g), "turning the captured graph's memsets into kernels on device %d", device);
  if (!s && graph) {
    log_graph_contents(device, g);
    cudaGraphExec_t exec = NULL;
    s = cuda_check(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate on device %d", device);
    if (!s) *graph = exec;
  }
  if (g) (void)cudaGraphDestroy(g); /* the executable graph is independent of it */
  return s;
}

gfx_status cuda_graph_launch(gfx_dev* dev, void* graph, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)stream), "cudaGraphLaunch on device %d",
                    device);
}

void cuda_graph_destroy(gfx_dev* dev, void* graph) {
  const int device = dev->index;
  if (!graph) return;
  gfx_status s = cuda_use_device(device);
  if (s) {
    gfx_status_free(s);
    return;
  }
  (void)cudaGraphExecDestroy((cudaGraphExec_t)graph);
}
