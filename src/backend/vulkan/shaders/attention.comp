// gfxep Vulkan backend — Attention (vk_attention.c): softmax(scale * Q Kᵀ + masks) V per query row,
// for the Attention op as parsed and as fused (ir/fuse_attention.c: Q, K, V and Y read and written
// through strided views, up to two float masks with broadcast strides).
//
// One workgroup per query row (grid-stride over the rows of every batch and head), as the CUDA row
// kernel: the scores of all keys into the workgroup's row of scratch, their maximum, the exponentials
// and their sum, then the weighted sum of V, every sum in float32. A key hidden by causality or a
// false bool mask, or whose score is NaN, is marked NaN and adds nothing; a row with no key left (all
// hidden, or -inf everywhere) is zeros, as the reference backend and ONNX Runtime give. -DT_F16 reads
// and writes float16, -DT_BF16 bfloat16 (float32 otherwise); a bool mask is read as bytes. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_GOOGLE_include_directive : require
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
#include "elem_convert.glsl"

#define GROUP 256
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 q_addr, k_addr, v_addr, mask_addr, mask2_addr, y_addr, scores_addr, geom_addr;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) readonly buffer Bools { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer Scores { float v[]; };

// vk_attention.c's attention_geom_gpu: sizes, the element strides of Q, K, V, Y and the masks over
// [batch, head, position, element] ([batch, q head, query, key] for the masks; 0 broadcasts)
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Geom {
  uint batch, q_heads, group, q_seq;
  uint kv_seq, head_size, v_head_size, rows;
  uint mask_kind, has_mask2, is_causal;  // mask_kind 0 none, 1 bool, 2 float
  float scale;
  uint q_stride[4], k_stride[4], v_stride[4], y_stride[4], mask_stride[4], mask2_stride[4];
};


shared float red[GROUP];

// v combined over the workgroup (max or sum), in every invocation; uniform control flow.
float group_reduce(float v, bool is_max) {
  const uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = GROUP / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = is_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}

uint at4(uint stride[4], uint a, uint b, uint c, uint d) { return a * stride[0] + b * stride[1] + c * stride[2] + d * stride[3]; }

// scale * q.k plus the float masks, or NaN for a hidden key
float score(Geom g, uint b, uint h, uint i, uint j) {
  if (g.is_causal != 0u && j > i) return uintBitsToFloat(0x7fc00000u);
  float bias = 0.0;
  if (g.mask_kind != 0u) {
    const uint at = at4(g.mask_stride, b, h, i, j);
    if (g.mask_kind == 1u) {
      if (Bools(pc.mask_addr).v[at] == uint8_t(0)) return uintBitsToFloat(0x7fc00000u);
    } else {
      bias = elem_to_f(In(pc.mask_addr).v[at]);
    }
  }
  if (g.has_mask2 != 0u) bias += elem_to_f(In(pc.mask2_addr).v[at4(g.mask2_stride, b, h, i, j)]);
  In q = In(pc.q_addr);
  In k = In(pc.k_addr);
  const uint qr = at4(g.q_stride, b, h, i, 0u);
  const uint kr = at4(g.k_stride, b, h / g.group, j, 0u);
  const uint qs = g.q_stride[3], ks = g.k_stride[3], n = g.head_size;
  float dot = 0.0;
  for (uint e = 0u; e < n; e++) dot += elem_to_f(q.v[qr + e * qs]) * elem_to_f(k.v[kr + e * ks]);
  return dot * g.scale + bias;
}

void main() {
  Geom g = Geom(pc.geom_addr);
  const uint t = gl_LocalInvocationID.x, kv = g.kv_seq;
  Scores s = Scores(pc.scores_addr);
  const uint base = gl_WorkGroupID.x * kv; // this workgroup's row of scores
  for (uint row = gl_WorkGroupID.x; row < g.rows; row += gl_NumWorkGroups.x) {
    const uint i = row % g.q_seq, h = row / g.q_seq % g.q_heads, b = row / (g.q_seq * g.q_heads);
    float mx = uintBitsToFloat(0xff800000u), open = 0.0; // -inf
    for (uint j = t; j < kv; j += GROUP) {
      const float sc = score(g, b, h, i, j);
      s.v[base + j] = sc;
      if (!isnan(sc)) {
        mx = max(mx, sc);
        open += 1.0;
      }
    }
    mx = group_reduce(mx, true);
    open = group_reduce(open, false);
    const bool none = open == 0.0 || isinf(mx) && mx < 0.0;
    float sum = 0.0;
    for (uint j = t; j < kv; j += GROUP) {
      const float sc = s.v[base + j];
      const float w = none || isnan(sc) ? 0.0 : exp(sc - mx);
      s.v[base + j] = w;
      sum += w;
    }
    sum = group_reduce(sum, false);
    memoryBarrierBuffer(); // every weight of the row is written before any is read below
    barrier();
    In v = In(pc.v_addr);
    const uint vb = at4(g.v_stride, b, h / g.group, 0u, 0u), yr = at4(g.y_stride, b, h, i, 0u);
    for (uint d = t; d < g.v_head_size; d += GROUP) {
      float acc = 0.0;
      for (uint j = 0u; j < kv; j++) acc += s.v[base + j] * elem_to_f(v.v[vb + j * g.v_stride[2] + d * g.v_stride[3]]);
      Out(pc.y_addr).v[yr + d * g.y_stride[3]] = f_to_elem(none ? 0.0 : acc / sum);
    }
    memoryBarrierBuffer(); // the next row overwrites the scores
    barrier();
  }
}
