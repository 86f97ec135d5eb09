// gfxep Vulkan backend — NonZero as a bounded node (vk_select.c): the int64 coordinates [rows, numel]
// of the nonzero elements in row-major order, and their count, as the reference backend writes them
// (ref_select.c). Three passes over chunks of CHUNK elements, one workgroup per chunk (phase, a push
// constant):
//   0  each chunk counts its nonzero elements into scratch (uint32 per chunk);
//   1  one workgroup turns the counts into exclusive prefix sums in place and writes the total, the
//      node's count (int64);
//   2  each chunk writes the coordinates of its nonzero elements from its prefix on, in order.
// An element is nonzero when any bit of keep (the type's bits less a float's sign bit: -0.0 is zero,
// NaN is not) is set; -DELEM_SIZE (1, 2, 4 or 8 bytes) picks how elements are read. Tensors below 2^32
// elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if ELEM_SIZE == 1
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#elif ELEM_SIZE == 2
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif

#define GROUP 256
#define ROUNDS 16
#define CHUNK (GROUP * ROUNDS)
#define MAX_RANK 8
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, y_addr, count_addr, chunk_addr;
  uint numel, chunks, phase, rank;
  uint keep_lo, keep_hi; // the bits that make an element nonzero (keep_hi: of 8-byte elements)
  uint dims[MAX_RANK];
} pc;

#if ELEM_SIZE == 1
layout(buffer_reference, std430, buffer_reference_align = 1) readonly buffer In { uint8_t v[]; };
bool nonzero(uint e) { return (uint(In(pc.x_addr).v[e]) & pc.keep_lo) != 0u; }
#elif ELEM_SIZE == 2
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer In { uint16_t v[]; };
bool nonzero(uint e) { return (uint(In(pc.x_addr).v[e]) & pc.keep_lo) != 0u; }
#elif ELEM_SIZE == 4
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer In { uint v[]; };
bool nonzero(uint e) { return (In(pc.x_addr).v[e] & pc.keep_lo) != 0u; }
#else
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer In { uvec2 v[]; };
bool nonzero(uint e) {
  const uvec2 w = In(pc.x_addr).v[e];
  return ((w.x & pc.keep_lo) | (w.y & pc.keep_hi)) != 0u;
}
#endif
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Chunks { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Coords { int64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Count { int64_t v; };

shared uint scan[GROUP];

// The inclusive prefix sum of v over the workgroup (Hillis-Steele in shared memory). Called in
// uniform control flow; leaves scan[] free for the next call.
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

// The sum of v over the workgroup, for every invocation.
uint total_sum(uint v) {
  const uint incl = inclusive_sum(v);
  if (gl_LocalInvocationID.x == GROUP - 1) scan[0] = incl;
  barrier();
  const uint r = scan[0];
  barrier();
  return r;
}

void main() {
  const uint t = gl_LocalInvocationID.x, chunk = gl_WorkGroupID.x;
  Chunks counts = Chunks(pc.chunk_addr);
  if (pc.phase == 0u) {
    uint n = 0u;
    for (uint r = 0u; r < ROUNDS; r++) {
      const uint e = chunk * CHUNK + r * GROUP + t;
      if (e < pc.numel && nonzero(e)) n++;
    }
    const uint total = total_sum(n);
    if (t == 0u) counts.v[chunk] = total;
  } else if (pc.phase == 1u) {
    uint carry = 0u;
    for (uint t0 = 0u; t0 < pc.chunks; t0 += GROUP) {
      const uint i = t0 + t;
      const uint x = i < pc.chunks ? counts.v[i] : 0u;
      const uint incl = inclusive_sum(x);
      if (i < pc.chunks) counts.v[i] = carry + incl - x;
      if (t == GROUP - 1) scan[0] = incl;
      barrier();
      carry += scan[0];
      barrier();
    }
    if (t == 0u) Count(pc.count_addr).v = int64_t(carry);
  } else {
    uint at = counts.v[chunk];
    Coords y = Coords(pc.y_addr);
    for (uint r = 0u; r < ROUNDS; r++) {
      const uint e = chunk * CHUNK + r * GROUP + t;
      const bool hit = e < pc.numel && nonzero(e);
      const uint incl = inclusive_sum(hit ? 1u : 0u);
      if (hit) {
        const uint pos = at + incl - 1u;
        if (pc.rank == 0u) {
          y.v[pos] = 0l;
        } else {
          uint rest = e;
          for (int d = int(pc.rank) - 1; d >= 0; d--) {
            y.v[uint(d) * pc.numel + pos] = int64_t(rest % pc.dims[d]);
            rest /= pc.dims[d];
          }
        }
      }
      if (t == GROUP - 1) scan[0] = incl;
      barrier();
      at += scan[0];
      barrier();
    }
  }
}
