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
#define _POSIX_C_SOURCE 200809L /* dup, fcntl, alarm, sysconf */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VK_NO_PROTOTYPES /* the application side loads the process's loader itself */
#include <vulkan/vulkan.h>

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
  /* pageable copies back through staging buffers of growing sizes: each wait must leave the staging
   * buffer it reads from alive while the stream recycles (and frees) the others */
  enum { BIG = 3 << 20 };
  unsigned char* big = malloc(BIG);
  unsigned char* big_back = malloc(BIG);
  void* dbig = dev_alloc(BIG);
  for (int i = 0; i < BIG; i++) big[i] = (unsigned char)(i * 13 + (i >> 11));
  expect_ok(be->copy(dev, dbig, big, BIG, GFX_COPY_HOST_TO_DEVICE, stream));
  for (size_t bytes = 1000; bytes <= BIG; bytes = bytes * 2 + 77) {
    memset(big_back, 0, bytes);
    expect_ok(be->copy(dev, big_back, dbig, bytes, GFX_COPY_DEVICE_TO_HOST, stream));
    if (memcmp(big_back, big, bytes) != 0) fail_msg("a %zu-byte copy back through staging differs", bytes);
  }
  be->mem_free(dev, dbig);
  free(big);
  free(big_back);
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

/* ---- Gather with indices out of range, Cast at the edges of the types ---- */

static void run_node(ir_node* node, const gfx_tensor* in, gfx_shape* in_shapes, gfx_tensor* out) {
  void* state = NULL;
  expect_ok(be->node_prepare(dev, node, in_shapes, &out->shape, &state, NULL));
  gfx_exec_ctx ctx = {.dev = dev, .stream = NULL};
  expect_ok(be->node_run(&ctx, node, in, out, state));
  be->node_release(dev, state);
}

/* Indices computed at run time that fall outside [-dim, dim) give zeros (vk_layout.c: a shader cannot
 * report them; constant ones are refused when the node is parsed), and nothing outside the tensors is
 * touched: the output is followed by a guard that must survive. */
static void test_gather_out_of_range(void** unused) {
  (void)unused;
  const float data[6] = {1, 2, 3, 4, 5, 6}; /* [3, 2] */
  for (int wide = 0; wide < 2; wide++) {
    const int64_t idx[5] = {2, -1, 3, -4, (int64_t)1 << 40};
    int32_t idx32[5];
    for (int i = 0; i < 5; i++) idx32[i] = (int32_t)idx[i];
    idx32[4] = INT32_MIN;
    void* dd = dev_alloc(sizeof data);
    void* di = dev_alloc(sizeof idx);
    void* dout = dev_alloc(64);
    expect_ok(be->copy(dev, dd, data, sizeof data, GFX_COPY_HOST_TO_DEVICE, NULL));
    expect_ok(be->copy(dev, di, wide ? (const void*)idx : (const void*)idx32, wide ? sizeof idx : sizeof idx32,
                       GFX_COPY_HOST_TO_DEVICE, NULL));
    float guard[16];
    for (int i = 0; i < 16; i++) guard[i] = -7.0f;
    expect_ok(be->copy(dev, dout, guard, sizeof guard, GFX_COPY_HOST_TO_DEVICE, NULL));
    ir_node node = node_of(GFX_OP_GATHER, 2);
    node.params.layout.dtype = GFX_DTYPE_F32;
    node.params.layout.axis = 0;
    gfx_shape shapes[2] = {SHAPE(3, 2), SHAPE(5)};
    gfx_tensor in[2] = {tensor_of(dd, GFX_DTYPE_F32, shapes[0]),
                        tensor_of(di, wide ? GFX_DTYPE_I64 : GFX_DTYPE_I32, shapes[1])};
    gfx_tensor out = tensor_of(dout, GFX_DTYPE_F32, SHAPE(5, 2));
    run_node(&node, in, shapes, &out);
    float got[16];
    expect_ok(be->copy(dev, got, dout, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
    const float want[10] = {5, 6, 5, 6, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 10; i++) assert_true(got[i] == want[i]);
    for (int i = 10; i < 16; i++) assert_true(got[i] == -7.0f);
    be->mem_free(dev, dd);
    be->mem_free(dev, di);
    be->mem_free(dev, dout);
  }
}

/* Cast's conversions against the reference's rules (ref_elementwise.c), bit for bit. */
static void test_cast_edges(void** unused) {
  (void)unused;
  const uint32_t nan_bits = 0x7fc00001u;
  float f[24] = {0.0f, -0.0f, 1.0f, -1.5f, 65504.0f, 65519.99f, 65520.0f, 1e10f, -1e10f, 5.9604645e-8f,
                 2.9802322e-8f, 2.9802326e-8f, 8.940697e-8f, 6.1035156e-5f, 6.1e-5f, 1.00048828125f, 1.00146484375f,
                 2147483520.0f, 2147483648.0f, -2147483648.0f, 3.7e19f, 0.4f, -0.99f, 0.0f};
  memcpy(&f[23], &nan_bits, 4);
  const int n = 24;
  void* src = dev_alloc(sizeof f);
  void* dst = dev_alloc(8 * 24);
  expect_ok(be->copy(dev, src, f, sizeof f, GFX_COPY_HOST_TO_DEVICE, NULL));
  const int outs[5] = {GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
  for (int k = 0; k < 5; k++) {
    const int to = outs[k];
    ir_node node = node_of(GFX_OP_CAST, 1);
    gfx_shape shape = SHAPE(24);
    gfx_tensor in = tensor_of(src, GFX_DTYPE_F32, shape), out = tensor_of(dst, to, shape);
    run_node(&node, &in, &shape, &out);
    unsigned char got[8 * 24];
    expect_ok(be->copy(dev, got, dst, (size_t)n * gfx_dtype_size(to), GFX_COPY_DEVICE_TO_HOST, NULL));
    for (int i = 0; i < n; i++) {
      if (to == GFX_DTYPE_F16 || to == GFX_DTYPE_BF16) {
        uint16_t h;
        memcpy(&h, got + 2 * i, 2);
        const uint16_t want = to == GFX_DTYPE_F16 ? gfx_float_to_half(f[i]) : gfx_float_to_bf16(f[i]);
        if (h != want) fail_msg("Cast float32 %.9g to %s: 0x%04x, want 0x%04x", (double)f[i], gfx_dtype_name(to), h, want);
      } else if (to == GFX_DTYPE_BOOL) {
        assert_int_equal(got[i], f[i] != 0.0f || isnan(f[i]));
      } else {
        const double lo = to == GFX_DTYPE_I32 ? -2147483648.0 : -9223372036854775808.0;
        const double v = f[i];
        const int64_t want = !(v >= lo && v < -lo) ? (to == GFX_DTYPE_I32 ? INT32_MIN : INT64_MIN) : (int64_t)v;
        int64_t g;
        if (to == GFX_DTYPE_I32) {
          int32_t w;
          memcpy(&w, got + 4 * i, 4);
          g = w;
        } else {
          memcpy(&g, got + 8 * i, 8);
        }
        if (g != want) fail_msg("Cast float32 %.9g to %s: %lld, want %lld", v, gfx_dtype_name(to), (long long)g, (long long)want);
      }
    }
  }
  /* int64 to float32 rounds once (to nearest even), int64 to int32 keeps the low bits, to bool v != 0 */
  const int64_t iv[6] = {0, -5, ((int64_t)1 << 40) + 1, (((int64_t)1 << 24) + 1), ((int64_t)1 << 33) + 7, INT64_MIN};
  expect_ok(be->copy(dev, src, iv, sizeof iv, GFX_COPY_HOST_TO_DEVICE, NULL));
  const int iouts[3] = {GFX_DTYPE_F32, GFX_DTYPE_I32, GFX_DTYPE_BOOL};
  for (int k = 0; k < 3; k++) {
    const int to = iouts[k];
    ir_node node = node_of(GFX_OP_CAST, 1);
    gfx_shape shape = SHAPE(6);
    gfx_tensor in = tensor_of(src, GFX_DTYPE_I64, shape), out = tensor_of(dst, to, shape);
    run_node(&node, &in, &shape, &out);
    unsigned char got[8 * 6];
    expect_ok(be->copy(dev, got, dst, 6 * gfx_dtype_size(to), GFX_COPY_DEVICE_TO_HOST, NULL));
    for (int i = 0; i < 6; i++) {
      if (to == GFX_DTYPE_F32) {
        float g;
        memcpy(&g, got + 4 * i, 4);
        assert_true(g == (float)iv[i]);
      } else if (to == GFX_DTYPE_I32) {
        int32_t g;
        memcpy(&g, got + 4 * i, 4);
        assert_true(g == (int32_t)(uint32_t)(uint64_t)iv[i]);
      } else {
        assert_int_equal(got[i], iv[i] != 0);
      }
    }
  }
  be->mem_free(dev, src);
  be->mem_free(dev, dst);
}

/* ---- refusals and bad input ---- */

static void test_supports(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  /* a variant the backend has no kernel for: ConvTranspose with a (fused) residual input */
  ir_node_desc d = desc_base("ConvTranspose", 11, "deconv0", &t, 2, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(1, 3, 8, 8);
  d.input_shapes[1] = SHAPE(3, 4, 3, 3);
  ir_params p;
  memset(&p, 0, sizeof p);
  p.conv.spatial = 2;
  p.conv.residual = IR_RES_ADD_THEN_ACT;
  gfx_node_query q = {.op = GFX_OP_CONV_TRANSPOSE, .params = &p, .desc = &d};
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "vulkan backend", "ConvTranspose", "not implemented");
  /* prepare refuses it too, as a status */
  ir_node node = node_of(GFX_OP_CONV_TRANSPOSE, 2);
  node.params.conv = p.conv;
  void* state = NULL;
  gfx_shape shapes[2] = {SHAPE(1, 3, 8, 8), SHAPE(3, 4, 3, 3)}, out = SHAPE(1, 4, 10, 10);
  expect_error(be->node_prepare(dev, &node, shapes, &out, &state, NULL), GFX_ERR_NOT_SUPPORTED, "ConvTranspose");
  /* an element type it has no kernel for (bfloat16 runs on the direct kernel) */
  d = desc_base("Conv", 11, "conv0", &t, 2, GFX_DTYPE_BF16);
  p.conv.dtype = GFX_DTYPE_BF16;
  p.conv.spatial = 2;
  q = (gfx_node_query){.op = GFX_OP_CONV, .params = &p, .desc = &d};
  expect_ok(be->supports_node(dev, &q));
  d = desc_base("Conv", 11, "conv1", &t, 2, GFX_DTYPE_I8);
  p.conv.dtype = GFX_DTYPE_I8;
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "vulkan backend", "Conv", "int8");

  ir_node_desc r = desc_base("Relu", 14, "relu0", &t, 1, GFX_DTYPE_F32);
  q = (gfx_node_query){.op = GFX_OP_RELU, .params = &p, .desc = &r};
  expect_ok(be->supports_node(dev, &q));
  r = desc_base("Relu", 14, "relu1", &t, 1, GFX_DTYPE_BF16);
  expect_ok(be->supports_node(dev, &q)); /* as 16-bit words, computed in float32 */
  r = desc_base("Relu", 14, "relu2", &t, 1, GFX_DTYPE_I8);
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "Relu of int8");
  r = desc_base("Pow", 15, "pow0", &t, 2, GFX_DTYPE_I32);
  q.op = GFX_OP_POW;
  expect_error(be->supports_node(dev, &q), GFX_ERR_NOT_SUPPORTED, "Pow of int32");
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

/* A float16 convolution on the channels-last tensor-core path (GFXEP_VULKAN_COOP_NHWC, emulated on a
 * device without cooperative matrices) asks for scratch to hold its input's and weights' copies: a
 * run without that scratch, or with a byte too little, is refused with the bytes named; with it, the
 * output matches a host convolution of the same float16 values. */
static void test_conv_channels_last_scratch(void** unused) {
  (void)unused;
  setenv("GFXEP_VULKAN_COOPMAT_EMULATE", "1", 1);
  setenv("GFXEP_VULKAN_COOP_CONV", "1", 1);
  setenv("GFXEP_VULKAN_COOP_NHWC", "1", 1);
  enum { C_IN = 16, C_OUT = 8, H = 12, W = 12, K = 3 };
  ir_node node = node_of(GFX_OP_CONV, 2);
  ir_conv_params* p = &node.params.conv;
  p->spatial = 2, p->group = 1, p->dtype = GFX_DTYPE_F16;
  for (int i = 0; i < 2; i++) {
    p->strides[i] = p->dilations[i] = 1;
    p->pads[i] = p->pads[2 + i] = 1;
  }
  gfx_shape shapes[2] = {SHAPE(1, C_IN, H, W), SHAPE(C_OUT, C_IN, K, K)}, out_shape = SHAPE(1, C_OUT, H, W);
  static double x[C_IN * H * W], w[C_OUT * C_IN * K * K], want[C_OUT * H * W];
  for (int i = 0; i < C_IN * H * W; i++) x[i] = ((i * 37) % 19 - 9) / 8.0;
  for (int i = 0; i < C_OUT * C_IN * K * K; i++) w[i] = ((i * 11) % 13 - 6) / 32.0;
  void* hx = pack(GFX_DTYPE_F16, x, C_IN * H * W);
  void* hw = pack(GFX_DTYPE_F16, w, C_OUT * C_IN * K * K);
  for (int co = 0; co < C_OUT; co++)
    for (int oy = 0; oy < H; oy++)
      for (int ox = 0; ox < W; ox++) {
        double sum = 0;
        for (int ci = 0; ci < C_IN; ci++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              const int iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              sum += unpack(GFX_DTYPE_F16, hx, (ci * H + iy) * W + ix) *
                     unpack(GFX_DTYPE_F16, hw, ((co * C_IN + ci) * K + ky) * K + kx);
            }
        want[(co * H + oy) * W + ox] = sum;
      }
  void* dx = dev_alloc(sizeof(uint16_t) * C_IN * H * W);
  void* dw = dev_alloc(sizeof(uint16_t) * C_OUT * C_IN * K * K);
  void* dy = dev_alloc(sizeof(uint16_t) * C_OUT * H * W);
  expect_ok(be->copy(dev, dx, hx, sizeof(uint16_t) * C_IN * H * W, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->copy(dev, dw, hw, sizeof(uint16_t) * C_OUT * C_IN * K * K, GFX_COPY_HOST_TO_DEVICE, NULL));
  gfx_tensor in[2] = {tensor_of(dx, GFX_DTYPE_F16, shapes[0]), tensor_of(dw, GFX_DTYPE_F16, shapes[1])};
  gfx_tensor out = tensor_of(dy, GFX_DTYPE_F16, out_shape);
  void* state = NULL;
  size_t scratch = 0;
  expect_ok(be->node_prepare(dev, &node, shapes, &out_shape, &state, &scratch));
  /* at least the two copies: the input and the weights in float16 */
  assert_true(scratch >= sizeof(uint16_t) * (C_IN * H * W + C_OUT * C_IN * K * K));
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  gfx_exec_ctx ctx = {.dev = dev, .stream = stream};
  char need[64];
  snprintf(need, sizeof need, "need %zu bytes of scratch", scratch);
  expect_error(be->node_run(&ctx, &node, in, &out, state), GFX_ERR_INVALID_ARGUMENT, "channels-last copies", need);
  void* ds = dev_alloc(scratch);
  ctx.scratch = ds;
  ctx.scratch_bytes = scratch - 1;
  expect_error(be->node_run(&ctx, &node, in, &out, state), GFX_ERR_INVALID_ARGUMENT, need);
  ctx.scratch_bytes = scratch;
  expect_ok(be->node_run(&ctx, &node, in, &out, state));
  expect_ok(be->stream_sync(dev, stream));
  uint16_t got[C_OUT * H * W];
  expect_ok(be->copy(dev, got, dy, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  int bad = 0;
  double peak = 0;
  for (int i = 0; i < C_OUT * H * W; i++) {
    const double g = unpack(GFX_DTYPE_F16, got, i);
    if (fabs(want[i]) > peak) peak = fabs(want[i]);
    if (fabs(g - want[i]) > 2e-3 + 2e-3 * fabs(want[i])) bad++;
  }
  assert_true(peak > 0.5); /* a comparison that can fail: the outputs are not near zero */
  assert_int_equal(bad, 0);
  be->node_release(dev, state);
  be->stream_destroy(dev, stream);
  be->mem_free(dev, ds);
  be->mem_free(dev, dx);
  be->mem_free(dev, dw);
  be->mem_free(dev, dy);
  free(hx);
  free(hw);
  unsetenv("GFXEP_VULKAN_COOPMAT_EMULATE");
  unsetenv("GFXEP_VULKAN_COOP_CONV");
  unsetenv("GFXEP_VULKAN_COOP_NHWC");
}

/* ---- graphics interop: imports and the application's own VkDevice ----
 *
 * The test plays the application: it loads the process's Vulkan loader (the one the module uses) and
 * makes its own VkDevice on the same physical device as gfx device 0, which exports memory and
 * semaphores and is then handed to the backend with InitGraphicsInterop's keys. Nothing host-waits
 * on an imported semaphore; the semaphore part runs only where VK_KHR_external_semaphore_fd exists
 * (not lavapipe) and says so when skipped, under a watchdog. */

typedef struct app_vk {
  void* lib;
  PFN_vkGetInstanceProcAddr gipa;
  VkInstance inst;
  VkPhysicalDevice phys;
  VkDevice dev;
  uint32_t family;
  int has_mem_fd, has_sem_fd, has_mem_host; /* the physical device's extensions */
  VkPhysicalDeviceMemoryProperties mem;
  char features[64];                        /* what the device was created with, as gfxep.vk_features */
#define APP_FN(name) PFN_##name name
  APP_FN(vkDestroyInstance);
  APP_FN(vkEnumeratePhysicalDevices);
  APP_FN(vkGetPhysicalDeviceProperties2);
  APP_FN(vkGetPhysicalDeviceQueueFamilyProperties);
  APP_FN(vkGetPhysicalDeviceMemoryProperties);
  APP_FN(vkGetPhysicalDeviceFeatures2);
  APP_FN(vkEnumerateDeviceExtensionProperties);
  APP_FN(vkCreateDevice);
  APP_FN(vkGetDeviceProcAddr);
  APP_FN(vkDestroyDevice);
  APP_FN(vkDeviceWaitIdle);
  APP_FN(vkCreateBuffer);
  APP_FN(vkDestroyBuffer);
  APP_FN(vkGetBufferMemoryRequirements);
  APP_FN(vkAllocateMemory);
  APP_FN(vkFreeMemory);
  APP_FN(vkBindBufferMemory);
  APP_FN(vkMapMemory);
  APP_FN(vkGetMemoryFdKHR);
  APP_FN(vkCreateSemaphore);
  APP_FN(vkDestroySemaphore);
  APP_FN(vkGetSemaphoreFdKHR);
  APP_FN(vkSignalSemaphore);
#undef APP_FN
} app_vk;

static app_vk app;

#define LOAD_I(name) (app.name = (PFN_##name)app.gipa(app.inst, #name))
#define LOAD_D(name) (app.name = (PFN_##name)app.vkGetDeviceProcAddr(app.dev, #name))

static void vk_ok(VkResult r, const char* what) {
  if (r != VK_SUCCESS) print_error("%s: VkResult %d\n", what, (int)r);
  assert_int_equal(r, VK_SUCCESS);
}

/* The instance and the physical device of gfx device 0 (by UUID); once. */
static void app_instance(void) {
  if (app.inst) return;
  app.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  assert_non_null(app.lib);
  app.gipa = (PFN_vkGetInstanceProcAddr)dlsym(app.lib, "vkGetInstanceProcAddr");
  assert_non_null(app.gipa);
  PFN_vkCreateInstance create = (PFN_vkCreateInstance)app.gipa(VK_NULL_HANDLE, "vkCreateInstance");
  VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &ai};
  vk_ok(create(&ici, NULL, &app.inst), "vkCreateInstance");
  LOAD_I(vkDestroyInstance);
  LOAD_I(vkEnumeratePhysicalDevices);
  LOAD_I(vkGetPhysicalDeviceProperties2);
  LOAD_I(vkGetPhysicalDeviceQueueFamilyProperties);
  LOAD_I(vkGetPhysicalDeviceMemoryProperties);
  LOAD_I(vkGetPhysicalDeviceFeatures2);
  LOAD_I(vkEnumerateDeviceExtensionProperties);
  LOAD_I(vkCreateDevice);
  LOAD_I(vkGetDeviceProcAddr);
  gfx_device_info info;
  expect_ok(be->device_info(dev, &info));
  VkPhysicalDevice phys[16];
  uint32_t n = 16;
  app.vkEnumeratePhysicalDevices(app.inst, &n, phys);
  for (uint32_t i = 0; i < n && !app.phys; i++) {
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    app.vkGetPhysicalDeviceProperties2(phys[i], &p2);
    if (memcmp(id.deviceUUID, info.uuid, 16) == 0) app.phys = phys[i];
  }
  assert_non_null(app.phys);
  uint32_t n_fam = 0;
  VkQueueFamilyProperties fams[32];
  app.vkGetPhysicalDeviceQueueFamilyProperties(app.phys, &n_fam, NULL);
  if (n_fam > 32) n_fam = 32;
  app.vkGetPhysicalDeviceQueueFamilyProperties(app.phys, &n_fam, fams);
  app.family = UINT32_MAX;
  for (uint32_t i = 0; i < n_fam && app.family == UINT32_MAX; i++)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) app.family = i;
  assert_true(app.family != UINT32_MAX);
  uint32_t n_ext = 0;
  app.vkEnumerateDeviceExtensionProperties(app.phys, NULL, &n_ext, NULL);
  VkExtensionProperties* exts = calloc(n_ext + 1, sizeof *exts);
  app.vkEnumerateDeviceExtensionProperties(app.phys, NULL, &n_ext, exts);
  for (uint32_t i = 0; i < n_ext; i++) {
    if (!strcmp(exts[i].extensionName, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) app.has_mem_fd = 1;
    if (!strcmp(exts[i].extensionName, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) app.has_sem_fd = 1;
    if (!strcmp(exts[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) app.has_mem_host = 1;
  }
  free(exts);
  app.vkGetPhysicalDeviceMemoryProperties(app.phys, &app.mem);
  print_message("application side: %s; external memory fd %d, semaphore fd %d, memory host %d\n", info.name,
                app.has_mem_fd, app.has_sem_fd, app.has_mem_host);
}

/* The application's VkDevice: Vulkan 1.2 timelineSemaphore + bufferDeviceAddress, int64 where the
 * device has it (listed in app.features), the fd extensions; never VK_EXT_external_memory_host. */
static void app_device_create(void) {
  app_instance();
  VkPhysicalDeviceVulkan12Features have12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 have = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &have12};
  app.vkGetPhysicalDeviceFeatures2(app.phys, &have);
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .timelineSemaphore = VK_TRUE,
                                          .bufferDeviceAddress = VK_TRUE};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
  f2.features.shaderInt64 = have.features.shaderInt64;
  snprintf(app.features, sizeof app.features, "%s", have.features.shaderInt64 ? "int64" : "");
  const char* exts[2];
  uint32_t n_exts = 0;
  if (app.has_mem_fd) exts[n_exts++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
  if (app.has_sem_fd) exts[n_exts++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = app.family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = n_exts,
                            .ppEnabledExtensionNames = exts};
  vk_ok(app.vkCreateDevice(app.phys, &dci, NULL, &app.dev), "vkCreateDevice (application)");
  LOAD_D(vkDestroyDevice);
  LOAD_D(vkDeviceWaitIdle);
  LOAD_D(vkCreateBuffer);
  LOAD_D(vkDestroyBuffer);
  LOAD_D(vkGetBufferMemoryRequirements);
  LOAD_D(vkAllocateMemory);
  LOAD_D(vkFreeMemory);
  LOAD_D(vkBindBufferMemory);
  LOAD_D(vkMapMemory);
  LOAD_D(vkGetMemoryFdKHR);
  LOAD_D(vkCreateSemaphore);
  LOAD_D(vkDestroySemaphore);
  LOAD_D(vkGetSemaphoreFdKHR);
  LOAD_D(vkSignalSemaphore);
}

static void app_device_destroy(void) {
  if (!app.dev) return;
  app.vkDeviceWaitIdle(app.dev); /* only the application's own work is on it now */
  app.vkDestroyDevice(app.dev, NULL);
  app.dev = VK_NULL_HANDLE;
}

/* Exportable memory (opaque fd, not dedicated) with a buffer at offset 0; mapped where host-visible. */
typedef struct app_mem {
  VkBuffer buf;
  VkDeviceMemory mem;
  VkDeviceSize size; /* of the allocation */
  void* map;
} app_mem;

static void app_mem_create(VkDeviceSize bytes, app_mem* m) {
  memset(m, 0, sizeof *m);
  VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = &ext,
                            .size = bytes,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  vk_ok(app.vkCreateBuffer(app.dev, &bci, NULL, &m->buf), "vkCreateBuffer (exportable)");
  VkMemoryRequirements req;
  app.vkGetBufferMemoryRequirements(app.dev, m->buf, &req);
  uint32_t type = UINT32_MAX; /* the first device-local type, as gfxep's import tries first */
  for (uint32_t i = 0; i < app.mem.memoryTypeCount && type == UINT32_MAX; i++)
    if ((req.memoryTypeBits & (1u << i)) && (app.mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = i;
  assert_true(type != UINT32_MAX);
  VkExportMemoryAllocateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                   .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = &ex,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  vk_ok(app.vkAllocateMemory(app.dev, &mai, NULL, &m->mem), "vkAllocateMemory (exportable)");
  vk_ok(app.vkBindBufferMemory(app.dev, m->buf, m->mem, 0), "vkBindBufferMemory");
  m->size = req.size;
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if ((app.mem.memoryTypes[type].propertyFlags & hv) == hv)
    vk_ok(app.vkMapMemory(app.dev, m->mem, 0, VK_WHOLE_SIZE, 0, &m->map), "vkMapMemory");
}

static int app_mem_fd(app_mem* m) {
  int fd = -1;
  VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                             .memory = m->mem,
                             .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  vk_ok(app.vkGetMemoryFdKHR(app.dev, &gi, &fd), "vkGetMemoryFdKHR");
  assert_true(fd >= 0);
  return fd;
}

static void app_mem_destroy(app_mem* m) {
  app.vkDestroyBuffer(app.dev, m->buf, NULL);
  app.vkFreeMemory(app.dev, m->mem, NULL); /* unmaps */
  memset(m, 0, sizeof *m);
}

static int fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

/* out[i] = a[i] + b[i] over n floats at three device addresses, on stream (NULL: synchronous). */
static void run_add(void* a, void* b, void* out, int64_t n, void* stream) {
  ir_node node = node_of(GFX_OP_ADD, 2);
  gfx_shape s = shape_of(1, &n);
  gfx_shape in_shapes[2] = {s, s};
  void* state = NULL;
  expect_ok(be->node_prepare(dev, &node, in_shapes, &s, &state, NULL));
  gfx_tensor in[2] = {tensor_of(a, GFX_DTYPE_F32, s), tensor_of(b, GFX_DTYPE_F32, s)};
  gfx_tensor o = tensor_of(out, GFX_DTYPE_F32, s);
  gfx_exec_ctx ctx = {.dev = dev, .stream = stream};
  expect_ok(be->node_run(&ctx, &node, in, &o, state));
  if (stream) expect_ok(be->stream_sync(dev, stream));
  be->node_release(dev, state);
}

/* Imported opaque-fd memory at an offset: written by copies, read and written by a kernel, and
 * seen by the exporter (where its memory is host-visible); a failed import closes the fd. */
static void import_fd_case(const char* where) {
  enum { N = 1024, OFF = 256 };
  app_mem m;
  app_mem_create(OFF + 3 * N * sizeof(float), &m);
  float a[N], b[N], got[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)(i % 97) - 48.0f;
    b[i] = (float)(i * 3 % 101) * 0.5f;
  }
  if (m.map) memcpy((char*)m.map + OFF, a, sizeof a); /* the exporter writes a */
  int fd = app_mem_fd(&m);
  gfx_ext_memory_desc desc = {.kind = GFX_EXT_MEMORY_OPAQUE_FD, .handle = dup(fd), .size = m.size, .offset = OFF};
  void *imp = NULL, *base = NULL;
  expect_ok(be->import_memory(dev, &desc, &imp, &base));
  assert_non_null(imp);
  assert_non_null(base);
  if (!m.map) expect_ok(be->copy(dev, base, a, sizeof a, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->copy(dev, got, base, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  assert_memory_equal(got, a, sizeof a);
  void* bb = at(base, N * sizeof(float));
  void* cc = at(base, 2 * N * sizeof(float));
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  expect_ok(be->copy(dev, bb, b, sizeof b, GFX_COPY_HOST_TO_DEVICE, stream));
  run_add(base, bb, cc, N, stream);
  expect_ok(be->copy(dev, got, cc, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) assert_true(got[i] == a[i] + b[i]); /* exact: small halves */
  if (m.map) {
    assert_memory_equal((char*)m.map + OFF + 2 * N * sizeof(float), got, sizeof got);
  } else {
    print_message("  (%s: the exporter's memory is not host-visible: checked through gfxep only)\n", where);
  }
  /* between the import and mem_alloc memory, on a stream */
  void* plain = dev_alloc(sizeof got);
  expect_ok(be->copy(dev, plain, cc, sizeof got, GFX_COPY_DEVICE_TO_DEVICE, stream));
  expect_ok(be->memset_zero(dev, cc, sizeof got, stream));
  expect_ok(be->copy(dev, at(cc, 4), plain, 16, GFX_COPY_DEVICE_TO_DEVICE, stream));
  expect_ok(be->stream_sync(dev, stream));
  float back[N];
  expect_ok(be->copy(dev, back, cc, sizeof back, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) assert_true(back[i] == (i >= 1 && i < 5 ? got[i - 1] : 0.0f));
  be->mem_free(dev, base); /* imported memory: refused (logged), still usable */
  expect_ok(be->copy(dev, back, base, 4, GFX_COPY_DEVICE_TO_HOST, NULL));
  /* past the region */
  expect_error(be->copy(dev, got, at(base, m.size - OFF - 8), 16, GFX_COPY_DEVICE_TO_HOST, NULL),
               GFX_ERR_INVALID_ARGUMENT, "not inside");
  be->mem_free(dev, plain);
  be->stream_destroy(dev, stream);
  be->release_memory(dev, imp, base);
  expect_error(be->copy(dev, got, base, 4, GFX_COPY_DEVICE_TO_HOST, NULL), GFX_ERR_INVALID_ARGUMENT, "not inside");
  /* failures close the fd they were given */
  int bad = dup(fd);
  gfx_ext_memory_desc off = {.kind = GFX_EXT_MEMORY_OPAQUE_FD, .handle = bad, .size = m.size, .offset = m.size};
  expect_error(be->import_memory(dev, &off, &imp, &base), GFX_ERR_INVALID_ARGUMENT, "offset");
  assert_false(fd_is_open(bad));
  gfx_ext_memory_desc none = {.kind = GFX_EXT_MEMORY_OPAQUE_FD, .handle = -1, .size = m.size, .offset = 0};
  expect_error(be->import_memory(dev, &none, &imp, &base), GFX_ERR_INVALID_ARGUMENT, "handle -1");
  assert_null(imp);
  close(fd);
  app_mem_destroy(&m);
  print_message("%s: opaque-fd import checked\n", where);
}

static void test_import_memory(void** unused) {
  (void)unused;
  app_instance();
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_OPAQUE_FD), app.has_mem_fd);
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_HOST_ALLOCATION), app.has_mem_host);
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_OPAQUE_WIN32), 0); /* Linux */
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_D3D12_HEAP), 0);
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_D3D12_RESOURCE), 0);
  gfx_ext_memory_desc d12 = {.kind = GFX_EXT_MEMORY_D3D12_RESOURCE, .handle = 1, .size = 4096};
  void *imp = NULL, *base = NULL;
  expect_error(be->import_memory(dev, &d12, &imp, &base), GFX_ERR_NOT_SUPPORTED, "D3D12 resource");
  if (!app.has_mem_fd) {
    print_message("opaque-fd import: skipped: VK_KHR_external_memory_fd is not present\n");
    return;
  }
  app_device_create(); /* a second VkDevice on the same physical device exports */
  import_fd_case("gfxep's own VkDevice");
  app_device_destroy();
}

static void test_import_host(void** unused) {
  (void)unused;
  if (!be->can_import_memory(dev, GFX_EXT_MEMORY_HOST_ALLOCATION)) {
    print_message("host-allocation import: skipped: VK_EXT_external_memory_host is not present\n");
    return;
  }
  enum { N = 3000 };
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = (3 * N * sizeof(float) + (size_t)page - 1) / (size_t)page * (size_t)page;
  float* host = aligned_alloc((size_t)page, bytes);
  assert_non_null(host);
  for (int i = 0; i < N; i++) {
    host[i] = (float)(i % 13);
    host[N + i] = (float)(i % 7) * 0.25f;
  }
  gfx_ext_memory_desc desc = {.kind = GFX_EXT_MEMORY_HOST_ALLOCATION, .handle = (intptr_t)host, .size = bytes};
  void *imp = NULL, *base = NULL;
  expect_ok(be->import_memory(dev, &desc, &imp, &base));
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  run_add(base, at(base, N * sizeof(float)), at(base, 2 * N * sizeof(float)), N, stream);
  for (int i = 0; i < N; i++) assert_true(host[2 * N + i] == host[i] + host[N + i]);
  float got[16];
  expect_ok(be->copy(dev, got, at(base, 2 * N * sizeof(float)), sizeof got, GFX_COPY_DEVICE_TO_HOST, stream));
  assert_memory_equal(got, host + 2 * N, sizeof got);
  be->stream_destroy(dev, stream);
  be->release_memory(dev, imp, base);
  /* misaligned */
  desc.handle = (intptr_t)(host + 1);
  expect_error(be->import_memory(dev, &desc, &imp, &base), GFX_ERR_INVALID_ARGUMENT, "aligned");
  free(host);
  print_message("host-allocation import checked\n");
}

static void watchdog(int sig) {
  (void)sig;
  static const char msg[] = "\nFAIL: watchdog: a semaphore wait did not finish in time\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

/* A timeline exported by the application: stream 1 waits for 1, copies, signals 2; stream 2 waits
 * for 2. The host signals 1 (a Vulkan host signal) and only ever host-waits on gfxep's streams. */
static void semaphore_case(const char* where) {
  assert_int_equal(be->can_import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_FD), 1);
  VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                    .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkSemaphoreTypeCreateInfo ti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                  .pNext = &ex,
                                  .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
  VkSemaphore sem;
  vk_ok(app.vkCreateSemaphore(app.dev, &sci, NULL, &sem), "vkCreateSemaphore (exportable timeline)");
  int fd = -1;
  VkSemaphoreGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                .semaphore = sem,
                                .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  vk_ok(app.vkGetSemaphoreFdKHR(app.dev, &gi, &fd), "vkGetSemaphoreFdKHR");
  void* imported = NULL;
  expect_ok(be->import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_FD, fd, &imported)); /* the fd is Vulkan's now */
  enum { N = 4096 };
  unsigned char src[N], got[N];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 5 + 1);
  void* x = dev_alloc(N);
  void* y = dev_alloc(N);
  expect_ok(be->copy(dev, x, src, N, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->memset_zero(dev, y, N, NULL));
  void *s1 = NULL, *s2 = NULL;
  expect_ok(be->stream_create(dev, &s1));
  expect_ok(be->stream_create(dev, &s2));
  signal(SIGALRM, watchdog);
  alarm(60);
  expect_ok(be->wait_semaphore(dev, imported, 1, s1));
  expect_ok(be->copy(dev, y, x, N, GFX_COPY_DEVICE_TO_DEVICE, s1));
  expect_ok(be->signal_semaphore(dev, imported, 2, s1)); /* submits, waiting on the device for 1 */
  expect_ok(be->wait_semaphore(dev, imported, 2, s2));
  expect_ok(be->memset_zero(dev, x, 8, s2));
  expect_ok(be->stream_flush(dev, s2));
  /* nothing has run yet: an event recorded behind the wait is not done (a query of gfxep's own
   * semaphore; anything submitted to the queue now would wait behind s1's wait, in queue order) */
  void* ev = NULL;
  expect_ok(be->event_create(dev, &ev));
  expect_ok(be->event_record(dev, ev, s1));
  nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 50000000}, NULL);
  assert_int_equal(be->event_done(dev, ev), 0);
  VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = sem, .value = 1};
  vk_ok(app.vkSignalSemaphore(app.dev, &si), "vkSignalSemaphore(1)");
  expect_ok(be->stream_sync(dev, s2)); /* done once gfxep's own signal of 2 arrived on the device */
  expect_ok(be->stream_sync(dev, s1));
  assert_int_equal(be->event_done(dev, ev), 1);
  be->event_destroy(dev, ev);
  alarm(0);
  expect_ok(be->copy(dev, got, y, N, GFX_COPY_DEVICE_TO_HOST, NULL));
  assert_memory_equal(got, src, N);
  expect_ok(be->copy(dev, got, x, 16, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < 16; i++) assert_int_equal(got[i], i < 8 ? 0 : src[i]);
  be->release_semaphore(dev, imported);
  be->stream_destroy(dev, s1);
  be->stream_destroy(dev, s2);
  be->mem_free(dev, x);
  be->mem_free(dev, y);
  app.vkDestroySemaphore(app.dev, sem, NULL);
  print_message("%s: timeline semaphore import, device-side wait and signal checked\n", where);
}

static void test_import_semaphore(void** unused) {
  (void)unused;
  app_instance();
  assert_int_equal(be->can_import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_FD), app.has_sem_fd);
  assert_int_equal(be->can_import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_WIN32), 0);
  assert_int_equal(be->can_import_semaphore(dev, GFX_EXT_SEMAPHORE_D3D12_FENCE), 0);
  void* sem = NULL;
  int fd = dup(2);
  expect_error(be->import_semaphore(dev, GFX_EXT_SEMAPHORE_D3D12_FENCE, fd, &sem), GFX_ERR_NOT_SUPPORTED, "import");
  close(fd);
  if (!app.has_sem_fd) {
    print_message("semaphore import: SKIPPED: VK_KHR_external_semaphore_fd is not present on this device "
                  "(lavapipe); it runs where the extension exists (the GPU machine)\n");
    int bad = dup(2);
    expect_error(be->import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_FD, bad, &sem), GFX_ERR_NOT_SUPPORTED,
                 "VK_KHR_external_semaphore_fd");
    assert_false(fd_is_open(bad)); /* handed over in every case */
    return;
  }
  app_device_create();
  semaphore_case("gfxep's own VkDevice");
  app_device_destroy();
}

/* ---- InitGraphicsInterop on the application's device ---- */

typedef struct lock_count {
  int locks, unlocks, depth, bad;
} lock_count;

static void queue_lock(void* user) {
  lock_count* c = user;
  if (c->depth++) c->bad++;
  c->locks++;
}
static void queue_unlock(void* user) {
  lock_count* c = user;
  if (--c->depth) c->bad++;
  c->unlocks++;
}

enum { MAX_KEYS = 16 };
typedef struct kv {
  const char* keys[MAX_KEYS];
  const char* values[MAX_KEYS];
  char store[MAX_KEYS][48];
  size_t n;
} kv;

static void kv_set(kv* k, const char* key, const char* value) {
  size_t i = 0;
  while (i < k->n && strcmp(k->keys[i], key) != 0) i++;
  if (i == k->n) k->n++;
  k->keys[i] = key;
  snprintf(k->store[i], sizeof k->store[i], "%s", value);
  k->values[i] = k->store[i];
}

static void kv_del(kv* k, const char* key) {
  for (size_t i = 0; i < k->n; i++)
    if (!strcmp(k->keys[i], key)) {
      for (size_t j = i + 1; j < k->n; j++) {
        k->keys[j - 1] = k->keys[j];
        memcpy(k->store[j - 1], k->store[j], sizeof k->store[j]);
        k->values[j - 1] = k->store[j - 1];
      }
      k->n--;
      return;
    }
}

static void kv_ptr(kv* k, const char* key, const void* p) {
  char buf[40];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(uintptr_t)p);
  kv_set(k, key, buf);
}

static gfx_status init_with(const kv* k, gfx_graphics_api api, char* note, size_t size) {
  gfx_interop_config c = {.api = api, .keys = k->keys, .values = k->values, .count = k->n};
  return be->graphics_interop_init(dev, &c, note, size);
}

/* a vkGetInstanceProcAddr of another loader, and one that makes the physical device another GPU */
static PFN_vkVoidFunction VKAPI_PTR foreign_gipa(VkInstance inst, const char* name) {
  (void)inst;
  (void)name;
  return NULL;
}
static PFN_vkGetPhysicalDeviceProperties2 real_props2;
static void VKAPI_PTR other_gpu_props2(VkPhysicalDevice phys, VkPhysicalDeviceProperties2* p) {
  real_props2(phys, p);
  for (VkBaseOutStructure* s = p->pNext; s; s = s->pNext)
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES)
      ((VkPhysicalDeviceIDProperties*)(void*)s)->deviceUUID[15] ^= 0x5a;
}
static PFN_vkVoidFunction VKAPI_PTR other_gpu_gipa(VkInstance inst, const char* name) {
  if (!strcmp(name, "vkGetPhysicalDeviceProperties2")) {
    real_props2 = (PFN_vkGetPhysicalDeviceProperties2)app.gipa(inst, name);
    return (PFN_vkVoidFunction)other_gpu_props2;
  }
  return app.gipa(inst, name);
}

static void expect_key_error(const kv* k, gfx_code code, const char* key, const char* value) {
  char note[256];
  gfx_status s = init_with(k, GFX_GRAPHICS_API_VULKAN, note, sizeof note);
  if (s) print_message("  refused: %s\n", gfx_status_message(s));
  expect_error(s, code, key, value);
}

static void test_graphics_interop(void** unused) {
  (void)unused;
  app_device_create();
  char note[512];
  kv k = {0};
  /* no keys: gfxep keeps its own device */
  expect_ok(init_with(&k, GFX_GRAPHICS_API_VULKAN, note, sizeof note));
  print_message("no keys: %s\n", note);
  assert_non_null(strstr(note, "own VkDevice"));
  expect_ok(be->graphics_interop_deinit(dev));
  expect_error(init_with(&k, GFX_GRAPHICS_API_D3D12, note, sizeof note), GFX_ERR_NOT_SUPPORTED, "D3D12");

  lock_count lc = {0};
  kv_ptr(&k, "gfxep.vk_instance", app.inst);
  kv_ptr(&k, "gfxep.vk_physical_device", app.phys);
  kv_ptr(&k, "gfxep.vk_device", app.dev);
  char num[16];
  snprintf(num, sizeof num, "%u", app.family);
  kv_set(&k, "gfxep.vk_queue_family", num);
  kv_set(&k, "gfxep.vk_queue_index", "0");
  kv_ptr(&k, "gfxep.vk_get_instance_proc_addr", (const void*)app.gipa);
  kv_ptr(&k, "gfxep.vk_queue_lock", (const void*)queue_lock);
  kv_ptr(&k, "gfxep.vk_queue_unlock", (const void*)queue_unlock);
  kv_ptr(&k, "gfxep.vk_queue_lock_user", &lc);
  kv_set(&k, "gfxep.vk_features", app.features);

  /* every key checked, named with its value */
  struct {
    const char* key;
    const char* value; /* NULL: the key is removed */
    gfx_code code;
    const char* expect;
  } bad[] = {
      {"gfxep.vk_device", NULL, GFX_ERR_INVALID_ARGUMENT, "missing"},
      {"gfxep.vk_instance", NULL, GFX_ERR_INVALID_ARGUMENT, "missing"},
      {"gfxep.vk_queue_family", NULL, GFX_ERR_INVALID_ARGUMENT, "missing"},
      {"gfxep.vk_get_instance_proc_addr", NULL, GFX_ERR_INVALID_ARGUMENT, "missing"},
      {"gfxep.vk_instance", "zz", GFX_ERR_INVALID_ARGUMENT, "'zz'"},
      {"gfxep.vk_physical_device", "0x", GFX_ERR_INVALID_ARGUMENT, "'0x'"},
      {"gfxep.vk_device", "0", GFX_ERR_INVALID_ARGUMENT, "'0'"},
      {"gfxep.vk_device", "-12", GFX_ERR_INVALID_ARGUMENT, "'-12'"},
      {"gfxep.vk_device", "0x1g", GFX_ERR_INVALID_ARGUMENT, "'0x1g'"},
      {"gfxep.vk_device", "99999999999999999999999", GFX_ERR_INVALID_ARGUMENT, "'99999999999999999999999'"},
      {"gfxep.vk_queue_family", "0x1", GFX_ERR_INVALID_ARGUMENT, "'0x1'"},
      {"gfxep.vk_queue_family", "4294967296", GFX_ERR_INVALID_ARGUMENT, "'4294967296'"},
      {"gfxep.vk_queue_family", "77", GFX_ERR_INVALID_ARGUMENT, "'77'"},
      {"gfxep.vk_queue_index", "", GFX_ERR_INVALID_ARGUMENT, "''"},
      {"gfxep.vk_queue_index", "1000", GFX_ERR_INVALID_ARGUMENT, "'1000'"},
      {"gfxep.vk_queue_unlock", NULL, GFX_ERR_INVALID_ARGUMENT, "gfxep.vk_queue_lock"},
      {"gfxep.vk_queue_lock_user", "nope", GFX_ERR_INVALID_ARGUMENT, "'nope'"},
      {"gfxep.vk_features", "float16,bogus", GFX_ERR_INVALID_ARGUMENT, "'bogus'"},
      {"gfxep.vk_devcie", "0x10", GFX_ERR_INVALID_ARGUMENT, "'0x10'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    kv t = k;
    for (size_t j = 0; j < t.n; j++) t.values[j] = t.store[j];
    if (bad[i].value)
      kv_set(&t, bad[i].key, bad[i].value);
    else
      kv_del(&t, bad[i].key);
    expect_key_error(&t, bad[i].code, bad[i].key, bad[i].expect);
  }
  {
    kv t = k;
    for (size_t j = 0; j < t.n; j++) t.values[j] = t.store[j];
    kv_ptr(&t, "gfxep.vk_get_instance_proc_addr", (const void*)foreign_gipa);
    expect_key_error(&t, GFX_ERR_NOT_SUPPORTED, "gfxep.vk_get_instance_proc_addr", "loader");
    kv_ptr(&t, "gfxep.vk_get_instance_proc_addr", (const void*)other_gpu_gipa);
    expect_key_error(&t, GFX_ERR_INVALID_ARGUMENT, "gfxep.vk_physical_device", "deviceUUID");
  }
  assert_int_equal(lc.locks, 0);

  /* not while something lives on gfxep's own device */
  void* early = dev_alloc(64);
  expect_error(init_with(&k, GFX_GRAPHICS_API_VULKAN, note, sizeof note), GFX_ERR_INTERNAL,
               "must come before the first session", "1 device allocations");
  be->mem_free(dev, early);

  /* the application's device and queue */
  expect_ok(init_with(&k, GFX_GRAPHICS_API_VULKAN, note, sizeof note));
  print_message("app device: %s\n", note);
  assert_non_null(strstr(note, "application's VkDevice"));
  enum { N = 5000 };
  float a[N], b[N], got[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)(i % 211) - 100.0f;
    b[i] = (float)(i % 17) * 0.125f;
  }
  void* da = dev_alloc(sizeof a);
  void* db = dev_alloc(sizeof b);
  void* dc = dev_alloc(sizeof got);
  void* stream = NULL;
  expect_ok(be->stream_create(dev, &stream));
  expect_ok(be->copy(dev, da, a, sizeof a, GFX_COPY_HOST_TO_DEVICE, stream));
  expect_ok(be->copy(dev, db, b, sizeof b, GFX_COPY_HOST_TO_DEVICE, stream));
  run_add(da, db, dc, N, stream);
  expect_ok(be->copy(dev, got, dc, sizeof got, GFX_COPY_DEVICE_TO_HOST, stream));
  for (int i = 0; i < N; i++) assert_true(got[i] == a[i] + b[i]);
  expect_ok(be->copy(dev, db, dc, sizeof got, GFX_COPY_DEVICE_TO_DEVICE, NULL));
  run_add(da, db, dc, N, NULL);
  expect_ok(be->copy(dev, got, dc, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) assert_true(got[i] == 2 * a[i] + b[i]);
  print_message("app device: queue lock taken %d times, released %d times\n", lc.locks, lc.unlocks);
  assert_true(lc.locks > 0);
  assert_int_equal(lc.locks, lc.unlocks);
  assert_int_equal(lc.bad, 0);
  /* what the application's device enabled decides the imports */
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_OPAQUE_FD), app.has_mem_fd);
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_HOST_ALLOCATION), 0); /* not enabled by the app */
  assert_int_equal(be->can_import_semaphore(dev, GFX_EXT_SEMAPHORE_TIMELINE_FD), app.has_sem_fd);
  if (app.has_mem_fd) import_fd_case("the application's VkDevice"); /* exported and imported on one device */
  if (app.has_sem_fd)
    semaphore_case("the application's VkDevice");
  else
    print_message("semaphore import on the application's VkDevice: SKIPPED: no VK_KHR_external_semaphore_fd\n");
  /* a second Init while on it, and Deinit while something is alive, are refused */
  expect_error(init_with(&k, GFX_GRAPHICS_API_VULKAN, note, sizeof note), GFX_ERR_INTERNAL, "already");
  expect_error(be->graphics_interop_deinit(dev), GFX_ERR_INTERNAL, "release", "1 streams");
  be->stream_destroy(dev, stream);
  be->mem_free(dev, da);
  be->mem_free(dev, db);
  be->mem_free(dev, dc);
  int locks = lc.locks;
  expect_ok(be->graphics_interop_deinit(dev));
  /* gfxep's own device again: the application's queue is no longer used */
  void* x = dev_alloc(sizeof a);
  expect_ok(be->copy(dev, x, a, sizeof a, GFX_COPY_HOST_TO_DEVICE, NULL));
  run_add(x, x, x, N, NULL);
  expect_ok(be->copy(dev, got, x, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++) assert_true(got[i] == 2 * a[i]);
  be->mem_free(dev, x);
  assert_int_equal(lc.locks, locks);
  assert_int_equal(be->can_import_memory(dev, GFX_EXT_MEMORY_HOST_ALLOCATION), app.has_mem_host);
  expect_ok(be->graphics_interop_deinit(dev)); /* nothing to undo */
  /* and once more onto the application's device, without a queue lock, then back */
  kv_del(&k, "gfxep.vk_queue_lock");
  kv_del(&k, "gfxep.vk_queue_unlock");
  kv_del(&k, "gfxep.vk_queue_lock_user");
  expect_ok(init_with(&k, GFX_GRAPHICS_API_VULKAN, note, sizeof note));
  assert_non_null(strstr(note, "must not submit"));
  x = dev_alloc(sizeof a);
  expect_ok(be->copy(dev, x, a, sizeof a, GFX_COPY_HOST_TO_DEVICE, NULL));
  void* y = dev_alloc(sizeof a);
  expect_ok(be->copy(dev, y, x, sizeof a, GFX_COPY_DEVICE_TO_DEVICE, NULL));
  expect_ok(be->copy(dev, got, y, sizeof got, GFX_COPY_DEVICE_TO_HOST, NULL));
  assert_memory_equal(got, a, sizeof a);
  be->mem_free(dev, x);
  be->mem_free(dev, y);
  expect_ok(be->graphics_interop_deinit(dev));
  assert_int_equal(lc.locks, locks);
  app_device_destroy();
}

/* ---- recorded partitions ---- */

/* Recorded once, replayed with new input contents on the capturing stream and on another, with two
 * replays in flight at once and the graph destroyed while they are: an Add, a device-to-device copy
 * at an unaligned offset (bytes) and an aligned one (words), and a zero fill, all by address. */
static void test_capture_replay(void** unused) {
  (void)unused;
  enum { N = 4099 };
  assert_non_null(be->capture_begin);
  float* host = malloc(sizeof(float) * N);
  float* back = malloc(sizeof(float) * N);
  void* a = dev_alloc(sizeof(float) * N);
  void* b = dev_alloc(sizeof(float) * N);
  void* sum = dev_alloc(sizeof(float) * N);
  void* copy = dev_alloc(sizeof(float) * N + 8);
  void* zeroed = dev_alloc(sizeof(float) * N);
  void *s1 = NULL, *s2 = NULL;
  expect_ok(be->stream_create(dev, &s1));
  expect_ok(be->stream_create(dev, &s2));

  int64_t n = N;
  ir_node node = node_of(GFX_OP_ADD, 2);
  gfx_shape sh = shape_of(1, &n);
  gfx_shape in_shapes[2] = {sh, sh};
  void* state = NULL;
  expect_ok(be->node_prepare(dev, &node, in_shapes, &sh, &state, NULL));
  gfx_tensor in[2] = {tensor_of(a, GFX_DTYPE_F32, sh), tensor_of(b, GFX_DTYPE_F32, sh)};
  gfx_tensor o = tensor_of(sum, GFX_DTYPE_F32, sh);
  gfx_exec_ctx ctx = {.dev = dev, .stream = s1};

  const float poison = -7.0f;
  for (int i = 0; i < N; i++) host[i] = poison;
  expect_ok(be->copy(dev, sum, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
  for (int i = 0; i < N; i++) host[i] = 1.0f;
  expect_ok(be->copy(dev, a, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->copy(dev, b, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(be->capture_begin(dev, s1));
  expect_error(be->capture_begin(dev, s1), GFX_ERR_INVALID_ARGUMENT, "captured already");
  expect_ok(be->node_run(&ctx, &node, in, &o, state));
  expect_ok(be->copy(dev, at(copy, 3), sum, sizeof(float) * N, GFX_COPY_DEVICE_TO_DEVICE, s1)); /* bytes */
  expect_ok(be->copy(dev, at(copy, 8), sum, 8, GFX_COPY_DEVICE_TO_DEVICE, s1));                 /* words */
  expect_ok(be->memset_zero(dev, zeroed, sizeof(float) * N - 2, s1));
  void* graph = NULL;
  expect_ok(be->capture_end(dev, s1, &graph));
  assert_non_null(graph);
  void* none = (void*)1;
  expect_error(be->capture_end(dev, s1, &none), GFX_ERR_INVALID_ARGUMENT, "not being captured");
  assert_null(none);

  /* nothing ran while capturing: sum still holds what it held before */
  expect_ok(be->stream_sync(dev, s1));
  expect_ok(be->copy(dev, back, sum, sizeof(float) * N, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < N; i++)
    if (back[i] != poison) fail_msg("sum[%d] = %g after a capture: the captured work ran", i, back[i]);

  for (int round = 0; round < 3; round++) {
    void* stream = round == 1 ? s2 : s1;
    for (int i = 0; i < N; i++) host[i] = (float)(i % 97) * 0.5f + (float)round;
    expect_ok(be->copy(dev, a, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
    for (int i = 0; i < N; i++) host[i] = (float)(i % 13) - 6.0f * (float)round;
    expect_ok(be->copy(dev, b, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
    expect_ok(be->copy(dev, zeroed, host, sizeof(float) * N, GFX_COPY_HOST_TO_DEVICE, NULL));
    expect_ok(be->graph_launch(dev, graph, stream));
    expect_ok(be->stream_sync(dev, stream));
    expect_ok(be->copy(dev, back, sum, sizeof(float) * N, GFX_COPY_DEVICE_TO_HOST, NULL));
    for (int i = 0; i < N; i++) {
      float want = (float)(i % 97) * 0.5f + (float)round + (float)(i % 13) - 6.0f * (float)round;
      if (back[i] != want) fail_msg("round %d: sum[%d] = %g, expected %g", round, i, back[i], want);
    }
    unsigned char* cbytes = malloc(sizeof(float) * N + 8);
    expect_ok(be->copy(dev, cbytes, copy, sizeof(float) * N + 8, GFX_COPY_DEVICE_TO_HOST, NULL));
    assert_memory_equal(cbytes + 3, back, 5); /* the byte copy, in front of the word copy */
    assert_memory_equal(cbytes + 8, back, 8);
    assert_memory_equal(cbytes + 16, (unsigned char*)back + 13, sizeof(float) * N - 13); /* after the word copy */
    free(cbytes);
    unsigned char* z = malloc(sizeof(float) * N);
    expect_ok(be->copy(dev, z, zeroed, sizeof(float) * N, GFX_COPY_DEVICE_TO_HOST, NULL));
    for (int i = 0; i < (int)(sizeof(float) * N) - 2; i++)
      if (z[i]) fail_msg("round %d: zero fill left byte %d = %d", round, i, z[i]);
    assert_memory_equal(z + sizeof(float) * N - 2, (unsigned char*)host + sizeof(float) * N - 2, 2);
    free(z);
  }
  /* two replays in flight on two streams, then the graph destroyed before either is waited for */
  expect_ok(be->graph_launch(dev, graph, s1));
  expect_ok(be->graph_launch(dev, graph, s2));
  expect_ok(be->stream_flush(dev, s1));
  be->graph_destroy(dev, graph);
  expect_ok(be->stream_sync(dev, s2));
  expect_ok(be->stream_sync(dev, s1));

  /* a host copy cannot be recorded: the capture ends without a graph */
  expect_ok(be->capture_begin(dev, s1));
  expect_error(be->copy(dev, a, host, 16, GFX_COPY_HOST_TO_DEVICE, s1), GFX_ERR_NOT_SUPPORTED,
               "cannot be recorded");
  expect_error(be->copy(dev, host, a, 16, GFX_COPY_DEVICE_TO_HOST, s1), GFX_ERR_NOT_SUPPORTED,
               "cannot be recorded");
  expect_ok(be->capture_end(dev, s1, NULL));
  expect_error(be->capture_begin(dev, NULL), GFX_ERR_INVALID_ARGUMENT, "NULL");
  /* a stream destroyed in the middle of a capture frees it */
  expect_ok(be->capture_begin(dev, s2));
  be->stream_destroy(dev, s2);

  be->node_release(dev, state);
  be->stream_destroy(dev, s1);
  be->mem_free(dev, a);
  be->mem_free(dev, b);
  be->mem_free(dev, sum);
  be->mem_free(dev, copy);
  be->mem_free(dev, zeroed);
  free(host);
  free(back);
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
      cmocka_unit_test(test_gather_out_of_range), cmocka_unit_test(test_cast_edges),
      cmocka_unit_test(test_bad_input),        cmocka_unit_test(test_import_memory),
      cmocka_unit_test(test_import_host),      cmocka_unit_test(test_import_semaphore),
      cmocka_unit_test(test_graphics_interop), cmocka_unit_test(test_capture_replay),
      cmocka_unit_test(test_conv_channels_last_scratch),
      cmocka_unit_test(test_summary),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
