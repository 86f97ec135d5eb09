#!/bin/bash
# Writes one op family's attribute-combination models with its generator and runs each through
# gfxep-run on one backend: every model's outputs must agree with ORT's CPU EP. Nodes the family
# leaves to ORT by design (each generator's header says which) may run there; the count of models
# whose nodes all ran on gfxep is printed.
#   family_models_check.sh PYTHON GENERATOR GFXEP_RUN OUT_DIR reference|cuda ATOL RTOL
set -u
py=$1 gen=$2 run=$3 out=$4 backend=$5 atol=$6 rtol=$7
if [ "$backend" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no CUDA device: skipped"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
"$py" "$gen" "$out" > /dev/null || { echo "generator $gen failed"; exit 1; }
fail=0 total=0 whole=0
for f in "$out"/*.onnx; do
  total=$((total + 1))
  log=$("$run" --backend "$backend" --runs 1 --atol "$atol" --rtol "$rtol" "$f" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $(basename "$f") (exit $rc)"
    echo "$log" | tail -6
    fail=$((fail + 1))
  elif grep -q "on other EPs: 0" <<< "$log"; then
    whole=$((whole + 1))
  fi
done
echo "$total models: $((total - fail)) agree with ORT's CPU EP ($whole entirely on gfxep), $fail disagree"
[ $fail -eq 0 ]
