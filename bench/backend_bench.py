#!/usr/bin/env python3
"""gfxep's backends side by side on the model zoo: every zoo model (tools/make_zoo.py) in float32 and
float16 through gfxep-bench (inputs and outputs in device memory) on the CUDA backend, the Vulkan
backend, the Vulkan backend without its cooperative-matrix kernels (GFXEP_VULKAN_NO_COOPMAT=1: the
portable tiled kernels), and with its direct kernels only (the products before the block kernels), in one
run on one GPU. Prints a table and one JSON line; --json writes the records.

    python3 bench/backend_bench.py --bench BUILD/gfxep-bench --zoo ZOO_DIR [--runs 50] [--json FILE]

ZOO_DIR holds zoo.json and the models (tools/make_zoo.py ZOO_DIR --size full). The ratios are the
Vulkan backend's p50 latency over the CUDA backend's on the same model file: #13's goals are <= 1.25
in float16 and <= 1.5 in float32. Latency is Run plus waiting for the outputs, one frame at a time;
gpu_ms (CUDA events) exists on the CUDA backend only, so the ratios use latency on both sides.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_summary import summarize_profile  # noqa: E402

CONFIGS = [  # (name, gfxep-bench backend, extra environment)
    ("cuda", "cuda", {}),
    ("vulkan", "vulkan", {}),
    ("vulkan_portable", "vulkan", {"GFXEP_VULKAN_NO_COOPMAT": "1"}),  # the tiled kernels, no tensor cores
    ("vulkan_direct", "vulkan", {"GFXEP_VULKAN_NO_COOPMAT": "1", "GFXEP_VULKAN_NO_TILED": "1"}),
]


def bench(args, backend, env_extra, path, profile):
    cmd = [args.bench, "--backend", backend, "--runs", str(args.runs)] + \
        ([] if args.no_profile else ["--profile", profile]) + [path]
    env = dict(os.environ, **env_extra)
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {args.timeout} s"
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode == 0 and lines:
        return json.loads(lines[-1]), None
    return None, ((p.stderr or p.stdout)[-400:] or f"exit {p.returncode}").strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--profiles", default="/tmp/gfxep-backend-bench", help="where ORT's profiles go")
    ap.add_argument("--no-profile", action="store_true", help="time only (no profiled session per run)")
    args = ap.parse_args()
    os.makedirs(args.profiles, exist_ok=True)
    manifest = json.load(open(os.path.join(args.zoo, "zoo.json")))
    only = set(filter(None, args.only.split(",")))
    records = []
    for m in manifest["models"]:
        if only and m["model"] not in only:
            continue
        for prec in ("fp32", "fp16"):
            path = os.path.join(args.zoo, m["files"][prec])
            rec = {"model": m["model"], "precision": prec, "input": m["input"]}
            for name, backend, env in CONFIGS:
                r, err = bench(args, backend, env, path, os.path.join(args.profiles, f"{m['model']}_{prec}_{name}"))
                rec[name] = {"latency_ms": r["latency_ms"], "enqueue_us": r["enqueue_us"], "gpu_ms": r["gpu_ms"],
                             "nodes_on_gfxep": r["nodes_on_gfxep"], "nodes_elsewhere": r["nodes_elsewhere"],
                             "profile": summarize_profile(r.get("profile"))} if r else {"error": err}
                print(f"# {m['model']} {prec} {name}: " +
                      (f"{r['latency_ms']['p50']:.3f} ms" if r else f"failed: {err[-200:]}"), file=sys.stderr, flush=True)
            c = rec["cuda"].get("latency_ms")
            for name in ("vulkan", "vulkan_portable", "vulkan_direct"):
                v = rec[name].get("latency_ms")
                if c and v:
                    rec[f"{name}_over_cuda"] = v["p50"] / c["p50"]
            records.append(rec)
    goal = {"fp16": 1.25, "fp32": 1.5}
    print(f"{'model':<15} {'prec':<5} {'cuda p50':>9} {'vk p50':>9} {'vk p99':>9} {'vk/cuda':>8} {'portable':>9} "
          f"{'port/cuda':>9} {'direct':>9} {'dir/cuda':>9} {'vk enq us':>9} {'nodes vk':>9} goal")
    for r in records:
        def p(name, q="p50"):
            x = r[name].get("latency_ms")
            return x[q] if x else float("nan")
        vk = r["vulkan"]
        nodes = f"{vk['nodes_on_gfxep']}/{vk['nodes_on_gfxep'] + vk['nodes_elsewhere']}" if "nodes_on_gfxep" in vk else "-"
        ratio = r.get("vulkan_over_cuda", float("nan"))
        print(f"{r['model']:<15} {r['precision']:<5} {p('cuda'):>9.3f} {p('vulkan'):>9.3f} {p('vulkan', 'p99'):>9.3f} "
              f"{ratio:>8.2f} {p('vulkan_portable'):>9.3f} {r.get('vulkan_portable_over_cuda', float('nan')):>9.2f} "
              f"{p('vulkan_direct'):>9.3f} {r.get('vulkan_direct_over_cuda', float('nan')):>9.2f} "
              f"{vk['enqueue_us']['p50'] if 'enqueue_us' in vk else float('nan'):>9.1f} {nodes:>9} "
              f"{'met' if ratio <= goal[r['precision']] else 'missed'} (<= {goal[r['precision']]})")
    print("\nwhere the device time goes (ORT profile, node by node, us per run: total; by operator; slowest nodes):")
    for r in records:
        for name, _, _ in CONFIGS:
            pr = r[name].get("profile")
            if pr:
                print(f"{r['model']:<15} {r['precision']:<5} {name:<16} {pr['device_us_per_run']:>9.1f}  " +
                      ", ".join(f"{k} {v:.0f}" for k, v in pr["by_op_us"].items()))
                print(f"{'':<38} slowest: " + ", ".join(f"{k} {v:.0f}" for k, v in pr["slowest_nodes_us"].items()))
    failed = sum(1 for r in records for n, _, _ in CONFIGS if "error" in r[n])
    summary = {"backend_bench": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                                  if k in ("model", "precision", "vulkan_over_cuda", "vulkan_portable_over_cuda",
                                           "vulkan_direct_over_cuda")} |
                                 {f"{n}_p50": r[n].get("latency_ms", {}).get("p50") for n, _, _ in CONFIGS}
                                 for r in records], "bench_failures": failed}
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    return 1 if failed or not records else 0


if __name__ == "__main__":
    sys.exit(main())
