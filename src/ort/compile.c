/* gfxep — Compile: copies each fused subgraph out of ORT into the IR and binds it to the EP's device;
 * Compute runs it on the stream ORT gives the kernel for this run.
 *
 * Nothing from the OrtGraph is kept: names, types, shapes, attributes and constant weights are
 * copied, so ORT may free the graph as soon as Compile returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/model.h"
#include "ir/fuse.h"
#include "ort/ep.h"
#include "ort/node_desc.h"
#include "ort/profiler.h"

typedef struct compute_info {
  OrtNodeComputeInfo base; /* first */
  gfx_ep* ep;
  gfx_model* model;
  char partition[24]; /* "partition 3": its name in profiles */
} compute_info;


static _Thread_local struct {
  const gfx_ep* ep;
  void* stream;
} last_run;

void* gfx_ep_last_stream(const gfx_ep* ep) { return last_run.ep == ep ? last_run.stream : NULL; }

/* A new run on this thread has not used any stream yet. Without this, a run whose nodes all stay on
 * ORT would see the stream of an earlier run, possibly of a session (and EP) that is gone and whose
 * address a new EP now has. */
void gfx_ep_forget_last_stream(const gfx_ep* ep) {
  last_run.ep = ep;
  last_run.stream = NULL;
}

/* Finds the IR value for an ORT value, adding it (and its constant data) on first sight. */
static gfx_status value_for(ir_graph* g, const OrtValueInfo* vi, int* index) {
  const char* name = NULL;
  GFX_TRY(gfx_from_ort(gfx_ort->GetValueInfoName(vi, &name)));
  int v = ir_graph_find_value(g, name);
  if (v >= 0) {
    *index = v;
    return NULL;
  }
  int dtype = 0;
  gfx_shape shape;
  GFX_TRY(gfx_value_info_type(vi, &dtype, &shape));
  GFX_TRY(ir_graph_add_value(g, name, dtype, &shape, &v));
  bool is_const = false;
  GFX_TRY(gfx_from_ort(gfx_ort->ValueInfo_IsConstantInitializer(vi, &is_const)));
  if (is_const) {
    const OrtValue* value = NULL;
    GFX_TRY(gfx_from_ort(gfx_ort->ValueInfo_GetInitializerValue(vi, &value)));
    if (!value) return gfx_error(GFX_ERR_INTERNAL, "constant '%s' has no value", name);
    const void* data = NULL;
    size_t bytes = 0;
    GFX_TRY(gfx_from_ort(gfx_ort->GetTensorData(value, &data)));
    GFX_TRY(gfx_from_ort(gfx_ort->GetTensorSizeInBytes(value, &bytes)));
    GFX_TRY(ir_graph_set_constant(g, v, data, bytes));
  }
  *index = v;
  return NULL;
}

static gfx_status import_node(ir_graph* g, const OrtNode* node) {
  gfx_node_reader reader;
  ir_node_desc desc;
  gfx_op op;
  ir_params params;
  GFX_TRY(gfx_node_describe(node, &reader, &desc));
  GFX_TRY(ir_op_parse(&desc, &op, &params));
  const OrtValueInfo* ins[IR_MAX_IO] = {0};
  const OrtValueInfo* outs[IR_MAX_IO] = {0};
  if (desc.n_inputs) GFX_TRY(gfx_from_ort(gfx_ort->Node_GetInputs(node, ins, (size_t)desc.n_inputs)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetOutputs(node, outs, (size_t)desc.n_outputs)));
  int in_idx[IR_MAX_IO], out_idx[IR_MAX_IO];
  for (int i = 0; i < desc.n_inputs; i++) {
    in_idx[i] = -1;
    if (ins[i]) GFX_TRY(value_for(g, ins[i], &in_idx[i]));
  }
  for (int i = 0; i < desc.n_outputs; i++) GFX_TRY(value_for(g, outs[i], &out_idx[i]));
  return ir_graph_add_node(g, op, desc.name, in_idx, desc.n_inputs, out_idx, desc.n_outputs, &params);
}

static gfx_status import_graph(const OrtGraph* graph, const OrtNode* fused, ir_graph** out) {
  ir_graph* g = ir_graph_new();
  if (!g) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "graph");
  gfx_status s = NULL;
  size_t n_in = 0, n_out = 0, n_nodes = 0;
  const OrtValueInfo** ins = NULL;
  const OrtValueInfo** outs = NULL;
  const OrtNode** nodes = NULL;
  if ((s = gfx_from_ort(gfx_ort->Node_GetNumInputs(fused, &n_in)))) goto fail;
  if ((s = gfx_from_ort(gfx_ort->Node_GetNumOutputs(fused, &n_out)))) goto fail;
  if ((s = gfx_from_ort(gfx_ort->Graph_GetNumNodes(graph, &n_nodes)))) goto fail;
  ins = calloc(n_in + 1, sizeof *ins);
  outs = calloc(n_out + 1, sizeof *outs);
  nodes = calloc(n_nodes + 1, sizeof *nodes);
  if (!ins || !outs || !nodes) {
    s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "graph import");
    goto fail;
  }
  if (n_in && (s = gfx_from_ort(gfx_ort->Node_GetInputs(fused, ins, n_in)))) goto fail;
  if (n_out && (s = gfx_from_ort(gfx_ort->Node_GetOutputs(fused, outs, n_out)))) goto fail;
  if (n_nodes && (s = gfx_from_ort(gfx_ort->Graph_GetNodes(graph, nodes, n_nodes)))) goto fail;
  /* the compiled node receives its inputs in the fused node's order */
  for (size_t i = 0; i < n_in; i++) {
    int v;
    if (!ins[i]) {
      s = gfx_error(GFX_ERR_INTERNAL, "fused node input %zu is absent", i);
      goto fail;
    }
    if ((s = value_for(g, ins[i], &v)) || (s = ir_graph_add_input(g, v))) goto fail;
  }
  for (size_t i = 0; i < n_nodes; i++)
    if ((s = import_node(g, nodes[i]))) goto fail;
  for (size_t i = 0; i < n_out; i++) {
    const char* name = NULL;
    if ((s = gfx_from_ort(gfx_ort->GetValueInfoName(outs[i], &name)))) goto fail;
    int v = ir_graph_find_value(g, name);
    if (v < 0) {
      s = gfx_error(GFX_ERR_INTERNAL, "fused node output '%s' is produced by no node of the subgraph", name);
      goto fail;
    }
    if ((s = ir_graph_add_output(g, v))) goto fail;
  }
  free(ins);
  free(outs);
  free(nodes);
  *out = g;
  return NULL;
fail:
  free(ins);
  free(outs);
  free(nodes);
  ir_graph_free(g);
  return s;
}

/* ---- OrtNodeComputeInfo ---- */

static OrtStatus* ORT_API_CALL create_state(OrtNodeComputeInfo* this_ptr, OrtNodeComputeContext* ctx, void** state) {
  (void)ctx;
  *state = this_ptr; /* the model is thread-safe and per-run state lives in its workspace pool */
  return NULL;
}

static void ORT_API_CALL release_state(OrtNodeComputeInfo* this_ptr, void* state) {
  (void)this_ptr, (void)state;
}

static gfx_status output_for(void* user, int index, const gfx_shape* shape, void** data) {
  OrtKernelContext* ctx = user;
  OrtValue* value = NULL;
  GFX_TRY(gfx_from_ort(gfx_ort->KernelContext_GetOutput(ctx, (size_t)index, shape->dims, (size_t)shape->rank, &value)));
  GFX_TRY(gfx_from_ort(gfx_ort->GetTensorMutableData(value, data)));
  /* ORT (1.29, 1.30) answers an allocator's NULL with a tensor that has no memory, not with an error:
   * refuse it here, before any backend writes through it (a CUDA kernel would fault the context) */
  size_t bytes = 0;
  GFX_TRY(gfx_from_ort(gfx_ort->GetTensorSizeInBytes(value, &bytes)));
  if (!*data && bytes)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY,
                     "output %d (%zu bytes) got no device memory: the device is out of memory or the session's "
                     "device_memory_limit was reached (gfxep's allocator logged which)",
                     index, bytes);
  return NULL;
}

/* A Compute while a profiler is active: node by node with device timers, recorded for the profile. */
static gfx_status run_profiled(compute_info* ci, gfx_profiler* p, uint64_t correlation, void* stream,
                               const gfx_tensor* in, OrtKernelContext* ctx) {
  const ir_graph* g = gfx_model_graph(ci->model);
  gfx_node_trace* trace = calloc((size_t)g->n_nodes + 1, sizeof *trace);
  if (!trace) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "profiling trace");
  uint64_t t0 = gfx_profiler_now_ns();
  gfx_status s = gfx_model_run_traced(ci->model, stream, in, output_for, ctx, trace);
  if (!s) gfx_profiler_record(p, t0, ci->partition, correlation, g, trace);
  free(trace);
  return s;
}

static OrtStatus* ORT_API_CALL compute(OrtNodeComputeInfo* this_ptr, void* state, OrtKernelContext* ctx) {
  (void)state;
  compute_info* ci = (compute_info*)(void*)this_ptr;
  const ir_graph* g = gfx_model_graph(ci->model);
  size_t n_in = 0;
  ORT_TRY(gfx_ort->KernelContext_GetInputCount(ctx, &n_in));
  if ((int)n_in != g->n_inputs)
    return gfx_ort_error(ORT_FAIL, "gfxep: compiled node got %zu inputs, expected %d", n_in, g->n_inputs);
  gfx_tensor inputs[64];
  gfx_tensor* in = n_in <= 64 ? inputs : malloc(sizeof(gfx_tensor) * n_in);
  if (!in) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory");
  OrtStatus* s = NULL;
  for (size_t i = 0; i < n_in && !s; i++) {
    const OrtValue* v = NULL;
    ONNXTensorElementDataType et;
    const int64_t* dims = NULL;
    size_t rank = 0;
    const void* data = NULL;
    if ((s = gfx_ort->KernelContext_GetInput(ctx, i, &v))) break;
    if ((s = gfx_ort->GetTensorElementTypeAndShapeDataReference(v, &et, &dims, &rank))) break;
    if (rank > GFX_MAX_RANK) {
      s = gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: input '%s' has rank %zu; at most %d is handled",
                        g->values[g->inputs[i]].name, rank, GFX_MAX_RANK);
      break;
    }
    /* ORT must hand a compiled node its inputs in this device's memory; anything else would be
     * read as a device pointer */
    bool host = false;
    if (gfx_factory_device_for_memory(ci->ep->factory, gfx_ep_api->Value_GetMemoryDevice(v), &host) !=
            ci->ep->device || host) {
      const OrtMemoryInfo* mi = NULL;
      const char* where = "unknown";
      OrtStatus* q = gfx_ort->GetTensorMemoryInfo(v, &mi);
      if (!q && mi) q = gfx_ort->MemoryInfoGetName(mi, &where);
      if (q) gfx_ort->ReleaseStatus(q);
      s = gfx_ort_error(ORT_EP_FAIL, "gfxep: input '%s' arrived in '%s' memory, not in the device memory of %s device %d",
                        g->values[g->inputs[i]].name, where, ci->ep->device->backend->name, ci->ep->device->ordinal);
      break;
    }
    if ((s = gfx_ort->GetTensorData(v, &data))) break;
    in[i].data = (void*)data;
    in[i].dtype = (int)et;
    in[i].shape.rank = (int)rank;
    if (rank) memcpy(in[i].shape.dims, dims, rank * sizeof *dims);
  }
  void* stream = NULL;
  if (!s) s = gfx_ort->KernelContext_GetGPUComputeStream(ctx, &stream);
  if (!s) {
    last_run.ep = ci->ep;
    last_run.stream = stream;
    uint64_t correlation = 0;
    gfx_profiler* p = gfx_profiler_for_compute(ci->ep, &correlation);
    s = gfx_to_ort(p ? run_profiled(ci, p, correlation, stream, in, ctx)
                     : gfx_model_run(ci->model, stream, in, output_for, ctx));
  }
  if (in != inputs) free(in);
  return s;
}

OrtStatus* ORT_API_CALL gfx_ep_compile(OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes,
                                       size_t count, OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes) {
  (void)ep_context_nodes; /* gfxep writes no EPContext nodes */
  gfx_ep* ep = (gfx_ep*)(void*)this_ptr;
  for (size_t i = 0; i < count; i++) infos[i] = NULL;
  for (size_t i = 0; i < count; i++) {
    ir_graph* g = NULL;
    gfx_status s = import_graph(graphs[i], fused_nodes[i], &g);
    if (!s && (s = ir_fuse(g))) ir_graph_free(g);
    compute_info* ci = NULL;
    if (!s) {
      ci = calloc(1, sizeof *ci);
      if (!ci) {
        ir_graph_free(g);
        s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "compute info");
      }
    }
    if (!s) {
      int nodes = g->n_nodes;
      s = gfx_model_create(ep->device->backend, ep->device->ordinal, g, &ci->model);
      if (!s) gfx_model_use_graphs(ci->model, ep->options.graphs);
      if (!s)
        gfx_ort_log(ep->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: compiled partition %zu: %d nodes on %s device %d", i,
                    nodes, ep->device->backend->name, ep->device->ordinal);
    }
    if (s) {
      free(ci);
      gfx_ep_release_compute_infos(this_ptr, infos, i);
      for (size_t k = 0; k < count; k++) infos[k] = NULL;
      return gfx_to_ort(gfx_status_wrap(s, "gfxep: compiling partition %zu", i));
    }
    ci->ep = ep;
    snprintf(ci->partition, sizeof ci->partition, "partition %d", ep->n_partitions++);
    ci->base.ort_version_supported = ORT_API_VERSION;
    ci->base.CreateState = create_state;
    ci->base.Compute = compute;
    ci->base.ReleaseState = release_state;
    infos[i] = &ci->base;
  }
  return NULL;
}

void ORT_API_CALL gfx_ep_release_compute_infos(OrtEp* this_ptr, OrtNodeComputeInfo** infos, size_t count) {
  (void)this_ptr;
  for (size_t i = 0; i < count; i++) {
    compute_info* ci = (compute_info*)(void*)infos[i];
    if (!ci) continue;
    gfx_model_free(ci->model);
    free(ci);
  }
}
