/* gfxep — a small kit for programs that drive ONNX Runtime with gfxep: the example runner and the
 * ORT-level tests. It loads ORT at run time (so one binary tests 1.29 and 1.30), registers the
 * plugin, builds sessions on gfxep or on ORT's CPU EP, feeds seeded random inputs and compares.
 *
 * Environment: GFXEP_ORT_LIB overrides the ONNX Runtime library, GFXEP_PLUGIN the plugin path,
 * GFXEP_EP_OPTIONS ("key=value,...") adds gfxep options to every session, GFXEP_ORT_GRAPH_OPT
 * (disable|basic|extended|all) sets ORT's graph optimization level of every session (default: ORT's).
 */
#ifndef GFXEP_TOOLS_ORTKIT_H
#define GFXEP_TOOLS_ORTKIT_H

#include <onnxruntime_c_api.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ortkit {
  void* lib;
  const OrtApi* api;
  const char* version; /* "1.29.0" */
  const char* lib_path;
  OrtEnv* env;
} ortkit;

/* Loads ORT (lib_path NULL: GFXEP_ORT_LIB, else the build's default) and creates an env. Returns 0,
 * or -1 with a message in err. */
int ortkit_open(ortkit* k, const char* lib_path, OrtLoggingLevel level, char* err, size_t err_size);
/* The same with every ORT log message sent to `log` (tests count what gfxep logs). */
int ortkit_open_logged(ortkit* k, const char* lib_path, OrtLoggingLevel level, OrtLoggingFunction log, void* param,
                       char* err, size_t err_size);
void ortkit_close(ortkit* k);
/* The plugin's absolute path: as ORT takes it (UTF-16 on Windows), and as text for messages. */
const ORTCHAR_T* ortkit_plugin_path(void);
const char* ortkit_plugin_path_text(void);
/* An export of that plugin library besides CreateEpFactories (include/gfxep.h), or NULL. The library
 * is opened once more for it and kept, which is what ORT's loaded copy is anyway. */
void* ortkit_plugin_symbol(const char* name);
/* A UTF-8 path as ORT's path arguments take it (the same pointer on POSIX; on Windows a converted
 * copy that stays valid for the next three calls on this thread). */
const ORTCHAR_T* ortkit_ort_path(const char* path);

/* Prints and frees a status; returns 1 when it was an error. */
int ortkit_failed(ortkit* k, OrtStatus* s, const char* what);

/* The gfxep EP devices whose gfxep.backend is `backend` (NULL: any), GPUs (devices with a PCI address)
 * before CPU implementations. Returns how many were found. */
size_t ortkit_find_devices(ortkit* k, const char* backend, const OrtEpDevice** out, size_t max);
const char* ortkit_device_meta(ortkit* k, const OrtEpDevice* d, const char* key);

/* A session on `device` (NULL: ORT's CPU EP only) with gfxep options, and those of GFXEP_EP_OPTIONS. */
OrtStatus* ortkit_session(ortkit* k, const char* model_path, const OrtEpDevice* device, const char* const* keys,
                          const char* const* values, size_t n_options, OrtSession** out);
/* The same with ORT's profiling on, its file named from `profile` (NULL: off). */
OrtStatus* ortkit_session_profiled(ortkit* k, const char* model_path, const OrtEpDevice* device,
                                   const char* const* keys, const char* const* values, size_t n_options,
                                   const char* profile, OrtSession** out);

/* Host float tensors. */
typedef struct ortkit_tensor {
  char name[128];
  int64_t dims[8];
  size_t rank;
  float* data;
  size_t count;
} ortkit_tensor;

void ortkit_tensors_free(ortkit_tensor* t, size_t n);
/* Random inputs in [-1, 1) for every float input of the session; dynamic dims take dyn_dim. */
OrtStatus* ortkit_random_inputs(ortkit* k, OrtSession* s, uint64_t seed, int64_t dyn_dim, ortkit_tensor** out,
                                size_t* n);
/* Replaces the inputs' values with a file's: raw little-endian float32, every input's elements in the
 * session's input order, nothing else (a file of another size is refused, naming both sizes). */
OrtStatus* ortkit_read_inputs(ortkit* k, const char* path, ortkit_tensor* in, size_t n);
/* Runs with host inputs and returns host float outputs. run_options may be NULL. */
OrtStatus* ortkit_run(ortkit* k, OrtSession* s, OrtRunOptions* run_options, const ortkit_tensor* in, size_t n_in,
                      ortkit_tensor** out, size_t* n_out);

/* Output values as floats: float as it is; integer and bool outputs (labels, indices, masks) as their
 * values, exact below 2^24, so that they compare like any other output. */
OrtStatus* ortkit_to_float(const OrtApi* api, ONNXTensorElementDataType type, const void* src, float* dst, size_t n);

typedef struct ortkit_diff {
  double max_abs;     /* max |a - b| */
  double max_rel;     /* max |a - b| / max(|b|, 1e-6) over elements with |b| > 1e-3 */
  size_t mismatched;  /* elements outside atol + rtol * |b| */
  int nan_mismatch;   /* NaN/Inf in one and not the other */
} ortkit_diff;

/* Compares a against the reference b; returns 0 when every output matches within tolerance. */
int ortkit_compare(const ortkit_tensor* a, const ortkit_tensor* b, size_t n, double atol, double rtol,
                   ortkit_diff* d);

/* Counts nodes per EP (needs the session created with session.record_ep_graph_assignment_info=1,
 * which ortkit_session sets). Prints "ep: op name" lines when verbose. */
OrtStatus* ortkit_placement(ortkit* k, OrtSession* s, size_t* on_gfxep, size_t* on_other, int verbose);

/* The nodes of operator type op that ORT placed on gfxep (the same recording as ortkit_placement). */
OrtStatus* ortkit_count_on_gfxep(ortkit* k, OrtSession* s, const char* op, size_t* count);

/* Where the nodes went, for reports: gfxep's partitions and the operator types left to other EPs. */
#define ORTKIT_MAX_OP_TYPES 64
typedef struct ortkit_placement_summary {
  size_t on_gfxep, on_other;
  size_t gfxep_partitions;
  struct {
    char op[64];
    size_t count;
  } elsewhere[ORTKIT_MAX_OP_TYPES]; /* operator types not on gfxep, with their node counts */
  int n_elsewhere;                  /* types listed; more than ORTKIT_MAX_OP_TYPES are counted in the last */
} ortkit_placement_summary;
OrtStatus* ortkit_placement_summarize(ortkit* k, OrtSession* s, ortkit_placement_summary* out);

uint64_t ortkit_now_ns(void);

/* A file path in the system's folder for temporary files, unique to this process:
 * <tmp>/<stem>_<pid>. Returns out. */
char* ortkit_temp_path(char* out, size_t size, const char* stem);

/* The host's page size, and page-aligned host blocks (aligned_alloc, or _aligned_malloc on Windows,
 * whose C runtime has no aligned_alloc): what host-memory imports are made from. */
size_t ortkit_page_size(void);
void* ortkit_aligned_alloc(size_t alignment, size_t bytes);
void ortkit_aligned_free(void* p);

/* Sets an environment variable of this process (setenv, or _putenv_s on Windows). Returns 0. */
int ortkit_setenv(const char* name, const char* value);

#endif
