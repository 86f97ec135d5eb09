/* gfxep Vulkan backend — Conv, ConvTranspose, MatMul and Gemm.
 *
 * node_prepare resolves the geometry for the node's shapes (ir_conv_geometry, ir_matmul_geometry,
 * ir_gemm_geometry) into a small block of kernel constants the shader reads by address, and picks the
 * kernel; node_run records its dispatch (two with a split K). bfloat16 (16-bit words, float32 sums)
 * runs on the direct kernels. A 3-D Conv takes the same kernels as a 2-D one: on the block kernels
 * its tap table spans the depth too; on the direct kernel its depth is looped around the 2-D window.
 * float32 accumulation everywhere,
 * float32 and (with shaderFloat16 + 16-bit storage) float16 operands. Tensors of 2^32 elements or
 * more are refused at prepare (the shaders index with 32 bits). The direct kernels: a convolution
 * per output element (shaders/conv.comp) and a 16x16-tiled matrix product (shaders/gemm.comp).
 * Products (Conv as an implicit GEMM through a tap table per shape, MatMul, Gemm) big enough to fill
 * a block go to one of two block kernels that share their push constants, geometry blocks, a
 * convolution column's tap position, split K and epilogue (mm_common.glsl), each with its own operand
 * loads (mm_tiled.comp: mm_load.glsl; mm_coop.comp: mm_coop_load.glsl, 16-byte vectors and pairs):
 *  - float16 MatMul and Gemm where the device has cooperative matrices (has_coopmat): 16x16x16
 *    tensor-core tiles with float32 accumulation (shaders/mm_coop.comp, 128x128 output blocks, 64x128
 *    and 32x128 for few rows; use_coop); Conv too where it is a very large product (coop_conv_pays);
 *  - everywhere else, float32 and float16: a register-blocked tiled product (shaders/mm_tiled.comp,
 *    64x64 blocks, 4x4 outputs per invocation; use_tiled).
 * Products of few blocks and a long K (ResNet's last stages) split K over more workgroups on GPUs and
 * add the slices in shaders/mm_reduce.comp, through the node's scratch (choose_splits). Depthwise and
 * tiny products keep the direct kernels (GFXEP_VULKAN_NO_TILED=1 keeps them for every product the
 * tensor cores do not take).
 * ConvTranspose (shaders/conv_transpose.comp): a direct gathered kernel on ir_conv_transpose_geometry
 * (pads resolved from pads, auto_pad or output_shape; output_padding), float32 accumulation, bias and
 * the fused activation; 1-D as 2-D. A residual input is Conv's only (declined for ConvTranspose).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_nn.h"

#define CONV_GROUP_SIZE 256
#define GEMM_TILE 16
/* mm_coop.comp's blocks: 128 columns, and 128, 64 (SHAPE_MID) or 32 (SHAPE_SMALL) rows */
#define COOP_COLS 128
#define COOP_MIN_ROWS 32
/* mm_coop.comp's pc.flags: which operands move as 16-byte vectors (mm_coop.comp's VEC_*) */
#define COOP_VEC_A 1u
#define COOP_VEC_B_N 2u
#define COOP_VEC_B_K 4u
#define COOP_TAP_MASK 8u /* Conv: per-column masks of the window's taps inside the input (mm_coop_load.glsl) */
#define COOP_STEP 32            /* mm_coop.comp's BK (mm_tiled.comp's is 16: slices are multiples of both) */
#define TILED_BLOCK 64          /* mm_tiled.comp's BM and BN */
#define TILED_WIDE_COLS 128     /* its BN with -DWIDE */
/* Products of few blocks split K so that about this many workgroups run (two per multiprocessor of a
 * large GPU such as the H200's 132), each slice at least 4 steps deep; mm_reduce.comp adds them. */
#define COOP_TARGET_GROUPS 264
/* mm_tiled.comp's block shapes: rows x columns, and the shaders of (conv, float32) */
typedef struct tiled_shape {
  int64_t rows, cols;
  vk_shader_id conv_f32, conv_f16, gemm_f32, gemm_f16;
} tiled_shape;
static const tiled_shape tiled_shapes[] = {
    {64, 64, VK_SHADER_CONV_TILED_F32, VK_SHADER_CONV_TILED_F16, VK_SHADER_GEMM_TILED_F32, VK_SHADER_GEMM_TILED_F16},
    {64, 128, VK_SHADER_CONV_TILED_WIDE_F32, VK_SHADER_CONV_TILED_WIDE_F16, VK_SHADER_GEMM_TILED_WIDE_F32,
     VK_SHADER_GEMM_TILED_WIDE_F16},
    {32, 128, VK_SHADER_CONV_TILED_R32_F32, VK_SHADER_CONV_TILED_R32_F16, VK_SHADER_GEMM_TILED_R32_F32,
     VK_SHADER_GEMM_TILED_R32_F16},
    {16, 256, VK_SHADER_CONV_TILED_R16_F32, VK_SHADER_CONV_TILED_R16_F16, VK_SHADER_GEMM_TILED_R16_F32,
     VK_SHADER_GEMM_TILED_R16_F16},
};

/* The tiled block for an m x n product in `batch` products: the fewest rows that hold m (16 or 32: a
 * 64-row block computes up to 75% of its rows for nothing) and, from 33 rows, 128 columns where n has
 * them; but only where the shaped blocks still number COOP_TARGET_GROUPS or more, since fewer and larger
 * blocks leave much of a large GPU idle. 64x64 otherwise. Timed on the H200 with every product shaped
 * (docs/backends.md): ESPCN x2 at 540x960 went from 3.94 to 2.02 ms and the UNet denoiser from 3.98
 * to 3.37 ms, while the classifiers, whose products are a few dozen blocks, lost up to 22% (ResNet-50
 * 1.67 -> 2.04 ms); the block count keeps those on 64x64. GFXEP_VULKAN_TILED_SHAPES=1 shapes every
 * product (the tests of the shaped kernels on small shapes), =0 none (the benchmark's comparison). */
static const tiled_shape* tiled_shape_for(int64_t m, int64_t n, int64_t batch) {
  const char* forced = getenv("GFXEP_VULKAN_TILED_SHAPES");
  if (forced && forced[0] == '0') return &tiled_shapes[0];
  const tiled_shape* shaped = m <= 16                 ? &tiled_shapes[3]
                              : m <= 32               ? &tiled_shapes[2]
                              : n >= TILED_WIDE_COLS  ? &tiled_shapes[1]
                                                      : &tiled_shapes[0];
  if (forced && forced[0] == '1') return shaped;
  const int64_t blocks = (m + shaped->rows - 1) / shaped->rows * ((n + shaped->cols - 1) / shaped->cols) * batch;
  return blocks >= COOP_TARGET_GROUPS ? shaped : &tiled_shapes[0];
}
#define COOP_MAX_SPLITS 32
#define COOP_MAX_SCRATCH ((int64_t)256 << 20)

/* conv.comp's Geom block */
/* The window both convolution shaders' Geom blocks begin with */
typedef struct conv_window_gpu {
  int64_t count;
  int32_t n, c_in, c_out, group;
  int32_t in_h, in_w, k_h, k_w;
  int32_t out_h, out_w, stride_h, stride_w;
  int32_t dil_h, dil_w, pad_top, pad_left;
} conv_window_gpu;

typedef struct conv_geom_gpu {
  conv_window_gpu w;
  int32_t activation, residual, has_bias, pad0;
  float alpha, beta;
  int32_t in_d, k_d, out_d, stride_d, dil_d, pad_front; /* 3-D: the depth (2-D: 1, 1, 1, 1, 1, 0) */
} conv_geom_gpu;
_Static_assert(sizeof(conv_geom_gpu) == 120, "conv_geom_gpu layout (conv.comp's Geom)");

/* the block kernels' Geom block for Conv (the implicit GEMM of one group), followed by its tap table */
typedef struct conv_block_geom_gpu {
  int32_t m, n, k, c_in;
  int32_t c_in_g, c_out, in_h, in_w;
  int32_t k_h, k_w, out_h, out_w;
  int32_t stride_h, stride_w, dil_h, dil_w;
  int32_t pad_top, pad_left, activation, residual;
  int32_t has_bias, pointwise; /* a 1x1 window without padding: the shaders skip the tap table */
  float alpha, beta;
  int32_t in_d, out_d, stride_d, pad_front; /* a 3-D convolution's depth (2-D: 1, 1, 1, 0) */
} conv_block_geom_gpu;
_Static_assert(sizeof(conv_block_geom_gpu) == 112, "conv_block_geom_gpu layout (mm_common.glsl's Geom)");

/* gemm.comp's Geom block, followed by the offset table (the block kernels' too) */
typedef struct gemm_geom_gpu {
  int64_t m, n, k;
  int64_t a_row, a_col, b_row, b_col, c_row, c_col;
  float alpha, beta;
  int32_t has_c, pad0;
} gemm_geom_gpu;
_Static_assert(sizeof(gemm_geom_gpu) == 88, "gemm_geom_gpu layout");

/* conv_transpose.comp's Geom block */
typedef struct conv_t_geom_gpu {
  conv_window_gpu w;
  int32_t activation, has_bias;
  float alpha, beta;
  int32_t in_d, k_d, out_d, stride_d, dil_d, pad_front; /* 3-D: the depth (2-D: 1, 1, 1, 1, 1, 0) */
} conv_t_geom_gpu;
_Static_assert(sizeof(conv_t_geom_gpu) == 112, "conv_t_geom_gpu layout");

typedef struct conv_t_push {
  uint64_t x, w, bias, y, geom;
} conv_t_push;

typedef struct conv_push {
  uint64_t x, w, bias, res, y, geom;
} conv_push;
typedef struct gemm_push {
  uint64_t a, b, c, y, geom;
} gemm_push;

/* mm_common.glsl's SPLIT_PUSH, after the product's own push constants */
typedef struct split_push {
  uint64_t scratch;
  uint32_t splits, k_chunk, n_z, flags; /* flags: mm_coop.comp's vector loads (COOP_VEC_*) */
} split_push;

typedef struct nn_state {
  vk_family family; /* first: node_release dispatches on it */
  vk_buffer geom;
  vk_pipe* pipe;
  int64_t count;              /* Conv: output elements */
  uint32_t groups[3];         /* the dispatch */
  int block;                  /* on mm_coop.comp or mm_tiled.comp */
  uint32_t splits, k_chunk, n_z; /* its split K (splits 1: none) over n_z products (groups or batch) */
  vk_pipe* reduce;            /* mm_reduce.comp, where splits > 1 */
  int64_t reduce_count;       /* the elements it finishes */
  uint32_t coop_flags;        /* mm_coop.comp: the vector loads the shapes allow (the run checks alignment) */
  /* a Conv on mm_coop.comp's CHANNELS_LAST variants: its input and weights transposed into the node's
   * scratch first, at these byte offsets (after the split K's slices) */
  int channels_last;
  vk_transpose x_t, w_t;
  size_t x_off, w_off, scratch_need;
} nn_state;

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int is_conv(gfx_op op) { return op == GFX_OP_CONV || op == GFX_OP_CONV_TRANSPOSE; }

static int dtype_of(gfx_op op, const ir_params* p) {
  int t = is_conv(op) ? p->conv.dtype : p->gemm.dtype;
  return t ? t : GFX_DTYPE_F32;
}

static gfx_status shader_for(vk_device* d, gfx_op op, int dtype, vk_shader_id* out) {
  const int conv = op == GFX_OP_CONV;
  const int conv_t = op == GFX_OP_CONV_TRANSPOSE;
  if (!d->has_int64)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s needs shaderInt64, which %s lacks", ir_op_name(op),
                     d->info.name);
  if (dtype == GFX_DTYPE_F32) {
    *out = conv ? VK_SHADER_CONV_F32 : conv_t ? VK_SHADER_CONV_T_F32 : VK_SHADER_GEMM_F32;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16) {
    if (!d->has_f16)
      return gfx_error(GFX_ERR_NOT_SUPPORTED,
                       "vulkan backend: float16 needs shaderFloat16 and storageBuffer16BitAccess, which %s lacks",
                       d->info.name);
    *out = conv ? VK_SHADER_CONV_F16 : conv_t ? VK_SHADER_CONV_T_F16 : VK_SHADER_GEMM_F16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage) { /* the direct kernels, 16-bit words, float32 sums */
    *out = conv ? VK_SHADER_CONV_BF16 : conv_t ? VK_SHADER_CONV_T_BF16 : VK_SHADER_GEMM_BF16;
    return NULL;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not implemented yet", ir_op_name(op),
                   gfx_dtype_name(dtype));
}

gfx_status vk_supports_nn(vk_device* d, const gfx_node_query* q) {
  /* declined, so ir_fuse_for (ir/fuse_chain.c) leaves the pair of Convs as it is */
  if (q->op == GFX_OP_CONV && q->params->conv.chain)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: a convolution chain is not implemented; the Vulkan backend runs the two "
                     "convolutions unfused");
  if (q->op == GFX_OP_CONV && q->params->conv.channels_last)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a channels-last Conv (layout=nhwc) is not implemented");
  /* 1-D to 3-D */
  if (is_conv(q->op) && q->params->conv.spatial > 3)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s over %d spatial dims is not implemented",
                     ir_op_name(q->op), q->params->conv.spatial);
  if (q->op == GFX_OP_CONV_TRANSPOSE && q->params->conv.residual != IR_RES_NONE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: ConvTranspose with a residual input is not implemented");
  vk_shader_id shader;
  return shader_for(d, q->op, dtype_of(q->op, q->params), &shader);
}

/* Whether a float16 convolution of m x n (in `batch` groups) pays on mm_coop.comp rather than
 * mm_tiled.comp: only where its 128x128 blocks (more than 64 output channels) number at least
 * COOP_TARGET_GROUPS. On an H100 (2026-12-07) the tensor-core kernel ran a 3x3 256 -> 256 convolution
 * of 8 x 128 x 128 in 4.05 ms against 6.28 tiled, but lost wherever the gathered input is used by few
 * output channels or the product is small: a 64 -> 32 layer at 540x960 1.39 against 1.01, ESPCN x2
 * 2.62 against 1.89, the UNet 3.56 against 3.23, ResNet-18 0.69 against 0.63 (float16, whole nets).
 * GFXEP_VULKAN_COOP_CONV=1 puts every float16 convolution on it, =0 none. */
static int coop_conv_pays(int64_t m, int64_t n, int64_t batch) {
  const char* env = getenv("GFXEP_VULKAN_COOP_CONV");
  if (env && (env[0] == '0' || env[0] == '1')) return env[0] == '1';
  return m > 64 && (m + 127) / 128 * ((n + COOP_COLS - 1) / COOP_COLS) * batch >= COOP_TARGET_GROUPS;
}

/* Whether a float16 product of m x n x k (in `batch` independent products) goes to mm_coop.comp: the
 * device has cooperative matrices, the product fills at least an eighth of a 16-row tile and one
 * 16-deep step (smaller ones waste the tile: the portable kernels do better), a convolution pays there
 * (coop_conv_pays), and the dispatch fits. */
/* mm_coop.comp on this device: on the tensor cores where it has cooperative matrices; emulated
 * (coop_ops.glsl: the same kernel around plain arithmetic) where GFXEP_VULKAN_COOPMAT_EMULATE=1 asks
 * for it on a device without them but with float16, so that a test device (lavapipe) runs everything
 * of mm_coop.comp but the matrix operations; neither otherwise. */
typedef enum { COOP_NONE, COOP_TENSOR_CORES, COOP_EMULATED } coop_kind;
static coop_kind coop_of(const vk_device* d) {
  if (d->has_coopmat) return COOP_TENSOR_CORES;
  return d->has_f16 && getenv("GFXEP_VULKAN_COOPMAT_EMULATE") ? COOP_EMULATED : COOP_NONE;
}

static int use_coop(vk_device* d, int conv, int dtype, int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (coop_of(d) == COOP_NONE || dtype != GFX_DTYPE_F16) return 0;
  if (m < 8 || n < 8 || k < 16) return 0;
  if (conv && !coop_conv_pays(m, n, batch)) return 0;
  const uint32_t* max = d->props.limits.maxComputeWorkGroupCount;
  return (n + COOP_COLS - 1) / COOP_COLS <= (int64_t)max[0] && (m + COOP_MIN_ROWS - 1) / COOP_MIN_ROWS <= (int64_t)max[1] &&
         batch <= (int64_t)max[2];
}

/* mm_coop.comp's block rows for m x n in `batch` products: the fewest of 32, 64 and 128 that hold m,
 * except that 128 gives way to 64 where 128-row blocks would not put one workgroup on each
 * multiprocessor of a large GPU (COOP_TARGET_GROUPS / 2); GFXEP_VULKAN_COOP_ROWS=32|64|128 forces one
 * (where it holds at least one row of the product), to compare. */
static int coop_rows_for(int64_t m, int64_t n, int64_t batch) {
  const char* forced = getenv("GFXEP_VULKAN_COOP_ROWS");
  if (forced) {
    const int rows = atoi(forced);
    if (rows == 32 || rows == 64 || rows == 128) return rows;
  }
  if (m <= 32) return 32;
  if (m <= 64) return 64;
  const int64_t blocks = (m + 127) / 128 * ((n + COOP_COLS - 1) / COOP_COLS) * batch;
  return blocks >= COOP_TARGET_GROUPS / 2 ? 128 : 64;
}

/* mm_coop.comp's variant for a product of `rows`-row blocks (coop_rows_for). GFXEP_VULKAN_COOP_W64=1
 * runs the 128-row blocks on four subgroups of 64x64 (SHAPE_W64) instead of eight of 64x32.
 * GFXEP_VULKAN_COOP_PROBE=no_global|no_mma runs a MatMul/Gemm of 128-row blocks on the tensor cores
 * without its K loop's global loads, or without its products: timing probes whose results are wrong,
 * announced by a warning, to locate where a K step's time goes. */
static vk_shader_id coop_shader_for(const vk_device* d, int conv, int rows, int channels_last) {
  static const vk_shader_id by_rows[2][2][3] = { /* [emulated][conv][32, 64, 128 rows] */
      {{VK_SHADER_GEMM_COOP_SMALL_F16, VK_SHADER_GEMM_COOP_MID_F16, VK_SHADER_GEMM_COOP_F16},
       {VK_SHADER_CONV_COOP_SMALL_F16, VK_SHADER_CONV_COOP_MID_F16, VK_SHADER_CONV_COOP_F16}},
      {{VK_SHADER_GEMM_COOP_SMALL_EMU_F16, VK_SHADER_GEMM_COOP_MID_EMU_F16, VK_SHADER_GEMM_COOP_EMU_F16},
       {VK_SHADER_CONV_COOP_SMALL_EMU_F16, VK_SHADER_CONV_COOP_MID_EMU_F16, VK_SHADER_CONV_COOP_EMU_F16}}};
  static const vk_shader_id channels_last_by_rows[2][4] = { /* [emulated][32, 64, 128 rows, 128 on four] */
      {VK_SHADER_CONV_COOP_CL_SMALL_F16, VK_SHADER_CONV_COOP_CL_MID_F16, VK_SHADER_CONV_COOP_CL_F16,
       VK_SHADER_CONV_COOP_CL_W64_F16},
      {VK_SHADER_CONV_COOP_CL_SMALL_EMU_F16, VK_SHADER_CONV_COOP_CL_MID_EMU_F16, VK_SHADER_CONV_COOP_CL_EMU_F16,
       VK_SHADER_CONV_COOP_CL_W64_EMU_F16}};
  const int emulated = coop_of(d) == COOP_EMULATED;
  const char* w64 = getenv("GFXEP_VULKAN_COOP_W64");
  const int four = rows == 128 && w64 && w64[0] == '1';
  if (conv && channels_last) return channels_last_by_rows[emulated][four ? 3 : rows == 32 ? 0 : rows == 64 ? 1 : 2];
  if (rows != 128) return by_rows[emulated][conv][rows == 32 ? 0 : 1];
  const char* probe = getenv("GFXEP_VULKAN_COOP_PROBE");
  if (probe && !conv && !emulated && (!strcmp(probe, "no_global") || !strcmp(probe, "no_mma"))) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: GFXEP_VULKAN_COOP_PROBE=%s: a timing probe, MatMul/Gemm results are wrong",
            probe);
    return !strcmp(probe, "no_global") ? VK_SHADER_GEMM_COOP_PROBE_NO_GLOBAL_F16 : VK_SHADER_GEMM_COOP_PROBE_NO_MMA_F16;
  }
  if (four)
    return emulated ? (conv ? VK_SHADER_CONV_COOP_W64_EMU_F16 : VK_SHADER_GEMM_COOP_W64_EMU_F16)
                    : (conv ? VK_SHADER_CONV_COOP_W64_F16 : VK_SHADER_GEMM_COOP_W64_F16);
  return by_rows[emulated][conv][2];
}

/* Whether a product goes to mm_tiled.comp: at least 16 rows and columns (a quarter of a block) and 8
 * deep, float32 or float16 (with shaderFloat16), and a dispatch that fits. A MatMul/Gemm of few 64x64
 * blocks and a short K (a transformer's at 197 tokens: 12 to 48 blocks, K up to 768) keeps gemm.comp,
 * whose 16x16 tiles spread over more of the GPU: ViT-tiny in float32 ran 2.18 ms that way on the H200
 * against 2.69 ms tiled. Convolutions always go tiled: the direct kernel was 3 to 5x slower on every
 * convolution net measured there. */
static int use_tiled(vk_device* d, int conv, int dtype, int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (getenv("GFXEP_VULKAN_NO_TILED")) return 0;
  if (dtype != GFX_DTYPE_F32 && !(dtype == GFX_DTYPE_F16 && d->has_f16)) return 0;
  /* with the block shapes of few rows forced on, from 8 rows (half of a 16-row block); by default from
   * 16, and from 1 for an ungrouped convolution whose 16x256 blocks fill the GPU: an image net's last
   * layers (3 output channels for RGB, 12 before a x2 pixel shuffle) on a large image, where the
   * direct kernel took ESPCN x2's 12-channel layer at 540x960 to 1.74 ms of its 3.2 on the H200 */
  const char* shapes = getenv("GFXEP_VULKAN_TILED_SHAPES");
  const int wide_image = conv && batch == 1 && (n + 255) / 256 >= COOP_TARGET_GROUPS && !(shapes && shapes[0] == '0');
  const int64_t min_rows = wide_image ? 1 : shapes && shapes[0] == '1' ? 8 : 16;
  if (m < min_rows || n < 16 || k < 8) return 0;
  const int64_t blocks = (m + TILED_BLOCK - 1) / TILED_BLOCK * ((n + TILED_BLOCK - 1) / TILED_BLOCK) * batch;
  if (!conv && blocks < 64 && k < 1024) return 0;
  const uint32_t* max = d->props.limits.maxComputeWorkGroupCount;
  return (n + TILED_BLOCK - 1) / TILED_BLOCK <= (int64_t)max[0] && (m + TILED_BLOCK - 1) / TILED_BLOCK <= (int64_t)max[1] &&
         batch <= (int64_t)max[2];
}

/* How many slices K splits into for a product of `blocks` workgroups (1: none), and the scratch they
 * need for m x n in `batch` products; none where scratch cannot be asked for or would be too large. */
static void choose_splits(vk_device* d, int64_t blocks, int64_t m, int64_t n, int64_t k, int64_t batch,
                          size_t* scratch_bytes, nn_state* st) {
  const int64_t steps = (k + COOP_STEP - 1) / COOP_STEP;
  int64_t splits = 1;
  /* a CPU implementation (lavapipe) runs a few workgroups at a time anyway: no split there, unless
   * GFXEP_VULKAN_SPLIT_K=1 asks for it (the tests of the split on such a device) */
  const int wanted = !d->info.software || getenv("GFXEP_VULKAN_SPLIT_K");
  if (scratch_bytes && blocks < COOP_TARGET_GROUPS && wanted && !getenv("GFXEP_VULKAN_NO_SPLIT_K")) {
    splits = (COOP_TARGET_GROUPS + blocks - 1) / blocks;
    if (splits > steps / 4) splits = steps / 4;
    if (splits > COOP_MAX_SPLITS) splits = COOP_MAX_SPLITS;
    if (splits < 1) splits = 1;
  }
  int64_t chunk = (steps + splits - 1) / splits * COOP_STEP;
  splits = (k + chunk - 1) / chunk; /* no empty slice */
  const int64_t bytes = splits * batch * m * n * (int64_t)sizeof(float);
  if (splits > 1 && (bytes > COOP_MAX_SCRATCH || batch * splits > (int64_t)d->props.limits.maxComputeWorkGroupCount[2]))
    splits = 1;
  if (splits == 1) chunk = k;
  st->splits = (uint32_t)splits;
  st->k_chunk = (uint32_t)chunk;
  st->n_z = (uint32_t)batch;
  st->reduce_count = batch * m * n;
  if (splits > 1) *scratch_bytes = (size_t)bytes;
}

/* The block-kernel pipeline (mm_coop.comp where coop, else mm_tiled.comp) for an m x n x k product (in
 * `batch` products) of dtype, its dispatch and its split K. */
static gfx_status block_pipe(vk_device* d, const ir_node* node, int coop, int conv, int dtype, int64_t m, int64_t n,
                             int64_t k, int64_t batch, size_t* scratch_bytes, nn_state* st) {
  const int channels_last = st->channels_last;
  const int f32 = dtype == GFX_DTYPE_F32;
  const tiled_shape* shape = tiled_shape_for(m, n, batch);
  const int coop_rows = coop ? coop_rows_for(m, n, batch) : 0;
  vk_shader_id shader;
  if (coop)
    shader = coop_shader_for(d, conv, coop_rows, channels_last);
  else
    shader = conv ? (f32 ? shape->conv_f32 : shape->conv_f16) : (f32 ? shape->gemm_f32 : shape->gemm_f16);
  const int64_t rows = coop ? coop_rows : shape->rows;
  const int64_t cols = coop ? COOP_COLS : shape->cols;
  GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &st->pipe));
  st->block = 1;
  st->groups[0] = (uint32_t)((n + cols - 1) / cols);
  st->groups[1] = (uint32_t)((m + rows - 1) / rows);
  choose_splits(d, (int64_t)st->groups[0] * st->groups[1] * batch, m, n, k, batch, scratch_bytes, st);
  st->groups[2] = (uint32_t)batch * st->splits;
  if (st->splits > 1)
    GFX_TRY(vk_pipeline_get(d, conv ? (f32 ? VK_SHADER_CONV_SPLIT_SUM_F32 : VK_SHADER_CONV_SPLIT_SUM_F16)
                                    : (f32 ? VK_SHADER_GEMM_SPLIT_SUM_F32 : VK_SHADER_GEMM_SPLIT_SUM_F16),
                            NULL, 0, &st->reduce));
  gfx_log(GFX_LOG_VERBOSE, "vulkan backend: node '%s' (%s) on %s, %lldx%lld blocks, K in %u slices", label(node),
          ir_op_name(node->op),
          !coop                         ? "the tiled kernel"
          : coop_of(d) == COOP_EMULATED ? (channels_last ? "emulated cooperative matrices, channels-last" : "emulated cooperative matrices")
          : channels_last               ? "cooperative matrices, channels-last"
                                        : "cooperative matrices",
          (long long)rows, (long long)cols,
          st->splits);
  return NULL;
}

static gfx_status too_big(const ir_node* node, const gfx_shape* s) {
  char buf[128];
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s): a tensor of shape %s has 2^32 elements or more",
                   label(node), ir_op_name(node->op), gfx_shape_str(s, buf, sizeof buf));
}

static gfx_status check_sizes(const ir_node* node, const gfx_shape* in, int n_in, const gfx_shape* out) {
  for (int i = 0; i < n_in; i++)
    if (in[i].rank >= 0 && gfx_shape_numel(&in[i]) >= ((int64_t)1 << 32)) return too_big(node, &in[i]);
  if (gfx_shape_numel(out) >= ((int64_t)1 << 32)) return too_big(node, out);
  return NULL;
}

static void window_of(const ir_conv_geom* g, int64_t count, conv_window_gpu* w) {
  w->count = count;
  w->n = (int32_t)g->n, w->c_in = (int32_t)g->c_in, w->c_out = (int32_t)g->c_out, w->group = (int32_t)g->group;
  w->in_h = (int32_t)g->in[0], w->in_w = (int32_t)g->in[1];
  w->k_h = (int32_t)g->kernel[0], w->k_w = (int32_t)g->kernel[1];
  w->out_h = (int32_t)g->out[0], w->out_w = (int32_t)g->out[1];
  w->stride_h = (int32_t)g->strides[0], w->stride_w = (int32_t)g->strides[1];
  w->dil_h = (int32_t)g->dilations[0], w->dil_w = (int32_t)g->dilations[1];
  w->pad_top = (int32_t)g->pad_begin[0], w->pad_left = (int32_t)g->pad_begin[1];
}

/* A convolution's dispatch (one invocation per output element, grid-stride) and its Geom block. */
static gfx_status upload_conv_geom(vk_device* d, nn_state* st, int64_t count, const void* geom, size_t bytes) {
  st->count = count;
  st->groups[0] = vk_grid_groups(d, (uint64_t)((count + CONV_GROUP_SIZE - 1) / CONV_GROUP_SIZE));
  st->groups[1] = st->groups[2] = 1;
  GFX_TRY(vk_buffer_create(d, bytes, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, geom, bytes);
  return NULL;
}

/* The last two dims of a 3-D geometry as a 2-D one (the depth is kept apart). */
static ir_conv_geom window_2d(const ir_conv_geom* g3) {
  ir_conv_geom g = *g3;
  g.spatial = 2;
  for (int k = 0; k < 2; k++) {
    g.in[k] = g3->in[k + 1], g.kernel[k] = g3->kernel[k + 1], g.out[k] = g3->out[k + 1];
    g.strides[k] = g3->strides[k + 1], g.dilations[k] = g3->dilations[k + 1];
    g.pad_begin[k] = g3->pad_begin[k + 1], g.pad_end[k] = g3->pad_end[k + 1];
  }
  return g;
}

/* A convolution's geometry for the shaders: the window of its last two spatial dims (1-D as 2-D) and
 * a 3-D one's depth (2-D: in 1, kernel 1, out 1, stride 1, dilation 1, pad 0). */
typedef struct conv_layout {
  ir_conv_geom g;
  int64_t in_d, k_d, out_d, stride_d, dil_d, pad_front, pad_back;
} conv_layout;

static gfx_status conv_layout_of(const ir_node* node, const gfx_shape* in, conv_layout* cl) {
  const ir_conv_params* p = &node->params.conv;
  if (p->spatial != 3) {
    ir_conv_params p2;
    gfx_shape x2, w2;
    ir_conv_as_2d(p, &in[0], &in[1], &p2, &x2, &w2);
    GFX_TRY(ir_conv_geometry(&p2, &x2, &w2, &cl->g));
    cl->in_d = cl->k_d = cl->out_d = cl->stride_d = cl->dil_d = 1, cl->pad_front = cl->pad_back = 0;
    return NULL;
  }
  ir_conv_geom g3;
  GFX_TRY(ir_conv_geometry(p, &in[0], &in[1], &g3));
  /* the shaders' int arithmetic: every dim, stride, pad and window below 2^30 */
  const int64_t big = (int64_t)1 << 30;
  for (int k = 0; k < 3; k++)
    if (g3.in[k] > big || g3.out[k] > big || g3.kernel[k] * g3.dilations[k] > big || g3.strides[k] > big ||
        g3.pad_begin[k] > big || g3.pad_begin[k] < -big)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "spatial geometry beyond 2^30");
  cl->g = window_2d(&g3);
  cl->in_d = g3.in[0], cl->k_d = g3.kernel[0], cl->out_d = g3.out[0];
  cl->stride_d = g3.strides[0], cl->dil_d = g3.dilations[0], cl->pad_front = g3.pad_begin[0], cl->pad_back = g3.pad_end[0];
  return NULL;
}

/* A convolution on a block kernel, as the implicit GEMM of each group: M = its output channels, N = the
 * output pixels (voxels) of the batch, K = its input channels x the kernel window; B is gathered
 * through a tap table of one entry per row of K. */
static gfx_status prepare_conv_block(vk_device* d, const ir_node* node, const conv_layout* cl, int coop, int dtype,
                                     int64_t m, int64_t n, int64_t k, int64_t count, nn_state* st,
                                     size_t* scratch_bytes) {
  const ir_conv_params* p = &node->params.conv;
  const ir_conv_geom* g = &cl->g;
  conv_window_gpu w;
  window_of(g, count, &w);
  conv_block_geom_gpu cg = {.m = (int32_t)m, .n = (int32_t)n, .k = (int32_t)k, .c_in = w.c_in,
                           .c_in_g = w.c_in / w.group, .c_out = w.c_out, .in_h = w.in_h, .in_w = w.in_w,
                           .k_h = w.k_h, .k_w = w.k_w, .out_h = w.out_h, .out_w = w.out_w,
                           .stride_h = w.stride_h, .stride_w = w.stride_w, .dil_h = w.dil_h, .dil_w = w.dil_w,
                           .pad_top = w.pad_top, .pad_left = w.pad_left, .activation = p->activation,
                           .residual = p->residual, .has_bias = node->n_inputs > 2 && node->inputs[2] >= 0,
                           .alpha = p->act_alpha, .beta = p->act_beta, .in_d = (int32_t)cl->in_d,
                           .out_d = (int32_t)cl->out_d, .stride_d = (int32_t)cl->stride_d,
                           .pad_front = (int32_t)cl->pad_front};
  cg.pointwise = g->kernel[0] == 1 && g->kernel[1] == 1 && cl->k_d == 1 && !g->pad_begin[0] && !g->pad_begin[1] &&
                 !g->pad_end[0] && !g->pad_end[1] && !cl->pad_front && !cl->pad_back;
  /* mm_coop.comp's CHANNELS_LAST variants where they apply: one group, a 2-D window of at most 32 taps,
   * and scratch for the copies. Their channels are padded with zeros to a multiple of 8 (c_in_p; K grows
   * to match), so that a 16-byte vector holds eight channels of one tap. On an H100 (2026-12-07) the
   * 3x3 256 -> 256 Conv of 8 x 128 x 128 took 1.550 ms against 4.002 gathered (device time, copies
   * included). GFXEP_VULKAN_COOP_NHWC=0 keeps the gather, to compare. */
  const char* nhwc = getenv("GFXEP_VULKAN_COOP_NHWC");
  const int64_t taps_2d = g->kernel[0] * g->kernel[1], in_hw = g->in[0] * g->in[1];
  st->channels_last = coop && !(nhwc && nhwc[0] == '0') && scratch_bytes && g->group == 1 && cl->k_d == 1 &&
                      cl->in_d == 1 && taps_2d <= 32;
  const int64_t c_in_p = st->channels_last ? (g->c_in + 7) / 8 * 8 : g->c_in;
  if (st->channels_last) {
    k = c_in_p * taps_2d;
    cg.k = (int32_t)k;
    cg.c_in = cg.c_in_g = (int32_t)c_in_p;
  }
  GFX_TRY(block_pipe(d, node, coop, 1, dtype, m, n, k, g->group, scratch_bytes, st));
  if (st->channels_last) {
    /* the input [n][c_in][h w] -> [n][h w][c_in_p] and the weights [c_out][c_in][taps] ->
     * [c_out][taps][c_in_p], float16, after the split K's slices (which start at byte 0); a 1x1 window
     * of whole vectors needs no weight copy */
    const int weight_copy = taps_2d > 1 || c_in_p != g->c_in;
    const size_t split = st->splits > 1 ? *scratch_bytes : 0;
    st->x_off = (split + 255) / 256 * 256;
    st->w_off = (st->x_off + (size_t)(g->n * c_in_p * in_hw) * 2 + 255) / 256 * 256;
    st->scratch_need = weight_copy ? st->w_off + (size_t)(g->c_out * k) * 2 : st->w_off;
    *scratch_bytes = st->scratch_need;
    GFX_TRY(vk_transpose_prepare(d, g->n, g->c_in, in_hw, c_in_p, 2, &st->x_t));
    if (weight_copy) GFX_TRY(vk_transpose_prepare(d, g->c_out, g->c_in, taps_2d, c_in_p, 2, &st->w_t));
  }
  /* the weights (A) move as vectors where each group's rows are whole vectors; B is gathered, testing
   * one bit of a per-column mask per tap where the window is 2-D and has at most 32 taps
   * (GFXEP_VULKAN_COOP_TAP_MASK=0: the three bounds instead, to compare) */
  if (coop && k % 8 == 0) st->coop_flags = COOP_VEC_A;
  const char* mask_env = getenv("GFXEP_VULKAN_COOP_TAP_MASK");
  const int tap_mask = coop && !st->channels_last && cl->k_d == 1 && g->kernel[0] * g->kernel[1] <= 32 &&
                       !(mask_env && mask_env[0] == '0');
  if (tap_mask) st->coop_flags |= COOP_TAP_MASK;
  st->count = count;
  GFX_TRY(vk_buffer_create(d, sizeof cg + sizeof(uint32_t) * 2 * (size_t)k, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, &cg, sizeof cg);
  /* row q = (ci, kz, ky, kx) of the gathered input: its offset from the column's tap (0, 0, 0) of
   * channel 0, and its (dz, dy, dx) packed for the bounds test (conv_block_fits bounds them) */
  uint32_t* taps = (uint32_t*)(void*)((char*)st->geom.mapped + sizeof cg);
  const int64_t plane = g->kernel[0] * g->kernel[1], window = cl->k_d * plane;
  for (int64_t q = 0; st->channels_last && q < k; q++) {
    /* channels-last: row q = (tap, ci) of the copy, its offset from the column's tap (0, 0) of channel 0
     * and the tap's index in the top byte (the shader's per-column mask) */
    const int64_t tap = q / c_in_p, ci = q % c_in_p;
    const int64_t dy = tap / g->kernel[1] * g->dilations[0], dx = tap % g->kernel[1] * g->dilations[1];
    taps[2 * q] = (uint32_t)((dy * g->in[1] + dx) * c_in_p + ci);
    taps[2 * q + 1] = (uint32_t)(tap << 24 | dy << 12 | dx);
  }
  for (int64_t q = 0; !st->channels_last && q < k; q++) {
    const int64_t ci = q / window, tap = q % window;
    const int64_t dz = tap / plane * cl->dil_d, dy = tap % plane / g->kernel[1] * g->dilations[0],
                  dx = tap % g->kernel[1] * g->dilations[1];
    taps[2 * q] = (uint32_t)(ci * cl->in_d * in_hw + dz * in_hw + dy * g->in[1] + dx);
    taps[2 * q + 1] = (uint32_t)((tap_mask ? tap : dz) << 24 | dy << 12 | dx);
  }
  return NULL;
}

/* Whether mm_load.glsl's packed tap offsets hold the dilated window: 12 bits for its height and width,
 * 8 for its depth */
static int conv_block_fits(const conv_layout* cl) {
  return (cl->g.kernel[0] - 1) * cl->g.dilations[0] < 4096 && (cl->g.kernel[1] - 1) * cl->g.dilations[1] < 4096 &&
         (cl->k_d - 1) * cl->dil_d < 256;
}

static gfx_status prepare_conv(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               nn_state* st, size_t* scratch_bytes) {
  const ir_conv_params* p = &node->params.conv;
  /* the kernels below would run its second convolution alone */
  if (p->chain)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "a convolution chain is not implemented (vk_supports_nn declines it)");
  conv_layout cl;
  GFX_TRY(conv_layout_of(node, in, &cl));
  const ir_conv_geom* g = &cl.g;
  const int64_t count = gfx_shape_numel(&out[0]);
  const int64_t m = g->c_out / g->group, n = g->n * cl.out_d * g->out[0] * g->out[1],
                k = g->c_in / g->group * cl.k_d * g->kernel[0] * g->kernel[1];
  const int dtype = dtype_of(node->op, &node->params);
  const int fits = conv_block_fits(&cl);
  const int coop = fits && use_coop(d, 1, dtype, m, n, k, g->group);
  if (coop || (fits && use_tiled(d, 1, dtype, m, n, k, g->group)))
    return prepare_conv_block(d, node, &cl, coop, dtype, m, n, k, count, st, scratch_bytes);
  /* the direct kernel: one output element per invocation, a 3-D one's depth looped around the window */
  conv_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  window_of(g, count, &gg.w);
  gg.activation = p->activation;
  gg.residual = p->residual;
  gg.has_bias = node->n_inputs > 2 && node->inputs[2] >= 0;
  gg.alpha = p->act_alpha;
  gg.beta = p->act_beta;
  gg.in_d = (int32_t)cl.in_d, gg.k_d = (int32_t)cl.k_d, gg.out_d = (int32_t)cl.out_d;
  gg.stride_d = (int32_t)cl.stride_d, gg.dil_d = (int32_t)cl.dil_d, gg.pad_front = (int32_t)cl.pad_front;
  return upload_conv_geom(d, st, count, &gg, sizeof gg);
}

static gfx_status prepare_conv_transpose(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                         nn_state* st) {
  if (node->params.conv.residual != IR_RES_NONE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "a residual input is implemented for Conv only");
  ir_conv_params p2;
  gfx_shape x2, w2, y2, unused;
  ir_conv_geom g, depth = {0};
  const int volume = node->params.conv.spatial == 3;
  if (volume) {
    p2 = node->params.conv;
    GFX_TRY(ir_conv_transpose_geometry(&p2, &in[0], &in[1], &depth));
    g = window_2d(&depth);
    if (out[0].rank != 5 || out[0].dims[2] != depth.out[0])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the output's depth does not match the geometry (%lld)",
                       (long long)depth.out[0]);
    /* out[0] without its depth: the checks below compare N, C and the window */
    y2 = (gfx_shape){.rank = 4, .dims = {out[0].dims[0], out[0].dims[1], out[0].dims[3], out[0].dims[4]}};
  } else {
    ir_conv_as_2d(&node->params.conv, &in[0], &in[1], &p2, &x2, &w2);
    GFX_TRY(ir_conv_transpose_geometry(&p2, &x2, &w2, &g));
    ir_conv_as_2d(&node->params.conv, &out[0], &out[0], &p2, &y2, &unused);
  }
  if (y2.rank != 4 || y2.dims[0] != g.n || y2.dims[1] != g.c_out || y2.dims[2] != g.out[0] || y2.dims[3] != g.out[1]) {
    char buf[128];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s does not match the geometry (%lld x %lld x %lld x %lld)",
                     gfx_shape_str(&out[0], buf, sizeof buf), (long long)g.n, (long long)g.c_out, (long long)g.out[0],
                     (long long)g.out[1]);
  }
  const int has_bias = node->n_inputs > 2 && node->inputs[2] >= 0;
  if (has_bias && (in[2].rank != 1 || in[2].dims[0] != g.c_out))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the bias is not a vector of the %lld output channels", (long long)g.c_out);
  conv_t_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  window_of(&g, gfx_shape_numel(&out[0]), &gg.w);
  gg.activation = p2.activation;
  gg.has_bias = has_bias;
  gg.alpha = p2.act_alpha;
  gg.beta = p2.act_beta;
  gg.in_d = gg.k_d = gg.out_d = gg.stride_d = gg.dil_d = 1;
  if (volume) {
    gg.in_d = (int32_t)depth.in[0], gg.k_d = (int32_t)depth.kernel[0], gg.out_d = (int32_t)depth.out[0];
    gg.stride_d = (int32_t)depth.strides[0], gg.dil_d = (int32_t)depth.dilations[0];
    gg.pad_front = (int32_t)depth.pad_begin[0];
  }
  /* the shader's int arithmetic: every dim, stride, pad and output coordinate + pad below 2^31 */
  const int64_t big = (int64_t)1 << 30;
  const ir_conv_geom* dims = volume ? &depth : &g;
  for (int k = 0; k < dims->spatial; k++)
    if (dims->in[k] > big || dims->out[k] > big || dims->kernel[k] > big || dims->strides[k] > big ||
        dims->dilations[k] > big || dims->pad_begin[k] > big || dims->pad_begin[k] < -big ||
        dims->kernel[k] * dims->dilations[k] > big)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "spatial geometry beyond 2^30");
  return upload_conv_geom(d, st, gg.w.count, &gg, sizeof gg);
}

/* Element offsets of a's and b's matrix for each output matrix of a broadcast batch. */
static void batch_offsets(const gfx_shape* a, const gfx_shape* b, const gfx_shape* out, int64_t a_mat, int64_t b_mat,
                          int64_t* offsets) {
  const int rank = out->rank - 2;
  int64_t total = 1;
  for (int i = 0; i < rank; i++) total *= out->dims[i];
  for (int64_t idx = 0; idx < total; idx++) {
    int64_t rest = idx, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int dd = rank - 1; dd >= 0; dd--) {
      const int64_t c = rest % out->dims[dd];
      rest /= out->dims[dd];
      const int da = dd - (rank - (a->rank - 2)), db = dd - (rank - (b->rank - 2));
      const int64_t na = da >= 0 ? a->dims[da] : 1, nb = db >= 0 ? b->dims[db] : 1;
      if (na != 1) ia += c * sa;
      if (nb != 1) ib += c * sb;
      sa *= na;
      sb *= nb;
    }
    offsets[2 * idx] = ia * a_mat;
    offsets[2 * idx + 1] = ib * b_mat;
  }
}

static gfx_status prepare_gemm(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               nn_state* st, size_t* scratch_bytes) {
  const ir_gemm_params* p = &node->params.gemm;
  gemm_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  int64_t batch = 1;
  if (node->op == GFX_OP_MATMUL) {
    for (int i = 0; i < 2; i++)
      if (in[i].rank < 2) {
        char buf[128];
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: MatMul input %d of shape %s: rank 2 or more is handled", i,
                         gfx_shape_str(&in[i], buf, sizeof buf));
      }
    ir_matmul_geom g;
    GFX_TRY(ir_matmul_geometry(&in[0], &in[1], p->trans_b, &g));
    gg.m = g.m, gg.n = g.n, gg.k = g.k;
    gg.a_row = g.k, gg.a_col = 1;
    gg.b_row = p->trans_b ? 1 : g.n, gg.b_col = p->trans_b ? g.k : 1;
    gg.alpha = p->alpha;
    batch = g.batch;
  } else {
    const int has_c = node->n_inputs >= 3 && node->inputs[2] >= 0;
    ir_gemm_geom g;
    GFX_TRY(ir_gemm_geometry(p, &in[0], &in[1], has_c ? &in[2] : NULL, &g));
    gg.m = g.m, gg.n = g.n, gg.k = g.k;
    gg.a_row = p->trans_a ? 1 : g.k, gg.a_col = p->trans_a ? g.m : 1;
    gg.b_row = p->trans_b ? 1 : g.n, gg.b_col = p->trans_b ? g.k : 1;
    gg.c_row = g.c_row_stride, gg.c_col = g.c_col_stride;
    gg.has_c = g.has_c;
    gg.alpha = p->alpha, gg.beta = p->beta;
  }
  if (batch > 65535 || (gg.n + GEMM_TILE - 1) / GEMM_TILE > 65535 || (gg.m + GEMM_TILE - 1) / GEMM_TILE > 65535)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s): %lld x %lld x %lld in %lld matrices is "
                     "beyond the dispatch limits", label(node), ir_op_name(node->op), (long long)gg.m, (long long)gg.n,
                     (long long)gg.k, (long long)batch);
  const size_t bytes = sizeof gg + sizeof(int64_t) * 2 * (size_t)batch;
  GFX_TRY(vk_buffer_create(d, bytes, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, &gg, sizeof gg);
  int64_t* offsets = (int64_t*)(void*)((char*)st->geom.mapped + sizeof gg);
  if (node->op == GFX_OP_MATMUL) batch_offsets(&in[0], &in[1], &out[0], gg.m * gg.k, gg.k * gg.n, offsets);
  else offsets[0] = offsets[1] = 0;
  st->groups[0] = (uint32_t)((gg.n + GEMM_TILE - 1) / GEMM_TILE);
  st->groups[1] = (uint32_t)((gg.m + GEMM_TILE - 1) / GEMM_TILE);
  st->groups[2] = (uint32_t)batch;
  st->count = gg.m * gg.n * batch;
  const int dtype = dtype_of(node->op, &node->params);
  const int coop = use_coop(d, 0, dtype, gg.m, gg.n, gg.k, batch);
  if (coop || use_tiled(d, 0, dtype, gg.m, gg.n, gg.k, batch))
    GFX_TRY(block_pipe(d, node, coop, 0, dtype, gg.m, gg.n, gg.k, batch, scratch_bytes, st));
  /* 16-byte vectors along a contiguous dim that is a multiple of 8 (so is every batch offset, a
   * multiple of m x k or k x n): A along K; B along N, or along K where it is transposed */
  if (coop) {
    if (gg.a_col == 1 && gg.a_row % 8 == 0) st->coop_flags |= COOP_VEC_A;
    if (gg.b_col == 1 && gg.b_row % 8 == 0 && gg.n % 8 == 0) st->coop_flags |= COOP_VEC_B_N;
    else if (gg.b_row == 1 && gg.b_col % 8 == 0) st->coop_flags |= COOP_VEC_B_K;
  }
  return NULL;
}

gfx_status vk_prepare_nn(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out, void** state,
                         size_t* scratch_bytes) {
  *state = NULL;
  gfx_status s = check_sizes(node, in, node->n_inputs, &out[0]);
  if (s) return s;
  nn_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_NN;
  vk_shader_id shader;
  s = shader_for(d, node->op, dtype_of(node->op, &node->params), &shader);
  if (!s)
    s = node->op == GFX_OP_CONV             ? prepare_conv(d, node, in, out, st, scratch_bytes)
        : node->op == GFX_OP_CONV_TRANSPOSE ? prepare_conv_transpose(d, node, in, out, st)
                                            : prepare_gemm(d, node, in, out, st, scratch_bytes);
  if (!s && !st->pipe) s = vk_pipeline_get(d, shader, NULL, 0, &st->pipe); /* the portable kernel */
  if (s) {
    vk_release_nn(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_nn(vk_device* d, void* state) {
  nn_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  vk_transpose_release(d, &st->x_t);
  vk_transpose_release(d, &st->w_t);
  free(st);
}

gfx_status vk_run_nn(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                     void* state) {
  nn_state* st = state;
  if (!st || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     label(node), ir_op_name(node->op));
  if (st->count == 0) return NULL;
  /* the shader was chosen for the element type the node declares: tensors of another type would be
   * read and written with the wrong element size */
  const int dtype = dtype_of(node->op, &node->params);
  for (int i = 0; i < node->n_inputs && i < 2; i++)
    if (in[i].dtype != dtype || out[0].dtype != dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) is %s, its tensors are %s -> %s",
                       label(node), ir_op_name(node->op), gfx_dtype_name(dtype), gfx_dtype_name(in[i].dtype),
                       gfx_dtype_name(out[0].dtype));
  unsigned char push[96];
  size_t push_bytes;
  if (node->op == GFX_OP_CONV) {
    const int has_res = node->params.conv.residual != 0;
    conv_push pc = {.x = (uint64_t)(uintptr_t)in[0].data,
                    .w = (uint64_t)(uintptr_t)in[1].data,
                    .bias = node->n_inputs > 2 ? (uint64_t)(uintptr_t)in[2].data : 0,
                    .res = has_res ? (uint64_t)(uintptr_t)in[IR_CONV_RESIDUAL_INPUT].data : 0,
                    .y = (uint64_t)(uintptr_t)out[0].data,
                    .geom = st->geom.address};
    if (has_res && !pc.res)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: Conv node '%s': residual input has no data", label(node));
    if (st->channels_last) { /* the kernel reads the copies that the transposes below write */
      if (!ctx->scratch || ctx->scratch_bytes < st->scratch_need)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: Conv node '%s': its channels-last copies need %zu "
                         "bytes of scratch, the run gave %zu", label(node), st->scratch_need,
                         ctx->scratch ? ctx->scratch_bytes : 0);
      pc.x = (uint64_t)(uintptr_t)ctx->scratch + st->x_off;
      if (st->w_t.pipe) pc.w = (uint64_t)(uintptr_t)ctx->scratch + st->w_off;
    }
    memcpy(push, &pc, sizeof pc);
    push_bytes = sizeof pc;
  } else if (node->op == GFX_OP_CONV_TRANSPOSE) {
    conv_t_push pc = {.x = (uint64_t)(uintptr_t)in[0].data,
                      .w = (uint64_t)(uintptr_t)in[1].data,
                      .bias = node->n_inputs > 2 ? (uint64_t)(uintptr_t)in[2].data : 0,
                      .y = (uint64_t)(uintptr_t)out[0].data,
                      .geom = st->geom.address};
    memcpy(push, &pc, sizeof pc);
    push_bytes = sizeof pc;
  } else {
    gemm_push pc = {.a = (uint64_t)(uintptr_t)in[0].data,
                    .b = (uint64_t)(uintptr_t)in[1].data,
                    .c = node->op == GFX_OP_GEMM && node->n_inputs > 2 ? (uint64_t)(uintptr_t)in[2].data : 0,
                    .y = (uint64_t)(uintptr_t)out[0].data,
                    .geom = st->geom.address};
    memcpy(push, &pc, sizeof pc);
    push_bytes = sizeof pc;
  }
  if (st->block) { /* the block kernels' SPLIT_PUSH follows the product's push constants */
    if (st->splits > 1 && (!ctx->scratch || ctx->scratch_bytes < (size_t)st->reduce_count * st->splits * sizeof(float)))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): its split K needs %zu bytes of scratch, "
                       "the run gave %zu", label(node), ir_op_name(node->op),
                       (size_t)st->reduce_count * st->splits * sizeof(float), ctx->scratch ? ctx->scratch_bytes : 0);
    /* a vector load needs its operand 16-byte aligned: tensors usually are, a view into one may not be */
    uint32_t flags = st->coop_flags;
    const int a_in = node->op == GFX_OP_CONV ? 1 : 0;
    if (!st->channels_last && (uintptr_t)in[a_in].data % 16) flags &= ~COOP_VEC_A; /* (the copies are aligned) */
    if (node->op != GFX_OP_CONV && (uintptr_t)in[1].data % 16) flags &= ~(COOP_VEC_B_N | COOP_VEC_B_K);
    split_push sp = {.scratch = (uint64_t)(uintptr_t)ctx->scratch, .splits = st->splits, .k_chunk = st->k_chunk,
                     .n_z = st->n_z, .flags = flags};
    memcpy(push + push_bytes, &sp, sizeof sp);
    push_bytes += sizeof sp;
  }
  vk_stream* s = vk_stream_acquire(d, ctx->stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  if (!status && st->channels_last) {
    conv_push pc;
    memcpy(&pc, push, sizeof pc);
    vk_transpose_record(d, cb, &st->x_t, (uint64_t)(uintptr_t)in[0].data, pc.x);
    if (st->w_t.pipe) vk_transpose_record(d, cb, &st->w_t, (uint64_t)(uintptr_t)in[1].data, pc.w);
    vk_cmd_barrier(cb);
  }
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, st->pipe->pipeline);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes, push);
    vkCmdDispatch(cb, st->groups[0], st->groups[1], st->groups[2]);
    vk_cmd_barrier(cb);
    if (st->reduce) { /* the slices' sums, finished: one invocation per element, grid-stride */
      const uint32_t groups = vk_grid_groups(d, (uint64_t)((st->reduce_count + CONV_GROUP_SIZE - 1) / CONV_GROUP_SIZE));
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, st->reduce->pipeline);
      vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes, push);
      vkCmdDispatch(cb, groups, 1, 1);
      vk_cmd_barrier(cb);
    }
  }
  return vk_stream_release(d, ctx->stream, s, status);
}
