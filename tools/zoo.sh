#!/usr/bin/env bash
# The model zoo end to end: writes the zoo (tools/make_zoo.py), runs every model in float32 and
# float16 through gfxep-run, prints a table and writes zoo.json.
#
#   tools/zoo.sh BUILD_DIR [--backend reference|cuda|vulkan] [--size small|full] [--out DIR] [--runs N]
#                [--only name,name] [--graph-opt disable|basic|extended|all]
#
# float32: gfxep against ORT's CPU EP on the same model. Tolerances come from the zoo's manifest:
#   shallow nets (ESPCN, 3 convolutions) atol 1e-5, rtol 1e-4; deep nets atol 1e-4, rtol 1e-3,
#   because ~50 layers of long dot products, summed in different orders (and by the reference
#   backend in double), accumulate rounding that grows with depth and output magnitude.
# float16: gfxep on the float16 model against ORT's CPU EP on its float32 twin (the same weights
#   rounded to float16, the same float16-rounded inputs), per output |err| <= 1e-3 + 2e-2 x max|ref|:
#   float16 keeps 11 significant bits, so the bound is relative to the output's own scale.
# Nodes gfxep leaves to ONNX Runtime are fine: a model passes when its outputs agree, and the table
# says how many nodes gfxep ran (ORT's count after partitioning: float16 models include the Casts ORT
# inserts around nodes its CPU EP has no float16 kernel for).
# --graph-opt: ORT's graph optimization level for both sessions. The default, disable, hands the
# networks to gfxep as written: ORT's basic level would fold BatchNormalization into Conv first.
#
# The zoo is written by GFXEP_PYTHON (default /usr/bin/python3: Debian's, with python3-onnx and
# python3-numpy; any python3 with onnx and numpy will do) into BUILD_DIR/zoo-models-SIZE; results
# (one gfxep-run log and --json file per model and type, and zoo.json) go to --out, by default
# BUILD_DIR/zoo-BACKEND-SIZE.
#
# Exit status: 0 when every model passes, 1 when one does not, 77 when --backend cuda or vulkan is
# asked for and gfxep offers no such device here, 2 on usage or setup errors.
set -euo pipefail

usage() {
  echo "usage: tools/zoo.sh BUILD_DIR [--backend reference|cuda|vulkan] [--size small|full] [--out DIR] [--runs N] [--only a,b]" \
       "[--graph-opt disable|basic|extended|all]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd) || usage
shift
backend=reference size=small out="" runs="" only="" graph_opt=disable
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --graph-opt) graph_opt=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
case "$backend" in reference|cuda|vulkan) ;; *) usage ;; esac
case "$size" in small|full) ;; *) usage ;; esac
case "$graph_opt" in disable|basic|extended|all) ;; *) usage ;; esac
here=$(cd "$(dirname "$0")" && pwd)
python=${GFXEP_PYTHON:-/usr/bin/python3} # Debian's, with python3-onnx and python3-numpy
out=${out:-$build/zoo-$backend-$size}
# timings mean little on the reference backend: one timed run there, more on a GPU
runs=${runs:-$([ "$backend" = reference ] && echo 1 || echo 20)}
for tool in gfxep-run gfxep-info; do
  [ -x "$build/$tool" ] || { echo "zoo: $build/$tool is missing: build first" >&2; exit 2; }
done

# (the whole listing first: with pipefail, grep -q closing the pipe early would fail the check)
info=$("$build/gfxep-info" 2>/dev/null || true)
if [ "$backend" != reference ] && ! grep -q "gfxep.backend = $backend" <<< "$info"; then
  echo "zoo: gfxep offers no $backend device here; skipping"
  exit 77
fi

# the zoo itself: rewritten when the script changed or another size/selection is asked for
models="$build/zoo-models-$size"
stamp="$models/zoo.json"
want="$size ${only:-all}"
if [ ! -f "$stamp" ] || [ "$here/make_zoo.py" -nt "$stamp" ] || [ "$(cat "$models/selection" 2>/dev/null)" != "$want" ]; then
  echo "zoo: writing the $size models into $models"
  rm -rf "$models"
  "$python" "$here/make_zoo.py" "$models" --size "$size" ${only:+--only "$only"}
  echo "$want" > "$models/selection"
fi
mkdir -p "$out"

# one gfxep-run per model and type; its --json result is what the summary reads (fields are
# tab-separated, "-" for no oracle: read collapses empty fields)
failed=0
while IFS=$'\t' read -r name dtype file oracle atol rtol scale; do
  log="$out/$name.$dtype.log"
  args=(--backend "$backend" --runs "$runs" --quiet --graph-opt "$graph_opt" --atol "$atol" --rtol "$rtol" --json "$out/$name.$dtype.json")
  [ "$scale" != 0 ] && args+=(--tol-scale "$scale")
  [ "$oracle" != - ] && args+=(--oracle "$models/$oracle")
  printf 'zoo: %-16s %-5s ' "$name" "$dtype"
  rc=0
  "$build/gfxep-run" "${args[@]}" "$models/$file" > "$log" 2>&1 || rc=$?
  echo "exit $rc" >> "$log"
  case $rc in
    0) echo "agrees" ;;
    1) echo "MISMATCH (see $log)"; failed=1 ;;
    *) echo "ERROR $rc (see $log)"; tail -n 5 "$log" | sed 's/^/    /'; failed=1 ;;
  esac
done < <("$python" - "$stamp" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    t32, t16 = m["tol_fp32"], m["tol_fp16"]
    print("\t".join(map(str, [m["model"], "fp32", m["files"]["fp32"], "-", t32["atol"], t32["rtol"], 0])))
    print("\t".join(map(str, [m["model"], "fp16", m["files"]["fp16"], m["files"]["fp16_ref"], t16["atol"], t16["rtol"],
                              t16["scale_rel"]])))
EOF
)

# the table and zoo.json
"$python" - "$stamp" "$out" "$backend" "$graph_opt" <<'EOF'
import json, os, sys
manifest, out, backend, graph_opt = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
rows = []
for m in manifest["models"]:
    for dtype in ("fp32", "fp16"):
        path = os.path.join(out, "%s.%s.json" % (m["model"], dtype))
        r = json.load(open(path)) if os.path.exists(path) else {"error": "gfxep-run wrote no result", "pass": False}
        outs = r.get("outputs") or []
        worst = lambda key: max((o[key] for o in outs if o[key] is not None), default=None)
        tol = m["tol_" + dtype]
        rows.append({
            "model": m["model"], "dtype": dtype, "input": m["input"],
            "nodes_total": r.get("nodes_total"), "nodes_gfxep": r.get("nodes_gfxep"),
            "max_abs": worst("max_abs"), "max_rel": worst("max_rel"), "ref_max_abs": worst("ref_max_abs"),
            "tolerance": tol, "pass": bool(r.get("pass")) and not r.get("error"),
            "error": r.get("error"), "timings_ms": r.get("timings_ms"), "run": r})

def fmt(v, spec="%.2e"):
    return "-" if v is None else spec % v

def tol_text(t):
    return "atol %g + %g x max|ref|" % (t["atol"], t["scale_rel"]) if t.get("scale_rel") else \
        "atol %g rtol %g" % (t["atol"], t["rtol"])

head = ("model", "dtype", "on gfxep", "max abs err", "max rel err", "max|ref|", "tolerance", "gfxep p50 ms", "result")
lines = []
for r in rows:
    share = "-" if r["nodes_total"] is None else "%d/%d (%.0f%%)" % (
        r["nodes_gfxep"], r["nodes_total"], 100.0 * r["nodes_gfxep"] / max(r["nodes_total"], 1))
    t = r["timings_ms"]
    lines.append((r["model"], r["dtype"], share, fmt(r["max_abs"]), fmt(r["max_rel"]), fmt(r["ref_max_abs"], "%.3g"),
                  tol_text(r["tolerance"]), fmt(t and t["gfxep_p50"], "%.2f"),
                  "pass" if r["pass"] else ("ERROR" if r["error"] else "FAIL")))
widths = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
print()
print("model zoo, %s inputs, %s backend, ORT graph optimizations: %s, ONNX Runtime %s" % (
    manifest["size"], backend, graph_opt, next((r["run"].get("ort_version") for r in rows if r["run"].get("ort_version")), "?")))
for line in [head, tuple("-" * w for w in widths)] + lines:
    print("| " + " | ".join(str(x).ljust(w) for x, w in zip(line, widths)) + " |")
for r in rows:
    if r["error"]:
        print("%s %s: %s" % (r["model"], r["dtype"], r["error"]))
passed = sum(r["pass"] for r in rows)
print("%d passed, %d failed" % (passed, len(rows) - passed))
summary = {"size": manifest["size"], "backend": backend, "graph_opt": graph_opt,
           "tolerances": {
               "fp32_shallow": "atol 1e-5, rtol 1e-4 (a few layers: a few float32 ulps of the output)",
               "fp32_deep": "atol 1e-4, rtol 1e-3 (rounding accumulated over ~50 layers of long dot products, "
                            "summed in different orders)",
               "fp16": "per output |err| <= 1e-3 + 2e-2 x max|ref| against the float32 twin with float16-rounded "
                       "weights and inputs (float16 keeps 11 significant bits)"},
           "passed": passed, "failed": len(rows) - passed, "results": rows}
with open(os.path.join(out, "zoo.json"), "w") as f:
    json.dump(summary, f, indent=1)
    f.write("\n")
print("wrote %s" % os.path.join(out, "zoo.json"))
EOF
exit $failed
