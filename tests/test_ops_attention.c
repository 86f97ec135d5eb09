/* gfxep — Attention (opset 23) on its own: which nodes parse claims or refuses (and why), the
 * geometry of both layouts and of the broadcast mask, and the reference kernel on hand-computed
 * rows (a single key, equal scores, causality, a row with every key hidden).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "ir/graph.h"
#include "ir/ops_nn.h"
#include "ir/shape.h"
#include "ir_test_util.h"

/* the reference kernel, declared by the op table in the backend */
gfx_status ref_run_attention(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);

/* A float32 Attention node of Q, K, V with the given shapes and no mask. */
static ir_node_desc attention_desc(attr_table* t, gfx_shape q, gfx_shape k, gfx_shape v) {
  ir_node_desc d = desc_base("Attention", 23, "attn", t, 3, GFX_DTYPE_F32);
  d.input_shapes[0] = q, d.input_shapes[1] = k, d.input_shapes[2] = v;
  return d;
}

static void test_attention_parse(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS;
  ir_node_desc d = attention_desc(&none, SHAPE(1, 4, -1, 8), SHAPE(1, 2, -1, 8), SHAPE(1, 2, -1, 6));
  ir_params p = parse_ok(&d, GFX_OP_ATTENTION);
  assert_true(!p.attention.has_mask && !p.attention.is_causal && p.attention.scale == 0.0f);
  assert_true(p.attention.q_heads == 0 && p.attention.kv_heads == 0);
  /* a bool mask, causal, a scale */
  attr_table t = ATTRS(A_INT("is_causal", 1), A_FLOAT("scale", 0.5f));
  ir_node_desc dm = attention_desc(&t, SHAPE(1, 4, 3, 8), SHAPE(1, 2, 5, 8), SHAPE(1, 2, 5, 8));
  dm.n_inputs = 4, dm.input_dtypes[3] = GFX_DTYPE_BOOL, dm.input_shapes[3] = SHAPE(3, 5);
  p = parse_ok(&dm, GFX_OP_ATTENTION);
  assert_true(p.attention.has_mask && p.attention.mask_bool && p.attention.is_causal && p.attention.scale == 0.5f);
  /* rank 3 with its heads */
  attr_table heads = ATTRS(A_INT("q_num_heads", 4), A_INT("kv_num_heads", 2));
  ir_node_desc d3 = attention_desc(&heads, SHAPE(2, 5, 32), SHAPE(2, 7, 16), SHAPE(2, 7, 16));
  p = parse_ok(&d3, GFX_OP_ATTENTION);
  assert_true(p.attention.q_heads == 4 && p.attention.kv_heads == 2);
}

static void test_attention_parse_refuses(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS;
  ir_node_desc d3 = attention_desc(&none, SHAPE(2, 5, 32), SHAPE(2, 7, 16), SHAPE(2, 7, 16));
  parse_refused(&d3, "rank-3 inputs");
  attr_table cap = ATTRS(A_FLOAT("softcap", 2.0f));
  ir_node_desc dc = attention_desc(&cap, SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8));
  parse_refused(&dc, "softcap");
  ir_node_desc dp = attention_desc(&none, SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8));
  dp.n_inputs = 6, dp.input_dtypes[4] = GFX_DTYPE_F32, dp.input_shapes[4] = SHAPE(1, 2, 2, 8);
  dp.input_dtypes[5] = GFX_DTYPE_UNDEFINED;
  parse_refused(&dp, "past key/value input 4");
  ir_node_desc dout = attention_desc(&none, SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8));
  dout.n_outputs = 3, dout.output_dtypes[1] = dout.output_dtypes[2] = GFX_DTYPE_F32;
  parse_refused(&dout, "3 outputs");
  ir_node_desc dm = attention_desc(&none, SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8));
  dm.n_inputs = 4, dm.input_dtypes[3] = GFX_DTYPE_I64, dm.input_shapes[3] = SHAPE(3, 3);
  parse_refused(&dm, "attn_mask is int64");
  ir_node_desc dr = attention_desc(&none, SHAPE(2, 3, 8), SHAPE(1, 2, 3, 8), SHAPE(1, 2, 3, 8));
  parse_refused(&dr, "input 1 has rank 4");
}

static void test_attention_geometry(void** unused) {
  (void)unused;
  /* rank 3, grouped kv heads: [b, seq, heads x dim] strides; Y [b, q seq, q heads x v dim] */
  ir_attention_params p = {.q_heads = 4, .kv_heads = 2};
  gfx_shape in[4] = {SHAPE(2, 5, 32), SHAPE(2, 7, 16), SHAPE(2, 7, 12)};
  ir_attention_geom g;
  expect_ok(ir_attention_geometry(&p, in, &g));
  assert_true(g.group == 2 && g.head_size == 8 && g.v_head_size == 6 && g.kv_seq == 7);
  assert_true(g.q_stride[0] == 160 && g.q_stride[1] == 8 && g.q_stride[2] == 32);
  assert_true(g.v_stride[0] == 84 && g.v_stride[1] == 6 && g.v_stride[2] == 12);
  assert_true(g.y.rank == 3 && g.y.dims[0] == 2 && g.y.dims[1] == 5 && g.y.dims[2] == 24);
  assert_true(fabsf(g.scale - 1.0f / sqrtf(8.0f)) < 1e-7f);
  /* rank 4 with a [heads, 1, kv seq] mask: no stride along batch and the query */
  ir_attention_params p4 = {.has_mask = 1};
  gfx_shape in4[4] = {SHAPE(2, 3, 5, 4), SHAPE(2, 3, 6, 4), SHAPE(2, 3, 6, 4), SHAPE(3, 1, 6)};
  expect_ok(ir_attention_geometry(&p4, in4, &g));
  assert_true(g.mask_stride[0] == 0 && g.mask_stride[1] == 6 && g.mask_stride[2] == 0 && g.mask_stride[3] == 1);
  assert_true(g.y.rank == 4 && g.y.dims[1] == 3 && g.y.dims[2] == 5 && g.y.dims[3] == 4);
  in4[3] = SHAPE(5, 5);
  gfx_status s = ir_attention_geometry(&p4, in4, &g);
  assert_non_null(s);
  gfx_status_free(s);
  /* kv heads that do not divide the q heads */
  gfx_shape bad[4] = {SHAPE(1, 3, 2, 4), SHAPE(1, 2, 2, 4), SHAPE(1, 2, 2, 4)};
  ir_attention_params p0 = {0};
  s = ir_attention_geometry(&p0, bad, &g);
  assert_non_null(s);
  gfx_status_free(s);
}

/* One head, queries and keys of size 1: Q [1, 1, 3, 1], K and V [1, 1, 3, 1]. */
static void run_rows(ir_attention_params p, const float* mask_bool_rows, float* y) {
  static const float q[3] = {1.0f, 0.0f, 2.0f}, k[3] = {0.0f, 1.0f, 1.0f}, v[3] = {1.0f, 2.0f, 4.0f};
  uint8_t mask[9];
  for (int i = 0; i < 9; i++) mask[i] = mask_bool_rows && mask_bool_rows[i] != 0.0f;
  ir_node node = {.op = GFX_OP_ATTENTION, .name = "attn", .n_inputs = p.has_mask ? 4 : 3, .n_outputs = 1};
  node.params.attention = p;
  const gfx_shape s = SHAPE(1, 1, 3, 1);
  gfx_tensor in[4] = {{.data = (void*)q, .dtype = GFX_DTYPE_F32, .shape = s},
                      {.data = (void*)k, .dtype = GFX_DTYPE_F32, .shape = s},
                      {.data = (void*)v, .dtype = GFX_DTYPE_F32, .shape = s},
                      {.data = mask, .dtype = GFX_DTYPE_BOOL, .shape = SHAPE(3, 3)}};
  gfx_tensor out = {.data = y, .dtype = GFX_DTYPE_F32, .shape = s};
  gfx_status st = ref_run_attention(NULL, &node, in, &out);
  if (st) print_error("%s\n", gfx_status_message(st));
  assert_null(st);
}

static void test_ref_attention(void** unused) {
  (void)unused;
  float y[3];
  /* scale 1: row 0 scores (0, 1, 1), row 1 all 0 (the mean of V), row 2 (0, 2, 2) */
  run_rows((ir_attention_params){.scale = 1.0f}, NULL, y);
  const double e1 = exp(1.0), e2 = exp(2.0);
  assert_true(fabs(y[0] - (1.0 + 2.0 * e1 + 4.0 * e1) / (1.0 + 2.0 * e1)) < 1e-6);
  assert_true(fabs(y[1] - 7.0 / 3.0) < 1e-6);
  assert_true(fabs(y[2] - (1.0 + 6.0 * e2) / (1.0 + 2.0 * e2)) < 1e-6);
  /* causal: row 0 sees key 0 only, row 1 keys 0 and 1 (equal scores) */
  run_rows((ir_attention_params){.scale = 1.0f, .is_causal = 1}, NULL, y);
  assert_true(fabs(y[0] - 1.0) < 1e-6 && fabs(y[1] - 1.5) < 1e-6);
  assert_true(fabs(y[2] - (1.0 + 6.0 * e2) / (1.0 + 2.0 * e2)) < 1e-6);
  /* a bool mask hiding all of row 1 gives zeros (as ONNX Runtime) and key 0 of row 2 */
  static const float m[9] = {1, 1, 1, 0, 0, 0, 0, 1, 1};
  run_rows((ir_attention_params){.scale = 1.0f, .has_mask = 1, .mask_bool = 1}, m, y);
  assert_true(y[1] == 0.0f && fabs(y[2] - 3.0) < 1e-6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention_parse),
      cmocka_unit_test(test_attention_parse_refuses),
      cmocka_unit_test(test_attention_geometry),
      cmocka_unit_test(test_ref_attention),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
