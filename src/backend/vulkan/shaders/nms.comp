// gfxep Vulkan backend — NonMaxSuppression as a bounded node (vk_select.c): per (batch, class)
// segment, the boxes above score_threshold in ORT's order (higher score first, ties to the lower
// index, NaN last: ir_nms_before) that no kept box overlaps by more than iou_threshold, at most `cap`,
// as int64 rows [batch, class, box]; output 1 the row count. The boxes and the overlap test are ORT's
// float32 arithmetic operation for operation (ir/ops_select.h): every product and sum `precise` (no
// fused multiply-add), the overlap's division rounded as IEEE rounds it (div_rn.glsl), so that an
// overlap at the threshold decides as on ONNX Runtime's CPU EP.
//
// Phases (a push constant), one dispatch each:
//   0  the candidate counts to zero;
//   1  each candidate (score above the threshold) ranked by counting the candidates before it:
//      order[rank] = box, and the segment's candidate count;
//   2  the ranked candidates' boxes as ORT keeps them ([y_min, x_min, y_max, x_max]) and areas;
//   3  one workgroup per segment walks the candidates in rank order: a candidate no kept box removed
//      is kept, and its invocations mark every later candidate it suppresses (a bit set in shared
//      memory), until cap are kept;
//   4  one workgroup: each segment's row offset (exclusive prefix sums of the kept counts) and the
//      total, the node's count;
//   5  one workgroup per segment writes its rows.
// -DT_F16 / -DT_BF16 read float16 / bfloat16 boxes and scores (float32 otherwise). Scratch (uint
// words, vk_select.c's nms_scratch_words): boxes (4 per candidate), areas, order, kept, then per
// segment the candidate count, the kept count and the row offset.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if defined(T_F16) || defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#extension GL_GOOGLE_include_directive : require

#include "div_rn.glsl"

#define GROUP 256
#define MAX_BOXES 65536 // candidates per segment the shared removal bits hold
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 boxes_addr, scores_addr, y_addr, count_addr, scratch_addr;
  uint segments, n, classes, cap;
  uint phase, center, has_score_threshold, pad0;
  float iou_threshold, score_threshold;
} pc;

#if defined(T_F16)
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer Elems { float16_t v[]; };
float load(uvec2 a, uint i) { return float(Elems(a).v[i]); }
#elif defined(T_BF16)
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer Elems { uint16_t v[]; };
float load(uvec2 a, uint i) { return uintBitsToFloat(uint(Elems(a).v[i]) << 16); }
#else
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Elems { float v[]; };
float load(uvec2 a, uint i) { return Elems(a).v[i]; }
#endif
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Words { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Boxes { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Rows { int64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Count { int64_t v; };

// the scratch regions, in uint words from its start
uint sn() { return pc.segments * pc.n; }
uint at_area() { return 4u * sn(); }
uint at_order() { return 5u * sn(); }
uint at_kept() { return 6u * sn(); }
uint at_cand_count() { return 6u * sn() + pc.segments * pc.cap; }
uint at_kept_count() { return at_cand_count() + pc.segments; }
uint at_offset() { return at_kept_count() + pc.segments; }

bool is_candidate(float s) { return pc.has_score_threshold == 0u || s > pc.score_threshold; }

// ir_nms_before: (sa, a) is taken before (sb, b)
bool before(float sa, uint a, float sb, uint b) {
  const bool na = isnan(sa), nb = isnan(sb);
  if (na || nb) return na && nb ? a < b : nb;
  if (sa != sb) return sa > sb;
  return a < b;
}

// std::max / std::min as ORT calls them
float ort_max(float a, float b) { return a < b ? b : a; }
float ort_min(float a, float b) { return b < a ? b : a; }

// ir_nms_box: xyzw = y_min, x_min, y_max, x_max
void nms_box(vec4 c, out vec4 box, out float area) {
  if (pc.center == 0u) {
    box.y = c.y >= c.w ? c.w : c.y;
    box.w = c.y >= c.w ? c.y : c.w;
    box.x = c.x >= c.z ? c.z : c.x;
    box.z = c.x >= c.z ? c.x : c.z;
    precise float h = box.z - box.x, w = box.w - box.y;
    precise float a = h * w;
    area = a;
  } else {
    precise float half_w = c.z * 0.5, half_h = c.w * 0.5; // x / 2, exactly
    precise float a = c.z * c.w;
    area = a;
    precise float x0 = c.x - half_w, x1 = c.x + half_w, y0 = c.y - half_h, y1 = c.y + half_h;
    box = vec4(y0, x0, y1, x1);
  }
}

// ir_nms_suppresses(a = the candidate, b = the kept box)
bool suppresses(vec4 a, float area_a, vec4 b, float area_b) {
  const float x_min = ort_max(a.y, b.y), x_max = ort_min(a.w, b.w);
  if (x_max <= x_min) return false;
  const float y_min = ort_max(a.x, b.x), y_max = ort_min(a.z, b.z);
  if (y_max <= y_min) return false;
  precise float w = x_max - x_min, h = y_max - y_min;
  precise float inter = w * h;
  if (inter <= 0.0) return false;
  precise float sum = area_a + area_b;
  precise float uni = sum - inter;
  return div_rn(inter, uni) > pc.iou_threshold;
}

shared uint removed[MAX_BOXES / 32];
shared uint scan[GROUP];

uint inclusive_sum(uint v) {
  const uint t = gl_LocalInvocationID.x;
  scan[t] = v;
  barrier();
  for (uint off = 1u; off < GROUP; off <<= 1u) {
    const uint add = t >= off ? scan[t - off] : 0u;
    barrier();
    scan[t] += add;
    barrier();
  }
  const uint r = scan[t];
  barrier();
  return r;
}

void main() {
  Words w = Words(pc.scratch_addr);
  Boxes sbox = Boxes(pc.scratch_addr);
  const uint t = gl_LocalInvocationID.x, n = pc.n;
  const uint stride = gl_NumWorkGroups.x * GROUP;
  const uint first = gl_WorkGroupID.x * GROUP + t;
  if (pc.phase == 0u) {
    for (uint s = first; s < pc.segments; s += stride) w.v[at_cand_count() + s] = 0u;
  } else if (pc.phase == 1u) {
    for (uint idx = first; idx < sn(); idx += stride) {
      const uint seg = idx / n, i = idx % n;
      const float si = load(pc.scores_addr, idx);
      if (!is_candidate(si)) continue;
      uint rank = 0u;
      for (uint j = 0u; j < n; j++) {
        const float sj = load(pc.scores_addr, seg * n + j);
        if (is_candidate(sj) && before(sj, j, si, i)) rank++;
      }
      w.v[at_order() + seg * n + rank] = i;
      atomicAdd(w.v[at_cand_count() + seg], 1u);
    }
  } else if (pc.phase == 2u) {
    for (uint idx = first; idx < sn(); idx += stride) {
      const uint seg = idx / n, r = idx % n;
      if (r >= w.v[at_cand_count() + seg]) continue;
      const uint i = w.v[at_order() + idx], b = seg / pc.classes, at = (b * n + i) * 4u;
      const vec4 c = vec4(load(pc.boxes_addr, at), load(pc.boxes_addr, at + 1u), load(pc.boxes_addr, at + 2u),
                          load(pc.boxes_addr, at + 3u));
      vec4 box;
      float area;
      nms_box(c, box, area);
      sbox.v[idx] = box;
      w.v[at_area() + idx] = floatBitsToUint(area);
    }
  } else if (pc.phase == 3u) {
    for (uint seg = gl_WorkGroupID.x; seg < pc.segments; seg += gl_NumWorkGroups.x) {
      const uint m = w.v[at_cand_count() + seg], base = seg * n;
      for (uint k = t; k < (m + 31u) / 32u; k += GROUP) removed[k] = 0u;
      barrier();
      uint kept = 0u; // the same in every invocation
      for (uint r = 0u; r < m && kept < pc.cap; r++) {
        if ((removed[r >> 5] & (1u << (r & 31u))) == 0u) {
          if (t == 0u) w.v[at_kept() + seg * pc.cap + kept] = w.v[at_order() + base + r];
          kept++;
          const vec4 kb = sbox.v[base + r];
          const float ka = uintBitsToFloat(w.v[at_area() + base + r]);
          if (kept < pc.cap)
            for (uint j = r + 1u + t; j < m; j += GROUP)
              if ((removed[j >> 5] & (1u << (j & 31u))) == 0u &&
                  suppresses(sbox.v[base + j], uintBitsToFloat(w.v[at_area() + base + j]), kb, ka))
                atomicOr(removed[j >> 5], 1u << (j & 31u));
        }
        barrier();
      }
      if (t == 0u) w.v[at_kept_count() + seg] = kept;
      barrier();
    }
  } else if (pc.phase == 4u) {
    uint carry = 0u;
    for (uint s0 = 0u; s0 < pc.segments; s0 += GROUP) {
      const uint s = s0 + t;
      const uint x = s < pc.segments ? w.v[at_kept_count() + s] : 0u;
      const uint incl = inclusive_sum(x);
      if (s < pc.segments) w.v[at_offset() + s] = carry + incl - x;
      if (t == GROUP - 1) scan[0] = incl;
      barrier();
      carry += scan[0];
      barrier();
    }
    if (t == 0u) Count(pc.count_addr).v = int64_t(carry);
  } else {
    Rows y = Rows(pc.y_addr);
    for (uint seg = gl_WorkGroupID.x; seg < pc.segments; seg += gl_NumWorkGroups.x) {
      const uint at = w.v[at_offset() + seg], kept = w.v[at_kept_count() + seg];
      for (uint k = t; k < kept; k += GROUP) {
        const uint row = (at + k) * 3u;
        y.v[row] = int64_t(seg / pc.classes);
        y.v[row + 1u] = int64_t(seg % pc.classes);
        y.v[row + 2u] = int64_t(w.v[at_kept() + seg * pc.cap + k]);
      }
    }
  }
}
