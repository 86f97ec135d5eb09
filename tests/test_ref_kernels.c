/* gfxep — the reference backend: its device and memory entries, and every kernel run through
 * gfx_backend_reference()->node_run on small cases whose answers are worked out here, by hand or by
 * a naive loop written differently from the kernel's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/registry.h"
#include "backend/registry.h"
#include "ir_test_util.h"

/* An ASan build would otherwise abort at the deliberately impossible allocations below instead of
 * letting them fail; the hook is an ordinary unused function elsewhere. */
const char* __asan_default_options(void);
const char* __asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ---- helpers ---- */

static const gfx_backend* ref(void) { return gfx_backend_reference(); }

/* A device object of the reference backend with any index: the real one (0), or a forged one that
 * every entry must refuse, naming the index. */
static gfx_dev* dev_at(int index) {
  static gfx_dev forged[64];
  if (index == 0) return gfx_reference_device();
  gfx_dev* d = &forged[(index + 64) % 64];
  *d = (gfx_dev){.backend = ref(), .index = index};
  return d;
}

static gfx_tensor tensor(void* data, gfx_shape shape) { return tensor_of(data, GFX_DTYPE_F32, shape); }

/* Explicit 2-D conv parameters; pads are top, left, bottom, right. */
static ir_conv_params conv2d_params(int64_t group, int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                                    int64_t dilation_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                                    int64_t pad_right) {
  ir_conv_params p;
  memset(&p, 0, sizeof p);
  p.spatial = 2;
  p.group = group;
  p.strides[0] = stride_h;
  p.strides[1] = stride_w;
  p.dilations[0] = dilation_h;
  p.dilations[1] = dilation_w;
  p.pads[0] = pad_top;
  p.pads[1] = pad_left;
  p.pads[2] = pad_bottom;
  p.pads[3] = pad_right;
  p.auto_pad = IR_PAD_NOTSET;
  return p;
}

static gfx_status run_on(int index, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {.dev = dev_at(index), .stream = NULL, .scratch = NULL, .scratch_bytes = 0};
  return ref()->node_run(&ctx, node, in, out, NULL);
}

static gfx_status run(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  return run_on(0, node, in, out);
}

static void expect_floats_equal(const float* expected, const float* actual, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (expected[i] != actual[i]) print_error("element %zu: expected %.9g, got %.9g\n", i, expected[i], actual[i]);
    assert_true(expected[i] == actual[i]);
  }
}

/* Deterministic values in [-1, 1) with few significant bits, so that sums of products are nearly
 * exact whatever the summation order. */
static void fill_pattern(float* x, size_t count, uint32_t seed) {
  uint32_t state = seed * 2654435761u + 1u;
  for (size_t i = 0; i < count; i++) {
    state = state * 1664525u + 1013904223u;
    x[i] = (float)((int)(state >> 24) - 128) / 128.0f;
  }
}

static void fill_value(float* x, size_t count, float v) {
  for (size_t i = 0; i < count; i++) x[i] = v;
}

/* ---- devices, memory, streams, events ---- */

static void test_backend_table(void** unused) {
  (void)unused;
  const gfx_backend* b = ref();
  assert_non_null(b);
  assert_int_equal(b->abi_version, GFX_BACKEND_ABI_VERSION);
  assert_string_equal(b->name, "reference");
  assert_int_equal(b->device_count(), 1);
  assert_int_equal(b->alignment, 64);

  gfx_device_info info;
  memset(&info, 0xAB, sizeof info);
  expect_ok(b->device_info(dev_at(0), &info));
  assert_string_equal(info.name, "gfxep reference backend (CPU, plain C; test oracle)");
  assert_int_equal(info.has_uuid, 0);
  assert_int_equal(info.has_luid, 0);
  assert_string_equal(info.pci_bus_id, "");
  assert_true(info.total_memory > 0);
}

static void test_bad_device_ordinal(void** unused) {
  (void)unused;
  const gfx_backend* b = ref();
  gfx_device_info info;
  expect_error(b->device_info(dev_at(42), &info), GFX_ERR_INVALID_ARGUMENT, "42", NULL);
  void* p = NULL;
  expect_error(b->mem_alloc(dev_at(-1), 16, &p), GFX_ERR_INVALID_ARGUMENT, "-1", NULL);
  assert_null(p);
  expect_error(b->host_alloc(dev_at(2), 16, &p), GFX_ERR_INVALID_ARGUMENT, "2", NULL);
  void* s = NULL;
  expect_error(b->stream_create(dev_at(5), &s), GFX_ERR_INVALID_ARGUMENT, "5", NULL);
  expect_error(b->device_sync(dev_at(7)), GFX_ERR_INVALID_ARGUMENT, "7", NULL);
  size_t f, t;
  expect_error(b->mem_info(dev_at(9), &f, &t), GFX_ERR_INVALID_ARGUMENT, "9", NULL);

  float x[1] = {1}, y[1];
  ir_node node = node_of(GFX_OP_RELU, 1);
  gfx_tensor in = tensor(x, SHAPE(1)), out = tensor(y, SHAPE(1));
  expect_error(run_on(3, &node, &in, &out), GFX_ERR_INVALID_ARGUMENT, "device 3", NULL);
  void* state = (void*)&node;
  size_t scratch = 99;
  expect_error(b->node_prepare(dev_at(11), &node, &in.shape, &out.shape, &state, &scratch), GFX_ERR_INVALID_ARGUMENT,
               "11", NULL);
}

static void test_device_objects(void** unused) {
  (void)unused;
  gfx_dev* d = NULL;
  expect_ok(ref()->device_get(0, &d));
  assert_ptr_equal(d, gfx_reference_device()); /* one object for the life of the process */
  assert_ptr_equal(d->backend, ref());
  assert_int_equal(d->index, 0);
  expect_error(ref()->device_get(1, &d), GFX_ERR_INVALID_ARGUMENT, "1", NULL);
  assert_null(d);
  assert_true(ref()->flags & GFX_BACKEND_HOST_MEMORY);
  assert_string_equal(ref()->memory_name, "gfxep_reference");
}

static void test_memory(void** unused) {
  (void)unused;
  const gfx_backend* b = ref();
  void *dev = NULL, *host = NULL;
  expect_ok(b->mem_alloc(dev_at(0), 100, &dev));
  expect_ok(b->host_alloc(dev_at(0), 100, &host));
  assert_non_null(dev);
  assert_non_null(host);
  assert_int_equal((uintptr_t)dev % 64, 0);
  assert_int_equal((uintptr_t)host % 64, 0);

  unsigned char src[100], back[100];
  for (int i = 0; i < 100; i++) src[i] = (unsigned char)(i * 7 + 1);
  expect_ok(b->copy(dev_at(0), host, src, 100, GFX_COPY_HOST_TO_DEVICE, NULL));
  expect_ok(b->copy(dev_at(0), dev, host, 100, GFX_COPY_DEVICE_TO_DEVICE, NULL));
  memset(back, 0, sizeof back);
  expect_ok(b->copy(dev_at(0), back, dev, 100, GFX_COPY_DEVICE_TO_HOST, NULL));
  assert_memory_equal(back, src, 100);

  expect_ok(b->memset_zero(dev_at(0), dev, 60, NULL));
  expect_ok(b->copy(dev_at(0), back, dev, 100, GFX_COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < 60; i++) assert_int_equal(back[i], 0);
  assert_memory_equal(back + 60, src + 60, 40);

  expect_error(b->copy(dev_at(0), back, dev, 4, (gfx_copy_kind)99, NULL), GFX_ERR_INVALID_ARGUMENT, "99", NULL);
  b->mem_free(dev_at(0), dev);
  b->host_free(dev_at(0), host);

  /* Zero bytes: still a real, unique, aligned pointer. */
  void *z1 = NULL, *z2 = NULL;
  expect_ok(b->mem_alloc(dev_at(0), 0, &z1));
  expect_ok(b->mem_alloc(dev_at(0), 0, &z2));
  assert_non_null(z1);
  assert_non_null(z2);
  assert_ptr_not_equal(z1, z2);
  assert_int_equal((uintptr_t)z1 % 64, 0);
  b->mem_free(dev_at(0), z1);
  b->mem_free(dev_at(0), z2);

  size_t free_bytes = 0, total_bytes = 0;
  expect_ok(b->mem_info(dev_at(0), &free_bytes, &total_bytes));
  assert_true(total_bytes > 0);
  assert_true(free_bytes <= total_bytes);
}

static void test_allocation_failure_names_size(void** unused) {
  (void)unused;
  char size_text[32];
  void* p = (void*)&p;
  snprintf(size_text, sizeof size_text, "%zu", SIZE_MAX - 3);
  expect_error(ref()->mem_alloc(dev_at(0), SIZE_MAX - 3, &p), GFX_ERR_OUT_OF_MEMORY, size_text, NULL);
  assert_null(p);
  /* Large but not overflowing when rounded (nor "negative" to valgrind): aligned_alloc fails. */
  snprintf(size_text, sizeof size_text, "%zu", SIZE_MAX / 4);
  expect_error(ref()->host_alloc(dev_at(0), SIZE_MAX / 4, &p), GFX_ERR_OUT_OF_MEMORY, size_text, NULL);
  assert_null(p);
}

static void test_streams_and_events(void** unused) {
  (void)unused;
  const gfx_backend* b = ref();
  void *s1 = NULL, *s2 = NULL, *e1 = NULL, *e2 = NULL;
  expect_ok(b->stream_create(dev_at(0), &s1));
  expect_ok(b->stream_create(dev_at(0), &s2));
  expect_ok(b->event_create(dev_at(0), &e1));
  expect_ok(b->event_create(dev_at(0), &e2));
  assert_non_null(s1);
  assert_non_null(s2);
  assert_non_null(e1);
  assert_non_null(e2);
  assert_ptr_not_equal(s1, s2);
  assert_ptr_not_equal(e1, e2);

  assert_int_equal(b->event_done(dev_at(0), e1), 1); /* never recorded */
  expect_ok(b->event_record(dev_at(0), e1, s1));
  expect_ok(b->stream_wait_event(dev_at(0), s2, e1));
  expect_ok(b->event_sync(dev_at(0), e1));
  assert_int_equal(b->event_done(dev_at(0), e1), 1);
  expect_ok(b->stream_sync(dev_at(0), s2));
  expect_ok(b->stream_sync(dev_at(0), NULL));
  expect_ok(b->device_sync(dev_at(0)));

  b->event_destroy(dev_at(0), e1);
  b->event_destroy(dev_at(0), e2);
  b->stream_destroy(dev_at(0), s1);
  b->stream_destroy(dev_at(0), s2);
}

static void test_node_prepare_has_no_state(void** unused) {
  (void)unused;
  ir_node node = node_of(GFX_OP_ADD, 2);
  gfx_shape in[2] = {SHAPE(2, 3), SHAPE(3)};
  gfx_shape out = SHAPE(2, 3);
  void* state = (void*)&node;
  size_t scratch = 123;
  expect_ok(ref()->node_prepare(dev_at(0), &node, in, &out, &state, &scratch));
  assert_null(state);
  assert_int_equal(scratch, 0);
  ref()->node_release(dev_at(0), state);
}

/* ---- Add, Sub, Mul, Div ---- */

static void test_add_2x3_plus_3(void** unused) {
  (void)unused;
  float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, y[6];
  fill_value(y, 6, -1);
  ir_node node = node_of(GFX_OP_ADD, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 3)), tensor(b, SHAPE(3))};
  gfx_tensor out = tensor(y, SHAPE(2, 3));
  expect_ok(run(&node, in, &out));
  const float expected[6] = {11, 22, 33, 14, 25, 36};
  expect_floats_equal(expected, y, 6);
}

static void test_sub_column_minus_row(void** unused) {
  (void)unused;
  /* [2,1] - [1,3]: both operands broadcast, and the order matters. */
  float a[2] = {1, 2}, b[3] = {10, 20, 30}, y[6];
  ir_node node = node_of(GFX_OP_SUB, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 1)), tensor(b, SHAPE(1, 3))};
  gfx_tensor out = tensor(y, SHAPE(2, 3));
  expect_ok(run(&node, in, &out));
  const float expected[6] = {-9, -19, -29, -8, -18, -28};
  expect_floats_equal(expected, y, 6);
}

static void test_mul_and_div_with_scalars(void** unused) {
  (void)unused;
  float a[4] = {1, 2, 4, 8}, scalar[1] = {2.5f}, y[4];
  ir_node mul = node_of(GFX_OP_MUL, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 2)), tensor(scalar, shape_of(0, NULL))};
  gfx_tensor out = tensor(y, SHAPE(2, 2));
  expect_ok(run(&mul, in, &out));
  const float products[4] = {2.5f, 5, 10, 20};
  expect_floats_equal(products, y, 4);

  /* scalar / tensor: the rank-0 operand first. */
  float one[1] = {1};
  ir_node div = node_of(GFX_OP_DIV, 2);
  gfx_tensor in2[2] = {tensor(one, shape_of(0, NULL)), tensor(a, SHAPE(2, 2))};
  expect_ok(run(&div, in2, &out));
  const float quotients[4] = {1, 0.5f, 0.25f, 0.125f};
  expect_floats_equal(quotients, y, 4);
}

static void test_div_rank8_broadcast(void** unused) {
  (void)unused;
  /* a [2,1,2,1,1,1,1,3] / b [1,2,1,1,1,1,2,1] -> [2,2,2,1,1,1,2,3]. Naming the dims that are not
   * 1 i0 (a), i1 (b), i2 (a), i6 (b), i7 (a): a is indexed by (i0, i2, i7), b by (i1, i6). */
  float a[12], b[4], y[48], expected[48];
  for (int i = 0; i < 12; i++) a[i] = (float)(i + 1);
  for (int i = 0; i < 4; i++) b[i] = (float)(1 << i);
  for (int i0 = 0; i0 < 2; i0++)
    for (int i1 = 0; i1 < 2; i1++)
      for (int i2 = 0; i2 < 2; i2++)
        for (int i6 = 0; i6 < 2; i6++)
          for (int i7 = 0; i7 < 3; i7++)
            expected[(((i0 * 2 + i1) * 2 + i2) * 2 + i6) * 3 + i7] = a[(i0 * 2 + i2) * 3 + i7] / b[i1 * 2 + i6];
  fill_value(y, 48, -1);
  ir_node node = node_of(GFX_OP_DIV, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 1, 2, 1, 1, 1, 1, 3)), tensor(b, SHAPE(1, 2, 1, 1, 1, 1, 2, 1))};
  gfx_tensor out = tensor(y, SHAPE(2, 2, 2, 1, 1, 1, 2, 3));
  expect_ok(run(&node, in, &out));
  expect_floats_equal(expected, y, 48);
}

static void test_binary_zero_elements(void** unused) {
  (void)unused;
  float b[3] = {1, 2, 3};
  ir_node node = node_of(GFX_OP_ADD, 2);
  gfx_tensor in[2] = {tensor(NULL, SHAPE(0, 3)), tensor(b, SHAPE(3))};
  gfx_tensor out = tensor(NULL, SHAPE(0, 3));
  expect_ok(run(&node, in, &out));
}

static void test_binary_shape_errors(void** unused) {
  (void)unused;
  float a[6] = {0}, b[2] = {0}, y[6];
  ir_node node = node_of(GFX_OP_ADD, 2);
  /* 3 against 2: not broadcastable. */
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 3)), tensor(b, SHAPE(2))};
  gfx_tensor out = tensor(y, SHAPE(2, 3));
  gfx_status s = run(&node, in, &out);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_INVALID_ARGUMENT);
  gfx_status_free(s);

  /* Broadcastable, but the output the caller gives is the wrong shape. */
  in[1] = tensor(b, SHAPE(1));
  out.shape = SHAPE(3, 2);
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "[3,2]", "[2,3]", "test_node", NULL);
}

/* ---- Relu ---- */

static void test_relu(void** unused) {
  (void)unused;
  float x[6] = {-2, -0.5f, 0, 0.5f, 3, NAN}, y[6];
  ir_node node = node_of(GFX_OP_RELU, 1);
  gfx_tensor in = tensor(x, SHAPE(2, 3)), out = tensor(y, SHAPE(2, 3));
  expect_ok(run(&node, &in, &out));
  const float expected[5] = {0, 0, 0, 0.5f, 3};
  expect_floats_equal(expected, y, 5);
  assert_true(isnan(y[5]));
}

/* ---- dtype and op errors ---- */

static void test_unsupported_dtype_is_named(void** unused) {
  (void)unused;
  int64_t xi[3] = {1, 2, 3};
  float a[3] = {1, 2, 3}, y[3];
  ir_node relu = node_of(GFX_OP_RELU, 1);
  gfx_tensor in = {.data = xi, .dtype = GFX_DTYPE_I64, .shape = SHAPE(3)};
  gfx_tensor out = tensor(y, SHAPE(3));
  expect_error(run(&relu, &in, &out), GFX_ERR_NOT_SUPPORTED, "int64", "input 0", NULL);

  ir_node add = node_of(GFX_OP_ADD, 2);
  gfx_tensor in2[2] = {tensor(a, SHAPE(3)), {.data = xi, .dtype = GFX_DTYPE_I32, .shape = SHAPE(3)}};
  expect_error(run(&add, in2, &out), GFX_ERR_NOT_SUPPORTED, "int32", "input 1", NULL);

  in2[1] = tensor(a, SHAPE(3));
  out.dtype = GFX_DTYPE_F16;
  expect_error(run(&add, in2, &out), GFX_ERR_NOT_SUPPORTED, "float16", "output 0", NULL);
}

static void test_unknown_op(void** unused) {
  (void)unused;
  float x[1] = {1}, y[1];
  ir_node node = node_of(GFX_OP_NONE, 1);
  gfx_tensor in = tensor(x, SHAPE(1)), out = tensor(y, SHAPE(1));
  expect_error(run(&node, &in, &out), GFX_ERR_NOT_SUPPORTED, "not implemented", NULL);
}

/* ---- Conv ---- */

/* x = 1..9 in a 3x3 image, w = [[1,0,0],[0,0,0],[0,0,2]], pads 1: y[i][j] = x[i-1][j-1] + 2 x[i+1][j+1]
 * with x zero outside the image. The kernel is lopsided so that a flipped (true convolution rather
 * than ONNX's correlation) or transposed kernel gives a different answer. */
static const float conv3x3_x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const float conv3x3_w[9] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
static const float conv3x3_expected[9] = {10, 12, 0, 16, 19, 2, 0, 4, 5};

static void test_conv_3x3_pad1_with_bias(void** unused) {
  (void)unused;
  float x[9], w[9], bias[1] = {0.5f}, y[9], expected[9];
  memcpy(x, conv3x3_x, sizeof x);
  memcpy(w, conv3x3_w, sizeof w);
  for (int i = 0; i < 9; i++) expected[i] = conv3x3_expected[i] + 0.5f;
  ir_node node = node_of(GFX_OP_CONV, 3);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 1, 1, 1, 1);
  gfx_tensor in[3] = {tensor(x, SHAPE(1, 1, 3, 3)), tensor(w, SHAPE(1, 1, 3, 3)), tensor(bias, SHAPE(1))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 3, 3));
  expect_ok(run(&node, in, &out));
  expect_floats_equal(expected, y, 9);
}

static void test_conv_without_bias(void** unused) {
  (void)unused;
  float x[9], w[9], y[9];
  memcpy(x, conv3x3_x, sizeof x);
  memcpy(w, conv3x3_w, sizeof w);

  /* Two inputs only. */
  ir_node node = node_of(GFX_OP_CONV, 2);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 1, 1, 1, 1);
  gfx_tensor in[3] = {tensor(x, SHAPE(1, 1, 3, 3)), tensor(w, SHAPE(1, 1, 3, 3)), tensor(NULL, SHAPE(1))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 3, 3));
  fill_value(y, 9, -1);
  expect_ok(run(&node, in, &out));
  expect_floats_equal(conv3x3_expected, y, 9);

  /* Three inputs, the bias absent (NULL data). */
  node.n_inputs = 3;
  fill_value(y, 9, -1);
  expect_ok(run(&node, in, &out));
  expect_floats_equal(conv3x3_expected, y, 9);
}

static void test_conv_grouped_1x1(void** unused) {
  (void)unused;
  /* 4 input channels in 2 groups, one output channel each; channel c holds 10c + p at pixel p.
   *   y0 = 1 x0 + 2 x1 = p + 2 (10 + p)        = 20 + 3p
   *   y1 = 3 x2 - 1 x3 = 3 (20 + p) - (30 + p) = 30 + 2p */
  float x[16], w[4] = {1, 2, 3, -1}, y[8];
  for (int c = 0; c < 4; c++)
    for (int p = 0; p < 4; p++) x[c * 4 + p] = (float)(10 * c + p);
  ir_node node = node_of(GFX_OP_CONV, 2);
  node.params.conv = conv2d_params(2, 1, 1, 1, 1, 0, 0, 0, 0);
  gfx_tensor in[2] = {tensor(x, SHAPE(1, 4, 2, 2)), tensor(w, SHAPE(2, 2, 1, 1))};
  gfx_tensor out = tensor(y, SHAPE(1, 2, 2, 2));
  expect_ok(run(&node, in, &out));
  const float expected[8] = {20, 23, 26, 29, 30, 32, 34, 36};
  expect_floats_equal(expected, y, 8);
}

/* A conv the long way round: copy each image into an explicitly zero-padded buffer, then slide the
 * dilated kernel over it with no bounds checks. */
typedef struct naive_conv {
  int64_t n, c_in, h, w, c_out, kh, kw, group;
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
} naive_conv;

static int64_t naive_out_h(const naive_conv* c) {
  return (c->h + c->pad_top + c->pad_bottom - c->dilation_h * (c->kh - 1) - 1) / c->stride_h + 1;
}

static int64_t naive_out_w(const naive_conv* c) {
  return (c->w + c->pad_left + c->pad_right - c->dilation_w * (c->kw - 1) - 1) / c->stride_w + 1;
}

static void naive_conv_run(const naive_conv* c, const float* x, const float* w, const float* bias, float* y) {
  const int64_t ph = c->h + c->pad_top + c->pad_bottom, pw = c->w + c->pad_left + c->pad_right;
  const int64_t oh_n = naive_out_h(c), ow_n = naive_out_w(c);
  const int64_t cpg_in = c->c_in / c->group, cpg_out = c->c_out / c->group;
  float* padded = calloc((size_t)(c->n * c->c_in * ph * pw), sizeof(float));
  assert_non_null(padded);
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t ch = 0; ch < c->c_in; ch++)
      for (int64_t i = 0; i < c->h; i++)
        for (int64_t j = 0; j < c->w; j++)
          padded[((n * c->c_in + ch) * ph + i + c->pad_top) * pw + j + c->pad_left] =
              x[((n * c->c_in + ch) * c->h + i) * c->w + j];
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t g = 0; g < c->group; g++)
      for (int64_t m = 0; m < cpg_out; m++) {
        const int64_t oc = g * cpg_out + m;
        for (int64_t oi = 0; oi < oh_n; oi++)
          for (int64_t oj = 0; oj < ow_n; oj++) {
            double acc = 0;
            for (int64_t ci = 0; ci < cpg_in; ci++)
              for (int64_t a = 0; a < c->kh; a++)
                for (int64_t b = 0; b < c->kw; b++) {
                  int64_t pi = oi * c->stride_h + a * c->dilation_h, pj = oj * c->stride_w + b * c->dilation_w;
                  acc += padded[((n * c->c_in + g * cpg_in + ci) * ph + pi) * pw + pj] *
                         (double)w[((oc * cpg_in + ci) * c->kh + a) * c->kw + b];
                }
            if (bias) acc += bias[oc];
            y[((n * c->c_out + oc) * oh_n + oi) * ow_n + oj] = (float)acc;
          }
      }
  free(padded);
}

static void check_conv_against_naive(const naive_conv* c, int with_bias) {
  const int64_t oh = naive_out_h(c), ow = naive_out_w(c);
  const size_t x_count = (size_t)(c->n * c->c_in * c->h * c->w);
  const size_t w_count = (size_t)(c->c_out * (c->c_in / c->group) * c->kh * c->kw);
  const size_t y_count = (size_t)(c->n * c->c_out * oh * ow);
  float* x = malloc(x_count * sizeof(float));
  float* w = malloc(w_count * sizeof(float));
  float* bias = malloc((size_t)c->c_out * sizeof(float));
  float* y = malloc(y_count * sizeof(float));
  float* expected = malloc(y_count * sizeof(float));
  assert_true(x && w && bias && y && expected);
  fill_pattern(x, x_count, 1);
  fill_pattern(w, w_count, 2);
  fill_pattern(bias, (size_t)c->c_out, 3);
  fill_value(y, y_count, 1000);
  naive_conv_run(c, x, w, with_bias ? bias : NULL, expected);

  ir_node node = node_of(GFX_OP_CONV, with_bias ? 3 : 2);
  node.params.conv = conv2d_params(c->group, c->stride_h, c->stride_w, c->dilation_h, c->dilation_w, c->pad_top,
                                   c->pad_left, c->pad_bottom, c->pad_right);
  gfx_tensor in[3] = {tensor(x, SHAPE(c->n, c->c_in, c->h, c->w)),
                      tensor(w, SHAPE(c->c_out, c->c_in / c->group, c->kh, c->kw)),
                      tensor(bias, SHAPE(c->c_out))};
  gfx_tensor out = tensor(y, SHAPE(c->n, c->c_out, oh, ow));
  expect_ok(run(&node, in, &out));
  expect_floats_near(expected, y, y_count, 1e-5);
  free(x);
  free(w);
  free(bias);
  free(y);
  free(expected);
}

static void test_conv_strided_dilated_asymmetric_pads(void** unused) {
  (void)unused;
  /* Batch 2, 2 groups of 2 -> 3 channels, 3x2 kernel, strides 2x3, dilations 2x1, pads t1 l2 b0 r1. */
  const naive_conv grouped = {.n = 2, .c_in = 4, .h = 9, .w = 8, .c_out = 6, .kh = 3, .kw = 2, .group = 2,
                              .stride_h = 2, .stride_w = 3, .dilation_h = 2, .dilation_w = 1,
                              .pad_top = 1, .pad_left = 2, .pad_bottom = 0, .pad_right = 1};
  check_conv_against_naive(&grouped, 1);
  check_conv_against_naive(&grouped, 0);

  /* Depthwise: as many groups as channels, dilation 2 in both dims, wide pads. */
  const naive_conv depthwise = {.n = 1, .c_in = 3, .h = 5, .w = 6, .c_out = 3, .kh = 3, .kw = 3, .group = 3,
                                .stride_h = 1, .stride_w = 2, .dilation_h = 2, .dilation_w = 2,
                                .pad_top = 2, .pad_left = 3, .pad_bottom = 1, .pad_right = 2};
  check_conv_against_naive(&depthwise, 1);
}

static void test_conv_auto_pad_same_upper(void** unused) {
  (void)unused;
  /* 4x4 image 1..16, 2x2 kernel of ones, SAME_UPPER: the one pad row and column go at the end, so
   * y[i][j] = x[i][j] + x[i][j+1] + x[i+1][j] + x[i+1][j+1] with x zero past the edge. */
  float x[16], w[4] = {1, 1, 1, 1}, y[16];
  for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
  ir_node node = node_of(GFX_OP_CONV, 2);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 0, 0, 0, 0);
  node.params.conv.auto_pad = IR_PAD_SAME_UPPER;
  gfx_tensor in[2] = {tensor(x, SHAPE(1, 1, 4, 4)), tensor(w, SHAPE(1, 1, 2, 2))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 4, 4));
  expect_ok(run(&node, in, &out));
  const float expected[16] = {14, 18, 22, 12, 30, 34, 38, 20, 46, 50, 54, 28, 27, 29, 31, 16};
  expect_floats_equal(expected, y, 16);
}

static void test_conv_accumulates_in_double(void** unused) {
  (void)unused;
  /* 1e8 + 1 - 1e8 over three channels: float accumulation loses the 1, double keeps it. */
  float x[3] = {1e8f, 1, -1e8f}, w[3] = {1, 1, 1}, y[1];
  ir_node node = node_of(GFX_OP_CONV, 2);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 0, 0, 0, 0);
  gfx_tensor in[2] = {tensor(x, SHAPE(1, 3, 1, 1)), tensor(w, SHAPE(1, 3, 1, 1))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 1, 1));
  expect_ok(run(&node, in, &out));
  assert_true(y[0] == 1.0f);
}

static void test_conv_shape_errors(void** unused) {
  (void)unused;
  float x[18] = {0}, w[18] = {0}, bias[2] = {0}, y[18];
  ir_node node = node_of(GFX_OP_CONV, 3);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 1, 1, 1, 1);
  gfx_tensor in[3] = {tensor(x, SHAPE(1, 2, 3, 3)), tensor(w, SHAPE(1, 2, 3, 3)), tensor(bias, SHAPE(2))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 3, 3));
  /* Bias of 2 for 1 output channel. */
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "[2]", "[1]", NULL);
  /* Output of the wrong spatial size. */
  in[2] = tensor(bias, SHAPE(1));
  out.shape = SHAPE(1, 1, 2, 2);
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "[1,1,2,2]", "[1,1,3,3]", NULL);
  /* Weights with 1 input channel for a 2-channel image and group 1. */
  in[1] = tensor(w, SHAPE(2, 1, 3, 3));
  in[2] = tensor(bias, SHAPE(2));
  out.shape = SHAPE(1, 2, 3, 3);
  gfx_status s = run(&node, in, &out);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_INVALID_ARGUMENT);
  gfx_status_free(s);
}

static void test_conv_bad_params(void** unused) {
  (void)unused;
  float x[9] = {0}, w[9] = {0}, y[9];
  ir_node node = node_of(GFX_OP_CONV, 2);
  gfx_tensor in[2] = {tensor(x, SHAPE(1, 1, 3, 3)), tensor(w, SHAPE(1, 1, 3, 3))};
  gfx_tensor out = tensor(y, SHAPE(1, 1, 3, 3));
  /* A stride of 0 (which the parser never makes) is an error, not a division by zero. */
  node.params.conv = conv2d_params(1, 0, 1, 1, 1, 1, 1, 1, 1);
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "stride 0", NULL);
  node.params.conv = conv2d_params(1, 1, 1, 1, -2, 1, 1, 1, 1);
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "dilation -2", NULL);
  /* 3-D: a 3x3x3 window of ones over 1..27 sums to 378; its strides are checked like the 2-D ones */
  float x3[27], w3[27], y3[1] = {0};
  for (int i = 0; i < 27; i++) {
    x3[i] = (float)(i + 1);
    w3[i] = 1.0f;
  }
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 0, 0, 0, 0);
  node.params.conv.spatial = 3;
  node.params.conv.strides[2] = node.params.conv.dilations[2] = 1;
  gfx_tensor in3[2] = {tensor(x3, SHAPE(1, 1, 3, 3, 3)), tensor(w3, SHAPE(1, 1, 3, 3, 3))};
  gfx_tensor out3 = tensor(y3, SHAPE(1, 1, 1, 1, 1));
  expect_ok(run(&node, in3, &out3));
  assert_float_equal(y3[0], 378.0f, 0.0f);
  node.params.conv.strides[2] = 0;
  expect_error(run(&node, in3, &out3), GFX_ERR_INVALID_ARGUMENT, "stride 0", NULL);
}

static void test_conv_zero_batch(void** unused) {
  (void)unused;
  float w[9] = {0};
  ir_node node = node_of(GFX_OP_CONV, 2);
  node.params.conv = conv2d_params(1, 1, 1, 1, 1, 1, 1, 1, 1);
  gfx_tensor in[2] = {tensor(NULL, SHAPE(0, 1, 3, 3)), tensor(w, SHAPE(1, 1, 3, 3))};
  gfx_tensor out = tensor(NULL, SHAPE(0, 1, 3, 3));
  expect_ok(run(&node, in, &out));
}

/* ---- MatMul ---- */

static void test_matmul_2x3_by_3x2(void** unused) {
  (void)unused;
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, y[4];
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 3)), tensor(b, SHAPE(3, 2))};
  gfx_tensor out = tensor(y, SHAPE(2, 2));
  expect_ok(run(&node, in, &out));
  const float expected[4] = {58, 64, 139, 154};
  expect_floats_equal(expected, y, 4);
}

static void test_matmul_batch_broadcast(void** unused) {
  (void)unused;
  /* a [2,1,2,3] x b [3,3,4] -> [2,3,2,4]: a's batch dim of 1 repeats over b's 3, and b repeats over
   * a's leading 2. out[i][j] = a[i][0] x b[j]. */
  float a[12], b[36], y[48], expected[48];
  fill_pattern(a, 12, 4);
  fill_pattern(b, 36, 5);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int r = 0; r < 2; r++)
        for (int c = 0; c < 4; c++) {
          double dot = 0;
          for (int k = 0; k < 3; k++) dot += (double)a[i * 6 + r * 3 + k] * b[j * 12 + k * 4 + c];
          expected[((i * 3 + j) * 2 + r) * 4 + c] = (float)dot;
        }
  fill_value(y, 48, 1000);
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 1, 2, 3)), tensor(b, SHAPE(3, 3, 4))};
  gfx_tensor out = tensor(y, SHAPE(2, 3, 2, 4));
  expect_ok(run(&node, in, &out));
  expect_floats_near(expected, y, 48, 1e-6);

  /* a [2,3] (no batch) x b [4,3,2] -> [4,2,2]: a is the same matrix for every b. */
  float b2[24], y2[16], expected2[16];
  fill_pattern(b2, 24, 6);
  for (int j = 0; j < 4; j++)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 2; c++) {
        double dot = 0;
        for (int k = 0; k < 3; k++) dot += (double)a[r * 3 + k] * b2[j * 6 + k * 2 + c];
        expected2[(j * 2 + r) * 2 + c] = (float)dot;
      }
  gfx_tensor in2[2] = {tensor(a, SHAPE(2, 3)), tensor(b2, SHAPE(4, 3, 2))};
  gfx_tensor out2 = tensor(y2, SHAPE(4, 2, 2));
  expect_ok(run(&node, in2, &out2));
  expect_floats_near(expected2, y2, 16, 1e-6);
}

static void test_matmul_empty_inner_dim_gives_zeros(void** unused) {
  (void)unused;
  float y[6];
  fill_value(y, 6, 7);
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  gfx_tensor in[2] = {tensor(NULL, SHAPE(2, 0)), tensor(NULL, SHAPE(0, 3))};
  gfx_tensor out = tensor(y, SHAPE(2, 3));
  expect_ok(run(&node, in, &out));
  const float zeros[6] = {0};
  expect_floats_equal(zeros, y, 6);

  /* An empty batch: nothing to do, and no memory needed for the empty tensors. */
  float b[12] = {0};
  gfx_tensor in2[2] = {tensor(NULL, SHAPE(0, 2, 3)), tensor(b, SHAPE(3, 4))};
  gfx_tensor out2 = tensor(NULL, SHAPE(0, 2, 4));
  expect_ok(run(&node, in2, &out2));
}

static void test_matmul_accumulates_in_double(void** unused) {
  (void)unused;
  float a[3] = {1e8f, 1, -1e8f}, b[3] = {1, 1, 1}, y[1];
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  gfx_tensor in[2] = {tensor(a, SHAPE(1, 3)), tensor(b, SHAPE(3, 1))};
  gfx_tensor out = tensor(y, SHAPE(1, 1));
  expect_ok(run(&node, in, &out));
  assert_true(y[0] == 1.0f);
}

static void test_matmul_errors(void** unused) {
  (void)unused;
  float a[6] = {0}, b[8] = {0}, y[4];
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  /* Inner dims 3 and 4. */
  gfx_tensor in[2] = {tensor(a, SHAPE(2, 3)), tensor(b, SHAPE(4, 2))};
  gfx_tensor out = tensor(y, SHAPE(2, 2));
  gfx_status s = run(&node, in, &out);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_INVALID_ARGUMENT);
  gfx_status_free(s);
  /* A vector operand. */
  in[0] = tensor(a, SHAPE(4));
  out.shape = SHAPE(2);
  expect_error(run(&node, in, &out), GFX_ERR_NOT_SUPPORTED, "[4]", NULL);
  /* Wrong output shape. */
  in[0] = tensor(a, SHAPE(1, 4));
  out.shape = SHAPE(2, 1);
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "[2,1]", "[1,2]", NULL);
}

/* ---- Mod ---- */

/* fmod=0 takes the divisor's sign, fmod=1 the dividend's (C's %); a divisor of 0 gives 0 (numpy's
 * answer; ONNX Runtime's CPU EP traps there), and INT64_MIN mod -1 is 0, not an overflow. */
static void test_mod_integer_rules(void** unused) {
  (void)unused;
  int64_t a[8] = {7, -7, 7, -7, 5, INT64_MIN, 9, -9}, b[8] = {3, 3, -3, -3, 0, -1, 0, 4}, y[8];
  ir_node node = node_of(GFX_OP_MOD, 2);
  gfx_tensor in[2] = {tensor_of(a, GFX_DTYPE_I64, SHAPE(8)), tensor_of(b, GFX_DTYPE_I64, SHAPE(8))};
  gfx_tensor out = tensor_of(y, GFX_DTYPE_I64, SHAPE(8));
  expect_ok(run(&node, in, &out));
  const int64_t python[8] = {1, 2, -2, -1, 0, 0, 0, 3};
  for (int i = 0; i < 8; i++) assert_int_equal(y[i], python[i]);
  node.params.index.fmod = 1;
  expect_ok(run(&node, in, &out));
  const int64_t c[8] = {1, -1, 1, -1, 0, 0, 0, -1};
  for (int i = 0; i < 8; i++) assert_int_equal(y[i], c[i]);
  /* int32 through broadcasting: [2,1] mod [3] */
  int32_t a32[2] = {-10, 10}, b32[3] = {4, -4, 0}, y32[6];
  gfx_tensor in32[2] = {tensor_of(a32, GFX_DTYPE_I32, SHAPE(2, 1)), tensor_of(b32, GFX_DTYPE_I32, SHAPE(3))};
  gfx_tensor out32 = tensor_of(y32, GFX_DTYPE_I32, SHAPE(2, 3));
  node.params.index.fmod = 0;
  expect_ok(run(&node, in32, &out32));
  const int32_t want32[6] = {2, -2, 0, 2, -2, 0};
  for (int i = 0; i < 6; i++) assert_int_equal(y32[i], want32[i]);
  /* floats only with fmod=1 */
  float fa[2] = {5.5f, -5.5f}, fb[2] = {2, 2}, fy[2];
  gfx_tensor fin[2] = {tensor(fa, SHAPE(2)), tensor(fb, SHAPE(2))};
  gfx_tensor fout = tensor(fy, SHAPE(2));
  expect_error(run(&node, fin, &fout), GFX_ERR_NOT_SUPPORTED, "fmod=0", NULL);
  node.params.index.fmod = 1;
  expect_ok(run(&node, fin, &fout));
  const float fwant[2] = {1.5f, -1.5f};
  expect_floats_equal(fwant, fy, 2);
}

/* ---- index ops ---- */

/* An index outside [-dim, dim) fails the run, naming it; a scatter writes nothing then. Negative
 * indices count from the end. */
static void test_index_ops_bounds(void** unused) {
  (void)unused;
  float data[6] = {1, 2, 3, 4, 5, 6}, y[6];
  int64_t idx[2] = {-1, 0};
  ir_node gather = node_of(GFX_OP_GATHER_ELEMENTS, 2);
  gather.params.index.axis = 1;
  gfx_tensor in[2] = {tensor(data, SHAPE(2, 3)), tensor_of(idx, GFX_DTYPE_I64, SHAPE(2, 1))};
  gfx_tensor out = tensor(y, SHAPE(2, 1));
  expect_ok(run(&gather, in, &out));
  assert_true(y[0] == 3 && y[1] == 4);
  idx[1] = 3;
  expect_error(run(&gather, in, &out), GFX_ERR_INVALID_ARGUMENT, "index 3", "outside", NULL);
  idx[1] = -4;
  expect_error(run(&gather, in, &out), GFX_ERR_INVALID_ARGUMENT, "index -4", NULL);

  /* ScatterND: the first tuple fine, the second outside; the output keeps its old values */
  float upd[2] = {-7, -8};
  int64_t tuples[4] = {1, -1, 2, 0};
  ir_node scatter = node_of(GFX_OP_SCATTER_ND, 3);
  gfx_tensor sin[3] = {tensor(data, SHAPE(2, 3)), tensor_of(tuples, GFX_DTYPE_I64, SHAPE(2, 2)), tensor(upd, SHAPE(2))};
  gfx_tensor sout = tensor(y, SHAPE(2, 3));
  fill_value(y, 6, 0.5f);
  expect_error(run(&scatter, sin, &sout), GFX_ERR_INVALID_ARGUMENT, "index 2", NULL);
  for (int i = 0; i < 6; i++) assert_true(y[i] == 0.5f);
  tuples[2] = -2;
  expect_ok(run(&scatter, sin, &sout));
  const float want[6] = {-8, 2, 3, 4, 5, -7};
  expect_floats_equal(want, y, 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_table),
      cmocka_unit_test(test_bad_device_ordinal),
      cmocka_unit_test(test_device_objects),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_allocation_failure_names_size),
      cmocka_unit_test(test_streams_and_events),
      cmocka_unit_test(test_node_prepare_has_no_state),
      cmocka_unit_test(test_add_2x3_plus_3),
      cmocka_unit_test(test_sub_column_minus_row),
      cmocka_unit_test(test_mul_and_div_with_scalars),
      cmocka_unit_test(test_div_rank8_broadcast),
      cmocka_unit_test(test_binary_zero_elements),
      cmocka_unit_test(test_binary_shape_errors),
      cmocka_unit_test(test_relu),
      cmocka_unit_test(test_unsupported_dtype_is_named),
      cmocka_unit_test(test_unknown_op),
      cmocka_unit_test(test_conv_3x3_pad1_with_bias),
      cmocka_unit_test(test_conv_without_bias),
      cmocka_unit_test(test_conv_grouped_1x1),
      cmocka_unit_test(test_conv_strided_dilated_asymmetric_pads),
      cmocka_unit_test(test_conv_auto_pad_same_upper),
      cmocka_unit_test(test_conv_accumulates_in_double),
      cmocka_unit_test(test_conv_shape_errors),
      cmocka_unit_test(test_conv_bad_params),
      cmocka_unit_test(test_conv_zero_batch),
      cmocka_unit_test(test_matmul_2x3_by_3x2),
      cmocka_unit_test(test_matmul_batch_broadcast),
      cmocka_unit_test(test_matmul_empty_inner_dim_gives_zeros),
      cmocka_unit_test(test_matmul_accumulates_in_double),
      cmocka_unit_test(test_matmul_errors),
      cmocka_unit_test(test_mod_integer_rules),
      cmocka_unit_test(test_index_ops_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
