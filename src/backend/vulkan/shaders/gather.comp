// gfxep Vulkan backend — Gather (vk_layout.c): out[o, j, i] = data[o, idx[j], i] over the IR's
// [outer, n_indices, inner] view (ir_gather_geometry, src/ir/layout.h), as ref_layout.c's run_gather.
//
// One source per element size (-DELEM_SIZE=1, 2, 4 or 8; elements move as bits, 8-byte ones as
// uvec2); the index type (int32, or int64 read as two 32-bit words: no shaderInt64 needed) is a
// specialization constant. Negative indices count from the end. An index outside [-axis_dim,
// axis_dim) cannot be reported from a shader: its entries are written as zeros (all bits 0), never
// read or written out of bounds. vk_layout.c checks constant indices on the host instead (such a
// node is declined, so ONNX Runtime reports the error). 32-bit indices: tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if ELEM_SIZE == 1
#define ELEM uint8_t
#define WIDE uint
#elif ELEM_SIZE == 2
#define ELEM uint16_t
#define WIDE uint
#elif ELEM_SIZE == 4
#define ELEM uint
#define WIDE uint
#else
#define ELEM uvec2
#define WIDE uvec2
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const int IDX64 = 0;

layout(push_constant) uniform Push {
  uvec2 data_addr, idx_addr, out_addr;
  uint count, n_indices, inner, axis_dim;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Idx32 { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Idx64 { uvec2 v[]; }; // (low, high)
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Out { ELEM v[]; };

// The entry along the axis that index j names, or false when it is outside [-axis_dim, axis_dim).
bool resolve(uint j, out uint k) {
  const uint n = pc.axis_dim; // below 2^31 (vk_layout.c)
  k = 0u;
  if (IDX64 != 0) {
    const uvec2 w = Idx64(pc.idx_addr).v[j];
    if (w.y == 0u && w.x < n) { k = w.x; return true; }
    // negative: -n <= v < 0 is high word all ones and low word >= 2^32 - n
    if (n > 0u && w.y == 0xffffffffu && w.x >= 0u - n) { k = w.x + n; return true; }
    return false;
  }
  int v = Idx32(pc.idx_addr).v[j];
  if (v < 0) v += int(n);
  if (v < 0 || uint(v) >= n) return false;
  k = uint(v);
  return true;
}

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint i = e % pc.inner;
    const uint rest = e / pc.inner;
    const uint j = rest % pc.n_indices;
    const uint o = rest / pc.n_indices;
    uint k;
    WIDE v = WIDE(0);
    if (resolve(j, k)) v = WIDE(In(pc.data_addr).v[(o * pc.axis_dim + k) * pc.inner + i]);
    Out(pc.out_addr).v[e] = ELEM(v);
  }
}
