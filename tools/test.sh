#!/usr/bin/env bash
# The tests: set up, build with warnings as errors, run every test ctest knows (unit tests, the
# reference backend, ORT-level tests on ONNX Runtime 1.29 and 1.30). GPU tests run on a machine with
# an NVIDIA GPU through tools/gpu-check.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
GFXEP_CMAKE_ARGS="-DGFXEP_WERROR=ON ${GFXEP_CMAKE_ARGS:-}" "$root/tools/setup.sh"
cd "$build"
ctest --output-on-failure -LE gpu -j "${GFXEP_JOBS:-$(nproc)}" "$@"
