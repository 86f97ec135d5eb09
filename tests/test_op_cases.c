/* gfxep — op-level cases through ONNX Runtime: every single-node model that tools/make_opcases.py
 * wrote runs with gfxep and, on the same seeded inputs, with ORT's CPU EP on its oracle model (the
 * model itself for fp32; an fp32 twin with the same rounded weights for fp16/bf16).
 *
 *   test_op_cases [CASES_DIR [SUMMARY_JSON]]
 *
 * Environment: GFXEP_TEST_BACKEND reference (default) | cuda | vulkan; GFXEP_ORT_LIB; GFXEP_OPCASES_DIR and
 * GFXEP_OPCASES_SUMMARY (instead of the arguments); GFXEP_OPCASES_FILTER (run only cases whose name
 * contains it); GFXEP_OPCASES_ALL=1 also runs ops gfxep lacks (their nodes run on ORT: checks the
 * cases themselves).
 *
 * Per case:
 * - Is the node claimed? The session with gfxep is created with "session.disable_cpu_ep_fallback"=1
 *   first: ORT refuses to create it when any node would fall to its CPU EP. When that fails, the
 *   session is made again without the flag (the node runs on ORT). The placement ORT records
 *   (Session_GetEpGraphAssignmentInfo) must agree with that; disagreement is a failure.
 * - Outputs are bound (IOBinding) to buffers from gfxep's device allocator with guard bytes before
 *   and after, filled with a pattern through ORT's CopyTensors (gfxep's data transfer), and read back
 *   the same way after the run: a changed guard byte is an out-of-bounds write, on CUDA too.
 * - Outputs are compared with the oracle: max abs and rel error, atol + rtol * |oracle| per element
 *   (tolerances from the manifest), NaN/Inf in the same places, same shapes.
 *
 * How claims are judged, per op and dtype:
 * - op not in gfxep's op table: "not implemented" (not a failure; not run unless GFXEP_OPCASES_ALL).
 * - fp32 is claimed by every op in the table. fp16/bf16 count as claimed for an op when gfxep took
 *   at least one of that op's cases in that dtype; otherwise the dtype is "not implemented" for the
 *   op (not a failure), and its nodes are checked as nodes left to ORT where ORT can run them.
 * - expect "claimed" in a claimed dtype: a node left to ORT is a failure (a lost claim).
 *   expect "any": either is fine. expect "refused": gfxep taking the node is a failure. expect
 *   "full": "claimed" on the backends that run every family (reference, CUDA), "any" on others.
 * - a node left to ORT must still give the right result (and keep the guards).
 * Exit 0 when nothing failed, 1 otherwise, 77 when the backend has no device, 2 on setup errors.
 */
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/half.h"
#include "ir/graph.h"
#include "ortkit.h"

#ifndef GFXEP_OPCASES_DIR
#define GFXEP_OPCASES_DIR "opcases"
#endif

#define GUARD_BYTES 256 /* before and after each output; keeps the output 256-byte aligned */
#define MAX_IO 8

/* ---- the manifest (tools/make_opcases.py), read with cJSON ---- */

/* A missing or non-string field reads as "": callers compare and print names without checking. */
static const char* json_str(const cJSON* obj, const char* key) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* Numbers, and booleans as 0/1 (the "int" flag is a JSON boolean); anything else is `fallback`. */
static double json_value_num(const cJSON* v, double fallback) {
  if (cJSON_IsNumber(v)) return v->valuedouble;
  if (cJSON_IsBool(v)) return cJSON_IsTrue(v) ? 1 : 0;
  return fallback;
}

static double json_num(const cJSON* obj, const char* key, double fallback) {
  return json_value_num(cJSON_GetObjectItemCaseSensitive(obj, key), fallback);
}

/* ---- values: host tensors of any element type, read as doubles ---- */

typedef struct value {
  char name[64];
  ONNXTensorElementDataType type;
  int64_t dims[8];
  size_t rank;
  size_t count;
  void* data; /* host, `count` elements of `type` */
} value;

static size_t elem_size(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
    default: return 0;
  }
}

static double load(const value* v, size_t i) {
  const char* p = (const char*)v->data + i * elem_size(v->type);
  union {
    double d;
    float f;
    int64_t i64;
    uint64_t u64;
    int32_t i32;
    uint32_t u32;
    int16_t i16;
    uint16_t u16;
    int8_t i8;
    uint8_t u8;
  } u;
  memcpy(&u, p, elem_size(v->type));
  switch (v->type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return u.d;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return u.f;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return gfx_half_to_float(u.u16);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return gfx_bf16_to_float(u.u16);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return (double)u.i64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return (double)u.u64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return u.i32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return u.u32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return u.i16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return u.u16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return u.i8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return u.u8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return u.u8 != 0;
    default: return NAN;
  }
}

/* Stores x (already representable: the inputs are generated in the case's precision). */
static void store(value* v, size_t i, double x) {
  char* p = (char*)v->data + i * elem_size(v->type);
  switch (v->type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
      float f = (float)x;
      memcpy(p, &f, 4);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: {
      uint16_t h = gfx_float_to_half((float)x);
      memcpy(p, &h, 2);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: {
      uint16_t h = gfx_float_to_bf16((float)x);
      memcpy(p, &h, 2);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: {
      int64_t q = (int64_t)x;
      memcpy(p, &q, 8);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: {
      int32_t q = (int32_t)x;
      memcpy(p, &q, 4);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: *(int8_t*)p = (int8_t)x; break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: *(uint8_t*)p = (uint8_t)x; break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: *(uint8_t*)p = x != 0; break;
    default: memset(p, 0, elem_size(v->type)); break;
  }
}

static void values_free(value* v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].data);
}

/* ---- the run ---- */

static ortkit k;
static const OrtEpDevice* device;
static OrtAllocator* dev_alloc;
static OrtMemoryInfo* cpu_mem;

#define CHECK(call)           \
  do {                        \
    OrtStatus* st_ = (call);  \
    if (st_) return st_;      \
  } while (0)

static void release(OrtStatus* s) {
  if (s) k.api->ReleaseStatus(s);
}

static OrtStatus* fail_status(const char* fmt, const char* a, size_t x) {
  char msg[2048];
  snprintf(msg, sizeof msg, fmt, a, x);
  return k.api->CreateStatus(ORT_FAIL, msg);
}

/* A session on gfxep (device) or ORT's CPU EP (NULL). Graph optimizations are off so each single
 * node reaches the EPs as written (ORT would fold Shape or drop Identity otherwise). */
static OrtStatus* make_session(const char* path, const OrtEpDevice* dev, int no_fallback, OrtSession** out) {
  const OrtApi* api = k.api;
  OrtSessionOptions* so = NULL;
  OrtStatus* s = api->CreateSessionOptions(&so);
  if (!s) s = api->SetSessionGraphOptimizationLevel(so, ORT_DISABLE_ALL);
  if (!s) s = api->SetIntraOpNumThreads(so, 1);
  if (!s) s = api->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1");
  if (!s && no_fallback) s = api->AddSessionConfigEntry(so, "session.disable_cpu_ep_fallback", "1");
  if (!s && dev) s = api->SessionOptionsAppendExecutionProvider_V2(so, k.env, &dev, 1, NULL, NULL, 0);
  if (!s) s = api->CreateSession(k.env, ortkit_ort_path(path), so, out);
  if (so) api->ReleaseSessionOptions(so);
  return s;
}

static uint64_t next_random(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull); /* splitmix64 */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t hash_name(const char* s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

/* Rounds x to what `t` can hold, so the fp32 twin sees exactly the inputs the fp16/bf16 model sees. */
static double round_to(ONNXTensorElementDataType t, double x) {
  if (t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) return gfx_half_to_float(gfx_float_to_half((float)x));
  if (t == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16) return gfx_bf16_to_float(gfx_float_to_bf16((float)x));
  return (float)x;
}

/* Seeded inputs for the model (`ins`) and the oracle (`oracle_ins`, fp32 where the model has
 * fp16/bf16), values in each input's range from the manifest. Dynamic dims take 3. */
static OrtStatus* make_inputs(OrtSession* model, OrtSession* oracle, const cJSON* c, value* ins, value* oracle_ins,
                              size_t* n) {
  const OrtApi* api = k.api;
  OrtAllocator* alloc = NULL;
  CHECK(api->GetAllocatorWithDefaultOptions(&alloc));
  size_t count = 0, ocount = 0;
  CHECK(api->SessionGetInputCount(model, &count));
  CHECK(api->SessionGetInputCount(oracle, &ocount));
  if (count != ocount || count > MAX_IO) return fail_status("%s: %zu inputs (model and oracle differ?)", "", count);
  const cJSON* specs = cJSON_GetObjectItemCaseSensitive(c, "inputs");
  uint64_t state = hash_name(json_str(c, "name"));
  for (size_t i = 0; i < count; i++) {
    for (int side = 0; side < 2; side++) {
      OrtSession* s = side ? oracle : model;
      value* v = side ? &oracle_ins[i] : &ins[i];
      char* name = NULL;
      OrtTypeInfo* ti = NULL;
      const OrtTensorTypeAndShapeInfo* tti = NULL;
      CHECK(api->SessionGetInputName(s, i, alloc, &name));
      snprintf(v->name, sizeof v->name, "%s", name);
      release(api->AllocatorFree(alloc, name));
      CHECK(api->SessionGetInputTypeInfo(s, i, &ti));
      OrtStatus* st = api->CastTypeInfoToTensorInfo(ti, &tti);
      if (!st) st = api->GetTensorElementType(tti, &v->type);
      if (!st) st = api->GetDimensionsCount(tti, &v->rank);
      if (!st && v->rank > 8) st = fail_status("%s: input rank %zu > 8", v->name, v->rank);
      if (!st) st = api->GetDimensions(tti, v->dims, v->rank);
      api->ReleaseTypeInfo(ti);
      if (st) return st;
      v->count = 1;
      for (size_t d = 0; d < v->rank; d++) {
        if (v->dims[d] < 0) v->dims[d] = 3;
        v->count *= (size_t)v->dims[d];
      }
      if (!elem_size(v->type)) return fail_status("%s: input type %zu not handled", v->name, (size_t)v->type);
      v->data = calloc(v->count + 1, elem_size(v->type));
    }
    /* the spec of this input: its range, integer or not */
    double lo = -1, hi = 1;
    int integer = 0;
    const cJSON* sp = NULL;
    cJSON_ArrayForEach(sp, specs) {
      if (strcmp(json_str(sp, "name"), ins[i].name) != 0) continue;
      const cJSON* range = cJSON_GetObjectItemCaseSensitive(sp, "range");
      if (cJSON_GetArraySize(range) == 2)
        lo = json_value_num(cJSON_GetArrayItem(range, 0), 0), hi = json_value_num(cJSON_GetArrayItem(range, 1), 0);
      integer = json_num(sp, "int", 0) != 0;
    }
    for (size_t e = 0; e < ins[i].count; e++) {
      double u = (double)(next_random(&state) >> 11) / 9007199254740992.0;
      double x = integer ? floor(lo + u * (hi - lo + 1)) : lo + u * (hi - lo);
      if (x > hi) x = hi;
      x = round_to(ins[i].type, x);
      store(&ins[i], e, x);
      store(&oracle_ins[i], e, x);
    }
  }
  *n = count;
  return NULL;
}

static OrtStatus* to_ort_values(const value* v, size_t n, OrtValue** out) {
  for (size_t i = 0; i < n; i++)
    CHECK(k.api->CreateTensorWithDataAsOrtValue(cpu_mem, v[i].data, v[i].count * elem_size(v[i].type) + 1, v[i].dims,
                                                v[i].rank, v[i].type, &out[i]));
  return NULL;
}

static OrtStatus* read_value(OrtValue* ov, const char* name, value* v) {
  const OrtApi* api = k.api;
  OrtTensorTypeAndShapeInfo* info = NULL;
  snprintf(v->name, sizeof v->name, "%s", name);
  CHECK(api->GetTensorTypeAndShape(ov, &info));
  OrtStatus* s = api->GetTensorElementType(info, &v->type);
  if (!s) s = api->GetDimensionsCount(info, &v->rank);
  if (!s && v->rank > 8) s = fail_status("%s: output rank %zu > 8", name, v->rank);
  if (!s) s = api->GetDimensions(info, v->dims, v->rank);
  if (!s) s = api->GetTensorShapeElementCount(info, &v->count);
  api->ReleaseTensorTypeAndShapeInfo(info);
  if (s) return s;
  if (!elem_size(v->type)) return fail_status("%s: output type %zu not handled", name, (size_t)v->type);
  const void* data = NULL;
  CHECK(api->GetTensorData(ov, &data));
  v->data = malloc(v->count * elem_size(v->type) + 1);
  if (v->count) memcpy(v->data, data, v->count * elem_size(v->type)); /* empty: maybe no data pointer */
  return NULL;
}

/* The oracle: a plain Run on ORT's CPU EP with host outputs. */
static OrtStatus* run_oracle(OrtSession* s, const value* in, size_t n_in, value* out, size_t* n_out) {
  const OrtApi* api = k.api;
  OrtAllocator* alloc = NULL;
  CHECK(api->GetAllocatorWithDefaultOptions(&alloc));
  CHECK(api->SessionGetOutputCount(s, n_out));
  if (*n_out > MAX_IO) return fail_status("%s%zu outputs", "", *n_out);
  OrtValue* ins[MAX_IO] = {0};
  OrtValue* outs[MAX_IO] = {0};
  const char* in_names[MAX_IO];
  char* out_names[MAX_IO] = {0};
  OrtStatus* st = to_ort_values(in, n_in, ins);
  for (size_t i = 0; i < n_in; i++) in_names[i] = in[i].name;
  for (size_t i = 0; i < *n_out && !st; i++) st = api->SessionGetOutputName(s, i, alloc, &out_names[i]);
  if (!st)
    st = api->Run(s, NULL, in_names, (const OrtValue* const*)ins, n_in, (const char* const*)out_names, *n_out, outs);
  for (size_t i = 0; i < *n_out && !st; i++) st = read_value(outs[i], out_names[i], &out[i]);
  for (size_t i = 0; i < MAX_IO; i++) {
    if (ins[i]) api->ReleaseValue(ins[i]);
    if (outs[i]) api->ReleaseValue(outs[i]);
    if (out_names[i]) release(api->AllocatorFree(alloc, out_names[i]));
  }
  return st;
}

static uint8_t guard_byte(size_t i) { return (uint8_t)(0xA5u ^ (i * 31u)); }

/* A device buffer of GUARD_BYTES + bytes + GUARD_BYTES, all set to the guard pattern through
 * CopyTensors; *view is a tensor of `type` and `dims` in the middle of it. */
static OrtStatus* guarded_output(ONNXTensorElementDataType type, const int64_t* dims, size_t rank, size_t bytes,
                                 OrtValue** whole, OrtValue** view) {
  const OrtApi* api = k.api;
  int64_t total = (int64_t)(bytes + 2 * GUARD_BYTES);
  CHECK(api->CreateTensorAsOrtValue(dev_alloc, &total, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, whole));
  uint8_t* pattern = malloc((size_t)total);
  for (int64_t i = 0; i < total; i++) pattern[i] = guard_byte((size_t)i);
  OrtValue* host = NULL;
  OrtStatus* s = api->CreateTensorWithDataAsOrtValue(cpu_mem, pattern, (size_t)total, &total, 1,
                                                     ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, &host);
  if (!s) {
    const OrtValue* src[] = {host};
    s = api->CopyTensors(k.env, src, whole, NULL, 1);
  }
  if (host) api->ReleaseValue(host);
  free(pattern);
  if (s) return s;
  void* base = NULL;
  CHECK(api->GetTensorMutableData(*whole, &base));
  const OrtMemoryInfo* mem = NULL;
  CHECK(api->GetTensorMemoryInfo(*whole, &mem));
  return api->CreateTensorWithDataAsOrtValue(mem, (char*)base + GUARD_BYTES, bytes, dims, rank, type, view);
}

/* Reads a guarded buffer back; counts changed guard bytes and copies the middle into v->data. */
static OrtStatus* read_guarded(OrtValue* whole, value* v, size_t* bad_guards) {
  const OrtApi* api = k.api;
  size_t bytes = v->count * elem_size(v->type);
  int64_t total = (int64_t)(bytes + 2 * GUARD_BYTES);
  uint8_t* host = malloc((size_t)total);
  OrtValue* hv = NULL;
  OrtStatus* s = api->CreateTensorWithDataAsOrtValue(cpu_mem, host, (size_t)total, &total, 1,
                                                     ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, &hv);
  if (!s) {
    const OrtValue* src[] = {whole};
    s = api->CopyTensors(k.env, src, &hv, NULL, 1);
  }
  if (hv) api->ReleaseValue(hv);
  if (!s) {
    for (size_t i = 0; i < GUARD_BYTES; i++) {
      if (host[i] != guard_byte(i)) ++*bad_guards;
      size_t j = GUARD_BYTES + bytes + i;
      if (host[j] != guard_byte(j)) ++*bad_guards;
    }
    v->data = malloc(bytes + 1);
    memcpy(v->data, host + GUARD_BYTES, bytes);
  }
  free(host);
  return s;
}

/* The run on gfxep: host inputs bound as they are, outputs bound to guarded device buffers shaped
 * like the oracle's outputs. */
static OrtStatus* run_gfxep(OrtSession* s, const value* in, size_t n_in, const value* oracle_out, size_t n_out,
                            value* out, size_t* bad_guards) {
  const OrtApi* api = k.api;
  OrtAllocator* alloc = NULL;
  CHECK(api->GetAllocatorWithDefaultOptions(&alloc));
  size_t count = 0;
  CHECK(api->SessionGetOutputCount(s, &count));
  if (count != n_out) return fail_status("%s%zu outputs, the oracle has a different number", "", count);
  OrtIoBinding* b = NULL;
  CHECK(api->CreateIoBinding(s, &b));
  OrtValue* ins[MAX_IO] = {0};
  OrtValue *whole[MAX_IO] = {0}, *views[MAX_IO] = {0};
  OrtStatus* st = to_ort_values(in, n_in, ins);
  for (size_t i = 0; i < n_in && !st; i++) st = api->BindInput(b, in[i].name, ins[i]);
  for (size_t i = 0; i < n_out && !st; i++) {
    char* name = NULL;
    OrtTypeInfo* ti = NULL;
    const OrtTensorTypeAndShapeInfo* tti = NULL;
    st = api->SessionGetOutputName(s, i, alloc, &name);
    if (st) break;
    snprintf(out[i].name, sizeof out[i].name, "%s", name);
    release(api->AllocatorFree(alloc, name));
    st = api->SessionGetOutputTypeInfo(s, i, &ti);
    if (!st) st = api->CastTypeInfoToTensorInfo(ti, &tti);
    if (!st) st = api->GetTensorElementType(tti, &out[i].type);
    if (ti) api->ReleaseTypeInfo(ti);
    if (st) break;
    if (!elem_size(out[i].type)) {
      st = fail_status("%s: output type %zu not handled", out[i].name, (size_t)out[i].type);
      break;
    }
    out[i].rank = oracle_out[i].rank;
    out[i].count = oracle_out[i].count;
    memcpy(out[i].dims, oracle_out[i].dims, sizeof out[i].dims);
    st = guarded_output(out[i].type, out[i].dims, out[i].rank, out[i].count * elem_size(out[i].type), &whole[i],
                        &views[i]);
    if (!st) st = api->BindOutput(b, out[i].name, views[i]);
  }
  if (!st) st = api->RunWithBinding(s, NULL, b);
  if (!st) st = api->SynchronizeBoundOutputs(b);
  for (size_t i = 0; i < n_out && !st; i++) st = read_guarded(whole[i], &out[i], bad_guards);
  api->ReleaseIoBinding(b);
  for (size_t i = 0; i < MAX_IO; i++) {
    if (ins[i]) api->ReleaseValue(ins[i]);
    if (views[i]) api->ReleaseValue(views[i]);
    if (whole[i]) api->ReleaseValue(whole[i]);
  }
  return st;
}

/* ---- comparing ---- */

typedef struct diff {
  double max_abs, max_rel;
  size_t mismatched, nan_mismatch, shape_mismatch;
} diff;

static void compare(const value* a, const value* b, size_t n, double atol, double rtol, diff* d) {
  memset(d, 0, sizeof *d);
  for (size_t i = 0; i < n; i++) {
    if (a[i].rank != b[i].rank || a[i].count != b[i].count ||
        memcmp(a[i].dims, b[i].dims, a[i].rank * sizeof(int64_t)) != 0) {
      d->shape_mismatch++;
      continue;
    }
    for (size_t e = 0; e < a[i].count; e++) {
      double x = load(&a[i], e), y = load(&b[i], e);
      if (!isfinite(x) || !isfinite(y)) {
        /* NaN where the oracle has NaN, the same infinity where it has one */
        if (isnan(x) != isnan(y) || (!isnan(x) && x != y)) d->nan_mismatch++;
        continue;
      }
      double err = fabs(x - y);
      if (err > d->max_abs) d->max_abs = err;
      if (fabs(y) > 1e-3 && err / fabs(y) > d->max_rel) d->max_rel = err / fabs(y);
      if (err > atol + rtol * fabs(y)) d->mismatched++;
    }
  }
}

/* ---- per case ---- */

typedef enum {
  R_PASS,           /* on gfxep, right */
  R_LEFT_PASS,      /* left to ORT (refused, "any" or a dtype not claimed), right */
  R_LEFT_NORUN,     /* left to ORT, which has no kernel for it either: nothing to check */
  R_NOT_IMPL,       /* op not in the table */
  R_FAIL,
} result_kind;

typedef struct result {
  const cJSON* c;
  int in_table, claimed;
  result_kind kind;
  diff d;
  char why[400];
} result;

static int dtype_index(const char* dt) { return !strcmp(dt, "fp16") ? 1 : !strcmp(dt, "bf16") ? 2 : 0; }

static void count_placement(OrtSession* s, const char* op, size_t* on_gfxep, size_t* elsewhere) {
  const OrtEpAssignedSubgraph* const* sub = NULL;
  size_t n = 0;
  *on_gfxep = *elsewhere = 0;
  OrtStatus* st = k.api->Session_GetEpGraphAssignmentInfo(s, &sub, &n);
  if (st) {
    k.api->ReleaseStatus(st);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const char* ep = NULL;
    const OrtEpAssignedNode* const* nodes = NULL;
    size_t nn = 0;
    if (k.api->EpAssignedSubgraph_GetEpName(sub[i], &ep) || k.api->EpAssignedSubgraph_GetNodes(sub[i], &nodes, &nn))
      continue; /* leaks a status only on an ORT failure; the counts then say "not placed" */
    for (size_t j = 0; j < nn; j++) {
      const char* type = NULL;
      if (k.api->EpAssignedNode_GetOperatorType(nodes[j], &type) || strcmp(type, op) != 0) continue;
      if (!strcmp(ep, "gfxep"))
        ++*on_gfxep;
      else
        ++*elsewhere;
    }
  }
}

static void set_why(result* r, result_kind kind, const char* fmt, const char* a) {
  r->kind = kind;
  snprintf(r->why, sizeof r->why, fmt, a);
}

/* Runs one case; decides pass / left / fail except the per-dtype claim rule (applied later). */
static const char* volatile current_case = "(none)"; /* for on_crash */

static void run_case(const char* dir, const cJSON* c, result* r, int run_all) {
  const char* op = json_str(c, "op");
  char path[1024], opath[1024];
  snprintf(path, sizeof path, "%s/%s", dir, json_str(c, "model"));
  snprintf(opath, sizeof opath, "%s/%s", dir, json_str(c, "oracle"));
  r->c = c;
  current_case = json_str(c, "name");
  r->in_table = ir_op_from_name(op) != GFX_OP_NONE;
  if (!r->in_table && !run_all) {
    set_why(r, R_NOT_IMPL, "%s is not in gfxep's op table", op);
    return;
  }
  OrtSession *s = NULL, *oracle = NULL;
  value in[MAX_IO] = {0}, oin[MAX_IO] = {0}, want[MAX_IO] = {0}, got[MAX_IO] = {0};
  size_t n_in = 0, n_out = 0, bad_guards = 0;
  /* claimed: the session builds with the CPU EP fallback disabled */
  OrtStatus* st = make_session(path, device, 1, &s);
  r->claimed = st == NULL;
  if (st) {
    k.api->ReleaseStatus(st);
    st = make_session(path, device, 0, &s);
    if (st) {
      /* neither gfxep nor ORT's CPU EP runs it (ORT lacks most fp16/bf16 kernels) */
      /* ORT's message is long; its last sentence says which node had no kernel */
      const char* msg = k.api->GetErrorMessage(st);
      const char* tail = strlen(msg) > 160 ? msg + strlen(msg) - 160 : msg;
      set_why(r, R_LEFT_NORUN, "...%s", tail);
      k.api->ReleaseStatus(st);
      return;
    }
  }
  size_t on_gfxep = 0, elsewhere = 0;
  count_placement(s, op, &on_gfxep, &elsewhere);
  /* no node left at all: ORT's optimizer removed it (a Clip without bounds that no EP took), so
   * nothing was claimed; the result is still compared below */
  if (on_gfxep == 0 && elsewhere == 0) r->claimed = 0;
  if (r->claimed != (on_gfxep > 0 && elsewhere == 0)) {
    char msg[200];
    snprintf(msg, sizeof msg, "the session built without CPU fallback = %d, but placement says %zu %s nodes on gfxep, "
             "%zu elsewhere", r->claimed, on_gfxep, op, elsewhere);
    set_why(r, R_FAIL, "%s", msg);
    goto done;
  }
  if (!r->in_table && r->claimed) {
    set_why(r, R_FAIL, "gfxep claimed %s although it is not in the op table", op);
    goto done;
  }
  if ((st = make_session(opath, NULL, 0, &oracle)) || (st = make_inputs(s, oracle, c, in, oin, &n_in)) ||
      (st = run_oracle(oracle, oin, n_in, want, &n_out))) {
    set_why(r, R_FAIL, "oracle: %s", k.api->GetErrorMessage(st));
    k.api->ReleaseStatus(st);
    goto done;
  }
  if ((st = run_gfxep(s, in, n_in, want, n_out, got, &bad_guards))) {
    set_why(r, R_FAIL, "run: %s", k.api->GetErrorMessage(st));
    k.api->ReleaseStatus(st);
    goto done;
  }
  compare(got, want, n_out, json_num(c, "atol", 1e-5), json_num(c, "rtol", 1e-4), &r->d);
  if (bad_guards || r->d.shape_mismatch || r->d.nan_mismatch || r->d.mismatched) {
    /* every problem at once: an out-of-bounds write often comes with wrong values */
    char msg[300];
    snprintf(msg, sizeof msg, "%zu guard bytes overwritten, %zu outputs of another shape, %zu elements outside atol %g "
             "+ rtol %g, %zu NaN/Inf mismatches", bad_guards, r->d.shape_mismatch, r->d.mismatched,
             json_num(c, "atol", 1e-5), json_num(c, "rtol", 1e-4), r->d.nan_mismatch);
    set_why(r, R_FAIL, "%s", msg);
  } else if (!r->in_table) {
    set_why(r, R_NOT_IMPL, "%s is not in gfxep's op table (ORT's result checked)", op);
  } else {
    set_why(r, r->claimed ? R_PASS : R_LEFT_PASS, "%s", r->claimed ? "" : "left to ORT");
  }
done:
  values_free(in, MAX_IO);
  values_free(oin, MAX_IO);
  values_free(want, MAX_IO);
  values_free(got, MAX_IO);
  if (s) k.api->ReleaseSession(s);
  if (oracle) k.api->ReleaseSession(oracle);
}

/* The claim rules that need every case of an op: fp32 is claimed by every op in the table; fp16 and
 * bf16 when at least one case of the op in that dtype was claimed. */
/* Whether the backend runs every family of the op table (the reference and CUDA backends do); for
 * any other backend, fp32 counts as claimed for an op only when the backend took one of its cases,
 * like fp16/bf16, and ops it declines are reported as left to ORT, never as passes on gfxep. */
static int backend_complete = 1;

static void judge_claims(result* res, size_t n) {
  for (size_t i = 0; i < n; i++) {
    result* r = &res[i];
    if (!r->in_table || r->kind == R_FAIL) continue;
    const char* op = json_str(r->c, "op");
    const char* dt = json_str(r->c, "dtype");
    const char* expect = json_str(r->c, "expect");
    /* "full": a case the backends that run the whole op table must claim, which another (Vulkan) may
     * leave to ORT, e.g. 3-D convolution */
    if (!strcmp(expect, "full")) expect = backend_complete ? "claimed" : "any";
    int dtype_claimed = backend_complete && dtype_index(dt) == 0;
    for (size_t j = 0; j < n && !dtype_claimed; j++)
      dtype_claimed =
          res[j].claimed && !strcmp(json_str(res[j].c, "op"), op) && !strcmp(json_str(res[j].c, "dtype"), dt);
    if (!strcmp(expect, "refused") && r->claimed)
      set_why(r, R_FAIL, "%s",
              "gfxep claimed a node the case expects it to refuse (if that support was added on purpose, change "
              "the case's expect in tools/make_opcases.py)");
    else if (!strcmp(expect, "claimed") && dtype_claimed && !r->claimed)
      set_why(r, R_FAIL, "%s", "left to ORT although gfxep claims this op in this dtype (a lost claim)");
    else if (!dtype_claimed && !r->claimed && r->kind != R_LEFT_NORUN && r->kind != R_FAIL)
      set_why(r, R_LEFT_PASS, "%s", "dtype not claimed: left to ORT, result right");
  }
}

/* ---- the summary ---- */

typedef struct op_stats {
  char op[48];
  size_t cases, passed, failed, left_to_ort, not_implemented;
  double max_abs, max_rel;
  int dtypes_claimed[3], dtypes_seen[3];
} op_stats;

static const char* const dtype_names[3] = {"fp32", "fp16", "bf16"};

static void print_summary(FILE* f, const char* backend, const op_stats* ops, size_t n_ops, const result* res,
                          size_t n) {
  size_t tot[5] = {0};
  for (size_t i = 0; i < n; i++) tot[res[i].kind]++;
  fprintf(f, "{\"backend\": \"%s\", \"ort\": \"%s\", \"totals\": {\"cases\": %zu, \"passed\": %zu, "
          "\"left_to_ort_ok\": %zu, \"left_to_ort_unrunnable\": %zu, \"not_implemented\": %zu, \"failed\": %zu},\n",
          backend, k.version, n, tot[R_PASS], tot[R_LEFT_PASS], tot[R_LEFT_NORUN], tot[R_NOT_IMPL], tot[R_FAIL]);
  fprintf(f, " \"failures\": [");
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    if (res[i].kind != R_FAIL) continue;
    fprintf(f, "%s\n  {\"case\": \"%s\", \"why\": \"", first ? "" : ",", json_str(res[i].c, "name"));
    for (const char* p = res[i].why; *p; p++) fprintf(f, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
    fprintf(f, "\"}");
    first = 0;
  }
  fprintf(f, "],\n \"ops\": {");
  for (size_t i = 0; i < n_ops; i++) {
    const op_stats* o = &ops[i];
    fprintf(f, "%s\n  \"%s\": {\"status\": \"%s\", \"cases\": %zu, \"passed\": %zu, \"failed\": %zu, "
            "\"left_to_ort\": %zu, \"not_implemented\": %zu, \"max_abs\": %.3g, \"max_rel\": %.3g, \"dtypes\": [",
            i ? "," : "", o->op,
            o->failed ? "failed" : o->not_implemented == o->cases ? "not implemented" : "ok", o->cases, o->passed,
            o->failed, o->left_to_ort, o->not_implemented, o->max_abs, o->max_rel);
    int any = 0;
    for (int d = 0; d < 3; d++)
      if (o->dtypes_claimed[d]) fprintf(f, "%s\"%s\"", any++ ? ", " : "", dtype_names[d]);
    fprintf(f, "], \"dtypes_not_claimed\": [");
    any = 0;
    for (int d = 0; d < 3; d++)
      if (o->dtypes_seen[d] && !o->dtypes_claimed[d]) fprintf(f, "%s\"%s\"", any++ ? ", " : "", dtype_names[d]);
    fprintf(f, "]}");
  }
  fprintf(f, "\n }}\n");
}

static size_t collect_stats(const result* res, size_t n, op_stats* ops) {
  size_t n_ops = 0;
  for (size_t i = 0; i < n; i++) {
    const char* op = json_str(res[i].c, "op");
    size_t j = 0;
    while (j < n_ops && strcmp(ops[j].op, op) != 0) j++;
    if (j == n_ops) {
      memset(&ops[j], 0, sizeof ops[j]);
      snprintf(ops[j].op, sizeof ops[j].op, "%s", op);
      n_ops++;
    }
    op_stats* o = &ops[j];
    int d = dtype_index(json_str(res[i].c, "dtype"));
    o->cases++;
    o->dtypes_seen[d] = 1;
    if (res[i].claimed) o->dtypes_claimed[d] = 1;
    switch (res[i].kind) {
      case R_PASS: o->passed++; break;
      case R_LEFT_PASS:
      case R_LEFT_NORUN: o->left_to_ort++; break;
      case R_NOT_IMPL: o->not_implemented++; break;
      case R_FAIL: o->failed++; break;
    }
    if (res[i].kind == R_PASS || res[i].kind == R_FAIL) {
      if (res[i].d.max_abs > o->max_abs) o->max_abs = res[i].d.max_abs;
      if (res[i].d.max_rel > o->max_rel) o->max_rel = res[i].d.max_rel;
    }
  }
  return n_ops;
}

/* ---- main ---- */

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)(size > 0 ? size : 0) + 1);
  size_t got = fread(text, 1, (size_t)(size > 0 ? size : 0), f);
  fclose(f);
  text[got] = 0;
  return text;
}

static const char* env_or(const char* name, const char* fallback) {
  const char* v = getenv(name);
  return v && v[0] ? v : fallback;
}

/* A crash names the case it happened in and where (library + offset, for addr2line), so that one
 * bad kernel does not hide behind "Segmentation fault". */
static void on_crash(int sig) {
  char line[256];
  int n = snprintf(line, sizeof line, "\nCRASH: signal %d in case %s\n", sig, current_case);
  if (n > 0) (void)!write(2, line, (size_t)n);
  void* frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
  _exit(3);
}

int main(int argc, char** argv) {
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  signal(SIGABRT, on_crash);
  const char* dir = argc > 1 ? argv[1] : env_or("GFXEP_OPCASES_DIR", GFXEP_OPCASES_DIR);
  const char* summary_path = argc > 2 ? argv[2] : env_or("GFXEP_OPCASES_SUMMARY", NULL);
  const char* backend = env_or("GFXEP_TEST_BACKEND", "reference");
  const char* filter = env_or("GFXEP_OPCASES_FILTER", NULL);
  int run_all = atoi(env_or("GFXEP_OPCASES_ALL", "0")) != 0;

  char path[1024];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  char* text = read_text(path);
  if (!text) {
    fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  const char* parse_end = NULL;
  cJSON* manifest = cJSON_ParseWithOpts(text, &parse_end, 0);
  if (!manifest) {
    fprintf(stderr, "%s: not valid JSON at offset %ld\n", path, (long)(parse_end - text));
    free(text);
    return 2;
  }
  const cJSON* cases = cJSON_GetObjectItemCaseSensitive(manifest, "cases");
  size_t n_cases = (size_t)cJSON_GetArraySize(cases);
  if (!cJSON_IsArray(cases)) {
    fprintf(stderr, "%s: no \"cases\" array\n", path);
    return 2;
  }

  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_FATAL, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  /* "gfxep.<backend>": that backend's devices only, software ones (reference, lavapipe) included */
  char reg[64];
  snprintf(reg, sizeof reg, "gfxep.%s", backend);
  backend_complete = !strcmp(backend, "reference") || !strcmp(backend, "cuda");
  if (ortkit_failed(&k, k.api->RegisterExecutionProviderLibrary(k.env, reg, ortkit_plugin_path()), "register"))
    return 2;
  if (ortkit_find_devices(&k, backend, &device, 1) == 0) {
    printf("gfxep offers no %s device here: skipped\n", backend);
    return 77;
  }
  if (ortkit_failed(&k, k.api->CreateSharedAllocator(k.env, device, OrtDeviceMemoryType_DEFAULT, OrtDeviceAllocator,
                                                     NULL, &dev_alloc), "device allocator") ||
      ortkit_failed(&k, k.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu_mem), "cpu info"))
    return 2;
  printf("# ONNX Runtime %s, gfxep backend %s, %zu cases from %s\n", k.version, backend, n_cases, dir);

  result* res = calloc(n_cases + 1, sizeof *res);
  size_t n = 0;
  uint64_t t0 = ortkit_now_ns();
  const cJSON* c = NULL;
  cJSON_ArrayForEach(c, cases) {
    if (filter && !strstr(json_str(c, "name"), filter)) continue;
    run_case(dir, c, &res[n++], run_all);
  }
  judge_claims(res, n);
  static const char* const kind_names[] = {"pass", "left to ORT", "left to ORT (no EP runs it)", "not implemented",
                                           "FAIL"};
  for (size_t i = 0; i < n; i++) {
    const result* r = &res[i];
    if (r->kind == R_PASS || r->kind == R_LEFT_PASS)
      printf("%-4s %-36s %-12s max abs %.3g, max rel %.3g%s%s\n", r->kind == R_PASS ? "ok" : "ok",
             json_str(r->c, "name"), r->kind == R_PASS ? "on gfxep" : "left to ORT", r->d.max_abs, r->d.max_rel,
             r->why[0] ? "; " : "", r->kind == R_PASS ? "" : r->why);
    else
      printf("%-4s %-36s %s%s%s\n", r->kind == R_FAIL ? "FAIL" : "--", json_str(r->c, "name"),
             r->kind == R_FAIL ? "" : kind_names[r->kind], r->kind == R_FAIL ? "" : ": ", r->why);
  }
  op_stats* ops = calloc(n + 1, sizeof *ops);
  size_t n_ops = collect_stats(res, n, ops);
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) failed += res[i].kind == R_FAIL;
  printf("# %zu cases in %.1f s, %zu failed\n", n, (double)(ortkit_now_ns() - t0) / 1e9, failed);
  print_summary(stdout, backend, ops, n_ops, res, n);
  if (summary_path) {
    FILE* f = fopen(summary_path, "w");
    if (f) {
      print_summary(f, backend, ops, n_ops, res, n);
      fclose(f);
    } else {
      fprintf(stderr, "cannot write %s\n", summary_path);
      failed++;
    }
  }
  free(ops);
  free(res);
  k.api->ReleaseMemoryInfo(cpu_mem);
  OrtStatus* st = k.api->ReleaseSharedAllocator(k.env, device, OrtDeviceMemoryType_DEFAULT);
  if (st) k.api->ReleaseStatus(st);
  st = k.api->UnregisterExecutionProviderLibrary(k.env, reg);
  if (st) k.api->ReleaseStatus(st);
  ortkit_close(&k);
  cJSON_Delete(manifest);
  free(text);
  return failed ? 1 : 0;
}
