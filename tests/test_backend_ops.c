/* gfxep — every op of the op table on a GPU backend against the reference backend (the oracle), in
 * the manner of ggml's test-backend-ops: seeded random shapes, attributes and broadcast patterns;
 * outputs written between guard regions that must stay untouched; NaN/Inf checked; tolerances per
 * dtype. Needs a GPU: it reports "skipped" (exit 77) where the CUDA backend has no device.
 *
 * GFXEP_CUDA_MODULE overrides where libgfxep_cuda.so is loaded from.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/registry.h"
#include "backend/wrap.h"
#include "ir/shape.h"

#define ATOL_F32 1e-5
#define RTOL_F32 1e-4
#define GUARD_BYTES 256
#define GUARD_BYTE 0xA5

static uint64_t rng_state = 20261129;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int rand_int(int lo, int hi) { return lo + (int)(next_u64() % (uint64_t)(hi - lo + 1)); }
static float rand_float(void) { return (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

typedef struct op_case {
  ir_node node;
  int n_in;
  gfx_shape in[3];
  char label[160];
} op_case;

typedef struct op_tally {
  int run, passed;
  double max_abs;
} op_tally;

/* Device 0 of the backend called name (from the registry; GFXEP_<NAME>_MODULE names its module), or
 * NULL with the reason printed. */
static gfx_dev* open_backend(const char* name) {
  const char* why = NULL;
  const gfx_backend* be = gfx_registry_find(name, &why);
  if (!be) {
    fprintf(stderr, "# %s backend: %s\n", name, why);
    return NULL;
  }
  gfx_dev* dev = NULL;
  gfx_status s = be->device_count() > 0 ? be->device_get(0, &dev) : NULL;
  if (s) fprintf(stderr, "# %s backend: %s\n", name, gfx_status_message(s));
  gfx_status_free(s);
  return dev;
}

static size_t bytes_of(const gfx_shape* s) {
  int ok;
  return gfx_shape_bytes(s, GFX_DTYPE_F32, &ok);
}

/* every infer function the op table names, declared here as ir/shape.c does, since the families
 * declare theirs in no header */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer_fn, summary) \
  gfx_status infer_fn(const ir_node* node, const gfx_shape* in, gfx_shape* out);
#include "ir/ops.def"
#undef GFX_OP

/* Runs one case on both backends; returns 1 when it agrees. */
static int run_case(gfx_dev* gpu, void* stream, const op_case* c, op_tally* t) {
  gfx_dev* ref = gfx_reference_device();
  gfx_shape out_shape;
  gfx_status s = NULL;
  static ir_infer_fn infer[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer_fn, summary) [GFX_OP_##id] = infer_fn,
#include "ir/ops.def"
#undef GFX_OP
  };
  if ((s = infer[c->node.op](&c->node, c->in, &out_shape))) {
    printf("FAIL %s: shape inference: %s\n", c->label, gfx_status_message(s));
    gfx_status_free(s);
    return 0;
  }
  size_t out_bytes = bytes_of(&out_shape);
  float* host_in[3] = {0};
  gfx_tensor ref_in[3], gpu_in[3];
  void* dev_in[3] = {0};
  int ok = 1;
  float* want = malloc(out_bytes + 4);
  unsigned char* got = malloc(out_bytes + 2 * GUARD_BYTES);
  void* dev_out = NULL;
  void* ref_state = NULL;
  void* gpu_state = NULL;
  size_t ref_scratch = 0, gpu_scratch = 0;
  void* scratch_host = NULL;
  void* scratch_dev = NULL;
  for (int i = 0; i < c->n_in; i++) {
    size_t b = bytes_of(&c->in[i]);
    host_in[i] = malloc(b + 4);
    for (size_t e = 0; e < b / 4; e++) host_in[i][e] = rand_float();
    ref_in[i] = (gfx_tensor){host_in[i], GFX_DTYPE_F32, c->in[i]};
    if ((s = gfx_backend_mem_alloc(gpu, b + 4, &dev_in[i]))) goto fail;
    if (b && (s = gfx_backend_copy(gpu, dev_in[i], host_in[i], b, GFX_COPY_HOST_TO_DEVICE, NULL))) goto fail;
    gpu_in[i] = (gfx_tensor){dev_in[i], GFX_DTYPE_F32, c->in[i]};
  }
  gfx_tensor ref_out = {want, GFX_DTYPE_F32, out_shape};
  if ((s = gfx_backend_node_prepare(ref, &c->node, c->in, &out_shape, &ref_state, &ref_scratch))) goto fail;
  if (ref_scratch) scratch_host = malloc(ref_scratch);
  gfx_exec_ctx rctx = {ref, NULL, scratch_host, ref_scratch};
  if ((s = gfx_backend_node_run(&rctx, &c->node, ref_in, &ref_out, ref_state))) goto fail;

  /* output between two guard regions */
  memset(got, GUARD_BYTE, out_bytes + 2 * GUARD_BYTES);
  if ((s = gfx_backend_mem_alloc(gpu, out_bytes + 2 * GUARD_BYTES, &dev_out))) goto fail;
  if ((s = gfx_backend_copy(gpu, dev_out, got, out_bytes + 2 * GUARD_BYTES, GFX_COPY_HOST_TO_DEVICE, NULL))) goto fail;
  if ((s = gfx_backend_node_prepare(gpu, &c->node, c->in, &out_shape, &gpu_state, &gpu_scratch))) goto fail;
  if (gpu_scratch && (s = gfx_backend_mem_alloc(gpu, gpu_scratch, &scratch_dev))) goto fail;
  gfx_tensor gpu_out = {(char*)dev_out + GUARD_BYTES, GFX_DTYPE_F32, out_shape};
  gfx_exec_ctx gctx = {gpu, stream, scratch_dev, gpu_scratch};
  if ((s = gfx_backend_node_run(&gctx, &c->node, gpu_in, &gpu_out, gpu_state))) goto fail;
  if ((s = gfx_backend_stream_sync(gpu, stream))) goto fail;
  if ((s = gfx_backend_copy(gpu, got, dev_out, out_bytes + 2 * GUARD_BYTES, GFX_COPY_DEVICE_TO_HOST, NULL))) goto fail;

  for (size_t g = 0; g < GUARD_BYTES; g++)
    if (got[g] != GUARD_BYTE || got[GUARD_BYTES + out_bytes + g] != GUARD_BYTE) {
      printf("FAIL %s: write outside the output (guard byte %zu)\n", c->label, g);
      ok = 0;
      break;
    }
  const float* gv = (const float*)(void*)(got + GUARD_BYTES);
  size_t bad = 0;
  double max_abs = 0;
  for (size_t e = 0; e < out_bytes / 4; e++) {
    if (!isfinite(gv[e]) || !isfinite(want[e])) {
      if (isfinite(gv[e]) != isfinite(want[e])) bad++;
      continue;
    }
    double d = fabs((double)gv[e] - want[e]);
    if (d > max_abs) max_abs = d;
    if (d > ATOL_F32 + RTOL_F32 * fabs(want[e])) bad++;
  }
  if (bad) {
    printf("FAIL %s: %zu of %zu elements differ (max abs %.3g)\n", c->label, bad, out_bytes / 4, max_abs);
    ok = 0;
  }
  if (max_abs > t->max_abs) t->max_abs = max_abs;
  goto done;
fail:
  printf("FAIL %s: %s\n", c->label, gfx_status_message(s));
  gfx_status_free(s);
  ok = 0;
done:
  if (ref_state) gfx_backend_node_release(ref, ref_state);
  if (gpu_state) gfx_backend_node_release(gpu, gpu_state);
  if (dev_out) gfx_backend_mem_free(gpu, dev_out);
  if (scratch_dev) gfx_backend_mem_free(gpu, scratch_dev);
  for (int i = 0; i < c->n_in; i++) {
    if (dev_in[i]) gfx_backend_mem_free(gpu, dev_in[i]);
    free(host_in[i]);
  }
  free(scratch_host);
  free(want);
  free(got);
  t->run++;
  t->passed += ok;
  return ok;
}

static gfx_shape shape(int rank, const int64_t* d) {
  gfx_shape s = {.rank = rank};
  memcpy(s.dims, d, sizeof(int64_t) * (size_t)rank);
  return s;
}

/* Random broadcast partner of a: each dim kept or set to 1, leading dims maybe dropped. */
static gfx_shape broadcast_partner(const gfx_shape* a) {
  gfx_shape b = *a;
  for (int i = 0; i < b.rank; i++)
    if (rand_int(0, 2) == 0) b.dims[i] = 1;
  int drop = rand_int(0, b.rank);
  if (rand_int(0, 1)) {
    memmove(b.dims, b.dims + drop, sizeof(int64_t) * (size_t)(b.rank - drop));
    b.rank -= drop;
  }
  return b;
}

static void elementwise_cases(gfx_dev* gpu, void* stream, gfx_op op, op_tally* t) {
  for (int k = 0; k < 40; k++) {
    op_case c = {.node = {.op = op, .name = "t", .n_inputs = 2, .n_outputs = 1}, .n_in = 2};
    int rank = rand_int(0, 5);
    int64_t d[8];
    for (int i = 0; i < rank; i++) d[i] = rand_int(1, 9);
    if (k == 0) d[0] = 70001, rank = 1; /* many elements: grid-stride loops */
    c.in[0] = shape(rank, d);
    c.in[1] = k % 5 == 0 ? c.in[0] : broadcast_partner(&c.in[0]);
    if (rand_int(0, 1)) {
      gfx_shape tmp = c.in[0];
      c.in[0] = c.in[1];
      c.in[1] = tmp;
    }
    char a[96], b[96];
    snprintf(c.label, sizeof c.label, "%s %s %s", ir_op_name(op), gfx_shape_str(&c.in[0], a, 96),
             gfx_shape_str(&c.in[1], b, 96));
    run_case(gpu, stream, &c, t);
  }
}

static void relu_cases(gfx_dev* gpu, void* stream, op_tally* t) {
  const int64_t sizes[][4] = {{1, 1, 1, 1}, {2, 3, 5, 7}, {1, 16, 64, 64}, {1, 1, 1, 0}};
  for (int k = 0; k < 4; k++) {
    op_case c = {.node = {.op = GFX_OP_RELU, .name = "t", .n_inputs = 1, .n_outputs = 1}, .n_in = 1};
    c.in[0] = shape(4, sizes[k]);
    char a[96];
    snprintf(c.label, sizeof c.label, "Relu %s", gfx_shape_str(&c.in[0], a, 96));
    run_case(gpu, stream, &c, t);
  }
}

static void conv_cases(gfx_dev* gpu, void* stream, op_tally* t) {
  for (int k = 0; k < 60; k++) {
    op_case c = {.node = {.op = GFX_OP_CONV, .name = "t", .n_outputs = 1}};
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 2;
    int depthwise = k % 6 == 1;
    p->group = depthwise ? rand_int(2, 8) : (rand_int(0, 3) == 0 ? rand_int(2, 3) : 1);
    int64_t cin = p->group * (depthwise ? 1 : rand_int(1, 4));
    int64_t cout = p->group * (depthwise ? rand_int(1, 2) : rand_int(1, 4));
    int64_t kh = rand_int(1, 4), kw = rand_int(1, 4);
    p->auto_pad = (ir_auto_pad)(k % 5 == 4 ? rand_int(1, 3) : 0);
    for (int i = 0; i < 2; i++) {
      p->strides[i] = rand_int(1, 3);
      p->dilations[i] = p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER ? 1 : rand_int(1, 2);
      if (p->auto_pad == IR_PAD_NOTSET) {
        p->pads[i] = rand_int(0, 2);
        p->pads[2 + i] = rand_int(0, 2); /* asymmetric on purpose */
      }
    }
    int64_t x[4] = {rand_int(1, 2), cin, rand_int(5, 20), rand_int(5, 20)};
    int64_t w[4] = {cout, cin / p->group, kh, kw};
    int64_t b[1] = {cout};
    c.in[0] = shape(4, x);
    c.in[1] = shape(4, w);
    c.in[2] = shape(1, b);
    c.n_in = c.node.n_inputs = rand_int(0, 2) ? 3 : 2;
    snprintf(c.label, sizeof c.label,
             "Conv x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] g=%lld s=%lld,%lld d=%lld,%lld pads=%lld,%lld,%lld,%lld "
             "auto=%d bias=%d",
             (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)w[0], (long long)w[1],
             (long long)w[2], (long long)w[3], (long long)p->group, (long long)p->strides[0],
             (long long)p->strides[1], (long long)p->dilations[0], (long long)p->dilations[1], (long long)p->pads[0],
             (long long)p->pads[1], (long long)p->pads[2], (long long)p->pads[3], (int)p->auto_pad, c.n_in == 3);
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(p, &c.in[0], &c.in[1], &g);
    if (s) { /* a random geometry that is not valid: not a case */
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c, t);
  }
  /* one large case typical of image models */
  op_case big = {.node = {.op = GFX_OP_CONV, .name = "t", .n_inputs = 3, .n_outputs = 1}, .n_in = 3};
  ir_conv_params* p = &big.node.params.conv;
  p->spatial = 2;
  p->group = 1;
  p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
  p->pads[0] = p->pads[1] = p->pads[2] = p->pads[3] = 1;
  big.in[0] = shape(4, (int64_t[]){1, 32, 128, 128});
  big.in[1] = shape(4, (int64_t[]){32, 32, 3, 3});
  big.in[2] = shape(1, (int64_t[]){32});
  snprintf(big.label, sizeof big.label, "Conv 1x32x128x128 3x3 pad 1");
  run_case(gpu, stream, &big, t);
}

static void matmul_cases(gfx_dev* gpu, void* stream, op_tally* t) {
  for (int k = 0; k < 40; k++) {
    op_case c = {.node = {.op = GFX_OP_MATMUL, .name = "t", .n_inputs = 2, .n_outputs = 1, .params.gemm.alpha = 1.0f},
                 .n_in = 2};
    int64_t m = rand_int(1, 40), n = rand_int(1, 40), kk = rand_int(1, 64);
    int batch_rank = rand_int(0, 2);
    int64_t a[6], b[6];
    int ra = 0, rb = 0;
    for (int i = 0; i < batch_rank; i++) {
      int64_t d = rand_int(1, 4);
      int mode = rand_int(0, 3); /* 0: both, 1: a only (b broadcast 1), 2: b only, 3: drop from b */
      a[ra++] = mode == 2 ? 1 : d;
      if (mode != 3) b[rb++] = mode == 1 ? 1 : d;
    }
    a[ra++] = m, a[ra++] = kk;
    b[rb++] = kk, b[rb++] = n;
    c.in[0] = shape(ra, a);
    c.in[1] = shape(rb, b);
    if (k == 0) { /* a larger GEMM */
      c.in[0] = shape(2, (int64_t[]){256, 384});
      c.in[1] = shape(2, (int64_t[]){384, 200});
    }
    char x[96], y[96];
    snprintf(c.label, sizeof c.label, "MatMul %s x %s", gfx_shape_str(&c.in[0], x, 96), gfx_shape_str(&c.in[1], y, 96));
    ir_matmul_geom g;
    gfx_status s = ir_matmul_geometry(&c.in[0], &c.in[1], 0, &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c, t);
  }
}

int main(int argc, char** argv) {
  /* -b BACKEND: the backend checked against the reference backend (default: cuda) */
  const char* backend = argc > 2 && strcmp(argv[1], "-b") == 0 ? argv[2] : "cuda";
  gfx_dev* gpu = open_backend(backend);
  if (!gpu) {
    printf("# no %s device: backend op tests skipped\n", backend);
    return 77;
  }
  gfx_device_info info;
  gfx_status s = gfx_backend_device_info(gpu, &info);
  if (s) {
    printf("FAIL device_info: %s\n", gfx_status_message(s));
    return 1;
  }
  printf("# %s backend on %s (%s)\n", gfx_backend_name(gpu), info.name, info.pci_bus_id);
  void* stream = NULL;
  if ((s = gfx_backend_stream_create(gpu, &stream))) {
    printf("FAIL stream_create: %s\n", gfx_status_message(s));
    return 1;
  }
  op_tally tally[GFX_OP_COUNT] = {{0}};
  elementwise_cases(gpu, stream, GFX_OP_ADD, &tally[GFX_OP_ADD]);
  elementwise_cases(gpu, stream, GFX_OP_SUB, &tally[GFX_OP_SUB]);
  elementwise_cases(gpu, stream, GFX_OP_MUL, &tally[GFX_OP_MUL]);
  elementwise_cases(gpu, stream, GFX_OP_DIV, &tally[GFX_OP_DIV]);
  relu_cases(gpu, stream, &tally[GFX_OP_RELU]);
  conv_cases(gpu, stream, &tally[GFX_OP_CONV]);
  matmul_cases(gpu, stream, &tally[GFX_OP_MATMUL]);
  gfx_backend_stream_destroy(gpu, stream);
  /* the ops with backend-level cases here; every op of the table is covered through ONNX Runtime by
   * test_op_cases (and the element-wise family in depth by test_cuda_elementwise) */
  int run = 0, passed = 0, listed = 0;
  printf("{\"backend_ops\": [");
  for (int op = GFX_OP_NONE + 1; op < GFX_OP_COUNT; op++) {
    if (tally[op].run == 0) continue;
    printf("%s{\"op\": \"%s\", \"cases\": %d, \"passed\": %d, \"max_abs_err\": %.3g}", listed++ ? ", " : "",
           ir_op_name((gfx_op)op), tally[op].run, tally[op].passed, tally[op].max_abs);
    run += tally[op].run;
    passed += tally[op].passed;
  }
  printf("]}\n");
  printf("%d passed, %d failed\n", passed, run - passed);
  return passed == run && run > 0 ? 0 : 1;
}
