#!/usr/bin/env python3
"""Where one model's device time goes on each backend and precision: gfxep-bench with ORT's profiler on
(inputs and outputs in device memory), then gfxep's kernels node by node (each node's median over the
profiled runs). Prints one table per configuration and one JSON line.

    python3 bench/profile_model.py --bench BUILD/gfxep-bench MODEL.onnx [--dyn 1080] [--runs 20]
        [--backends cuda,vulkan] [--precisions fp32,fp16] [--json FILE]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import run_gfxep_bench, summarize_profile  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("model")
    ap.add_argument("--dyn", type=int, default=0, help="every dynamic dim of the input (gfxep-bench --dyn)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--backends", default="cuda,vulkan")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--profiles", default="/tmp/gfxep-profile-model")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    os.makedirs(args.profiles, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.model))[0]
    records = []
    for backend in args.backends.split(","):
        for prec in args.precisions.split(","):
            prefix = os.path.join(args.profiles, f"{stem}_{backend}_{prec}")
            cmd = [args.bench, "--backend", backend, "--runs", str(args.runs), "--options", f"precision={prec}",
                   "--profile", prefix] + (["--dyn", str(args.dyn)] if args.dyn else []) + [args.model]
            r, err = run_gfxep_bench(cmd, dict(os.environ), args.timeout)
            rec = {"model": stem, "backend": backend, "precision": prec}
            if r is None:
                rec["error"] = err
                print(f"{stem} {backend} {prec}: FAILED: {err}")
            else:
                rec.update(latency_ms=r.get("latency_ms"), profile=summarize_profile(r.get("profile")))
                pr = rec["profile"] or {}
                print(f"{stem} {backend} {prec}: latency p50 {r['latency_ms']['p50']:.3f} ms; "
                      f"device time of gfxep's nodes {pr.get('device_us_per_run', float('nan'))} us per run")
                for name, us in (pr.get("slowest_nodes_us") or {}).items():
                    print(f"    {us:10.1f} us  {name}")
            records.append(rec)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)
    print(json.dumps({"profile_model": records}))
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
