#!/usr/bin/env bash
# The main job: set up, build, and run the bundled model through ONNX Runtime with gfxep — on CUDA
# where gfxep finds an NVIDIA GPU, otherwise on the reference backend — printing where every node
# ran, the agreement with ORT's own CPU EP, and latencies. Extra arguments go to gfxep-run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
exec "$build/gfxep-run" "$@" "$build/models/denoise_small.onnx"
