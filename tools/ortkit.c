#define _XOPEN_SOURCE 700 /* realpath */
#include "ortkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dynlib.h"

#ifdef _WIN32
#include <malloc.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

#ifndef GFXEP_DEFAULT_ORT_LIB
#ifdef _WIN32
#define GFXEP_DEFAULT_ORT_LIB "onnxruntime.dll"
#else
#define GFXEP_DEFAULT_ORT_LIB "libonnxruntime.so"
#endif
#endif
#ifndef GFXEP_DEFAULT_PLUGIN
#ifdef _WIN32
#define GFXEP_DEFAULT_PLUGIN "gfxep.dll"
#else
#define GFXEP_DEFAULT_PLUGIN "libgfxep.so"
#endif
#endif

typedef const OrtApiBase* (*get_api_base_fn)(void);

static void release_status(ortkit* k, OrtStatus* s) {
  if (s) k->api->ReleaseStatus(s);
}

OrtStatus* ortkit_placement_summarize(ortkit* k, OrtSession* s, ortkit_placement_summary* out) {
  const OrtApi* api = k->api;
  const OrtEpAssignedSubgraph* const* subgraphs = NULL;
  size_t n = 0;
  memset(out, 0, sizeof *out);
  OrtStatus* st = api->Session_GetEpGraphAssignmentInfo(s, &subgraphs, &n);
  if (st) return st;
  for (size_t i = 0; i < n; i++) {
    const char* ep = NULL;
    const OrtEpAssignedNode* const* nodes = NULL;
    size_t nn = 0;
    if ((st = api->EpAssignedSubgraph_GetEpName(subgraphs[i], &ep))) return st;
    if ((st = api->EpAssignedSubgraph_GetNodes(subgraphs[i], &nodes, &nn))) return st;
    if (strcmp(ep, "gfxep") == 0) {
      out->gfxep_partitions++;
      out->on_gfxep += nn;
      continue;
    }
    out->on_other += nn;
    for (size_t j = 0; j < nn; j++) {
      const char* op = NULL;
      if ((st = api->EpAssignedNode_GetOperatorType(nodes[j], &op))) return st;
      int t = 0;
      while (t < out->n_elsewhere && strcmp(out->elsewhere[t].op, op) != 0) t++;
      if (t == out->n_elsewhere) {
        if (t == ORTKIT_MAX_OP_TYPES) {
          t--; /* the last entry collects the rest */
          snprintf(out->elsewhere[t].op, sizeof out->elsewhere[t].op, "(other types)");
        } else {
          snprintf(out->elsewhere[t].op, sizeof out->elsewhere[t].op, "%s", op);
          out->n_elsewhere++;
        }
      }
      out->elsewhere[t].count++;
    }
  }
  return NULL;
}

uint64_t ortkit_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

char* ortkit_temp_path(char* out, size_t size, const char* stem) {
#ifdef _WIN32
  const char* dir = getenv("TEMP");
  snprintf(out, size, "%s\\%s_%lu", dir && dir[0] ? dir : ".", stem, (unsigned long)GetCurrentProcessId());
#else
  const char* dir = getenv("TMPDIR");
  snprintf(out, size, "%s/%s_%ld", dir && dir[0] ? dir : "/tmp", stem, (long)getpid());
#endif
  return out;
}

#ifdef _WIN32
size_t ortkit_page_size(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwPageSize;
}
void* ortkit_aligned_alloc(size_t alignment, size_t bytes) { return _aligned_malloc(bytes, alignment); }
void ortkit_aligned_free(void* p) { _aligned_free(p); }
#else
size_t ortkit_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }
void* ortkit_aligned_alloc(size_t alignment, size_t bytes) { return aligned_alloc(alignment, bytes); }
void ortkit_aligned_free(void* p) { free(p); }
#endif

int ortkit_setenv(const char* name, const char* value) {
#ifdef _WIN32
  return _putenv_s(name, value) ? -1 : 0;
#else
  return setenv(name, value, 1);
#endif
}

#ifdef _WIN32
/* Paths ORT takes are UTF-16 on Windows: a few converted paths live at once, in a ring. */
const ORTCHAR_T* ortkit_ort_path(const char* path) {
  static _Thread_local wchar_t ring[4][4096];
  static _Thread_local int next;
  wchar_t* w = ring[next++ % 4];
  if (!MultiByteToWideChar(CP_UTF8, 0, path, -1, w, 4096)) w[0] = 0;
  return w;
}

static const char* absolute_path(const char* p, char* out, size_t size) {
  return _fullpath(out, p, size) ? out : p;
}
#else
const ORTCHAR_T* ortkit_ort_path(const char* path) { return path; }

static const char* absolute_path(const char* p, char* out, size_t size) {
  (void)size; /* realpath writes at most PATH_MAX bytes; out has 4096 */
  return realpath(p, out) ? out : p;
}
#endif

/* ORT resolves a relative library path against its own folder, not the working directory: hand it
 * an absolute one. */
const char* ortkit_plugin_path_text(void) {
  static char resolved[4096];
  const char* p = getenv("GFXEP_PLUGIN");
  if (!p || !p[0]) p = GFXEP_DEFAULT_PLUGIN;
  return absolute_path(p, resolved, sizeof resolved);
}

const ORTCHAR_T* ortkit_plugin_path(void) { return ortkit_ort_path(ortkit_plugin_path_text()); }

void* ortkit_plugin_symbol(const char* name) {
  static void* lib;
  char err[512];
  if (!lib) lib = gfx_dynlib_open(ortkit_plugin_path_text(), err, sizeof err);
  if (!lib) fprintf(stderr, "ortkit: %s\n", err);
  return lib ? gfx_dynlib_symbol(lib, name) : NULL;
}

int ortkit_open(ortkit* k, const char* lib_path, OrtLoggingLevel level, char* err, size_t err_size) {
  return ortkit_open_logged(k, lib_path, level, NULL, NULL, err, err_size);
}

int ortkit_open_logged(ortkit* k, const char* lib_path, OrtLoggingLevel level, OrtLoggingFunction log, void* param,
                       char* err, size_t err_size) {
  memset(k, 0, sizeof *k);
  if (!lib_path) lib_path = getenv("GFXEP_ORT_LIB");
  if (!lib_path || !lib_path[0]) lib_path = GFXEP_DEFAULT_ORT_LIB;
  k->lib_path = lib_path;
  char why[1024];
  k->lib = gfx_dynlib_open(lib_path, why, sizeof why);
  if (!k->lib) {
    snprintf(err, err_size, "cannot load ONNX Runtime from %s: %s", lib_path, why);
    return -1;
  }
  get_api_base_fn get;
  void* sym = gfx_dynlib_symbol(k->lib, "OrtGetApiBase");
  memcpy(&get, &sym, sizeof get);
  const OrtApiBase* base = get ? get() : NULL;
  k->api = base ? base->GetApi(ORT_API_VERSION) : NULL;
  if (!k->api) {
    snprintf(err, err_size, "%s does not serve ORT API version %d (it is %s)", lib_path, ORT_API_VERSION,
             base ? base->GetVersionString() : "unknown");
    gfx_dynlib_close(k->lib);
    k->lib = NULL;
    return -1;
  }
  k->version = base->GetVersionString();
  OrtStatus* s = log ? k->api->CreateEnvWithCustomLogger(log, param, level, "gfxep", &k->env)
                     : k->api->CreateEnv(level, "gfxep", &k->env);
  if (s) {
    snprintf(err, err_size, "CreateEnv: %s", k->api->GetErrorMessage(s));
    k->api->ReleaseStatus(s);
    return -1;
  }
  return 0;
}

void ortkit_close(ortkit* k) {
  if (k->env) k->api->ReleaseEnv(k->env);
  /* ORT is not unloaded: its static destructors may run at exit, and that is what users do too */
  memset(k, 0, sizeof *k);
}

int ortkit_failed(ortkit* k, OrtStatus* s, const char* what) {
  if (!s) return 0;
  fprintf(stderr, "%s: %s\n", what, k->api->GetErrorMessage(s));
  k->api->ReleaseStatus(s);
  return 1;
}

const char* ortkit_device_meta(ortkit* k, const OrtEpDevice* d, const char* key) {
  const OrtKeyValuePairs* m = k->api->EpDevice_EpMetadata(d);
  return m ? k->api->GetKeyValue(m, key) : NULL;
}

size_t ortkit_find_devices(ortkit* k, const char* backend, const OrtEpDevice** out, size_t max) {
  const OrtEpDevice* const* all = NULL;
  size_t n = 0, found = 0;
  OrtStatus* s = k->api->GetEpDevices(k->env, &all, &n);
  if (s) {
    k->api->ReleaseStatus(s);
    return 0;
  }
  /* GPUs (a PCI address) first, then CPU implementations (lavapipe, the reference backend), each in
   * ORT's order: a caller taking the first device gets the GPU on a machine that has both */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n && found < max; i++) {
      if (strcmp(k->api->EpDevice_EpName(all[i]), "gfxep") != 0) continue;
      const char* b = ortkit_device_meta(k, all[i], "gfxep.backend");
      if (backend && (!b || strcmp(b, backend) != 0)) continue;
      int gpu = ortkit_device_meta(k, all[i], "gfxep.pci_bus_id") != NULL;
      if (gpu == (pass == 0)) out[found++] = all[i];
    }
  return found;
}

static OrtStatus* read_file(ortkit* k, const char* path, void** data, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return k->api->CreateStatus(ORT_NO_SUCHFILE, path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *data = malloc(n > 0 ? (size_t)n : 1);
  size_t got = *data ? fread(*data, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!*data || got != (size_t)n) {
    free(*data);
    return k->api->CreateStatus(ORT_FAIL, "reading the model failed");
  }
  *size = (size_t)n;
  return NULL;
}

/* GFXEP_EP_OPTIONS="key=value,key=value" adds gfxep options to every session made here (for
 * measuring with an option flipped without rebuilding); a key the caller gives itself keeps the
 * caller's value (a test of that option's values must see its own). */
#define MAX_EP_OPTIONS 16
static size_t merge_env_options(const char* const* keys, const char* const* values, size_t n, const char** k_out,
                                const char** v_out, char* storage, size_t storage_size) {
  size_t m = 0;
  for (size_t i = 0; i < n && m < MAX_EP_OPTIONS; i++, m++) {
    k_out[m] = keys[i];
    v_out[m] = values[i];
  }
  const char* env = getenv("GFXEP_EP_OPTIONS");
  if (!env || !env[0]) return m;
  snprintf(storage, storage_size, "%s", env);
  char* save = NULL;
  for (char* item = strtok_r(storage, ",", &save); item && m < MAX_EP_OPTIONS; item = strtok_r(NULL, ",", &save)) {
    char* eq = strchr(item, '=');
    if (!eq) continue;
    *eq = 0;
    int given = 0;
    for (size_t i = 0; i < n && !given; i++) given = strcmp(keys[i], item) == 0;
    if (given) continue;
    k_out[m] = item;
    v_out[m++] = eq + 1;
  }
  return m;
}

/* GFXEP_ORT_GRAPH_OPT: ORT's basic optimizations fold BatchNormalization into Conv before any EP
 * sees the graph; "disable" keeps a model's nodes as written. */
static OrtStatus* set_graph_opt(ortkit* k, OrtSessionOptions* so) {
  static const struct {
    const char* name;
    GraphOptimizationLevel level;
  } levels[] = {{"disable", ORT_DISABLE_ALL}, {"basic", ORT_ENABLE_BASIC}, {"extended", ORT_ENABLE_EXTENDED},
                {"all", ORT_ENABLE_ALL}};
  const char* env = getenv("GFXEP_ORT_GRAPH_OPT");
  if (!env || !env[0]) return NULL;
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (!strcmp(env, levels[i].name)) return k->api->SetSessionGraphOptimizationLevel(so, levels[i].level);
  return k->api->CreateStatus(ORT_INVALID_ARGUMENT, "GFXEP_ORT_GRAPH_OPT: expected disable, basic, extended or all");
}

OrtStatus* ortkit_session(ortkit* k, const char* model_path, const OrtEpDevice* device, const char* const* keys,
                          const char* const* values, size_t n_options, OrtSession** out) {
  /* GFXEP_ORT_PROFILE=PREFIX: ORT's profile of the gfxep session (written when the session is released;
   * gfxep's nodes appear with their device times), for tools that have no profiling flag of their own */
  return ortkit_session_profiled(k, model_path, device, keys, values, n_options, getenv("GFXEP_ORT_PROFILE"), out);
}

OrtStatus* ortkit_session_profiled(ortkit* k, const char* model_path, const OrtEpDevice* device,
                                   const char* const* keys, const char* const* values, size_t n_options,
                                   const char* profile, OrtSession** out) {
  const OrtApi* api = k->api;
  OrtSessionOptions* so = NULL;
  const char* all_keys[MAX_EP_OPTIONS];
  const char* all_values[MAX_EP_OPTIONS];
  char storage[1024];
  size_t n_all = merge_env_options(keys, values, n_options, all_keys, all_values, storage, sizeof storage);
  OrtStatus* s = api->CreateSessionOptions(&so);
  if (!s) s = api->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1");
  if (!s) s = set_graph_opt(k, so);
  if (!s && device) s = api->SessionOptionsAppendExecutionProvider_V2(so, k->env, &device, 1, all_keys, all_values, n_all);
  if (!s && device && profile && profile[0]) s = api->EnableProfiling(so, ortkit_ort_path(profile));
  void* bytes = NULL;
  size_t size = 0;
  if (!s) s = read_file(k, model_path, &bytes, &size);
  if (!s) s = api->CreateSessionFromArray(k->env, bytes, size, so, out);
  free(bytes);
  if (so) api->ReleaseSessionOptions(so);
  return s;
}

void ortkit_tensors_free(ortkit_tensor* t, size_t n) {
  if (!t) return;
  for (size_t i = 0; i < n; i++) free(t[i].data);
  free(t);
}

static uint64_t next_random(uint64_t* state) {
  /* splitmix64: seeded, the same on every machine */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

OrtStatus* ortkit_random_inputs(ortkit* k, OrtSession* sess, uint64_t seed, int64_t dyn_dim, ortkit_tensor** out,
                                size_t* n) {
  const OrtApi* api = k->api;
  OrtAllocator* alloc = NULL;
  OrtStatus* s = api->GetAllocatorWithDefaultOptions(&alloc);
  if (s) return s;
  size_t count = 0;
  if ((s = api->SessionGetInputCount(sess, &count))) return s;
  ortkit_tensor* t = calloc(count + 1, sizeof *t);
  uint64_t state = seed;
  for (size_t i = 0; i < count && !s; i++) {
    char* name = NULL;
    OrtTypeInfo* ti = NULL;
    const OrtTensorTypeAndShapeInfo* tti = NULL;
    if ((s = api->SessionGetInputName(sess, i, alloc, &name))) break;
    snprintf(t[i].name, sizeof t[i].name, "%s", name);
    release_status(k, api->AllocatorFree(alloc, name));
    if ((s = api->SessionGetInputTypeInfo(sess, i, &ti))) break;
    s = api->CastTypeInfoToTensorInfo(ti, &tti);
    if (!s) s = api->GetDimensionsCount(tti, &t[i].rank);
    if (!s && t[i].rank > 8) s = api->CreateStatus(ORT_INVALID_ARGUMENT, "input rank > 8");
    if (!s) s = api->GetDimensions(tti, t[i].dims, t[i].rank);
    api->ReleaseTypeInfo(ti);
    if (s) break;
    t[i].count = 1;
    for (size_t d = 0; d < t[i].rank; d++) {
      if (t[i].dims[d] < 0) t[i].dims[d] = dyn_dim;
      t[i].count *= (size_t)t[i].dims[d];
    }
    t[i].data = malloc(sizeof(float) * (t[i].count + 1));
    for (size_t e = 0; e < t[i].count; e++)
      t[i].data[e] = (float)((double)(next_random(&state) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  if (s) {
    ortkit_tensors_free(t, count);
    return s;
  }
  *out = t;
  *n = count;
  return NULL;
}

OrtStatus* ortkit_read_inputs(ortkit* k, const char* path, ortkit_tensor* in, size_t n) {
  char msg[640];
  size_t want = 0;
  for (size_t i = 0; i < n; i++) want += in[i].count * sizeof(float);
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(msg, sizeof msg, "cannot open the input file %s", path);
    return k->api->CreateStatus(ORT_INVALID_ARGUMENT, msg);
  }
  long have = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  int ok = have >= 0 && (size_t)have == want && fseek(f, 0, SEEK_SET) == 0;
  for (size_t i = 0; ok && i < n; i++) ok = fread(in[i].data, sizeof(float), in[i].count, f) == in[i].count;
  fclose(f);
  if (ok) return NULL;
  snprintf(msg, sizeof msg,
           "the input file %s has %ld bytes; the model's %zu input(s) take %zu (float32, in input order)", path,
           have, n, want);
  return k->api->CreateStatus(ORT_INVALID_ARGUMENT, msg);
}

OrtStatus* ortkit_to_float(const OrtApi* api, ONNXTensorElementDataType type, const void* src, float* dst, size_t n) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: memcpy(dst, src, sizeof(float) * n); return NULL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
      for (size_t e = 0; e < n; e++) dst[e] = (float)((const int64_t*)src)[e];
      return NULL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      for (size_t e = 0; e < n; e++) dst[e] = (float)((const int32_t*)src)[e];
      return NULL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
      for (size_t e = 0; e < n; e++) dst[e] = (float)((const uint8_t*)src)[e];
      return NULL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
      for (size_t e = 0; e < n; e++) dst[e] = (float)((const int8_t*)src)[e];
      return NULL;
    default: return api->CreateStatus(ORT_INVALID_ARGUMENT, "an output of an element type ortkit does not compare");
  }
}

OrtStatus* ortkit_run(ortkit* k, OrtSession* sess, OrtRunOptions* run_options, const ortkit_tensor* in, size_t n_in,
                      ortkit_tensor** out, size_t* n_out) {
  const OrtApi* api = k->api;
  OrtAllocator* alloc = NULL;
  OrtMemoryInfo* cpu = NULL;
  OrtStatus* s = api->GetAllocatorWithDefaultOptions(&alloc);
  if (!s) s = api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu);
  if (s) return s;
  size_t count = 0;
  if ((s = api->SessionGetOutputCount(sess, &count))) {
    api->ReleaseMemoryInfo(cpu);
    return s;
  }
  OrtValue** ins = calloc(n_in + 1, sizeof *ins);
  const char** in_names = calloc(n_in + 1, sizeof *in_names);
  OrtValue** outs = calloc(count + 1, sizeof *outs);
  char** out_names = calloc(count + 1, sizeof *out_names);
  ortkit_tensor* t = calloc(count + 1, sizeof *t);
  for (size_t i = 0; i < n_in && !s; i++) {
    in_names[i] = in[i].name;
    s = api->CreateTensorWithDataAsOrtValue(cpu, in[i].data, in[i].count * sizeof(float), in[i].dims, in[i].rank,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &ins[i]);
  }
  for (size_t i = 0; i < count && !s; i++) s = api->SessionGetOutputName(sess, i, alloc, &out_names[i]);
  if (!s)
    s = api->Run(sess, run_options, in_names, (const OrtValue* const*)ins, n_in, (const char* const*)out_names, count,
                 outs);
  for (size_t i = 0; i < count && !s; i++) {
    OrtTensorTypeAndShapeInfo* info = NULL;
    const float* data = NULL;
    snprintf(t[i].name, sizeof t[i].name, "%s", out_names[i]);
    s = api->GetTensorTypeAndShape(outs[i], &info);
    if (!s) s = api->GetDimensionsCount(info, &t[i].rank);
    if (!s && t[i].rank > 8) s = api->CreateStatus(ORT_FAIL, "output rank > 8");
    if (!s) s = api->GetDimensions(info, t[i].dims, t[i].rank);
    if (!s) s = api->GetTensorShapeElementCount(info, &t[i].count);
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    if (!s) s = api->GetTensorElementType(info, &type);
    if (info) api->ReleaseTensorTypeAndShapeInfo(info);
    if (!s) s = api->GetTensorData(outs[i], (const void**)&data);
    if (!s) {
      t[i].data = malloc(sizeof(float) * (t[i].count + 1));
      /* an empty output may have no data pointer at all */
      if (t[i].count) s = ortkit_to_float(api, type, data, t[i].data, t[i].count);
    }
  }
  for (size_t i = 0; i < n_in; i++)
    if (ins[i]) api->ReleaseValue(ins[i]);
  for (size_t i = 0; i < count; i++) {
    if (outs[i]) api->ReleaseValue(outs[i]);
    if (out_names[i]) release_status(k, api->AllocatorFree(alloc, out_names[i]));
  }
  free(ins);
  free(in_names);
  free(outs);
  free(out_names);
  api->ReleaseMemoryInfo(cpu);
  if (s) {
    ortkit_tensors_free(t, count);
    return s;
  }
  *out = t;
  *n_out = count;
  return NULL;
}

int ortkit_compare(const ortkit_tensor* a, const ortkit_tensor* b, size_t n, double atol, double rtol,
                   ortkit_diff* d) {
  memset(d, 0, sizeof *d);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (a[i].count != b[i].count || a[i].rank != b[i].rank ||
        memcmp(a[i].dims, b[i].dims, sizeof(int64_t) * a[i].rank) != 0) {
      d->mismatched += a[i].count > b[i].count ? a[i].count : b[i].count;
      bad = 1;
      continue;
    }
    for (size_t e = 0; e < a[i].count; e++) {
      double x = a[i].data[e], y = b[i].data[e];
      if (!isfinite(x) || !isfinite(y)) {
        if (isfinite(x) != isfinite(y) || (isnan(x) != isnan(y))) {
          d->nan_mismatch = 1;
          bad = 1;
        }
        continue;
      }
      double diff = fabs(x - y);
      if (diff > d->max_abs) d->max_abs = diff;
      if (fabs(y) > 1e-3 && diff / fabs(y) > d->max_rel) d->max_rel = diff / fabs(y);
      if (diff > atol + rtol * fabs(y)) {
        d->mismatched++;
        bad = 1;
      }
    }
  }
  return bad;
}

OrtStatus* ortkit_count_on_gfxep(ortkit* k, OrtSession* s, const char* op, size_t* count) {
  const OrtApi* api = k->api;
  const OrtEpAssignedSubgraph* const* subgraphs = NULL;
  size_t n = 0;
  *count = 0;
  OrtStatus* st = api->Session_GetEpGraphAssignmentInfo(s, &subgraphs, &n);
  for (size_t i = 0; i < n && !st; i++) {
    const char* ep = NULL;
    const OrtEpAssignedNode* const* nodes = NULL;
    size_t nn = 0;
    if ((st = api->EpAssignedSubgraph_GetEpName(subgraphs[i], &ep))) break;
    if (strcmp(ep, "gfxep") != 0) continue;
    if ((st = api->EpAssignedSubgraph_GetNodes(subgraphs[i], &nodes, &nn))) break;
    for (size_t j = 0; j < nn && !st; j++) {
      const char* type = NULL;
      if (!(st = api->EpAssignedNode_GetOperatorType(nodes[j], &type))) *count += strcmp(type, op) == 0;
    }
  }
  return st;
}

OrtStatus* ortkit_placement(ortkit* k, OrtSession* s, size_t* on_gfxep, size_t* on_other, int verbose) {
  const OrtApi* api = k->api;
  const OrtEpAssignedSubgraph* const* subgraphs = NULL;
  size_t n = 0;
  *on_gfxep = *on_other = 0;
  OrtStatus* st = api->Session_GetEpGraphAssignmentInfo(s, &subgraphs, &n);
  if (st) return st;
  for (size_t i = 0; i < n; i++) {
    const char* ep = NULL;
    const OrtEpAssignedNode* const* nodes = NULL;
    size_t nn = 0;
    if ((st = api->EpAssignedSubgraph_GetEpName(subgraphs[i], &ep))) return st;
    if ((st = api->EpAssignedSubgraph_GetNodes(subgraphs[i], &nodes, &nn))) return st;
    int ours = strcmp(ep, "gfxep") == 0;
    for (size_t j = 0; j < nn; j++) {
      const char* name = NULL;
      const char* op = NULL;
      if ((st = api->EpAssignedNode_GetName(nodes[j], &name))) return st;
      if ((st = api->EpAssignedNode_GetOperatorType(nodes[j], &op))) return st;
      if (verbose) printf("  %-24s %-12s %s\n", ep, op, name);
      if (ours)
        ++*on_gfxep;
      else
        ++*on_other;
    }
  }
  return NULL;
}
