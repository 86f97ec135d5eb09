#!/bin/bash
# Writes the fusion models (tests/conv_fusion_models.py) and runs each through gfxep-run on one
# backend: every node must land on gfxep and the outputs must agree with ORT's CPU EP.
#   conv_fusion_check.sh PYTHON GFXEP_RUN OUT_DIR reference|cuda
set -u
py=$1 run=$2 out=$3 backend=$4
if [ "$backend" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no CUDA device: skipped"
  exit 77
fi
"$py" "$(dirname "$0")/conv_fusion_models.py" "$out" > /dev/null || exit 1
fail=0
check() { # check MODEL [gfxep-run options...]
  local f=$1
  shift
  log=$("$run" --backend "$backend" --runs 1 --atol 1e-4 --rtol 1e-4 "$@" "$f" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q "on other EPs: 0" <<< "$log"; then
    echo "FAIL $(basename "$f") $* (exit $rc)"
    echo "$log" | tail -8
    fail=1
  else
    echo "ok   $(basename "$f") $*: $(grep -o 'max abs error [^,]*' <<< "$log")"
  fi
}
for f in "$out"/*.onnx; do
  check "$f"
  # ORT's transpose optimizer moves attention's kᵀ Transpose up the graph at its default level:
  # without it gfxep sees (and fuses) the Transpose -> MatMul pattern as exported
  case $(basename "$f") in fuse_attention*) check "$f" --graph-opt disable ;; esac
done
exit $fail
