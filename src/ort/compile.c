/* gfxep — Compile: copies each fused subgraph out of ORT into the IR and binds it to the EP's device;
 * Compute runs it on the stream ORT gives the kernel for this run.
 *
 * Nothing from the OrtGraph is kept: names, types, shapes, attributes and constant weights are
 * copied, so ORT may free the graph as soon as Compile returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/model.h"
#include "exec/range_guard.h"
#include "core/half.h"
#include "ir/fuse.h"
#include "ort/ep.h"
#include "ort/node_desc.h"
#include "ort/frame_timing.h"
#include "ort/profiler.h"

typedef struct compute_info {
  OrtNodeComputeInfo base; /* first */
  gfx_ep* ep;
  gfx_model* model;        /* the partition's model, or NULL when a range guard picks it per Run */
  gfx_range_guard* guard;  /* precision=fp16 with its range guard (exec/range_guard.h) */
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

/* ---- import, optionally lowering float32 to float16 or bfloat16 (precision=fp16, bf16) ---- */

typedef struct importer {
  ir_graph* g;
  int lower_to; /* float32 values become this type inside the partition; 0: they stay float32 */
  gfx_dev* dev; /* a lowered node must also be one the device runs in the lowered type */
} importer;

/* The name a lowered partition input or output keeps for its float32 side; the float16 value inside
 * the partition has the ORT name, so nodes find it. */
#define F32_SIDE ":float32"

/* Inputs that stay float32 whatever the data's type: the ONNX schemas type them on their own (Resize's
 * roi and scales, Upsample's scales); everything else of type float32 shares the data's type. */
static int keeps_float32(const char* op_type, int input) {
  if (strcmp(op_type, "Resize") == 0) return input == 1 || input == 2;
  if (strcmp(op_type, "Upsample") == 0) return input == 1;
  if (strcmp(op_type, "GridSample") == 0) return input == 1; /* sampling locations need float32's precision */
  if (strcmp(op_type, "NonMaxSuppression") == 0) return input >= 3; /* the thresholds, read at parse time */
  return 0;
}

/* float32 bytes to float16 or bfloat16 bytes (dtype), in a new buffer the caller frees. */
static gfx_status to_half(const void* data, size_t bytes, int dtype, void** out, size_t* out_bytes) {
  size_t n = bytes / 4;
  uint16_t* h = malloc(n * 2 + 1);
  if (!h) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "converting %zu bytes of weights to %s", bytes, gfx_dtype_name(dtype));
  for (size_t i = 0; i < n; i++) {
    float f;
    memcpy(&f, (const char*)data + 4 * i, 4);
    h[i] = dtype == GFX_DTYPE_BF16 ? gfx_float_to_bf16(f) : gfx_float_to_half(f);
  }
  *out = h;
  *out_bytes = n * 2;
  return NULL;
}

/* Finds the IR value for an ORT value, adding it (and its constant data) on first sight. Lowering
 * makes a float32 value float16 unless `keep` (an input that stays float32). */
static gfx_status value_for(importer* im, const OrtValueInfo* vi, int keep, int* index) {
  ir_graph* g = im->g;
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
  const int lower = im->lower_to && dtype == GFX_DTYPE_F32 && !keep;
  GFX_TRY(ir_graph_add_value(g, name, lower ? im->lower_to : dtype, &shape, &v));
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
    if (lower) {
      void* half = NULL;
      size_t half_bytes = 0;
      GFX_TRY(to_half(data, bytes, im->lower_to, &half, &half_bytes));
      gfx_status s = ir_graph_set_constant(g, v, half, half_bytes);
      free(half);
      GFX_TRY(s);
    } else {
      GFX_TRY(ir_graph_set_constant(g, v, data, bytes));
    }
  }
  *index = v;
  return NULL;
}

/* The node's description as the lowered partition sees it: float32 inputs (constants converted into
 * `owned`, which the caller frees) and outputs become float16, so that parse computes the node's
 * parameters (a Pad value, say) for the type it will really run in. */
static gfx_status lower_desc(ir_node_desc* d, int lower_to, void** owned) {
  for (int i = 0; i < d->n_inputs; i++) {
    if (d->input_dtypes[i] != GFX_DTYPE_F32 || keeps_float32(d->op_type, i)) continue;
    d->input_dtypes[i] = lower_to;
    if (d->input_const_data[i]) {
      size_t bytes = 0;
      GFX_TRY(to_half(d->input_const_data[i], d->input_const_bytes[i], lower_to, &owned[i], &bytes));
      d->input_const_data[i] = owned[i];
      d->input_const_bytes[i] = bytes;
    }
  }
  for (int o = 0; o < d->n_outputs; o++)
    if (d->output_dtypes[o] == GFX_DTYPE_F32) d->output_dtypes[o] = lower_to;
  d->lowered_to = lower_to;
  /* QuantizeLinear and DequantizeLinear take float16/bfloat16 scales from opset 19 on; what opset 19
   * added besides (float8 types, saturate) does not apply to the int8/uint8 nodes of older opsets,
   * whose scales ONNX Runtime has validated already: lowered, they parse as opset 19 */
  if ((!strcmp(d->op_type, "QuantizeLinear") || !strcmp(d->op_type, "DequantizeLinear")) && d->since_version < 19)
    d->since_version = 19;
  return NULL;
}

/* A Concat of more inputs than an IR node has (SSDlite concatenates its 90 per-class results), as a
 * tree of Concats of at most IR_MAX_IO inputs along the same axis: the pieces' results are values
 * named after the node, of the output's type and rank, their sizes along the axis inferred per Run. */
static gfx_status import_wide_concat(importer* im, const OrtNode* node, size_t n) {
  const OrtValueInfo** ins = calloc(n, sizeof *ins);
  int* cur = calloc(n, sizeof *cur);
  gfx_status s = ins && cur ? NULL : gfx_error(GFX_ERR_OUT_OF_MEMORY, "a Concat of %zu inputs", n);
  const OrtValueInfo* out_vi = NULL;
  gfx_node_reader reader;
  ir_node_desc desc;
  gfx_op op;
  ir_params params;
  void* owned[IR_MAX_IO] = {0};
  /* the parameters of one piece (axis, element type) serve every Concat of the tree */
  if (!s) s = gfx_node_describe_inputs(node, 0, IR_MAX_IO, &reader, &desc);
  if (!s && im->lower_to) s = lower_desc(&desc, im->lower_to, owned);
  if (!s) s = ir_op_parse(&desc, &op, &params);
  for (int i = 0; i < IR_MAX_IO; i++) free(owned[i]);
  if (!s) s = gfx_from_ort(gfx_ort->Node_GetInputs(node, ins, n));
  if (!s) s = gfx_from_ort(gfx_ort->Node_GetOutputs(node, &out_vi, 1));
  for (size_t i = 0; i < n && !s; i++) {
    if (!ins[i]) s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "Concat '%s': input %zu is absent", desc.name, i);
    else s = value_for(im, ins[i], 0, &cur[i]);
  }
  int out = -1;
  if (!s) s = value_for(im, out_vi, 0, &out);
  size_t n_cur = n;
  for (int level = 0; !s && n_cur > IR_MAX_IO; level++) {
    size_t n_next = 0;
    for (size_t first = 0; first < n_cur && !s; first += IR_MAX_IO, n_next++) {
      const size_t k = n_cur - first < IR_MAX_IO ? n_cur - first : IR_MAX_IO;
      const gfx_shape* rank_of = &im->g->values[out].shape;
      gfx_shape shape = {.rank = rank_of->rank};
      for (int d = 0; d < shape.rank; d++) shape.dims[d] = GFX_DIM_UNKNOWN;
      char name[512];
      snprintf(name, sizeof name, "%s:gfxep.concat%d.%zu", desc.name, level, n_next);
      int piece = -1;
      s = ir_graph_add_value(im->g, name, im->g->values[out].dtype, &shape, &piece);
      if (!s) s = ir_graph_add_node(im->g, GFX_OP_CONCAT, name, &cur[first], (int)k, &piece, 1, &params);
      cur[n_next] = piece;
    }
    n_cur = n_next;
  }
  if (!s) s = ir_graph_add_node(im->g, GFX_OP_CONCAT, desc.name, cur, (int)n_cur, &out, 1, &params);
  free(ins);
  free(cur);
  return s;
}

static gfx_status import_node(importer* im, const OrtNode* node) {
  size_t n_wide = 0;
  if (gfx_is_wide_concat(node, &n_wide)) return import_wide_concat(im, node, n_wide);
  gfx_node_reader reader;
  ir_node_desc desc;
  gfx_op op;
  ir_params params;
  GFX_TRY(gfx_node_describe(node, &reader, &desc));
  void* owned[IR_MAX_IO] = {0};
  gfx_status s = im->lower_to ? lower_desc(&desc, im->lower_to, owned) : NULL;
  if (!s) s = ir_op_parse(&desc, &op, &params);
  if (!s && im->lower_to) {
    gfx_node_query q = {.op = op, .params = &params, .desc = &desc};
    s = gfx_backend_supports_node(im->dev, &q);
  }
  for (int i = 0; i < IR_MAX_IO; i++) free(owned[i]);
  GFX_TRY(s);
  const OrtValueInfo* ins[IR_MAX_IO] = {0};
  const OrtValueInfo* outs[IR_MAX_IO] = {0};
  /* ORT wants room for every input the node has, absent trailing ones included (desc counts only up
   * to the last present one); describe already refused nodes with more than IR_MAX_IO */
  size_t n_all = 0;
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetNumInputs(node, &n_all)));
  if (n_all > IR_MAX_IO) return gfx_error(GFX_ERR_INTERNAL, "node '%s' has %zu inputs", desc.name, n_all);
  if (n_all) GFX_TRY(gfx_from_ort(gfx_ort->Node_GetInputs(node, ins, n_all)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetOutputs(node, outs, (size_t)desc.n_outputs)));
  int in_idx[IR_MAX_IO], out_idx[IR_MAX_IO];
  for (int i = 0; i < desc.n_inputs; i++) {
    in_idx[i] = -1;
    if (ins[i]) GFX_TRY(value_for(im, ins[i], keeps_float32(desc.op_type, i), &in_idx[i]));
  }
  for (int i = 0; i < desc.n_outputs; i++) GFX_TRY(value_for(im, outs[i], 0, &out_idx[i]));
  return ir_graph_add_node(im->g, op, desc.name, in_idx, desc.n_inputs, out_idx, desc.n_outputs, &params);
}

/* A Cast node from value `from` to value `to` (their element types say which way). */
static gfx_status add_cast(ir_graph* g, int from, int to) {
  ir_params none;
  memset(&none, 0, sizeof none);
  char name[160];
  snprintf(name, sizeof name, "precision cast of '%s'", g->values[from].name);
  return ir_graph_add_node(g, GFX_OP_CAST, name, &from, 1, &to, 1, &none);
}

/* A lowered partition's float32 input: the graph input keeps float32 under another name, and a Cast
 * writes the lowered value the nodes read under the ORT name. */
static gfx_status lowered_input(importer* im, const OrtValueInfo* vi, int* graph_input) {
  const char* name = NULL;
  int dtype = 0;
  gfx_shape shape;
  GFX_TRY(gfx_from_ort(gfx_ort->GetValueInfoName(vi, &name)));
  GFX_TRY(gfx_value_info_type(vi, &dtype, &shape));
  char side[512];
  snprintf(side, sizeof side, "%s" F32_SIDE, name);
  int f32 = -1, f16 = -1;
  GFX_TRY(ir_graph_add_value(im->g, side, GFX_DTYPE_F32, &shape, &f32));
  GFX_TRY(ir_graph_add_value(im->g, name, im->lower_to, &shape, &f16));
  GFX_TRY(add_cast(im->g, f32, f16));
  *graph_input = f32;
  return NULL;
}

/* A lowered partition's float32 output: a Cast from the float16 value the nodes wrote. */
static gfx_status lowered_output(importer* im, int f16, int* graph_output) {
  ir_graph* g = im->g;
  char side[512];
  snprintf(side, sizeof side, "%s" F32_SIDE, g->values[f16].name);
  gfx_shape shape = g->values[f16].shape;
  int f32 = -1;
  GFX_TRY(ir_graph_add_value(g, side, GFX_DTYPE_F32, &shape, &f32));
  GFX_TRY(add_cast(g, f16, f32));
  *graph_output = f32;
  return NULL;
}

/* Imports the fused node's subgraph; lower_to (0, GFX_DTYPE_F16 or GFX_DTYPE_BF16) lowers its float32
 * values. *first_node is the index of the subgraph's first node (after a lowered graph's input casts). */
static gfx_status import_graph(gfx_dev* dev, const OrtGraph* graph, const OrtNode* fused, int lower_to,
                               ir_graph** out, int* first_node) {
  ir_graph* g = ir_graph_new();
  if (!g) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "graph");
  importer im = {.g = g, .lower_to = lower_to, .dev = dev};
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
    int v, dtype = 0;
    gfx_shape shape;
    if (!ins[i]) {
      s = gfx_error(GFX_ERR_INTERNAL, "fused node input %zu is absent", i);
      goto fail;
    }
    if ((s = gfx_value_info_type(ins[i], &dtype, &shape))) goto fail;
    if (lower_to && dtype == GFX_DTYPE_F32)
      s = lowered_input(&im, ins[i], &v);
    else
      s = value_for(&im, ins[i], 0, &v);
    if (s || (s = ir_graph_add_input(g, v))) goto fail;
  }
  if (first_node) *first_node = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++)
    if ((s = import_node(&im, nodes[i]))) goto fail;
  for (size_t i = 0; i < n_out; i++) {
    const char* name = NULL;
    int dtype = 0;
    gfx_shape shape;
    if ((s = gfx_from_ort(gfx_ort->GetValueInfoName(outs[i], &name)))) goto fail;
    int v = ir_graph_find_value(g, name);
    if (v < 0) {
      s = gfx_error(GFX_ERR_INTERNAL, "fused node output '%s' is produced by no node of the subgraph", name);
      goto fail;
    }
    if ((s = gfx_value_info_type(outs[i], &dtype, &shape))) goto fail;
    if (lower_to && dtype == GFX_DTYPE_F32 && (s = lowered_output(&im, v, &v))) goto fail;
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

/* Imports a partition; with precision=fp16 or bf16 its float32 values become float16 or bfloat16
 * (*lowered, with *first_lowered its first node after the input casts). A partition whose nodes
 * cannot all run lowered (an op without the type, an attribute that only fits float32, a device
 * without the kernel) stays float32, and the log says why: never a partition half lowered by
 * accident. With float16's range guard on, *full is the float32 import beside the lowered one (the
 * guard runs both, see exec/range_guard.h); otherwise exactly one of them is set. */
static gfx_status import_partition(const gfx_ep* ep, const OrtGraph* graph, const OrtNode* fused, size_t index,
                                   ir_graph** full, ir_graph** lowered, int* first_lowered) {
  *full = *lowered = NULL;
  const int p = ep->options.precision;
  const int lower_to = p == GFX_PRECISION_FP16 ? GFX_DTYPE_F16 : p == GFX_PRECISION_BF16 ? GFX_DTYPE_BF16 : 0;
  gfx_dev* dev = ep->device->dev;
  if (lower_to) {
    gfx_status s = import_graph(dev, graph, fused, lower_to, lowered, first_lowered);
    if (!s) {
      const int guarded = lower_to == GFX_DTYPE_F16 && ep->options.fp16_guard && ep->options.graphs != GFX_GRAPHS_ORT;
      gfx_ort_log(ep->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: partition %zu: float32 computed in %s%s", index,
                  gfx_dtype_name(lower_to), guarded ? " where its range allows (fp16_guard)" : "");
      if (!guarded) return NULL;
      s = import_graph(dev, graph, fused, 0, full, NULL);
      if (s) {
        ir_graph_free(*lowered);
        *lowered = NULL;
      }
      return s;
    }
    gfx_ort_log(ep->logger, ORT_LOGGING_LEVEL_WARNING, "gfxep: partition %zu stays in float32 (precision=%s does not "
                "apply): %s", index, lower_to == GFX_DTYPE_F16 ? "fp16" : "bf16", gfx_status_message(s));
    gfx_status_free(s);
  }
  return import_graph(dev, graph, fused, 0, full, NULL);
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

/* Where a Run's outputs go: ORT's outputs, and past them the range guard's probes. */
typedef struct run_outputs {
  OrtKernelContext* ctx;
  gfx_range_guard* guard; /* NULL without one */
  int first_probe;
} run_outputs;

static gfx_status output_for(void* user, int index, const gfx_shape* shape, void** data) {
  const run_outputs* ro = user;
  if (ro->guard && index >= ro->first_probe) return gfx_range_guard_probe(ro->guard, index, data);
  OrtKernelContext* ctx = ro->ctx;
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
static gfx_status run_profiled(compute_info* ci, gfx_model* model, gfx_profiler* p, uint64_t correlation,
                               void* stream, const gfx_tensor* in, run_outputs* ro) {
  const ir_graph* g = gfx_model_graph(model);
  gfx_node_trace* trace = calloc((size_t)g->n_nodes + 1, sizeof *trace);
  if (!trace) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "profiling trace");
  uint64_t t0 = gfx_profiler_now_ns();
  gfx_status s = gfx_model_run_traced(model, stream, in, output_for, ro, trace);
  if (!s) gfx_profiler_record(p, t0, ci->partition, correlation, g, trace);
  free(trace);
  return s;
}

static OrtStatus* ORT_API_CALL compute(OrtNodeComputeInfo* this_ptr, void* state, OrtKernelContext* ctx) {
  (void)state;
  compute_info* ci = (compute_info*)(void*)this_ptr;
  gfx_model* model = ci->guard ? gfx_range_guard_begin(ci->guard) : ci->model;
  run_outputs ro = {.ctx = ctx, .guard = ci->guard,
                    .first_probe = ci->guard ? gfx_range_guard_first_probe(ci->guard, model) : 0};
  const ir_graph* g = gfx_model_graph(model);
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
    if (gfx_device_for_memory(ci->ep->devices, gfx_ep_api->Value_GetMemoryDevice(v), &host) !=
            ci->ep->device || host) {
      const OrtMemoryInfo* mi = NULL;
      const char* where = "unknown";
      OrtStatus* q = gfx_ort->GetTensorMemoryInfo(v, &mi);
      if (!q && mi) q = gfx_ort->MemoryInfoGetName(mi, &where);
      if (q) gfx_ort->ReleaseStatus(q);
      s = gfx_ort_error(ORT_EP_FAIL, "gfxep: input '%s' arrived in '%s' memory, not in the device memory of %s device %d",
                        g->values[g->inputs[i]].name, where, ci->ep->device->backend_name, ci->ep->device->dev->index);
      break;
    }
    if ((s = gfx_ort->GetTensorData(v, &data))) break;
    in[i].data = (void*)data;
    in[i].dtype = (int)et;
    in[i].shape.rank = (int)rank;
    if (rank) memcpy(in[i].shape.dims, dims, rank * sizeof *dims);
  }
  void* stream = NULL;
  int captured = 0, pin_id = -1;
  if (!s) s = gfx_to_ort(gfx_backend_check_alive(ci->ep->device->dev));
  if (!s) s = gfx_ort->KernelContext_GetGPUComputeStream(ctx, &stream);
  if (!s && ci->ep->options.graphs == GFX_GRAPHS_ORT) s = gfx_capture_compute(ci->ep, stream, &captured, &pin_id);
  if (!s) {
    last_run.ep = ci->ep;
    last_run.stream = stream;
    uint64_t correlation = 0;
    /* a captured run is never profiled: the profiler's timers wait for the device */
    gfx_profiler* p = captured ? NULL : gfx_profiler_for_compute(ci->ep, &correlation);
    const int timed = !captured && ci->ep->options.frame_timings && ci->ep->options.graphs != GFX_GRAPHS_ORT;
    gfx_run_stamps stamps = {.begin_slot = -1, .end_slot = -1};
    if (timed) gfx_frames_compute(ci->ep, stream, &stamps);
    if (!captured && ci->ep->inject_loss_at_run && atomic_load(&ci->ep->runs) == ci->ep->inject_loss_at_run)
      s = gfx_to_ort(gfx_backend_inject_device_loss(ci->ep->device->dev, stream));
    if (s) {
      /* the injected fault: the Run fails as on a real loss */
    } else if (captured) {
      s = gfx_to_ort(gfx_model_run_captured(model, stream, in, output_for, &ro, pin_id));
    } else if (p) {
      gfx_run_stamps_write(ci->ep->device->dev, &stamps, 0, stream);
      s = gfx_to_ort(run_profiled(ci, model, p, correlation, stream, in, &ro));
      if (!s) gfx_run_stamps_write(ci->ep->device->dev, &stamps, 1, stream);
    } else {
      s = gfx_to_ort(gfx_model_run_stamped(model, stream, in, output_for, &ro, &stamps));
    }
    if (!s && !captured && ci->guard) gfx_range_guard_end(ci->guard, model, stream);
    if (timed) gfx_frames_compute_done(ci->ep, stream, &stamps);
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
    ir_graph *full = NULL, *lowered = NULL, *g = NULL;
    int first_lowered = 0;
    gfx_status s = import_partition(ep, graphs[i], fused_nodes[i], i, &full, &lowered, &first_lowered);
    compute_info* ci = NULL;
    if (!s) {
      ci = calloc(1, sizeof *ci);
      if (!ci) {
        ir_graph_free(full);
        ir_graph_free(lowered);
        s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "compute info");
      }
    }
    if (!s) snprintf(ci->partition, sizeof ci->partition, "partition %d", ep->n_partitions);
    if (!s && full && lowered) {
      /* float16 behind the range guard: float32 with probes first, the mixed model once they are back */
      const gfx_range_guard_config config = {.partition = ci->partition,
                                             .use_graphs = ep->options.graphs == GFX_GRAPHS_OWN,
                                             .stamp_replays = ep->options.frame_timings};
      const int nodes = full->n_nodes;
      s = gfx_range_guard_create(ep->device->dev, full, lowered, first_lowered, &config, &ci->guard);
      if (!s)
        gfx_ort_log(ep->logger, ORT_LOGGING_LEVEL_INFO,
                    "gfxep: compiled partition %zu: %d nodes on %s device %d, float16 behind its range guard", i,
                    nodes, ep->device->backend_name, ep->device->dev->index);
    } else if (!s) {
      g = full ? full : lowered;
      if (ep->options.precision == GFX_PRECISION_TF32)
        for (int n = 0; n < g->n_nodes; n++) g->nodes[n].math_mode = IR_MATH_REDUCED_F32;
      /* fusions that make nodes only some backends run ask this device first */
      const ir_fuse_target target = {.supports = gfx_backend_fuse_supports, .user = ep->device->dev};
      if ((s = ir_fuse_for(g, &target))) ir_graph_free(g);
    }
    if (!s && !ci->guard) {
      int nodes = g->n_nodes;
      s = gfx_model_create(ep->device->dev, g, &ci->model);
      /* ORT's capture (cuda_graph=ort) records Compute's work: no graph of the partition's own inside it */
      if (!s) gfx_model_use_graphs(ci->model, ep->options.graphs == GFX_GRAPHS_OWN);
      /* with frame timings on, replays stamp themselves: the Run's timings cost the host nothing */
      if (!s) gfx_model_stamp_replays(ci->model, ep->options.frame_timings);
      if (!s) {
        OrtStatus* os = gfx_capture_add_model(ep, ci->model);
        if (os) {
          s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "%s", gfx_ort->GetErrorMessage(os));
          gfx_ort->ReleaseStatus(os);
          gfx_model_free(ci->model);
          ci->model = NULL;
        }
      }
      if (!s)
        gfx_ort_log(ep->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: compiled partition %zu: %d nodes on %s device %d", i,
                    nodes, ep->device->backend_name, ep->device->dev->index);
    }
    if (s) {
      free(ci);
      gfx_ep_release_compute_infos(this_ptr, infos, i);
      for (size_t k = 0; k < count; k++) infos[k] = NULL;
      return gfx_to_ort(gfx_status_wrap(s, "gfxep: compiling partition %zu", i));
    }
    ci->ep = ep;
    ep->n_partitions++;
    ci->base.ort_version_supported = ORT_API_VERSION;
    ci->base.CreateState = create_state;
    ci->base.Compute = compute;
    ci->base.ReleaseState = release_state;
    infos[i] = &ci->base;
  }
  return NULL;
}

/* With GFXEP_MEMORY_REPORT=FILE, each partition appends one JSON line to FILE when it is released:
 * the device memory it held (weights, workspace pool) next to the lower bound of one run (weights +
 * the most intermediate bytes alive at once), its largest library scratch, how many runs replayed a
 * recorded partition (graph_launches), and for a partition whose shapes depend on data its stages,
 * the host reads between them so far and the later stages resolved. For benchmarks: the
 * figures cover the whole session's life, which the application's own queries cannot separate. */
static void report_memory(const compute_info* ci) {
  const char* path = getenv("GFXEP_MEMORY_REPORT");
  if (!path || !*path) return;
  gfx_model_stats st;
  gfx_model* model = ci->guard ? gfx_range_guard_current(ci->guard) : ci->model;
  gfx_model_get_stats(model, &st);
  FILE* f = fopen(path, "a");
  if (!f) return;
  fprintf(f,
          "{\"partition\": \"%s\", \"nodes\": %d, \"signatures\": %d, \"weight_bytes\": %zu, \"workspace_bytes\": %zu, "
          "\"workspaces\": %d, \"live_bound_bytes\": %zu, \"scratch_bytes\": %zu, \"graph_launches\": %lld, "
          "\"stages\": %d, \"value_reads\": %lld, \"stage_builds\": %lld}\n",
          ci->partition, gfx_model_graph(model)->n_nodes, st.signatures, st.weight_bytes, st.workspace_bytes,
          st.workspaces, st.live_bound_bytes, st.scratch_bytes, st.graph_launches, st.stages, st.value_reads,
          st.stage_builds);
  fclose(f);
}

void ORT_API_CALL gfx_ep_release_compute_infos(OrtEp* this_ptr, OrtNodeComputeInfo** infos, size_t count) {
  (void)this_ptr;
  for (size_t i = 0; i < count; i++) {
    compute_info* ci = (compute_info*)(void*)infos[i];
    if (!ci) continue;
    report_memory(ci);
    if (ci->model) gfx_capture_remove_model(ci->ep, ci->model);
    gfx_model_free(ci->model);
    gfx_range_guard_free(ci->guard);
    free(ci);
  }
}
