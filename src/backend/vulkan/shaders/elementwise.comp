// gfxep Vulkan backend — the element-wise kernels (ops.def families unary and binary).
//
// One source, compiled once per element type: -DEW_F32, -DEW_F16 (loads and stores float16,
// computes in float32), -DEW_BF16 (the same for bfloat16, as 16-bit words), -DEW_I32, -DEW_I64;
// with -DEW_BOOL_OUT the result is stored as bool bytes
// (comparisons). The op, the input count, Pow's exponent type, the broadcasting mode and Gelu's
// approximation are specialization constants (ew_ops.h), so each pipeline keeps only its own path.
//
// Tensors are reached through device addresses in push constants (GL_EXT_buffer_reference). With
// STRIDED, a geometry block (also by address) holds the output dims and per input the element
// stride of each dim, 0 where the input is broadcast; otherwise every input has the output's shape.
// Each invocation walks the elements with a grid stride. With VEC > 1 (inputs of the output's shape
// and type, every address 16-byte aligned, the count a multiple of VEC: the host checks) it walks
// 16-byte groups of VEC elements instead: one load per input and one store per group, so that a
// thread keeps 16 bytes in flight rather than 2 (a float16 element) and the loop's bookkeeping is
// paid once per group. The group's elements are computed exactly as the scalar path computes them.
#version 460
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#if defined(EW_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#if defined(EW_BF16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if defined(EW_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#if defined(EW_BOOL_OUT)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif

#include "ew_ops.h"

layout(local_size_x = EW_GROUP_SIZE) in;

layout(constant_id = EW_SPEC_OP) const int OP = EW_RELU;
layout(constant_id = EW_SPEC_N_IN) const int N_IN = 1;
layout(constant_id = EW_SPEC_EXP_TYPE) const int EXP_TYPE = EW_EXP_SAME;
layout(constant_id = EW_SPEC_STRIDED) const int STRIDED = 0;
layout(constant_id = EW_SPEC_GELU_TANH) const int GELU_TANH = 0;
layout(constant_id = EW_SPEC_VEC) const int VEC = 1;

layout(push_constant) uniform Push {
  uvec2 out_addr;
  uvec2 in_addr[EW_MAX_IN];
  uvec2 geom_addr;
  uint count;
  float alpha;
  float beta;
  float gamma;
  float lo;  // Clip's bounds (-inf / +inf when absent)
  float hi;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer BufF32 { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer BufI32 { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Geom {
  uint rank;
  uint dims[EW_MAX_RANK];
  uint strides[EW_MAX_IN * EW_MAX_RANK];
};
#if defined(EW_F16)
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BufF16 { float16_t v[]; };
#endif
#if defined(EW_BF16)
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BufU16 { uint16_t v[]; };
#include "half_bits.glsl"
#endif
#if defined(EW_I64)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer BufI64 { int64_t v[]; };
#endif
#if defined(EW_BOOL_OUT)
layout(buffer_reference, std430, buffer_reference_align = 1) buffer BufU8 { uint8_t v[]; };
#endif

#if defined(EW_F32) || defined(EW_F16) || defined(EW_BF16)
#define FLOAT_MATH 1
#define T float
#elif defined(EW_I32)
#define T int
#elif defined(EW_I64)
#define T int64_t
#endif

// ---- float helpers (shared with the other shaders) ----

#include "float_math.glsl"

bool is_odd_integer(float y) { return abs(y) < 16777216.0 && floor(y) == y && mod(abs(y), 2.0) == 1.0; }

// C's pow on the cases models meet: negative bases with integer exponents, zeros, NaN
float pow_f(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return NAN_F;
  if (x == 0.0) {
    bool odd = is_odd_integer(y);
    if (y > 0.0) return odd ? x : 0.0;
    return odd && floatBitsToUint(x) != 0u ? -INF_F : INF_F;
  }
  if (x < 0.0) {
    if (floor(y) != y) return NAN_F;
    float r = pow(-x, y);
    return is_odd_integer(y) ? -r : r;
  }
  return pow(x, y);
}

float unary_f(float x) {
  // every unary op maps NaN to NaN; said explicitly, since a driver may turn the compare-and-select
  // of Relu or Clip into max/min, which drop NaN (seen on NVIDIA's)
  if (isnan(x)) return x;
  switch (OP) {
    case EW_RELU: return x < 0.0 ? 0.0 : x;
    case EW_LEAKY_RELU: return x < 0.0 ? pc.alpha * x : x;
    case EW_SIGMOID: return sigmoid_f(x);
    case EW_TANH: return tanh_f(x);
    case EW_HARD_SIGMOID: return clamp01(pc.alpha * x + pc.beta);
    case EW_HARD_SWISH: return x * clamp01(x / 6.0 + 0.5);
    case EW_CLIP: {
      float v = x < pc.lo ? pc.lo : x;
      return v > pc.hi ? pc.hi : v;
    }
    case EW_ELU: return x < 0.0 ? pc.alpha * (exp(x) - 1.0) : x;
    case EW_SELU: return x > 0.0 ? pc.gamma * x : pc.gamma * pc.alpha * (exp(x) - 1.0);
    case EW_GELU:
      if (GELU_TANH != 0) return 0.5 * x * (1.0 + tanh_f(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1.0 + erf_f(x * 0.7071067811865476));
    case EW_ERF: return erf_f(x);
    case EW_SOFTPLUS: return (x > 0.0 ? x : 0.0) + log(1.0 + exp(-abs(x)));
    case EW_SQRT: return x < 0.0 ? NAN_F : sqrt(x);
    case EW_EXP: return exp(x);
    case EW_LOG: return x < 0.0 ? NAN_F : (x == 0.0 ? -INF_F : log(x));
    case EW_NEG: return -x;
    case EW_ABS: return abs(x);
    case EW_RECIPROCAL: return 1.0 / x;
    case EW_FLOOR: return floor(x);
    case EW_CEIL: return ceil(x);
    case EW_ROUND: return roundEven(x);
    case EW_SIGN: return sign(x);
    case EW_SIN: return sin_f(x);
    case EW_COS: return cos_f(x);
    case EW_SOFTSIGN: return x / (1.0 + abs(x));
    case EW_MISH: return x * tanh_f((x > 0.0 ? x : 0.0) + log(1.0 + exp(-abs(x))));
    case EW_CELU: return (x > 0.0 ? x : 0.0) + min(0.0, pc.alpha * (exp(x / pc.alpha) - 1.0));
    case EW_THRESHOLDED_RELU: return x > pc.alpha ? x : 0.0;
  }
  return NAN_F;
}

float min_nan(float a, float b) { return isnan(a) || isnan(b) ? NAN_F : (a < b ? a : b); }
float max_nan(float a, float b) { return isnan(a) || isnan(b) ? NAN_F : (a > b ? a : b); }

// ---- integer helpers ----

T unary_i(T x) {
  if (OP == EW_ABS) return x < T(0) ? -x : x;
  return -x;  // EW_NEG
}

// ---- loads and stores ----

T load_in(int k, uint i) {
#if defined(FLOAT_MATH)
  if (k == 1 && EXP_TYPE != EW_EXP_SAME) {
    if (EXP_TYPE == EW_EXP_F32) return BufF32(pc.in_addr[1]).v[i];
    if (EXP_TYPE == EW_EXP_I32) return float(BufI32(pc.in_addr[1]).v[i]);
    // int64 as two words, little-endian. A value that fits in 32 bits (every exponent that does not
    // overflow) is its low word, exactly: hi * 2^32 + lo in float would lose a negative value's low
    // word (-3 = -1 * 2^32 + 4294967293, and 4294967293 rounds to 2^32 in float32)
    int lo = BufI32(pc.in_addr[1]).v[2u * i];
    int hi = BufI32(pc.in_addr[1]).v[2u * i + 1u];
    if (hi == (lo >> 31)) return float(lo);
    return float(hi) * 4294967296.0 + float(uint(lo));
  }
#endif
#if defined(EW_F32)
  return BufF32(pc.in_addr[k]).v[i];
#elif defined(EW_F16)
  return float(BufF16(pc.in_addr[k]).v[i]);
#elif defined(EW_BF16)
  return bf16_to_f32(uint(BufU16(pc.in_addr[k]).v[i]));
#elif defined(EW_I32)
  return BufI32(pc.in_addr[k]).v[i];
#elif defined(EW_I64)
  return BufI64(pc.in_addr[k]).v[i];
#endif
}

void store_out(uint i, T r) {
#if defined(EW_BOOL_OUT)
  BufU8(pc.out_addr).v[i] = uint8_t(r != T(0) ? 1 : 0);
#elif defined(EW_F32)
  BufF32(pc.out_addr).v[i] = r;
#elif defined(EW_F16)
  BufF16(pc.out_addr).v[i] = float16_t(r);
#elif defined(EW_BF16)
  BufU16(pc.out_addr).v[i] = uint16_t(f32_to_bf16_bits(floatBitsToUint(r)));
#elif defined(EW_I32)
  BufI32(pc.out_addr).v[i] = r;
#elif defined(EW_I64)
  BufI64(pc.out_addr).v[i] = r;
#endif
}

// ---- the op ----

T combine(T v[EW_MAX_IN]) {
  T a = v[0], b = v[1];
  switch (OP) {
    case EW_ADD: return a + b;
    case EW_SUB: return a - b;
    case EW_MUL: return a * b;
    case EW_EQUAL: return a == b ? T(1) : T(0);
    case EW_GREATER: return a > b ? T(1) : T(0);
    case EW_LESS: return a < b ? T(1) : T(0);
    case EW_GREATER_OR_EQUAL: return a >= b ? T(1) : T(0);
    case EW_LESS_OR_EQUAL: return a <= b ? T(1) : T(0);
#if defined(FLOAT_MATH)
    case EW_DIV: return a / b;
    case EW_POW: return pow_f(a, b);
    case EW_PRELU: return a < 0.0 ? b * a : a;
#else
    // truncating, by a constant divisor without zeros (parse); -1 negates, wrapping the minimum
    case EW_DIV: return b == T(0) ? T(0) : b == T(-1) ? -a : a / b;
#endif
  }
  // variadic: Min, Max, Sum, Mean
  T r = v[0];
  for (int k = 1; k < N_IN; k++) {
#if defined(FLOAT_MATH)
    if (OP == EW_MIN) r = min_nan(r, v[k]);
    else if (OP == EW_MAX) r = max_nan(r, v[k]);
    else r += v[k];
#else
    if (OP == EW_MIN) r = v[k] < r ? v[k] : r;
    else if (OP == EW_MAX) r = v[k] > r ? v[k] : r;
    else r += v[k];
#endif
  }
#if defined(FLOAT_MATH)
  if (OP == EW_MEAN) r = r / float(N_IN);
#endif
  return r;
}

T compute(T v[EW_MAX_IN]) {
  if (OP < EW_FIRST_NARY) {
#if defined(FLOAT_MATH)
    return unary_f(v[0]);
#else
    return unary_i(v[0]);
#endif
  }
  return combine(v);
}

#if (defined(EW_F32) || defined(EW_F16) || defined(EW_BF16) || defined(EW_I32)) && !defined(EW_BOOL_OUT)
#define HAS_GROUPS 1
layout(buffer_reference, std430, buffer_reference_align = 16) buffer BufV4 { uvec4 v[]; };
#if defined(EW_F16)
#define GROUP 8
#elif defined(EW_BF16)
#define GROUP 8
#else
#define GROUP 4
#endif

// element e of a 16-byte group, as the scalar path loads it
T group_elem(uvec4 w, int e) {
#if defined(EW_F32)
  return uintBitsToFloat(w[e]);
#elif defined(EW_I32)
  return int(w[e]);
#elif defined(EW_F16)
  return float(unpackFloat2x16(w[e >> 1])[e & 1]);
#else
  const uint word = w[e >> 1];
  return bf16_to_f32((e & 1) == 0 ? word & 0xffffu : word >> 16);
#endif
}

// the group's results as the scalar path stores them
uvec4 group_pack(T r[GROUP]) {
  uvec4 w;
  [[unroll]] for (int q = 0; q < 4; q++) {
#if defined(EW_F32)
    w[q] = floatBitsToUint(r[q]);
#elif defined(EW_I32)
    w[q] = uint(r[q]);
#elif defined(EW_F16)
    w[q] = packFloat2x16(f16vec2(float16_t(r[2 * q]), float16_t(r[2 * q + 1])));
#else
    w[q] = f32_to_bf16_bits(floatBitsToUint(r[2 * q])) | f32_to_bf16_bits(floatBitsToUint(r[2 * q + 1])) << 16;
#endif
  }
  return w;
}

void run_groups() {
  const uint stride = gl_NumWorkGroups.x * uint(EW_GROUP_SIZE), groups = pc.count / uint(GROUP);
  for (uint j = gl_GlobalInvocationID.x; j < groups; j += stride) {
    // the operands' loads in a loop bounded by N_IN, as in the scalar path: a select between a load
    // and a constant may be compiled to an unconditional load, and the unused addresses are 0
    uvec4 w[EW_MAX_IN];
    [[unroll]] for (int k = 0; k < EW_MAX_IN; k++) w[k] = uvec4(0u);
    for (int k = 0; k < N_IN; k++) w[k] = BufV4(pc.in_addr[k]).v[j];
    T r[GROUP];
    [[unroll]] for (int e = 0; e < GROUP; e++) {
      T v[EW_MAX_IN];
      [[unroll]] for (int k = 0; k < EW_MAX_IN; k++) v[k] = k < N_IN ? group_elem(w[k], e) : T(0);
      r[e] = compute(v);
    }
    BufV4(pc.out_addr).v[j] = group_pack(r);
  }
}
#endif

void main() {
#if defined(HAS_GROUPS)
  if (VEC > 1) {
    run_groups();
    return;
  }
#endif
  const uint stride = gl_NumWorkGroups.x * uint(EW_GROUP_SIZE);
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
    uint off[EW_MAX_IN];
    for (int k = 0; k < N_IN; k++) off[k] = STRIDED != 0 ? 0u : i;
    if (STRIDED != 0) {
      Geom g = Geom(pc.geom_addr);
      uint rem = i;
      for (int d = int(g.rank) - 1; d >= 0; d--) {
        uint dim = g.dims[d];
        uint c = rem % dim;
        rem /= dim;
        for (int k = 0; k < N_IN; k++) off[k] += c * g.strides[k * EW_MAX_RANK + d];
      }
    }
    T v[EW_MAX_IN];
    for (int k = 0; k < EW_MAX_IN; k++) v[k] = T(0);
    for (int k = 0; k < N_IN; k++) v[k] = load_in(k, off[k]);
    store_out(i, compute(v));
  }
}
