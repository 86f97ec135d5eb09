/* gfxep — If on gfxep's device: ORT's own control-flow kernel (OrtEpApi::CreateIfKernel), registered
 * in gfxep's kernel registry, so that an If between gfxep partitions (a detector's "no boxes left"
 * test) keeps its inputs and outputs in device memory instead of taking them through the CPU EP.
 *
 * ORT runs the branch that the condition picks as a subgraph, whose nodes gfxep claims like any
 * other graph's (GetCapability is called for every subgraph). The condition is read on the host:
 * its kernel definition keeps input 0 in CPU memory, and ORT copies it there. That read is why an
 * If is left to ORT under graphs=ort (ORT replays its recording without running kernels).
 */
#include <limits.h>
#include <string.h>

#include "ort/device_objects.h"
#include "ort/ep.h"

static OrtStatus* ORT_API_CALL create_if(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  (void)state;
  return gfx_ep_api->CreateIfKernel(info, out);
}

/* The tensor element types an If's outputs (V) may carry on gfxep's device: every fixed-size one. */
static const ONNXTensorElementDataType if_types[] = {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,   ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
};

/* If's versions as ORT's control-flow kernel takes them: [first, last] opset. */
static const int if_versions[][2] = {{1, 10}, {11, 12}, {13, 15}, {16, 18}, {19, 20}, {21, 22}, {23, 23}, {24, 24}};

static OrtStatus* add_if_kernel(OrtKernelRegistry* reg, int first, int last) {
  OrtKernelDefBuilder* b = NULL;
  OrtKernelDef* def = NULL;
  ORT_TRY(gfx_ep_api->CreateKernelDefBuilder(&b));
  const size_t n_types = sizeof if_types / sizeof if_types[0];
  const OrtDataType* types[sizeof if_types / sizeof if_types[0]];
  const OrtDataType* cond = NULL;
  OrtStatus* s = gfx_ep_api->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, &cond);
  for (size_t i = 0; i < n_types && !s; i++) s = gfx_ep_api->GetTensorDataType(if_types[i], &types[i]);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetOperatorType(b, "If");
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetDomain(b, "");
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetSinceVersion(b, first, last);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetExecutionProvider(b, GFXEP_EP_NAME);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetInputMemType(b, 0, OrtMemTypeCPUInput); /* 'cond', read on the host */
  if (!s) s = gfx_ep_api->KernelDefBuilder_AddTypeConstraint(b, "B", &cond, 1);
  if (!s) s = gfx_ep_api->KernelDefBuilder_AddTypeConstraint(b, "V", types, n_types);
  if (!s) s = gfx_ep_api->KernelDefBuilder_Build(b, &def);
  if (!s) s = gfx_ep_api->KernelRegistry_AddKernel(reg, def, create_if, NULL);
  if (def) gfx_ep_api->ReleaseKernelDef(def);
  gfx_ep_api->ReleaseKernelDefBuilder(b);
  return s;
}

OrtStatus* gfx_if_kernels_add(OrtKernelRegistry* reg) {
  for (size_t i = 0; i < sizeof if_versions / sizeof if_versions[0]; i++)
    ORT_TRY(add_if_kernel(reg, if_versions[i][0], if_versions[i][1]));
  return NULL;
}

int gfx_node_is_if(const OrtNode* node) {
  const char* op = NULL;
  const char* domain = NULL;
  OrtStatus* s = gfx_ort->Node_GetOperatorType(node, &op);
  if (!s) s = gfx_ort->Node_GetDomain(node, &domain);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return 0;
  }
  return op && strcmp(op, "If") == 0 && (!domain || !domain[0] || strcmp(domain, "ai.onnx") == 0);
}
