/* gfxep-run — runs an ONNX model through ONNX Runtime with gfxep and with ORT's own CPU EP on the same
 * seeded random inputs, then prints where each node ran, how close the outputs are, and timings.
 *
 *   gfxep-run [--backend cuda|vulkan|reference] [--runs N] [--dyn D] [--atol A] [--rtol R] [--tol-scale S]
 *             [--oracle other.onnx] [--json FILE] [--inputs FILE.f32] [--graph-opt disable|basic|extended|all]
 *             [--quiet] [--detections] model.onnx [model.onnx...]
 *
 * --runs N timed runs after a warm-up (0: the warm-up alone, nothing timed; on the reference backend,
 * which records nothing to replay, not even that).
 * --inputs feeds the values of a file instead (raw float32, every input's elements in input order):
 * a network meant for frames is checked on frames, e.g. frame interpolation, whose warps turn a small
 * error in the flow into a large one on noise and a small one on a picture.
 * --backend picks the gfxep device (default: the first GPU device gfxep offers, else reference).
 * --oracle runs ORT's CPU EP on other.onnx instead of model.onnx: a float16 model is checked against
 * its float32 twin (the same weights rounded to float16). Inputs are generated once; a float16 input
 * gets them rounded to float16, and the twin gets the same rounded values in float32.
 * --tol-scale adds S x max|reference| of each output to atol (a bound relative to the output's scale).
 * The outputs are compared twice: after the first run (node by node) and after the timed runs (with
 * graph replay on, the default, a replay of the recorded partitions); both must agree.
 * --json writes the result (nodes, per-output errors of the first and the replayed run, pass, timings, or the
 * error) to FILE.
 * --detections compares the first three outputs as one image's detections (boxes [N, 4], scores [N],
 * labels [N], as torchvision's detectors return them) by matching them as sets (match_detections.h):
 * post-processing may order near-tied detections differently or cut at the tail differently; a box,
 * score or label that disagrees still fails.
 * --graph-opt sets ORT's graph optimization level of both sessions (default: ORT's own, which folds
 * BatchNormalization into Conv before gfxep sees the graph; "disable" keeps the nodes as written).
 * Several models (given as arguments, or one path per line in the file of --models FILE) run in one process (one ORT environment, one registration), each on its own sessions,
 * with a "RESULT pass|MISMATCH|ERROR model on_other=N" line each; --oracle and --json take one model.
 * Exit status (the worst over the models): 0 when the outputs agree within the tolerances, 1 when they do not, 2 on errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "match_detections.h"
#include "ortkit.h"

static void usage(void) {
  fprintf(stderr,
          "usage: gfxep-run [--backend cuda|vulkan|reference] [--runs N] [--dyn D] [--atol A] [--rtol R] [--tol-scale S] "
          "[--oracle other.onnx] [--json FILE] [--inputs FILE.f32] [--graph-opt disable|basic|extended|all] [--quiet] [--detections] [--models LIST] model.onnx [model.onnx...]\n");
}

/* The first error of the run, kept for --json. */
static char first_error[1024];

/* ortkit_failed that also remembers the first message. */
static int failed(ortkit* k, OrtStatus* s, const char* what) {
  if (s && !first_error[0]) snprintf(first_error, sizeof first_error, "%s: %s", what, k->api->GetErrorMessage(s));
  return ortkit_failed(k, s, what);
}

/* ---- float16 models: host tensors stay float; values cross into ORT in the model's own type ---- */

static OrtStatus* elem_type(ortkit* k, OrtTypeInfo* ti, ONNXTensorElementDataType* type) {
  const OrtTensorTypeAndShapeInfo* tti = NULL;
  OrtStatus* s = k->api->CastTypeInfoToTensorInfo(ti, &tti);
  if (!s) s = tti ? k->api->GetTensorElementType(tti, type)
                  : k->api->CreateStatus(ORT_INVALID_ARGUMENT, "a model input or output is not a tensor");
  k->api->ReleaseTypeInfo(ti);
  return s;
}

/* Element type of input (or output) i of the session. */
static OrtStatus* io_type(ortkit* k, OrtSession* s, int output, size_t i, ONNXTensorElementDataType* type) {
  OrtTypeInfo* ti = NULL;
  OrtStatus* st = output ? k->api->SessionGetOutputTypeInfo(s, i, &ti) : k->api->SessionGetInputTypeInfo(s, i, &ti);
  return st ? st : elem_type(k, ti, type);
}

/* Whether any input or output of the session is float16; inputs must be float or float16, outputs may
 * also be integers or bool (compared as float values: labels and indices, exact below 2^24). */
static OrtStatus* has_half_io(ortkit* k, OrtSession* s, int* half) {
  size_t n[2] = {0, 0};
  OrtStatus* st = k->api->SessionGetInputCount(s, &n[0]);
  if (!st) st = k->api->SessionGetOutputCount(s, &n[1]);
  *half = 0;
  for (int o = 0; o < 2 && !st; o++)
    for (size_t i = 0; i < n[o] && !st; i++) {
      ONNXTensorElementDataType t;
      st = io_type(k, s, o, i, &t);
      const int integer = t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 ||
                          t == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 ||
                          t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
      if (!st && t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) *half = 1;
      else if (!st && t != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && !(o == 1 && integer))
        st = k->api->CreateStatus(ORT_INVALID_ARGUMENT, "only float and float16 model inputs, and float, float16, "
                                                        "integer and bool outputs, are handled");
    }
  return st;
}

/* Rounds the inputs the session takes as float16 to float16 values (still stored as float), so that a
 * float32 twin sees exactly the numbers the float16 model gets. */
static OrtStatus* round_half_inputs(ortkit* k, OrtSession* s, ortkit_tensor* in, size_t n_in) {
  for (size_t i = 0; i < n_in; i++) {
    ONNXTensorElementDataType t;
    OrtStatus* st = io_type(k, s, 0, i, &t);
    if (st) return st;
    if (t != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) continue;
    for (size_t e = 0; e < in[i].count; e++) in[i].data[e] = gfx_half_to_float(gfx_float_to_half(in[i].data[e]));
  }
  return NULL;
}

/* Runs a session whose inputs and outputs are float16: converts the host float inputs, and the
 * float16 outputs back to host floats. */
static OrtStatus* run_half(ortkit* k, OrtSession* sess, const ortkit_tensor* in, size_t n_in, ortkit_tensor** out,
                           size_t* n_out) {
  const OrtApi* api = k->api;
  OrtAllocator* alloc = NULL;
  OrtMemoryInfo* cpu = NULL;
  size_t count = 0;
  OrtStatus* s = api->GetAllocatorWithDefaultOptions(&alloc);
  if (!s) s = api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu);
  if (!s) s = api->SessionGetOutputCount(sess, &count);
  OrtValue** ins = calloc(n_in + 1, sizeof *ins);
  uint16_t** halves = calloc(n_in + 1, sizeof *halves);
  const char** in_names = calloc(n_in + 1, sizeof *in_names);
  OrtValue** outs = calloc(count + 1, sizeof *outs);
  char** out_names = calloc(count + 1, sizeof *out_names);
  ortkit_tensor* t = calloc(count + 1, sizeof *t);
  for (size_t i = 0; i < n_in && !s; i++) {
    ONNXTensorElementDataType type;
    in_names[i] = in[i].name;
    if ((s = io_type(k, sess, 0, i, &type))) break;
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) {
      halves[i] = malloc(sizeof(uint16_t) * (in[i].count + 1));
      for (size_t e = 0; e < in[i].count; e++) halves[i][e] = gfx_float_to_half(in[i].data[e]);
      s = api->CreateTensorWithDataAsOrtValue(cpu, halves[i], in[i].count * sizeof(uint16_t), in[i].dims, in[i].rank,
                                              type, &ins[i]);
    } else {
      s = api->CreateTensorWithDataAsOrtValue(cpu, in[i].data, in[i].count * sizeof(float), in[i].dims, in[i].rank,
                                              type, &ins[i]);
    }
  }
  for (size_t i = 0; i < count && !s; i++) s = api->SessionGetOutputName(sess, i, alloc, &out_names[i]);
  if (!s)
    s = api->Run(sess, NULL, in_names, (const OrtValue* const*)ins, n_in, (const char* const*)out_names, count, outs);
  for (size_t i = 0; i < count && !s; i++) {
    OrtTensorTypeAndShapeInfo* info = NULL;
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    const void* data = NULL;
    snprintf(t[i].name, sizeof t[i].name, "%s", out_names[i]);
    s = api->GetTensorTypeAndShape(outs[i], &info);
    if (!s) s = api->GetTensorElementType(info, &type);
    if (!s) s = api->GetDimensionsCount(info, &t[i].rank);
    if (!s && t[i].rank > 8) s = api->CreateStatus(ORT_FAIL, "output rank > 8");
    if (!s) s = api->GetDimensions(info, t[i].dims, t[i].rank);
    if (!s) s = api->GetTensorShapeElementCount(info, &t[i].count);
    if (info) api->ReleaseTensorTypeAndShapeInfo(info);
    if (!s) s = api->GetTensorData(outs[i], &data);
    if (s) break;
    t[i].data = malloc(sizeof(float) * (t[i].count + 1));
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) {
      for (size_t e = 0; e < t[i].count; e++) t[i].data[e] = gfx_half_to_float(((const uint16_t*)data)[e]);
    } else if (t[i].count) { /* an empty output may have no data pointer at all */
      s = ortkit_to_float(api, type, data, t[i].data, t[i].count);
    }
  }
  for (size_t i = 0; i < n_in; i++) {
    if (ins[i]) api->ReleaseValue(ins[i]);
    free(halves[i]);
  }
  for (size_t i = 0; i < count; i++) {
    if (outs[i]) api->ReleaseValue(outs[i]);
    if (out_names[i]) api->ReleaseStatus(api->AllocatorFree(alloc, out_names[i]));
  }
  free(ins);
  free(halves);
  free(in_names);
  free(outs);
  free(out_names);
  if (cpu) api->ReleaseMemoryInfo(cpu);
  if (s) {
    ortkit_tensors_free(t, count);
    return s;
  }
  *out = t;
  *n_out = count;
  return NULL;
}

/* ortkit_run for float sessions (unchanged behaviour), run_half when a float16 tensor is involved. */
static OrtStatus* run_any(ortkit* k, OrtSession* s, int half, const ortkit_tensor* in, size_t n_in, ortkit_tensor** out,
                          size_t* n_out) {
  return half ? run_half(k, s, in, n_in, out, n_out) : ortkit_run(k, s, NULL, in, n_in, out, n_out);
}

static double percentile(double* v, int n, double p) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  int k = (int)(p * (n - 1) + 0.5);
  return v[k];
}

/* Median and p99 of `runs` timed runs after one warm-up, in milliseconds. */
static int time_runs(ortkit* k, OrtSession* s, int half, const ortkit_tensor* in, size_t n_in, int runs, double* p50,
                     double* p99) {
  double* ms = calloc((size_t)runs + 1, sizeof *ms);
  for (int r = -1; r < runs; r++) {
    ortkit_tensor* out = NULL;
    size_t n_out = 0;
    uint64_t t0 = ortkit_now_ns();
    if (failed(k, run_any(k, s, half, in, n_in, &out, &n_out), "run")) {
      free(ms);
      return -1;
    }
    if (r >= 0) ms[r] = (double)(ortkit_now_ns() - t0) / 1e6;
    ortkit_tensors_free(out, n_out);
  }
  if (runs > 0) {
    *p50 = percentile(ms, runs, 0.5);
    *p99 = percentile(ms, runs, 0.99);
  }
  free(ms);
  return 0;
}

/* ---- --json ---- */

static void json_string(FILE* f, const char* v) {
  if (!v) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char* c = (const unsigned char*)v; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

/* A number, or null for NaN and infinities (JSON has neither). */
static void json_number(FILE* f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fputs("null", f);
}

typedef struct output_result {
  ortkit_diff diff;
  double ref_max; /* max |reference| of the output */
  double atol;    /* the absolute tolerance applied: atol + tol-scale x ref_max */
  int bad;
} output_result;

typedef struct run_result {
  const char *model, *oracle, *backend, *device, *ort_version, *graph_opt;
  double abs_tol, rel_tol, tol_scale;
  int placed; /* nodes counted */
  size_t on_gfxep, on_other;
  ortkit_placement_summary placement;
  const ortkit_tensor* outputs; /* reference outputs, for their names */
  const output_result* per_output;
  const output_result* per_replayed; /* the replayed run's, where it was compared (else NULL) */
  size_t n_outputs;
  int compared, pass, timed, runs;
  double ep50, ep99, cpu50, cpu99;
  int detections; /* --detections: the first three outputs compared as sets (det: first run, det_again: replayed) */
  detection_match det, det_again;
} run_result;

static int write_json(const char* path, const run_result* r) {
  FILE* f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "gfxep-run: cannot write %s\n", path);
    return -1;
  }
  fputs("{\n  \"model\": ", f);
  json_string(f, r->model);
  fputs(",\n  \"oracle\": ", f);
  json_string(f, r->oracle);
  fputs(",\n  \"backend\": ", f);
  json_string(f, r->backend);
  fputs(",\n  \"device\": ", f);
  json_string(f, r->device);
  fputs(",\n  \"ort_version\": ", f);
  json_string(f, r->ort_version);
  fputs(",\n  \"graph_opt\": ", f);
  json_string(f, r->graph_opt);
  fprintf(f, ",\n  \"atol\": %g, \"rtol\": %g, \"tol_scale\": %g", r->abs_tol, r->rel_tol, r->tol_scale);
  if (r->placed)
    fprintf(f, ",\n  \"nodes_total\": %zu, \"nodes_gfxep\": %zu", r->on_gfxep + r->on_other, r->on_gfxep);
  else
    fputs(",\n  \"nodes_total\": null, \"nodes_gfxep\": null", f);
  if (r->placed) {
    /* the partitions and what stayed with ONNX Runtime, by operator type */
    fprintf(f, ",\n  \"gfxep_partitions\": %zu, \"ops_elsewhere\": {", r->placement.gfxep_partitions);
    for (int i = 0; i < r->placement.n_elsewhere; i++) {
      fputs(i ? ", " : "", f);
      json_string(f, r->placement.elsewhere[i].op);
      fprintf(f, ": %zu", r->placement.elsewhere[i].count);
    }
    fputs("}", f);
  }
  fputs(",\n  \"outputs\": [", f);
  for (size_t i = 0; r->compared && i < r->n_outputs; i++) {
    const output_result* o = &r->per_output[i];
    fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    json_string(f, r->outputs[i].name);
    fputs(", \"max_abs\": ", f);
    json_number(f, o->diff.max_abs);
    fputs(", \"max_rel\": ", f);
    json_number(f, o->diff.max_rel);
    fputs(", \"max_abs_replayed\": ", f);
    if (r->per_replayed) json_number(f, r->per_replayed[i].diff.max_abs);
    else fputs("null", f);
    fputs(", \"ref_max_abs\": ", f);
    json_number(f, o->ref_max);
    fputs(", \"atol\": ", f);
    json_number(f, o->atol);
    fprintf(f, ", \"mismatched\": %zu, \"nan_mismatch\": %s, \"pass\": %s}", o->diff.mismatched,
            o->diff.nan_mismatch ? "true" : "false", o->bad ? "false" : "true");
  }
  fprintf(f, "%s]", r->compared && r->n_outputs ? "\n  " : "");
  for (int again = 0; r->detections && again < 2; again++) {
    const detection_match* m = again ? &r->det_again : &r->det;
    fprintf(f, ",\n  \"%s\": {\"matched\": %zu, \"excused_tail\": %zu, \"excused_overlap\": %zu, \"unmatched\": %zu, "
               "\"max_box_err\": %.6g, \"max_score_err\": %.6g}",
            again ? "detections_replayed" : "detections", m->matched, m->excused_tail, m->excused_overlap, m->unmatched,
            m->max_box_err, m->max_score_err);
  }
  fprintf(f, ",\n  \"pass\": %s", r->compared && r->pass ? "true" : "false");
  if (r->timed)
    fprintf(f, ",\n  \"timings_ms\": {\"runs\": %d, \"gfxep_p50\": %.4f, \"gfxep_p99\": %.4f, \"cpu_p50\": %.4f, "
               "\"cpu_p99\": %.4f}",
            r->runs, r->ep50, r->ep99, r->cpu50, r->cpu99);
  else
    fputs(",\n  \"timings_ms\": null", f);
  fputs(",\n  \"error\": ", f);
  json_string(f, first_error[0] ? first_error : NULL);
  fputs("\n}\n", f);
  return fclose(f) ? -1 : 0;
}

/* Compares output by output: each output's atol grows by tol_scale x its max |reference|. Returns 1
 * when any output is outside its tolerance; *all aggregates the differences over all outputs. */
static int compare_outputs(const ortkit_tensor* a, const ortkit_tensor* b, size_t n, double atol, double rtol,
                           double tol_scale, output_result* per, ortkit_diff* all) {
  int bad = 0;
  memset(all, 0, sizeof *all);
  for (size_t i = 0; i < n; i++) {
    double ref_max = 0;
    for (size_t e = 0; e < b[i].count; e++)
      if (isfinite(b[i].data[e]) && fabs(b[i].data[e]) > ref_max) ref_max = fabs(b[i].data[e]);
    per[i].ref_max = ref_max;
    per[i].atol = atol + tol_scale * ref_max;
    per[i].bad = ortkit_compare(&a[i], &b[i], 1, per[i].atol, rtol, &per[i].diff);
    bad |= per[i].bad;
    if (per[i].diff.max_abs > all->max_abs) all->max_abs = per[i].diff.max_abs;
    if (per[i].diff.max_rel > all->max_rel) all->max_rel = per[i].diff.max_rel;
    all->mismatched += per[i].diff.mismatched;
    all->nan_mismatch |= per[i].diff.nan_mismatch;
  }
  return bad;
}

/* --detections: outputs 0, 1 and 2 are boxes [N, 4], scores [N] and labels [N]; compared as sets
 * (match_detections.h) with each output's tolerance from compare_outputs, whose element-by-element
 * verdicts on them this replaces. Returns 1 when any output disagrees. */
static int compare_detections(const ortkit_tensor* got, const ortkit_tensor* ref, size_t n, double rtol,
                              output_result* per, detection_match* m) {
  memset(m, 0, sizeof *m);
  int shapes_fit = n >= 3;
  for (int side = 0; shapes_fit && side < 2; side++) {
    const ortkit_tensor* t = side ? ref : got;
    shapes_fit = t[0].count == 4 * t[1].count && t[1].count == t[2].count;
  }
  if (!shapes_fit) {
    snprintf(first_error, sizeof first_error, "--detections needs outputs boxes [N, 4], scores [N], labels [N]");
    return 1;
  }
  const detection_list g = {.boxes = got[0].data, .scores = got[1].data, .labels = got[2].data, .n = got[1].count};
  const detection_list r = {.boxes = ref[0].data, .scores = ref[1].data, .labels = ref[2].data, .n = ref[1].count};
  const int verdict = match_detections(&g, &r, per[0].atol, per[1].atol, rtol, m);
  if (verdict < 0) {
    snprintf(first_error, sizeof first_error, "out of host memory");
    return 1;
  }
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (i < 3) per[i].bad = verdict;
    bad |= per[i].bad;
  }
  return bad;
}

static void print_detections(const detection_match* m, int bad) {
  printf("detections compared as sets: %zu matched (max box error %.3g, max score error %.3g), %zu left over at "
         "a tail, %zu beside an overlapping twin, %zu unmatched -> %s\n",
         m->matched, m->max_box_err, m->max_score_err, m->excused_tail, m->excused_overlap, m->unmatched,
         bad ? "MISMATCH" : "match");
}

/* What every model of one invocation shares. */
typedef struct run_config {
  const char* oracle;
  const char* json;
  const char* inputs; /* --inputs FILE: raw float32 values instead of the seeded random ones */
  int runs, quiet, detections;
  long dyn;
  double abs_tol, rel_tol, tol_scale;
} run_config;

/* One model through gfxep (device dev) and ORT's CPU EP. Returns 0 when the outputs agree, 1 when
 * they do not, 2 on errors; *on_other gets the count of nodes left to other EPs (or -1). */
static int check_model(ortkit* k, const OrtEpDevice* dev, const run_config* c, const char* model, run_result res,
                       long* on_other_out) {
  *on_other_out = -1;
  first_error[0] = 0;
  res.model = model;
  int rc = 2;
  OrtSession *ep_session = NULL, *cpu_session = NULL;
  ortkit_tensor *in = NULL, *out_ep = NULL, *out_cpu = NULL;
  size_t n_in = 0, n_out_ep = 0, n_out_cpu = 0;
  output_result *per_output = NULL, *per_again = NULL;
  int ep_half = 0, cpu_half = 0;
  if (failed(k, ortkit_session(k, model, dev, NULL, NULL, 0, &ep_session), "session with gfxep") ||
      failed(k, ortkit_session(k, c->oracle ? c->oracle : model, NULL, NULL, NULL, 0, &cpu_session),
             "session with the CPU EP") ||
      failed(k, has_half_io(k, ep_session, &ep_half), "model inputs and outputs") ||
      failed(k, has_half_io(k, cpu_session, &cpu_half), "oracle inputs and outputs") ||
      failed(k, ortkit_random_inputs(k, ep_session, 42, c->dyn, &in, &n_in), "inputs") ||
      (c->inputs && failed(k, ortkit_read_inputs(k, c->inputs, in, n_in), "inputs")) ||
      failed(k, round_half_inputs(k, ep_session, in, n_in), "inputs"))
    goto done;
  size_t on_gfxep = 0, on_other = 0;
  if (!c->quiet) printf("node placement:\n");
  if (failed(k, ortkit_placement(k, ep_session, &on_gfxep, &on_other, !c->quiet), "placement")) goto done;
  if (failed(k, ortkit_placement_summarize(k, ep_session, &res.placement), "placement")) goto done;
  res.placed = 1;
  res.on_gfxep = on_gfxep;
  res.on_other = on_other;
  *on_other_out = (long)on_other;
  printf("nodes on gfxep: %zu, on other EPs: %zu\n", on_gfxep, on_other);
  if (failed(k, run_any(k, ep_session, ep_half, in, n_in, &out_ep, &n_out_ep), "run with gfxep") ||
      failed(k, run_any(k, cpu_session, cpu_half, in, n_in, &out_cpu, &n_out_cpu), "run with the CPU EP"))
    goto done;
  ortkit_diff d;
  memset(&d, 0, sizeof d);
  per_output = calloc(n_out_cpu + 1, sizeof *per_output);
  if (!per_output) {
    snprintf(first_error, sizeof first_error, "out of host memory");
    goto done;
  }
  int bad = n_out_ep != n_out_cpu ||
            compare_outputs(out_ep, out_cpu, n_out_ep, c->abs_tol, c->rel_tol, c->tol_scale, per_output, &d);
  res.detections = c->detections;
  if (c->detections && n_out_ep == n_out_cpu) {
    bad = compare_detections(out_ep, out_cpu, n_out_ep, c->rel_tol, per_output, &res.det);
    print_detections(&res.det, bad);
  }
  res.compared = n_out_ep == n_out_cpu;
  res.pass = !bad;
  res.outputs = out_cpu;
  res.per_output = per_output;
  res.n_outputs = n_out_cpu;
  if (n_out_ep != n_out_cpu) snprintf(first_error, sizeof first_error, "%zu outputs, the oracle has %zu", n_out_ep, n_out_cpu);
  printf("agreement with ORT's CPU EP: max abs error %.3g, max rel error %.3g, %zu elements outside atol %.1g + rtol "
         "%.1g -> %s\n",
         d.max_abs, d.max_rel, d.mismatched, c->abs_tol, c->rel_tol, bad ? "MISMATCH" : "match");
  if (c->tol_scale > 0)
    for (size_t i = 0; res.compared && i < n_out_cpu; i++)
      printf("  output %s: max|ref| %.3g, atol %.3g (+ %.1g x max|ref|), max abs error %.3g -> %s\n", out_cpu[i].name,
             per_output[i].ref_max, per_output[i].atol, c->tol_scale, per_output[i].diff.max_abs,
             per_output[i].bad ? "MISMATCH" : "match");
  /* a warm-up run each, then the timed ones; --runs 0 keeps gfxep's warm-up (it records the partitions
   * the comparison below replays) and times nothing */
  double ep50 = 0, ep99 = 0, cpu50 = 0, cpu99 = 0;
  /* the reference backend records nothing: every run of it goes node by node like the first, and
   * with nothing to time or replay no second run is made */
  int replays = !res.backend || strcmp(res.backend, "reference") != 0;
  if ((c->runs > 0 || replays) && time_runs(k, ep_session, ep_half, in, n_in, c->runs, &ep50, &ep99)) goto done;
  if (c->runs > 0 && time_runs(k, cpu_session, cpu_half, in, n_in, c->runs, &cpu50, &cpu99)) goto done;
  if (c->runs > 0)
    printf("latency over %d runs, host inputs and outputs: gfxep p50 %.3f ms p99 %.3f ms; CPU EP p50 %.3f ms p99 "
           "%.3f ms\n",
           c->runs, ep50, ep99, cpu50, cpu99);
  /* once more after the timed runs, compared again: with graph replay on (the default), the first run
   * above ran node by node, the warm-up recorded the partitions, and this one replays them */
  ortkit_tensor* out_again = NULL;
  size_t n_again = 0;
  if (replays &&
      failed(k, run_any(k, ep_session, ep_half, in, n_in, &out_again, &n_again), "run with gfxep, replayed"))
    goto done;
  ortkit_diff d_again;
  memset(&d_again, 0, sizeof d_again);
  per_again = calloc(n_out_cpu + 1, sizeof *per_again);
  int bad_again = replays && (!per_again || n_again != n_out_cpu ||
                              compare_outputs(out_again, out_cpu, n_again, c->abs_tol, c->rel_tol, c->tol_scale,
                                              per_again, &d_again));
  if (replays && c->detections && per_again && n_again == n_out_cpu) {
    bad_again = compare_detections(out_again, out_cpu, n_again, c->rel_tol, per_again, &res.det_again);
    print_detections(&res.det_again, bad_again);
  }
  /* with precision=fp16 the first run is the range guard's float32 calibration: the replayed run's
   * errors are the reduced precision's, and the JSON carries both */
  if (replays && per_again && n_again == n_out_cpu) res.per_replayed = per_again;
  ortkit_tensors_free(out_again, n_again);
  if (replays)
    printf("agreement after %d more runs (partitions replayed where graphs are on): max abs error %.3g -> %s\n",
           c->runs + 1, d_again.max_abs, bad_again ? "MISMATCH" : "match");
  if (bad_again && !bad) {
    snprintf(first_error, sizeof first_error, "the replayed run disagrees with ORT's CPU EP (max abs error %.3g)",
             d_again.max_abs);
    bad = 1;
    res.pass = 0;
  }
  res.timed = c->runs > 0;
  res.ep50 = ep50;
  res.ep99 = ep99;
  res.cpu50 = cpu50;
  res.cpu99 = cpu99;
  rc = bad ? 1 : 0;
done:
  if (c->json && write_json(c->json, &res)) rc = 2;
  free(per_output);
  free(per_again);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(out_ep, n_out_ep);
  ortkit_tensors_free(out_cpu, n_out_cpu);
  if (ep_session) k->api->ReleaseSession(ep_session);
  if (cpu_session) k->api->ReleaseSession(cpu_session);
  return rc;
}

/* Reads a list of model paths, one per line, and appends them to *models (grown from its argc
 * entries); returns the file's text, which the paths point into, or NULL. */
static char* read_model_list(const char* path, const char*** models, int* n, int argc) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char* grown = realloc(text, cap);
      if (!grown) break;
      text = grown;
    }
    size_t got = fread(text + len, 1, 4096, f);
    len += got;
    if (got < 4096) break;
  }
  fclose(f);
  if (!text) return NULL;
  text[len] = 0;
  size_t lines = (size_t)argc + 1;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  const char** grown = realloc(*models, lines * sizeof *grown);
  if (!grown) {
    free(text);
    return NULL;
  }
  *models = grown;
  for (char* line = strtok(text, "\r\n"); line; line = strtok(NULL, "\r\n"))
    if (line[0]) (*models)[(*n)++] = line;
  return text;
}

int main(int argc, char** argv) {
  const char* backend = NULL;
  run_config c = {.runs = 20, .dyn = 64, .abs_tol = 1e-4, .rel_tol = 1e-4};
  const char** models = calloc((size_t)argc, sizeof *models);
  int n_models = 0;
  char* list = NULL; /* --models FILE: its text, the paths pointing into it */
  if (!models) return 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--models") && i + 1 < argc) {
      if (list || !(list = read_model_list(argv[++i], &models, &n_models, argc))) {
        fprintf(stderr, "gfxep-run: cannot read the model list %s (one path per line; --models once)\n", argv[i]);
        free(models);
        return 2;
      }
      continue;
    }
    if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) c.runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dyn") && i + 1 < argc) c.dyn = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--atol") && i + 1 < argc) c.abs_tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) c.rel_tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--tol-scale") && i + 1 < argc) c.tol_scale = atof(argv[++i]);
    else if (!strcmp(argv[i], "--oracle") && i + 1 < argc) c.oracle = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) c.json = argv[++i];
    else if (!strcmp(argv[i], "--inputs") && i + 1 < argc) c.inputs = argv[++i];
    else if (!strcmp(argv[i], "--graph-opt") && i + 1 < argc) ortkit_setenv("GFXEP_ORT_GRAPH_OPT", argv[++i]); /* ortkit reads it */
    else if (!strcmp(argv[i], "--quiet")) c.quiet = 1;
    else if (!strcmp(argv[i], "--detections")) c.detections = 1;
    else if (argv[i][0] == '-') {
      usage();
      free(models);
      free(list);
      return 2;
    } else models[n_models++] = argv[i];
  }
  /* --oracle, --json and --inputs describe one model */
  if (n_models == 0 || c.runs < 0 || c.dyn < 1 || c.tol_scale < 0 ||
      (n_models > 1 && (c.oracle || c.json || c.inputs))) {
    usage();
    free(models);
    free(list);
    return 2;
  }

  run_result res = {.model = models[0], .oracle = c.oracle, .graph_opt = getenv("GFXEP_ORT_GRAPH_OPT"),
                    .abs_tol = c.abs_tol, .rel_tol = c.rel_tol, .tol_scale = c.tol_scale, .runs = c.runs};
  ortkit k;
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "gfxep-run: %s\n", err);
    snprintf(first_error, sizeof first_error, "%s", err);
    if (c.json) write_json(c.json, &res);
    free(models);
    free(list);
    return 2;
  }
  res.ort_version = k.version;
  printf("ONNX Runtime %s (%s)\nplugin %s\n", k.version, k.lib_path, ortkit_plugin_path_text());
  int rc = 2;
  /* a registration named "gfxep.<backend>" offers that backend's devices only, software ones (the
   * reference backend, lavapipe) included; plain "gfxep" offers every backend's GPUs */
  char reg[64] = "gfxep";
  if (backend) snprintf(reg, sizeof reg, "gfxep.%s", backend);
  if (failed(&k, k.api->RegisterExecutionProviderLibrary(k.env, reg, ortkit_plugin_path()), "register")) goto setup_failed;
  const OrtEpDevice* dev[8];
  size_t n_dev = ortkit_find_devices(&k, backend, dev, 8);
  if (n_dev == 0 && !backend) {
    printf("no GPU device offered by gfxep; using the reference backend (plain C on the CPU, slow by design)\n");
    backend = "reference";
    if (failed(&k, k.api->RegisterExecutionProviderLibrary(k.env, "gfxep.reference", ortkit_plugin_path()),
               "register reference"))
      goto setup_failed;
    n_dev = ortkit_find_devices(&k, "reference", dev, 8);
  }
  if (n_dev == 0) {
    fprintf(stderr, "gfxep-run: gfxep offers no %s device here\n", backend ? backend : "");
    snprintf(first_error, sizeof first_error, "gfxep offers no %s device here", backend ? backend : "");
    goto setup_failed;
  }
  const char* uuid = ortkit_device_meta(&k, dev[0], "gfxep.device_uuid");
  res.backend = ortkit_device_meta(&k, dev[0], "gfxep.backend");
  res.device = ortkit_device_meta(&k, dev[0], "gfxep.device_name");
  printf("gfxep device: %s (%s backend%s%s)\n", res.device, res.backend, uuid ? ", uuid " : "", uuid ? uuid : "");
  if (c.oracle) printf("oracle: ORT's CPU EP on %s\n", c.oracle);

  /* Several models: each one checked on its own sessions, one result line each; the exit status is the
   * worst of them (2 if any failed to run, else 1 if any disagreed). */
  rc = 0;
  for (int m = 0; m < n_models; m++) {
    if (n_models > 1) printf("== %s\n", models[m]);
    long on_other = -1;
    int one = check_model(&k, dev[0], &c, models[m], res, &on_other);
    if (n_models > 1)
      printf("RESULT %s %s on_other=%ld%s%s\n", one == 0 ? "pass" : one == 1 ? "MISMATCH" : "ERROR", models[m], on_other,
             first_error[0] ? " error: " : "", first_error);
    if (one > rc) rc = one;
  }
  ortkit_close(&k);
  free(models);
  free(list);
  return rc;

setup_failed:
  if (c.json) write_json(c.json, &res);
  ortkit_close(&k);
  free(models);
  free(list);
  return 2;
}
