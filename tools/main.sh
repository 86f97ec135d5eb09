#!/usr/bin/env bash
# The main job: set up, build, and run the frame pipeline demo with the bundled denoiser: a headless
# Vulkan renderer and gfxep sharing the GPU frame after frame (zero-copy interop), the same frames
# through host memory for comparison, PNGs, a JSON report and a plot in demo-out/. gfxep's device is
# its CUDA device, else a Vulkan GPU (inference on the demo's own VkDevice and queue), else a CPU
# Vulkan (lavapipe: the same zero-copy pipeline at a small resolution), else the reference backend
# with the host pipeline, as the demo says when it starts;
# --backend and --precision choose. Extra arguments go to gfxep-demo (--help lists them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
out=demo-out
for ((i = 1; i <= $#; i++)); do [ "${!i}" = "--out" ] && { j=$((i + 1)); out=${!j}; }; done
"$build/gfxep-demo" "$@"
/usr/bin/python3 "$root/tools/plot_report.py" "$out"
