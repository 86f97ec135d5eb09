#!/usr/bin/env bash
# Runs every GPU test and measurement of gfxep on a machine with an NVIDIA GPU, from the folder
# tools/gpu-pack.sh made (default .device), and prints a JSON summary last. GFXEP_GPU_STEPS (a regex
# of step names) runs a subset. Every step runs under a
# hard timeout, so a hung GPU wait fails its step instead of the whole run.
#
#   bash tools/gpu-check.sh [.device]
#
# ORT 1.29 comes from the pack; ORT 1.30 and the Python API from an installed `onnxruntime`
# (GFXEP_PY, default the first python3 that imports it). cuDNN/cuBLAS are looked for in
# GFXEP_CUDA_LIBS (':'-separated) plus the usual places.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pack=$(cd "${1:-$root/.device}" && pwd)
logs=${OUT:-/tmp}/gpu-check-logs
mkdir -p "$logs"

source "$root/tools/gpu-env.sh"

steps=()
step() { # name timeout_s command...
  local name=$1 limit=$2; shift 2
  # GFXEP_GPU_STEPS (an extended regex) runs only the steps whose names match, to split the checks
  # over several calls
  if [ -n "${GFXEP_GPU_STEPS:-}" ] && ! [[ $name =~ ^(${GFXEP_GPU_STEPS})$ ]]; then return 0; fi
  local t0=$(date +%s.%N)
  echo "=== $name" >&2
  timeout -k 5 "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  tail -n 25 "$logs/$name.log" >&2
  steps+=("$name $rc $(awk "BEGIN{print $t1 - $t0}")")
}

step gpu_info 20 nvidia-smi --query-gpu=name,pci.bus_id,uuid,driver_version,memory.total --format=csv,noheader
# every op family with backend-level cases (element-wise in every type, reductions, normalizations,
# Conv, MatMul) on CUDA against the reference backend, guard bytes around every output
step backend_ops 300 "$pack/bin/test_backend_ops" -b cuda
# every channels-last convolution on cuDNN (by default 1x1 ones are cuBLASLt products)
step backend_ops_cuda_no_pointwise 300 env GFXEP_CUDA_NO_POINTWISE_PRODUCT=1 "$pack/bin/test_backend_ops" -b cuda -o Conv
# every convolution's bias, activation and residual in the separate epilogue kernel (by default bias
# with ReLU or none, and a residual before it, run inside cuDNN's fused call or the 1x1 product)
step backend_ops_cuda_unfused_epilogue 300 env GFXEP_CUDA_CONV_FUSED=0 "$pack/bin/test_backend_ops" -b cuda -o Conv
# and cuDNN's fused call for 16-bit NCHW too, which by default keeps the separate kernel
step backend_ops_cuda_fused_everywhere 300 env GFXEP_CUDA_CONV_FUSED=1 "$pack/bin/test_backend_ops" -b cuda -o Conv
# every convolution chain case on the chain kernel (cuda_conv_chain.cu; by default chains stay unfused
# on CUDA, where cuDNN's two convolutions were faster)
step backend_ops_cuda_conv_chain 300 env GFXEP_CUDA_CONV_CHAIN=1 "$pack/bin/test_backend_ops" -b cuda -o ConvChain
# every few-channel 16-bit convolution on cuDNN (by default the project's tensor-core kernel takes them)
step backend_ops_cuda_no_narrow 300 env GFXEP_CUDA_CONV_NARROW=0 "$pack/bin/test_backend_ops" -b cuda -o Conv
# few-output-channel convolutions on the project's kernel in every float type (by default float32
# only), and all of them on cuDNN
step backend_ops_cuda_thin_everywhere 300 env GFXEP_CUDA_CONV_THIN=1 "$pack/bin/test_backend_ops" -b cuda -o Conv
step backend_ops_cuda_no_thin 300 env GFXEP_CUDA_CONV_THIN=0 "$pack/bin/test_backend_ops" -b cuda -o Conv
# every float32 2-D NCHW convolution the three-TF32-product kernel can run on it (cuda_conv_tf32x3.h; by
# default only where it was measured faster), and all of them on cuDNN
step backend_ops_cuda_conv 300 "$pack/bin/test_backend_ops" -b cuda -o Conv
step backend_ops_cuda_tf32x3_everywhere 300 env GFXEP_CUDA_CONV_TF32X3=1 "$pack/bin/test_backend_ops" -b cuda -o Conv
step backend_ops_cuda_no_tf32x3 300 env GFXEP_CUDA_CONV_TF32X3=0 "$pack/bin/test_backend_ops" -b cuda -o Conv
# the tensor-core Attention kernel with each block's keys split over its warps, and without, for every
# case (by default the split is taken where 64-query blocks would be few)
step backend_ops_cuda_attention_split 300 env GFXEP_CUDA_ATTENTION_SPLIT=1 "$pack/bin/test_backend_ops" -b cuda -o Attention
step backend_ops_cuda_attention_whole 300 env GFXEP_CUDA_ATTENTION_SPLIT=0 "$pack/bin/test_backend_ops" -b cuda -o Attention
step ort129_cuda 300 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_ort"
[ -n "$ort130" ] && step ort130_cuda 300 env GFXEP_ORT_LIB="$ort130" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_ort"
[ -n "$ort130" ] && step ort130_reference 300 env GFXEP_ORT_LIB="$ort130" GFXEP_TEST_BACKEND=reference "$pack/bin/test_ort"
# what a CUDA graph's memset nodes cost cudaGraphLaunch on the host beside kernel nodes (JSON lines)
step graph_launch_cost 90 "$pack/bin/gfxep-graph-launch-cost"
step mma_peak 60 "$pack/bin/gfxep-mma-peak"
step user_stream_cuda 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/test_user_stream_cuda"
step interop_api_cuda 120 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_interop"
[ -n "$ort130" ] && step interop_api_cuda_ort130 120 env GFXEP_ORT_LIB="$ort130" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_interop"
step vk_producer 90 env VKP_NEED_SEM_FD=1 "$pack/bin/test_vk_producer"
step interop_vulkan_cuda 240 env GFXEP_ORT_LIB="$ort129" "$pack/bin/test_interop_vulkan"
# the same frames with gfxep's Vulkan backend on the producer's own VkDevice and queue
step interop_vulkan_own_device 240 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=vulkan "$pack/bin/test_interop_vulkan"
[ -n "$py" ] && step python_api 300 env GFXEP_TEST_BACKEND=cuda "$py" "$root/tests/test_python_api.py"
[ -n "$py" ] && step python_frame_timings 120 "$py" "$root/examples/frame_timings.py" "$pack/lib/libgfxep.so" \
  "$pack/models/denoise_small.onnx" cuda
[ -n "$py" ] && step python_api_vulkan 300 env GFXEP_TEST_BACKEND=vulkan "$py" "$root/tests/test_python_api.py"
ortr=${ort130:-$ort129}
step soak_cuda 300 env GFXEP_ORT_LIB="$ortr" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_soak"
step faults_cuda 300 env GFXEP_ORT_LIB="$ortr" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_faults"
step frames_cuda 300 env GFXEP_ORT_LIB="$ortr" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_frames"
step concurrency_cuda 300 env GFXEP_ORT_LIB="$ortr" GFXEP_TEST_BACKEND=cuda "$pack/bin/test_concurrency"
step ort129_cuda_no_graphs 300 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda GFXEP_EP_OPTIONS=cuda_graph=0 "$pack/bin/test_ort"
step interop_vulkan_cuda_no_graphs 240 env GFXEP_ORT_LIB="$ort129" GFXEP_EP_OPTIONS=cuda_graph=0 "$pack/bin/test_interop_vulkan"
step demo 300 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-demo" --model "$pack/models/demo_denoiser.onnx" --frames 300 --every 1000 --out "$logs/demo"
# the demo in float16, and with gfxep's Vulkan backend on the demo's own VkDevice and queue (fp32, fp16):
# frame latency, throughput and the GPU time between render and present beside the CUDA path's
step demo_fp16 300 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-demo" --model "$pack/models/demo_denoiser.onnx" --frames 300 \
  --every 1000 --precision fp16 --out "$logs/demo_fp16"
step demo_vulkan 300 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-demo" --model "$pack/models/demo_denoiser.onnx" --frames 100 \
  --every 1000 --backend vulkan --out "$logs/demo_vulkan"
step demo_vulkan_fp16 300 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-demo" --model "$pack/models/demo_denoiser.onnx" \
  --frames 100 --every 1000 --backend vulkan --precision fp16 --mode interop --out "$logs/demo_vulkan_fp16"
step demo_no_graphs 300 env GFXEP_ORT_LIB="$ort129" GFXEP_EP_OPTIONS=cuda_graph=0 "$pack/bin/gfxep-demo" --model "$pack/models/demo_denoiser.onnx" --frames 300 --every 1000 --mode interop --out "$logs/demo_ng"
# every op case (tools/make_opcases.py) on CUDA against ORT's CPU EP, guard regions around outputs
step op_cases_cuda 600 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda GFXEP_OPCASES_DIR="$pack/opcases" \
  GFXEP_OPCASES_SUMMARY="$logs/op_cases_cuda.json" "$pack/bin/test_op_cases"
# convolution fusions (activations, residual Adds) in exported-model shape, on CUDA against ORT's CPU EP
step conv_fusion_cuda 300 env GFXEP_ORT_LIB="$ort129" bash "$root/tests/conv_fusion_check.sh" "$py" "$pack/bin/gfxep-run" \
  /tmp/gfxep-conv-fusion cuda
# the zoo's ViT-tiny with its attention and residual LayerNormalization fused (node count after fusion),
# float32 (SIMT tiles) and float16 (tensor-core tiles) on CUDA against ORT's CPU EP
step vit_fusion_cuda 300 env GFXEP_ORT_LIB="$ort129" bash "$root/tests/vit_fusion_check.sh" "$py" "$pack/bin/gfxep-run" \
  /tmp/gfxep-vit-fusion cuda
# each family's attribute combinations on CUDA against ORT's CPU EP
for fam in "reduce_models tests/reduce_models.py 1e-5 1e-4" "layout_models tests/layout_ort_models.py 0 0" \
           "resize_models tests/resize_ort_cases.py 1e-5 1e-4" "nn_models tools/nn_models.py 1e-5 1e-4" \
           "index_models tests/index_models.py 1e-5 1e-4" "control_flow_models tests/control_flow_models.py 1e-5 1e-4" \
           "quant_models tests/quant_models.py 0.08 0"; do
  set -- $fam
  step "$1_cuda" 300 env GFXEP_ORT_LIB="$ort129" bash "$root/tests/family_models_check.sh" "$py" "$root/$2" \
    "$pack/bin/gfxep-run" "/tmp/gfxep-$1" cuda "$3" "$4"
done
# the quantized networks computed in float16 (precision=fp16 lowers their QDQ partitions), within four
# steps (tests/CMakeLists.txt says why)
step quant_models_fp16_cuda 300 env GFXEP_ORT_LIB="$ort129" GFXEP_EP_OPTIONS=precision=fp16 FAMILY_REQUIRE_LOWERED=1 \
  bash "$root/tests/family_models_check.sh" "$py" "$root/tests/quant_models.py" "$pack/bin/gfxep-run" \
  /tmp/gfxep-quant-fp16 cuda 0.125 0
# models the project never wrote: torchvision's architectures as PyTorch exports them
step torchvision_cuda 300 env GFXEP_ORT_LIB="$ort129" "$py" "$root/tools/try_torchvision.py" --run "$pack/bin/gfxep-run" \
  --out /tmp/gfxep-torchvision
cp /tmp/gfxep-torchvision/torchvision.json "$logs/torchvision_cuda.json" 2>/dev/null || true
# the families of issue-sized pipelines (tools/try_families.py), float32 and float16, in two halves so
# that each stays within its step's limit (GFXEP_FAMILIES_ARGS: more arguments, e.g. --profile, or
# --models to narrow a half)
fam_a=raft_small,ifnet,deeplabv3_mobilenet_v3_large,lraspp_mobilenet_v3_large,fcn_resnet50,depthnet,swin_t
fam_b=ssdlite320_mobilenet_v3_large,retinanet_resnet50_fpn,fcos_resnet50_fpn,r3d_18,mc3_18,maxvit_t
for half in a b; do
  models=fam_$half
  [ -n "$py" ] && step "families_${half}_cuda" 540 env GFXEP_ORT_LIB="$ort129" "$py" "$root/tools/try_families.py" \
    --run "$pack/bin/gfxep-run" --out "/tmp/gfxep-families-$half" --models "${!models}" ${GFXEP_FAMILIES_ARGS:-}
  cp "/tmp/gfxep-families-$half/families.json" "$logs/families_${half}_cuda.json" 2>/dev/null || true
done
# the same families on the Vulkan backend (NVIDIA's Vulkan driver, gfxep's own VkDevice): which nodes it
# takes and its latency beside CUDA's (select with GFXEP_GPU_STEPS='families_._vulkan')
for half in a b; do
  models=fam_$half
  [ -n "$py" ] && step "families_${half}_vulkan" 540 env GFXEP_ORT_LIB="$ort129" "$py" "$root/tools/try_families.py" \
    --backend vulkan --run "$pack/bin/gfxep-run" --out "/tmp/gfxep-families-vk-$half" --models "${!models}" \
    ${GFXEP_FAMILIES_ARGS:-}
  cp "/tmp/gfxep-families-vk-$half/families.json" "$logs/families_${half}_vulkan.json" 2>/dev/null || true
done
# the model zoo at full size (1080p SR, 512x512 UNet/style transfer, 224 classifiers, ViT) in float32
# and float16 against ORT's CPU EP
step zoo_cuda 420 env GFXEP_PYTHON="$py" GFXEP_ORT_LIB="$ort129" bash "$root/tools/zoo.sh" "$pack/bin" --backend cuda \
  --size full --out /tmp/gfxep-zoo-cuda
cp /tmp/gfxep-zoo-cuda/zoo.json "$logs/zoo_cuda.json" 2>/dev/null || true
# NVIDIA's compute-sanitizer over the GPU op tests and the ORT-level tests on CUDA
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -n "$cs" ]; then
  # no --leak-check: cuDNN and cuBLASLt handles live as long as the process by design (destroying them
  # at exit races other libraries' teardown), so their device memory is still held at exit
  # (GFXEP_SANITIZE_OPS: -o arguments of test_backend_ops, to check a few ops within a short run)
  step memcheck_backend_ops 300 "$cs" --tool memcheck --error-exitcode 9 "$pack/bin/test_backend_ops" ${GFXEP_SANITIZE_OPS:-}
  step racecheck_backend_ops 300 "$cs" --tool racecheck --error-exitcode 9 "$pack/bin/test_backend_ops" \
    ${GFXEP_SANITIZE_OPS:-}
  step memcheck_op_cases 600 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda GFXEP_OPCASES_DIR="$pack/opcases" \
    "$cs" --tool memcheck --error-exitcode 9 "$pack/bin/test_op_cases"
  step memcheck_ort_cuda 300 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=cuda "$cs" --tool memcheck --error-exitcode 9 "$pack/bin/test_ort"
fi
# the Vulkan backend on the GPU's own Vulkan driver: the backend table, every op family against the
# reference backend, every op case through ORT against its CPU EP, and models through gfxep-run
step vulkan_backend 120 "$pack/bin/test_vulkan_backend"
step cig_info 30 env GFXEP_ORT_LIB="$ort129" bash -c "'$pack/bin/gfxep-info' | grep -E 'CUDA-in-Graphics|gfxep\.features'"
step vulkan_features 30 env GFXEP_ORT_LIB="$ort129" bash -c "'$pack/bin/gfxep-info' | grep -E 'gfxep\.(backend|device_name|features) '"
step backend_ops_vulkan 300 "$pack/bin/test_backend_ops" -b vulkan
# the layout ops' copy plans one element per invocation, as before the tiled transpose and the rows
step backend_ops_vulkan_plain_plans 300 env GFXEP_VULKAN_NO_TILED_TRANSPOSE=1 GFXEP_VULKAN_PLAN_ROWS=0 \
  "$pack/bin/test_backend_ops" -b vulkan -o Transpose,Slice,Concat,Split,Pad,Tile,Expand,DepthToSpace,SpaceToDepth
# every float16 convolution on the tensor-core kernel (by default only very large ones), then the
# products in 128-row blocks (by default only products of many blocks take them)
step backend_ops_vulkan_coop_conv 300 env GFXEP_VULKAN_COOP_CONV=1 "$pack/bin/test_backend_ops" -b vulkan -o Conv
step backend_ops_vulkan_coop_128 300 env GFXEP_VULKAN_COOP_CONV=1 GFXEP_VULKAN_COOP_ROWS=128 "$pack/bin/test_backend_ops" -b vulkan -o Conv,MatMul,Gemm
# the products again on the portable kernels, where the device has cooperative matrices
step backend_ops_vulkan_fused_attention 300 env GFXEP_VULKAN_FUSED_ATTENTION=1 "$pack/bin/test_backend_ops" -b vulkan -o Attention
# reductions of few outputs with their rows split into slices, forced for every case (a GPU splits
# only long rows of few outputs)
step backend_ops_vulkan_split_reduce 300 env GFXEP_VULKAN_SPLIT_REDUCE=1 "$pack/bin/test_backend_ops" -b vulkan \
  -o ReduceSum,ReduceMean,ReduceMax,ReduceMin,ReduceL1,ReduceL2,ReduceSumSquare,ReduceProd,ReduceLogSumExp,GlobalAveragePool,GlobalMaxPool,LayerNormalization,InstanceNormalization,GroupNormalization,RMSNormalization
step backend_ops_vulkan_portable 300 env GFXEP_VULKAN_NO_COOPMAT=1 "$pack/bin/test_backend_ops" -b vulkan -o Conv,MatMul,Gemm
# the tiled blocks shaped to each product (GFXEP_VULKAN_TILED_SHAPES=1), on the portable kernels
step backend_ops_vulkan_tiled_shapes 300 env GFXEP_VULKAN_TILED_SHAPES=1 GFXEP_VULKAN_NO_COOPMAT=1 \
  "$pack/bin/test_backend_ops" -b vulkan -o Conv,MatMul,Gemm
step op_cases_vulkan 600 env GFXEP_ORT_LIB="$ort129" GFXEP_TEST_BACKEND=vulkan GFXEP_OPCASES_DIR="$pack/opcases" \
  GFXEP_OPCASES_SUMMARY="$logs/op_cases_vulkan.json" "$pack/bin/test_op_cases"
for m in conv_net denoise_small matmul partial; do
  step "run_${m}_vulkan" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-run" --backend vulkan --runs 50 "$pack/models/$m.onnx"
done
# the README's C example on both backends of the GPU, against ORT's CPU EP; it links ORT 1.29 by its
# soname, given to it alone (the Python tests load their own libonnxruntime.so.1)
mkdir -p /tmp/gfxep-ort-link && ln -sf "$ort129" /tmp/gfxep-ort-link/libonnxruntime.so.1
for b in vulkan cuda; do
  step "example_c_$b" 60 env LD_LIBRARY_PATH="/tmp/gfxep-ort-link:$LD_LIBRARY_PATH" "$pack/bin/gfxep-minimal" \
    "$pack/lib/libgfxep.so" "$pack/models/denoise_small.onnx" "$b"
done
# the model zoo at full size on the Vulkan backend (NVIDIA's Vulkan driver), against ORT's CPU EP
# (GFXEP_ZOO_ARGS: more arguments, e.g. --only espcn_x2,unet_denoiser)
step zoo_vulkan 420 env GFXEP_PYTHON="$py" GFXEP_ORT_LIB="$ort129" bash "$root/tools/zoo.sh" "$pack/bin" --backend vulkan \
  --size full --runs 5 --out /tmp/gfxep-zoo-vulkan ${GFXEP_ZOO_ARGS:-}
cp /tmp/gfxep-zoo-vulkan/zoo.json "$logs/zoo_vulkan.json" 2>/dev/null || true
# the float32 convolution A/B (bench/conv32_ab.py): the SR and denoiser nets' layers and the nets with
# cuDNN alone, the default and the three-TF32-product kernel everywhere, PyTorch float32 beside them
[ -n "$py" ] && step conv32_ab 480 env GFXEP_ORT_LIB="$ort129" "$py" "$root/bench/conv32_ab.py" --bench "$pack/bin/gfxep-bench" \
  --plugin "$pack/lib/libgfxep.so" --out "$logs"
# the backends side by side on the full-size zoo, device-resident, in one run: CUDA, Vulkan (with its
# cooperative-matrix kernels where the device has them), Vulkan without them (the tiled kernels) and
# Vulkan with every float16 convolution on the tensor-core kernel (GFXEP_BENCH_ARGS: more arguments, e.g. --no-profile --only espcn_x2)
step backend_bench 540 env GFXEP_ORT_LIB="$ort129" bash -c "'$py' '$root/tools/make_zoo.py' /tmp/gfxep-zoo-bench --size full \
  >/dev/null && '$py' '$root/bench/backend_bench.py' --bench '$pack/bin/gfxep-bench' --zoo /tmp/gfxep-zoo-bench --runs 50 \
  --json '$logs/backend_bench.json' ${GFXEP_BENCH_ARGS:-}"
# the host time of a replayed Run with the libraries' memset nodes turned into fill kernels (the
# default) and kept (=0), alternating, on the zoo's float16 UNet (its graph holds 7 memsets)
for rep in 1 2 3; do
  for v in 1 0; do
    step "bench_unet_fp16_fill_kernels_${v}_$rep" 60 env GFXEP_ORT_LIB="$ort129" GFXEP_CUDA_GRAPH_FILL_KERNELS=$v \
      "$pack/bin/gfxep-bench" --runs 1000 /tmp/gfxep-zoo-bench/unet_denoiser.fp16.onnx
  done
done
# where the demo denoiser's device time goes at 1080x1080, node by node, on both backends in float32
# and float16 (ORT's profile of gfxep-bench's runs)
step profile_demo 300 env GFXEP_ORT_LIB="$ort129" "$py" "$root/bench/profile_model.py" --bench "$pack/bin/gfxep-bench" \
  --dyn 1080 --runs 20 --json "$logs/profile_demo.json" "$pack/models/demo_denoiser.onnx"
# one model on both backends with device-resident inputs and outputs (gfxep-bench): the Vulkan
# backend's Run on the host and its latency beside the CUDA backend's, same weights and shapes
for m in denoise_small conv_net; do
  for b in cuda vulkan; do
    step "bench_${m}_$b" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-bench" --backend "$b" --dyn 256 --runs 200 \
      "$pack/models/$m.onnx"
  done
done
# the same with gfxep's per-frame timings on: their host cost (enqueue_us against bench_denoise_small_*)
# and the device time they report (gfxep_gpu_ms) beside CUDA's events
for b in cuda vulkan; do
  step "bench_denoise_small_${b}_frame_timings" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-bench" --backend "$b" \
    --dyn 256 --runs 2000 --frame-timings "$pack/models/denoise_small.onnx"
done
# where a Run's host time goes below the execution provider (GFXEP_HOST_PROFILE: calls and host time
# per backend call), beside the whole Run's enqueue time, on both backends
for m in denoise_small conv_net; do
  for b in cuda vulkan; do
    step "host_profile_${m}_$b" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_HOST_PROFILE="$logs/host_profile_${m}_$b.json" \
      bash -c "'$pack/bin/gfxep-bench' --backend $b --dyn 256 --runs 2000 '$pack/models/$m.onnx' && cat '$logs/host_profile_${m}_$b.json'"
  done
done
# the same on the zoo's float16 ESPCN and UNet at full size (their Vulkan Runs took 18 and 58 us of host
# time where denoise_small takes 10)
for m in espcn_x2 unet_denoiser; do
  for b in cuda vulkan; do
    step "host_profile_zoo_${m}_$b" 180 env GFXEP_ORT_LIB="$ort129" GFXEP_HOST_PROFILE="$logs/host_profile_zoo_${m}_$b.json" \
      bash -c "{ [ -f /tmp/gfxep-zoo-host/$m.fp16.onnx ] || '$py' '$root/tools/make_zoo.py' /tmp/gfxep-zoo-host --size full --only $m >/dev/null; } && \
      '$pack/bin/gfxep-bench' --backend $b --runs 2000 /tmp/gfxep-zoo-host/$m.fp16.onnx && \
      cat '$logs/host_profile_zoo_${m}_$b.json'"
  done
done
# the Vulkan backend's host waits blocking at once (0, the default) and polling for their first 2 ms,
# alternating: the host time of the next Run and the latency, on the same zoo nets
for rep in 1 2; do
  for m in espcn_x2 unet_denoiser; do
    for v in 0 2000; do
      step "bench_zoo_wait_spin_${m}_${v}_$rep" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_WAIT_SPIN_US=$v bash -c \
        "{ [ -f /tmp/gfxep-zoo-host/$m.fp16.onnx ] || '$py' '$root/tools/make_zoo.py' /tmp/gfxep-zoo-host --size full --only $m >/dev/null; } && \
        '$pack/bin/gfxep-bench' --backend vulkan --runs 1000 /tmp/gfxep-zoo-host/$m.fp16.onnx"
    done
  done
done
# the data-movement kernels alone (device time from CUDA events; bytes moved in kernels.json)
"$py" "$root/tools/make_kernel_models.py" "$logs/kernels" > /dev/null
for m in resize_nearest_x2 resize_linear_x2 resize_cubic_x2 depth_to_space_x2 pad_reflect pad_edge pad_constant \
         slice_crop concat_channels topk_scores_k1000; do
  step "kernel_$m" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-bench" --backend cuda --runs 50 "$logs/kernels/$m.onnx"
done
# what the kernels' bandwidth is read against: a device-to-device copy of a 64-channel 1080p float16
# map (PyTorch copy_, CUDA events, median of 50)
[ -n "$py" ] && step copy_bandwidth 60 "$py" -c '
import json, torch
n = 64 * 1080 * 1920
x = torch.empty(n, device="cuda", dtype=torch.float16); y = torch.empty_like(x)
ms = []
for i in range(60):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); y.copy_(x); b.record(); b.synchronize()
    if i >= 10: ms.append(a.elapsed_time(b))
ms.sort()
print(json.dumps({"copy_ms": ms[len(ms) // 2], "copy_gbs": 2 * n * 2 / ms[len(ms) // 2] / 1e6}))'
# vk_knob_sweep PREFIX VAR "VALUES" MODEL...: each kernel model on the Vulkan backend (device time from its
# frame timings) with VAR set to each value in turn, as the steps PREFIX_<model>_<value>
vk_knob_sweep() {
  local prefix=$1 var=$2 values=$3 m v
  shift 3
  for m in "$@"; do
    for v in $values; do
      step "${prefix}_${m}_$v" 60 env GFXEP_ORT_LIB="$ort129" "$var=$v" "$pack/bin/gfxep-bench" \
        --backend vulkan --frame-timings --runs 50 "$logs/kernels/$m.onnx"
    done
  done
}
# the same on the Vulkan backend with its grid-stride dispatches capped at fewer workgroups
# (GFXEP_VULKAN_GRID_GROUPS, vk_grid_groups): longer-lived workgroups pay their set-up over more elements
vk_knob_sweep vk_grid GFXEP_VULKAN_GRID_GROUPS "0 8192 2048 1024" resize_nearest_x2 resize_linear_x2 depth_to_space_x2 \
  pad_reflect slice_crop concat_channels
# the copy plans' row kernels (Pad, Slice, Concat) under several caps on their workgroups
# (GFXEP_VULKAN_PLAN_ROW_GROUPS; 1024 by default, 65535 is one workgroup per row)
vk_knob_sweep vk_plan_rows GFXEP_VULKAN_PLAN_ROW_GROUPS "65535 4096 1024 256" pad_reflect slice_crop concat_channels
# the element-wise kernels with 16-byte groups (the default) and one element per step
vk_knob_sweep vk_ew_groups GFXEP_VULKAN_EW_GROUPS "1 0" relu_fp16 tanh_fp16 add_fp16
# the tensor-core products of the kernel-efficiency table (4096^3 MatMul, 3x3 256 -> 256 Conv) on both
# backends in one run: the Vulkan cooperative-matrix kernels' device time against the CUDA backend's
for m in matmul_fp16_4096 conv_fp16_256; do
  step "kernel_cuda_$m" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-bench" --backend cuda --runs 50 "$logs/kernels/$m.onnx"
  step "vk_coop_$m" 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-bench" --backend vulkan --frame-timings --runs 50 \
    "$logs/kernels/$m.onnx"
done
# the same MatMul with each block shape forced (GFXEP_VULKAN_COOP_ROWS: 32x128, 64x128, 128x128; 2, 4
# and 8 accumulator tiles per subgroup): how its time scales with the work per operand load
for r in 32 64 128; do
  step "vk_coop_rows_${r}_matmul_fp16_4096" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_ROWS=$r "$pack/bin/gfxep-bench" \
    --backend vulkan --frame-timings --runs 50 "$logs/kernels/matmul_fp16_4096.onnx"
done
# the 128-row blocks on four subgroups of 64x64 (GFXEP_VULKAN_COOP_W64=1): every float16 product of the
# op suite on them, then the two products' time and the pipelines' statistics
step backend_ops_vulkan_coop_w64 300 env GFXEP_VULKAN_COOP_CONV=1 GFXEP_VULKAN_COOP_ROWS=128 GFXEP_VULKAN_COOP_W64=1 \
  "$pack/bin/test_backend_ops" -b vulkan -o Conv,MatMul,Gemm
for m in matmul_fp16_4096 conv_fp16_256; do
  step "vk_coop_w64_$m" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_W64=1 "$pack/bin/gfxep-bench" --backend vulkan \
    --frame-timings --runs 50 "$logs/kernels/$m.onnx"
done
step vk_pipeline_stats_w64 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_W64=1 \
  GFXEP_VULKAN_PIPELINE_STATS="$logs/pipeline_stats_w64.txt" bash -c \
  "'$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/matmul_fp16_4096.onnx' && \
   '$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/conv_fp16_256.onnx' && cat '$logs/pipeline_stats_w64.txt'"
# float16 Convs from channels-last copies of input and weights (GFXEP_VULKAN_COOP_NHWC=1: B in 16-byte
# vectors along K): every Conv case on the tensor cores that way (by the shapes' block rows, then 128-row
# blocks on four subgroups), the 3x3 256 -> 256 Conv's time both ways, and the float16 zoo with every
# Conv on the tensor cores that way beside the default, the gathered tensor-core path and the default
# with the four-subgroup blocks
step backend_ops_vulkan_coop_nhwc 300 env GFXEP_VULKAN_COOP_CONV=1 GFXEP_VULKAN_COOP_NHWC=1 \
  "$pack/bin/test_backend_ops" -b vulkan -o Conv
step backend_ops_vulkan_coop_nhwc_w64 300 env GFXEP_VULKAN_COOP_CONV=1 GFXEP_VULKAN_COOP_NHWC=1 \
  GFXEP_VULKAN_COOP_ROWS=128 GFXEP_VULKAN_COOP_W64=1 "$pack/bin/test_backend_ops" -b vulkan -o Conv
step vk_pipeline_stats_nhwc 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_NHWC=1 \
  GFXEP_VULKAN_PIPELINE_STATS="$logs/pipeline_stats_nhwc.txt" bash -c \
  "'$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/conv_fp16_256.onnx' && cat '$logs/pipeline_stats_nhwc.txt'"
for v in 0 1; do
  step "vk_coop_nhwc_w64_${v}_conv_fp16_256" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_NHWC=1 \
    GFXEP_VULKAN_COOP_W64=$v "$pack/bin/gfxep-bench" --backend vulkan --frame-timings --runs 50 \
    "$logs/kernels/conv_fp16_256.onnx"
done
step backend_bench_nhwc 540 env GFXEP_ORT_LIB="$ort129" bash -c "'$py' '$root/tools/make_zoo.py' /tmp/gfxep-zoo-bench \
  --size full >/dev/null && '$py' '$root/bench/backend_bench.py' --bench '$pack/bin/gfxep-bench' --zoo /tmp/gfxep-zoo-bench \
  --runs 50 --no-profile --precisions fp16 --configs vulkan,vulkan_coop_conv \
  --extra vulkan_w64:GFXEP_VULKAN_COOP_W64=1 \
  --extra vulkan_coop_nhwc:GFXEP_VULKAN_COOP_CONV=1,GFXEP_VULKAN_COOP_NHWC=1 \
  --extra vulkan_coop_nhwc_w64:GFXEP_VULKAN_COOP_CONV=1,GFXEP_VULKAN_COOP_NHWC=1,GFXEP_VULKAN_COOP_W64=1 \
  --json '$logs/backend_bench_nhwc.json'"
# the MatMul's K loop without its global loads, and without its products (GFXEP_VULKAN_COOP_PROBE: timing
# only, results wrong): what each part of a step costs
for p in no_global no_mma; do
  step "vk_coop_probe_${p}_matmul_fp16_4096" 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_COOP_PROBE=$p \
    "$pack/bin/gfxep-bench" --backend vulkan --frame-timings --runs 50 "$logs/kernels/matmul_fp16_4096.onnx"
done
# the compiler's statistics of the pipelines those two products create on the Vulkan backend
# (GFXEP_VULKAN_PIPELINE_STATS: registers, spills, shared memory as the driver reports them)
step vk_pipeline_stats 120 env GFXEP_ORT_LIB="$ort129" GFXEP_VULKAN_PIPELINE_STATS="$logs/pipeline_stats.txt" bash -c \
  "'$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/matmul_fp16_4096.onnx' && \
   '$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/conv_fp16_256.onnx' && \
   '$pack/bin/gfxep-bench' --backend vulkan --runs 5 '$logs/kernels/tanh_fp16.onnx' && cat '$logs/pipeline_stats.txt'"
step backend_ops_vulkan_elementwise 120 "$pack/bin/test_backend_ops" -b vulkan -o Relu,Sigmoid,Neg,Add,Sub,Mul,Div,Max,Pow
step backend_ops_vulkan_grid_1024 300 env GFXEP_VULKAN_GRID_GROUPS=1024 "$pack/bin/test_backend_ops" -b vulkan \
  -o Concat,Split,Slice,Pad,Transpose,Tile,Expand,DepthToSpace,SpaceToDepth,Resize,Relu,Add,Conv
step alloc_bench 120 "$pack/bin/gfxep-alloc-bench"
step run_denoise_small 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-run" --backend cuda --runs 200 "$pack/models/denoise_small.onnx"
step run_conv_net 120 env GFXEP_ORT_LIB="$ort129" "$pack/bin/gfxep-run" --backend cuda --runs 200 --dyn 512 "$pack/models/conv_net.onnx"

# summary: per step its exit code, seconds, the test runner's closing line and any JSON lines it printed
python3 - "$logs" "${steps[@]}" <<'PY'
import json, os, re, sys
logs, steps = sys.argv[1], sys.argv[2:]
summary = {"steps": [], "ort130": None}
for s in steps:
    name, rc, secs = s.split()
    text = open(os.path.join(logs, name + ".log"), errors="replace").read()
    entry = {"name": name, "rc": int(rc), "seconds": round(float(secs), 2), "ok": rc == "0"}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                entry.update(json.loads(line))
            except ValueError:
                pass
        m = re.search(r"\[  PASSED  \] (\d+) test|(\d+) passed, (\d+) failed|FAILED|agreement.*|latency.*|nodes on gfxep.*", line)
        if m:
            entry.setdefault("lines", []).append(line[:300])
    if "ops" in entry:  # the op-case summary: keep the totals and whatever is not plain "ok"
        entry["ops_not_ok"] = {k: v for k, v in entry.pop("ops").items() if v.get("status") != "ok"}
    if name == "gpu_info":
        entry["gpu"] = text.strip()
    summary["steps"].append(entry)
summary["passed"] = sum(1 for e in summary["steps"] if e["ok"])
summary["failed"] = sum(1 for e in summary["steps"] if not e["ok"])
print(json.dumps(summary, indent=1))
print(f"gpu-check: {summary['passed']} passed, {summary['failed']} failed")
sys.exit(1 if summary["failed"] else 0)
PY
