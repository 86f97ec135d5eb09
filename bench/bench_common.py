"""What the benchmark scripts share: running gfxep-bench for its JSON record, and where gfxep's device
time goes, from ONNX Runtime's profile of a gfxep-bench --profile run (each gfxep node is one event with
its device time: CUDA events or Vulkan timestamps)."""
import json
import os
import subprocess


def run_gfxep_bench(cmd, env, timeout):
    """gfxep-bench's command line run once: (its JSON record, None) or (None, why it failed)."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"gfxep-bench timed out after {timeout} s"
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode == 0 and lines:
        return json.loads(lines[-1]), None
    return None, ((p.stderr or p.stdout)[-800:] or f"gfxep-bench exited with {p.returncode}").strip()


def summarize_profile(path):
    """Device time per run of gfxep's kernels by operator, from ORT's profile of gfxep-bench's profiled
    runs: each node's median over the runs (the first run pays one-time costs such as loading kernels)."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as fh:
        events = json.load(fh)
    per_node = {}
    for e in events:
        if str(e.get("name", "")).startswith("gfxep:"):
            key = (e["name"], e.get("args", {}).get("op_name", "?"))
            per_node.setdefault(key, []).append(e.get("dur", 0))
    by_op, total = {}, 0.0
    for (name, op), durs in per_node.items():
        med = sorted(durs)[len(durs) // 2]
        by_op[op] = by_op.get(op, 0.0) + med
        total += med
    top = sorted(by_op.items(), key=lambda kv: -kv[1])[:12]
    nodes = {}
    for (name, op) in per_node:
        nodes[op] = nodes.get(op, 0) + 1
    slowest = sorted(((sorted(d)[len(d) // 2], name) for (name, _), d in per_node.items()), reverse=True)[:6]
    return {"device_us_per_run": round(total, 1), "by_op_us": {k: round(v, 1) for k, v in top},
            "slowest_nodes_us": {name[len("gfxep:"):]: round(us, 1) for us, name in slowest},
            "nodes_by_op": dict(sorted(nodes.items(), key=lambda kv: -kv[1]))}
