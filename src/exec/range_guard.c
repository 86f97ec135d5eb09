/* gfxep — the float16 range guard (see range_guard.h). */
#include "exec/range_guard.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/wrap.h"
#include "core/log.h"
#include "ir/fuse.h"
#include "ir/mixed_precision.h"

/* Checks of the mixed model's outputs: every Run's for the first ones, then one Run in CHECK_PERIOD. */
#define EARLY_CHECKS 8
#define CHECK_PERIOD 64

typedef enum guard_state {
  CALIBRATING, /* Runs take the probing float32 model until its probes come back */
  WATCHING,    /* Runs take the mixed model; its outputs are checked */
  SETTLED,     /* float32 for good (the mixed model failed, or could not be made) */
} guard_state;

struct gfx_range_guard {
  gfx_dev* dev;
  gfx_range_guard_config config;
  char partition[48];
  pthread_mutex_t lock;
  guard_state state;
  ir_graph* full;    /* the float32 partition, unfused (freed once the mixed model runs) */
  ir_graph* lowered; /* likewise, lowered */
  int first_lowered;
  int n_outputs;     /* the partition's own outputs */

  gfx_model* probing;  /* float32 with a probe on every float32 value */
  int* probing_values; /* the value of full each of its probes watches */
  int n_probing;
  gfx_model* mixed;    /* the mixed model with a probe on each float32 output */
  int* mixed_values;
  int n_mixed;
  gfx_model* fallback; /* float32 without probes, after the mixed model produced a non-finite output */
  gfx_model* current;

  /* probes: a slot of `stride` bytes each in device memory, copied back to `host` */
  size_t stride;
  void* device;
  void* host;
  void* event;
  int in_flight;            /* a copy back is queued and its event not yet seen done */
  gfx_model* flight_model;  /* whose probes it carries */
  long long runs, checks;
};

static gfx_status make_model(gfx_range_guard* g, ir_graph* graph, gfx_model** out) {
  /* fusions that make nodes only some backends run ask this device first */
  const ir_fuse_target target = {.supports = gfx_backend_fuse_supports, .user = g->dev};
  gfx_status s = ir_fuse_for(graph, &target);
  if (s) {
    ir_graph_free(graph);
    return s;
  }
  GFX_TRY(gfx_model_create(g->dev, graph, out));
  gfx_model_use_graphs(*out, g->config.use_graphs);
  gfx_model_stamp_replays(*out, g->config.stamp_replays);
  return NULL;
}

/* A copy of full with probes of `set`, as a model. */
static gfx_status probing_model(gfx_range_guard* g, const ir_graph* base, ir_probe_set set, gfx_model** out,
                                int** values, int* n) {
  ir_graph* copy = NULL;
  GFX_TRY(ir_graph_clone(base, &copy));
  gfx_status s = ir_add_range_probes(copy, set, values, n);
  if (s) {
    ir_graph_free(copy);
    return s;
  }
  s = make_model(g, copy, out);
  if (s) {
    free(*values);
    *values = NULL;
  }
  return s;
}

gfx_status gfx_range_guard_create(gfx_dev* dev, ir_graph* full, ir_graph* lowered, int first_lowered,
                                  const gfx_range_guard_config* config, gfx_range_guard** out) {
  *out = NULL;
  gfx_range_guard* g = calloc(1, sizeof *g);
  if (!g) {
    ir_graph_free(full);
    ir_graph_free(lowered);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "range guard");
  }
  g->dev = dev;
  g->config = *config;
  snprintf(g->partition, sizeof g->partition, "%s", config->partition ? config->partition : "partition");
  g->config.partition = g->partition;
  g->full = full;
  g->lowered = lowered;
  g->first_lowered = first_lowered;
  g->n_outputs = full->n_outputs;
  pthread_mutex_init(&g->lock, NULL);
  g->stride = gfx_backend_alignment(dev);
  if (g->stride < sizeof(float)) g->stride = sizeof(float);
  gfx_status s = probing_model(g, full, IR_PROBE_FLOAT32_VALUES, &g->probing, &g->probing_values, &g->n_probing);
  /* the mixed model's probes are its float32 outputs, which the probing model watches too: one
   * buffer of n_probing slots serves both */
  const size_t bytes = g->stride * (size_t)(g->n_probing + 1);
  if (!s) s = gfx_backend_mem_alloc(dev, bytes, &g->device);
  if (!s) s = gfx_backend_host_alloc(dev, bytes, &g->host);
  if (!s) s = gfx_backend_event_create(dev, &g->event);
  if (s) {
    gfx_range_guard_free(g);
    return s;
  }
  g->current = g->probing;
  g->state = CALIBRATING;
  *out = g;
  return NULL;
}

void gfx_range_guard_free(gfx_range_guard* g) {
  if (!g) return;
  /* A copy back may still be queued into the host buffer. No host wait here (a stalled producer
   * would hang the release): the event goes first (a backend whose frees do not wait for the device,
   * Vulkan, waits, bounded, for the event's submission before destroying it; CUDA's frees synchronize),
   * and on a stalled device every one of these releases is held until it resumes (backend/wrap.c). */
  if (g->event) gfx_backend_event_destroy(g->dev, g->event);
  if (g->host) gfx_backend_host_free(g->dev, g->host);
  if (g->device) gfx_backend_mem_free(g->dev, g->device);
  gfx_model_free(g->probing);
  gfx_model_free(g->mixed);
  gfx_model_free(g->fallback);
  free(g->probing_values);
  free(g->mixed_values);
  ir_graph_free(g->full);
  ir_graph_free(g->lowered);
  pthread_mutex_destroy(&g->lock);
  free(g);
}

static float probe_at(const gfx_range_guard* g, int k) {
  float v;
  memcpy(&v, (const char*)g->host + g->stride * (size_t)k, sizeof v);
  return v;
}

/* The probing model's figures are back: make the mixed model and move to it. */
static void calibrated(gfx_range_guard* g) {
  const ir_graph* full = g->full;
  float* max_abs = malloc(sizeof(float) * (size_t)(full->n_values + 1));
  uint8_t* keep = malloc((size_t)full->n_nodes + 1);
  gfx_status s = max_abs && keep ? NULL : gfx_error(GFX_ERR_OUT_OF_MEMORY, "range guard: calibration");
  int kept = 0, worst = -1;
  if (!s) {
    for (int v = 0; v < full->n_values; v++) max_abs[v] = -1.0f;
    for (int k = 0; k < g->n_probing; k++) max_abs[g->probing_values[k]] = probe_at(g, k);
    kept = ir_float32_nodes(full, max_abs, IR_FP16_SAFE_MAX, keep, &worst);
  }
  ir_graph* mixed = NULL;
  if (!s) s = ir_mixed_graph(full, g->lowered, g->first_lowered, keep, &mixed);
  if (!s) {
    s = probing_model(g, mixed, IR_PROBE_OUTPUTS, &g->mixed, &g->mixed_values, &g->n_mixed);
    ir_graph_free(mixed);
  }
  if (s) {
    gfx_log(GFX_LOG_WARNING, "gfxep: %s stays in float32: the float16 model could not be made: %s", g->partition,
            gfx_status_message(s));
    gfx_status_free(s);
    g->state = SETTLED;
  } else {
    if (kept)
      gfx_log(GFX_LOG_WARNING,
              "gfxep: %s: precision=fp16 keeps %d of %d nodes in float32: their values reach float16's limit "
              "(on the first Run's input '%s' reached %g; float16 ends at 65504, values beyond %g stay float32)",
              g->partition, kept, full->n_nodes, worst >= 0 ? full->values[worst].name : "a constant",
              worst >= 0 ? (double)max_abs[worst] : 0.0, (double)IR_FP16_SAFE_MAX);
    else
      gfx_log(GFX_LOG_INFO, "gfxep: %s: every float32 value of the first Run fits float16: all %d nodes in float16",
              g->partition, full->n_nodes);
    g->current = g->mixed;
    g->state = WATCHING;
  }
  free(max_abs);
  free(keep);
}

/* The mixed model's output sums are back: any inf or NaN sends later Runs back to float32. */
static void watched(gfx_range_guard* g) {
  g->checks++;
  for (int k = 0; k < g->n_mixed; k++) {
    const float sum = probe_at(g, k);
    if (isfinite(sum)) continue;
    /* probe k watches the k-th float32 output, and the mixed graph's outputs are full's, in order */
    const char* name = "?";
    for (int o = 0, seen = 0; o < g->full->n_outputs; o++)
      if (g->full->values[g->full->outputs[o]].dtype == GFX_DTYPE_F32 && seen++ == k)
        name = g->full->values[g->full->outputs[o]].name;
    ir_graph* copy = NULL;
    gfx_status s = ir_graph_clone(g->full, &copy);
    if (!s) s = make_model(g, copy, &g->fallback);
    if (s) {
      gfx_log(GFX_LOG_WARNING, "gfxep: %s: output '%s' was not finite in float16 (%g); the probing float32 model "
              "runs from now on (a plain one could not be made: %s)", g->partition, name, (double)sum,
              gfx_status_message(s));
      gfx_status_free(s);
      g->current = g->probing;
    } else {
      gfx_log(GFX_LOG_WARNING, "gfxep: %s: output '%s' was not finite in float16 (its sum of magnitudes is %g); "
              "it runs in float32 from now on", g->partition, name, (double)sum);
      g->current = g->fallback;
    }
    g->state = SETTLED;
    return;
  }
}

gfx_model* gfx_range_guard_begin(gfx_range_guard* g) {
  pthread_mutex_lock(&g->lock);
  if (g->in_flight && gfx_backend_event_done(g->dev, g->event)) {
    g->in_flight = 0;
    if (g->state == CALIBRATING && g->flight_model == g->probing) calibrated(g);
    else if (g->state == WATCHING && g->flight_model == g->mixed) watched(g);
  }
  gfx_model* m = g->current;
  g->runs++;
  pthread_mutex_unlock(&g->lock);
  return m;
}

int gfx_range_guard_first_probe(const gfx_range_guard* g, const gfx_model* model) {
  return model == g->probing || model == g->mixed ? g->n_outputs : gfx_model_graph(model)->n_outputs;
}

gfx_status gfx_range_guard_probe(gfx_range_guard* g, int index, void** data) {
  const int k = index - g->n_outputs;
  if (k < 0 || k >= g->n_probing)
    return gfx_error(GFX_ERR_INTERNAL, "range guard: output %d is not a probe of %s", index, g->partition);
  *data = (char*)g->device + g->stride * (size_t)k;
  return NULL;
}

void gfx_range_guard_end(gfx_range_guard* g, gfx_model* model, void* stream) {
  pthread_mutex_lock(&g->lock);
  const int due = !g->in_flight &&
                  ((g->state == CALIBRATING && model == g->probing) ||
                   (g->state == WATCHING && model == g->mixed &&
                    (g->checks < EARLY_CHECKS || g->runs % CHECK_PERIOD == 0)));
  if (due) {
    const int n = model == g->probing ? g->n_probing : g->n_mixed;
    gfx_status s = gfx_backend_copy(g->dev, g->host, g->device, g->stride * (size_t)n, GFX_COPY_DEVICE_TO_HOST, stream);
    if (!s) s = gfx_backend_event_record(g->dev, g->event, stream);
    if (s) {
      /* without its readings the guard cannot move on: float32 stays, which is always correct */
      gfx_log(GFX_LOG_WARNING, "gfxep: %s: the range probes could not be read back (%s); it stays on the model "
              "it runs", g->partition, gfx_status_message(s));
      gfx_status_free(s);
      g->state = SETTLED;
    } else {
      g->in_flight = 1;
      g->flight_model = model;
    }
  }
  pthread_mutex_unlock(&g->lock);
}

gfx_model* gfx_range_guard_current(gfx_range_guard* g) {
  pthread_mutex_lock(&g->lock);
  gfx_model* m = g->current;
  pthread_mutex_unlock(&g->lock);
  return m;
}
