# Sourced by the GPU scripts (tools/gpu-check.sh, tools/gpu-bench.sh): finds ORT 1.30 and Python with
# onnxruntime, cuDNN and cuBLAS, and the Vulkan loader, and exports what the tests and tools read.
# Needs $root (the repository) and $pack (the folder tools/gpu-pack.sh made).
# the libraries gpu-pack.sh gzipped, unpacked once
for z in "$pack"/lib/*.gz; do
  [ -e "$z" ] && { gunzip -c "$z" > "${z%.gz}.tmp" && mv "${z%.gz}.tmp" "${z%.gz}" && rm -f "$z"; }
done
py=${GFXEP_PY:-}
for c in /opt/torch/.venv/bin/python python3; do
  [ -z "$py" ] && command -v "$c" >/dev/null && "$c" -c "import onnxruntime" 2>/dev/null && py=$c
done
site=$([ -n "$py" ] && "$py" -c "import onnxruntime,os;print(os.path.dirname(onnxruntime.__file__))" 2>/dev/null)
ort130=$(ls "$site"/capi/libonnxruntime.so.1.* 2>/dev/null | head -n1)
nv=$(dirname "$site" 2>/dev/null)/nvidia
export LD_LIBRARY_PATH="$pack/lib:${GFXEP_CUDA_LIBS:-}:/usr/local/cuda/lib64:$nv/cudnn/lib:$nv/cu13/lib:$nv/cublas/lib:${LD_LIBRARY_PATH:-}"
export GFXEP_PLUGIN="$pack/lib/libgfxep.so" GFXEP_MODELS_DIR="$pack/models" GFXEP_CUDA_MODULE="$pack/lib/libgfxep_cuda.so" \
  GFXEP_VULKAN_MODULE="$pack/lib/libgfxep_vulkan.so"
ort129="$pack/lib/libonnxruntime.so.1.29"
# the Vulkan loader and GL dispatch libraries the NVIDIA ICD needs, where the machine lacks them (the
# driver brings the ICD, not the loader); unpacking is idempotent, so it is done whenever they came
if ls "$pack"/gl/*.deb >/dev/null 2>&1 && { ! ldconfig -p | grep -q "libvulkan.so.1" || ! ldconfig -p | grep -q "libGLdispatch.so.0"; }; then
  for f in "$pack"/gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
[ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && [ ! -f /usr/share/vulkan/icd.d/nvidia_icd.json ] &&
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json

