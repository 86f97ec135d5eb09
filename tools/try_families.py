"""The model families graphics and vision pipelines run next to a renderer, exported by PyTorch's ONNX
exporter as a user would export them (random weights, nothing downloaded), run through gfxep and ORT's
CPU EP with gfxep-run at ORT's default graph optimizations, in float32 and in float16:

    python3 tools/try_families.py --run build/gfxep-run --out DIR [--backend cuda] [--models a,b]
                                  [--precisions fp32,fp16] [--profile]

Families: optical flow (torchvision's RAFT), frame interpolation (an IFNet-style network written
here: flow estimation at three scales, backward warping by GridSample, a blend mask), segmentation
(DeepLabV3, LR-ASPP, FCN), detection with its post-processing (SSDlite, RetinaNet, FCOS), monocular
depth (an encoder-decoder written here, MiDaS-like), 3-D video classification (r3d_18, mc3_18) and
transformers (Swin, MaxViT).

For each model and precision: nodes on gfxep / total, gfxep's partitions, the operator types left to
ORT with their counts, the largest error against ORT's CPU EP (float32 arithmetic) and the result, and
the latency of gfxep (host inputs and outputs, as gfxep-run measures it) beside PyTorch eager on the
same GPU and precision. Tolerances, relative to each output's peak |reference| (tol-scale) plus rtol:
float32 1e-4 of the peak + 1e-3 relative; float16 2e-2 of the peak (float16 activations through deep
random-weight networks). A model whose reference output peaks below 1e-3 fails ("no signal"); the last
Linear/Conv layer is rescaled so the first output peaks at 1 where it can be (see try_torchvision.py).

Detection outputs (boxes, scores, labels after NMS) are compared as sets (gfxep-run --detections):
with random weights the scores are close to one another, so two correct implementations order
near-tied detections differently, or cut the list at another detection of near-equal score. Each
reference detection must meet one of gfxep's with the same label, score and box within the
tolerances; a detection left over is excused only at the tail of the other list or beside an
overlapping left-over twin of near-equal score (examples/match_detections.h), and the counts are in
the JSON ("detections", "detections_replayed").

--profile adds, per model and precision, a second gfxep-run of a few runs with ORT's profiling on
(GFXEP_ORT_PROFILE): where a Run's time goes, as "profile" in the JSON (host time per Run, host time
per execution provider, the slowest nodes on the host, and gfxep's device time by operator). Profiled
runs execute partitions node by node, so their times are not the latency above.

Writes DIR/families.json and prints a table. One model that fails to export or to run is reported and
the others go on.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
import torchvision.models.detection as tvd
import torchvision.models.optical_flow as tvf
import torchvision.models.segmentation as tvs
import torchvision.models.video as tvv


# ---- networks written here ----

def conv(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.PReLU(cout))


def base_grid(h, w):
    """Sampling positions of every pixel in GridSample's [-1, 1] coordinates (align_corners=True)."""
    ys = torch.linspace(-1.0, 1.0, h).view(h, 1).expand(h, w)
    xs = torch.linspace(-1.0, 1.0, w).view(1, w).expand(h, w)
    return torch.stack((xs, ys), dim=2).unsqueeze(0)


def warp(img, flow, grid):
    """Backward warping, as frame interpolation does: samples img at (x + flow_x, y + flow_y); `grid` is
    base_grid of img's size, and the flow is in pixels."""
    h, w = grid.shape[1], grid.shape[2]
    scale = torch.tensor([2.0 / (w - 1), 2.0 / (h - 1)], device=grid.device, dtype=grid.dtype).view(1, 1, 1, 2)
    return F.grid_sample(img, grid + flow.permute(0, 2, 3, 1) * scale, mode="bilinear", padding_mode="border",
                         align_corners=True)


def frame_pair(h, w, seed=0):
    """Two consecutive frames of a rendered scene as one [1, 6, h, w] tensor in [0, 1]: a shaded
    background with a low-frequency texture and soft-edged discs that move up to 6 pixels between the
    frames. The frame-interpolation network is checked on these rather than on noise: a warp turns an
    error of a few hundredths of a pixel in the flow into that error times the picture's gradient, which
    on noise is up to 1 per pixel and on a picture is small away from its edges."""
    g = torch.Generator().manual_seed(seed)
    ys = torch.arange(h, dtype=torch.float32).view(1, h, 1)
    xs = torch.arange(w, dtype=torch.float32).view(1, 1, w)
    n = 10
    cx, cy = torch.rand(n, generator=g) * w, torch.rand(n, generator=g) * h
    radius = 8 + torch.rand(n, generator=g) * 0.15 * min(h, w)
    vx, vy = (torch.rand(n, generator=g) * 2 - 1) * 6, (torch.rand(n, generator=g) * 2 - 1) * 6
    color = torch.rand(n, 3, 1, 1, generator=g)
    phase = torch.rand(3, 1, 1, generator=g) * 2 * math.pi

    def render(t):
        img = 0.25 + 0.2 * xs / w + 0.15 * ys / h + 0.06 * torch.sin(2 * math.pi * xs / 37 + phase) * \
            torch.cos(2 * math.pi * ys / 29 + phase)
        for i in range(n):
            d = torch.sqrt((xs - cx[i] - t * vx[i]) ** 2 + (ys - cy[i] - t * vy[i]) ** 2)
            alpha = ((radius[i] - d) / 2 + 0.5).clamp(0, 1)  # an edge 2 pixels wide, as a renderer's AA gives
            img = img * (1 - alpha) + color[i] * alpha
        return img.clamp(0, 1)

    return torch.cat((render(0.0), render(1.0)), 0).unsqueeze(0)


class IFBlock(nn.Module):
    """Estimates the two flows (to frame 0 and to frame 1) and a blend mask at one scale."""

    def __init__(self, cin, c):
        super().__init__()
        self.down = nn.Sequential(conv(cin, c // 2, 2), conv(c // 2, c, 2))
        self.body = nn.Sequential(*[conv(c, c) for _ in range(4)])
        self.up = nn.ConvTranspose2d(c, 5, 4, 2, 1)

    def forward(self, x, flow, scale):
        if scale != 1:
            x = F.interpolate(x, scale_factor=1.0 / scale, mode="bilinear", align_corners=False)
        if flow is not None:
            f = F.interpolate(flow, scale_factor=1.0 / scale, mode="bilinear", align_corners=False) / scale
            x = torch.cat((x, f), 1)
        y = self.up(self.body(self.down(x)))
        y = F.interpolate(y, scale_factor=scale * 2, mode="bilinear", align_corners=False)
        return y[:, :4] * scale * 2, y[:, 4:5]


class IFNet(nn.Module):
    """Frame interpolation in the style of RIFE's IFNet: coarse-to-fine flows, warping, a blend."""

    def __init__(self, h, w):
        super().__init__()
        # the first block sees both frames; the others also the frames warped so far, and the flow
        self.blocks = nn.ModuleList([IFBlock(6, 96), IFBlock(12 + 4, 64), IFBlock(12 + 4, 48)])
        self.register_buffer("grid", base_grid(h, w))

    def forward(self, frames):
        f0, f1 = frames[:, :3], frames[:, 3:]
        flow, mask = None, None
        w0, w1 = f0, f1
        for block, scale in zip(self.blocks, (4, 2, 1)):
            if flow is None:
                flow, mask = block(torch.cat((f0, f1), 1), None, scale)
            else:
                d_flow, d_mask = block(torch.cat((f0, f1, w0, w1), 1), flow, scale)
                flow, mask = flow + d_flow, mask + d_mask
            w0 = warp(f0, flow[:, :2], self.grid)
            w1 = warp(f1, flow[:, 2:4], self.grid)
        m = torch.sigmoid(mask)
        return w0 * m + w1 * (1 - m)


class DepthNet(nn.Module):
    """Monocular depth, MiDaS-like: a ResNet-18 encoder, a decoder that upsamples and fuses the encoder's
    features scale by scale, and a positive depth map at the input's resolution."""

    def __init__(self):
        super().__init__()
        r = tvm.resnet18()
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool)
        self.layers = nn.ModuleList([r.layer1, r.layer2, r.layer3, r.layer4])
        chans = (64, 128, 256, 512)
        self.lateral = nn.ModuleList([nn.Conv2d(c, 128, 1) for c in chans])
        self.fuse = nn.ModuleList([nn.Sequential(conv(128, 128), conv(128, 128)) for _ in chans])
        self.head = nn.Sequential(nn.Conv2d(128, 64, 3, 1, 1), nn.ReLU(), nn.Upsample(scale_factor=4, mode="bilinear"),
                                  nn.Conv2d(64, 1, 3, 1, 1), nn.Softplus())

    def forward(self, x):
        feats = []
        y = self.stem(x)
        for layer in self.layers:
            y = layer(y)
            feats.append(y)
        z = None
        for i in reversed(range(4)):
            lat = self.lateral[i](feats[i])
            z = lat if z is None else lat + F.interpolate(z, size=lat.shape[2:], mode="bilinear", align_corners=False)
            z = self.fuse[i](z)
        return self.head(z)


class FlowLast(nn.Module):
    """RAFT returns its flow after every update; a pipeline uses the last one."""

    def __init__(self, raft):
        super().__init__()
        self.raft = raft

    def forward(self, frames):
        return self.raft(frames[:, :3], frames[:, 3:], num_flow_updates=6)[-1]


class Detector(nn.Module):
    """A torchvision detector on one image tensor, returning its boxes, scores and labels."""

    def __init__(self, det):
        super().__init__()
        self.det = det

    def forward(self, x):
        out = self.det([x[0]])[0]
        return out["boxes"], out["scores"], out["labels"]


class SegOut(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def detector(ctor):
    # random weights score every box low: a low threshold keeps boxes to compare (and to export: the
    # post-processing of an empty set does not trace)
    det = ctor(weights=None, weights_backbone=None, num_classes=91, min_size=320, max_size=320, score_thresh=0.01)
    return Detector(det)


def ssdlite():
    return Detector(tvd.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=91))


# name: (family, constructor, input shape)
MODELS = {
    "raft_small": ("optical flow", lambda: FlowLast(tvf.raft_small(weights=None)), (1, 6, 128, 128)),
    "ifnet": ("frame interpolation", lambda: IFNet(256, 256), (1, 6, 256, 256)),
    "deeplabv3_mobilenet_v3_large": ("segmentation", lambda: SegOut(tvs.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)), (1, 3, 256, 256)),
    "lraspp_mobilenet_v3_large": ("segmentation", lambda: SegOut(tvs.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), (1, 3, 256, 256)),
    "fcn_resnet50": ("segmentation", lambda: SegOut(tvs.fcn_resnet50(weights=None, weights_backbone=None,
                                                                     aux_loss=False)), (1, 3, 256, 256)),
    "ssdlite320_mobilenet_v3_large": ("detection", ssdlite, (1, 3, 320, 320)),
    "retinanet_resnet50_fpn": ("detection", lambda: detector(tvd.retinanet_resnet50_fpn), (1, 3, 320, 320)),
    "fcos_resnet50_fpn": ("detection", lambda: detector(tvd.fcos_resnet50_fpn), (1, 3, 320, 320)),
    "depthnet": ("monocular depth", DepthNet, (1, 3, 256, 320)),
    "r3d_18": ("video", lambda: tvv.r3d_18(), (1, 3, 8, 112, 112)),
    "mc3_18": ("video", lambda: tvv.mc3_18(), (1, 3, 8, 112, 112)),
    "swin_t": ("transformer", lambda: tvm.swin_t(), (1, 3, 224, 224)),
    "maxvit_t": ("transformer", lambda: tvm.maxvit_t(), (1, 3, 224, 224)),
}

# models checked on inputs made for them instead of gfxep-run's seeded noise: name -> maker(shape)
INPUTS = {"ifnet": lambda shape: frame_pair(shape[2], shape[3])}

TOLERANCES = {"fp32": {"rtol": 1e-3, "tol_scale": 1e-4}, "fp16": {"rtol": 0.0, "tol_scale": 2e-2}}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def summarize_host_profile(path):
    """Host time in ORT's profile: a Run's median, the median per node summed by execution provider,
    and the slowest nodes; gfxep's device time by operator from bench_common."""
    with open(path) as fh:
        events = json.load(fh)
    runs = [e["dur"] for e in events if e.get("name") == "model_run"]
    per_node = {}
    for e in events:
        name = str(e.get("name", ""))
        if e.get("cat") == "Node" and name.endswith("_kernel_time"):
            args_ = e.get("args", {})
            key = (name[:-len("_kernel_time")], args_.get("provider", "?"), args_.get("op_name", "?"))
            per_node.setdefault(key, []).append(e.get("dur", 0))
    med = {k: sorted(v)[len(v) // 2] for k, v in per_node.items()}
    by_ep = {}
    for (_, ep, _), us in med.items():
        by_ep[ep] = by_ep.get(ep, 0) + us
    slowest = sorted(med.items(), key=lambda kv: -kv[1])[:8]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
    from bench_common import summarize_profile  # noqa: E402 — the benchmark's reader of gfxep's events
    return {"run_us_p50": sorted(runs)[len(runs) // 2] if runs else None,
            "host_us_by_ep": {k: round(v, 1) for k, v in sorted(by_ep.items(), key=lambda kv: -kv[1])},
            "slowest_host_us": [{"node": n, "ep": ep, "op": op, "us": us} for (n, ep, op), us in slowest],
            "gfxep_device": summarize_profile(path)}


def profile_run(args, path, name, precision, env, input_args):
    """A few runs of the model with ORT's profiling on; the summary, or an error string."""
    prefix = os.path.join(args.out, f"{name}_{precision}_profile")
    env = dict(env, GFXEP_ORT_PROFILE=prefix)
    cmd = [args.run, "--backend", args.backend, "--runs", "5", "--quiet"] + input_args + [path]
    try:
        subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"profiled gfxep-run timed out after {args.timeout} s"}
    d = os.path.dirname(prefix)
    found = sorted(f for f in os.listdir(d) if f.startswith(os.path.basename(prefix)) and f.endswith(".json"))
    if not found:
        return {"error": "no profile was written"}
    return summarize_host_profile(os.path.join(d, found[-1]))


def first(y):
    return y[0] if isinstance(y, (tuple, list)) else y


def give_signal(model, x):
    """Scales the last Linear/Conv layer so the first output peaks at 1 (re-initialised if all zero);
    returns the peak before scaling. Detectors are left as they are (their outputs pass through NMS)."""
    layers = [mod for mod in model.modules() if isinstance(mod, (nn.Linear, nn.Conv2d, nn.Conv3d))]
    if not layers or isinstance(model, Detector):
        with torch.no_grad():
            return float(first(model(x)).abs().max())
    last = layers[-1]
    with torch.no_grad():
        if not bool(last.weight.abs().max() > 0):
            nn.init.normal_(last.weight, std=1.0 / math.sqrt(last.weight[0].numel()))
        peak = float(first(model(x)).abs().max())
        if isinstance(model, (FlowLast, IFNet, DepthNet)):
            return peak  # outputs that feed warps or a softplus: scaling the last layer is not linear there
        if peak > 0 and math.isfinite(peak):
            last.weight.mul_(1.0 / peak)
            if last.bias is not None:
                last.bias.mul_(1.0 / peak)
    return peak


def export(model, x, path, opset=18):
    kwargs = dict(input_names=["input"], opset_version=opset)
    try:
        torch.onnx.export(model, x, path, dynamo=False, **kwargs)
    except TypeError:
        torch.onnx.export(model, x, path, **kwargs)


def torch_latency_ms(model, x, precision, runs=20):
    """PyTorch eager on the GPU, same model and precision: median of `runs` after a warm-up."""
    if not torch.cuda.is_available():
        return None
    dtype = torch.float16 if precision == "fp16" else torch.float32
    m = model.to("cuda", dtype)
    xc = x.to("cuda", dtype)
    times = []
    with torch.no_grad():
        for i in range(runs + 3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            m(xc)
            torch.cuda.synchronize()
            if i >= 3:
                times.append((time.perf_counter() - t0) * 1e3)
    model.to("cpu", torch.float32)
    return statistics.median(times)


def worst_error(r, detection):
    """The largest error over the output's peak, of the first run and of the replayed one (with
    precision=fp16 the first run is the range guard's float32 calibration; the replayed run is float16's).
    For a detector, the matched detections' box and score errors (gfxep-run --detections) over the
    peaks of the boxes and the scores: element by element, reordered near-ties would count as errors."""
    outs = r.get("outputs") or []
    if detection and len(outs) >= 2:
        box_peak, score_peak = outs[0].get("ref_max_abs") or 0, outs[1].get("ref_max_abs") or 0
        worst = float("nan")
        for m in (r.get("detections"), r.get("detections_replayed")):
            if m and box_peak and score_peak:
                e = max(m["max_box_err"] / box_peak, m["max_score_err"] / score_peak)
                worst = e if worst != worst else max(worst, e)
        return worst
    worst = float("nan")
    for o in outs:
        peak = o.get("ref_max_abs") or 0
        if not peak:
            continue
        e = max(o.get("max_abs") or 0, o.get("max_abs_replayed") or 0) / peak
        worst = e if worst != worst else max(worst, e)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, help="gfxep-run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--profile", action="store_true", help="add where each Run's time goes (ORT's profile)")
    ap.add_argument("--opset", type=int, default=18, help="the exporter's opset (17 for PyTorch 1.13)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if hasattr(torch.backends, "mha"):  # PyTorch 2.x: the fused fast path has no ONNX export
        torch.backends.mha.set_fastpath_enabled(False)
    results = []
    for name in args.models.split(","):
        family, ctor, shape = MODELS[name]
        path = os.path.join(args.out, name + ".onnx")
        t0 = time.time()
        try:
            torch.manual_seed(0)
            m = ctor().eval()
            x = INPUTS[name](shape) if name in INPUTS else torch.rand(shape)
            peak = give_signal(m, x)
            with torch.no_grad():
                export(m, x, path, args.opset)
        except Exception as e:  # noqa: BLE001 — reported, the others go on
            for p in args.precisions.split(","):
                results.append({"model": name, "family": family, "precision": p,
                                "error": f"export failed: {type(e).__name__}: {str(e)[:300]}"})
            log(f"[{name}] export failed: {e}")
            continue
        input_args = []
        if name in INPUTS:  # gfxep-run feeds these values to both sides instead of its seeded noise
            input_path = os.path.join(args.out, name + "_input.f32")
            x.numpy().astype("float32").tofile(input_path)
            input_args = ["--inputs", input_path]
        for precision in args.precisions.split(","):
            rec = {"model": name, "family": family, "precision": precision, "input": list(shape),
                   "input_values": "made for it" if input_args else "seeded noise in [-1, 1)",
                   "peak_before_scaling": peak}
            tol = TOLERANCES[precision]
            jpath = os.path.join(args.out, f"{name}_{precision}.json")
            cmd = [args.run, "--backend", args.backend, "--runs", "10", "--atol", "0", "--rtol", str(tol["rtol"]),
                   "--tol-scale", str(tol["tol_scale"]), "--json", jpath, "--quiet"] + input_args + \
                (["--detections"] if family == "detection" else []) + [path]
            env = dict(os.environ)
            # log_partition: gfxep says on stderr why it leaves each node to ORT (kept in "left_why")
            env["GFXEP_EP_OPTIONS"] = "log_partition=1" + (f",precision={precision}" if precision != "fp32" else "")
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
                rec["exit"] = p.returncode
                why = sorted({line.split("left to ONNX Runtime: ", 1)[1].strip()
                              for line in (p.stderr or "").splitlines() if "left to ONNX Runtime: " in line})
                if why:
                    rec["left_why"] = why[:40]
                if os.path.exists(jpath):
                    with open(jpath) as fh:
                        rec["run"] = json.load(fh)
                if p.returncode not in (0, 1):
                    rec["error"] = (p.stderr or p.stdout)[-400:]
            except subprocess.TimeoutExpired:
                rec["error"] = f"gfxep-run timed out after {args.timeout} s"
            if args.profile:
                rec["profile"] = profile_run(args, path, name, precision, env, input_args)
                log(f"[{name} {precision}] profile: {json.dumps(rec['profile'])[:1500]}")
            try:
                rec["torch_ms"] = torch_latency_ms(m, x, precision)
            except Exception as e:  # noqa: BLE001
                rec["torch_error"] = f"{type(e).__name__}: {str(e)[:200]}"
            results.append(rec)
            r = rec.get("run", {})
            log(f"[{name} {precision}] {time.time() - t0:.1f} s: exit {rec.get('exit')}, "
                f"{r.get('nodes_gfxep', '?')}/{r.get('nodes_total', '?')} nodes on gfxep, pass={r.get('pass')}")
            for line in rec.get("left_why", [])[:12]:
                log(f"[{name} {precision}]   left to ORT: {line[:300]}")
        failed = any(not r.get("run", {}).get("pass") for r in results if r["model"] == name)
        if failed and os.path.getsize(path) < 32 << 20:
            log(f"[{name}] kept {path} for inspection")
        else:
            os.remove(path)
    print(f"{'model':<30} {'prec':<5} {'on gfxep':>10} {'parts':>5} {'err/peak':>9} {'gfxep ms':>9} {'torch ms':>9} "
          f"result; left to ORT")
    bad = 0
    for rec in results:
        r = rec.get("run") or {}
        outs = r.get("outputs") or []
        ref = max((o.get("ref_max_abs", 0) for o in outs), default=float("nan"))
        err_over_peak = worst_error(r, rec.get("family") == "detection")
        rec["err_over_peak"] = err_over_peak
        if "error" not in rec and not ref >= 1e-3:
            rec["error"] = f"no signal: the reference output peaks at {ref:.3g}"
        ok = bool(r.get("pass")) and "error" not in rec
        rec["ok"] = ok
        bad += not ok
        t = r.get("timings_ms") or {}
        elsewhere = ", ".join(f"{k} {v}" for k, v in (r.get("ops_elsewhere") or {}).items())
        tm = rec.get("torch_ms")
        print(f"{rec['model']:<30} {rec['precision']:<5} {str(r.get('nodes_gfxep', '?')) + '/' + str(r.get('nodes_total', '?')):>10} "
              f"{r.get('gfxep_partitions', '?'):>5} {err_over_peak:>9.1e} "
              f"{t.get('gfxep_p50', float('nan')):>9.3f} {tm if tm is not None else float('nan'):>9.3f} "
              f"{'pass' if ok else 'FAIL: ' + rec.get('error', 'outputs disagree')[:100]}; {elsewhere or '-'}")
    print(f"{len(results) - bad} passed, {bad} failed")
    with open(os.path.join(args.out, "families.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
