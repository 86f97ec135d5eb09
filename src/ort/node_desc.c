#include "ort/node_desc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Looks an attribute up: 1 found (with *attr set), 0 absent. */
static int find_attr(void* ctx, const char* name, const OrtOpAttr** attr) {
  gfx_node_reader* r = ctx;
  for (int i = 0; i < r->n_attrs; i++) {
    const char* n = NULL;
    OrtStatus* s = gfx_ort->OpAttr_GetName(r->attrs[i], &n);
    if (s) {
      gfx_ort->ReleaseStatus(s);
      continue;
    }
    if (n && strcmp(n, name) == 0) {
      *attr = r->attrs[i];
      return 1;
    }
  }
  return 0;
}

static int attr_type(const OrtOpAttr* a) {
  OrtOpAttrType t = ORT_OP_ATTR_UNDEFINED;
  OrtStatus* s = gfx_ort->OpAttr_GetType(a, &t);
  if (s) gfx_ort->ReleaseStatus(s);
  return (int)t;
}

static int get_int(void* ctx, const char* name, int64_t* out) {
  const OrtOpAttr* a;
  if (!find_attr(ctx, name, &a)) return 0;
  if (attr_type(a) != ORT_OP_ATTR_INT) return -1;
  size_t got = 0;
  OrtStatus* s = gfx_ort->ReadOpAttr(a, ORT_OP_ATTR_INT, out, sizeof *out, &got);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return -1;
  }
  return 1;
}

static int get_float(void* ctx, const char* name, float* out) {
  const OrtOpAttr* a;
  if (!find_attr(ctx, name, &a)) return 0;
  if (attr_type(a) != ORT_OP_ATTR_FLOAT) return -1;
  size_t got = 0;
  OrtStatus* s = gfx_ort->ReadOpAttr(a, ORT_OP_ATTR_FLOAT, out, sizeof *out, &got);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return -1;
  }
  return 1;
}

static int get_ints(void* ctx, const char* name, int64_t* out, size_t cap, size_t* n) {
  const OrtOpAttr* a;
  *n = 0;
  if (!find_attr(ctx, name, &a)) return 0;
  if (attr_type(a) != ORT_OP_ATTR_INTS) return -1;
  size_t bytes = 0;
  OrtStatus* s = gfx_ort->ReadOpAttr(a, ORT_OP_ATTR_INTS, out, cap * sizeof *out, &bytes);
  if (s) {
    /* too small a buffer: ORT reports the size it needed, which is all a caller needs to refuse */
    gfx_ort->ReleaseStatus(s);
    *n = bytes / sizeof *out;
    return *n > cap ? 1 : -1;
  }
  *n = bytes / sizeof *out;
  return 1;
}

static int get_string(void* ctx, const char* name, char* out, size_t cap) {
  const OrtOpAttr* a;
  if (!find_attr(ctx, name, &a)) return 0;
  if (attr_type(a) != ORT_OP_ATTR_STRING || cap == 0) return -1;
  size_t bytes = 0;
  OrtStatus* s = gfx_ort->ReadOpAttr(a, ORT_OP_ATTR_STRING, out, cap - 1, &bytes);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    snprintf(out, cap, "%s", "(too long)");
    return 1; /* present, and no value gfxep knows is that long: parse refuses it by value */
  }
  out[bytes < cap ? bytes : cap - 1] = 0;
  return 1;
}

static int get_tensor(void* ctx, const char* name, int* dtype, int64_t* n, void* out, size_t cap) {
  const OrtOpAttr* a;
  if (!find_attr(ctx, name, &a)) return 0;
  if (attr_type(a) != ORT_OP_ATTR_TENSOR) return -1;
  OrtValue* v = NULL;
  OrtStatus* s = gfx_ort->OpAttr_GetTensorAttributeAsOrtValue(a, &v);
  int ok = !s && v;
  OrtTensorTypeAndShapeInfo* info = NULL;
  ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t count = 0, bytes = 0;
  const void* data = NULL;
  if (ok && (s = gfx_ort->GetTensorTypeAndShape(v, &info))) ok = 0;
  if (ok && (s = gfx_ort->GetTensorElementType(info, &et))) ok = 0;
  if (ok && (s = gfx_ort->GetTensorShapeElementCount(info, &count))) ok = 0;
  if (ok && (s = gfx_ort->GetTensorSizeInBytes(v, &bytes))) ok = 0;
  if (ok && bytes && (s = gfx_ort->GetTensorData(v, &data))) ok = 0;
  if (ok && bytes > cap) ok = 0;
  if (ok) {
    *dtype = (int)et;
    *n = (int64_t)count;
    if (bytes) memcpy(out, data, bytes);
  }
  if (s) gfx_ort->ReleaseStatus(s);
  if (info) gfx_ort->ReleaseTensorTypeAndShapeInfo(info);
  if (v) gfx_ort->ReleaseValue(v);
  return ok ? 1 : -1;
}

static int count(void* ctx) { return ((gfx_node_reader*)ctx)->n_attrs; }

static const char* name_at(void* ctx, int i) {
  gfx_node_reader* r = ctx;
  const char* n = "";
  OrtStatus* s = gfx_ort->OpAttr_GetName(r->attrs[i], &n);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return "(unreadable)";
  }
  return n;
}

gfx_status gfx_value_info_type(const OrtValueInfo* vi, int* dtype, gfx_shape* shape) {
  const OrtTypeInfo* ti = NULL;
  const OrtTensorTypeAndShapeInfo* tti = NULL;
  GFX_TRY(gfx_from_ort(gfx_ort->GetValueInfoTypeInfo(vi, &ti)));
  OrtStatus* s = gfx_ort->CastTypeInfoToTensorInfo(ti, &tti);
  if (s || !tti) {
    if (s) gfx_ort->ReleaseStatus(s);
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "value is not a tensor");
  }
  ONNXTensorElementDataType et;
  GFX_TRY(gfx_from_ort(gfx_ort->GetTensorElementType(tti, &et)));
  *dtype = (int)et;
  size_t rank = 0;
  GFX_TRY(gfx_from_ort(gfx_ort->GetDimensionsCount(tti, &rank)));
  bool has_shape = gfx_ort_minor >= 24 ? gfx_ort->TensorTypeAndShape_HasShape(tti) : true;
  if (!has_shape) {
    shape->rank = -1;
    return NULL;
  }
  if (rank > GFX_MAX_RANK) return gfx_error(GFX_ERR_NOT_SUPPORTED, "rank %zu exceeds %d", rank, GFX_MAX_RANK);
  shape->rank = (int)rank;
  GFX_TRY(gfx_from_ort(gfx_ort->GetDimensions(tti, shape->dims, rank)));
  for (size_t i = 0; i < rank; i++)
    if (shape->dims[i] < 0) shape->dims[i] = GFX_DIM_UNKNOWN;
  return NULL;
}

gfx_status gfx_node_describe(const OrtNode* node, gfx_node_reader* r, ir_node_desc* d) {
  return gfx_node_describe_inputs(node, 0, SIZE_MAX, r, d);
}

int gfx_is_wide_concat(const OrtNode* node, size_t* n_inputs) {
  const char *op = NULL, *domain = NULL;
  size_t n = 0;
  OrtStatus* s = gfx_ort->Node_GetOperatorType(node, &op);
  if (!s) s = gfx_ort->Node_GetDomain(node, &domain);
  if (!s) s = gfx_ort->Node_GetNumInputs(node, &n);
  if (s) {
    gfx_ort->ReleaseStatus(s);
    return 0;
  }
  if (n_inputs) *n_inputs = n;
  return op && strcmp(op, "Concat") == 0 && (!domain || !domain[0]) && n > IR_MAX_IO;
}

gfx_status gfx_node_describe_inputs(const OrtNode* node, size_t first, size_t max_inputs, gfx_node_reader* r,
                                    ir_node_desc* d) {
  memset(d, 0, sizeof *d);
  memset(r, 0, sizeof *r);
  r->node = node;
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetOperatorType(node, &d->op_type)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetDomain(node, &d->domain)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetSinceVersion(node, &d->since_version)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetName(node, &d->name)));
  if (!d->name) d->name = "";

  size_t n_all = 0, n_out = 0, n_attr = 0;
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetNumInputs(node, &n_all)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetNumOutputs(node, &n_out)));
  GFX_TRY(gfx_from_ort(gfx_ort->Node_GetNumAttributes(node, &n_attr)));
  const size_t n_in = first >= n_all ? 0 : n_all - first < max_inputs ? n_all - first : max_inputs;
  if (n_in > IR_MAX_IO || n_out > IR_MAX_IO || n_attr > GFX_MAX_NODE_ATTRS)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': %zu inputs, %zu outputs, %zu attributes exceed gfxep's limits",
                     d->op_type, d->name, n_in, n_out, n_attr);
  d->n_inputs = (int)n_in;
  d->n_outputs = (int)n_out;
  const OrtValueInfo* ins[IR_MAX_IO] = {0};
  const OrtValueInfo* outs[IR_MAX_IO] = {0};
  if (n_in) {
    /* ORT fills every input of the node: a buffer for all, of which this description keeps a range */
    const OrtValueInfo** all = calloc(n_all, sizeof *all);
    if (!all) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "%s '%s': %zu inputs", d->op_type, d->name, n_all);
    gfx_status s = gfx_from_ort(gfx_ort->Node_GetInputs(node, all, n_all));
    if (!s) memcpy(ins, all + first, n_in * sizeof *all);
    free(all);
    GFX_TRY(s);
  }
  if (n_out) GFX_TRY(gfx_from_ort(gfx_ort->Node_GetOutputs(node, outs, n_out)));
  if (n_attr) GFX_TRY(gfx_from_ort(gfx_ort->Node_GetAttributes(node, r->attrs, n_attr)));
  r->n_attrs = (int)n_attr;

  /* trailing absent optional inputs do not count */
  while (d->n_inputs > 0 && !ins[d->n_inputs - 1]) d->n_inputs--;
  for (int i = 0; i < d->n_inputs; i++) {
    d->input_shapes[i].rank = -1;
    if (!ins[i]) continue;
    gfx_status s = gfx_value_info_type(ins[i], &d->input_dtypes[i], &d->input_shapes[i]);
    if (s) return gfx_status_wrap(s, "%s '%s' input %d", d->op_type, d->name, i);
    bool is_const = false;
    GFX_TRY(gfx_from_ort(gfx_ort->ValueInfo_IsConstantInitializer(ins[i], &is_const)));
    d->input_is_const[i] = is_const;
    if (is_const) {
      /* parse may read small constant inputs (shapes, axes, pads, scales); ORT keeps them alive for
       * as long as the graph the node belongs to */
      const OrtValue* value = NULL;
      GFX_TRY(gfx_from_ort(gfx_ort->ValueInfo_GetInitializerValue(ins[i], &value)));
      if (value) {
        const void* data = NULL;
        size_t bytes = 0;
        GFX_TRY(gfx_from_ort(gfx_ort->GetTensorData(value, &data)));
        GFX_TRY(gfx_from_ort(gfx_ort->GetTensorSizeInBytes(value, &bytes)));
        d->input_const_data[i] = data;
        d->input_const_bytes[i] = bytes;
      }
    }
  }
  for (int i = 0; i < d->n_outputs; i++) {
    if (!outs[i]) return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': output %d is absent", d->op_type, d->name, i);
    gfx_shape ignored;
    gfx_status s = gfx_value_info_type(outs[i], &d->output_dtypes[i], &ignored);
    if (s) return gfx_status_wrap(s, "%s '%s' output %d", d->op_type, d->name, i);
  }
  d->attrs = (ir_attr_reader){
      .ctx = r,
      .get_int = get_int,
      .get_float = get_float,
      .get_ints = get_ints,
      .get_string = get_string,
      .get_tensor = get_tensor,
      .count = count,
      .name_at = name_at,
  };
  return NULL;
}
