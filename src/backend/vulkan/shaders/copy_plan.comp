// gfxep Vulkan backend — the layout ops' strided copy plan (ir/layout.h): Transpose, Slice, Pad, Tile,
// Expand, and each input of Concat / output of Split.
//
// One source, compiled once per element size (-DELEM_SIZE=1, 2, 4 or 8): elements are moved as
// bits, so every element type is exact. The plan (box dims, destination strides, source start /
// step / extent / strides, the out-of-range mode and the constant) is read by device address; each
// invocation walks the box with a grid stride and 64-bit index arithmetic (tensors below 2^32
// elements).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if ELEM_SIZE == 1
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define ELEM uint8_t
#elif ELEM_SIZE == 2
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define ELEM uint16_t
#elif ELEM_SIZE == 4
#define ELEM uint
#else
#define ELEM uint64_t
#endif

#define MAX_RANK 8
// ir_pad_mode's values (ir/graph.h)
#define MODE_CONSTANT 0
#define MODE_EDGE 1
#define MODE_REFLECT 2
#define MODE_WRAP 3

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 src_addr;
  uvec2 dst_addr;
  uvec2 plan_addr;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Plan {
  int rank;
  int mode;
  int64_t count;
  int64_t dst_offset;
  int64_t dims[MAX_RANK];
  int64_t dst_strides[MAX_RANK];
  int64_t src_extent[MAX_RANK];
  int64_t src_start[MAX_RANK];
  int64_t src_step[MAX_RANK];
  int64_t src_strides[MAX_RANK];
  uint64_t value; // the constant's bits, in the low ELEM_SIZE bytes
};
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Dst { ELEM v[]; };

// c mod n in [0, n) for any sign of c: GLSL leaves % undefined for negative operands (NVIDIA's
// driver and lavapipe differ), so it is only applied to non-negative values here.
int64_t pos_mod(int64_t c, int64_t n) {
  if (c >= 0) return c % n;
  int64_t k = (-c) % n;
  return k == 0 ? 0 : n - k;
}

// ir_resolve_coord (ir/layout.h) in GLSL: a source coordinate outside [0, n) by the plan's mode,
// -1 for the constant. Kept step for step with the C definition, which the other backends share.
int64_t resolve(int64_t c, int64_t n, int mode) {
  if (c >= 0 && c < n) return c;
  if (mode == MODE_EDGE) return c < 0 ? 0 : n - 1;
  if (mode == MODE_REFLECT) {
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    int64_t m = pos_mod(c, period);
    return m < n ? m : period - m;
  }
  if (mode == MODE_WRAP) return pos_mod(c, n);
  return -1;
}

void main() {
  Plan p = Plan(pc.plan_addr);
  Src src = Src(pc.src_addr);
  Dst dst = Dst(pc.dst_addr);
  const int rank = p.rank;
  const int mode = p.mode;
  const int64_t count = p.count;
  const ELEM constant = ELEM(p.value);
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t linear = int64_t(gl_GlobalInvocationID.x); linear < count; linear += step) {
    int64_t rest = linear, s = 0, d = p.dst_offset;
    bool outside = false;
    for (int k = rank - 1; k >= 0; k--) {
      const int64_t n = p.dims[k];
      const int64_t i = rest % n;
      rest /= n;
      d += i * p.dst_strides[k];
      const int64_t c = resolve(p.src_start[k] + i * p.src_step[k], p.src_extent[k], mode);
      if (c < 0) outside = true;
      else s += c * p.src_strides[k];
    }
    dst.v[uint(d)] = outside ? constant : src.v[uint(s)];
  }
}
