#!/usr/bin/python3
"""Writes the small ONNX models the tests and examples use, with seeded random weights.

Run with Debian's python3 (package python3-onnx, python3-numpy): no downloads, the same bytes on
every machine. Usage: make_models.py OUTPUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # the newest the Debian onnx package writes; ONNX Runtime 1.29 runs it as is
rng = np.random.default_rng(20261129)


def weight(name, shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
    scale = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(out_dir, name, nodes, inputs, outputs, inits, doc):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="gfxep")
    model.ir_version = 8
    model.doc_string = doc
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def conv(name, x, w, b, y, **attrs):
    inputs = [x, w] + ([b] if b else [])
    return helper.make_node("Conv", inputs, [y], name=name, **attrs)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)

    # every node supported: broadcasting Add with a constant, then Relu
    save(out_dir, "add_relu",
         [helper.make_node("Add", ["x", "bias"], ["s"], name="add"),
          helper.make_node("Relu", ["s"], ["y"], name="relu")],
         [tensor("x", [1, 3, 8, 8])], [tensor("y", [1, 3, 8, 8])],
         [weight("bias", [3, 1, 1], 1.0)],
         "Add (broadcast) + Relu: one partition, all on gfxep")

    # convolutions of several kinds on a dynamic H and W: shapes are resolved at run time
    save(out_dir, "conv_net",
         [conv("conv1", "x", "w1", "b1", "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
          conv("conv2", "r1", "w2", "b2", "c2", group=2, strides=[2, 2], pads=[0, 1, 1, 0]),
          helper.make_node("Mul", ["c2", "scale"], ["m"], name="scale"),
          conv("conv3", "m", "w3", None, "c3", dilations=[2, 2], pads=[2, 2, 2, 2]),
          helper.make_node("Sub", ["c3", "m"], ["d"], name="residual"),
          conv("conv4", "d", "w4", "b4", "c4", strides=[2, 2], auto_pad="SAME_UPPER"),
          conv("conv5", "c4", "w5", None, "c5", kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
          helper.make_node("Div", ["c5", "two"], ["y"], name="halve")],
         [tensor("x", [1, 3, "H", "W"])], [tensor("y", [1, 8, None, None])],
         [weight("w1", [8, 3, 3, 3]), weight("b1", [8], 0.1),
          weight("w2", [8, 4, 3, 3]), weight("b2", [8], 0.1),
          weight("scale", [1, 8, 1, 1], 1.0), weight("w3", [8, 8, 3, 3]),
          weight("w4", [8, 8, 3, 3]), weight("b4", [8], 0.1), weight("w5", [8, 8, 2, 2]),
          numpy_helper.from_array(np.array([2.0], np.float32), "two")],
         "Conv (bias, groups, strides, asymmetric pads, dilations, SAME_UPPER/LOWER) with dynamic H, W")

    # batched MatMul with a broadcast weight, bias and activation
    save(out_dir, "matmul",
         [helper.make_node("MatMul", ["a", "w"], ["mm"], name="matmul"),
          helper.make_node("Relu", ["mm"], ["h"], name="relu"),
          helper.make_node("MatMul", ["h", "h_t"], ["p"], name="matmul_batched"),
          helper.make_node("Add", ["p", "bias"], ["y"], name="bias")],
         [tensor("a", [2, 4, 16]), tensor("h_t", [2, 8, 5])], [tensor("y", [2, 4, 5])],
         [weight("w", [16, 8]), weight("bias", [5], 0.1)],
         "MatMul with broadcast batch dims, then a batched MatMul of two activations")

    # an unsupported node (Atan) between supported ones: two gfxep partitions around ORT's CPU EP
    save(out_dir, "partial",
         [conv("conv1", "x", "w1", "b1", "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
          helper.make_node("Atan", ["r1"], ["g"], name="gate_on_cpu"),
          helper.make_node("Mul", ["r1", "g"], ["m"], name="gated"),
          conv("conv2", "m", "w2", None, "c2", kernel_shape=[1, 1]),
          helper.make_node("Add", ["c2", "x3"], ["y"], name="skip")],
         [tensor("x", [1, 3, 16, 16]), tensor("x3", [1, 3, 16, 16])], [tensor("y", [1, 3, 16, 16])],
         [weight("w1", [6, 3, 3, 3]), weight("b1", [6], 0.1), weight("w2", [3, 6, 1, 1])],
         "Atan is left to ONNX Runtime; gfxep takes the rest in two partitions")

    # ops gfxep does not run: the nodes must stay with ORT and still be right
    save(out_dir, "unsupported",
         [helper.make_node("Shrink", ["x"], ["c"], name="shrink", lambd=0.25, bias=0.1),
          helper.make_node("Relu", ["c"], ["r"], name="relu"),
          helper.make_node("Hardmax", ["r"], ["y"], name="hardmax", axis=1)],
         [tensor("x", [1, 4, 5, 5, 5])], [tensor("y", [1, 4, 5, 5, 5])],
         [],
         "Shrink and Hardmax are not in gfxep's op table; only Relu runs on gfxep")

    # a node with more inputs than gfxep's limit (a Sum of 90): GetCapability must leave it to ORT and
    # still take the rest
    save(out_dir, "many_inputs",
         [helper.make_node("Relu", ["x"], ["r"], name="relu"),
          helper.make_node("Sum", ["r"] * 90, ["c"], name="sum90"),
          helper.make_node("Sigmoid", ["c"], ["y"], name="sigmoid")],
         [tensor("x", [1, 4])], [tensor("y", [1, 4])], [],
         "the 90-input Sum stays with ONNX Runtime; Relu and Sigmoid run on gfxep")

    # a Concat of 90 (as detection post-processing makes per class), which gfxep takes as a tree of
    # Concats of at most 8 inputs: the whole model runs on gfxep
    save(out_dir, "wide_concat",
         [helper.make_node("Relu", ["x"], ["r"], name="relu"),
          helper.make_node("Concat", ["r"] * 90, ["c"], name="concat90", axis=0),
          helper.make_node("Sigmoid", ["c"], ["y"], name="sigmoid")],
         [tensor("x", [1, 4])], [tensor("y", [90, 4])], [],
         "the 90-input Concat runs on gfxep as a tree of Concats, with Relu and Sigmoid")

    # for interop frame tests: y = relu(2x + 1), exact in fp32 for the quarter-step inputs the tests use
    save(out_dir, "frame_affine",
         [helper.make_node("Mul", ["x", "two"], ["m"], name="double"),
          helper.make_node("Add", ["m", "one"], ["a"], name="plus_one"),
          helper.make_node("Relu", ["a"], ["y"], name="relu")],
         [tensor("x", [1, 4, 64, 64])], [tensor("y", [1, 4, 64, 64])],
         [numpy_helper.from_array(np.array([2.0], np.float32), "two"),
          numpy_helper.from_array(np.array([1.0], np.float32), "one")],
         "y = relu(2x + 1): exact results for frame-by-frame interop checks")

    # the frame demo's fallback model: a fixed 5x5 Gaussian filter per channel (a denoiser that needs no
    # training; the demo's default is the trained models/demo_denoiser.onnx when present)
    g = np.exp(-((np.arange(5) - 2.0) ** 2) / (2 * 1.2 ** 2))
    k2 = np.outer(g, g)
    k2 = (k2 / k2.sum()).astype(np.float32)
    save(out_dir, "demo_filter",
         [conv("blur", "noisy", "w", None, "denoised", kernel_shape=[5, 5], pads=[2, 2, 2, 2], group=3)],
         [tensor("noisy", [1, 3, "H", "W"])], [tensor("denoised", [1, 3, "H", "W"])],
         [numpy_helper.from_array(np.stack([k2[None]] * 3), "w")],
         "Fixed 5x5 Gaussian blur per channel: the untrained fallback denoiser of the frame demo")

    # the example's default: a small residual denoiser-shaped conv net on a 256x256 RGB frame
    save(out_dir, "denoise_small",
         [conv("enc", "frame", "w1", "b1", "e", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["e"], ["e_r"], name="enc_relu"),
          conv("mid", "e_r", "w2", "b2", "m", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["m"], ["m_r"], name="mid_relu"),
          conv("dec", "m_r", "w3", "b3", "noise", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Sub", ["frame", "noise"], ["clean"], name="residual")],
         [tensor("frame", [1, 3, 256, 256])], [tensor("clean", [1, 3, 256, 256])],
         [weight("w1", [16, 3, 3, 3]), weight("b1", [16], 0.05), weight("w2", [16, 16, 3, 3]),
          weight("b2", [16], 0.05), weight("w3", [3, 16, 3, 3], 0.02), weight("b3", [3], 0.01)],
         "A residual conv net shaped like a denoiser (fixed random weights)")


    # a network without normalization whose middle activations pass float16's 65504 (conv2 reaches
    # about 1e6) while its input, first layer and output stay small: precision=fp16 without its range
    # guard returns NaN here, with it conv2..conv3 stay float32 and the rest runs in float16
    save(out_dir, "fp16_overflow",
         [conv("conv1", "x", "w1", "b1", "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
          conv("conv2", "r1", "w2", "b2", "c2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
          conv("conv3", "r2", "w3", None, "c3", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Mul", ["c3", "half"], ["y"], name="halve")],
         [tensor("x", [1, 3, "H", "W"])], [tensor("y", [1, 4, "H", "W"])],
         [weight("w1", [8, 3, 3, 3], 300.0), weight("b1", [8], 0.1),
          weight("w2", [8, 8, 3, 3], 100.0), weight("b2", [8], 0.1),
          weight("w3", [4, 8, 3, 3], 1e-5),
          numpy_helper.from_array(np.array([0.5], np.float32), "half")],
         "Activations beyond float16's range in the middle of a conv net (no normalization layers)")

    # detection post-processing in miniature, every node on gfxep: the scores above a threshold
    # (NonZero: a count only the data decides), the best k of them with k = min(count, 16) computed in
    # the graph (TopK with a run-time k), non-maximum suppression of their anchor boxes (another count),
    # then the kept boxes; one partition that runs in stages, reading each count back once per Run
    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)
    corners = rng.uniform(0.0, 16.0, size=(256, 4)).astype(np.float32)
    save(out_dir, "detect_post",
         [helper.make_node("Sigmoid", ["x"], ["probs"], name="probs"),
          helper.make_node("Reshape", ["probs", "flat_shape"], ["flat"], name="flatten"),
          helper.make_node("Greater", ["flat", "threshold"], ["keep"], name="above"),
          helper.make_node("NonZero", ["keep"], ["nz"], name="nonzero"),
          helper.make_node("Reshape", ["nz", "flat_shape"], ["idx"], name="indices"),
          helper.make_node("Gather", ["flat", "idx"], ["kept"], name="kept_scores", axis=0),
          helper.make_node("Shape", ["idx"], ["count"], name="count"),
          helper.make_node("Min", ["count", "k_max"], ["k"], name="clamp_k"),
          helper.make_node("TopK", ["kept", "k"], ["top_scores", "top_i"], name="topk"),
          helper.make_node("Gather", ["idx", "top_i"], ["sel"], name="selected", axis=0),
          helper.make_node("Gather", ["anchors", "sel"], ["sel_boxes"], name="selected_boxes", axis=0),
          helper.make_node("Unsqueeze", ["sel_boxes", "axis0"], ["boxes3"], name="batch_boxes"),
          helper.make_node("Unsqueeze", ["top_scores", "axes01"], ["scores3"], name="batch_scores"),
          helper.make_node("NonMaxSuppression", ["boxes3", "scores3", "max_out", "iou", "score_min"], ["nms"],
                           name="nms"),
          helper.make_node("Gather", ["nms", "box_column"], ["pick"], name="pick", axis=1),
          helper.make_node("Gather", ["sel_boxes", "pick"], ["boxes"], name="kept_boxes", axis=0)],
         [tensor("x", [1, 4, 8, 8])],
         [tensor("probs", [1, 4, 8, 8]), tensor("top_scores", [None]), tensor("boxes", [None, 4])],
         [i64("flat_shape", [-1]), numpy_helper.from_array(np.array(0.7, np.float32), "threshold"),
          i64("k_max", [16]), numpy_helper.from_array(corners, "anchors"), i64("axis0", [0]), i64("axes01", [0, 1]),
          i64("max_out", [5]), numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
          numpy_helper.from_array(np.array([0.72], np.float32), "score_min"), i64("box_column", 2)],
         "Detection post-processing in miniature: NonZero, TopK with a computed k, NonMaxSuppression")


    # a small UNet-like net of pooling and resampling between Convs: with channels-last Convs
    # (layout=nhwc, or auto in 16-bit) ONNX Runtime hands these over channels-last too, so that only
    # the Transposes at the graph's edges remain
    save(out_dir, "pool_net",
         [conv("conv1", "x", "pw1", "pb1", "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
          helper.make_node("MaxPool", ["r1"], ["p1"], name="maxpool", kernel_shape=[3, 3], strides=[2, 2],
                           pads=[1, 1, 1, 1]),
          conv("conv2", "p1", "pw2", "pb2", "c2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("AveragePool", ["c2"], ["p2"], name="avgpool", kernel_shape=[3, 3], strides=[2, 2],
                           pads=[1, 1, 1, 1], count_include_pad=1),
          conv("conv3", "p2", "pw3", "pb3", "c3", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
          helper.make_node("Resize", ["r3", "", "up2"], ["u1"], name="up_linear", mode="linear"),
          helper.make_node("Add", ["u1", "c2"], ["s1"], name="skip"),
          conv("conv4", "s1", "pw4", "pb4", "c4", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("Resize", ["c4", "", "up2"], ["u2"], name="up_nearest", mode="nearest",
                           coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
          conv("conv5", "u2", "pw5", "pb5", "y", kernel_shape=[1, 1]),
          helper.make_node("GlobalAveragePool", ["c4"], ["g"], name="gap"),
          helper.make_node("GlobalMaxPool", ["r3"], ["m"], name="gmp")],
         [tensor("x", [1, 3, 32, 32])],
         [tensor("y", [1, 4, 32, 32]), tensor("g", [1, 8, 1, 1]), tensor("m", [1, 8, 1, 1])],
         [weight("pw1", [8, 3, 3, 3]), weight("pb1", [8], 0.1), weight("pw2", [8, 8, 3, 3]), weight("pb2", [8], 0.1),
          weight("pw3", [8, 8, 3, 3]), weight("pb3", [8], 0.1), weight("pw4", [8, 8, 3, 3]), weight("pb4", [8], 0.1),
          weight("pw5", [4, 8, 1, 1]), weight("pb5", [4], 0.1),
          numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up2")],
         "Conv with MaxPool, AveragePool, Resize (linear, nearest), GlobalAveragePool and GlobalMaxPool between")

    # style transfer in miniature: reflection Pads, InstanceNormalization, Relu and a residual Add,
    # which gfxep fuses into the normalizations (ir/fuse_norm_epilogue.c)
    def pads(name, p):
        return numpy_helper.from_array(np.array([0, 0, p, p, 0, 0, p, p], np.int64), name)
    save(out_dir, "norm_pad_net",
         [helper.make_node("Pad", ["x", "pad1"], ["xp"], name="pad0", mode="reflect"),
          conv("conv1", "xp", "nw1", "nb1", "c1", kernel_shape=[3, 3]),
          helper.make_node("InstanceNormalization", ["c1", "ns1", "nbias1"], ["n1"], name="norm1"),
          helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
          helper.make_node("Pad", ["r1", "pad1"], ["r1p"], name="pad1", mode="reflect"),
          conv("conv2", "r1p", "nw2", "nb2", "c2", kernel_shape=[3, 3]),
          helper.make_node("InstanceNormalization", ["c2", "ns2", "nbias2"], ["n2"], name="norm2"),
          helper.make_node("Add", ["n2", "r1"], ["s"], name="residual"),
          helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
          helper.make_node("Pad", ["r2", "pad2"], ["r2p"], name="pad2", mode="reflect"),
          conv("conv3", "r2p", "nw3", "nb3", "y", kernel_shape=[5, 5])],
         [tensor("x", [1, 3, 20, 24])], [tensor("y", [1, 4, 20, 24])],
         [pads("pad1", 1), pads("pad2", 2), weight("nw1", [8, 3, 3, 3]), weight("nb1", [8], 0.1),
          weight("ns1", [8], 0.3), weight("nbias1", [8], 0.1), weight("nw2", [8, 8, 3, 3]), weight("nb2", [8], 0.1),
          weight("ns2", [8], 0.3), weight("nbias2", [8], 0.1), weight("nw3", [4, 8, 5, 5]), weight("nb3", [4], 0.1)],
         "reflection Pad, Conv, InstanceNormalization, Relu and a residual Add, as style-transfer nets build them")

    # a 2-D MaxPool between Convs beside a 3-D one, which has no channels-last form: ORT converts per
    # op type, so with channels-last Convs neither MaxPool may be handed over channels-last
    save(out_dir, "pool_mixed",
         [conv("conv1", "x", "mw1", "mb1", "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("MaxPool", ["c1"], ["p1"], name="maxpool2d", kernel_shape=[2, 2], strides=[2, 2]),
          conv("conv2", "p1", "mw2", "mb2", "y", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
          helper.make_node("MaxPool", ["v"], ["z"], name="maxpool3d", kernel_shape=[2, 2, 2], strides=[2, 2, 2])],
         [tensor("x", [1, 3, 16, 16]), tensor("v", [1, 2, 4, 8, 8])],
         [tensor("y", [1, 4, 8, 8]), tensor("z", [1, 2, 2, 4, 4])],
         [weight("mw1", [8, 3, 3, 3]), weight("mb1", [8], 0.1), weight("mw2", [4, 8, 3, 3]), weight("mb2", [4], 0.1)],
         "Convs with a 2-D MaxPool between them, and a 3-D MaxPool beside")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models")
