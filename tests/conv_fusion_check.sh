#!/bin/bash
# Writes the fusion models (tests/conv_fusion_models.py) and runs each through gfxep-run on one
# backend: every node must land on gfxep and the outputs must agree with ORT's CPU EP. On the
# backends that run every fused node (reference, cuda) the transformer models (and, on the reference
# backend, ESPCN) must also compile to the node count their fusions leave (the partition's nodes after
# ir_fuse, from GFXEP_MEMORY_REPORT), so a pattern that stops firing fails here, not only in the
# timings. There the convolution models run again with layout=nhwc: ORT then hands the Convs over
# channels-last between Transposes, which gfxep must take too (more nodes than without), and the
# outputs must still agree.
#   conv_fusion_check.sh PYTHON GFXEP_RUN OUT_DIR reference|cuda|vulkan
set -u
py=$1 run=$2 out=$3 backend=$4
if [ "$backend" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no CUDA device: skipped"
  exit 77
fi
"$py" "$(dirname "$0")/conv_fusion_models.py" "$out" > /dev/null || exit 1
fail=0
# nodes each transformer model compiles to at ORT's default level once fused: the attention pattern
# (MatMul, scale, masks, Softmax, MatMul and the layout nodes of q, k, v) is one node, a residual Add
# goes into the LayerNormalization after it; the nofuse_ ones keep their Softmax
# (the CUDA backend declines fused attention in float32, cuda_supports_node: these float32 models keep
# their products there, so the attention counts hold on the reference backend only); ESPCN's two 3x3
# Convs become one convolution chain (ir/fuse_chain.c) where the backend runs it: on the reference
# backend, 3 nodes (5x5 Conv, chain, DepthToSpace)
expected_nodes() {
  case $backend/$1 in
    cuda/fuse_attention*) ;;
    reference/fuse_espcn.onnx) echo 3 ;;
    */fuse_attention.onnx|*/fuse_attention_scale_first.onnx) echo 4 ;;
    */fuse_attention_kt_output.onnx|*/fuse_attention_swin.onnx|*/fuse_attention_swin_shifted.onnx) echo 6 ;;
    */fuse_residual_layernorm.onnx|*/fuse_residual_layernorm_sum_output.onnx) echo 5 ;;
    */nofuse_attention_*) echo 3 ;;
  esac
}
report=$out/memory_report.jsonl
check() { # check MODEL [gfxep-run options...]
  local f=$1
  shift
  rm -f "$report"
  log=$(GFXEP_MEMORY_REPORT="$report" "$run" --backend "$backend" --runs 1 --atol 1e-4 --rtol 1e-4 "$@" "$f" 2>&1)
  rc=$?
  local want="" got=""
  [ $# -eq 0 ] && [ "$backend" != vulkan ] && want=$(expected_nodes "$(basename "$f")")
  got=$(grep -o '"nodes": [0-9]*' "$report" 2>/dev/null | awk '{s += $2} END {print s + 0}')
  last_nodes=$got
  if [ $rc -ne 0 ] || ! grep -q "on other EPs: 0" <<< "$log"; then
    echo "FAIL $(basename "$f") $* (exit $rc)"
    echo "$log" | tail -8
    fail=1
  elif [ -n "$want" ] && [ "$got" != "$want" ]; then
    echo "FAIL $(basename "$f") $*: compiled to $got nodes, $want expected after the fusions"
    fail=1
  else
    echo "ok   $(basename "$f") $*: $(grep -o 'max abs error [^,]*' <<< "$log")${want:+, $got nodes after fusion}"
  fi
}
# check_nhwc MODEL NODES_WITHOUT: the model with layout=nhwc, which must compile to more nodes; ESPCN
# to exactly as many on the reference backend, whose first Conv reads the NCHW image and whose
# DepthToSpace reads the channels-last tensor (both Transposes folded in, ir/fuse_layout.c), one more
# on CUDA, where only the second fold applies to a float32 model (the first needs the 16-bit
# few-channel kernel)
check_nhwc() {
  local f=$1 before=$2 log rc got want=""
  if [ "$(basename "$f")" = fuse_espcn.onnx ]; then
    want=$before
    [ "$backend" = cuda ] && want=$((before + 1))
  fi
  rm -f "$report"
  log=$(GFXEP_EP_OPTIONS=layout=nhwc GFXEP_MEMORY_REPORT="$report" "$run" --backend "$backend" --runs 1 --atol 1e-4 \
    --rtol 1e-4 "$f" 2>&1)
  rc=$?
  got=$(grep -o '"nodes": [0-9]*' "$report" 2>/dev/null | awk '{s += $2} END {print s + 0}')
  if [ $rc -ne 0 ] || ! grep -q "on other EPs: 0" <<< "$log"; then
    echo "FAIL $(basename "$f") layout=nhwc (exit $rc)"
    echo "$log" | tail -8
    fail=1
  elif [ -z "$want" ] && [ "$got" -le "$before" ]; then
    echo "FAIL $(basename "$f") layout=nhwc: $got nodes on gfxep, not more than the $before without (no channels-last Conv)"
    fail=1
  elif [ -n "$want" ] && [ "$got" != "$want" ]; then
    echo "FAIL $(basename "$f") layout=nhwc: compiled to $got nodes, $want expected (the Transposes folded in)"
    fail=1
  else
    echo "ok   $(basename "$f") layout=nhwc: $(grep -o 'max abs error [^,]*' <<< "$log"), $got nodes (NCHW: $before)"
  fi
}
for f in "$out"/*.onnx; do
  check "$f"
  case $backend/$(basename "$f") in
    vulkan/*) ;;
    */fuse_conv_*|*/fuse_espcn.onnx|*/fuse_resnet_blocks.onnx|*/fuse_sr_residual.onnx) check_nhwc "$f" "$last_nodes" ;;
  esac
  # ORT's transpose optimizer moves attention's kᵀ Transpose up the graph at its default level:
  # without it gfxep sees (and fuses) the Transpose -> MatMul pattern as exported
  case $(basename "$f") in fuse_attention*|nofuse_attention*|fuse_residual*) check "$f" --graph-opt disable ;; esac
done
exit $fail
