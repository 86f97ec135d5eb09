"""gfxep against PyTorch on the same GPU, the same model, the same weights and the same precision.

Every model is defined once here in PyTorch, exported to ONNX with torch.onnx.export, and then run by
  - PyTorch (cuDNN, TF32 off so float32 means float32) in four configurations: NCHW and channels-last
    (model.to(memory_format=torch.channels_last) and a channels-last input, where cuDNN's NHWC tensor-core
    kernels run), each eager and with the whole forward captured as one CUDA graph; PyTorch's best is the
    fastest of them whose output agrees with the float32 reference (a configuration that disagrees is
    marked "excluded" in the JSON and not counted; channels-last without a 4-D input is "not_applicable"),
  - PyTorch's TF32 default for float32 (NCHW, eager and graph; shown apart, never PyTorch's best),
  - gfxep through ONNX Runtime (gfxep-bench: inputs and outputs already in device memory),
  - ONNX Runtime's CPU EP (float32 only; what a user gets without a GPU EP).
gfxep's outputs are checked against PyTorch's on the same input first (and, for float32, ORT's CPU
EP); a model whose outputs disagree is reported as such and does not meet its goal. The goal is gfxep's
p50 over PyTorch's best p50 (bench_common.GOAL_RULE: 0.8 for super-resolution and denoisers, else 1.0).

    python3 bench/torch_bench.py --bench build/gfxep-bench --plugin build/libgfxep.so --out DIR
        [--models espcn_x2,resnet50,...] [--runs 100] [--budget-s 450] [--no-kernels]

Prints progress to stderr, a table to stdout, and writes DIR/bench.json (one record per model and
precision, rewritten after each), which bench/report.py turns into docs/performance.md. Latencies are
medians (p50) and p99 over --runs synchronized runs, in milliseconds.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import (TORCH_CONFIGS, goal_ratio, model_kind, run_gfxep_bench,  # noqa: E402
                          summarize_profile, torch_best)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# model definitions (random weights, fixed seed)


class ESPCN(nn.Module):
    """ESPCN-style super-resolution: features at low resolution, sub-pixel shuffle at the end."""

    def __init__(self, scale=2, channels=3):
        super().__init__()
        self.c1 = nn.Conv2d(channels, 64, 5, padding=2)
        self.c2 = nn.Conv2d(64, 32, 3, padding=1)
        self.c3 = nn.Conv2d(32, channels * scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        x = torch.tanh(self.c1(x))
        x = torch.tanh(self.c2(x))
        return self.shuffle(self.c3(x))


class SR64(nn.Module):
    """A heavier x4 SR net: 64-channel body with residual blocks, pixel shuffle to 4x."""

    def __init__(self, blocks=4):
        super().__init__()
        self.head = nn.Conv2d(3, 64, 3, padding=1)
        self.body = nn.ModuleList(nn.Conv2d(64, 64, 3, padding=1) for _ in range(2 * blocks))
        self.up = nn.Conv2d(64, 3 * 16, 3, padding=1)
        self.shuffle = nn.PixelShuffle(4)

    def forward(self, x):
        x = self.head(x)
        for i in range(0, len(self.body), 2):
            x = x + self.body[i + 1](F.relu(self.body[i](x)))
        return self.shuffle(self.up(x))


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = mid * 4
        self.c1, self.b1 = nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.c2, self.b2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid)
        self.c3, self.b3 = nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        if depth == 50:
            for mid, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                for i in range(n):
                    layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
                    cin = mid * 4
        else:
            for cout, n, stride in ((64, 2, 1), (128, 2, 2), (256, 2, 2), (512, 2, 2)):
                for i in range(n):
                    layers.append(Basic(cin, cout, stride if i == 0 else 1))
                    cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6()]
        layers += [nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(),
                   nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        cin = 32
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class UNet(nn.Module):
    """A denoiser: two levels down (max pool), up by transposed conv and by bilinear resize, skips."""

    def __init__(self, c=32):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.e1, self.e2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = block(4 * c, 2 * c)
        self.red1 = nn.Conv2d(2 * c, c, 1)
        self.d1 = block(2 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([self.up2(m), e2], 1))
        u1 = F.interpolate(self.red1(d2), scale_factor=2, mode="bilinear", align_corners=False)
        d1 = self.d1(torch.cat([u1, e1], 1))
        return x - self.out(d1)


class StyleTransfer(nn.Module):
    """Johnson-style fast style transfer: reflection padding, instance norm, nearest upsampling."""

    def __init__(self):
        super().__init__()
        def conv(i, o, k, s=1):
            return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, s), nn.InstanceNorm2d(o, affine=True))
        self.down = nn.Sequential(conv(3, 32, 9), nn.ReLU(), conv(32, 64, 3, 2), nn.ReLU(), conv(64, 128, 3, 2), nn.ReLU())
        self.res = nn.ModuleList(nn.Sequential(conv(128, 128, 3), nn.ReLU(), conv(128, 128, 3)) for _ in range(5))
        self.up1, self.up2 = conv(128, 64, 3), conv(64, 32, 3)
        self.out = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(32, 3, 9))

    def forward(self, x):
        x = self.down(x)
        for r in self.res:
            x = x + r(x)
        x = F.relu(self.up1(F.interpolate(x, scale_factor=2, mode="nearest")))
        x = F.relu(self.up2(F.interpolate(x, scale_factor=2, mode="nearest")))
        return self.out(x)


class ViT(nn.Module):
    """A small vision transformer (ViT-Tiny shape): written out so it exports as MatMul/Softmax/LayerNorm/Gelu."""

    def __init__(self, dim=192, depth=12, heads=3, patch=16, image=224, classes=1000):
        super().__init__()
        self.heads, self.patch = heads, patch
        self.embed = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.ModuleList()
        for _ in range(depth):
            self.blocks.append(nn.ModuleDict({
                "n1": nn.LayerNorm(dim), "qkv": nn.Linear(dim, 3 * dim), "proj": nn.Linear(dim, dim),
                "n2": nn.LayerNorm(dim), "fc1": nn.Linear(dim, 4 * dim), "fc2": nn.Linear(4 * dim, dim)}))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        b, n, d = x.shape
        h = self.heads
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["n1"](x)).reshape(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
            a = torch.softmax(q @ k.transpose(-2, -1) * (d // h) ** -0.5, dim=-1)
            x = x + blk["proj"]((a @ v).transpose(1, 2).reshape(b, n, d))
            x = x + blk["fc2"](F.gelu(blk["fc1"](blk["n2"](x))))
        return self.head(self.norm(x)[:, 0])


# name: (constructor, input shape, precisions). SR nets output 1920x1080.
MODELS = {
    "espcn_x2": (lambda: ESPCN(2), (1, 3, 540, 960), ("fp16", "fp32")),
    "sr64_x4": (lambda: SR64(), (1, 3, 270, 480), ("fp16", "fp32")),
    "unet": (lambda: UNet(), (1, 3, 512, 512), ("fp32", "fp16")),
    "style": (lambda: StyleTransfer(), (1, 3, 512, 512), ("fp32", "fp16")),
    "resnet18": (lambda: ResNet(18), (1, 3, 224, 224), ("fp32", "fp16")),
    "resnet50": (lambda: ResNet(50), (1, 3, 224, 224), ("fp32", "fp16")),
    "mobilenetv2": (lambda: MobileNetV2(), (1, 3, 224, 224), ("fp32", "fp16")),
    "vit_tiny": (lambda: ViT(), (1, 3, 224, 224), ("fp32", "fp16")),
}


def build(name):
    torch.manual_seed(0)
    ctor, shape, precisions = MODELS[name]
    m = ctor().eval()
    with torch.no_grad():  # BatchNorm statistics away from identity, so folding them is exercised
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
    return m, shape, precisions


# ---------------------------------------------------------------------------------------------
# timing


def stats(ms):
    ms = sorted(ms)
    return {"p50": ms[len(ms) // 2], "p99": ms[min(len(ms) - 1, int(math.ceil(0.99 * len(ms))) - 1)]}


def time_torch(fn, runs, warmup=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
    return stats(ms)


def time_config(model, x, graph, runs):
    """One PyTorch configuration: p50/p99 of the forward called eagerly, or captured once as a CUDA graph
    and replayed, and the output of one more call (float32, on the host) to check against the reference."""
    with torch.no_grad():
        if not graph:
            st = time_torch(lambda: model(x), runs)
            return st, model(x).float().cpu().numpy()
        static_x = x.clone()  # keeps x's memory format
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = model(static_x)
        st = time_torch(g.replay, runs)
        g.replay()
        out = static_y.float().cpu().numpy()
        del g, static_y
        return st, out


def torch_configs(model, x, runs, ref, tol):
    """PyTorch in each of TORCH_CONFIGS: {key: {"p50", "p99", "vs_torch_fp32", "agrees"}}, with "excluded"
    (and why) where the output disagrees with the float32 reference beyond tol, "error" where the
    configuration failed, "not_applicable" where it does not apply (channels-last needs a 4-D input)."""
    out = {}
    for key, label in TORCH_CONFIGS:
        layout, mode = key.split("_")
        if layout == "cl" and x.dim() != 4:
            out[key] = {"not_applicable": f"the input is {x.dim()}-D; channels-last is a 4-D memory format"}
            continue
        try:
            xin = x
            if layout == "cl":
                model.to(memory_format=torch.channels_last)
                xin = x.contiguous(memory_format=torch.channels_last)
            st, got = time_config(model, xin, mode == "graph", runs)
            c = compare(got, ref)
            agrees = c["finite"] and c["max_rel_to_peak"] is not None and c["max_rel_to_peak"] <= tol
            out[key] = dict(st, vs_torch_fp32=c, agrees=agrees)
            if not agrees:
                out[key]["excluded"] = ("non-finite output" if not c["finite"] else
                                        f"output disagrees with the float32 reference: err/peak "
                                        f"{c['max_rel_to_peak']:.2e} > {tol:g}")
        except Exception as e:  # noqa: BLE001 — reported per configuration, the others go on
            out[key] = {"error": f"{type(e).__name__}: {e}"[-400:]}
            log(f"PyTorch {label} failed: {out[key]['error']}")
        finally:
            if layout == "cl":
                model.to(memory_format=torch.contiguous_format)
    return out


def export(model, x, path):
    kwargs = dict(input_names=["input"], output_names=["output"], opset_version=17)
    try:
        torch.onnx.export(model, x, path, dynamo=False, **kwargs)
    except TypeError:
        torch.onnx.export(model, x, path, **kwargs)


def compare(got, want):
    """max |got - want| and that over max |want|; None for those where got is not finite (JSON has no NaN)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    scale = max(float(np.max(np.abs(want))), 1e-6)
    finite = bool(np.all(np.isfinite(got)))
    diff = float(np.max(np.abs(got - want))) if finite else None
    return {"max_abs": diff, "max_rel_to_peak": diff / scale if finite else None, "finite": finite}


# ---------------------------------------------------------------------------------------------
# kernel efficiency: single-op models against what the GPU measurably does


def single_op_model(path, op, shapes, dtype, attrs=None, weights=None, extra=None):
    """A one-node ONNX model: inputs x0.., optional constant weights (in the model's float type),
    then `extra` inputs as (name, array kept in its own type, or None for an absent input), output y."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    et = TensorProto.FLOAT16 if dtype == "fp16" else TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(f"x{i}", et, s) for i, s in enumerate(shapes)]
    inits, names = [], [f"x{i}" for i in range(len(shapes))]
    for i, w in enumerate(weights or []):
        inits.append(numpy_helper.from_array(w.astype(np.float16 if dtype == "fp16" else np.float32), f"w{i}"))
        names.append(f"w{i}")
    for name, a in extra or []:
        if a is not None:
            inits.append(numpy_helper.from_array(a, name))
        names.append(name if a is not None else "")
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    g = helper.make_graph([node], op.lower(), ins, [helper.make_tensor_value_info("y", et, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def kernel_efficiency(args, env, models_dir, deadline=None):
    """Achieved bandwidth of memory-bound ops against a measured device-to-device copy, and achieved
    FLOP/s of large fp16 GEMMs and convolutions against PyTorch's best on the same shapes (the
    measured tensor-core peak of this GPU through cuBLAS/cuDNN). Rows not started by `deadline`
    (time.time()) are recorded as skipped."""
    out = []
    n = 64 * 1080 * 1920  # a 64-channel 1080p feature map
    x = torch.empty(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    copy_ms = time_torch(lambda: y.copy_(x), 50)["p50"]
    copy_gbs = 2 * n * 2 / copy_ms / 1e6
    rng = np.random.default_rng(0)
    cases = [
        ("Add fp16 64x1080x1920", "Add", [[1, 64, 1080, 1920]] * 2, "fp16", None, None, 3 * n * 2, 0),
        ("Relu fp16 64x1080x1920", "Relu", [[1, 64, 1080, 1920]], "fp16", None, None, 2 * n * 2, 0),
        ("Relu fp32 64x1080x1920", "Relu", [[1, 64, 1080, 1920]], "fp32", None, None, 2 * n * 4, 0),
        ("MatMul fp16 4096^3", "MatMul", [[4096, 4096]], "fp16", None, [rng.standard_normal((4096, 4096)) * 0.02],
         0, 2 * 4096 ** 3),
        ("Conv fp16 3x3 256->256 at 128x128, batch 8", "Conv", [[8, 256, 128, 128]], "fp16", {"pads": [1, 1, 1, 1]},
         [rng.standard_normal((256, 256, 3, 3)) * 0.02], 0, 2 * 8 * 256 * 256 * 9 * 128 * 128),
    ]
    # the data movement of the graphics nets: reflection padding (style transfer), nearest and
    # bilinear x2 upsampling (decoders, segmentation heads), DepthToSpace (sub-pixel SR), a channel
    # Concat (skip connections), a Transpose to channels-last and a crop (Slice), all to or from a
    # 64-channel or RGB 1080p map
    q = 64 * 540 * 960
    moves = [
        ("Pad reflect fp16 64x1078x1918", "Pad", [[1, 64, 1078, 1918]], "fp16", {"mode": "reflect"},
         [("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], (64 * 1078 * 1918 + n) * 2),
        ("Resize nearest x2 fp16 64x540x960", "Resize", [[1, 64, 540, 960]], "fp16", {"mode": "nearest"},
         [("roi", None), ("scales", np.array([1, 1, 2, 2], np.float32))], (q + n) * 2),
        ("Resize linear x2 fp16 64x540x960", "Resize", [[1, 64, 540, 960]], "fp16", {"mode": "linear"},
         [("roi", None), ("scales", np.array([1, 1, 2, 2], np.float32))], (q + n) * 2),
        ("DepthToSpace x2 fp16 12x540x960", "DepthToSpace", [[1, 12, 540, 960]], "fp16", {"blocksize": 2},
         [], 2 * 3 * 1080 * 1920 * 2),
        ("Concat channels fp16 2x 32x1080x1920", "Concat", [[1, 32, 1080, 1920]] * 2, "fp16", {"axis": 1},
         [], 2 * n * 2),
        ("Transpose NCHW->NHWC fp16 64x540x960", "Transpose", [[1, 64, 540, 960]], "fp16", {"perm": [0, 2, 3, 1]},
         [], 2 * q * 2),
        ("Slice crop fp16 64x1088x1928 to 1080x1920", "Slice", [[1, 64, 1088, 1928]], "fp16", None,
         [("starts", np.array([4, 4], np.int64)), ("ends", np.array([1084, 1924], np.int64)),
          ("axes", np.array([2, 3], np.int64))], 2 * n * 2),
    ]
    extras = {}
    for name, op, shapes, dtype, attrs, extra, bytes_moved in moves:
        cases.append((name, op, shapes, dtype, attrs, None, bytes_moved, 0))
        extras[name] = extra
    for name, op, shapes, dtype, attrs, weights, bytes_moved, flops in cases:
        rec = {"kernel": name}
        if deadline is not None and time.time() > deadline:
            rec["error"] = "skipped: the run's time budget was spent"
            out.append(rec)
            continue
        path = os.path.join(models_dir, name.split()[0].lower() + "_" + dtype + ".onnx")
        single_op_model(path, op, shapes, dtype, attrs, weights, extras.get(name))
        p = subprocess.run([args.bench, "--runs", "50", path], env=env, capture_output=True, text=True,
                           timeout=args.timeout)
        line = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode or not line:
            rec["error"] = (p.stderr or p.stdout)[-400:]
            out.append(rec)
            continue
        g = json.loads(line[-1])
        ms = g["gpu_ms"]["p50"]
        rec["gpu_ms"] = ms
        rec["nodes_on_gfxep"] = g["nodes_on_gfxep"]
        # the same model on gfxep's Vulkan backend (same GPU, its own VkDevice): device time from the
        # frame timings, which every backend writes (gpu_ms is CUDA's events only)
        vk = subprocess.run([args.bench, "--backend", "vulkan", "--frame-timings", "--runs", "50", path], env=env,
                            capture_output=True, text=True, timeout=args.timeout)
        vk_line = [l for l in vk.stdout.splitlines() if l.startswith("{")]
        vk_ms = None
        if vk.returncode == 0 and vk_line:
            vg = json.loads(vk_line[-1])
            if vg.get("gfxep_gpu_ms") and vg.get("nodes_elsewhere") == 0:
                vk_ms = vg["gfxep_gpu_ms"]["p50"]
                rec["vk_gpu_ms"] = vk_ms
        if vk_ms is None:
            rec["vk_error"] = (vk.stderr or vk.stdout)[-300:] or "not entirely on the Vulkan backend"
        if bytes_moved:
            rec["gbs"] = bytes_moved / ms / 1e6
            rec["copy_gbs"] = copy_gbs
            rec["fraction_of_copy"] = rec["gbs"] / copy_gbs
            if vk_ms:
                rec["vk_gbs"] = bytes_moved / vk_ms / 1e6
                rec["vk_fraction_of_copy"] = rec["vk_gbs"] / copy_gbs
        if flops:
            dt = torch.float16
            if op == "MatMul":
                a = torch.randn(4096, 4096, device="cuda", dtype=dt)
                b = torch.randn(4096, 4096, device="cuda", dtype=dt)
                ref_ms = time_torch(lambda: a @ b, 50)["p50"]
            else:  # PyTorch's faster layout, as for the models
                conv = nn.Conv2d(256, 256, 3, padding=1, bias=False).cuda().half()
                t = torch.randn(8, 256, 128, 128, device="cuda", dtype=dt)
                with torch.no_grad():
                    ref = {"nchw": time_torch(lambda: conv(t), 50)["p50"]}
                    conv.to(memory_format=torch.channels_last)
                    tcl = t.contiguous(memory_format=torch.channels_last)
                    ref["cl"] = time_torch(lambda: conv(tcl), 50)["p50"]
                rec["torch_layout"] = min(ref, key=ref.get)
                ref_ms = ref[rec["torch_layout"]]
            rec["tflops"] = flops / ms / 1e9
            rec["torch_tflops"] = flops / ref_ms / 1e9
            rec["fraction_of_torch"] = rec["tflops"] / rec["torch_tflops"]
            if vk_ms:
                rec["vk_tflops"] = flops / vk_ms / 1e9
                rec["vk_fraction_of_torch"] = rec["vk_tflops"] / rec["torch_tflops"]
        out.append(rec)
        log(f"[kernel] {name}: " + ", ".join(f"{k}={v:.3g}" for k, v in rec.items() if isinstance(v, float)))
    return out


def onnx_op_counts(path):
    """How many nodes of each operator the exported model has, most frequent first."""
    import onnx
    counts = {}
    for node in onnx.load(path, load_external_data=False).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def run_bench(args, env, path, options=None, profile=None):
    """gfxep-bench on one model: (its JSON record, None) or (None, why it failed)."""
    cmd = [args.bench, "--runs", str(args.runs)] + (["--options", options] if options else []) + \
        (["--profile", profile] if profile else []) + [path]
    return run_gfxep_bench(cmd, env, args.timeout)


def memory_report(args, env, path, models_dir):
    """Device memory gfxep's partitions held (weights + workspace pool, which includes library scratch)
    against the lower bound of one run (weights + the most intermediate bytes alive at once), from the
    GFXEP_MEMORY_REPORT lines its partitions write when released."""
    report = os.path.join(models_dir, "memory.jsonl")
    if os.path.exists(report):
        os.remove(report)
    try:
        subprocess.run([args.bench, "--runs", "5", path], env=dict(env, GFXEP_MEMORY_REPORT=report),
                       capture_output=True, text=True, timeout=args.timeout)
        with open(report) as f:
            parts = [json.loads(l) for l in f if l.strip()]
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        return {"error": str(e)[-200:]}
    if not parts:
        return {"error": "no partition reported"}
    total = {k: sum(p[k] for p in parts) for k in ("weight_bytes", "workspace_bytes", "live_bound_bytes", "scratch_bytes")}
    total["partitions"] = len(parts)
    held = total["weight_bytes"] + total["workspace_bytes"]
    bound = total["weight_bytes"] + total["live_bound_bytes"]
    total["held_over_bound"] = held / bound if bound else None
    return total


def run_gfxep(ort, devs, path, feed, options):
    """Runs through ORT's Python API on gfxep with EP options; the third Run's output (precision=fp16's
    first Run is float32 while its range guard calibrates), or None on failure."""
    try:
        so = ort.SessionOptions()
        so.add_provider_for_devices(devs[:1], options)
        sess = ort.InferenceSession(path, sess_options=so)
        for _ in range(3):
            out = sess.run(None, feed)[0].astype(np.float32)
        del sess
        return out
    except Exception as e:  # noqa: BLE001 — reported as a missing result
        log(f"gfxep run with {options} failed: {e}")
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="gfxep-bench")
    ap.add_argument("--plugin", required=True, help="libgfxep.so")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--models-dir", default=None, help="where the exported ONNX files go (default: --out)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--cpu-runs", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=180, help="seconds per gfxep-bench call")
    ap.add_argument("--no-kernels", action="store_true", help="skip the kernel-efficiency section")
    ap.add_argument("--budget-s", type=int, default=0,
                    help="seconds after which models not yet started (and the kernel section) are skipped, "
                         "recorded as skipped (0: no budget)")
    args = ap.parse_args()
    unknown = [n for n in args.models.split(",") if n not in MODELS]
    if unknown:
        log(f"unknown model(s) {', '.join(unknown)}: the models are {', '.join(MODELS)}")
        return 2
    os.makedirs(args.out, exist_ok=True)
    models_dir = args.models_dir or args.out
    os.makedirs(models_dir, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    import onnxruntime as ort

    ort.register_execution_provider_library("gfxep", os.path.abspath(args.plugin))
    devs = [d for d in ort.get_ep_devices() if d.ep_name == "gfxep" and d.ep_metadata.get("gfxep.backend") == "cuda"]
    if not devs:
        log("no gfxep CUDA device")
        return 77
    env = dict(os.environ, GFXEP_PLUGIN=os.path.abspath(args.plugin))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "onnxruntime": ort.__version__,
            "host": platform.node(), "runs": args.runs,
            "torch_configs": [label for _, label in TORCH_CONFIGS], "budget_s": args.budget_s}
    records = []
    started = time.time()

    def over_budget():
        return args.budget_s > 0 and time.time() - started > args.budget_s

    def save(records, kernels):
        # written after every model, so a run stopped by its time limit still leaves what it measured
        with open(os.path.join(args.out, "bench.json"), "w") as f:
            json.dump({"meta": meta, "records": records, "kernels": kernels}, f, indent=1)

    for name in args.models.split(","):
        model, shape, precisions = build(name)
        for prec in precisions:
            if over_budget():
                records.append({"model": name, "precision": prec, "input": list(shape), "kind": model_kind(name),
                                "error": f"skipped: the run's time budget (--budget-s {args.budget_s}) was spent"})
                log(f"[{name} {prec}] {records[-1]['error']}")
                continue
            t0 = time.time()
            log(f"[{name} {prec}] export")
            dtype = torch.float16 if prec == "fp16" else torch.float32
            m = model.to("cuda", dtype)
            torch.manual_seed(1)
            x = torch.rand(shape, device="cuda", dtype=torch.float32).to(dtype)
            path = os.path.join(models_dir, f"{name}_{prec}.onnx")
            rec = {"model": name, "precision": prec, "input": list(shape), "kind": model_kind(name)}
            try:
                with torch.no_grad():
                    export(m, x, path)
                    ref = m.float()(x.float()).cpu().numpy()  # float32 reference from the same weights
                    m = m.to(dtype)
            except Exception as e:  # noqa: BLE001 — reported per model, the run goes on
                rec["error"] = f"export failed: {e}"
                records.append(rec)
                log(f"[{name} {prec}] {rec['error']}")
                continue
            rec["onnx_ops"] = onnx_op_counts(path)
            # correctness: gfxep vs PyTorch float32 (and vs ORT's CPU EP for float32 models)
            log(f"[{name} {prec}] correctness")
            feed = {"input": x.cpu().numpy()}
            try:
                so = ort.SessionOptions()
                so.add_provider_for_devices(devs[:1], {})
                sess = ort.InferenceSession(path, sess_options=so)
                got = sess.run(None, feed)[0].astype(np.float32)
                del sess
                rec["vs_torch_fp32"] = compare(got, ref)
                if prec == "fp32":
                    cpu = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                    want = cpu.run(None, feed)[0]
                    rec["vs_cpu_ep"] = compare(got, want)
                    ms = []
                    for _ in range(args.cpu_runs):
                        t = time.perf_counter()
                        cpu.run(None, feed)
                        ms.append((time.perf_counter() - t) * 1e3)
                    rec["cpu_ep_ms"] = stats(ms)
                    del cpu
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"gfxep run failed: {e}"
            tol = 2e-2 if prec == "fp16" else 1e-3
            rec["tolerance_rel_to_peak"] = tol
            rec["correct"] = "error" not in rec and rec["vs_torch_fp32"]["finite"] and \
                rec["vs_torch_fp32"]["max_rel_to_peak"] <= tol
            log(f"[{name} {prec}] torch timings")
            # PyTorch in both layouts, eager and as a CUDA graph; its best is the fastest whose output agrees
            rec["torch_configs"] = torch_configs(m, x, args.runs, ref, tol)
            rec["torch_best"] = torch_best(rec["torch_configs"])
            for key, legacy in (("nchw_eager", "torch_eager_ms"), ("nchw_graph", "torch_graph_ms")):
                c = rec["torch_configs"][key]
                if c.get("p50") is not None:
                    rec[legacy] = {"p50": c["p50"], "p99": c["p99"]}
            if prec == "fp32":
                # PyTorch's defaults let cuDNN convolutions use TF32 (10-bit mantissa products): faster, and
                # not float32 arithmetic. Measured too (NCHW, PyTorch's default layout), so the table shows
                # what a default user sees; it is never PyTorch's best for float32.
                torch.backends.cudnn.allow_tf32 = True
                try:
                    rec["torch_tf32_eager_ms"] = time_config(m, x, False, args.runs)[0]
                    rec["torch_tf32_graph_ms"] = time_config(m, x, True, args.runs)[0]
                except Exception as e:  # noqa: BLE001
                    rec["torch_tf32_error"] = f"{type(e).__name__}: {e}"[-400:]
                torch.backends.cudnn.allow_tf32 = False
            log(f"[{name} {prec}] gfxep timings")
            rec["gfxep"], err = run_bench(args, env, path, profile=os.path.join(models_dir, f"profile_{name}_{prec}"))
            if rec["gfxep"]:
                rec["profile"] = summarize_profile(rec["gfxep"].get("profile"))
            if err:
                rec["gfxep_error"] = err
            # the memory gfxep held against the lower bound of one run, and the two other graph modes:
            # ORT's session-level capture (cuda_graph=ort) and no graphs at all (cuda_graph=0)
            rec["memory"] = memory_report(args, env, path, models_dir)
            for mode in ("ort", "0"):
                log(f"[{name} {prec}] gfxep cuda_graph={mode}")
                rec[f"gfxep_graph_{mode}"], e = run_bench(args, env, path, f"cuda_graph={mode}")
                if e:
                    rec[f"gfxep_graph_{mode}_error"] = e[-300:]
            # both layouts forced (the default, layout=auto, picks one per graph): channels-last convolutions
            # (layout=nhwc: ONNX Runtime's layout transformer hands gfxep NHWC Convs) and NCHW throughout,
            # each checked against PyTorch's float32 output as the default is
            for lay in ("nhwc", "nchw"):
                log(f"[{name} {prec}] gfxep layout={lay}")
                got = run_gfxep(ort, devs, path, feed, {"layout": lay})
                rec[f"gfxep_{lay}_vs_torch_fp32"] = compare(got, ref) if got is not None else None
                rec[f"gfxep_{lay}"], e = run_bench(args, env, path, f"layout={lay}")
                if e:
                    rec[f"gfxep_{lay}_error"] = e[-300:]
            if prec == "fp32":
                # the same float32 model with gfxep's precision option: TF32 tensor cores, or float16 inside
                for opt in ("tf32", "fp16"):
                    log(f"[{name} {prec}] gfxep precision={opt}")
                    got = run_gfxep(ort, devs, path, feed, {"precision": opt})
                    rec[f"gfxep_{opt}_vs_torch_fp32"] = compare(got, ref) if got is not None else None
                    rec[f"gfxep_{opt}"], _ = run_bench(args, env, path, f"precision={opt}")
            g = rec.get("gfxep")
            best = rec["torch_best"]
            if g:
                for key, legacy in (("torch_eager_ms", "ratio_vs_eager"), ("torch_graph_ms", "ratio_vs_graph")):
                    if key in rec:
                        rec[legacy] = g["latency_ms"]["p50"] / rec[key]["p50"]
                if best.get("p50"):
                    rec["ratio_vs_best"] = g["latency_ms"]["p50"] / best["p50"]
            rec["goal_max_ratio"] = goal_ratio(name)
            # met: gfxep agrees with the reference and is within the goal of PyTorch's best; None: no ratio
            rec["goal_met"] = (rec["correct"] and rec["ratio_vs_best"] <= rec["goal_max_ratio"]) \
                if "ratio_vs_best" in rec else None
            records.append(rec)
            save(records, [])
            log(f"[{name} {prec}] done in {time.time() - t0:.1f} s: " +
                (f"gfxep {g['latency_ms']['p50']:.3f} ms, PyTorch best " +
                 (f"{best['p50']:.3f} ms ({best['label']}), ratio {rec['ratio_vs_best']:.2f}" if "p50" in best
                  else best["missing"][:200]) + f", correct={rec['correct']}" if g else
                 f"gfxep failed: {rec.get('gfxep_error', rec.get('error', ''))[:300]}"))
            del m
            torch.cuda.empty_cache()
    kernels = []
    if not args.no_kernels:
        if over_budget():
            meta["kernels_skipped"] = f"the run's time budget (--budget-s {args.budget_s}) was spent"
            log(f"kernel efficiency skipped: {meta['kernels_skipped']}")
        else:
            # the rows stop 100 s after the budget, well inside tools/gpu-bench.sh's hard limit
            kernels = kernel_efficiency(args, env, models_dir,
                                        started + args.budget_s + 100 if args.budget_s > 0 else None)
    save(records, kernels)
    log(f"measured in {time.time() - started:.0f} s")

    def num(v, fmt):  # a figure, or "-" where there is none
        return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)

    def p50(d):
        return d.get("p50") if isinstance(d, dict) else None

    print(f"{'model':<12} {'prec':<5} {'nodes':>9} {'gfxep p50/p99 ms':>18} " +
          " ".join(f"{label:>10}" for _, label in TORCH_CONFIGS) +
          f" {'best p50':>9} {'best':>10} {'x best':>7} {'goal':>5} {'met':>4} {'cpu-ep p50':>11} {'enq us':>7} "
          f"{'err/peak':>9} ok")
    for r in records:
        g = r.get("gfxep")
        nodes = f"{g['nodes_on_gfxep']}/{g['nodes_on_gfxep'] + g['nodes_elsewhere']}" if g else "-"
        lat = f"{g['latency_ms']['p50']:.3f}/{g['latency_ms']['p99']:.3f}" if g else "failed"
        cfgs = r.get("torch_configs") or {}
        best = r.get("torch_best") or {}
        met = {True: "yes", False: "NO", None: "-"}[r.get("goal_met")]
        print(f"{r['model']:<12} {r['precision']:<5} {nodes:>9} {lat:>18} " +
              " ".join(f"{num(p50(cfgs.get(k)), '.3f') + ('x' if (cfgs.get(k) or {}).get('excluded') else ''):>10}"
                       for k, _ in TORCH_CONFIGS) +
              f" {num(best.get('p50'), '.3f'):>9} {best.get('label', '-'):>10} {num(r.get('ratio_vs_best'), '.2f'):>7} "
              f"{num(r.get('goal_max_ratio'), '.1f'):>5} {met:>4} {num(p50(r.get('cpu_ep_ms')), '.2f'):>11} "
              f"{num(g['enqueue_us']['p50'] if g else None, '.1f'):>7} "
              f"{num((r.get('vs_torch_fp32') or {}).get('max_rel_to_peak'), '.2e'):>9} {'yes' if r.get('correct') else 'NO'}")
    rated = [r for r in records if r.get("goal_met") is not None]
    print(f"goal met: {sum(1 for r in records if r.get('goal_met'))} of {len(records)} model x precision rows"
          f" ({len(records) - len(rated)} without a ratio); an x after a PyTorch time: its output disagreed, not counted")
    for r in records:
        for k, c in (r.get("torch_configs") or {}).items():
            why = c.get("excluded") or c.get("error")
            if why:
                print(f"    {r['model']} {r['precision']} PyTorch {k}: {why[:200]}")
    print(f"\n{'fp32 model':<12} {'gfxep fp32':>10} {'tf32':>8} {'err/peak':>9} {'fp16':>8} {'err/peak':>9} "
          f"{'torch tf32 graph':>16}")
    for r in records:
        if r["precision"] != "fp32":
            continue
        def lat(key):
            g = r.get(key)
            return g["latency_ms"]["p50"] if g else None
        def err(key):
            return (r.get(key) or {}).get("max_rel_to_peak")
        print(f"{r['model']:<12} {num(lat('gfxep'), '.3f'):>10} {num(lat('gfxep_tf32'), '.3f'):>8} "
              f"{num(err('gfxep_tf32_vs_torch_fp32'), '.1e'):>9} {num(lat('gfxep_fp16'), '.3f'):>8} "
              f"{num(err('gfxep_fp16_vs_torch_fp32'), '.1e'):>9} {num(p50(r.get('torch_tf32_graph_ms')), '.3f'):>16}")
    print(f"\n{'model':<12} {'prec':<5} {'graph p50':>9} {'enq us':>7} {'ort-capture p50':>15} {'enq us':>7} "
          f"{'no-graph p50':>12} {'enq us':>7} {'weights MiB':>11} {'workspace MiB':>13} {'live MiB':>8} {'held/bound':>10}")
    for r in records:
        def cell(key):
            g = r.get(key)
            return (f"{g['latency_ms']['p50']:.3f}", f"{g['enqueue_us']['p50']:.1f}") if g else ("failed", "-")
        mem = r.get("memory") or {}
        mib = lambda k: f"{mem[k] / 2**20:.1f}" if k in mem else "-"
        a, b, c = cell("gfxep"), cell("gfxep_graph_ort"), cell("gfxep_graph_0")
        print(f"{r['model']:<12} {r['precision']:<5} {a[0]:>9} {a[1]:>7} {b[0]:>15} {b[1]:>7} {c[0]:>12} {c[1]:>7} "
              f"{mib('weight_bytes'):>11} {mib('workspace_bytes'):>13} {mib('live_bound_bytes'):>8} "
              f"{num(mem.get('held_over_bound'), '.2f'):>10}")
        for key in ("gfxep_graph_ort_error", "gfxep_graph_0_error"):
            if key in r:
                print(f"    {key}: {r[key][-200:]}")
    print("\noperators of the exported models:")
    for r in records:
        if r.get("onnx_ops"):
            print(f"{r['model']:<12} {r['precision']:<5} " + ", ".join(f"{k} {v}" for k, v in r["onnx_ops"].items()))
    print("\nwhere gfxep's device time goes (ORT profile, gfxep kernels, us per run):")
    for r in records:
        pr = r.get("profile")
        if pr:
            print(f"{r['model']:<12} {r['precision']:<5} {pr['device_us_per_run']:>9.1f}  " +
                  ", ".join(f"{k} {v:.0f}" for k, v in pr["by_op_us"].items()))
            print(f"{'':<12} {'':<5} {'nodes run':>9}  " + ", ".join(f"{k} {v}" for k, v in pr.get("nodes_by_op", {}).items()))
    for k in kernels:
        print(f"{k['kernel']:<44} " + (("" if k["error"].startswith("skipped") else "failed: ") + k["error"][-120:]
                                        if "error" in k else
              f"gpu {k['gpu_ms']:.3f} ms  " + (f"{k['gbs']:.0f} GB/s = {k['fraction_of_copy']:.0%} of copy" if "gbs" in k
                                               else f"{k['tflops']:.0f} TFLOP/s = {k['fraction_of_torch']:.0%} of PyTorch") +
              (f"; vulkan {k['vk_gpu_ms']:.3f} ms" if "vk_gpu_ms" in k else "; vulkan failed")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
