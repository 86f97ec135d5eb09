#!/usr/bin/env bash
# The benchmark, one command on a machine with an NVIDIA GPU and PyTorch: every zoo model of
# bench/torch_bench.py on PyTorch eager, PyTorch CUDA graphs, gfxep and ORT's CPU EP, with a table on
# stdout, progress on stderr, and bench.json under OUT (default ./bench-out). Run it from a checkout
# with a pack from tools/gpu-pack.sh (default .device):
#
#   bash tools/gpu-bench.sh [.device] [--models espcn_x2,resnet50] [--runs 100]
#
# Then, on any machine: python3 bench/report.py OUT/bench.json writes docs/performance.md and the plot.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pack=$(cd "${1:-$root/.device}" && pwd)
shift || true
source "$root/tools/gpu-env.sh"
export GFXEP_ORT_LIB=$ort129
out=${OUT:-$PWD/bench-out}
mkdir -p "$out"
[ -n "$py" ] || { echo "gpu-bench: no python with onnxruntime found" >&2; exit 2; }
timeout -k 10 1500 "$py" "$root/bench/torch_bench.py" --bench "$pack/bin/gfxep-bench" --plugin "$pack/lib/libgfxep.so" \
  --out "$out" --models-dir "${BENCH_MODELS_DIR:-/tmp/gfxep-bench-models}" "$@"
