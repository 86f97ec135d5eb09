#!/usr/bin/env bash
# Compile-checks gfxep's Windows paths (the interop importer, D3D12 / Win32 handle types, the CUDA
# interop code, the Vulkan backend with its Win32 memory and semaphore imports) with Debian's MinGW-w64
# cross compiler. It compiles, it does not link or run: no
# Windows machine, D3D12 device or CUDA-on-Windows is exercised here (docs/interop.md says so).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}
command -v "$cc" >/dev/null || { echo "windows-check: $cc not found (apt-get install gcc-mingw-w64-x86-64)" >&2; exit 1; }
cuda_inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
out=$(mktemp -d)
flags=(-std=c11 -Wall -Wextra -Werror -D__USE_MINGW_ANSI_STDIO=1 -I"$root/src"
       -isystem "$root/.deps/ort-1.29/include" -isystem "$cuda_inc")
sources=(src/core/status.c src/core/log.c src/core/pool.c src/interop/handles.c src/interop/tensor_view.c
         src/ort/importer.c src/ort/factory.c src/ort/data_transfer.c src/ort/stream.c src/ort/ort_common.c
         src/backend/cuda/cuda_interop.c)
n=0
for s in "${sources[@]}"; do
  "$cc" "${flags[@]}" -c "$root/$s" -o "$out/$(basename "$s" .c).o"
  n=$((n + 1))
done
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
rm -rf "$out"
echo "windows-check: $n files compile for x86_64-w64-mingw32"
