/* gfxep Vulkan backend — the embedded SPIR-V of every shader variant.
 *
 * Each included file is glslc's -mfmt=c output (a bare initializer list of 32-bit words), generated
 * into the build tree by CMakeLists.txt from the sources in shaders/, with one set of -D per variant.
 */
#include "backend/vulkan/vk_internal.h"

static const uint32_t ew_f32[] =
#include "ew_f32.spv.inc"
    ;
static const uint32_t ew_f16[] =
#include "ew_f16.spv.inc"
    ;
static const uint32_t ew_i32[] =
#include "ew_i32.spv.inc"
    ;
static const uint32_t ew_i64[] =
#include "ew_i64.spv.inc"
    ;
static const uint32_t ew_f32_bool[] =
#include "ew_f32_bool.spv.inc"
    ;
static const uint32_t ew_f16_bool[] =
#include "ew_f16_bool.spv.inc"
    ;
static const uint32_t ew_i32_bool[] =
#include "ew_i32_bool.spv.inc"
    ;
static const uint32_t ew_i64_bool[] =
#include "ew_i64_bool.spv.inc"
    ;

static const uint32_t plan_1[] =
#include "plan_1.spv.inc"
    ;
static const uint32_t plan_2[] =
#include "plan_2.spv.inc"
    ;
static const uint32_t plan_4[] =
#include "plan_4.spv.inc"
    ;
static const uint32_t plan_8[] =
#include "plan_8.spv.inc"
    ;
static const uint32_t plan_16[] =
#include "plan_16.spv.inc"
    ;
static const uint32_t conv_f32[] =
#include "conv_f32.spv.inc"
    ;
static const uint32_t conv_f16[] =
#include "conv_f16.spv.inc"
    ;
static const uint32_t gemm_f32[] =
#include "gemm_f32.spv.inc"
    ;
static const uint32_t gemm_f16[] =
#include "gemm_f16.spv.inc"
    ;
static const uint32_t conv_coop_f16[] =
#include "conv_coop_f16.spv.inc"
    ;
static const uint32_t gemm_coop_f16[] =
#include "gemm_coop_f16.spv.inc"
    ;
static const uint32_t conv_coop_mid_f16[] =
#include "conv_coop_mid_f16.spv.inc"
    ;
static const uint32_t gemm_coop_mid_f16[] =
#include "gemm_coop_mid_f16.spv.inc"
    ;
static const uint32_t conv_coop_small_f16[] =
#include "conv_coop_small_f16.spv.inc"
    ;
static const uint32_t gemm_coop_small_f16[] =
#include "gemm_coop_small_f16.spv.inc"
    ;
static const uint32_t conv_coop_emu_f16[] =
#include "conv_coop_emu_f16.spv.inc"
    ;
static const uint32_t gemm_coop_emu_f16[] =
#include "gemm_coop_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_mid_emu_f16[] =
#include "conv_coop_mid_emu_f16.spv.inc"
    ;
static const uint32_t gemm_coop_mid_emu_f16[] =
#include "gemm_coop_mid_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_small_emu_f16[] =
#include "conv_coop_small_emu_f16.spv.inc"
    ;
static const uint32_t gemm_coop_small_emu_f16[] =
#include "gemm_coop_small_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_w64_f16[] =
#include "conv_coop_w64_f16.spv.inc"
    ;
static const uint32_t gemm_coop_w64_f16[] =
#include "gemm_coop_w64_f16.spv.inc"
    ;
static const uint32_t conv_coop_w64_emu_f16[] =
#include "conv_coop_w64_emu_f16.spv.inc"
    ;
static const uint32_t gemm_coop_w64_emu_f16[] =
#include "gemm_coop_w64_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_f16[] =
#include "conv_coop_cl_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_mid_f16[] =
#include "conv_coop_cl_mid_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_small_f16[] =
#include "conv_coop_cl_small_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_w64_f16[] =
#include "conv_coop_cl_w64_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_emu_f16[] =
#include "conv_coop_cl_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_mid_emu_f16[] =
#include "conv_coop_cl_mid_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_small_emu_f16[] =
#include "conv_coop_cl_small_emu_f16.spv.inc"
    ;
static const uint32_t conv_coop_cl_w64_emu_f16[] =
#include "conv_coop_cl_w64_emu_f16.spv.inc"
    ;
static const uint32_t gemm_coop_probe_no_global_f16[] =
#include "gemm_coop_probe_no_global_f16.spv.inc"
    ;
static const uint32_t gemm_coop_probe_no_mma_f16[] =
#include "gemm_coop_probe_no_mma_f16.spv.inc"
    ;
    ;
static const uint32_t conv_tiled_f32[] =
#include "conv_tiled_f32.spv.inc"
    ;
static const uint32_t conv_tiled_f16[] =
#include "conv_tiled_f16.spv.inc"
    ;
static const uint32_t gemm_tiled_f32[] =
#include "gemm_tiled_f32.spv.inc"
    ;
static const uint32_t gemm_tiled_f16[] =
#include "gemm_tiled_f16.spv.inc"
    ;
static const uint32_t conv_tiled_wide_f32[] =
#include "conv_tiled_wide_f32.spv.inc"
    ;
static const uint32_t conv_tiled_wide_f16[] =
#include "conv_tiled_wide_f16.spv.inc"
    ;
static const uint32_t gemm_tiled_wide_f32[] =
#include "gemm_tiled_wide_f32.spv.inc"
    ;
static const uint32_t gemm_tiled_wide_f16[] =
#include "gemm_tiled_wide_f16.spv.inc"
    ;
static const uint32_t conv_tiled_r32_f32[] =
#include "conv_tiled_r32_f32.spv.inc"
    ;
static const uint32_t conv_tiled_r32_f16[] =
#include "conv_tiled_r32_f16.spv.inc"
    ;
static const uint32_t gemm_tiled_r32_f32[] =
#include "gemm_tiled_r32_f32.spv.inc"
    ;
static const uint32_t gemm_tiled_r32_f16[] =
#include "gemm_tiled_r32_f16.spv.inc"
    ;
static const uint32_t conv_tiled_r16_f32[] =
#include "conv_tiled_r16_f32.spv.inc"
    ;
static const uint32_t conv_tiled_r16_f16[] =
#include "conv_tiled_r16_f16.spv.inc"
    ;
static const uint32_t gemm_tiled_r16_f32[] =
#include "gemm_tiled_r16_f32.spv.inc"
    ;
static const uint32_t gemm_tiled_r16_f16[] =
#include "gemm_tiled_r16_f16.spv.inc"
    ;
static const uint32_t conv_split_sum_f32[] =
#include "conv_split_sum_f32.spv.inc"
    ;
static const uint32_t conv_split_sum_f16[] =
#include "conv_split_sum_f16.spv.inc"
    ;
static const uint32_t gemm_split_sum_f32[] =
#include "gemm_split_sum_f32.spv.inc"
    ;
static const uint32_t gemm_split_sum_f16[] =
#include "gemm_split_sum_f16.spv.inc"
    ;
static const uint32_t lrn_f32[] =
#include "lrn_f32.spv.inc"
    ;
static const uint32_t lrn_f16[] =
#include "lrn_f16.spv.inc"
    ;
static const uint32_t grid_sample_f32[] =
#include "grid_sample_f32.spv.inc"
    ;
static const uint32_t grid_sample_f16[] =
#include "grid_sample_f16.spv.inc"
    ;
static const uint32_t grid_sample_f16_g32[] =
#include "grid_sample_f16_g32.spv.inc"
    ;
static const uint32_t grid_sample_f32_g16[] =
#include "grid_sample_f32_g16.spv.inc"
    ;
static const uint32_t argmax_f32[] =
#include "argmax_f32.spv.inc"
    ;
static const uint32_t argmax_f16[] =
#include "argmax_f16.spv.inc"
    ;
static const uint32_t nonzero_1[] =
#include "nonzero_1.spv.inc"
    ;
static const uint32_t nonzero_2[] =
#include "nonzero_2.spv.inc"
    ;
static const uint32_t nonzero_4[] =
#include "nonzero_4.spv.inc"
    ;
static const uint32_t nonzero_8[] =
#include "nonzero_8.spv.inc"
    ;
static const uint32_t nms_f32[] =
#include "nms_f32.spv.inc"
    ;
static const uint32_t nms_f16[] =
#include "nms_f16.spv.inc"
    ;
static const uint32_t nms_bf16[] =
#include "nms_bf16.spv.inc"
    ;
static const uint32_t attention_f32[] =
#include "attention_f32.spv.inc"
    ;
static const uint32_t attention_f16[] =
#include "attention_f16.spv.inc"
    ;
static const uint32_t topk_radix_f32[] =
#include "topk_radix_f32.spv.inc"
    ;
static const uint32_t topk_radix_f16[] =
#include "topk_radix_f16.spv.inc"
    ;
static const uint32_t ew_bf16[] =
#include "ew_bf16.spv.inc"
    ;
static const uint32_t ew_bf16_bool[] =
#include "ew_bf16_bool.spv.inc"
    ;
static const uint32_t reduce_bf16[] =
#include "reduce_bf16.spv.inc"
    ;
static const uint32_t softmax_bf16[] =
#include "softmax_bf16.spv.inc"
    ;
static const uint32_t norm_bf16[] =
#include "norm_bf16.spv.inc"
    ;
static const uint32_t pool_bf16[] =
#include "pool_bf16.spv.inc"
    ;
static const uint32_t lrn_bf16[] =
#include "lrn_bf16.spv.inc"
    ;
static const uint32_t reduce_bf16_sg[] =
#include "reduce_bf16_sg.spv.inc"
    ;
static const uint32_t softmax_bf16_sg[] =
#include "softmax_bf16_sg.spv.inc"
    ;
static const uint32_t norm_bf16_sg[] =
#include "norm_bf16_sg.spv.inc"
    ;
static const uint32_t resize_bf16[] =
#include "resize_bf16.spv.inc"
    ;
static const uint32_t resize_general_bf16[] =
#include "resize_general_bf16.spv.inc"
    ;
static const uint32_t argmax_bf16[] =
#include "argmax_bf16.spv.inc"
    ;
static const uint32_t topk_radix_bf16[] =
#include "topk_radix_bf16.spv.inc"
    ;
static const uint32_t conv_bf16[] =
#include "conv_bf16.spv.inc"
    ;
static const uint32_t gemm_bf16[] =
#include "gemm_bf16.spv.inc"
    ;
static const uint32_t conv_t_bf16[] =
#include "conv_t_bf16.spv.inc"
    ;
static const uint32_t batchnorm_bf16[] =
#include "batchnorm_bf16.spv.inc"
    ;
static const uint32_t attention_bf16[] =
#include "attention_bf16.spv.inc"
    ;
static const uint32_t reduce_i32[] =
#include "reduce_i32.spv.inc"
    ;
static const uint32_t reduce_i64[] =
#include "reduce_i64.spv.inc"
    ;
static const uint32_t logic[] =
#include "logic.spv.inc"
    ;
static const uint32_t mod_f32[] =
#include "mod_f32.spv.inc"
    ;
static const uint32_t mod_f16[] =
#include "mod_f16.spv.inc"
    ;
static const uint32_t mod_i32[] =
#include "mod_i32.spv.inc"
    ;
static const uint32_t mod_i64[] =
#include "mod_i64.spv.inc"
    ;
static const uint32_t range_f32[] =
#include "range_f32.spv.inc"
    ;
static const uint32_t range_i32[] =
#include "range_i32.spv.inc"
    ;
static const uint32_t range_i64[] =
#include "range_i64.spv.inc"
    ;
static const uint32_t trilu_1[] =
#include "trilu_1.spv.inc"
    ;
static const uint32_t trilu_2[] =
#include "trilu_2.spv.inc"
    ;
static const uint32_t trilu_4[] =
#include "trilu_4.spv.inc"
    ;
static const uint32_t trilu_8[] =
#include "trilu_8.spv.inc"
    ;
static const uint32_t index_1[] =
#include "index_1.spv.inc"
    ;
static const uint32_t index_2[] =
#include "index_2.spv.inc"
    ;
static const uint32_t index_4[] =
#include "index_4.spv.inc"
    ;
static const uint32_t index_8[] =
#include "index_8.spv.inc"
    ;
static const uint32_t index_f32[] =
#include "index_f32.spv.inc"
    ;
static const uint32_t index_f16[] =
#include "index_f16.spv.inc"
    ;
static const uint32_t index_i32[] =
#include "index_i32.spv.inc"
    ;
static const uint32_t index_i64[] =
#include "index_i64.spv.inc"
    ;
static const uint32_t mod_bf16[] =
#include "mod_bf16.spv.inc"
    ;
static const uint32_t index_bf16[] =
#include "index_bf16.spv.inc"
    ;
static const uint32_t scan_f32[] =
#include "scan_f32.spv.inc"
    ;
static const uint32_t scan_f16[] =
#include "scan_f16.spv.inc"
    ;
static const uint32_t scan_i32[] =
#include "scan_i32.spv.inc"
    ;
static const uint32_t scan_i64[] =
#include "scan_i64.spv.inc"
    ;
static const uint32_t scan_bf16[] =
#include "scan_bf16.spv.inc"
    ;
static const uint32_t quant_f32[] =
#include "quant_f32.spv.inc"
    ;
static const uint32_t quant_f16[] =
#include "quant_f16.spv.inc"
    ;
static const uint32_t topk[] =
#include "topk.spv.inc"
    ;
static const uint32_t roi_align_f32[] =
#include "roi_align_f32.spv.inc"
    ;
static const uint32_t roi_align_f16[] =
#include "roi_align_f16.spv.inc"
    ;
static const uint32_t reduce_f32[] =
#include "reduce_f32.spv.inc"
    ;
static const uint32_t reduce_f16[] =
#include "reduce_f16.spv.inc"
    ;
static const uint32_t softmax_f32[] =
#include "softmax_f32.spv.inc"
    ;
static const uint32_t softmax_f16[] =
#include "softmax_f16.spv.inc"
    ;
static const uint32_t norm_f32[] =
#include "norm_f32.spv.inc"
    ;
static const uint32_t norm_f16[] =
#include "norm_f16.spv.inc"
    ;
static const uint32_t pool_f32[] =
#include "pool_f32.spv.inc"
    ;
static const uint32_t pool_f16[] =
#include "pool_f16.spv.inc"
    ;
static const uint32_t reduce_f32_sg[] =
#include "reduce_f32_sg.spv.inc"
    ;
static const uint32_t reduce_f16_sg[] =
#include "reduce_f16_sg.spv.inc"
    ;
static const uint32_t softmax_f32_sg[] =
#include "softmax_f32_sg.spv.inc"
    ;
static const uint32_t softmax_f16_sg[] =
#include "softmax_f16_sg.spv.inc"
    ;
static const uint32_t norm_f32_sg[] =
#include "norm_f32_sg.spv.inc"
    ;
static const uint32_t norm_f16_sg[] =
#include "norm_f16_sg.spv.inc"
    ;
static const uint32_t cast[] =
#include "cast.spv.inc"
    ;
static const uint32_t batchnorm_f32[] =
#include "batchnorm_f32.spv.inc"
    ;
static const uint32_t batchnorm_f16[] =
#include "batchnorm_f16.spv.inc"
    ;
static const uint32_t resize_f32[] =
#include "resize_f32.spv.inc"
    ;
static const uint32_t resize_f16[] =
#include "resize_f16.spv.inc"
    ;
static const uint32_t resize_general_f32[] =
#include "resize_general_f32.spv.inc"
    ;
static const uint32_t resize_general_f16[] =
#include "resize_general_f16.spv.inc"
    ;
static const uint32_t conv_t_f32[] =
#include "conv_t_f32.spv.inc"
    ;
static const uint32_t conv_t_f16[] =
#include "conv_t_f16.spv.inc"
    ;
static const uint32_t copy_bytes_4[] =
#include "copy_bytes_4.spv.inc"
    ;
static const uint32_t copy_bytes_1[] =
#include "copy_bytes_1.spv.inc"
    ;
static const uint32_t replay_stamp[] =
#include "replay_stamp.spv.inc"
    ;
static const uint32_t where_1[] =
#include "where_1.spv.inc"
    ;
static const uint32_t where_2[] =
#include "where_2.spv.inc"
    ;
static const uint32_t where_4[] =
#include "where_4.spv.inc"
    ;
static const uint32_t where_8[] =
#include "where_8.spv.inc"
    ;
static const uint32_t space_depth_1[] =
#include "space_depth_1.spv.inc"
    ;
static const uint32_t space_depth_2[] =
#include "space_depth_2.spv.inc"
    ;
static const uint32_t space_depth_4[] =
#include "space_depth_4.spv.inc"
    ;
static const uint32_t space_depth_8[] =
#include "space_depth_8.spv.inc"
    ;
static const uint32_t gather_1[] =
#include "gather_1.spv.inc"
    ;
static const uint32_t gather_2[] =
#include "gather_2.spv.inc"
    ;
static const uint32_t gather_4[] =
#include "gather_4.spv.inc"
    ;
static const uint32_t transpose_1[] =
#include "transpose_1.spv.inc"
    ;
static const uint32_t transpose_2[] =
#include "transpose_2.spv.inc"
    ;
static const uint32_t transpose_4[] =
#include "transpose_4.spv.inc"
    ;
static const uint32_t transpose_8[] =
#include "transpose_8.spv.inc"
    ;
static const uint32_t gather_8[] =
#include "gather_8.spv.inc"
    ;

#define BLOB(id, name, words) [id] = {name, words, sizeof words}

const vk_shader_blob vk_shaders[VK_SHADER_COUNT] = {
    BLOB(VK_SHADER_EW_F32, "elementwise.comp (float32)", ew_f32),
    BLOB(VK_SHADER_EW_F16, "elementwise.comp (float16)", ew_f16),
    BLOB(VK_SHADER_EW_I32, "elementwise.comp (int32)", ew_i32),
    BLOB(VK_SHADER_EW_I64, "elementwise.comp (int64)", ew_i64),
    BLOB(VK_SHADER_EW_F32_BOOL, "elementwise.comp (float32, bool output)", ew_f32_bool),
    BLOB(VK_SHADER_EW_F16_BOOL, "elementwise.comp (float16, bool output)", ew_f16_bool),
    BLOB(VK_SHADER_EW_I32_BOOL, "elementwise.comp (int32, bool output)", ew_i32_bool),
    BLOB(VK_SHADER_EW_I64_BOOL, "elementwise.comp (int64, bool output)", ew_i64_bool),
    BLOB(VK_SHADER_PLAN_1, "copy_plan.comp (1-byte elements)", plan_1),
    BLOB(VK_SHADER_PLAN_2, "copy_plan.comp (2-byte elements)", plan_2),
    BLOB(VK_SHADER_PLAN_4, "copy_plan.comp (4-byte elements)", plan_4),
    BLOB(VK_SHADER_PLAN_8, "copy_plan.comp (8-byte elements)", plan_8),
    BLOB(VK_SHADER_PLAN_16, "copy_plan.comp (16-byte groups)", plan_16),
    BLOB(VK_SHADER_TRANSPOSE_1, "transpose.comp (1-byte elements)", transpose_1),
    BLOB(VK_SHADER_TRANSPOSE_2, "transpose.comp (2-byte elements)", transpose_2),
    BLOB(VK_SHADER_TRANSPOSE_4, "transpose.comp (4-byte elements)", transpose_4),
    BLOB(VK_SHADER_TRANSPOSE_8, "transpose.comp (8-byte elements)", transpose_8),
    BLOB(VK_SHADER_CONV_F32, "conv.comp (float32)", conv_f32),
    BLOB(VK_SHADER_CONV_F16, "conv.comp (float16)", conv_f16),
    BLOB(VK_SHADER_GEMM_F32, "gemm.comp (float32)", gemm_f32),
    BLOB(VK_SHADER_GEMM_F16, "gemm.comp (float16)", gemm_f16),
    BLOB(VK_SHADER_REDUCE_F32, "reduce.comp (Reduce, float32)", reduce_f32),
    BLOB(VK_SHADER_REDUCE_F16, "reduce.comp (Reduce, float16)", reduce_f16),
    BLOB(VK_SHADER_SOFTMAX_F32, "reduce.comp (Softmax, float32)", softmax_f32),
    BLOB(VK_SHADER_SOFTMAX_F16, "reduce.comp (Softmax, float16)", softmax_f16),
    BLOB(VK_SHADER_NORM_F32, "reduce.comp (normalization, float32)", norm_f32),
    BLOB(VK_SHADER_NORM_F16, "reduce.comp (normalization, float16)", norm_f16),
    BLOB(VK_SHADER_POOL_F32, "reduce.comp (pooling, float32)", pool_f32),
    BLOB(VK_SHADER_POOL_F16, "reduce.comp (pooling, float16)", pool_f16),
    BLOB(VK_SHADER_CAST, "cast.comp", cast),
    BLOB(VK_SHADER_WHERE_1, "where.comp (1-byte elements)", where_1),
    BLOB(VK_SHADER_WHERE_2, "where.comp (2-byte elements)", where_2),
    BLOB(VK_SHADER_WHERE_4, "where.comp (4-byte elements)", where_4),
    BLOB(VK_SHADER_WHERE_8, "where.comp (8-byte elements)", where_8),
    BLOB(VK_SHADER_BATCHNORM_F32, "batchnorm.comp (float32)", batchnorm_f32),
    BLOB(VK_SHADER_BATCHNORM_F16, "batchnorm.comp (float16)", batchnorm_f16),
    BLOB(VK_SHADER_RESIZE_F32, "resize.comp (Resize, float32)", resize_f32),
    BLOB(VK_SHADER_RESIZE_F16, "resize.comp (Resize, float16)", resize_f16),
    BLOB(VK_SHADER_RESIZE_GENERAL_F32, "resize.comp (Resize of any dims, float32)", resize_general_f32),
    BLOB(VK_SHADER_RESIZE_GENERAL_F16, "resize.comp (Resize of any dims, float16)", resize_general_f16),
    BLOB(VK_SHADER_SPACE_DEPTH_1, "resize.comp (DepthToSpace/SpaceToDepth, 1-byte elements)", space_depth_1),
    BLOB(VK_SHADER_SPACE_DEPTH_2, "resize.comp (DepthToSpace/SpaceToDepth, 2-byte elements)", space_depth_2),
    BLOB(VK_SHADER_SPACE_DEPTH_4, "resize.comp (DepthToSpace/SpaceToDepth, 4-byte elements)", space_depth_4),
    BLOB(VK_SHADER_SPACE_DEPTH_8, "resize.comp (DepthToSpace/SpaceToDepth, 8-byte elements)", space_depth_8),
    BLOB(VK_SHADER_LRN_F32, "reduce.comp (LRN, float32)", lrn_f32),
    BLOB(VK_SHADER_LRN_F16, "reduce.comp (LRN, float16)", lrn_f16),
    BLOB(VK_SHADER_GRID_SAMPLE_F32, "grid_sample.comp (GridSample, float32)", grid_sample_f32),
    BLOB(VK_SHADER_GRID_SAMPLE_F16, "grid_sample.comp (GridSample, float16)", grid_sample_f16),
    BLOB(VK_SHADER_GRID_SAMPLE_F16_G32, "grid_sample.comp (GridSample, float16, float32 grid)", grid_sample_f16_g32),
    BLOB(VK_SHADER_GRID_SAMPLE_F32_G16, "grid_sample.comp (GridSample, float32, float16 grid)", grid_sample_f32_g16),
    BLOB(VK_SHADER_GATHER_1, "gather.comp (1-byte elements)", gather_1),
    BLOB(VK_SHADER_GATHER_2, "gather.comp (2-byte elements)", gather_2),
    BLOB(VK_SHADER_GATHER_4, "gather.comp (4-byte elements)", gather_4),
    BLOB(VK_SHADER_GATHER_8, "gather.comp (8-byte elements)", gather_8),
    BLOB(VK_SHADER_CONV_T_F32, "conv_transpose.comp (float32)", conv_t_f32),
    BLOB(VK_SHADER_CONV_T_F16, "conv_transpose.comp (float16)", conv_t_f16),
    BLOB(VK_SHADER_COPY_BYTES_4, "copy_bytes.comp (32-bit words)", copy_bytes_4),
    BLOB(VK_SHADER_COPY_BYTES_1, "copy_bytes.comp (bytes)", copy_bytes_1),
    BLOB(VK_SHADER_REPLAY_STAMP, "replay_stamp.comp (frame timings of replays)", replay_stamp),
    BLOB(VK_SHADER_REDUCE_F32_SG, "reduce.comp (Reduce, float32, subgroups)", reduce_f32_sg),
    BLOB(VK_SHADER_REDUCE_F16_SG, "reduce.comp (Reduce, float16, subgroups)", reduce_f16_sg),
    BLOB(VK_SHADER_SOFTMAX_F32_SG, "reduce.comp (Softmax, float32, subgroups)", softmax_f32_sg),
    BLOB(VK_SHADER_SOFTMAX_F16_SG, "reduce.comp (Softmax, float16, subgroups)", softmax_f16_sg),
    BLOB(VK_SHADER_NORM_F32_SG, "reduce.comp (normalization, float32, subgroups)", norm_f32_sg),
    BLOB(VK_SHADER_NORM_F16_SG, "reduce.comp (normalization, float16, subgroups)", norm_f16_sg),
    BLOB(VK_SHADER_CONV_COOP_F16, "mm_coop.comp (Conv, float16, cooperative matrices, 128x128 blocks)",
         conv_coop_f16),
    BLOB(VK_SHADER_GEMM_COOP_F16, "mm_coop.comp (MatMul/Gemm, float16, cooperative matrices, 128x128 blocks)",
         gemm_coop_f16),
    BLOB(VK_SHADER_CONV_COOP_MID_F16, "mm_coop.comp (Conv, float16, cooperative matrices, 64x128 blocks)",
         conv_coop_mid_f16),
    BLOB(VK_SHADER_GEMM_COOP_MID_F16, "mm_coop.comp (MatMul/Gemm, float16, cooperative matrices, 64x128 blocks)",
         gemm_coop_mid_f16),
    BLOB(VK_SHADER_CONV_COOP_SMALL_F16, "mm_coop.comp (Conv, float16, cooperative matrices, 32x128 blocks)",
         conv_coop_small_f16),
    BLOB(VK_SHADER_GEMM_COOP_SMALL_F16, "mm_coop.comp (MatMul/Gemm, float16, cooperative matrices, 32x128 blocks)",
         gemm_coop_small_f16),
    BLOB(VK_SHADER_CONV_COOP_EMU_F16, "mm_coop.comp (Conv, float16, emulated cooperative matrices, 128x128 blocks)",
         conv_coop_emu_f16),
    BLOB(VK_SHADER_GEMM_COOP_EMU_F16, "mm_coop.comp (MatMul/Gemm, float16, emulated cooperative matrices, 128x128 blocks)",
         gemm_coop_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_MID_EMU_F16, "mm_coop.comp (Conv, float16, emulated cooperative matrices, 64x128 blocks)",
         conv_coop_mid_emu_f16),
    BLOB(VK_SHADER_GEMM_COOP_MID_EMU_F16, "mm_coop.comp (MatMul/Gemm, float16, emulated cooperative matrices, 64x128 blocks)",
         gemm_coop_mid_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_SMALL_EMU_F16, "mm_coop.comp (Conv, float16, emulated cooperative matrices, 32x128 blocks)",
         conv_coop_small_emu_f16),
    BLOB(VK_SHADER_GEMM_COOP_SMALL_EMU_F16, "mm_coop.comp (MatMul/Gemm, float16, emulated cooperative matrices, 32x128 blocks)",
         gemm_coop_small_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_W64_F16, "mm_coop.comp (Conv, float16, cooperative matrices, 128x128 blocks of four subgroups)",
         conv_coop_w64_f16),
    BLOB(VK_SHADER_GEMM_COOP_W64_F16, "mm_coop.comp (MatMul/Gemm, float16, cooperative matrices, 128x128 blocks of four subgroups)",
         gemm_coop_w64_f16),
    BLOB(VK_SHADER_CONV_COOP_W64_EMU_F16,
         "mm_coop.comp (Conv, float16, emulated cooperative matrices, 128x128 blocks of four subgroups)", conv_coop_w64_emu_f16),
    BLOB(VK_SHADER_GEMM_COOP_W64_EMU_F16,
         "mm_coop.comp (MatMul/Gemm, float16, emulated cooperative matrices, 128x128 blocks of four subgroups)",
         gemm_coop_w64_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, cooperative matrices, 128x128 blocks)", conv_coop_cl_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_MID_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, cooperative matrices, 64x128 blocks)", conv_coop_cl_mid_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_SMALL_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, cooperative matrices, 32x128 blocks)", conv_coop_cl_small_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_W64_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, cooperative matrices, 128x128 blocks of four subgroups)", conv_coop_cl_w64_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_EMU_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, emulated cooperative matrices, 128x128 blocks)", conv_coop_cl_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_MID_EMU_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, emulated cooperative matrices, 64x128 blocks)", conv_coop_cl_mid_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_SMALL_EMU_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, emulated cooperative matrices, 32x128 blocks)", conv_coop_cl_small_emu_f16),
    BLOB(VK_SHADER_CONV_COOP_CL_W64_EMU_F16,
         "mm_coop.comp (Conv from a channels-last copy, float16, emulated cooperative matrices, 128x128 blocks of four subgroups)", conv_coop_cl_w64_emu_f16),
    BLOB(VK_SHADER_GEMM_COOP_PROBE_NO_GLOBAL_F16, "mm_coop.comp (timing probe: MatMul/Gemm without its global loads)",
         gemm_coop_probe_no_global_f16),
    BLOB(VK_SHADER_GEMM_COOP_PROBE_NO_MMA_F16, "mm_coop.comp (timing probe: MatMul/Gemm without its products)",
         gemm_coop_probe_no_mma_f16),
    BLOB(VK_SHADER_CONV_TILED_F32, "mm_tiled.comp (Conv, float32)", conv_tiled_f32),
    BLOB(VK_SHADER_CONV_TILED_F16, "mm_tiled.comp (Conv, float16)", conv_tiled_f16),
    BLOB(VK_SHADER_GEMM_TILED_F32, "mm_tiled.comp (MatMul/Gemm, float32)", gemm_tiled_f32),
    BLOB(VK_SHADER_GEMM_TILED_F16, "mm_tiled.comp (MatMul/Gemm, float16)", gemm_tiled_f16),
    BLOB(VK_SHADER_CONV_TILED_WIDE_F32, "mm_tiled.comp (Conv, float32, 64x128 blocks)", conv_tiled_wide_f32),
    BLOB(VK_SHADER_CONV_TILED_WIDE_F16, "mm_tiled.comp (Conv, float16, 64x128 blocks)", conv_tiled_wide_f16),
    BLOB(VK_SHADER_GEMM_TILED_WIDE_F32, "mm_tiled.comp (MatMul/Gemm, float32, 64x128 blocks)", gemm_tiled_wide_f32),
    BLOB(VK_SHADER_GEMM_TILED_WIDE_F16, "mm_tiled.comp (MatMul/Gemm, float16, 64x128 blocks)", gemm_tiled_wide_f16),
    BLOB(VK_SHADER_CONV_TILED_R32_F32, "mm_tiled.comp (Conv, float32, 32x128 blocks)", conv_tiled_r32_f32),
    BLOB(VK_SHADER_CONV_TILED_R32_F16, "mm_tiled.comp (Conv, float16, 32x128 blocks)", conv_tiled_r32_f16),
    BLOB(VK_SHADER_GEMM_TILED_R32_F32, "mm_tiled.comp (MatMul/Gemm, float32, 32x128 blocks)", gemm_tiled_r32_f32),
    BLOB(VK_SHADER_GEMM_TILED_R32_F16, "mm_tiled.comp (MatMul/Gemm, float16, 32x128 blocks)", gemm_tiled_r32_f16),
    BLOB(VK_SHADER_CONV_TILED_R16_F32, "mm_tiled.comp (Conv, float32, 16x256 blocks)", conv_tiled_r16_f32),
    BLOB(VK_SHADER_CONV_TILED_R16_F16, "mm_tiled.comp (Conv, float16, 16x256 blocks)", conv_tiled_r16_f16),
    BLOB(VK_SHADER_GEMM_TILED_R16_F32, "mm_tiled.comp (MatMul/Gemm, float32, 16x256 blocks)", gemm_tiled_r16_f32),
    BLOB(VK_SHADER_GEMM_TILED_R16_F16, "mm_tiled.comp (MatMul/Gemm, float16, 16x256 blocks)", gemm_tiled_r16_f16),
    BLOB(VK_SHADER_CONV_SPLIT_SUM_F32, "mm_reduce.comp (Conv, float32, split-K sums)", conv_split_sum_f32),
    BLOB(VK_SHADER_CONV_SPLIT_SUM_F16, "mm_reduce.comp (Conv, float16, split-K sums)", conv_split_sum_f16),
    BLOB(VK_SHADER_GEMM_SPLIT_SUM_F32, "mm_reduce.comp (MatMul/Gemm, float32, split-K sums)", gemm_split_sum_f32),
    BLOB(VK_SHADER_GEMM_SPLIT_SUM_F16, "mm_reduce.comp (MatMul/Gemm, float16, split-K sums)", gemm_split_sum_f16),
    BLOB(VK_SHADER_ARGMAX_F32, "argmax.comp (ArgMax/ArgMin, float32)", argmax_f32),
    BLOB(VK_SHADER_ARGMAX_F16, "argmax.comp (ArgMax/ArgMin, float16)", argmax_f16),
    BLOB(VK_SHADER_REDUCE_I32, "reduce_int.comp (ReduceSum/Max/Min/Prod, int32)", reduce_i32),
    BLOB(VK_SHADER_REDUCE_I64, "reduce_int.comp (ReduceSum/Max/Min/Prod, int64)", reduce_i64),
    BLOB(VK_SHADER_NONZERO_1, "nonzero.comp (1-byte elements)", nonzero_1),
    BLOB(VK_SHADER_NONZERO_2, "nonzero.comp (2-byte elements)", nonzero_2),
    BLOB(VK_SHADER_NONZERO_4, "nonzero.comp (4-byte elements)", nonzero_4),
    BLOB(VK_SHADER_NONZERO_8, "nonzero.comp (8-byte elements)", nonzero_8),
    BLOB(VK_SHADER_NMS_F32, "nms.comp (float32)", nms_f32),
    BLOB(VK_SHADER_NMS_F16, "nms.comp (float16)", nms_f16),
    BLOB(VK_SHADER_NMS_BF16, "nms.comp (bfloat16)", nms_bf16),
    BLOB(VK_SHADER_ATTENTION_F32, "attention.comp (float32)", attention_f32),
    BLOB(VK_SHADER_ATTENTION_F16, "attention.comp (float16)", attention_f16),
    BLOB(VK_SHADER_TOPK_RADIX_F32, "topk_radix.comp (float32)", topk_radix_f32),
    BLOB(VK_SHADER_TOPK_RADIX_F16, "topk_radix.comp (float16)", topk_radix_f16),
    BLOB(VK_SHADER_EW_BF16, "elementwise.comp (bfloat16)", ew_bf16),
    BLOB(VK_SHADER_EW_BF16_BOOL, "elementwise.comp (bfloat16, bool output)", ew_bf16_bool),
    BLOB(VK_SHADER_RESIZE_BF16, "resize.comp (Resize, bfloat16)", resize_bf16),
    BLOB(VK_SHADER_RESIZE_GENERAL_BF16, "resize.comp (Resize of any dims, bfloat16)", resize_general_bf16),
    BLOB(VK_SHADER_ARGMAX_BF16, "argmax.comp (ArgMax/ArgMin, bfloat16)", argmax_bf16),
    BLOB(VK_SHADER_TOPK_RADIX_BF16, "topk_radix.comp (bfloat16)", topk_radix_bf16),
    BLOB(VK_SHADER_CONV_BF16, "conv.comp (bfloat16)", conv_bf16),
    BLOB(VK_SHADER_GEMM_BF16, "gemm.comp (bfloat16)", gemm_bf16),
    BLOB(VK_SHADER_CONV_T_BF16, "conv_transpose.comp (bfloat16)", conv_t_bf16),
    BLOB(VK_SHADER_BATCHNORM_BF16, "batchnorm.comp (bfloat16)", batchnorm_bf16),
    BLOB(VK_SHADER_ATTENTION_BF16, "attention.comp (bfloat16)", attention_bf16),
    BLOB(VK_SHADER_REDUCE_BF16, "reduce.comp (Reduce, bfloat16)", reduce_bf16),
    BLOB(VK_SHADER_SOFTMAX_BF16, "reduce.comp (Softmax, bfloat16)", softmax_bf16),
    BLOB(VK_SHADER_NORM_BF16, "reduce.comp (normalization, bfloat16)", norm_bf16),
    BLOB(VK_SHADER_POOL_BF16, "reduce.comp (pooling, bfloat16)", pool_bf16),
    BLOB(VK_SHADER_LRN_BF16, "reduce.comp (LRN, bfloat16)", lrn_bf16),
    BLOB(VK_SHADER_REDUCE_BF16_SG, "reduce.comp (Reduce, bfloat16, subgroups)", reduce_bf16_sg),
    BLOB(VK_SHADER_SOFTMAX_BF16_SG, "reduce.comp (Softmax, bfloat16, subgroups)", softmax_bf16_sg),
    BLOB(VK_SHADER_NORM_BF16_SG, "reduce.comp (normalization, bfloat16, subgroups)", norm_bf16_sg),
    BLOB(VK_SHADER_LOGIC, "logic_mod.comp (Not/And/Or/Xor)", logic),
    BLOB(VK_SHADER_MOD_F32, "logic_mod.comp (Mod, float32)", mod_f32),
    BLOB(VK_SHADER_MOD_F16, "logic_mod.comp (Mod, float16)", mod_f16),
    BLOB(VK_SHADER_MOD_I32, "logic_mod.comp (Mod, int32)", mod_i32),
    BLOB(VK_SHADER_MOD_I64, "logic_mod.comp (Mod, int64)", mod_i64),
    BLOB(VK_SHADER_RANGE_F32, "range.comp (float32)", range_f32),
    BLOB(VK_SHADER_RANGE_I32, "range.comp (int32)", range_i32),
    BLOB(VK_SHADER_RANGE_I64, "range.comp (int64)", range_i64),
    BLOB(VK_SHADER_TRILU_1, "trilu.comp (1-byte elements)", trilu_1),
    BLOB(VK_SHADER_TRILU_2, "trilu.comp (2-byte elements)", trilu_2),
    BLOB(VK_SHADER_TRILU_4, "trilu.comp (4-byte elements)", trilu_4),
    BLOB(VK_SHADER_TRILU_8, "trilu.comp (8-byte elements)", trilu_8),
    BLOB(VK_SHADER_INDEX_1, "index.comp (1-byte elements)", index_1),
    BLOB(VK_SHADER_INDEX_2, "index.comp (2-byte elements)", index_2),
    BLOB(VK_SHADER_INDEX_4, "index.comp (4-byte elements)", index_4),
    BLOB(VK_SHADER_INDEX_8, "index.comp (8-byte elements)", index_8),
    BLOB(VK_SHADER_INDEX_F32, "index.comp (scatter reductions, float32)", index_f32),
    BLOB(VK_SHADER_INDEX_F16, "index.comp (scatter reductions, float16)", index_f16),
    BLOB(VK_SHADER_INDEX_I32, "index.comp (scatter reductions, int32)", index_i32),
    BLOB(VK_SHADER_INDEX_I64, "index.comp (scatter reductions, int64)", index_i64),
    BLOB(VK_SHADER_MOD_BF16, "logic_mod.comp (Mod, bfloat16)", mod_bf16),
    BLOB(VK_SHADER_INDEX_BF16, "index.comp (scatter reductions, bfloat16)", index_bf16),
    BLOB(VK_SHADER_SCAN_F32, "scan.comp (CumSum, float32)", scan_f32),
    BLOB(VK_SHADER_SCAN_F16, "scan.comp (CumSum, float16)", scan_f16),
    BLOB(VK_SHADER_SCAN_I32, "scan.comp (CumSum, int32)", scan_i32),
    BLOB(VK_SHADER_SCAN_I64, "scan.comp (CumSum, int64)", scan_i64),
    BLOB(VK_SHADER_SCAN_BF16, "scan.comp (CumSum, bfloat16)", scan_bf16),
    BLOB(VK_SHADER_QUANT_F32, "quant.comp (float32)", quant_f32),
    BLOB(VK_SHADER_QUANT_F16, "quant.comp (float16)", quant_f16),
    BLOB(VK_SHADER_TOPK, "topk.comp", topk),
    BLOB(VK_SHADER_ROI_ALIGN_F32, "roi_align.comp (float32)", roi_align_f32),
    BLOB(VK_SHADER_ROI_ALIGN_F16, "roi_align.comp (float16)", roi_align_f16),
};
