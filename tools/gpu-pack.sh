#!/usr/bin/env bash
# Packs what the GPU machine needs into .device/ (git-ignored; it travels with the tree to the GPU machine):
# the built libraries, test and tool binaries, models, the op-level cases, ORT 1.29, and libcmocka and
# libcjson (absent there).
# The GPU machine runs `bash tools/gpu-check.sh` on it. Build first (tools/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
out="$root/.device"
rm -rf "$out"; mkdir -p "$out/lib" "$out/bin" "$out/models"
# the H200 runs sm_90 code: a module built without it would fall back to JIT-compiling PTX there
archs=$(sed -n 's/^GFXEP_CUDA_ARCHITECTURES:STRING=//p' "$build/CMakeCache.txt")
if [[ ";$archs;" != *";90;"* ]]; then
  echo "gpu-pack: the CUDA module in $build is built for '$archs', without 90 (the H200); rebuild with" \
       "GFXEP_CMAKE_ARGS=-DGFXEP_CUDA_ARCHITECTURES=90" >&2
  exit 1
fi
cp "$build/libgfxep.so" "$build/libgfxep_cuda.so" "$out/lib/"
[ -f "$build/libgfxep_vulkan.so" ] && cp "$build/libgfxep_vulkan.so" "$out/lib/"
cp "$root/.deps/ort-1.29/lib/libonnxruntime.so" "$out/lib/libonnxruntime.so.1.29"
cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 "$out/lib/"
cp -L /usr/lib/x86_64-linux-gnu/libcjson.so.1 "$out/lib/"
cp -L /usr/lib/x86_64-linux-gnu/libpng16.so.16 "$out/lib/"
for t in tests/test_ort tests/test_backend_ops tests/test_user_stream_cuda tests/test_ref_kernels tests/test_interop \
         tests/test_interop_vulkan tests/test_vk_producer gfxep-run gfxep-alloc-bench gfxep-demo gfxep-bench gfxep-info gfxep-minimal \
         tests/test_soak tests/test_faults tests/test_concurrency tests/test_frames gfxep-graph-launch-cost gfxep-mma-peak; do
  [ -x "$build/$t" ] && cp "$build/$t" "$out/bin/"
done
for t in test_ir test_pool test_op_cases test_vulkan_backend; do [ -x "$build/tests/$t" ] && cp "$build/tests/$t" "$out/bin/"; done
cp "$build"/models/*.onnx "$root"/models/*.onnx "$out/models/"
[ -d "$build/opcases" ] && cp -r "$build/opcases" "$out/opcases"
# the Vulkan loader the GPU machine lacks (Debian packages, unpacked there by gpu-check.sh)
if [ ! -d "$root/.gl" ]; then bash "$root/../shared/tools/fetch-device-debs.sh" "$root/.gl" >/dev/null 2>&1 || true; fi
[ -d "$root/.gl" ] && mkdir -p "$out/gl" && cp "$root"/.gl/*.deb "$out/gl/" 2>/dev/null || true
strip --strip-debug "$out"/lib/libgfxep*.so "$out"/bin/* 2>/dev/null || true
# the CUDA module (kernels for six GPU generations) and ORT are most of the pack: gzipped, so that the
# pack stays under 64 MiB on its way to the GPU machine; gpu-env.sh unpacks them there
gzip -6 "$out/lib/libgfxep_cuda.so" "$out/lib/libonnxruntime.so.1.29"
du -sh "$out"
