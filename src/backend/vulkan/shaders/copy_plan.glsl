// gfxep Vulkan backend — what the copy-plan shaders share (copy_plan.comp, transpose.comp): the
// element type of -DELEM_SIZE (moved as bits), the plan block (ir/layout.h's ir_copy_plan, as
// vk_layout.c's gpu_plan lays it out) and division by a divisor known at run time.
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
#elif ELEM_SIZE == 8
#define ELEM uint64_t
#else
#define ELEM uvec4
#endif

#define MAX_RANK 8
// ir_pad_mode's values (ir/graph.h)
#define MODE_CONSTANT 0
#define MODE_EDGE 1
#define MODE_REFLECT 2
#define MODE_WRAP 3

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Plan {
  int rank;
  int mode;
  int64_t count;
  int64_t dst_offset;
  int64_t src_offset;
  int64_t dims[MAX_RANK];
  int64_t dst_strides[MAX_RANK];
  int64_t src_extent[MAX_RANK];
  int64_t src_start[MAX_RANK];
  int64_t src_step[MAX_RANK];
  int64_t src_strides[MAX_RANK];
  uint64_t value; // the constant's bits, in the low ELEM_SIZE bytes
  uint div_mul[MAX_RANK], div_shift[MAX_RANK]; // each dim as a divisor (vk_fastdiv.h)
};

// n / d by the divisor's multiplier and shift: vk_fastdiv_apply (vk_fastdiv.h), step for step. A
// division by a divisor known only at run time costs some twenty instructions, four per element here.
uint fast_div(uint n, uint d, uint mul, uint shift) {
  if (d == 1u) return n;
  uint hi, lo;
  umulExtended(n, mul, hi, lo);
  return (hi + ((n - hi) >> 1u)) >> shift;
}
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Dst { ELEM v[]; };
