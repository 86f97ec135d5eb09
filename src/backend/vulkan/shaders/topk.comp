// gfxep Vulkan backend — TopK (vk_topk.c): the k first elements of every line of X along the axis
// in TopK's order (ir_topk_before_float / ir_topk_before_int, src/ir/ops_index.h), values copied bit
// for bit and int64 indices, as ref_index.c's ref_run_topk.
//
// One invocation per element of X counts the elements of its line that come before it (the order
// is total, so these ranks are a permutation of the line) and, when its rank is below k, writes
// itself to that slot: every output slot is written once, no sort and no atomics. The count stops at
// k. The element type is a specialization constant: float16 and bfloat16 are widened bit by bit
// (exact), int64 is
// compared as (signed high word, unsigned low word), so neither float16 arithmetic nor shaderInt64
// is needed; NaN is told by its bits, since a driver may fold isnan or a self-comparison away.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

#include "half_bits.glsl"

#define T_F32 0
#define T_F16 1
#define T_I32 2
#define T_I64 3
#define T_BF16 4

layout(local_size_x = 256) in;
layout(constant_id = 0) const int TYPE = T_F32;

layout(push_constant) uniform Push {
  uvec2 x_addr, values_addr, indices_addr;
  uint count, len, inner, k, largest;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer B64 { uvec2 v[]; };

// element i of X as raw bits: the low word, and the high word of an int64
uvec2 load_bits(uint i) {
  if (TYPE == T_F16) return uvec2(f16_to_f32_bits(uint(B16(pc.x_addr).v[i])), 0u);
  if (TYPE == T_BF16) return uvec2(uint(B16(pc.x_addr).v[i]) << 16, 0u);
  if (TYPE == T_I64) return B64(pc.x_addr).v[i];
  return uvec2(B32(pc.x_addr).v[i], 0u);
}

void store_value(uint dst, uint src) {
  if (TYPE == T_F16 || TYPE == T_BF16) B16(pc.values_addr).v[dst] = B16(pc.x_addr).v[src];
  else if (TYPE == T_I64) B64(pc.values_addr).v[dst] = B64(pc.x_addr).v[src];
  else B32(pc.values_addr).v[dst] = B32(pc.x_addr).v[src];
}

bool is_nan(uint bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }

// a > b (greater) or a < b for the element type; false when equal
bool ahead(uvec2 a, uvec2 b, bool greater) {
  if (TYPE == T_I64) {
    if (a.y != b.y) return greater ? int(a.y) > int(b.y) : int(a.y) < int(b.y);
    return greater ? a.x > b.x : a.x < b.x;
  }
  if (TYPE == T_I32) return greater ? int(a.x) > int(b.x) : int(a.x) < int(b.x);
  const float fa = uintBitsToFloat(a.x), fb = uintBitsToFloat(b.x);
  return greater ? fa > fb : fa < fb;
}

// whether (a, ia) comes before (b, ib): ir_topk_before_float / ir_topk_before_int
bool before(uvec2 a, uint ia, uvec2 b, uint ib, bool largest) {
  if (TYPE == T_F32 || TYPE == T_F16 || TYPE == T_BF16) {
    const bool na = is_nan(a.x), nb = is_nan(b.x);
    if (na || nb) return na && nb ? ia < ib : (largest ? na : nb);
  }
  if (ahead(a, b, largest)) return true;
  if (ahead(b, a, largest)) return false;
  return ia < ib; // equal (and -0 equals +0)
}

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const bool largest = pc.largest != 0u;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint c = e % pc.inner, j = e / pc.inner % pc.len, o = e / (pc.inner * pc.len);
    const uint base = o * pc.len * pc.inner + c;
    const uvec2 v = load_bits(base + j * pc.inner);
    uint rank = 0u;
    for (uint m = 0u; m < pc.len && rank < pc.k; m++)
      if (m != j && before(load_bits(base + m * pc.inner), m, v, j, largest)) rank++;
    if (rank >= pc.k) continue;
    const uint dst = (o * pc.k + rank) * pc.inner + c;
    store_value(dst, base + j * pc.inner);
    B64(pc.indices_addr).v[dst] = uvec2(j, 0u);
  }
}
