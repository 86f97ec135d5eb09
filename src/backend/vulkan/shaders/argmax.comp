// gfxep Vulkan backend — ArgMax / ArgMin over one axis (vk_reduce.c): one invocation per output
// element (grid-stride) walks the axis and writes the int64 index of the first extreme, or with
// select_last the last; a NaN never compares better (the reference backend's rule). -DT_F16 reads
// float16, -DT_BF16 bfloat16 (as 16-bit words, widened exactly). The Geom block is vk_reduce.c's reduce_geom_gpu: the kept dims locate the row, the one
// reduced dim (absent when its size is 1) steps along it. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define ELEM_ALIGN 2
#define elem_to_f(e) float(e)
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define ELEM uint16_t
#define ELEM_ALIGN 2
#define elem_to_f(e) uintBitsToFloat(uint(e) << 16) // exact
#else
#define ELEM float
#define ELEM_ALIGN 4
#define elem_to_f(e) float(e)
#endif

#define MAX_RANK 8
#define R_ARGMAX 7 // ir_reduce_kind (ir/graph.h)

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, scale_addr, bias_addr, y_addr, geom_addr;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t out_count, reduce_count;
  int kind, n_kept, n_red, select_last;
  int64_t kept_dims[MAX_RANK], kept_strides[MAX_RANK];
  int64_t red_dims[MAX_RANK], red_strides[MAX_RANK];
};
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Out { int64_t v[]; };

void main() {
  Geom g = Geom(pc.geom_addr);
  In x = In(pc.x_addr);
  // the geometry in registers once: loads through a buffer reference may alias the output store
  const int64_t count = g.out_count, n = g.reduce_count;
  const int n_kept = g.n_kept;
  const bool is_max = g.kind == R_ARGMAX, last = g.select_last != 0;
  const uint step = g.n_red > 0 ? uint(g.red_strides[0]) : 0u;
  uint dims[MAX_RANK], strides[MAX_RANK];
  for (int d = 0; d < MAX_RANK; d++) {
    dims[d] = d < n_kept ? uint(g.kept_dims[d]) : 1u;
    strides[d] = d < n_kept ? uint(g.kept_strides[d]) : 0u;
  }
  for (int64_t o = int64_t(gl_GlobalInvocationID.x); o < count; o += int64_t(gl_NumWorkGroups.x) * 256) {
    uint rest = uint(o), base = 0u;
    for (int d = MAX_RANK - 1; d >= 0; d--) {
      base += (rest % dims[d]) * strides[d];
      rest /= dims[d];
    }
    float best = elem_to_f(x.v[base]);
    int64_t best_i = 0;
    uint at = base;
    for (int64_t r = 1; r < n; r++) {
      at += step;
      const float v = elem_to_f(x.v[at]);
      const bool better = is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (better) {
        best = v;
        best_i = r;
      }
    }
    Out(pc.y_addr).v[uint(o)] = best_i;
  }
}
