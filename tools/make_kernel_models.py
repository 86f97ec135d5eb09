#!/usr/bin/env python3
"""Writes single-node models of the bandwidth-bound data-movement kernels of graphics nets, at the
sizes tools/gpu-check.sh times them with gfxep-bench (device time per kernel, float16, a 64-channel
1080p map): Resize x2 in each mode (decoders), DepthToSpace x2 (sub-pixel SR) and reflection Pad
(style transfer), Relu, Tanh and Add (element-wise); the float16 MatMul and Conv of the kernel-efficiency
table (FLOPs); and a detector's selection, TopK of the 1000 best among a million float32 scores
(one FPN level's anchors x classes). The bytes each moves are in the name's comment below and in kernels.json.

Usage: make_kernel_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, node, inputs, inits):
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)
    g = helper.make_graph([node], os.path.basename(path), inputs, [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    half = 2  # bytes per float16
    kernels = {}
    c, h, w = 64, 540, 960
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, c, h, w])
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    for mode in ("nearest", "linear", "cubic"):
        name = f"resize_{mode}_x2"
        node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)
        save(os.path.join(out, name + ".onnx"), node, [x], [scales])
        kernels[name] = {"bytes": (c * h * w + c * 4 * h * w) * half}  # read once, write 4x
    x12 = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 12, h, w])
    save(os.path.join(out, "depth_to_space_x2.onnx"),
         helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2), [x12], [])
    kernels["depth_to_space_x2"] = {"bytes": 2 * 12 * h * w * half}
    xp = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, c, 1078, 1918])
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
    save(os.path.join(out, "pad_reflect.onnx"), helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect"),
         [xp], [pads])
    kernels["pad_reflect"] = {"bytes": (c * 1078 * 1918 + c * 1080 * 1920) * half}
    save(os.path.join(out, "pad_edge.onnx"), helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge"), [xp], [pads])
    kernels["pad_edge"] = kernels["pad_reflect"]
    save(os.path.join(out, "pad_constant.onnx"), helper.make_node("Pad", ["x", "pads"], ["y"]), [xp], [pads])
    kernels["pad_constant"] = kernels["pad_reflect"]
    # a crop of a padded map (the inverse of the pads above, by 4 on each side)
    xc = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, c, 1088, 1928])
    crop = [numpy_helper.from_array(np.array(v, np.int64), n)
            for n, v in (("starts", [4, 4]), ("ends", [1084, 1924]), ("axes", [2, 3]))]
    save(os.path.join(out, "slice_crop.onnx"), helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"]),
         [xc], crop)
    kernels["slice_crop"] = {"bytes": 2 * c * 1080 * 1920 * half}
    # a skip connection's channel Concat of two 32-channel 1080p maps
    xa = helper.make_tensor_value_info("a", TensorProto.FLOAT16, [1, 32, 1080, 1920])
    xb = helper.make_tensor_value_info("b", TensorProto.FLOAT16, [1, 32, 1080, 1920])
    save(os.path.join(out, "concat_channels.onnx"), helper.make_node("Concat", ["a", "b"], ["y"], axis=1), [xa, xb], [])
    kernels["concat_channels"] = {"bytes": 2 * c * 1080 * 1920 * half}
    # element-wise on a 64-channel 1080p map: Relu (read once, write once) and a residual Add (two reads)
    x64 = helper.make_tensor_value_info("a", TensorProto.FLOAT16, [1, c, 1080, 1920])
    save(os.path.join(out, "relu_fp16.onnx"), helper.make_node("Relu", ["a"], ["y"]), [x64], [])
    kernels["relu_fp16"] = {"bytes": 2 * c * 1080 * 1920 * half}
    save(os.path.join(out, "tanh_fp16.onnx"), helper.make_node("Tanh", ["a"], ["y"]), [x64], [])
    kernels["tanh_fp16"] = kernels["relu_fp16"]
    y64 = helper.make_tensor_value_info("b", TensorProto.FLOAT16, [1, c, 1080, 1920])
    save(os.path.join(out, "add_fp16.onnx"), helper.make_node("Add", ["a", "b"], ["y"]), [x64, y64], [])
    kernels["add_fp16"] = {"bytes": 3 * c * 1080 * 1920 * half}
    scores = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1 << 20])
    k = numpy_helper.from_array(np.array([1000], np.int64), "k")
    g = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1)], "topk_scores_k1000",
                          [scores], [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                                     helper.make_tensor_value_info("indices", TensorProto.INT64, None)], [k])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    onnx.save(m, os.path.join(out, "topk_scores_k1000.onnx"))
    kernels["topk_scores_k1000"] = {"bytes": (1 << 20) * 4 + 1000 * 12}  # the scores read once, k pairs written
    # the tensor-core products of the kernel-efficiency table: a float16 4096^3 MatMul (weights as an
    # initializer) and a 3x3 256 -> 256 convolution of 8 x 128 x 128 (FLOPs instead of bytes)
    rng = np.random.default_rng(0)
    xm = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4096, 4096])
    wm = numpy_helper.from_array((rng.standard_normal((4096, 4096)) * 0.02).astype(np.float16), "w")
    save(os.path.join(out, "matmul_fp16_4096.onnx"), helper.make_node("MatMul", ["x", "w"], ["y"]), [xm], [wm])
    kernels["matmul_fp16_4096"] = {"flops": 2 * 4096 ** 3}
    xv = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [8, 256, 128, 128])
    wv = numpy_helper.from_array((rng.standard_normal((256, 256, 3, 3)) * 0.02).astype(np.float16), "w")
    save(os.path.join(out, "conv_fp16_256.onnx"), helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
         [xv], [wv])
    kernels["conv_fp16_256"] = {"flops": 2 * 8 * 256 * 256 * 9 * 128 * 128}
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump(kernels, f, indent=1)


if __name__ == "__main__":
    main()
