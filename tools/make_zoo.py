#!/usr/bin/python3
"""Writes the model zoo: whole networks of the kinds gfxep is meant to run, with seeded random weights.

Usage: make_zoo.py OUT_DIR [--size small|full] [--only name,name]

For every model NAME it writes
  NAME.fp32.onnx       float32 weights and tensors
  NAME.fp16.onnx       the same weights cast to float16, float16 inputs and outputs
  NAME.fp16_ref.onnx   the float32 twin of NAME.fp16.onnx: float32 graph whose weights are the
                       float16-rounded values, so that ORT's CPU EP can serve as its oracle
and zoo.json, the manifest the zoo runner reads (model, file names, input shape, tolerances).

'small' inputs (64x64) keep the plain-C reference backend fast enough for CI; 'full' inputs are the
real sizes (224x224 classifiers, 960x540 -> 1920x1080 super-resolution) for the GPU. The networks
are the same at both sizes except where the input size fixes a weight's shape (the ViT's position
embeddings).

Weights are He-initialised (std sqrt(2 / fan_in) before a ReLU, sqrt(1 / fan_in) otherwise) and
normalisation parameters sit near identity, so activations stay O(1) through 50 layers and the
comparisons measure arithmetic, not overflow. Run with Debian's python3 (python3-onnx,
python3-numpy): no downloads, the same bytes on every machine.
"""
import argparse
import copy
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17       # the default: every op used here except Gelu exists at 17
OPSET_GELU = 20  # Gelu became an ONNX op in opset 20

# fp32 tolerances. Shallow nets (a handful of layers) agree to a few float32 ulps of their output;
# deep nets accumulate rounding over ~50 layers of long dot products summed in different orders by
# different backends, so they get atol 1e-4 and rtol 1e-3.
TOL_SHALLOW = {"atol": 1e-5, "rtol": 1e-4}
TOL_DEEP = {"atol": 1e-4, "rtol": 1e-3}
# fp16 against the float32 twin: float16 keeps 11 significant bits, so each element may differ by a
# few float16 ulps of the output's scale: the bound is relative to the output's magnitude,
# |err| <= 2e-2 * max|ref| (plus 1e-3 absolute for outputs that are all near zero).
TOL_FP16 = {"atol": 1e-3, "rtol": 0.0, "scale_rel": 2e-2}


class Net:
    """Builds one graph: nodes, initializers and a seeded generator for its weights."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.keep_fp32 = set()  # initializers that stay float32 in the fp16 model (Resize scales)
        self.count = {}

    def fresh(self, prefix):
        n = self.count.get(prefix, 0)
        self.count[prefix] = n + 1
        return "%s%d" % (prefix, n)

    def const(self, prefix, array, keep_fp32=False):
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        if keep_fp32:
            self.keep_fp32.add(name)
        return name

    def he(self, prefix, shape, gain=2.0, fan_in=None):
        fan_in = fan_in or int(np.prod(shape[1:]))
        w = self.rng.standard_normal(shape) * np.sqrt(gain / fan_in)
        return self.const(prefix, w.astype(np.float32))

    def small(self, prefix, shape, scale=0.05):
        return self.const(prefix, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op_type, inputs, n_out=1, prefix=None, **attrs):
        name = self.fresh(prefix or op_type.lower())
        outs = [name] if n_out == 1 else ["%s_%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    # ---- layers ----

    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=True, gain=2.0):
        pad = k // 2 if pad is None else pad
        w = self.he("w", [cout, cin // group, k, k], gain)
        inputs = [x, w] + ([self.small("b", [cout])] if bias else [])
        return self.op("Conv", inputs, prefix="conv", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group)

    def bn(self, x, c, gamma=1.0):
        scale = self.const("bn_scale", (gamma * (1 + 0.1 * self.rng.standard_normal(c))).astype(np.float32))
        bias = self.small("bn_bias", [c])
        mean = self.small("bn_mean", [c])
        var = self.const("bn_var", self.rng.uniform(0.8, 1.2, c).astype(np.float32))
        return self.op("BatchNormalization", [x, scale, bias, mean, var], prefix="bn", epsilon=1e-5)

    def instance_norm(self, x, c):
        scale = self.const("in_scale", (1 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
        return self.op("InstanceNormalization", [x, scale, self.small("in_bias", [c])], prefix="in", epsilon=1e-5)

    def layer_norm(self, x, d):
        scale = self.const("ln_scale", (1 + 0.1 * self.rng.standard_normal(d)).astype(np.float32))
        return self.op("LayerNormalization", [x, scale, self.small("ln_bias", [d])], prefix="ln", axis=-1,
                       epsilon=1e-5)

    def relu(self, x):
        return self.op("Relu", [x])

    def relu6(self, x):
        lo = self.const("zero", np.array(0.0, np.float32))
        hi = self.const("six", np.array(6.0, np.float32))
        return self.op("Clip", [x, lo, hi], prefix="relu6")

    def reflect_pad(self, x, p):
        pads = self.const("pads", np.array([0, 0, p, p, 0, 0, p, p], np.int64))
        return self.op("Pad", [x, pads], prefix="pad", mode="reflect")

    def upsample2(self, x, mode="nearest"):
        scales = self.const("scales", np.array([1, 1, 2, 2], np.float32), keep_fp32=True)
        if mode == "nearest":
            return self.op("Resize", [x, "", scales], prefix="up", mode="nearest",
                           coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        return self.op("Resize", [x, "", scales], prefix="up", mode="linear",
                       coordinate_transformation_mode="half_pixel")

    def linear(self, x, din, dout, gain=1.0):
        """x[..., din] @ W + b with MatMul and Add (the transformer form)."""
        y = self.op("MatMul", [x, self.he("w", [din, dout], gain, fan_in=din)])
        return self.op("Add", [y, self.small("b", [dout])])

    def classifier_head(self, x, c, classes=1000):
        g = self.op("GlobalAveragePool", [x], prefix="gap")
        f = self.op("Flatten", [g], axis=1)
        w = self.he("fc_w", [classes, c], 1.0)
        return self.op("Gemm", [f, w, self.small("fc_b", [classes])], prefix="fc", transB=1)

    def name_output(self, name):
        """Gives the last node's output the graph output's name."""
        self.nodes[-1].output[0] = name

    def model(self, inputs, outputs, opset, doc):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gfxep")
        m.ir_version = 8 if opset <= 17 else 9
        m.doc_string = doc
        return m


def fvalue(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# ---- the models ----

def espcn(hw):
    """ESPCN-style x2 super-resolution: conv5x5-64, conv3x3-32, conv3x3-12, DepthToSpace (pixel shuffle)."""
    h, w = hw
    n = Net("espcn_x2", 101)
    x = n.relu(n.conv("lr", 3, 64, 5))
    x = n.relu(n.conv(x, 64, 32, 3))
    x = n.conv(x, 32, 3 * 4, 3, gain=1.0)
    n.op("DepthToSpace", [x], prefix="shuffle", blocksize=2, mode="CRD")
    n.name_output("hr")
    return n.model([fvalue("lr", [1, 3, h, w])], [fvalue("hr", [1, 3, 2 * h, 2 * w])], OPSET,
                   "ESPCN-style x2 super-resolution"), TOL_SHALLOW


def unet(hw):
    """A UNet denoiser: two levels down (MaxPool, strided conv), up by ConvTranspose and by Resize
    (bilinear), skip connections by Concat, and the predicted noise subtracted from the input."""
    h, w = hw
    n = Net("unet_denoiser", 102)
    s1 = n.relu(n.conv(n.relu(n.conv("noisy", 3, 32, 3)), 32, 32, 3))
    p1 = n.op("MaxPool", [s1], prefix="pool", kernel_shape=[2, 2], strides=[2, 2])
    s2 = n.relu(n.conv(n.relu(n.conv(p1, 32, 64, 3)), 64, 64, 3))
    d2 = n.relu(n.conv(s2, 64, 128, 3, stride=2))
    b = n.relu(n.conv(d2, 128, 128, 3))
    wt = n.he("wt", [128, 64, 2, 2], 2.0, fan_in=128)  # ConvTranspose weight is [C_in, C_out, kH, kW]
    u2 = n.op("ConvTranspose", [b, wt, n.small("bt", [64])], prefix="upconv", kernel_shape=[2, 2], strides=[2, 2])
    c2 = n.op("Concat", [u2, s2], prefix="skip", axis=1)
    x = n.relu(n.conv(c2, 128, 64, 3))
    u1 = n.relu(n.conv(n.upsample2(x, "linear"), 64, 32, 1))
    c1 = n.op("Concat", [u1, s1], prefix="skip", axis=1)
    x = n.relu(n.conv(c1, 64, 32, 3))
    noise = n.conv(x, 32, 3, 3, gain=0.1)
    n.op("Sub", ["noisy", noise], prefix="residual")
    n.name_output("denoised")
    return n.model([fvalue("noisy", [1, 3, h, w])], [fvalue("denoised", [1, 3, h, w])], OPSET,
                   "UNet denoiser: MaxPool/strided-conv down, ConvTranspose/Resize up, Concat skips"), TOL_DEEP


def resnet_stem(n):
    x = n.relu(n.bn(n.conv("image", 3, 64, 7, stride=2, pad=3, bias=False), 64))
    return n.op("MaxPool", [x], prefix="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


def basic_block(n, x, cin, cout, stride):
    y = n.relu(n.bn(n.conv(x, cin, cout, 3, stride, bias=False), cout))
    y = n.bn(n.conv(y, cout, cout, 3, bias=False), cout, gamma=0.5)
    if stride != 1 or cin != cout:
        x = n.bn(n.conv(x, cin, cout, 1, stride, pad=0, bias=False), cout)
    return n.relu(n.op("Add", [y, x], prefix="residual"))


def bottleneck(n, x, cin, mid, stride):
    cout = mid * 4
    y = n.relu(n.bn(n.conv(x, cin, mid, 1, pad=0, bias=False), mid))
    y = n.relu(n.bn(n.conv(y, mid, mid, 3, stride, bias=False), mid))
    y = n.bn(n.conv(y, mid, cout, 1, pad=0, bias=False), cout, gamma=0.5)
    if stride != 1 or cin != cout:
        x = n.bn(n.conv(x, cin, cout, 1, stride, pad=0, bias=False), cout)
    return n.relu(n.op("Add", [y, x], prefix="residual"))


def resnet(hw, depth):
    """ResNet-18 (basic blocks 2-2-2-2) or ResNet-50 (bottlenecks 3-4-6-3), BatchNormalization as
    separate nodes, GlobalAveragePool, Flatten, Gemm."""
    h, w = hw
    n = Net("resnet%d" % depth, 100 + depth)
    x = resnet_stem(n)
    c = 64
    if depth == 18:
        for i, width in enumerate([64, 128, 256, 512]):
            for j in range(2):
                x = basic_block(n, x, c, width, 2 if (i > 0 and j == 0) else 1)
                c = width
    else:
        for i, (mid, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
            for j in range(blocks):
                x = bottleneck(n, x, c, mid, 2 if (i > 0 and j == 0) else 1)
                c = mid * 4
    n.classifier_head(x, c)
    n.name_output("logits")
    return n.model([fvalue("image", [1, 3, h, w])], [fvalue("logits", [1, 1000])], OPSET,
                   "ResNet-%d classifier" % depth), TOL_DEEP


def mobilenet_v2(hw):
    """MobileNetV2: inverted residuals with depthwise convolutions, Clip(0, 6) as ReLU6, residual Add."""
    h, w = hw
    n = Net("mobilenet_v2", 103)
    x = n.relu6(n.bn(n.conv("image", 3, 32, 3, stride=2, bias=False), 32))
    c = 32
    for t, cout, reps, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                             (6, 160, 3, 2), (6, 320, 1, 1)]:
        for r in range(reps):
            stride = s if r == 0 else 1
            hidden = c * t
            y = x
            if t != 1:
                y = n.relu6(n.bn(n.conv(y, c, hidden, 1, pad=0, bias=False), hidden))
            y = n.relu6(n.bn(n.conv(y, hidden, hidden, 3, stride, group=hidden, bias=False), hidden))
            y = n.bn(n.conv(y, hidden, cout, 1, pad=0, bias=False, gain=1.0), cout)
            x = n.op("Add", [x, y], prefix="residual") if stride == 1 and c == cout else y
            c = cout
    x = n.relu6(n.bn(n.conv(x, c, 1280, 1, pad=0, bias=False), 1280))
    n.classifier_head(x, 1280)
    n.name_output("logits")
    return n.model([fvalue("image", [1, 3, h, w])], [fvalue("logits", [1, 1000])], OPSET,
                   "MobileNetV2 classifier"), TOL_DEEP


def style_transfer(hw):
    """Fast neural style transfer (Johnson et al.): reflection Pad, InstanceNormalization, two strided
    convs down, five residual blocks, nearest Resize + conv up."""
    h, w = hw
    n = Net("style_transfer", 104)

    def conv_in(x, cin, cout, k, stride=1, relu=True):
        y = n.instance_norm(n.conv(n.reflect_pad(x, k // 2), cin, cout, k, stride, pad=0), cout)
        return n.relu(y) if relu else y

    x = conv_in("content", 3, 32, 9)
    x = conv_in(x, 32, 64, 3, 2)
    x = conv_in(x, 64, 128, 3, 2)
    for _ in range(5):
        y = conv_in(conv_in(x, 128, 128, 3), 128, 128, 3, relu=False)
        x = n.op("Add", [x, y], prefix="residual")
    x = conv_in(n.upsample2(x), 128, 64, 3)
    x = conv_in(n.upsample2(x), 64, 32, 3)
    n.conv(n.reflect_pad(x, 4), 32, 3, 9, pad=0, gain=1.0)
    n.name_output("stylized")
    return n.model([fvalue("content", [1, 3, h, w])], [fvalue("stylized", [1, 3, h, w])], OPSET,
                   "Fast style transfer: reflection Pad, InstanceNormalization, nearest Resize"), TOL_DEEP


def vit(hw, dim=192, depth=12, heads=3, patch=16, classes=1000):
    """A ViT-Tiny-shaped transformer: patch-embedding Conv, Reshape/Transpose to tokens, class token
    by Concat, position embeddings, pre-norm blocks (LayerNormalization, multi-head attention with
    MatMul/Softmax, Gather to split q/k/v, Gelu MLP, residual Add), class token taken back by Slice."""
    h, w = hw
    n = Net("vit_tiny", 105)
    tokens = (h // patch) * (w // patch)
    seq, dh = tokens + 1, dim // heads
    x = n.conv("image", 3, dim, patch, stride=patch, pad=0, gain=1.0)
    x = n.op("Reshape", [x, n.const("shape", np.array([1, dim, tokens], np.int64))])
    x = n.op("Transpose", [x], perm=[0, 2, 1])
    cls = n.small("cls_token", [1, 1, dim], 0.5)
    x = n.op("Concat", [cls, x], prefix="with_cls", axis=1)
    x = n.op("Add", [x, n.small("pos_embed", [1, seq, dim], 0.5)], prefix="pos")
    for _ in range(depth):
        y = n.layer_norm(x, dim)
        qkv = n.linear(y, dim, 3 * dim)
        qkv = n.op("Reshape", [qkv, n.const("shape", np.array([1, seq, 3, heads, dh], np.int64))])
        qkv = n.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])  # [3, 1, heads, seq, dh]
        q, k, v = (n.op("Gather", [qkv, n.const("index", np.array(i, np.int64))], axis=0) for i in range(3))
        kt = n.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = n.op("Mul", [n.op("MatMul", [q, kt]), n.const("scale", np.array(dh ** -0.5, np.float32))])
        a = n.op("MatMul", [n.op("Softmax", [s], axis=-1), v])
        a = n.op("Reshape", [n.op("Transpose", [a], perm=[0, 2, 1, 3]),
                             n.const("shape", np.array([1, seq, dim], np.int64))])
        x = n.op("Add", [x, n.linear(a, dim, dim, gain=0.5)], prefix="residual")
        y = n.op("Gelu", [n.linear(n.layer_norm(x, dim), dim, 4 * dim, gain=2.0)])
        x = n.op("Add", [x, n.linear(y, 4 * dim, dim, gain=0.5)], prefix="residual")
    x = n.layer_norm(x, dim)
    cls_out = n.op("Slice", [x, n.const("starts", np.array([0], np.int64)), n.const("ends", np.array([1], np.int64)),
                             n.const("axes", np.array([1], np.int64))], prefix="take_cls")
    cls_out = n.op("Reshape", [cls_out, n.const("shape", np.array([1, dim], np.int64))])
    n.linear(cls_out, dim, classes)
    n.name_output("logits")
    return n.model([fvalue("image", [1, 3, h, w])], [fvalue("logits", [1, classes])], OPSET_GELU,
                   "ViT-Tiny-shaped transformer (opset 20 for Gelu)"), TOL_DEEP


# (name, builder, small input HxW, full input HxW)
ZOO = [
    ("espcn_x2", espcn, (64, 64), (540, 960)),
    ("unet_denoiser", unet, (64, 64), (512, 512)),
    ("resnet18", lambda hw: resnet(hw, 18), (64, 64), (224, 224)),
    ("resnet50", lambda hw: resnet(hw, 50), (64, 64), (224, 224)),
    ("mobilenet_v2", mobilenet_v2, (64, 64), (224, 224)),
    ("style_transfer", style_transfer, (64, 64), (512, 512)),
    ("vit_tiny", vit, (64, 64), (224, 224)),
]


# ---- float16 variants ----

def retype_io(model, elem_type):
    for v in list(model.graph.input) + list(model.graph.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = elem_type


def half_variants(model, keep_fp32):
    """The float16 model (weights cast, float16 inputs and outputs) and its float32 twin whose
    weights are the float16-rounded values."""
    fp16, twin = copy.deepcopy(model), copy.deepcopy(model)
    for m, cast in ((fp16, np.float16), (twin, None)):
        for i, init in enumerate(m.graph.initializer):
            if init.data_type != TensorProto.FLOAT or init.name in keep_fp32:
                continue
            a = numpy_helper.to_array(init).astype(np.float16)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a if cast else a.astype(np.float32), init.name))
    retype_io(fp16, TensorProto.FLOAT16)
    fp16.graph.name += "_fp16"
    fp16.doc_string += " (float16)"
    twin.graph.name += "_fp16_ref"
    twin.doc_string += " (float32 twin of the float16 model: float16-rounded weights)"
    return fp16, twin


def check(model):
    # the checker knows the opsets of the onnx package installed; newer ones are left to ORT
    if model.opset_import[0].version <= onnx.defs.onnx_opset_version():
        onnx.checker.check_model(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--size", choices=["small", "full"], default="small")
    ap.add_argument("--only", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    manifest = {"size": args.size, "models": []}
    for name, build, small_hw, full_hw in ZOO:
        if only and name not in only:
            continue
        hw = small_hw if args.size == "small" else full_hw
        model, tol = build(hw)
        keep = {i.name for i in model.graph.initializer if i.name.startswith("scales")}
        fp16, twin = half_variants(model, keep)
        files = {}
        for suffix, m in (("fp32", model), ("fp16", fp16), ("fp16_ref", twin)):
            check(m)
            files[suffix] = "%s.%s.onnx" % (name, suffix)
            onnx.save(m, os.path.join(args.out_dir, files[suffix]))
        manifest["models"].append({
            "model": name, "doc": model.doc_string, "input": [1, 3, hw[0], hw[1]],
            "opset": model.opset_import[0].version, "nodes": len(model.graph.node),
            "files": files, "tol_fp32": tol, "tol_fp16": TOL_FP16})
    with open(os.path.join(args.out_dir, "zoo.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
