// gfxep Vulkan backend — Where: out = cond ? x : y with numpy broadcasting of all three (vk_misc.c),
// as ref_run_where (src/backend/ref/ref_elementwise.c) does it.
//
// One source, compiled per element size (-DELEM_SIZE=1, 2, 4 or 8): x and y move as bits, so every
// element type is exact; 8-byte elements move as uvec2 (no shaderInt64 needed). cond is bool bytes.
// With a geometry block (by address) each input has an element stride per output dim, 0 where it
// is broadcast; without one (geom_addr 0) every input has the output's shape. 32-bit indices:
// tensors below 2^32 elements (vk_misc.c refuses larger ones).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
// 1- and 2-byte elements are widened to uint between load and store: storage access alone
// (no shaderInt8 / shaderInt16 arithmetic) allows only conversions of the narrow types
#if ELEM_SIZE == 1
#define ELEM uint8_t
#define WIDE uint
#elif ELEM_SIZE == 2
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define WIDE uint
#elif ELEM_SIZE == 4
#define ELEM uint
#define WIDE uint
#else
#define ELEM uvec2
#define WIDE uvec2
#endif

#define MAX_RANK 8
layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 cond_addr, x_addr, y_addr, out_addr, geom_addr;
  uint count;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Geom {
  uint rank;
  uint dims[MAX_RANK];
  uint strides[3 * MAX_RANK]; // cond's, x's, y's
};
layout(buffer_reference, std430, buffer_reference_align = 1) readonly buffer Cond { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Dst { ELEM v[]; };

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const bool strided = pc.geom_addr != uvec2(0);
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    uint oc = e, ox = e, oy = e;
    if (strided) {
      Geom g = Geom(pc.geom_addr);
      uint rest = e;
      oc = ox = oy = 0u;
      for (int k = int(g.rank) - 1; k >= 0; k--) {
        const uint n = g.dims[k];
        const uint i = rest % n;
        rest /= n;
        oc += i * g.strides[k];
        ox += i * g.strides[MAX_RANK + k];
        oy += i * g.strides[2 * MAX_RANK + k];
      }
    }
    const bool pick_x = uint(Cond(pc.cond_addr).v[oc]) != 0u;
    const WIDE v = pick_x ? WIDE(Src(pc.x_addr).v[ox]) : WIDE(Src(pc.y_addr).v[oy]);
    Dst(pc.out_addr).v[e] = ELEM(v);
  }
}
