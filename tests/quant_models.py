# gfxep — quantized networks in the QDQ form ONNX Runtime's static quantizer writes: int8 weights
# (per output channel, symmetric), int32 biases with the scale input scale x weight scale, activations
# quantized and dequantized around every compute node (uint8 with a zero point, or symmetric int8),
# and the data-movement nodes between DequantizeLinear and QuantizeLinear. Checked against ONNX
# Runtime's CPU EP. Usage: python3 tests/quant_models.py OUT_DIR, then for each model
#   build/gfxep-run --backend reference --atol 0.08 --rtol 0 OUT_DIR/<model>.onnx
# Why that tolerance: every output leaves through QuantizeLinear -> DequantizeLinear with the scale
# OUT_SCALE (1/32), so a correct result is a multiple of 1/32 and two correct implementations differ
# only where a sum lands within rounding of a half step: ORT's CPU EP fuses each DQ -> op -> Q into an
# integer kernel (QLinearConv, QLinearAdd, ...) that rounds its requantization differently from the
# float arithmetic gfxep runs between the DQ and the Q. 0.08 allows two such steps (a flip in one
# layer that moves the next); a zero point, scale or axis applied wrongly moves outputs by many.
# Every model must run entirely on gfxep (must_claim.txt). The weights and scales are chosen so that
# every output spans tens of steps (gfxep-run prints each output's peak).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

os.makedirs(sys.argv[1], exist_ok=True)
os.chdir(sys.argv[1])
F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
N = helper.make_node
OUT_SCALE = 1.0 / 32
rng = np.random.default_rng(20261203)
must_claim = []


class Net:
    """A graph under construction: nodes, initializers, and a counter for unique names."""

    def __init__(self, act_type=U8):
        self.nodes, self.inits, self.n = [], [], 0
        self.act_type = act_type  # uint8 activations with a zero point, or int8 symmetric ones

    def name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def const(self, stem, value, dtype):
        nm = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), nm))
        return nm

    def qdq(self, x, scale, zero=None, dtype=None):
        """x -> QuantizeLinear -> DequantizeLinear with one scale: the activation as the quantizer
        leaves it between two quantized nodes."""
        dtype = dtype or self.act_type
        np_type = np.uint8 if dtype == U8 else np.int8
        if zero is None:
            zero = 128 if dtype == U8 else 0
        s = self.const("s", scale, np.float32)
        z = self.const("z", zero, np_type)
        q, y = self.name("q"), self.name("dq")
        self.nodes += [N("QuantizeLinear", [x, s, z], [q]), N("DequantizeLinear", [q, s, z], [y])]
        return y

    def weights(self, w, axis=0):
        """float weights -> int8 per channel along axis (symmetric) -> DequantizeLinear; returns the
        dequantized name and the per-channel scales."""
        red = tuple(i for i in range(w.ndim) if i != axis)
        scale = np.maximum(np.abs(w).max(axis=red), 1e-8) / 127.0
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        q = self.const("wq", wq, np.int8)
        s = self.const("ws", scale.astype(np.float32), np.float32)
        z = self.const("wz", np.zeros(scale.shape, np.int8), np.int8)
        y = self.name("w")
        self.nodes.append(N("DequantizeLinear", [q, s, z], [y], axis=axis))
        return y, scale

    def bias(self, b, x_scale, w_scale):
        """an int32 bias with the scale x_scale * w_scale (per channel), as the quantizer writes it"""
        scale = (x_scale * w_scale).astype(np.float32)
        bq = np.round(b / scale).astype(np.int32)
        q = self.const("bq", bq, np.int32)
        s = self.const("bs", scale, np.float32)
        z = self.const("bz", np.zeros(scale.shape, np.int32), np.int32)
        y = self.name("b")
        self.nodes.append(N("DequantizeLinear", [q, s, z], [y], axis=0))
        return y

    def conv(self, x, x_scale, c_in, c_out, k=3, group=1, stride=1, act=None, y_scale=0.05, **kw):
        """a quantized Conv (weights per output channel, int32 bias) with an optional Relu between
        it and its QuantizeLinear, as the quantizer fuses it"""
        w = rng.standard_normal((c_out, c_in // group, k, k)).astype(np.float32) * (1.0 / np.sqrt(c_in // group * k * k))
        wn, ws = self.weights(w)
        bn = self.bias(rng.standard_normal(c_out).astype(np.float32) * 0.2, x_scale, ws)
        y = self.name("conv")
        pad = (k - 1) // 2
        self.nodes.append(N("Conv", [x, wn, bn], [y], kernel_shape=[k, k], pads=[pad] * 4, strides=[stride] * 2,
                            group=group, **kw))
        if act:
            a = self.name(act.lower())
            self.nodes.append(N(act, [y], [a]))
            y = a
        return self.qdq(y, y_scale, 0 if act and self.act_type == U8 else None)

    def save(self, name, inputs, outputs, opset=13, claim=True):
        """the model with its outputs quantized to OUT_SCALE; float inputs of the given shapes"""
        outs = []
        for o in outputs:
            outs.append(self.qdq(o, OUT_SCALE))
        ys = []
        for i, o in enumerate(outs):
            y = f"y{i}"
            self.nodes.append(N("Identity", [o], [y]))
            ys.append(y)
        g = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(y, F, None) for y in ys], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        open(name + ".onnx", "wb").write(m.SerializeToString())
        if claim:
            must_claim.append(name)


IN_SCALE = 2.0 / 255  # gfxep-run's inputs are in [-1, 1]: uint8 with zero point 128


def stem(net, c_out=8, c_in=3):
    """the input quantized, then a strided 3x3 Conv + Relu"""
    x = net.qdq("x", IN_SCALE, 128 if net.act_type == U8 else 0)
    return net.conv(x, IN_SCALE, c_in, c_out, act="Relu", y_scale=0.04), 0.04


# one Conv with a Relu, uint8 activations: the quantizer's most common node
net = Net()
x = net.qdq("x", IN_SCALE, 128)
y = net.conv(x, IN_SCALE, 3, 8, act="Relu", y_scale=0.03)
net.save("qdq_conv_relu", [("x", [1, 3, 16, 20])], [y])

# the same with symmetric int8 activations (zero point 0) and no activation function
net = Net(I8)
x = net.qdq("x", 1.0 / 127, 0)
y = net.conv(x, 1.0 / 127, 3, 8, y_scale=0.04)
net.save("qdq_conv_int8_acts", [("x", [1, 3, 12, 12])], [y])

# a ResNet basic block: two Convs, the residual Add quantized (QLinearAdd on ORT's CPU EP), Relu,
# then global average pooling and a quantized Gemm head (weights per output row)
net = Net()
h, hs = stem(net, 16)
a = net.conv(h, hs, 16, 16, act="Relu", y_scale=0.05)
b = net.conv(a, 0.05, 16, 16, y_scale=0.05)
s = net.name("add")
net.nodes.append(N("Add", [b, h], [s]))
s = net.qdq(s, 0.06)
r = net.name("relu")
net.nodes.append(N("Relu", [s], [r]))
r = net.qdq(r, 0.06, 0)
p = net.name("gap")
net.nodes.append(N("GlobalAveragePool", [r], [p]))
p = net.qdq(p, 0.02, 0)
f = net.name("flat")
net.nodes.append(N("Flatten", [p], [f], axis=1))
wg, wgs = net.weights(rng.standard_normal((10, 16)).astype(np.float32) * 0.8, axis=0)
bg = net.bias(rng.standard_normal(10).astype(np.float32) * 0.3, 0.02, wgs)
yg = net.name("gemm")
net.nodes.append(N("Gemm", [f, wg, bg], [yg], transB=1))
net.save("qdq_resnet_block", [("x", [1, 3, 32, 32])], [yg, r])

# depthwise and pointwise Convs (MobileNet's block) with Clip(0, 6) as the activation
net = Net()
h, hs = stem(net, 8)
lo, hi = net.const("lo", 0.0, np.float32), net.const("hi", 6.0, np.float32)
d = net.name("dw")
wd, wds = net.weights(rng.standard_normal((8, 1, 3, 3)).astype(np.float32) * 0.5)
bd = net.bias(rng.standard_normal(8).astype(np.float32) * 0.1, hs, wds)
net.nodes.append(N("Conv", [h, wd, bd], [d], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8))
c = net.name("clip")
net.nodes.append(N("Clip", [d, lo, hi], [c]))
c = net.qdq(c, 6.0 / 255, 0)
y = net.conv(c, 6.0 / 255, 8, 12, k=1, y_scale=0.05)
net.save("qdq_depthwise_pointwise", [("x", [1, 3, 24, 24])], [y])

# the data-movement nodes the quantizer keeps between DequantizeLinear and QuantizeLinear (MaxPool,
# Resize, Concat, Reshape, Transpose), in a small UNet-style encoder-decoder
net = Net()
h, hs = stem(net, 8)
m = net.name("pool")
net.nodes.append(N("MaxPool", [h], [m], kernel_shape=[2, 2], strides=[2, 2]))
m = net.qdq(m, hs, 0)
e = net.conv(m, hs, 8, 16, act="Relu", y_scale=0.05)
u = net.name("up")
sc = net.const("scales", [1.0, 1.0, 2.0, 2.0], np.float32)
net.nodes.append(N("Resize", [e, "", sc], [u], mode="nearest"))
u = net.qdq(u, 0.05, 0)
cat = net.name("cat")
net.nodes.append(N("Concat", [u, h], [cat], axis=1))
cat = net.qdq(cat, 0.05, 0)
o = net.conv(cat, 0.05, 24, 4, y_scale=0.05)
t = net.name("t")
net.nodes.append(N("Transpose", [o], [t], perm=[0, 2, 3, 1]))
t = net.qdq(t, 0.05)
net.save("qdq_unet_data_movement", [("x", [1, 3, 16, 16])], [t])

# a transformer's projection: MatMul with int8 weights (per column, axis 1), uint8 activations,
# Softmax in float between DequantizeLinear and QuantizeLinear as the quantizer leaves it
net = Net()
x = net.qdq("x", IN_SCALE, 128)
wm, wms = net.weights(rng.standard_normal((24, 16)).astype(np.float32) * 0.45, axis=1)
y1 = net.name("mm")
net.nodes.append(N("MatMul", [x, wm], [y1]))
y1 = net.qdq(y1, 0.05)
sm = net.name("softmax")
net.nodes.append(N("Softmax", [y1], [sm], axis=-1))
sm = net.qdq(sm, 1.0 / 256, 0)
net.save("qdq_matmul_softmax", [("x", [2, 5, 24])], [y1, sm])

# weight-only quantization: float activations, int8 weights dequantized for a Conv and a ConvTranspose
net = Net()
wc, _ = net.weights(rng.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.25)
c = net.name("conv")
net.nodes.append(N("Conv", ["x", wc], [c], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
wt, _ = net.weights(rng.standard_normal((6, 4, 2, 2)).astype(np.float32) * 0.3, axis=1)
t = net.name("convt")
net.nodes.append(N("ConvTranspose", [c, wt], [t], kernel_shape=[2, 2], strides=[2, 2]))
net.save("weight_only_conv_convtranspose", [("x", [1, 3, 10, 12])], [t])

# quantization-aware training as PyTorch exports it: float weights behind QuantizeLinear ->
# DequantizeLinear (fake quantization, per output channel), a float bias, the activations too
net = Net()
x = net.qdq("x", IN_SCALE, 128)
wf = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
ws = net.const("ws", (np.abs(wf).reshape(8, -1).max(axis=1) / 127).astype(np.float32), np.float32)
wz = net.const("wz", np.zeros(8, np.int8), np.int8)
wc = net.const("wf", wf, np.float32)
wq, wd = net.name("wq"), net.name("wd")
net.nodes += [N("QuantizeLinear", [wc, ws, wz], [wq], axis=0), N("DequantizeLinear", [wq, ws, wz], [wd], axis=0)]
bf = net.const("bf", rng.standard_normal(8).astype(np.float32) * 0.1, np.float32)
c = net.name("conv")
net.nodes.append(N("Conv", [x, wd, bf], [c], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
r = net.name("relu")
net.nodes.append(N("Relu", [c], [r]))
r = net.qdq(r, 0.03, 0)
net.save("qat_fake_quant_weights", [("x", [1, 3, 12, 14])], [r])

# opset 19's float16 scales: the activations dequantized to float16 and computed there
net = Net()
s16 = net.const("s16", 0.03, np.float16)
z8 = net.const("z8", 128, np.uint8)
xc = net.name("x16")
net.nodes.append(N("Cast", ["x"], [xc], to=TensorProto.FLOAT16))
q, dq = net.name("q"), net.name("dq")
net.nodes += [N("QuantizeLinear", [xc, s16, z8], [q]), N("DequantizeLinear", [q, s16, z8], [dq])]
mul = net.name("mul")
net.nodes.append(N("Mul", [dq, dq], [mul]))
q2, dq2 = net.name("q"), net.name("dq")
net.nodes += [N("QuantizeLinear", [mul, s16, z8], [q2]), N("DequantizeLinear", [q2, s16, z8], [dq2])]
back = net.name("f32")
net.nodes.append(N("Cast", [dq2], [back], to=F))
net.save("qdq_float16_scale_opset19", [("x", [2, 3, 7])], [back], opset=19)

with open("must_claim.txt", "w") as f:
    f.write("".join(n + "\n" for n in must_claim))
