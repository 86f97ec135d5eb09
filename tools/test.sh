#!/usr/bin/env bash
# The tests: set up, build with warnings as errors, run every test ctest knows that needs no GPU
# (unit, reference backend, ORT-level on ONNX Runtime 1.29 and 1.30, interop API, the Vulkan backend
# and Vulkan producer on lavapipe, the demo end to end, the Windows build under Wine, bounded fuzzing), then
# the same tests again
# in an AddressSanitizer + UndefinedBehaviorSanitizer build (GFXEP_SANITIZE_TESTS=0 skips that).
# GFXEP_TEST_TIER=quick runs the quick tier only (docs/reliability.md has each tier's time).
# GPU tests run on a machine with an NVIDIA GPU through tools/gpu-check.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
# Without a GPU the CUDA module is only compiled, never run: for one architecture, Hopper's (the H200
# tools/gpu-check.sh runs on, so this build can be packed for it as it is); with a GPU, for that GPU
# (tools/setup.sh); GFXEP_CUDA_ARCHITECTURES in GFXEP_CMAKE_ARGS chooses others.
arch_args=""
if ! nvidia-smi -L >/dev/null 2>&1 && [[ "${GFXEP_CMAKE_ARGS:-}" != *GFXEP_CUDA_ARCHITECTURES* ]]; then
  arch_args="-DGFXEP_CUDA_ARCHITECTURES=90"
fi
GFXEP_CMAKE_ARGS="-DGFXEP_WERROR=ON $arch_args ${GFXEP_CMAKE_ARGS:-}" "$root/tools/setup.sh"
cd "$build"
# GFXEP_TEST_TIER=quick: the quick tier alone (no test labelled full: whole models, valgrind, fuzzing,
# the Windows build), without the sanitizer pass; the default runs everything
if [ "${GFXEP_TEST_TIER:-full}" = quick ]; then
  exec ctest --output-on-failure -LE "gpu|full" -j "${GFXEP_JOBS:-$(nproc)}" "$@"
fi
ctest --output-on-failure -LE gpu -j "${GFXEP_JOBS:-$(nproc)}" "$@"

if [ "${GFXEP_SANITIZE_TESTS:-1}" != 0 ]; then
  asan="$build-asan"
  echo "== the same tests under AddressSanitizer + UndefinedBehaviorSanitizer ($asan)"
  cmake -S "$root" -B "$asan" -G Ninja -DGFXEP_SANITIZE=ON -DGFXEP_CUDA=OFF -DGFXEP_WERROR=ON >/dev/null
  cmake --build "$asan" -j "${GFXEP_JOBS:-$(nproc)}"
  cd "$asan"
  export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  asan_supp="suppressions=$root/tests/asan.supp"
  # the compile check and the fuzzers build their own binaries; nothing to sanitize twice. The forced
  # split reductions differ from backend_ops_vulkan's only in shader code and in dispatches the host
  # records, which the sanitizers do not see (lavapipe's JIT code is not instrumented), and took 403 s
  # of the sanitizer pass's 645 s (18 s without sanitizers): they run in the main pass only
  skip="windows|fuzz_bounded|backend_ops_vulkan_split_reduce"
  # lavapipe's JIT-compiled code leaks 128 bytes LeakSanitizer cannot attribute to any library, so the
  # tests that run Vulkan code run with leak detection off (memory errors are still caught)
  vk="vk_producer|demo|vulkan"
  ASAN_OPTIONS="$asan_supp:detect_leaks=0:allocator_may_return_null=1" \
    ctest --output-on-failure -LE "gpu|models" -R "$vk" -E "$skip" -j "${GFXEP_JOBS:-$(nproc)}"
  ASAN_OPTIONS="$asan_supp:detect_leaks=1:allocator_may_return_null=1" \
    ctest --output-on-failure -LE gpu -E "$skip|$vk" -j "${GFXEP_JOBS:-$(nproc)}"
fi
