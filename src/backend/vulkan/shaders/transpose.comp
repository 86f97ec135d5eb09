// gfxep Vulkan backend — copy plans that transpose (vk_layout.c chooses them): the destination's
// innermost dim C is strided in the source, while another dim J is contiguous there, as in NCHW <->
// NHWC. copy_plan.comp would read such a plan one strided element per invocation, so a subgroup's
// reads touch as many memory segments as it has invocations. Here a workgroup moves a 32 x 32 tile of
// (J, C) through shared memory: read along J (contiguous in the source), written along C (contiguous
// in the destination), the tile's rows padded to 33 so that neither side meets bank conflicts. The
// other dims (at most 6) are walked by the z of the workgroup with a grid stride. Every coordinate
// stays inside the source (vk_layout.c checks), elements move as bits (-DELEM_SIZE=1, 2, 4 or 8).
#version 460
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "copy_plan.glsl"

#define TILE 32
#define ROWS 8

layout(local_size_x = TILE, local_size_y = ROWS) in;

layout(push_constant) uniform Push {
  uvec2 src_addr;
  uvec2 dst_addr;
  uvec2 plan_addr;
  uint j_dim;  // the plan dim contiguous in the source (src_strides[j_dim] == 1)
  uint others; // the product of the dims other than j_dim and the last
} pc;

shared ELEM tile[TILE][TILE + 1]; // [c][j]

void main() {
  Plan p = Plan(pc.plan_addr);
  Src src = Src(pc.src_addr);
  Dst dst = Dst(pc.dst_addr);
  const int rank = p.rank, last = rank - 1, jd = int(pc.j_dim);
  const uint n_c = uint(p.dims[last]), n_j = uint(p.dims[jd]);
  const uint c_stride = uint(p.src_strides[last]), j_stride = uint(p.dst_strides[jd]);
  const uint c0 = gl_WorkGroupID.x * TILE, j0 = gl_WorkGroupID.y * TILE;
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  for (uint o = gl_WorkGroupID.z; o < pc.others; o += gl_NumWorkGroups.z) {
    // the offsets of this slice of the other dims (32-bit: vk_layout.c checks the sizes)
    uint rest = o, s = uint(p.src_offset), d = uint(p.dst_offset);
    for (int k = last - 1; k >= 0; k--) {
      if (k == jd) continue;
      const uint n = uint(p.dims[k]), q = rest / n;
      s += (rest - q * n) * uint(p.src_strides[k]);
      d += (rest - q * n) * uint(p.dst_strides[k]);
      rest = q;
    }
    [[unroll]] for (uint r = 0; r < TILE; r += ROWS) {
      const uint j = j0 + tx, c = c0 + ty + r;
      if (j < n_j && c < n_c) tile[ty + r][tx] = src.v[s + j + c * c_stride];
    }
    barrier();
    [[unroll]] for (uint r = 0; r < TILE; r += ROWS) {
      const uint c = c0 + tx, j = j0 + ty + r;
      if (j < n_j && c < n_c) dst.v[d + c + j * j_stride] = tile[tx][ty + r];
    }
    barrier(); // the tile is read before the next slice writes it
  }
}
