#!/usr/bin/env bash
# The Windows build, checked here: gfxep for 64-bit Windows cross-compiled with MinGW-w64
# (tools/setup-windows.sh: gfxep.dll, the tools and the ORT-level tests, linked), then run under
# Wine: ONNX Runtime's own Windows x64 build loads gfxep.dll and runs the ORT-level tests on the
# reference backend (build-win's ctest). The Windows code of the modules that build does not link here
# (the CUDA interop code, the Vulkan backend's host code with its Win32 memory and semaphore imports)
# is compile-checked with the same compiler. No D3D12 device, CUDA on Windows or Windows Vulkan
# driver is exercised (docs/interop.md says so).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}
command -v "$cc" >/dev/null || { echo "windows-check: $cc not found (apt-get install gcc-mingw-w64-x86-64)" >&2; exit 1; }
cuda_inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c11 -Wall -Wextra -Werror -D__USE_MINGW_ANSI_STDIO=1 -I"$root/src"
       -isystem "$root/.deps/ort-1.29/include" -isystem "$cuda_inc")
n=0
if [ -f "$cuda_inc/cuda_runtime.h" ]; then
  "$cc" "${flags[@]}" -c "$root/src/backend/cuda/cuda_interop.c" -o "$out/cuda_interop.o"
  n=$((n + 1))
fi
# the Vulkan backend's host code (not vk_shaders.c, which embeds the SPIR-V the build generates),
# against the Vulkan headers of the build machine (libvulkan-dev), given to MinGW alone
if [ -f /usr/include/vulkan/vulkan_core.h ]; then
  mkdir -p "$out/inc"
  ln -s /usr/include/vulkan "$out/inc/vulkan"
  [ -d /usr/include/vk_video ] && ln -s /usr/include/vk_video "$out/inc/vk_video"
  for s in "$root"/src/backend/vulkan/vk_*.c; do
    [ "$(basename "$s")" = vk_shaders.c ] && continue
    "$cc" "${flags[@]}" -isystem "$out/inc" -c "$s" -o "$out/$(basename "$s" .c).o"
    n=$((n + 1))
  done
fi
echo "windows-check: $n module files compile for x86_64-w64-mingw32"

# the plugin, tools and tests, built and linked with warnings as errors, then run under Wine
GFXEP_WIN_CMAKE_ARGS="-DGFXEP_WERROR=ON ${GFXEP_WIN_CMAKE_ARGS:-}" "$root/tools/setup-windows.sh"
build=${GFXEP_WIN_BUILD_DIR:-$root/build-win}
cd "$build"
ctest --output-on-failure -j "${GFXEP_JOBS:-2}"
