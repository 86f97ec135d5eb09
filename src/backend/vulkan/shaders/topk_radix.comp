// gfxep Vulkan backend — TopK of long lines (vk_topk.c): one workgroup per line of X (contiguous
// along the axis), float32, float16 (-DT_F16) or bfloat16 (-DT_BF16), k up to MAX_K. The output is topk.comp's, element
// for element: the k first elements in TopK's order (ir_topk_before_float: NaN as the largest value,
// -0 equal to +0, equal values by the lower index), values copied bit for bit, int64 indices.
//
// Each element gets a 32-bit key that orders as TopK does: the float's bits made order-preserving
// (NaN the largest key, -0 as +0), inverted for the smallest. Then, per line:
//   1. radix selection: four 8-bit histogram passes, from the top digit down, find the k-th largest
//      key T and how many elements equal to T belong to the k (the rest of the k are above T);
//   2. in index order (chunks of 256 with prefix sums), every element above T and the first of those
//      equal to T go to a candidate list in shared memory: exactly k entries;
//   3. a bitonic sort of the candidates by key (descending), then index (ascending);
//   4. the k outputs written from the sorted list.
// So a line is read five times whatever k is, instead of once per output as topk.comp does.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

#include "half_bits.glsl"

#define GROUP 256
#define MAX_K 2048
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, values_addr, indices_addr;
  uint lines, len, k, largest, sort_n; // sort_n: the power of two >= k the sort runs over
} pc;

layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer B64 { uvec2 v[]; };

shared uint hist[256];
shared uint scan[GROUP];
shared uint cand_key[MAX_K];
shared uint cand_idx[MAX_K];
shared uint digit_info[2]; // the chosen digit, the count above it

// the float32 bits of element i
uint bits_at(uint i) {
#if defined(T_F16)
  return f16_to_f32_bits(uint(B16(pc.x_addr).v[i]));
#elif defined(T_BF16)
  return uint(B16(pc.x_addr).v[i]) << 16;
#else
  return B32(pc.x_addr).v[i];
#endif
}

// the order-preserving key of a float's bits: NaN largest, -0 as +0, inverted for the smallest
uint key_of(uint u) {
  uint key;
  if ((u & 0x7fffffffu) > 0x7f800000u) key = 0xffffffffu;
  else if ((u & 0x7fffffffu) == 0u) key = 0x80000000u;
  else key = (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
  return pc.largest != 0u ? key : ~key;
}

// the inclusive prefix sum of v over the workgroup; uniform control flow
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

// whether candidate a comes after candidate b (key descending, then index ascending)
bool after(uint ka, uint ia, uint kb, uint ib) { return ka < kb || (ka == kb && ia > ib); }

void main() {
  const uint t = gl_LocalInvocationID.x, len = pc.len, k = pc.k;
  for (uint line = gl_WorkGroupID.x; line < pc.lines; line += gl_NumWorkGroups.x) {
    const uint base = line * len;
    // 1. radix selection of the k-th largest key
    uint prefix = 0u, mask = 0u, need = k;
    for (int d = 3; d >= 0; d--) {
      hist[t] = 0u;
      barrier();
      const uint shift = uint(d) * 8u;
      for (uint i = t; i < len; i += GROUP) {
        const uint key = key_of(bits_at(base + i));
        if ((key & mask) == prefix) atomicAdd(hist[(key >> shift) & 0xffu], 1u);
      }
      barrier();
      if (t == 0u) {
        uint above = 0u, b = 255u;
        for (;; b--) {
          if (above + hist[b] >= need || b == 0u) break;
          above += hist[b];
        }
        digit_info[0] = b;
        digit_info[1] = above;
      }
      barrier();
      prefix |= digit_info[0] << shift;
      mask |= 0xffu << shift;
      need -= digit_info[1];
      barrier();
    }
    // prefix is the k-th largest key T; `need` elements equal to T belong to the k
    // 2. the candidates, in index order
    uint taken = 0u, ties = 0u;
    for (uint c0 = 0u; c0 < len; c0 += GROUP) {
      const uint i = c0 + t;
      const uint key = i < len ? key_of(bits_at(base + i)) : 0u;
      const bool tie = i < len && key == prefix;
      const uint tie_incl = inclusive_sum(tie ? 1u : 0u);
      const bool pick = i < len && (key > prefix || (tie && ties + tie_incl <= need));
      const uint pick_incl = inclusive_sum(pick ? 1u : 0u);
      if (pick) {
        cand_key[taken + pick_incl - 1u] = key;
        cand_idx[taken + pick_incl - 1u] = i;
      }
      if (t == GROUP - 1) {
        scan[0] = pick_incl;
        scan[1] = tie_incl;
      }
      barrier();
      taken += scan[0];
      ties += scan[1];
      barrier();
    }
    // 3. bitonic sort of the k candidates, padded to sort_n with entries that sort last
    for (uint i = k + t; i < pc.sort_n; i += GROUP) {
      cand_key[i] = 0u;
      cand_idx[i] = 0xffffffffu;
    }
    barrier();
    for (uint size = 2u; size <= pc.sort_n; size <<= 1u) {
      for (uint stride = size >> 1u; stride > 0u; stride >>= 1u) {
        for (uint i = t; i < pc.sort_n; i += GROUP) {
          const uint j = i ^ stride;
          if (j > i) {
            const bool ascending_block = (i & size) != 0u; // this block sorts the other way
            const uint ki = cand_key[i], kj = cand_key[j], ii = cand_idx[i], ij = cand_idx[j];
            const bool swap = ascending_block ? after(kj, ij, ki, ii) : after(ki, ii, kj, ij);
            if (swap) {
              cand_key[i] = kj;
              cand_key[j] = ki;
              cand_idx[i] = ij;
              cand_idx[j] = ii;
            }
          }
        }
        barrier();
      }
    }
    // 4. the outputs
    for (uint r = t; r < k; r += GROUP) {
      const uint src = base + cand_idx[r], dst = line * k + r;
#if defined(T_F16) || defined(T_BF16)
      B16(pc.values_addr).v[dst] = B16(pc.x_addr).v[src];
#else
      B32(pc.values_addr).v[dst] = B32(pc.x_addr).v[src];
#endif
      B64(pc.indices_addr).v[dst] = uvec2(cand_idx[r], 0u);
    }
    barrier();
  }
}
