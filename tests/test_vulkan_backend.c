/* gfxep — the Vulkan backend module (libgfxep_vulkan.so), loaded with dlopen and driven through its
 * gfx_backend table: devices, memory and copies (offsets inside allocations are address
 * arithmetic), streams and events, every element-wise kernel on random data with broadcasting
 * against values computed here in plain C, the support check, and bad input.
 *
 * Runs on lavapipe in CI (ctest sets VK_ICD_FILENAMES / VK_DRIVER_FILES). No Vulkan device is a
 * failure, not a skip.
 *
 * Tolerances, |got - want| <= atol + rtol * |want|: float32 atol 2e-6, rtol 1e-5 (the shader's erf,
 * tanh, pow and exp are within a few ulp of float32, compared with double here); float16 atol 1e-3,
 * rtol 2e-3 (one rounding to float16 is 4.9e-4 relative, the float32 math adds nothing visible);
 * integers and bools exactly. NaN must meet NaN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/half.h"
#include "ir_test_util.h"

static const gfx_backend* be;
static gfx_dev* dev;
static void* module;

/* ---- setup ---- */

static int setup(void** unused) {
  (void)unused;
  /* GFXEP_VULKAN_MODULE in the environment (the GPU machine's pack) before the build's own */
  const char* path = getenv("GFXEP_VULKAN_MODULE");
  if (!path || !path[0]) path = GFXEP_VULKAN_MODULE;
  module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    print_error("dlopen(%s): %s\n", path, dlerror());
    return -1;
  }
  gfx_backend_entry_fn entry = (gfx_backend_entry_fn)dlsym(module, "gfxep_vulkan_backend");
  if (!entry) {
    print_error("no gfxep_vulkan_backend in the module\n");
    return -1;
  }
  const char* why = NULL;
  be = entry(&why);
  if (!be) {
    print_error("the module refused: %s\n", why ? why : "?");
    return -1;
  }
  if (be->device_count() < 1) {
    print_error("no Vulkan device found (is lavapipe installed and VK_ICD_FILENAMES set?)\n");
    return -1;
  }
  gfx_status s = be->device_get(0, &dev);
  if (s) {
    print_error("device_get(0): %s\n", gfx_status_message(s));
    gfx_status_free(s);
    return -1;
  }
  return 0;
}

static int teardown(void** unused) {
  (void)unused;
  /* the module stays loaded: its devices live for the process (backend.h) */
  return 0;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  expect_ok(be->mem_alloc(dev, bytes, &p));
  assert_non_null(p);
  return p;
}

static void* at(void* addr, size_t offset) { return (char*)addr + offset; }

/* ---- devices and memory ---- */

static void test_devices(void** unused) {
  (void)unused;
  assert_string_equal(be->name, "vulkan");
  assert_int_equal(be->abi_version, GFX_BACKEND_ABI_VERSION);
  assert_int_equal(be->alignment, 256);
  int n = be->device_count();
  assert_true(n >= 1);
  gfx_dev* again = NULL;
  expect_ok(be->device_get(0, &again));
  assert_ptr_equal(again, dev);
  assert_ptr_equal(dev->backend, be);
  gfx_device_info info;
  expect_ok(be->device_info(dev, &info));
  print_message("device 0: %s | driver: %s | pci %s | vendor 0x%04x | %zu MiB\n", info.name, info.driver,
                info.pci_bus_id[0] ? info.pci_bus_id : "-", info.pci_vendor_id, info.total_memory >> 20);
  assert_true(info.name[0] != 0);
  assert_true(info.has_uuid);
  assert_true(info.driver[0] != 0);
  if (strstr(info.name, "llvmpipe")) assert_true(info.software); /* lavapipe is a CPU device */
  int nonzero = 0;
  for (int i = 0; i < 16; i++) nonzero |= info.uuid[i];
  assert_true(nonzero);
  gfx_dev* none = NULL;
  expect_error(be->device_get(n, &none), GFX_ERR_INVALID_ARGUMENT, "device index");
  assert_null(none);
  size_t free_b = 0, total = 0;
  expect_ok(be->mem_info(dev, &free_b, &total));
  assert_true(total > 0);
}

static void test_alloc_free(void** unused) {
  (void)unused;
  const size_t sizes[] = {0, 1, 255, 4096, 3 << 20};
  void* p[5];
  for (int i = 0; i < 5; i++) {
    p[i] = dev_alloc(sizes[i]);
    assert_int_equal((uintptr_t)p[i] % 256, 0);
  }
  for (int i = 0; i < 5; i++) be->mem_free(dev, p[i]);
  be->mem_free(dev, NULL);
  void* h = NULL;
  expect_ok(be->host_alloc(dev, 1000, &h));
  memset(h, 0x5a, 1000); /* a host pointer: writable here */
  be->host_free(dev, h);
}

/* host -> device -> host with offsets inside one allocation, on a stream and without */
static void test_round_trip(void** unused) {
  (void)unused;
  enum { N = 10000 };
  unsigned char src[N], back[N];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 7 + 3);
  void* d = dev_alloc(N);
  expect_ok(be->copy(dev, d, src, N, GFX_COPY_HOST_TO_DEVICE, NULL));
  memset(back, 0, N);
  expect_ok(be->copy(dev, back, at(d, 100), 1000, GFX_COPY_DEVICE_TO_HOST, NULL));
  assert_memory_equal(back, src + 100, 1000);

  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  /* overwrite [17, 17 + 333) on the stream from pageable memory; read everything back through it */
  unsigned char patch[333];
  for (int i = 0; i < 333; i++) patch[i] = (unsigned char)(255 - i);
  expect_ok(be->copy(dev, at(d, 17), patch, sizeof patch, GFX_COPY_HOST_TO_DEVICE, stream));
  memset(patch, 0, sizeof patch); /* staged at the call: reusable at once */
  memset(back, 0, N);
  expect_ok(be->copy(dev, back, d, N, GFX_COPY_DEVICE_TO_HOST, stream)); /* pageable: complete on return */
  for (int i = 0; i < N; i++) {
    unsigned char want = i >= 17 && i < 17 + 333 ? (unsigned char)(255 - (i - 17)) : src[i];
    assert_int_equal(back[i], want);
  }
  /* through host_alloc memory, asynchronously */
  unsigned char* pin = NULL;
  expect_ok(be->host_alloc(dev, N, (void**)&pin));
  for (int i = 0; i < N; i++) pin[i] = (unsigned char)(i ^ 0x3c);
  expect_ok(be->copy(dev, at(d, 4000), pin, 4000, GFX_COPY_HOST_TO_DEVICE, stream));
  expect_ok(be->copy(dev, pin + 5000, at(d, 4001), 10, GFX_COPY_DEVICE_TO_HOST, stream));
  expect_ok(be->stream_sync(dev, stream));
  for (int i = 0; i < 10; i++) assert_int_equal(pin[5000 + i], (unsigned char)((i + 1) ^ 0x3c));
  be->host_free(dev, pin);
  be->stream_destroy(dev, stream);
  be->mem_free(dev, d);
}

static void test_device_copy_and_zero(void** unused) {
  (void)unused;
  enum { N = 4096 };
  unsigned char src[N], back[N];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i % 251 + 1);
  void* a = dev_alloc(N);
  void* b = dev_alloc(N);
  expect_ok(be->copy(dev, a, src, N, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->memset_zero(dev, b, N, NULL));
  expect_ok(be->copy(dev, at(b, 3), at(a, 1001), 777, GFX_COPY_DEVICE_TO_DEVICE, NULL));
  expect_ok(be->copy(dev, back, b, N, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) assert_int_equal(back[i], i >= 3 && i < 780 ? src[1001 + i - 3] : 0);

  /* unaligned zeroing, on a stream (fill + edge copies) and synchronously */
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  expect_ok(be->copy(dev, a, src, N, GFX_COPY_HOST_TO_DEVICE, stream));
  expect_ok(be->memset_zero(dev, at(a, 5), 1, stream));
  expect_ok(be->memset_zero(dev, at(a, 9), 1023, stream));
  expect_ok(be->memset_zero(dev, at(a, 3000), 2, NULL == stream ? NULL : stream));
  expect_ok(be->stream_sync(dev, stream));
  expect_ok(be->memset_zero(dev, at(a, 4090), 6, NULL));
  expect_ok(be->copy(dev, back, a, N, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) {
    int zero = i == 5 || (i >= 9 && i < 1032) || (i >= 3000 && i < 3002) || i >= 4090;
    assert_int_equal(back[i], zero ? 0 : src[i]);
  }
  be->stream_destroy(dev, stream);
  be->mem_free(dev, a);
  be->mem_free(dev, b);
}

/* copy on stream A, event, stream B waits for it and copies on; host sees B's result */
static void test_streams_events(void** unused) {
  (void)unused;
  enum { N = 4 << 20 };
  unsigned char* src = malloc(N);
  assert_non_null(src);
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 13 + (i >> 12));
  void* x = dev_alloc(N);
  void* y = dev_alloc(N);
  void* z = dev_alloc(N);
  unsigned char* pin = NULL;
  expect_ok(be->host_alloc(dev, N, (void**)&pin));
  memset(pin, 0, N);
  void *sa = NULL, *sb = NULL, *ev = NULL;
  expect_ok(be->stream_create(dev, &sa));
  expect_ok(be->stream_create(dev, &sb));
  expect_ok(be->event_create(dev, &ev));
  assert_int_equal(be->event_done(dev, ev), 1); /* never recorded */
  expect_ok(be->event_sync(dev, ev));
  for (int round = 0; round < 3; round++) {
    src[round] ^= 0xff;
    expect_ok(be->copy(dev, x, src, N, GFX_COPY_HOST_TO_DEVICE, sa));
    expect_ok(be->copy(dev, y, x, N, GFX_COPY_DEVICE_TO_DEVICE, sa));
    expect_ok(be->event_record(dev, ev, sa));
    expect_ok(be->stream_wait_event(dev, sb, ev));
    expect_ok(be->copy(dev, z, y, N, GFX_COPY_DEVICE_TO_DEVICE, sb));
    expect_ok(be->copy(dev, pin, z, N, GFX_COPY_DEVICE_TO_HOST, sb));
    expect_ok(be->stream_flush(dev, sb));
    expect_ok(be->stream_sync(dev, sb));
    assert_int_equal(be->event_done(dev, ev), 1);
    expect_ok(be->event_sync(dev, ev));
    assert_memory_equal(pin, src, N);
  }
  /* an event destroyed while a stream still waits on it stays valid for that wait */
  void* ev2 = NULL;
  expect_ok(be->event_create(dev, &ev2));
  expect_ok(be->copy(dev, y, x, N, GFX_COPY_DEVICE_TO_DEVICE, sa));
  expect_ok(be->event_record(dev, ev2, sa));
  expect_ok(be->stream_wait_event(dev, sb, ev2));
  be->event_destroy(dev, ev2);
  expect_ok(be->copy(dev, z, y, N, GFX_COPY_DEVICE_TO_DEVICE, sb));
  expect_ok(be->device_sync(dev));
  /* NULL stream: records and waits synchronously */
  expect_ok(be->event_record(dev, ev, NULL));
  assert_int_equal(be->event_done(dev, ev), 1);
  expect_ok(be->stream_wait_event(dev, NULL, ev));
  be->event_destroy(dev, ev);
  be->stream_destroy(dev, sa);
  be->stream_destroy(dev, sb);
  be->host_free(dev, pin);
  be->mem_free(dev, x);
  be->mem_free(dev, y);
  be->mem_free(dev, z);
  free(src);
}

/* ---- kernels ---- */

/* Host values as doubles, packed into / unpacked from an element type. */
static void* pack(int dtype, const double* v, int64_t n) {
  size_t size = gfx_dtype_size(dtype);
  unsigned char* p = calloc((size_t)(n ? n : 1), size);
  assert_non_null(p);
  for (int64_t i = 0; i < n; i++) {
    switch (dtype) {
      case GFX_DTYPE_F32: { float f = (float)v[i]; memcpy(p + 4 * i, &f, 4); break; }
      case GFX_DTYPE_F16: { uint16_t h = gfx_float_to_half((float)v[i]); memcpy(p + 2 * i, &h, 2); break; }
      case GFX_DTYPE_I32: { int32_t x = (int32_t)v[i]; memcpy(p + 4 * i, &x, 4); break; }
      case GFX_DTYPE_I64: { int64_t x = (int64_t)v[i]; memcpy(p + 8 * i, &x, 8); break; }
      case GFX_DTYPE_BOOL:
      case GFX_DTYPE_U8: p[i] = (unsigned char)v[i]; break;
      default: fail();
    }
  }
  return p;
}

static double unpack(int dtype, const void* base, int64_t i) {
  const unsigned char* p = base;
  switch (dtype) {
    case GFX_DTYPE_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case GFX_DTYPE_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return gfx_half_to_float(h); }
    case GFX_DTYPE_I32: { int32_t x; memcpy(&x, p + 4 * i, 4); return x; }
    case GFX_DTYPE_I64: { int64_t x; memcpy(&x, p + 8 * i, 8); return (double)x; }
    case GFX_DTYPE_BOOL:
    case GFX_DTYPE_U8: return p[i];
    default: fail();
  }
  return 0;
}

/* The element of `in` that numpy broadcasting reads for output element e. */
static int64_t bcast_offset(const gfx_shape* in, const gfx_shape* out, int64_t e) {
  int64_t off = 0, stride = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    int64_t c = e % out->dims[d];
    e /= out->dims[d];
    int di = d - (out->rank - in->rank);
    if (di < 0) continue;
    if (in->dims[di] != 1) off += c * stride;
    stride *= in->dims[di];
  }
  return off;
}

static double gelu_ref(double x, int tanh_approx) {
  if (tanh_approx) return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

static double expected_unary(gfx_op op, const ir_elementwise_params* p, double x) {
  switch (op) {
    case GFX_OP_RELU: return x < 0 ? 0 : x; /* NaN passes */
    case GFX_OP_LEAKY_RELU: return x >= 0 ? x : (double)p->alpha * x;
    case GFX_OP_SIGMOID: return 1 / (1 + exp(-x));
    case GFX_OP_TANH: return tanh(x);
    case GFX_OP_HARD_SIGMOID: return fmin(1, fmax(0, (double)p->alpha * x + (double)p->beta));
    case GFX_OP_HARD_SWISH: return x * fmin(1, fmax(0, x / 6 + 0.5));
    case GFX_OP_CLIP: {
      double lo = p->has_min ? p->min : -INFINITY, hi = p->has_max ? p->max : INFINITY;
      return fmin(hi, fmax(lo, x));
    }
    case GFX_OP_ELU: return x >= 0 ? x : (double)p->alpha * (exp(x) - 1);
    case GFX_OP_SELU: return (double)p->gamma * (x > 0 ? x : (double)p->alpha * (exp(x) - 1));
    case GFX_OP_GELU: return gelu_ref(x, p->gelu_tanh);
    case GFX_OP_ERF: return erf(x);
    case GFX_OP_SOFTPLUS: return log(1 + exp(x));
    case GFX_OP_SQRT: return sqrt(x);
    case GFX_OP_EXP: return exp(x);
    case GFX_OP_LOG: return log(x);
    case GFX_OP_NEG: return -x;
    case GFX_OP_ABS: return fabs(x);
    case GFX_OP_RECIPROCAL: return 1 / x;
    case GFX_OP_IDENTITY: return x;
    default: fail();
  }
  return 0;
}

static double expected_nary(gfx_op op, const double* v, int n) {
  switch (op) {
    case GFX_OP_ADD: return v[0] + v[1];
    case GFX_OP_SUB: return v[0] - v[1];
    case GFX_OP_MUL: return v[0] * v[1];
    case GFX_OP_DIV: return v[0] / v[1];
    case GFX_OP_POW: return pow(v[0], v[1]);
    case GFX_OP_PRELU: return v[0] >= 0 ? v[0] : v[0] * v[1];
    case GFX_OP_EQUAL: return v[0] == v[1];
    case GFX_OP_GREATER: return v[0] > v[1];
    case GFX_OP_LESS: return v[0] < v[1];
    default: break;
  }
  double r = v[0];
  for (int i = 1; i < n; i++) {
    if (op == GFX_OP_MIN) r = isnan(r) || isnan(v[i]) ? NAN : (v[i] < r ? v[i] : r);
    if (op == GFX_OP_MAX) r = isnan(r) || isnan(v[i]) ? NAN : (v[i] > r ? v[i] : r);
    if (op == GFX_OP_SUM || op == GFX_OP_MEAN) r += v[i];
  }
  return op == GFX_OP_MEAN ? r / n : r;
}

/* One node case: the node as ONNX declares it (parsed by the IR), its inputs, and how values are drawn. */
typedef struct ew_case {
  const char* op_type;
  int opset;
  attr_table attrs;
  int n_in;
  int dtype;             /* of every input unless in_dtypes[i] is set */
  int in_dtypes[IR_MAX_IO];
  gfx_shape shapes[IR_MAX_IO];
  double lo, hi;         /* range of the random values */
  int small_ints;        /* values from {-2..2} (comparisons meet equal values) */
  int nan_at;            /* > 0: element nan_at - 1 of input 0 is NaN */
  /* Clip-13 bounds as constant inputs; has_* = 0 leaves the input absent */
  int has_min, has_max;
  float min, max;
} ew_case;

static int out_dtype_of(const ew_case* c, gfx_op op) {
  if (op == GFX_OP_EQUAL || op == GFX_OP_GREATER || op == GFX_OP_LESS) return GFX_DTYPE_BOOL;
  return c->dtype;
}

/* Whether the device claims the node (supports_node); prints the reason when not. */
static int claimed(const gfx_node_query* q) {
  gfx_status s = be->supports_node(dev, q);
  if (!s) return 1;
  assert_int_equal(gfx_status_code(s), GFX_ERR_NOT_SUPPORTED);
  print_message("  skipped: %s\n", gfx_status_message(s));
  gfx_status_free(s);
  return 0;
}

static int cases_run, cases_skipped;

static void run_case(const ew_case* c, void* stream) {
  ew_case cc = *c;
  attr_table attrs = cc.attrs;
  const int clip_inputs = strcmp(cc.op_type, "Clip") == 0 && cc.opset >= 11;
  int n_desc = clip_inputs ? 3 : cc.n_in;
  ir_node_desc desc = desc_base(cc.op_type, cc.opset, "vk_case", &attrs, n_desc, cc.dtype);
  for (int i = 0; i < cc.n_in; i++) {
    if (cc.in_dtypes[i]) desc.input_dtypes[i] = cc.in_dtypes[i];
    desc.input_shapes[i] = cc.shapes[i];
  }
  if (clip_inputs) {
    for (int i = 1; i < 3; i++) {
      int has = i == 1 ? cc.has_min : cc.has_max;
      desc.input_dtypes[i] = has ? cc.dtype : GFX_DTYPE_UNDEFINED;
      desc.input_shapes[i] = SCALAR;
      desc.input_is_const[i] = has;
      desc.input_const_data[i] = i == 1 ? (const void*)&cc.min : (const void*)&cc.max;
      desc.input_const_bytes[i] = has ? 4 : 0;
    }
    if (cc.dtype != GFX_DTYPE_F32) return; /* the bounds are written as float32 here */
  }
  desc.output_dtypes[0] = out_dtype_of(&cc, ir_op_from_name(cc.op_type));
  gfx_op op = GFX_OP_NONE;
  ir_params params;
  memset(&params, 0, sizeof params);
  gfx_status ps = ir_op_parse(&desc, &op, &params);
  if (ps) print_error("%s: parse: %s\n", cc.op_type, gfx_status_message(ps));
  expect_ok(ps);
  const int out_dtype = desc.output_dtypes[0];
  gfx_node_query q = {.op = op, .params = &params, .desc = &desc};
  print_message("%s %s x%d%s\n", cc.op_type, gfx_dtype_name(cc.dtype), cc.n_in, stream ? " (stream)" : "");
  if (!claimed(&q)) {
    cases_skipped++;
    return;
  }
  ir_node node = node_of(op, n_desc);
  node.params = params;

  /* output shape by numpy broadcasting of the inputs */
  gfx_shape out_shape = cc.shapes[0];
  for (int i = 1; i < cc.n_in; i++) {
    gfx_shape next;
    expect_ok(ir_broadcast_shapes(&out_shape, &cc.shapes[i], &next));
    out_shape = next;
  }
  const int64_t count = gfx_shape_numel(&out_shape);

  double* vals[IR_MAX_IO] = {0};
  void* host[IR_MAX_IO] = {0};
  void* devp[IR_MAX_IO] = {0};
  gfx_tensor in[IR_MAX_IO];
  gfx_shape in_shapes[IR_MAX_IO];
  memset(in, 0, sizeof in);
  for (int i = 0; i < n_desc; i++) in_shapes[i] = i < cc.n_in ? cc.shapes[i] : SCALAR;
  for (int i = 0; i < cc.n_in; i++) {
    int dt = desc.input_dtypes[i];
    int64_t n = gfx_shape_numel(&cc.shapes[i]);
    vals[i] = calloc((size_t)n + 1, sizeof(double));
    for (int64_t k = 0; k < n; k++) {
      double v = cc.small_ints ? floor(uniform(-2, 3)) : uniform(cc.lo, cc.hi);
      if (dt == GFX_DTYPE_I32 || dt == GFX_DTYPE_I64) v = cc.small_ints ? v : floor(v);
      if (dt == GFX_DTYPE_BOOL) v = v > 0;
      if (dt == GFX_DTYPE_U8) v = floor(fabs(v) * 50);
      if (i == 0 && cc.nan_at && k == cc.nan_at - 1) v = NAN;
      vals[i][k] = v;
    }
    host[i] = pack(dt, vals[i], n);
    for (int64_t k = 0; k < n; k++) vals[i][k] = unpack(dt, host[i], k); /* the values the kernel sees */
    size_t bytes = (size_t)n * gfx_dtype_size(dt);
    devp[i] = dev_alloc(bytes);
    expect_ok(be->copy(dev, devp[i], host[i], bytes, GFX_COPY_HOST_TO_DEVICE, NULL));
    in[i] = tensor_of(devp[i], dt, cc.shapes[i]);
  }
  for (int i = cc.n_in; i < n_desc; i++) in[i] = tensor_of(NULL, GFX_DTYPE_F32, SCALAR);
  size_t out_bytes = (size_t)count * gfx_dtype_size(out_dtype);
  void* dout = dev_alloc(out_bytes);
  gfx_tensor out = tensor_of(dout, out_dtype, out_shape);

  void* state = NULL;
  size_t scratch = 0;
  expect_ok(be->node_prepare(dev, &node, in_shapes, &out_shape, &state, &scratch));
  gfx_exec_ctx ctx = {.dev = dev, .stream = stream};
  expect_ok(be->node_run(&ctx, &node, in, &out, state));
  if (stream) expect_ok(be->stream_sync(dev, stream));
  unsigned char* got = malloc(out_bytes ? out_bytes : 1);
  expect_ok(be->copy(dev, got, dout, out_bytes, GFX_COPY_DEVICE_TO_HOST, NULL));

  const double atol = cc.dtype == GFX_DTYPE_F16 ? 1e-3 : 2e-6;
  const double rtol = cc.dtype == GFX_DTYPE_F16 ? 2e-3 : 1e-5;
  const int exact = out_dtype != GFX_DTYPE_F32 && out_dtype != GFX_DTYPE_F16;
  int bad = 0;
  for (int64_t e = 0; e < count; e++) {
    double v[IR_MAX_IO] = {0};
    for (int i = 0; i < cc.n_in; i++) v[i] = vals[i][bcast_offset(&cc.shapes[i], &out_shape, e)];
    const int nary = cc.n_in > 1 || op == GFX_OP_MIN || op == GFX_OP_MAX || op == GFX_OP_SUM || op == GFX_OP_MEAN;
    double want = !nary ? expected_unary(op, &params.elementwise, v[0]) : expected_nary(op, v, cc.n_in);
    if (out_dtype == GFX_DTYPE_I32) want = (double)(int32_t)(int64_t)want;
    double g = unpack(out_dtype, got, e);
    int ok = isnan(want) ? isnan(g) : exact ? g == want : fabs(g - want) <= atol + rtol * fabs(want);
    if (!ok && bad++ < 5)
      print_error("%s %s element %lld: got %.9g, want %.9g (inputs %.9g, %.9g)\n", cc.op_type,
                  gfx_dtype_name(cc.dtype), (long long)e, g, want, v[0], cc.n_in > 1 ? v[1] : 0.0);
  }
  assert_int_equal(bad, 0);
  cases_run++;

  be->node_release(dev, state);
  free(got);
  be->mem_free(dev, dout);
  for (int i = 0; i < cc.n_in; i++) {
    be->mem_free(dev, devp[i]);
    free(host[i]);
    free(vals[i]);
  }
}

/* The case tables below list the leading fields in order and name the rest; the fields left out are
 * zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define S3 SHAPE(3, 37, 5)

static void unary_cases(int dtype, void* stream) {
  const ew_case cases[] = {
      {"Relu", 14, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4, .nan_at = 7},
      {"LeakyRelu", 16, ATTRS(A_FLOAT("alpha", 0.1f)), 1, dtype, {0}, {S3}, -4, 4},
      {"Sigmoid", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -12, 12},
      {"Tanh", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -6, 6},
      {"HardSigmoid", 6, ATTRS(A_FLOAT("alpha", 0.3f), A_FLOAT("beta", 0.4f)), 1, dtype, {0}, {S3}, -5, 5},
      {"HardSwish", 14, NO_ATTRS, 1, dtype, {0}, {S3}, -5, 5},
      {"Clip", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4, .has_min = 1, .has_max = 1, .min = -1.0f, .max = 2.5f},
      {"Clip", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4, .has_min = 1, .min = 0.5f},
      {"Clip", 6, ATTRS(A_FLOAT("min", -0.25f), A_FLOAT("max", 0.75f)), 1, dtype, {0}, {S3}, -2, 2},
      {"Elu", 6, ATTRS(A_FLOAT("alpha", 0.7f)), 1, dtype, {0}, {S3}, -4, 4},
      {"Selu", 6, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4},
      {"Gelu", 20, NO_ATTRS, 1, dtype, {0}, {S3}, -5, 5},
      {"Gelu", 20, ATTRS(A_STR("approximate", "tanh")), 1, dtype, {0}, {S3}, -5, 5},
      {"Erf", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -3, 3},
      {"Softplus", 1, NO_ATTRS, 1, dtype, {0}, {S3}, -8, 8},
      {"Sqrt", 13, NO_ATTRS, 1, dtype, {0}, {S3}, 0.01, 9},
      {"Exp", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -5, 5},
      {"Log", 13, NO_ATTRS, 1, dtype, {0}, {S3}, 0.01, 20},
      {"Neg", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4},
      {"Abs", 13, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4},
      {"Reciprocal", 13, NO_ATTRS, 1, dtype, {0}, {S3}, 0.25, 4},
      {"Identity", 16, NO_ATTRS, 1, dtype, {0}, {S3}, -4, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], stream);
}

static void binary_cases(int dtype, void* stream) {
  const gfx_shape a = SHAPE(2, 3, 4, 5), b = SHAPE(3, 1, 5);
  const ew_case cases[] = {
      {"Add", 14, NO_ATTRS, 2, dtype, {0}, {a, b}, -4, 4},
      {"Add", 14, NO_ATTRS, 2, dtype, {0}, {SHAPE(7, 9), SHAPE(7, 9)}, -4, 4}, /* same shapes: no geometry */
      {"Sub", 14, NO_ATTRS, 2, dtype, {0}, {SHAPE(4, 1), SHAPE(1, 6)}, -4, 4}, /* both broadcast */
      {"Mul", 14, NO_ATTRS, 2, dtype, {0}, {SCALAR, a}, -4, 4},
      {"Div", 14, NO_ATTRS, 2, dtype, {0}, {a, b}, 0.5, 4},
      {"Pow", 15, NO_ATTRS, 2, dtype, {0}, {a, b}, 0.5, 2.5},
      {"Min", 13, NO_ATTRS, 4, dtype, {0}, {a, b, SHAPE(5), SCALAR}, -4, 4, .nan_at = 3},
      {"Max", 13, NO_ATTRS, 3, dtype, {0}, {SHAPE(4, 5), SHAPE(5), SHAPE(4, 1)}, -4, 4, .nan_at = 2},
      {"Max", 13, NO_ATTRS, 1, dtype, {0}, {SHAPE(6)}, -4, 4},
      {"Sum", 13, NO_ATTRS, 3, dtype, {0}, {a, b, SHAPE(4, 1)}, -4, 4},
      {"Mean", 13, NO_ATTRS, 8, dtype, {0},
       {SHAPE(2, 5), SHAPE(5), SHAPE(2, 1), SCALAR, SHAPE(2, 5), SHAPE(1, 5), SHAPE(5), SHAPE(2, 5)}, -4, 4},
      {"PRelu", 16, NO_ATTRS, 2, dtype, {0}, {a, SHAPE(3, 1, 1)}, -4, 4},
      {"Equal", 13, NO_ATTRS, 2, dtype, {0}, {a, b}, 0, 0, .small_ints = 1},
      {"Greater", 13, NO_ATTRS, 2, dtype, {0}, {a, b}, 0, 0, .small_ints = 1},
      {"Less", 13, NO_ATTRS, 2, dtype, {0}, {SHAPE(4, 1), SHAPE(1, 6)}, 0, 0, .small_ints = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], stream);
  /* Pow: negative bases with an integer exponent, given as int32 */
  ew_case p = {"Pow", 15, NO_ATTRS, 2, dtype, {0, GFX_DTYPE_I32}, {a, b}, -3, 4};
  run_case(&p, stream);
}

static void test_unary_f32(void** unused) {
  (void)unused;
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  unary_cases(GFX_DTYPE_F32, stream);
  be->stream_destroy(dev, stream);
}

static void test_binary_f32(void** unused) {
  (void)unused;
  binary_cases(GFX_DTYPE_F32, NULL);
}

static void test_float16(void** unused) {
  (void)unused;
  int before = cases_run;
  unary_cases(GFX_DTYPE_F16, NULL);
  binary_cases(GFX_DTYPE_F16, NULL);
  print_message("float16: %d cases run\n", cases_run - before);
}

static void test_integers(void** unused) {
  (void)unused;
  const gfx_shape a = SHAPE(2, 3, 4, 5), b = SHAPE(3, 1, 5);
  const int types[2] = {GFX_DTYPE_I32, GFX_DTYPE_I64};
  for (int t = 0; t < 2; t++) {
    const int dt = types[t];
    const ew_case cases[] = {
        {"Neg", 13, NO_ATTRS, 1, dt, {0}, {a}, -1000, 1000},
        {"Abs", 13, NO_ATTRS, 1, dt, {0}, {a}, -1000, 1000},
        {"Add", 14, NO_ATTRS, 2, dt, {0}, {a, b}, -1e6, 1e6},
        {"Sub", 14, NO_ATTRS, 2, dt, {0}, {a, b}, -1e6, 1e6},
        {"Mul", 14, NO_ATTRS, 2, dt, {0}, {a, b}, -3e4, 3e4},
        {"Min", 13, NO_ATTRS, 3, dt, {0}, {a, b, SHAPE(5)}, -100, 100},
        {"Max", 13, NO_ATTRS, 2, dt, {0}, {a, b}, -100, 100},
        {"Equal", 13, NO_ATTRS, 2, dt, {0}, {a, b}, 0, 0, .small_ints = 1},
        {"Greater", 13, NO_ATTRS, 2, dt, {0}, {a, b}, 0, 0, .small_ints = 1},
        {"Less", 13, NO_ATTRS, 2, dt, {0}, {a, b}, 0, 0, .small_ints = 1},
        {"Identity", 16, NO_ATTRS, 1, dt, {0}, {a}, -100, 100},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], NULL);
  }
  ew_case bytes = {"Identity", 16, NO_ATTRS, 1, GFX_DTYPE_BOOL, {0}, {SHAPE(37)}, -1, 1};
  run_case(&bytes, NULL);
  /* int32 multiplication wraps around */
  ew_case wrap = {"Mul", 14, NO_ATTRS, 2, GFX_DTYPE_I32, {0}, {SHAPE(64), SHAPE(64)}, 60000, 70000};
  run_case(&wrap, NULL);
}

/* ---- refusals and bad input ---- */

static void test_supports(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  /* an op family the backend has no kernel for yet */
  ir_node_desc d = desc_base("ConvTranspose", 11, "deconv0", &t, 2, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(1, 3, 8, 8);
  d.input_shapes[1] = SHAPE(3, 4, 3, 3);
  ir_params p;
  memset(&p, 0, sizeof p);
  gfx_node_query q = {.op = GFX_OP_CONV_TRANSPOSE, .params = &p, .desc = &d};
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "vulkan backend", "ConvTranspose", "not implemented");
  /* prepare and run refuse it too, as a status */
  ir_node node = node_of(GFX_OP_CONV_TRANSPOSE, 2);
  void* state = NULL;
  gfx_shape shapes[2] = {SHAPE(1, 3, 8, 8), SHAPE(3, 4, 3, 3)}, out = SHAPE(1, 4, 10, 10);
  expect_error(be->node_prepare(dev, &node, shapes, &out, &state, NULL), GFX_ERR_NOT_SUPPORTED, "ConvTranspose");
  /* an element type it has no kernel for */
  d = desc_base("Conv", 11, "conv0", &t, 2, GFX_DTYPE_BF16);
  p.conv.dtype = GFX_DTYPE_BF16;
  p.conv.spatial = 2;
  q = (gfx_node_query){.op = GFX_OP_CONV, .params = &p, .desc = &d};
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "vulkan backend", "Conv", "bfloat16");

  ir_node_desc r = desc_base("Relu", 14, "relu0", &t, 1, GFX_DTYPE_F32);
  q = (gfx_node_query){.op = GFX_OP_RELU, .params = &p, .desc = &r};
  expect_ok(be->supports_node(dev, &q));
  r = desc_base("Relu", 14, "relu1", &t, 1, GFX_DTYPE_BF16);
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "bfloat16");
  r = desc_base("Div", 14, "div0", &t, 2, GFX_DTYPE_I32);
  q.op = GFX_OP_DIV;
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "Div");
}

static void test_bad_input(void** unused) {
  (void)unused;
  unsigned char buf[64] = {0};
  void* bogus = (void*)(uintptr_t)0x1234;
  expect_error(be->copy(dev, bogus, buf, sizeof buf, GFX_COPY_HOST_TO_DEVICE, NULL), GFX_ERR_INVALID_ARGUMENT,
               "not inside any");
  expect_error(be->copy(dev, buf, bogus, sizeof buf, GFX_COPY_DEVICE_TO_HOST, NULL), GFX_ERR_INVALID_ARGUMENT,
               "source");
  void* d = dev_alloc(100);
  /* past the end of an allocation */
  expect_error(be->copy(dev, at(d, 80), buf, 64, GFX_COPY_HOST_TO_DEVICE, NULL), GFX_ERR_INVALID_ARGUMENT,
               "destination");
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  expect_error(be->copy(dev, at(d, 50), bogus, 10, GFX_COPY_DEVICE_TO_DEVICE, stream), GFX_ERR_INVALID_ARGUMENT,
               "source");
  expect_error(be->memset_zero(dev, at(d, 99), 2, stream), GFX_ERR_INVALID_ARGUMENT, "memset_zero");
  expect_error(be->copy(dev, d, buf, 8, (gfx_copy_kind)42, stream), GFX_ERR_INVALID_ARGUMENT, "copy kind");
  expect_ok(be->stream_sync(dev, stream));
  be->mem_free(dev, bogus); /* logged, ignored */

  /* a kernel given an address that is not the device's */
  ir_node node = node_of(GFX_OP_RELU, 1);
  gfx_shape s = SHAPE(25);
  void* state = NULL;
  expect_ok(be->node_prepare(dev, &node, &s, &s, &state, NULL));
  gfx_tensor in = tensor_of(bogus, GFX_DTYPE_F32, s), out = tensor_of(d, GFX_DTYPE_F32, s);
  gfx_exec_ctx ctx = {.dev = dev, .stream = stream};
  expect_error(be->node_run(&ctx, &node, &in, &out, state), GFX_ERR_INVALID_ARGUMENT, "input 0");
  in = tensor_of(d, GFX_DTYPE_F32, s);
  out = tensor_of(at(d, 4), GFX_DTYPE_F32, s); /* 100 bytes from offset 4 overrun */
  expect_error(be->node_run(&ctx, &node, &in, &out, state), GFX_ERR_INVALID_ARGUMENT, "output 0");
  /* shapes that do not broadcast */
  gfx_shape two[2] = {SHAPE(3, 4), SHAPE(5)}, o = SHAPE(3, 4);
  ir_node add = node_of(GFX_OP_ADD, 2);
  void* st2 = NULL;
  gfx_status bs = be->node_prepare(dev, &add, two, &o, &st2, NULL);
  assert_non_null(bs);
  gfx_status_free(bs);
  assert_null(st2);
  be->node_release(dev, state);
  be->stream_destroy(dev, stream);
  be->mem_free(dev, d);
}

static void test_summary(void** unused) {
  (void)unused;
  print_message("kernel cases run: %d, refused by supports_node: %d\n", cases_run, cases_skipped);
  assert_true(cases_run >= 90);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices),          cmocka_unit_test(test_alloc_free),
      cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_device_copy_and_zero),
      cmocka_unit_test(test_streams_events),   cmocka_unit_test(test_unary_f32),
      cmocka_unit_test(test_binary_f32),       cmocka_unit_test(test_float16),
      cmocka_unit_test(test_integers),         cmocka_unit_test(test_supports),
      cmocka_unit_test(test_bad_input),        cmocka_unit_test(test_summary),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
