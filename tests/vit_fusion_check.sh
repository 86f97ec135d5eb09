#!/bin/bash
# The model zoo's ViT-tiny (tools/make_zoo.py, small inputs: 17 tokens, 12 blocks of 3 heads) through
# gfxep-run at ORT's default graph optimizations, in float32 and float16: the outputs must agree with
# ORT's CPU EP (the float16 model with its float32 twin), and the partition must compile to the node
# count the transformer fusions leave. ORT hands gfxep 345 nodes; in each block the attention (the
# qkv Reshape, three Gathers and Transposes, MatMul, Mul, Softmax, MatMul, Transpose: 12 nodes)
# becomes one node and both residual Adds go into the LayerNormalizations after them (the position
# embedding's Add into the first one): 345 - 12 x 11 - 25 = 188, on every backend and in both types
# (the CUDA backend fuses float32 attention of at most 256 keys without a mask, as here).
#   vit_fusion_check.sh PYTHON GFXEP_RUN OUT_DIR reference|cuda
set -u
py=$1 run=$2 out=$3 backend=$4
if [ "$backend" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no CUDA device: skipped"
  exit 77
fi
mkdir -p "$out"
"$py" "$(dirname "$0")/../tools/make_zoo.py" "$out" --size small --only vit_tiny > /dev/null || exit 1
fail=0
for dtype in fp32 fp16; do
  report=$out/memory_report.$dtype.jsonl
  rm -f "$report"
  args=(--backend "$backend" --runs 1 --atol 1e-4 --rtol 1e-3)
  [ $dtype = fp16 ] && args=(--backend "$backend" --runs 1 --atol 1e-3 --rtol 0 --tol-scale 2e-2 --oracle "$out/vit_tiny.fp16_ref.onnx")
  log=$(GFXEP_MEMORY_REPORT="$report" "$run" "${args[@]}" "$out/vit_tiny.$dtype.onnx" 2>&1)
  rc=$?
  before=$(grep -o 'nodes on gfxep: [0-9]*' <<< "$log" | grep -o '[0-9]*$')
  after=$(grep -o '"nodes": [0-9]*' "$report" 2>/dev/null | awk '{s += $2} END {print s + 0}')
  if [ $rc -ne 0 ] || ! grep -q "on other EPs: 0" <<< "$log"; then
    echo "FAIL vit_tiny $dtype (exit $rc)"
    echo "$log" | tail -6
    fail=1
  elif [ "$before" != 345 ] || [ "$after" != 188 ]; then
    echo "FAIL vit_tiny $dtype: $before nodes from ORT compiled to $after; 345 and 188 expected"
    fail=1
  else
    echo "ok   vit_tiny $dtype: $before nodes -> $after after fusion, $(grep -o 'max abs error [^,]*' <<< "$log" | head -1)"
  fi
done
exit $fail
