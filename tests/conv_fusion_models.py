"""Small ONNX models with the patterns ir_fuse folds into a Conv, shaped like exported networks, to
compare gfxep with ONNX Runtime's CPU EP:

    python3 tests/conv_fusion_models.py OUT_DIR
    for f in OUT_DIR/*.onnx; do build/gfxep-run --backend reference --atol 1e-4 --rtol 1e-4 "$f"; done

Conv + activation for every fused activation (ReLU6 as Clip-11 with constant bounds, as MobileNetV2
exports it), an ESPCN-like super-resolution net (Conv, Tanh, ..., DepthToSpace), ResNet basic blocks
(Conv, BatchNormalization, Relu, Conv, BatchNormalization, Add(shortcut), Relu; with and without a
downsampling shortcut Conv) and a residual SR body (Conv, Relu, Conv, Add(x)). ORT's default graph
optimizations fold the BatchNormalizations into the Convs before gfxep sees the graph, as in real
use. Also the cases that must stay unfused and still agree: an Add that broadcasts, a Conv output
that is also a graph output, an activation before a residual Add.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/conv_fusion_models"
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)


def init(name, shape, scale=0.3):
    return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def scalar(name, value):
    return nh.from_array(np.array(value, dtype=np.float32), name)


def vi(name, shape):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = h.make_graph(nodes, name, inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)  # intermediate shapes, as exporters write them
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


class Net:
    """Builds a chain of nodes with fresh value names."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def fresh(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def conv(self, x, c_in, c_out, k, bias=True, stride=1, op="Conv"):
        w = self.fresh("w")
        wshape = [c_out, c_in, k, k] if op == "Conv" else [c_in, c_out, k, k]
        self.inits.append(init(w, wshape, 1.0 / np.sqrt(c_in * k * k)))
        ins = [x, w]
        if bias:
            b = self.fresh("b")
            self.inits.append(init(b, [c_out], 0.2))
            ins.append(b)
        y = self.fresh("c")
        attrs = {"pads": [k // 2] * 4, "strides": [stride, stride]}
        if op == "ConvTranspose":
            attrs = {"strides": [stride, stride], "pads": [1, 1, 1, 1], "output_padding": [stride - 1] * 2}
        self.nodes.append(h.make_node(op, ins, [y], name=self.fresh(op.lower()), **attrs))
        return y

    def bn(self, x, c):
        names = [self.fresh(p) for p in ("scale", "shift", "mean", "var")]
        self.inits += [
            nh.from_array((1.0 + 0.2 * rng.standard_normal(c)).astype(np.float32), names[0]),
            init(names[1], [c], 0.2),
            init(names[2], [c], 0.2),
            nh.from_array((0.5 + rng.random(c)).astype(np.float32), names[3]),
        ]
        y = self.fresh("bn")
        self.nodes.append(h.make_node("BatchNormalization", [x] + names, [y], name=self.fresh("bn_node")))
        return y

    def op(self, op_type, inputs, **attrs):
        y = self.fresh(op_type.lower())
        self.nodes.append(h.make_node(op_type, inputs, [y], name=self.fresh(op_type.lower() + "_node"), **attrs))
        return y

    def rename_last(self, name):
        self.nodes[-1].output[0] = name


def conv_act(name, op_type, inputs_after=(), conv="Conv", **attrs):
    """x -> Conv(+bias) -> activation -> y."""
    net = Net()
    c = net.conv("x", 4, 8, 3, op=conv, stride=2 if conv == "ConvTranspose" else 1)
    names = []
    for i, v in enumerate(inputs_after):
        if v is None:
            names.append("")
        else:
            names.append("bound%d" % i)
            net.inits.append(scalar("bound%d" % i, v))
    net.op(op_type, [c] + names, **attrs)
    net.rename_last("y")
    save(name, net.nodes, [vi("x", [1, 4, 12, 10])], [vi("y", None)], net.inits)


conv_act("fuse_conv_relu", "Relu")
conv_act("fuse_conv_clip_relu6", "Clip", (0.0, 6.0))
conv_act("fuse_conv_clip_tight", "Clip", (-0.2, 0.3))
conv_act("fuse_conv_clip_max_only", "Clip", (None, 0.1))
conv_act("fuse_conv_leaky_relu", "LeakyRelu", alpha=0.2)
conv_act("fuse_conv_sigmoid", "Sigmoid")
conv_act("fuse_conv_tanh", "Tanh")
conv_act("fuse_conv_hard_sigmoid", "HardSigmoid", alpha=0.3, beta=0.4)
conv_act("fuse_conv_hard_swish", "HardSwish")
conv_act("fuse_conv_elu", "Elu", alpha=0.7)
conv_act("fuse_convtranspose_relu", "Relu", conv="ConvTranspose")
conv_act("fuse_convtranspose_leaky_relu", "LeakyRelu", conv="ConvTranspose", alpha=0.1)


def espcn():
    """ESPCN at a small size: conv5x5 3->64, tanh, conv3x3 64->32, tanh, conv3x3 32->12, DepthToSpace."""
    net = Net()
    t = net.op("Tanh", [net.conv("x", 3, 64, 5)])
    t = net.op("Tanh", [net.conv(t, 64, 32, 3)])
    net.op("DepthToSpace", [net.conv(t, 32, 12, 3)], blocksize=2, mode="CRD")
    net.rename_last("y")
    save("fuse_espcn", net.nodes, [vi("x", [1, 3, 18, 24])], [vi("y", None)], net.inits)


def resnet_blocks():
    """Two basic blocks: identity shortcut, then a stride-2 block with a 1x1 shortcut Conv."""
    net = Net()
    c = 8
    x = net.op("Relu", [net.bn(net.conv("x", 3, c, 3, bias=False), c)])
    # identity block: relu(bn(conv(relu(bn(conv(x))))) + x)
    t = net.op("Relu", [net.bn(net.conv(x, c, c, 3, bias=False), c)])
    t = net.bn(net.conv(t, c, c, 3, bias=False), c)
    x = net.op("Relu", [net.op("Add", [t, x])])
    # downsampling block: the shortcut Conv comes after the main path's second Conv, as exported
    t = net.op("Relu", [net.bn(net.conv(x, c, 2 * c, 3, bias=False, stride=2), 2 * c)])
    t = net.bn(net.conv(t, 2 * c, 2 * c, 3, bias=False), 2 * c)
    s = net.bn(net.conv(x, c, 2 * c, 1, bias=False, stride=2), 2 * c)
    net.op("Relu", [net.op("Add", [t, s])])
    net.rename_last("y")
    save("fuse_resnet_blocks", net.nodes, [vi("x", [2, 3, 16, 16])], [vi("y", None)], net.inits)


def sr_residual_body():
    """head conv, then 4 x (conv, relu, conv, Add(block input)), then a tail conv."""
    net = Net()
    c = 16
    x = net.conv("x", 3, c, 3)
    for _ in range(4):
        t = net.conv(net.op("Relu", [net.conv(x, c, c, 3)]), c, c, 3)
        x = net.op("Add", [x, t])  # the residual first, as some exporters write it
    net.conv(x, c, 3, 3)
    net.rename_last("y")
    save("fuse_sr_residual", net.nodes, [vi("x", [1, 3, 20, 16])], [vi("y", None)], net.inits)


def act_then_add():
    """relu(conv(x)) + x: the activation applies before the residual."""
    net = Net()
    net.op("Add", [net.op("Relu", [net.conv("x", 4, 4, 3)]), "x"])
    net.rename_last("y")
    save("fuse_conv_relu_then_add", net.nodes, [vi("x", [1, 4, 9, 11])], [vi("y", None)], net.inits)


def refusals():
    # the Add broadcasts a per-channel tensor: no residual fusion, still right
    net = Net()
    r = net.op("Sigmoid", ["r"])
    net.op("Relu", [net.op("Add", [net.conv("x", 4, 6, 3), r])])
    net.rename_last("y")
    save("nofuse_add_broadcast", net.nodes, [vi("x", [1, 4, 8, 8]), vi("r", [1, 6, 1, 1])], [vi("y", None)], net.inits)
    # the Conv's output is a graph output too
    net = Net()
    c = net.conv("x", 4, 4, 3)
    net.op("Add", [c, "x"])
    net.rename_last("y")
    net.nodes[0].output[0] = "c_out"
    net.nodes[1].input[0] = "c_out"
    save("nofuse_conv_output_is_graph_output", net.nodes, [vi("x", [1, 4, 8, 8])], [vi("y", None), vi("c_out", None)],
         net.inits)
    # x + x after a Conv: the Conv output read twice
    net = Net()
    c = net.conv("x", 4, 4, 3)
    net.op("Add", [c, c])
    net.rename_last("y")
    save("nofuse_add_self", net.nodes, [vi("x", [1, 4, 8, 8])], [vi("y", None)], net.inits)


def transformer_mlp():
    """A transformer's MLP on [1, 10, 16] tokens as PyTorch exports it before opset 20: MatMul + bias
    Add (ORT turns these into Gemm with a bias row), Gelu written out as Div/Erf/Add/Mul/Mul, MatMul
    + bias. Also a 2-D Gemm with a bias row, and a near-Gelu (0.4 for 0.5) that must stay unfused."""
    for name, half in (("fuse_mlp_gelu", 0.5), ("nofuse_mlp_not_gelu", 0.4)):
        n = [h.make_node("MatMul", ["x", "w1"], ["h1"]), h.make_node("Add", ["h1", "b1"], ["h2"]),
             h.make_node("Div", ["h2", "sqrt2"], ["g1"]), h.make_node("Erf", ["g1"], ["g2"]),
             h.make_node("Add", ["g2", "one"], ["g3"]), h.make_node("Mul", ["h2", "g3"], ["g4"]),
             h.make_node("Mul", ["g4", "half"], ["g5"]),
             h.make_node("MatMul", ["g5", "w2"], ["h3"]), h.make_node("Add", ["h3", "b2"], ["y"])]
        inits = [init("w1", [16, 64]), init("b1", [64]), init("w2", [64, 16]), init("b2", [16]),
                 scalar("sqrt2", 1.4142135623730951), scalar("one", 1.0), scalar("half", half)]
        save(name, n, [vi("x", [1, 10, 16])], [vi("y", None)], inits)
    n = [h.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)]
    save("fuse_gemm_bias_row", n, [vi("x", [7, 24])], [vi("y", None)], [init("w", [40, 24]), init("b", [40])])


def attention(name="fuse_attention", scale_first=False, kt_output=False):
    """ViT's self-attention as PyTorch exports it: qkv projection, Reshape, Transpose(2,0,3,1,4),
    Split into q/k/v along the leading axis (views of one buffer), Squeeze, q @ kᵀ through a
    Transpose, a scale Mul, Softmax, @ v, Transpose and Reshape back, output projection.
    scale_first writes the scale as the Mul's operand 0; kt_output makes kᵀ a graph output too,
    which keeps its Transpose (the Mul still folds into the MatMul)."""
    mul_in = ["scale", "s"] if scale_first else ["s", "scale"]
    n = [h.make_node("MatMul", ["x", "wqkv"], ["qkv"]), h.make_node("Reshape", ["qkv", "s5"], ["r"]),
         h.make_node("Transpose", ["r"], ["t"], perm=[2, 0, 3, 1, 4]),
         h.make_node("Split", ["t", "sizes"], ["q0", "k0", "v0"], axis=0),
         h.make_node("Squeeze", ["q0", "ax0"], ["q"]), h.make_node("Squeeze", ["k0", "ax0"], ["k"]),
         h.make_node("Squeeze", ["v0", "ax0"], ["v"]),
         h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["s"]),
         h.make_node("Mul", mul_in, ["ss"]), h.make_node("Softmax", ["ss"], ["p"], axis=-1),
         h.make_node("MatMul", ["p", "v"], ["o"]), h.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
         h.make_node("Reshape", ["ot", "s3"], ["o3"]), h.make_node("MatMul", ["o3", "wo"], ["y"])]
    inits = [init("wqkv", [48, 144]), init("wo", [48, 48]), scalar("scale", 24 ** -0.5),
             nh.from_array(np.array([1, 10, 3, 2, 24], np.int64), "s5"),
             nh.from_array(np.array([1, 10, 48], np.int64), "s3"),
             nh.from_array(np.array([1, 1, 1], np.int64), "sizes"), nh.from_array(np.array([0], np.int64), "ax0")]
    outputs = [vi("y", None)] + ([vi("kt", None)] if kt_output else [])
    save(name, n, [vi("x", [1, 10, 48])], outputs, inits)


def swin_attention(name, shifted, windows=4, heads=3, head=32):
    """Swin's window attention as torchvision's swin_t exports (opset 17, the TorchScript exporter):
    the qkv projection, Reshape [windows, 49, 3, heads, head], Transpose(2,0,3,1,4), Gather of q, k
    and v, q * scale, q @ kᵀ through a Transpose, + the relative position bias (Gather from its table,
    Reshape, Transpose, Unsqueeze: constants ORT folds), and for shifted windows a Reshape to
    [1, windows, heads, 49, 49], + the shift mask [1, windows, 1, 49, 49] of 0 and -100 and a
    Reshape back; Softmax, @ v, Transpose, Reshape, output projection."""
    c, n_tok = heads * head, 49
    n = [h.make_node("MatMul", ["x", "wqkv"], ["qkv0"]), h.make_node("Add", ["qkv0", "bqkv"], ["qkv"]),
         h.make_node("Reshape", ["qkv", "s5"], ["r"]), h.make_node("Transpose", ["r"], ["t"], perm=[2, 0, 3, 1, 4]),
         h.make_node("Gather", ["t", "i0"], ["q0"], axis=0), h.make_node("Gather", ["t", "i1"], ["k"], axis=0),
         h.make_node("Gather", ["t", "i2"], ["v"], axis=0), h.make_node("Mul", ["q0", "scale"], ["q"]),
         h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["a0"]),
         h.make_node("Gather", ["table", "index"], ["b0"], axis=0), h.make_node("Reshape", ["b0", "sb"], ["b1"]),
         h.make_node("Transpose", ["b1"], ["b2"], perm=[2, 0, 1]), h.make_node("Unsqueeze", ["b2", "ax0"], ["bias"]),
         h.make_node("Add", ["a0", "bias"], ["a1"])]
    scores = "a1"
    if shifted:
        n += [h.make_node("Reshape", ["a1", "s_win"], ["a2"]), h.make_node("Add", ["a2", "mask"], ["a3"]),
              h.make_node("Reshape", ["a3", "s_back"], ["a4"])]
        scores = "a4"
    n += [h.make_node("Softmax", [scores], ["p"], axis=-1), h.make_node("MatMul", ["p", "v"], ["o"]),
          h.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]), h.make_node("Reshape", ["ot", "s3"], ["o3"]),
          h.make_node("MatMul", ["o3", "wo"], ["y0"]), h.make_node("Add", ["y0", "bo"], ["y"])]
    # the relative position index of a 7x7 window, as torchvision computes it
    coords = np.stack(np.meshgrid(np.arange(7), np.arange(7), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + 6
    index = (rel[:, :, 0] * 13 + rel[:, :, 1]).reshape(-1).astype(np.int64)
    # the shift mask of a 14x14 map (4 windows of 7x7) shifted by 3: regions told apart, -100 across
    region = np.zeros((14, 14))
    cnt = 0
    for hs in (slice(0, -7), slice(-7, -3), slice(-3, None)):
        for ws in (slice(0, -7), slice(-7, -3), slice(-3, None)):
            region[hs, ws] = cnt
            cnt += 1
    win = region.reshape(2, 7, 2, 7).transpose(0, 2, 1, 3).reshape(windows, n_tok)
    mask = np.where(win[:, None, :] - win[:, :, None] != 0, -100.0, 0.0).astype(np.float32)
    inits = [init("wqkv", [c, 3 * c], 0.15), init("bqkv", [3 * c], 0.1), init("wo", [c, c], 0.15), init("bo", [c], 0.1),
             scalar("scale", head ** -0.5), init("table", [169, heads], 1.0),
             nh.from_array(index, "index"), nh.from_array(np.array([n_tok, n_tok, heads], np.int64), "sb"),
             nh.from_array(np.array([0], np.int64), "ax0"),
             nh.from_array(np.array([windows, n_tok, 3, heads, head], np.int64), "s5"),
             nh.from_array(np.array([windows, n_tok, c], np.int64), "s3")] + \
            [nh.from_array(np.array(i, np.int64), "i%d" % i) for i in range(3)]
    if shifted:
        inits += [nh.from_array(mask.reshape(1, windows, 1, n_tok, n_tok), "mask"),
                  nh.from_array(np.array([1, windows, heads, n_tok, n_tok], np.int64), "s_win"),
                  nh.from_array(np.array([windows, heads, n_tok, n_tok], np.int64), "s_back")]
    save(name, n, [vi("x", [windows, n_tok, c])], [vi("y", None)], inits)


def residual_layer_norm():
    """A pre-norm transformer's residual stream: x + f(LN(x)) twice, each sum normalized by the next
    LayerNormalization and read again by the next residual Add (the last sum is normalized only);
    and a sum that is a graph output too."""
    n = [h.make_node("LayerNormalization", ["x", "g0", "b0"], ["n0"], axis=-1, epsilon=1e-5),
         h.make_node("MatMul", ["n0", "w0"], ["f0"]), h.make_node("Add", ["x", "f0"], ["r0"]),
         h.make_node("LayerNormalization", ["r0", "g1", "b1"], ["n1"], axis=-1, epsilon=1e-5),
         h.make_node("MatMul", ["n1", "w1"], ["f1"]), h.make_node("Add", ["f1", "r0"], ["r1"]),
         h.make_node("LayerNormalization", ["r1", "g2"], ["y"], axis=-1, epsilon=1e-5)]
    inits = [init("w0", [48, 48]), init("w1", [48, 48])]
    for i in range(3):
        inits += [nh.from_array((1 + 0.1 * rng.standard_normal(48)).astype(np.float32), "g%d" % i)]
    inits += [init("b0", [48], 0.1), init("b1", [48], 0.1)]
    save("fuse_residual_layernorm", n, [vi("x", [1, 10, 48])], [vi("y", None)], inits)
    save("fuse_residual_layernorm_sum_output", n, [vi("x", [1, 10, 48])], [vi("y", None), vi("r1", None)], inits)


def attention_refusals():
    """Attention-like graphs that must stay unfused and still agree: Softmax over the queries (not
    the last axis), and scores that are a graph output."""
    for name, axis, out_scores in (("nofuse_attention_softmax_axis", -2, False),
                                   ("nofuse_attention_scores_output", -1, True)):
        n = [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["s"]),
             h.make_node("Mul", ["s", "scale"], ["ss"]), h.make_node("Softmax", ["ss"], ["p"], axis=axis),
             h.make_node("MatMul", ["p", "v"], ["y"])]
        outputs = [vi("y", None)] + ([vi("ss", None)] if out_scores else [])
        save(name, n, [vi("q", [1, 2, 12, 16]), vi("k", [1, 2, 12, 16]), vi("v", [1, 2, 12, 16])], outputs,
             [scalar("scale", 0.25)])


espcn()
transformer_mlp()
swin_attention("fuse_attention_swin", shifted=False)
swin_attention("fuse_attention_swin_shifted", shifted=True)
residual_layer_norm()
attention_refusals()
attention()
attention("fuse_attention_scale_first", scale_first=True)
attention("fuse_attention_kt_output", kt_output=True)
resnet_blocks()
sr_residual_body()
act_then_add()
refusals()
print("wrote the fusion models to", OUT)
