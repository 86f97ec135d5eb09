#!/bin/bash
# Writes one op family's attribute-combination models with its generator and runs them through
# gfxep-run on one backend: every model's outputs must agree with ORT's CPU EP. Nodes the family
# leaves to ORT by design (each generator's header says which) may run there; the count of models
# whose nodes all ran on gfxep is printed. All models go through one gfxep-run process (each on its
# own sessions): starting ONNX Runtime and the backend once, not once per model.
#   family_models_check.sh PYTHON GENERATOR GFXEP_RUN OUT_DIR reference|cuda|vulkan ATOL RTOL
set -u
py=$1 gen=$2 run=$3 out=$4 backend=$5 atol=$6 rtol=$7
if [ "$backend" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no CUDA device: skipped"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
"$py" "$gen" "$out" > /dev/null || { echo "generator $gen failed"; exit 1; }
models=("$out"/*.onnx)
printf "%s\n" "${models[@]}" > "$out/models.txt"
# ORT's log goes to stderr, unbuffered: kept apart, so it cannot split the result lines of stdout
"$run" --backend "$backend" --runs 1 --quiet --atol "$atol" --rtol "$rtol" --models "$out/models.txt" > "$out/run.log" \
  2> "$out/run.err"
rc=$?
total=${#models[@]}
pass=$(grep -c "^RESULT pass " "$out/run.log")
whole=$(grep -c "^RESULT pass .* on_other=0$" "$out/run.log")
# every model that did not pass, with the lines gfxep-run printed for it
grep "^RESULT " "$out/run.log" | grep -v "^RESULT pass " | while read -r _ verdict model _; do
  echo "FAIL $(basename "$model") ($verdict)"
  awk -v m="== $model" '$0 == m {on = 1; next} /^== / {on = 0} on' "$out/run.log" | tail -6
done
# models the generator names in must_claim.txt ("NAME" or "NAME !BACKEND" to exempt one backend) must
# run entirely on gfxep: a node of theirs left to ORT is a failure, not a pass
unclaimed=0
if [ -f "$out/must_claim.txt" ]; then
  while read -r name skip; do
    [ -z "$name" ] || [ "$skip" = "!$backend" ] && continue
    if ! grep -q "^RESULT pass $out/$name.onnx on_other=0$" "$out/run.log"; then
      echo "FAIL $name.onnx: not entirely on gfxep ($(grep "^RESULT .*/$name.onnx " "$out/run.log" || echo no result))"
      unclaimed=$((unclaimed + 1))
    fi
  done < "$out/must_claim.txt"
fi
# with FAMILY_REQUIRE_LOWERED=1 (a precision=fp16/bf16 run) a partition that stayed float32 is a
# failure: agreement alone would not show that the lower precision ran
lowered_fail=0
if [ "${FAMILY_REQUIRE_LOWERED:-0}" = 1 ] && grep -q "stays in float32" "$out/run.err"; then
  echo "FAIL: partitions stayed in float32:"
  grep "stays in float32" "$out/run.err" | sed 's/.*gfxep: /  /' | sort | uniq -c | head -5
  lowered_fail=1
fi
echo "$total models: $pass agree with ORT's CPU EP ($whole entirely on gfxep), $((total - pass)) disagree or failed"
[ "$unclaimed" -eq 0 ] || { echo "$unclaimed models that must run entirely on gfxep did not"; exit 1; }
[ "$lowered_fail" -eq 0 ] || exit 1
if [ "$pass" -ne "$total" ] || [ $rc -ne 0 ]; then
  [ $rc -gt 2 ] && { echo "gfxep-run exited with $rc:"; tail -20 "$out/run.log"; tail -20 "$out/run.err"; }
  exit 1
fi
