/* gfxep — GetCapability: which nodes gfxep takes, grouped into as few fused partitions as possible.
 *
 * Grouping rule: walking the nodes in topological order, every node gets a level — the highest
 * level among its producers, plus one when the path crosses from a node ORT keeps to one gfxep
 * takes. Supported nodes of one level form one partition. A path from one partition node to another
 * through an unsupported node always raises the level, so no partition has an unsupported node
 * between two of its members (which ORT forbids), and levels only grow along edges, so partitions
 * cannot form a cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dynamic.h"
#include "ort/device_objects.h"
#include "ort/ep.h"
#include "ort/layout_choice.h"
#include "ort/node_desc.h"

typedef struct node_ref {
  const OrtNode* node;
  int index;
} node_ref;

static int cmp_ref(const void* a, const void* b) {
  uintptr_t x = (uintptr_t)((const node_ref*)a)->node, y = (uintptr_t)((const node_ref*)b)->node;
  return x < y ? -1 : x > y;
}

static int index_of(const node_ref* refs, size_t n, const OrtNode* node) {
  node_ref key = {node, -1};
  const node_ref* r = bsearch(&key, refs, n, sizeof *refs, cmp_ref);
  return r ? r->index : -1;
}

/* 1 when s is NULL; otherwise logs why the node is left to ORT (a warning with log_partition=1),
 * frees s and gives 0. */
static int taken(const gfx_ep* ep, gfx_status s) {
  if (!s) return 1;
  gfx_ort_log(ep->logger, ep->options.log_partition ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_VERBOSE,
              "gfxep: left to ONNX Runtime: %s", gfx_status_message(s));
  gfx_status_free(s);
  return 0;
}

/* A Concat of more inputs than an IR node has, which the import takes as a tree of Concats of at most
 * IR_MAX_IO inputs each (compile.c): every piece must parse and have a kernel on the device; the
 * inner Concats join pieces of the same type along the same axis. Logs why not (taken). */
static int wide_concat_supported(const gfx_ep* ep, const OrtNode* node, size_t n) {
  gfx_status s = NULL;
  const char* name = "";
  for (size_t first = 0; first < n && !s; first += IR_MAX_IO) {
    gfx_node_reader reader;
    ir_node_desc desc;
    gfx_op op;
    ir_params params;
    s = gfx_node_describe_inputs(node, first, IR_MAX_IO, &reader, &desc);
    if (!s) name = desc.name ? desc.name : "";
    if (!s) s = ir_op_parse(&desc, &op, &params);
    if (!s) {
      gfx_node_query q = {.op = op, .params = &params, .desc = &desc};
      s = gfx_backend_supports_node(ep->device->dev, &q);
    }
    if (s) s = gfx_status_wrap(s, "node '%s' (Concat of %zu inputs), inputs %zu..", name, n, first);
  }
  return taken(ep, s);
}

/* A 2-D Conv of a 1x1 window (from the attribute or the weight's declared shape), stride 1, no pads. */
static int conv_is_pointwise(const ir_conv_params* p, const ir_node_desc* desc) {
  if (p->spatial != 2 || p->auto_pad != IR_PAD_NOTSET) return 0;
  const gfx_shape* w = desc->n_inputs > 1 ? &desc->input_shapes[1] : NULL;
  for (int i = 0; i < 2; i++) {
    const int64_t k = p->kernel[i] ? p->kernel[i] : w && w->rank == 4 ? w->dims[2 + i] : -1;
    if (k != 1 || p->strides[i] != 1 || p->pads[i] != 0 || p->pads[2 + i] != 0) return 0;
  }
  return 1;
}

/* Whether the backend also runs this node channels-last, as ORT's layout transformer would hand it
 * over (ir_params_channels_last says which nodes the IR takes so). */
static int channels_last_movable(const gfx_ep* ep, gfx_op op, const ir_params* params, const ir_node_desc* desc) {
  ir_params nhwc;
  gfx_status no = ir_params_channels_last(op, desc, params, &nhwc);
  if (!no) {
    const gfx_node_query q = {.op = op, .params = &nhwc, .desc = desc};
    no = gfx_backend_supports_node(ep->device->dev, &q);
  }
  gfx_status_free(no);
  return !no;
}

/* Whether gfxep takes this node, logging why not; a node it takes is counted in census (layout=auto
 * and nhwc: which layout, and which pooling and Resize op types ORT may convert). */
static int node_supported(const gfx_ep* ep, const OrtNode* node, gfx_layout_census* census) {
  const char* ep_name = NULL;
  OrtStatus* os = gfx_ort->Node_GetEpName(node, &ep_name);
  if (os) {
    gfx_ort->ReleaseStatus(os);
    return 0;
  }
  /* already placed on another EP; nodes this EP claimed before ORT's layout transformation still carry
   * its name when ORT asks again (layout=nhwc) */
  if (ep_name && ep_name[0] && strcmp(ep_name, GFXEP_EP_NAME) != 0) return 0;
  gfx_node_reader reader;
  ir_node_desc desc;
  gfx_op op;
  ir_params params;
  size_t n_wide = 0;
  if (gfx_is_wide_concat(node, &n_wide)) return wide_concat_supported(ep, node, n_wide);
  gfx_status s = gfx_node_describe(node, &reader, &desc);
  if (!s) s = ir_op_parse(&desc, &op, &params);
  if (!s) {
    /* the IR can describe it; now whether this device has a kernel for it */
    gfx_node_query q = {.op = op, .params = &params, .desc = &desc};
    s = gfx_backend_supports_node(ep->device->dev, &q);
    /* with layout=nhwc, ORT converts every Conv claimed here to channels-last and then the converted
     * node must be claimed too (or the session fails): claim only what the backend runs channels-last */
    if (!s && ep->options.layout == GFX_LAYOUT_NHWC && op == GFX_OP_CONV && !params.conv.channels_last) {
      ir_params nhwc = params;
      nhwc.conv.channels_last = 1;
      const gfx_node_query qn = {.op = op, .params = &nhwc, .desc = &desc};
      s = params.conv.spatial != 2 ? gfx_error(GFX_ERR_NOT_SUPPORTED, "%d-D Conv: layout=nhwc converts only 2-D ones",
                                               params.conv.spatial)
                                   : gfx_backend_supports_node(ep->device->dev, &qn);
    }
    if (!s && ep->options.layout != GFX_LAYOUT_NCHW)
      gfx_layout_census_add(census, op, &params, channels_last_movable(ep, op, &params, &desc),
                            op == GFX_OP_CONV && conv_is_pointwise(&params.conv, &desc));
    if (s) s = gfx_status_wrap(s, "node '%s' (%s)", desc.name ? desc.name : "", desc.op_type);
  }
  /* a node whose output shape the data decides makes its partition read values back during the Run
   * (exec/model.h, stages); ORT's own graph capture replays a recording without calling gfxep, so
   * nothing could read them there */
  if (!s && ep->options.graphs == GFX_GRAPHS_ORT && ir_op_data_dependent(op, &params))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                  "node '%s' (%s): its output shape depends on values computed during the Run, which graphs=ort "
                  "cannot read back (ORT replays its recording without calling gfxep)",
                  desc.name ? desc.name : "", desc.op_type);
  return taken(ep, s);
}

/* Whether an If runs on gfxep's device with ORT's control-flow kernel (control_flow.c), logging why
 * not. It joins no partition: ORT runs it between them, its branches partitioned on their own. */
static int if_taken(const gfx_ep* ep, const OrtNode* node, OrtEpGraphSupportInfo* info) {
  const char* ep_name = NULL;
  const char* name = NULL;
  OrtStatus* os = gfx_ort->Node_GetEpName(node, &ep_name);
  if (!os) os = gfx_ort->Node_GetName(node, &name);
  if (os) {
    gfx_ort->ReleaseStatus(os);
    return 0;
  }
  /* already placed on another EP; an If this EP claimed before ORT's layout transformation still carries
   * its name when ORT asks again, and is claimed again (else ORT hands it to its CPU EP) */
  if (ep_name && ep_name[0] && strcmp(ep_name, GFXEP_EP_NAME) != 0) return 0;
  if (ep->options.graphs == GFX_GRAPHS_ORT)
    return taken(ep, gfx_error(GFX_ERR_NOT_SUPPORTED, "node '%s' (If): its condition is read on the host, which "
                                                     "graphs=ort cannot do (ORT replays its recording)",
                               name ? name : ""));
  const OrtKernelDef* def = NULL;
  os = gfx_ep_api->EpGraphSupportInfo_LookUpKernel(info, node, &def);
  if (os) return taken(ep, gfx_from_ort(os));
  if (!def)
    return taken(ep, gfx_error(GFX_ERR_NOT_SUPPORTED, "node '%s' (If): no kernel of gfxep's matches its opset and "
                                                     "types (opsets 1 to 24, tensor outputs)", name ? name : ""));
  return 1;
}

/* The graph's ONNX opset (0 when it declares none). */
static OrtStatus* onnx_opset(const OrtGraph* graph, int64_t* opset) {
  *opset = 0;
  size_t n = 0;
  ORT_TRY(gfx_ort->Graph_GetNumOperatorSets(graph, &n));
  if (n == 0) return NULL;
  const char** domains = calloc(n, sizeof *domains);
  int64_t* versions = calloc(n, sizeof *versions);
  OrtStatus* s = domains && versions ? gfx_ort->Graph_GetOperatorSets(graph, domains, versions, n)
                                     : gfx_ort_error(ORT_FAIL, "gfxep: out of memory in GetCapability");
  for (size_t i = 0; i < n && !s; i++)
    if (!domains[i] || !domains[i][0] || strcmp(domains[i], "ai.onnx") == 0) *opset = versions[i];
  free(domains);
  free(versions);
  return s;
}

/* ONNX opsets ORT's layout transformer takes: 7 up to its maximum, 21 or more in the ORT versions gfxep
 * supports. Outside it ORT transforms nothing, and an NHWC answer would only be read again by ORT's
 * check before the next graph's GetCapability (an If's branch), which skips the EP for that graph. */
#define LAYOUT_MIN_OPSET 7
#define LAYOUT_MAX_OPSET 21

OrtStatus* ORT_API_CALL gfx_ep_get_capability(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* info) {
  gfx_ep* ep = (gfx_ep*)(void*)this_ptr;
  size_t n = 0;
  ORT_TRY(gfx_ort->Graph_GetNumNodes(graph, &n));
  if (n == 0) return NULL;
  const OrtNode** nodes = calloc(n, sizeof *nodes);
  node_ref* refs = calloc(n, sizeof *refs);
  int* level = calloc(n, sizeof *level);
  char* supported = calloc(n, 1);
  const OrtNode** group = calloc(n, sizeof *group);
  OrtStatus* s = NULL;
  if (!nodes || !refs || !level || !supported || !group) {
    s = gfx_ort_error(ORT_FAIL, "gfxep: out of memory in GetCapability");
    goto done;
  }
  if ((s = gfx_ort->Graph_GetNodes(graph, nodes, n))) goto done;
  for (size_t i = 0; i < n; i++) refs[i] = (node_ref){nodes[i], (int)i};
  qsort(refs, n, sizeof *refs, cmp_ref);

  int max_level = 0;
  size_t n_supported = 0, n_single = 0;
  gfx_layout_census census = {0};
  for (size_t i = 0; i < n; i++) {
    if (gfx_node_is_if(nodes[i])) {
      /* on gfxep's device but in no partition: for the levels it counts as a node ORT keeps */
      if (if_taken(ep, nodes[i], info)) {
        if ((s = gfx_ep_api->EpGraphSupportInfo_AddSingleNode(info, nodes[i]))) goto done;
        n_single++;
      }
    } else {
      supported[i] = (char)node_supported(ep, nodes[i], &census);
    }
    n_supported += supported[i];
    size_t n_in = 0;
    if ((s = gfx_ort->Node_GetNumInputs(nodes[i], &n_in))) goto done;
    /* every input, however many (a Concat of 90 class scores): ORT refuses a shorter buffer, and a
     * node's level must see all its producers */
    const OrtValueInfo* few[64];
    const OrtValueInfo** ins = n_in <= 64 ? few : malloc(n_in * sizeof *ins);
    if (!ins) {
      s = gfx_ort_error(ORT_FAIL, "gfxep: out of memory in GetCapability");
      goto done;
    }
    if (n_in && (s = gfx_ort->Node_GetInputs(nodes[i], ins, n_in))) {
      if (ins != few) free(ins);
      goto done;
    }
    int lv = 0;
    for (size_t k = 0; k < n_in && !s; k++) {
      if (!ins[k]) continue;
      const OrtNode* producer = NULL;
      size_t out_index = 0;
      if ((s = gfx_ort->ValueInfo_GetValueProducer(ins[k], &producer, &out_index))) break;
      int p = producer ? index_of(refs, n, producer) : -1;
      if (p < 0) continue;
      int l = level[p] + (supported[i] && !supported[p] ? 1 : 0);
      if (l > lv) lv = l;
    }
    if (ins != few) free(ins);
    if (s) goto done;
    level[i] = lv;
    if (lv > max_level) max_level = lv;
  }

  OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION, .drop_constant_initializers = true};
  int partitions = 0;
  for (int lv = 0; lv <= max_level && n_supported; lv++) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (supported[i] && level[i] == lv) group[k++] = nodes[i];
    if (!k) continue;
    if ((s = gfx_ep_api->EpGraphSupportInfo_AddNodesToFuse(info, group, k, &fusion))) goto done;
    partitions++;
  }
  gfx_ort_log(ep->logger, ep->options.log_partition ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_INFO,
              "gfxep: takes %zu of %zu nodes in %d partition(s)%s", n_supported + n_single, n, partitions,
              n_single ? " and If nodes of their own" : "");
  /* ORT asks which op types to convert (ShouldConvertDataLayoutForOp) after this call, for this graph */
  ep->nhwc_ops = gfx_layout_convertible_ops(&census);
  if (ep->options.layout == GFX_LAYOUT_AUTO) {
    /* ORT asks for the preferred layout right after this call (ep.c), for this graph */
    char why[160];
    const int sixteen = ep->options.precision == GFX_PRECISION_FP16 || ep->options.precision == GFX_PRECISION_BF16;
    int64_t opset = 0;
    OrtStatus* os = onnx_opset(graph, &opset);
    if (os) { /* unknown: NCHW, which ORT can always run */
      gfx_ort->ReleaseStatus(os);
      opset = 0;
    }
    ep->layout_nhwc = gfx_layout_prefers_nhwc(&census, sixteen, why, sizeof why);
    if (ep->layout_nhwc && !census.channels_last && (opset < LAYOUT_MIN_OPSET || opset > LAYOUT_MAX_OPSET)) {
      ep->layout_nhwc = 0;
      snprintf(why, sizeof why, "ONNX opset %lld, outside the %d to %d ORT's layout transformer takes",
               (long long)opset, LAYOUT_MIN_OPSET, LAYOUT_MAX_OPSET);
    }
    gfx_ort_log(ep->logger, ep->options.log_partition ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_INFO,
                "gfxep: layout=auto: %s (%s)", ep->layout_nhwc ? "channels-last Convs" : "NCHW", why);
  }
done:
  free(nodes);
  free(refs);
  free(level);
  free(supported);
  free(group);
  return s;
}
