#!/bin/bash
# gfxep-run --inputs: the values of a raw float32 file reach the model (a Relu of two inputs whose file
# holds 0.75 and -0.5 everywhere must peak at exactly 0.75 in the reference output, which seeded random
# inputs in [-1, 1) do not), and a file of the wrong size is refused with exit code 2 and a message
# naming both sizes, as is a missing file.
#   run_inputs_check.sh PYTHON GFXEP_RUN OUT_DIR
set -u
py=$1 run=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
"$py" - "$out" <<'EOF' || { echo "model writer failed"; exit 1; }
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
out = sys.argv[1]
shape = [1, 3, 4, 4]
nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
g = helper.make_graph(nodes, "inputs_check",
                      [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("a", "b")],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), f"{out}/add_relu.onnx")
# a everywhere 1.25, b everywhere -0.5: y = 0.75; the file holds a's 48 values, then b's
np.concatenate([np.full(48, 1.25, np.float32), np.full(48, -0.5, np.float32)]).tofile(f"{out}/good.f32")
np.full(95, 0.5, np.float32).tofile(f"{out}/short.f32")
EOF
fail=0
"$run" --backend reference --runs 1 --quiet --inputs "$out/good.f32" --json "$out/good.json" "$out/add_relu.onnx" \
  > "$out/good.log" 2>&1
rc=$?
peak=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['outputs'][0]['ref_max_abs'])" "$out/good.json")
if [ "$rc" != 0 ] || [ "$peak" != 0.75 ]; then
  echo "FAIL good file: exit $rc, reference peak $peak (want 0 and 0.75)"
  cat "$out/good.log"
  fail=1
fi
for bad in short missing; do
  "$run" --backend reference --runs 1 --quiet --inputs "$out/$bad.f32" "$out/add_relu.onnx" > "$out/$bad.log" 2>&1
  rc=$?
  want="the input file $out/short.f32 has 380 bytes; the model's 2 input(s) take 384"
  [ "$bad" = missing ] && want="cannot open the input file $out/missing.f32"
  if [ "$rc" != 2 ] || ! grep -qF "$want" "$out/$bad.log"; then
    echo "FAIL $bad file: exit $rc (want 2), message must contain: $want"
    cat "$out/$bad.log"
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "gfxep-run --inputs: a file's values used, a short and a missing file refused"
exit "$fail"
