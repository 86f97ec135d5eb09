// gfxep Vulkan backend — an element of the shader's type to float32 and back, for the shaders that
// compute in float32 whatever they load: include it after ELEM is defined. With -DT_BF16, ELEM is a
// 16-bit word holding a bfloat16: widened exactly, rounded to nearest even as src/core/half.h does
// (half_bits.glsl). Otherwise ELEM is float or float16_t and the conversions are the constructors.
// Macros, not functions: a float16_t parameter would need float16 arithmetic, which a shader may not
// ask for (16-bit storage is enough for loads and stores).
#if defined(T_BF16)
#include "half_bits.glsl"
#define elem_to_f(e) uintBitsToFloat(uint(e) << 16)
#define f_to_elem(v) ELEM(f32_to_bf16_bits(floatBitsToUint(v)))
#else
#define elem_to_f(e) float(e)
#define f_to_elem(v) ELEM(v)
#endif
