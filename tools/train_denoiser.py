#!/usr/bin/env python3
"""Trains the frame demo's denoiser on frames the demo itself rendered, and writes it as ONNX.

    gfxep-demo --dump DIR --frames N --width W --height H     # on a machine with Vulkan: clean/noisy pairs
    python3 tools/train_denoiser.py DIR models/demo_denoiser.onnx [--steps 1500]

Needs PyTorch (a GPU makes it take seconds) and the `onnx` package. The network is a small residual
CNN (the noise is predicted and subtracted): conv 3x3 3->C, ReLU, conv 3x3 C->C, ReLU (x2),
conv 3x3 C->3, output = input - prediction. The ONNX graph is written from the trained weights with
onnx.helper (plain Conv/Relu/Sub, opset 17, dynamic height and width), so every node runs on gfxep.
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def load_pairs(folder):
    pairs = []
    for clean_path in sorted(glob.glob(os.path.join(folder, "clean_*.f32"))):
        noisy_path = clean_path.replace("clean_", "noisy_")
        with open(os.path.join(folder, "shape.txt")) as f:
            c, h, w = (int(v) for v in f.read().split())
        clean = np.fromfile(clean_path, np.float32).reshape(c, h, w)
        noisy = np.fromfile(noisy_path, np.float32).reshape(c, h, w)
        pairs.append((noisy, clean))
    if not pairs:
        raise SystemExit(f"no clean_*.f32 / noisy_*.f32 pairs in {folder}")
    return pairs


class Denoiser(torch.nn.Module):
    def __init__(self, width=24, depth=3):
        super().__init__()
        layers = [torch.nn.Conv2d(3, width, 3, padding=1)]
        for _ in range(depth - 1):
            layers.append(torch.nn.Conv2d(width, width, 3, padding=1))
        layers.append(torch.nn.Conv2d(width, 3, 3, padding=1))
        self.convs = torch.nn.ModuleList(layers)

    def forward(self, x):
        h = x
        for i, conv in enumerate(self.convs):
            h = conv(h)
            if i < len(self.convs) - 1:
                h = torch.relu(h)
        return x - h


def export(model, path):
    nodes, inits = [], []
    prev = "noisy"
    for i, conv in enumerate(model.convs):
        w, b = f"w{i}", f"b{i}"
        inits.append(numpy_helper.from_array(conv.weight.detach().cpu().numpy().astype(np.float32), w))
        inits.append(numpy_helper.from_array(conv.bias.detach().cpu().numpy().astype(np.float32), b))
        out = f"c{i}"
        nodes.append(helper.make_node("Conv", [prev, w, b], [out], name=f"conv{i}", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        prev = out
        if i < len(model.convs) - 1:
            nodes.append(helper.make_node("Relu", [out], [f"r{i}"], name=f"relu{i}"))
            prev = f"r{i}"
    nodes.append(helper.make_node("Sub", ["noisy", prev], ["denoised"], name="residual"))
    graph = helper.make_graph(nodes, "demo_denoiser",
                              [helper.make_tensor_value_info("noisy", TensorProto.FLOAT, [1, 3, "H", "W"])],
                              [helper.make_tensor_value_info("denoised", TensorProto.FLOAT, [1, 3, "H", "W"])],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="gfxep")
    m.ir_version = 8
    m.doc_string = "Residual CNN denoiser trained on gfxep-demo's own rendered frames (tools/train_denoiser.py)"
    onnx.checker.check_model(m)
    onnx.save(m, path)


def psnr(a, b):
    mse = float(np.mean((a - b) ** 2))
    return 10 * np.log10(1.0 / max(mse, 1e-12))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("frames")
    ap.add_argument("output")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--crop", type=int, default=96)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    pairs = load_pairs(args.frames)
    held_out = pairs[-1]
    train = pairs[:-1] or pairs
    noisy = torch.tensor(np.stack([p[0] for p in train]), device=dev)
    clean = torch.tensor(np.stack([p[1] for p in train]), device=dev)
    _, _, h, w = noisy.shape
    model = Denoiser().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.steps)
    c = min(args.crop, h, w)
    for step in range(args.steps):
        idx = rng.integers(0, noisy.shape[0], args.batch)
        ys = rng.integers(0, h - c + 1, args.batch)
        xs = rng.integers(0, w - c + 1, args.batch)
        xb = torch.stack([noisy[i, :, y:y + c, x:x + c] for i, y, x in zip(idx, ys, xs)])
        yb = torch.stack([clean[i, :, y:y + c, x:x + c] for i, y, x in zip(idx, ys, xs)])
        loss = torch.mean((model(xb) - yb) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 250 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {loss.item():.6f}", flush=True)
    with torch.no_grad():
        out = model(torch.tensor(held_out[0][None], device=dev))[0].cpu().numpy()
    print(f"held-out frame: PSNR noisy {psnr(held_out[0], held_out[1]):.2f} dB -> "
          f"denoised {psnr(out, held_out[1]):.2f} dB", flush=True)
    export(model.cpu(), args.output)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
