#!/usr/bin/env bash
# The benchmark, one command on a machine with an NVIDIA GPU and PyTorch: every zoo model of
# bench/torch_bench.py on PyTorch in four configurations (NCHW and channels-last, eager and CUDA graph;
# PyTorch's best is the fastest whose output agrees), gfxep and ORT's CPU EP, with a table on stdout,
# progress on stderr, and bench.json under OUT (default ./bench-out). Run it from a checkout with a pack
# from tools/gpu-pack.sh (default .device):
#
#   bash tools/gpu-bench.sh [.device] [--models espcn_x2,resnet50] [--runs 100]
#
# BENCH_MODELS=espcn_x2,unet picks models too. The whole run takes about 5 minutes on an H200 and is
# held under 10: models not started after BENCH_BUDGET_S seconds (default 420) and the kernel section
# are recorded as skipped, each gfxep-bench call has its own timeout, and the whole script a hard one
# (bench.json is rewritten after each model, so what was measured survives it).
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
start=$SECONDS
timeout -k 10 560 "$py" "$root/bench/torch_bench.py" --bench "$pack/bin/gfxep-bench" --plugin "$pack/lib/libgfxep.so" \
  --out "$out" --models-dir "${BENCH_MODELS_DIR:-/tmp/gfxep-bench-models}" --timeout 90 \
  --budget-s "${BENCH_BUDGET_S:-420}" ${BENCH_MODELS:+--models "$BENCH_MODELS"} "$@"
rc=$?
[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "gpu-bench: stopped by its time limit; $out/bench.json has the models finished" >&2
echo "gpu-bench: exit $rc after $((SECONDS - start)) s; results in $out/bench.json" >&2
exit $rc
