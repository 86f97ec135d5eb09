// gfxep Vulkan backend — the reduction family: Reduce* and the global pools (-DKIND_REDUCE), Softmax
// and LogSoftmax (-DKIND_SOFTMAX), Layer/Instance/Group/RMSNormalization (-DKIND_NORM), 2-D / 3-D
// Max/AveragePool (-DKIND_POOL) and LRN (-DKIND_LRN); LpNormalization runs in the softmax kernel.
// -DT_F16 loads and stores float16, -DT_BF16 bfloat16 (as 16-bit words). Index math is the IR's
// geometry (ir/ops_reduce.h), read by device
// address.
//
// Reduce, Softmax and the normalizations give each output element / row one workgroup: its 256
// invocations stride over the row and combine through shared memory (float32 throughout); with
// -DSUBGROUP (devices with subgroup arithmetic and shuffles in compute) each subgroup combines first
// and shared memory holds one value per subgroup. Pooling
// gives each output element one invocation. NaN propagates through Max and Min as in the reference.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUP)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define ELEM_ALIGN 2
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define ELEM uint16_t
#define ELEM_ALIGN 2
#else
#define ELEM float
#define ELEM_ALIGN 4
#endif

#include "float_math.glsl"
#include "elem_convert.glsl"

#define GROUP 256
#define MAX_RANK 8
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, scale_addr, bias_addr, y_addr, geom_addr;
  uvec2 mean_addr, inv_std_addr; // KIND_NORM: LayerNormalization's optional outputs (0: absent),
  uint stats_f32;                 // as float32 (else ELEM)
  uvec2 partials_addr;            // KIND_REDUCE split into slices: a float32 per output and slice
  uint phase, splits;             // 0: whole rows; 1: slice y of each row into partials; 2: partials into y
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

float load_x(int64_t i) { return elem_to_f(In(pc.x_addr).v[uint(i)]); }
void store_y(int64_t i, float v) { Out(pc.y_addr).v[uint(i)] = f_to_elem(v); }

float nan_max(float a, float b) { return isnan(a) ? a : (isnan(b) || b > a ? b : a); }
float nan_min(float a, float b) { return isnan(a) ? a : (isnan(b) || b < a ? b : a); }

shared float red[GROUP];

// ir_reduce_kind's codes (ir/graph.h)
#define R_SUM 0
#define R_MEAN 1
#define R_MAX 2
#define R_MIN 3
#define R_L2 4
#define R_L1 5
#define R_SUM_SQUARE 6
#define R_PROD 9
#define R_LOG_SUM_EXP 10

float combine2(float a, float b, int op) {
  return op == R_MAX ? nan_max(a, b) : op == R_MIN ? nan_min(a, b) : op == R_PROD ? a * b : a + b;
}

// Combines v over the workgroup with op (R_SUM adds, R_PROD multiplies, R_MAX / R_MIN compare, NaN
// propagating); every
// invocation gets the result. Called in uniform control flow.
#if defined(SUBGROUP)
// Within each subgroup first (subgroupAdd; the comparisons by butterfly shuffles, since a subgroup
// max need not propagate NaN), then the subgroups' results through shared memory: one barrier pair
// instead of log2(GROUP).
float group_combine(float v, int op) {
  float r = v;
  if (op == R_SUM) {
    r = subgroupAdd(v);
  } else {
    for (uint m = 1u; m < gl_SubgroupSize; m <<= 1u) r = combine2(r, subgroupShuffleXor(r, m), op);
  }
  if (subgroupElect()) red[gl_SubgroupID] = r;
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    float a = red[0];
    for (uint i = 1u; i < gl_NumSubgroups; i++) a = combine2(a, red[i], op);
    red[0] = a;
  }
  barrier();
  float result = red[0];
  barrier();
  return result;
}
#else
float group_combine(float v, int op) {
  const uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = GROUP / 2; s > 0; s >>= 1) {
    if (t < s) {
      red[t] = combine2(red[t], red[t + s], op);
    }
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}
#endif

#if defined(KIND_REDUCE)
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t out_count, reduce_count;
  int kind, n_kept, n_red, pad0;
  int64_t kept_dims[MAX_RANK], kept_strides[MAX_RANK];
  int64_t red_dims[MAX_RANK], red_strides[MAX_RANK];
};

int64_t offset_of(int64_t linear, int n, bool kept, Geom g) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; d--) {
    const int64_t dim = kept ? g.kept_dims[d] : g.red_dims[d];
    off += (linear % dim) * (kept ? g.kept_strides[d] : g.red_strides[d]);
    linear /= dim;
  }
  return off;
}

// ReduceLogSumExp of output o: the maximum (NaN skipped), then the sum of exponentials shifted by it
// where it is finite (all -inf gives -inf, a +inf gives +inf, a NaN gives NaN)
float log_sum_exp(int64_t base, Geom g) {
  float m = -INF_F;
  for (int64_t r = int64_t(gl_LocalInvocationID.x); r < g.reduce_count; r += GROUP) {
    const float v = load_x(base + offset_of(r, g.n_red, false, g));
    m = v > m ? v : m;
  }
  m = group_combine(m, R_MAX);
  const float shift = isinf(m) || isnan(m) ? 0.0 : m;
  float s = 0.0;
  for (int64_t r = int64_t(gl_LocalInvocationID.x); r < g.reduce_count; r += GROUP)
    s += exp(load_x(base + offset_of(r, g.n_red, false, g)) - shift);
  return shift + log(group_combine(s, R_SUM));
}

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Partials { float v[]; };

// What a whole row's combined value becomes: the mean divides, L2 takes the root.
float finish(float acc, int kind, Geom g) {
  if (kind == R_MEAN) acc /= float(g.reduce_count);  // an empty mean is 0/0 = NaN
  if (kind == R_L2) acc = sqrt(acc);
  return acc;
}

// A split row (phase 1 and 2, vk_reduce.c): workgroup (o, s) combines slice s of row o into
// partials[o * splits + s]; then one workgroup per row combines its partials (sums add, maxima and
// minima compare, products multiply: exact regroupings, NaN carried) and finishes. LogSumExp is
// never split.
void main() {
  Geom g = Geom(pc.geom_addr);
  const int kind = g.kind;
  const int combine = kind == R_MAX ? R_MAX : kind == R_MIN ? R_MIN : kind == R_PROD ? R_PROD : R_SUM;
  const float identity = kind == R_MAX ? -INF_F : kind == R_MIN ? INF_F : kind == R_PROD ? 1.0 : 0.0;
  const int64_t splits = int64_t(max(pc.splits, 1u));
  if (pc.phase == 2u) {
    Partials p = Partials(pc.partials_addr);
    for (int64_t o = int64_t(gl_WorkGroupID.x); o < g.out_count; o += int64_t(gl_NumWorkGroups.x)) {
      float acc = identity;
      for (int64_t k = int64_t(gl_LocalInvocationID.x); k < splits; k += GROUP)
        acc = combine2(acc, p.v[uint(o * splits + k)], combine);
      acc = group_combine(acc, combine);
      if (gl_LocalInvocationID.x == 0) store_y(o, finish(acc, kind, g));
    }
    return;
  }
  // phase 0: the whole row; phase 1: slice gl_WorkGroupID.y of it
  const int64_t chunk = pc.phase == 1u ? (g.reduce_count + splits - 1) / splits : g.reduce_count;
  const int64_t first = pc.phase == 1u ? int64_t(gl_WorkGroupID.y) * chunk : 0;
  const int64_t end = min(first + chunk, g.reduce_count);
  for (int64_t o = int64_t(gl_WorkGroupID.x); o < g.out_count; o += int64_t(gl_NumWorkGroups.x)) {
    const int64_t base = offset_of(o, g.n_kept, true, g);
    if (kind == R_LOG_SUM_EXP) { // uniform: the kind is per node
      const float v = log_sum_exp(base, g);
      if (gl_LocalInvocationID.x == 0) store_y(o, v);
      continue;
    }
    float acc = identity;
    for (int64_t r = first + int64_t(gl_LocalInvocationID.x); r < end; r += GROUP) {
      const float v = load_x(base + offset_of(r, g.n_red, false, g));
      acc = kind == R_MAX    ? nan_max(acc, v)
            : kind == R_MIN  ? nan_min(acc, v)
            : kind == R_PROD ? acc * v
                             : acc + (kind == R_L2 || kind == R_SUM_SQUARE ? v * v : kind == R_L1 ? abs(v) : v);
    }
    acc = group_combine(acc, combine);
    if (pc.phase == 1u) {
      if (gl_LocalInvocationID.x == 0) Partials(pc.partials_addr).v[uint(o * splits + int64_t(gl_WorkGroupID.y))] = acc;
      continue;
    }
    if (gl_LocalInvocationID.x == 0) store_y(o, finish(acc, kind, g));
  }
}
#endif

#if defined(KIND_SOFTMAX)
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t outer, n, inner;
  int log_softmax;
  int lp; // LpNormalization's p (1 or 2), 0 for the softmaxes
};

void main() {
  Geom g = Geom(pc.geom_addr);
  const int64_t rows = g.outer * g.inner, n = g.n, inner = g.inner;
  for (int64_t row = int64_t(gl_WorkGroupID.x); row < rows; row += int64_t(gl_NumWorkGroups.x)) {
    const int64_t base = (row / inner) * n * inner + row % inner;
    if (g.lp != 0) { // uniform: lp is per node
      float s = 0.0;
      for (int64_t k = int64_t(gl_LocalInvocationID.x); k < n; k += GROUP) {
        const float v = load_x(base + k * inner);
        s += g.lp == 1 ? abs(v) : v * v;
      }
      s = group_combine(s, R_SUM);
      const float norm = g.lp == 1 ? s : sqrt(s); // a zero norm gives zeros, as ONNX Runtime does
      for (int64_t k = int64_t(gl_LocalInvocationID.x); k < n; k += GROUP)
        store_y(base + k * inner, norm != 0.0 ? load_x(base + k * inner) / norm : 0.0);
      continue;
    }
    // subtracting the maximum keeps exp from overflowing
    float m = -INF_F;
    for (int64_t k = int64_t(gl_LocalInvocationID.x); k < n; k += GROUP) m = max(m, load_x(base + k * inner));
    m = group_combine(m, R_MAX);
    float s = 0.0;
    for (int64_t k = int64_t(gl_LocalInvocationID.x); k < n; k += GROUP) s += exp(load_x(base + k * inner) - m);
    s = group_combine(s, R_SUM);
    const float ls = log(s);
    for (int64_t k = int64_t(gl_LocalInvocationID.x); k < n; k += GROUP) {
      const float v = load_x(base + k * inner) - m;
      store_y(base + k * inner, g.log_softmax != 0 ? v - ls : exp(v) / s);
    }
  }
}
#endif

#if defined(KIND_NORM)
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t rows, count, affine_mod, affine_mul, affine_div;
  int64_t affine_wrap; // 0, or the modulus of j / affine_div (a broadcast RMSNormalization scale)
  float epsilon;
  int has_bias;
  int rms;             // RMSNormalization: no mean subtracted
};
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutF32 { float v[]; };

// one statistic of row r to an optional output, where the node has it
void store_stat(uvec2 addr, int64_t r, float v, bool f32) {
  if (addr == uvec2(0u)) return;
  if (f32)
    OutF32(addr).v[uint(r)] = v;
  else
    Out(addr).v[uint(r)] = f_to_elem(v);
}

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Partials { float v[]; };

// The sum of row r's partials k = 0 .. splits - 1 starting at partials[first + r * splits], for
// every invocation. Called in uniform control flow.
float partials_sum(int64_t first, int64_t r, int64_t splits) {
  Partials p = Partials(pc.partials_addr);
  float s = 0.0;
  for (int64_t k = int64_t(gl_LocalInvocationID.x); k < splits; k += GROUP) s += p.v[uint(first + r * splits + k)];
  return group_combine(s, R_SUM);
}

// A row split into slices (vk_reduce.c; phases 1 to 3, workgroup (r, s) on slice s of row r): 1 adds
// its slice into partials[r * splits + s]; 2 takes the mean from those sums and adds its slice's
// squared deviations into partials[rows * splits + r * splits + s]; 3 takes mean and variance from
// both and normalizes its slice. The same two-pass statistics as a whole row, regrouped.
void split_main(Geom g) {
  const int64_t count = g.count, splits = int64_t(pc.splits), rows = g.rows;
  const int64_t chunk = (count + splits - 1) / splits;
  const int64_t first = int64_t(gl_WorkGroupID.y) * chunk, end = min(first + chunk, count);
  Partials p = Partials(pc.partials_addr);
  for (int64_t r = int64_t(gl_WorkGroupID.x); r < rows; r += int64_t(gl_NumWorkGroups.x)) {
    const int64_t base = r * count, slot = r * splits + int64_t(gl_WorkGroupID.y);
    if (pc.phase == 1u) {
      float s = 0.0;
      for (int64_t j = first + int64_t(gl_LocalInvocationID.x); j < end && g.rms == 0; j += GROUP) s += load_x(base + j);
      s = group_combine(s, R_SUM);
      if (gl_LocalInvocationID.x == 0u) p.v[uint(slot)] = s;
      continue;
    }
    const float mean = g.rms != 0 ? 0.0 : partials_sum(0, r, splits) / float(count); // uniform: rms is per node
    if (pc.phase == 2u) {
      float q = 0.0;
      for (int64_t j = first + int64_t(gl_LocalInvocationID.x); j < end; j += GROUP) {
        const float d = load_x(base + j) - mean;
        q += d * d;
      }
      q = group_combine(q, R_SUM);
      if (gl_LocalInvocationID.x == 0u) p.v[uint(rows * splits + slot)] = q;
      continue;
    }
    const float inv_std = 1.0 / sqrt(partials_sum(rows * splits, r, splits) / float(count) + g.epsilon);
    if (gl_LocalInvocationID.x == 0u && gl_WorkGroupID.y == 0u) {
      store_stat(pc.mean_addr, r, mean, pc.stats_f32 != 0u);
      store_stat(pc.inv_std_addr, r, inv_std, pc.stats_f32 != 0u);
    }
    for (int64_t j = first + int64_t(gl_LocalInvocationID.x); j < end; j += GROUP) {
      const int64_t q = j / g.affine_div;
      const int64_t a = (r % g.affine_mod) * g.affine_mul + (g.affine_wrap != 0 ? q % g.affine_wrap : q);
      float y = (load_x(base + j) - mean) * inv_std * elem_to_f(In(pc.scale_addr).v[uint(a)]);
      if (g.has_bias != 0) y += elem_to_f(In(pc.bias_addr).v[uint(a)]);
      store_y(base + j, y);
    }
  }
}

void main() {
  Geom g = Geom(pc.geom_addr);
  if (pc.phase != 0u) {
    split_main(g);
    return;
  }
  const int64_t count = g.count;
  for (int64_t r = int64_t(gl_WorkGroupID.x); r < g.rows; r += int64_t(gl_NumWorkGroups.x)) {
    const int64_t base = r * count;
    // two passes: the mean, then the mean squared deviation from it
    float s = 0.0;
    for (int64_t j = int64_t(gl_LocalInvocationID.x); j < count && g.rms == 0; j += GROUP) s += load_x(base + j);
    const float mean = g.rms != 0 ? 0.0 : group_combine(s, R_SUM) / float(count); // uniform: rms is per node
    float q = 0.0;
    for (int64_t j = int64_t(gl_LocalInvocationID.x); j < count; j += GROUP) {
      const float d = load_x(base + j) - mean;
      q += d * d;
    }
    const float inv_std = 1.0 / sqrt(group_combine(q, R_SUM) / float(count) + g.epsilon);
    if (gl_LocalInvocationID.x == 0u) {
      store_stat(pc.mean_addr, r, mean, pc.stats_f32 != 0u);
      store_stat(pc.inv_std_addr, r, inv_std, pc.stats_f32 != 0u);
    }
    for (int64_t j = int64_t(gl_LocalInvocationID.x); j < count; j += GROUP) {
      const int64_t q = j / g.affine_div;
      const int64_t a = (r % g.affine_mod) * g.affine_mul + (g.affine_wrap != 0 ? q % g.affine_wrap : q);
      float y = (load_x(base + j) - mean) * inv_std * elem_to_f(In(pc.scale_addr).v[uint(a)]);
      if (g.has_bias != 0) y += elem_to_f(In(pc.bias_addr).v[uint(a)]);
      store_y(base + j, y);
    }
  }
}
#endif

#if defined(KIND_POOL)
// ir_pool_geom: 2-D pooling is a depth of 1 with a window of 1 along it; indexed depth, height, width
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t volumes, in_size[3], out_size[3];
  int64_t kernel[3], strides[3], dilations[3], pad_begin[3], pad_end[3];
  int is_max, count_include_pad;
};

void main() {
  Geom g = Geom(pc.geom_addr);
  const int64_t total = g.volumes * g.out_size[0] * g.out_size[1] * g.out_size[2];
  const int64_t step = int64_t(gl_NumWorkGroups.x) * GROUP;
  for (int64_t e = int64_t(gl_GlobalInvocationID.x); e < total; e += step) {
    int64_t start[3];
    int64_t rest = e;
    for (int j = 2; j >= 0; j--) {
      start[j] = (rest % g.out_size[j]) * g.strides[j] - g.pad_begin[j];
      rest /= g.out_size[j];
    }
    const int64_t x0 = rest * g.in_size[0] * g.in_size[1] * g.in_size[2];
    float acc = g.is_max != 0 ? -INF_F : 0.0;
    int64_t taps = 0;
    for (int64_t kd = 0; kd < g.kernel[0]; kd++) {
      const int64_t id = start[0] + kd * g.dilations[0];
      if (id < 0 || id >= g.in_size[0]) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; kh++) {
        const int64_t ih = start[1] + kh * g.dilations[1];
        if (ih < 0 || ih >= g.in_size[1]) continue;
        for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
          const int64_t iw = start[2] + kw * g.dilations[2];
          if (iw < 0 || iw >= g.in_size[2]) continue;
          const float v = load_x(x0 + (id * g.in_size[1] + ih) * g.in_size[2] + iw);
          acc = g.is_max != 0 ? nan_max(acc, v) : acc + v;
          taps++;
        }
      }
    }
    if (g.is_max == 0) {
      // taps in the padding: skipped, or counted up to the end padding with count_include_pad
      if (g.count_include_pad != 0) {
        taps = 1;
        for (int j = 0; j < 3; j++) taps *= min(start[j] + g.kernel[j], g.in_size[j] + g.pad_end[j]) - start[j];
      }
      acc = taps > 0 ? acc / float(taps) : NAN_F;
    }
    store_y(e, acc);
  }
}
#endif

#if defined(KIND_LRN)
// LRN: one invocation per element sums the squares of its channel window (vk_reduce.c's lrn geometry)
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t n, c, spatial, size, pre;
  float alpha_over_size, beta, bias;
};

void main() {
  Geom g = Geom(pc.geom_addr);
  const int64_t total = g.n * g.c * g.spatial;
  const int64_t step = int64_t(gl_NumWorkGroups.x) * GROUP;
  for (int64_t e = int64_t(gl_GlobalInvocationID.x); e < total; e += step) {
    const int64_t s = e % g.spatial, c = (e / g.spatial) % g.c, n = e / (g.spatial * g.c);
    const int64_t lo = max(c - g.pre, int64_t(0)), hi = min(c - g.pre + g.size - 1, g.c - 1);
    float sum = 0.0;
    for (int64_t k = lo; k <= hi; k++) {
      const float v = load_x((n * g.c + k) * g.spatial + s);
      sum += v * v;
    }
    store_y(e, load_x(e) * pow(g.bias + g.alpha_over_size * sum, -g.beta));
  }
}
#endif
