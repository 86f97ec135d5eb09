#!/usr/bin/env bash
# The main job: set up, build, and run the frame pipeline demo with the bundled denoiser: a headless
# Vulkan renderer and gfxep sharing the GPU frame after frame (zero-copy interop), the same frames
# through host memory for comparison, PNGs, a JSON report and a plot in demo-out/. On a machine
# without an NVIDIA GPU it says so and runs the host pipeline on lavapipe and the reference backend
# at a small resolution. Extra arguments go to gfxep-demo (--help lists them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
out=demo-out
for ((i = 1; i <= $#; i++)); do [ "${!i}" = "--out" ] && { j=$((i + 1)); out=${!j}; }; done
"$build/gfxep-demo" "$@"
/usr/bin/python3 "$root/tools/plot_report.py" "$out"
