/* gfxep Vulkan backend — the element-wise op codes, shared by elementwise.comp (GLSL, through
 * GL_GOOGLE_include_directive) and vk_elementwise.c (C): only #defines, so both languages read it.
 *
 * Codes below EW_FIRST_NARY are unary (one input); the others combine N_IN inputs. */
#ifndef GFXEP_VK_EW_OPS_H
#define GFXEP_VK_EW_OPS_H

#define EW_RELU 1
#define EW_LEAKY_RELU 2
#define EW_SIGMOID 3
#define EW_TANH 4
#define EW_HARD_SIGMOID 5
#define EW_HARD_SWISH 6
#define EW_CLIP 7
#define EW_ELU 8
#define EW_SELU 9
#define EW_GELU 10
#define EW_ERF 11
#define EW_SOFTPLUS 12
#define EW_SQRT 13
#define EW_EXP 14
#define EW_LOG 15
#define EW_NEG 16
#define EW_ABS 17
#define EW_RECIPROCAL 18
#define EW_FLOOR 19
#define EW_CEIL 20
#define EW_ROUND 21
#define EW_SIGN 22
#define EW_SIN 23
#define EW_COS 24
#define EW_SOFTSIGN 25
#define EW_MISH 26
#define EW_CELU 27
#define EW_THRESHOLDED_RELU 28

#define EW_FIRST_NARY 32
#define EW_ADD 32
#define EW_SUB 33
#define EW_MUL 34
#define EW_DIV 35
#define EW_POW 36
#define EW_MIN 37
#define EW_MAX 38
#define EW_SUM 39
#define EW_MEAN 40
#define EW_PRELU 41
#define EW_EQUAL 42
#define EW_GREATER 43
#define EW_LESS 44
#define EW_GREATER_OR_EQUAL 45
#define EW_LESS_OR_EQUAL 46

/* element type of Pow's exponent (specialization constant 2) */
#define EW_EXP_SAME 0
#define EW_EXP_F32 1
#define EW_EXP_I32 2
#define EW_EXP_I64 3

/* specialization constant ids */
#define EW_SPEC_OP 0
#define EW_SPEC_N_IN 1
#define EW_SPEC_EXP_TYPE 2
#define EW_SPEC_STRIDED 3
#define EW_SPEC_GELU_TANH 4
#define EW_SPEC_VEC 5 /* elements per invocation step: 1, or a 16-byte group's (elementwise.comp) */
#define EW_SPEC_COUNT 6

/* broadcasting geometry: at most this many dims and inputs */
#define EW_MAX_RANK 8
#define EW_MAX_IN 8
#define EW_GROUP_SIZE 256

#endif
