#!/usr/bin/env bash
# Prepares a fresh Debian/Ubuntu machine and builds gfxep into build/ (or $GFXEP_BUILD_DIR):
# Debian packages via apt-get (when missing), ONNX Runtime from npm (pinned, hash-checked), then
# CMake + Ninja. The CUDA backend is built when nvcc is found (PATH or /usr/local/cuda).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}

# What the build needs, as "check|package": a command found on PATH (tools may come from elsewhere,
# e.g. a Node.js install that brings npm), a Debian package that must be installed, or a Python
# module Debian's python3 must import.
needs=(
  "cmd:cmake|cmake" "cmd:ninja|ninja-build" "cmd:gcc|gcc" "cmd:npm|npm" "cmd:openssl|openssl"
  "pkg:libcmocka-dev|libcmocka-dev" "pkg:libcjson-dev|libcjson-dev" "pkg:libc6-dev|libc6-dev"
  "pkg:ca-certificates|ca-certificates"
  "py:onnx|python3-onnx" "py:numpy|python3-numpy" "py:matplotlib|python3-matplotlib" "pkg:libpng-dev|libpng-dev"
  "pkg:libvulkan-dev|libvulkan-dev" "cmd:glslc|glslc" "pkg:mesa-vulkan-drivers|mesa-vulkan-drivers"
  "cmd:x86_64-w64-mingw32-gcc|gcc-mingw-w64-x86-64" "cmd:clang|clang" "pkg:libclang-rt-14-dev|libclang-rt-14-dev"
  "pkg:wine64|wine64" "cmd:dpkg-source|dpkg-dev" "cmd:xvfb-run|xvfb" "cmd:xauth|xauth"
)
missing=()
for n in "${needs[@]}"; do
  check=${n%%|*} package=${n##*|} kind=${check%%:*} what=${check#*:}
  case $kind in
    cmd) command -v "$what" >/dev/null 2>&1 && continue ;;
    pkg) dpkg-query -W -f='${Status}' "$what" 2>/dev/null | grep -q "install ok installed" && continue ;;
    py) [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $what" 2>/dev/null && continue ;;
  esac
  missing+=("$package")
done
bash "$root/tools/apt-install.sh" setup ${missing[@]+"${missing[@]}"}

"$root/tools/setup-ort.sh"

cuda_args=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
# The CUDA kernels are compiled for the GPUs this machine has (nvidia-smi's compute capabilities, e.g.
# 90 on an H200); without a GPU, for the documented list of src/backend/cuda/CMakeLists.txt (75 80 86
# 89 90 120). GFXEP_CMAKE_ARGS="-DGFXEP_CUDA_ARCHITECTURES=..." chooses others.
if [[ "${GFXEP_CMAKE_ARGS:-}" != *GFXEP_CUDA_ARCHITECTURES* ]] && command -v nvidia-smi >/dev/null 2>&1; then
  caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$' | sort -u |
         paste -sd ';' || true)
  [ -n "$caps" ] && cuda_args+=("-DGFXEP_CUDA_ARCHITECTURES=$caps")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda_args[@]}" ${GFXEP_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${GFXEP_JOBS:-$(nproc)}"
