#!/usr/bin/env python3
"""The float32 convolution A/B on a GPU machine: the SR and denoiser nets' float32 Conv layers and the
nets themselves on gfxep's CUDA backend with cuDNN alone (GFXEP_CUDA_CONV_TF32X3=0), with the default
(the three-TF32-product kernel where it was measured faster) and with that kernel on every Conv it can
run (=1), and PyTorch float32 (TF32 off; NCHW and channels-last, each eager and as a CUDA graph, and
the fastest of the four) on the same nets, in one run.
Prints one line per measurement and writes conv32_ab.json to --out.

    python3 bench/conv32_ab.py --bench .device/bin/gfxep-bench --plugin .device/lib/libgfxep.so [--out DIR]

Needs PyTorch with CUDA, onnx and the environment tools/gpu-env.sh sets (GFXEP_ORT_LIB and the rest).
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bench as tb  # noqa: E402

# (name, input channels, output channels, window, activation or "residual" (+ the input, which
# gfxep folds into the Conv), input shape): the nets' own layers
LAYERS = [
    ("espcn_3_64_5x5", 3, 64, 5, "tanh", (1, 3, 540, 960)),
    ("espcn_64_32", 64, 32, 3, "tanh", (1, 64, 540, 960)),
    ("espcn_32_12", 32, 12, 3, None, (1, 32, 540, 960)),
    ("sr64_64_64", 64, 64, 3, "relu", (1, 64, 270, 480)),
    ("sr64_64_64_residual", 64, 64, 3, "residual", (1, 64, 270, 480)),  # the second Conv of its blocks
    ("sr64_64_48", 64, 48, 3, None, (1, 64, 270, 480)),  # its last Conv, before the x4 pixel shuffle
    ("unet_64_32", 64, 32, 3, "relu", (1, 64, 512, 512)),
    ("unet_128_128", 128, 128, 3, "relu", (1, 128, 128, 128)),
]
NETS = ["espcn_x2", "sr64_x4", "unet", "style"]
# label -> the environment the run adds: cuDNN alone, the default rule, the kernel on every Conv it can run
CONFIGS = [("cudnn", {"GFXEP_CUDA_CONV_TF32X3": "0"}), ("default", {}), ("everywhere", {"GFXEP_CUDA_CONV_TF32X3": "1"})]


class Layer(nn.Module):
    def __init__(self, cin, cout, k, act):
        super().__init__()
        self.conv, self.act = nn.Conv2d(cin, cout, k, padding=k // 2), act

    def forward(self, x):
        y = self.conv(x)
        if self.act == "residual":
            return x + y
        return torch.tanh(y) if self.act == "tanh" else torch.relu(y) if self.act == "relu" else y


def gfxep(bench, path, extra, env):
    e = {k: v for k, v in env.items() if not k.startswith("GFXEP_CUDA_CONV_TF32X3")}
    e.update(extra)
    try:
        p = subprocess.run([bench, "--runs", "100", path], env=e, capture_output=True, text=True, timeout=60)
        d = json.loads(p.stdout.strip().splitlines()[-1])
        return {"device_ms": d["gpu_ms"]["p50"], "enqueue_us": d["enqueue_us"]["p50"]}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError, KeyError) as err:
        return {"error": f"{type(err).__name__}: {err}"[-300:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--models-dir", default="/tmp/gfxep-conv32")
    args = ap.parse_args()
    os.makedirs(args.models_dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, GFXEP_PLUGIN=os.path.abspath(args.plugin))
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "torch": torch.__version__,
               "layers": {}, "nets": {}}
    torch.manual_seed(0)
    for name, cin, cout, k, act, shape in LAYERS:
        path = os.path.join(args.models_dir, name + ".onnx")
        tb.export(Layer(cin, cout, k, act).eval(), torch.randn(*shape), path)
        rec = {label: gfxep(args.bench, path, v, env) for label, v in CONFIGS}
        results["layers"][name] = rec
        print(name, json.dumps(rec), flush=True)
    for name in NETS:
        model, shape, _ = tb.build(name)
        path = os.path.join(args.models_dir, name + ".onnx")
        tb.export(model, torch.randn(*shape), path)
        rec = {label: gfxep(args.bench, path, v, env) for label, v in CONFIGS}
        model = model.cuda()
        x = torch.randn(*shape, device="cuda")
        # PyTorch's best float32 configuration: NCHW and channels-last, each eager and as a CUDA graph
        for layout in ("nchw", "cl"):
            if layout == "cl":
                model.to(memory_format=torch.channels_last)
            xin = x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x
            for graph in (False, True):
                st, _ = tb.time_config(model, xin, graph, 100)
                rec[f"torch_{layout}_" + ("graph" if graph else "eager")] = {"device_ms": st["p50"]}
            model.to(memory_format=torch.contiguous_format)
        rec["torch_best_ms"] = min(v["device_ms"] for k, v in rec.items() if k.startswith("torch_"))
        results["nets"][name] = rec
        print(name, json.dumps(rec), flush=True)
    with open(os.path.join(args.out, "conv32_ab.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
