"""What the benchmark scripts share: running gfxep-bench for its JSON record; where gfxep's device
time goes, from ONNX Runtime's profile of a gfxep-bench --profile run (each gfxep node is one event with
its device time: CUDA events or Vulkan timestamps); PyTorch's configurations, which one is its best, and
the goal gfxep's latency is held to (used by torch_bench.py and report.py)."""
import json
import os
import re
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


# ---------------------------------------------------------------------------------------------
# PyTorch's configurations, its best, and the goal gfxep is measured against

# (key in a record's "torch_configs", label in the tables): both memory layouts, each eager and
# replayed as one CUDA graph. Channels-last is model.to(memory_format=torch.channels_last) with a
# channels-last input, where cuDNN's NHWC (tensor-core) kernels run.
TORCH_CONFIGS = (("nchw_eager", "nchw+eager"), ("nchw_graph", "nchw+graph"),
                 ("cl_eager", "cl+eager"), ("cl_graph", "cl+graph"))
TORCH_LABELS = dict(TORCH_CONFIGS)


def config_missing(cfg):
    """Why a configuration has no usable time ("" when it has one that counts)."""
    if not isinstance(cfg, dict):
        return "not measured"
    for key in ("not_applicable", "error", "excluded", "missing"):
        if cfg.get(key):
            return f"{key.replace('_', ' ')}: {cfg[key]}" if key != "missing" else cfg[key]
    if cfg.get("p50") is None:
        return "no timing"
    if cfg.get("agrees") is False:
        return "excluded: output disagrees with the float32 reference"
    return ""


def torch_best(configs):
    """The fastest configuration whose output agrees with the float32 reference:
    {"config", "label", "p50", "p99"}, or {"missing": why none counts}."""
    ok = [(c["p50"], k) for k, c in configs.items() if not config_missing(c)]
    if not ok:
        return {"missing": "no PyTorch configuration ran with an agreeing output (" +
                "; ".join(f"{TORCH_LABELS.get(k, k)}: {config_missing(c)}" for k, c in configs.items()) + ")"}
    p50, key = min(ok)
    return {"config": key, "label": TORCH_LABELS.get(key, key), "p50": p50, "p99": configs[key].get("p99")}


# The goal, gfxep p50 / PyTorch's best p50: at most 1.0 for every model, at most 0.8 for the nets
# gfxep is built for, super-resolution and denoising. Which nets those are follows the zoo's names
# (tools/make_zoo.py, bench/torch_bench.py): a scale suffix _x2, _x4 ... is super-resolution
# (espcn_x2, sr64_x4), a name with "denois" or "unet" is a denoiser (unet_denoiser, unet).
GOAL_RULE = ("gfxep ÷ PyTorch's best ≤ 0.8 for super-resolution nets (a scale suffix `_x2`, `_x4`, … in the "
             "name) and denoisers (`unet` or `denois` in the name), ≤ 1.0 for every other model")
GOAL_BY_KIND = {"sr": 0.8, "denoiser": 0.8}
GOAL_DEFAULT = 1.0


def model_kind(name):
    """'sr', 'denoiser' or 'other', from the model's name (see GOAL_RULE)."""
    if re.search(r"_x\d+(_|$)", name):
        return "sr"
    if "denois" in name or "unet" in name:
        return "denoiser"
    return "other"


def goal_ratio(name):
    return GOAL_BY_KIND.get(model_kind(name), GOAL_DEFAULT)
