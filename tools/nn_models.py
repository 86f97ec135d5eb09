"""Small ONNX models covering Conv (1-D, + Relu), ConvTranspose and Gemm attribute combinations,
for checking gfxep against ONNX Runtime's CPU EP:

    python3 tools/nn_models.py OUT_DIR
    for f in OUT_DIR/*.onnx; do build/gfxep-run --backend reference --atol 1e-5 --rtol 1e-4 "$f" || echo "FAIL $f"; done
"""
import sys, itertools
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(0)
def w(name, shape): return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
def save(name, nodes, ins, outs, inits, opset=17):
    g = helper.make_graph(nodes, name, ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, f"{out}/{name}.onnx")
def t(name, shape): return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
def ct(name, xs, ws, ys, bias=True, **attrs):
    ins = ["x", "w"] + (["b"] if bias else [])
    inits = [w("w", ws)] + ([w("b", [ys[1]])] if bias else [])
    save(name, [helper.make_node("ConvTranspose", ins, ["y"], name="ct", **attrs)], [t("x", xs)], [t("y", None)], inits)
ct("ct_s2_op", [1,3,5,6], [3,4,3,3], [1,4], strides=[2,2], output_padding=[1,1], pads=[1,1,1,1])
ct("ct_group", [2,4,5,5], [4,3,3,3], [2,6], group=2, strides=[2,1])
ct("ct_dil", [1,2,5,4], [2,3,3,2], [1,3], dilations=[2,3], pads=[0,1,2,0], bias=False)
ct("ct_oshape", [1,2,4,4], [2,3,3,3], [1,3], strides=[2,2], output_shape=[8,9])
ct("ct_oshape_odd", [1,2,4,4], [2,3,3,3], [1,3], strides=[2,2], output_shape=[8,8])
ct("ct_same_upper", [1,2,4,5], [2,3,4,4], [1,3], strides=[2,2], auto_pad="SAME_UPPER")
ct("ct_same_lower", [1,2,4,5], [2,3,4,4], [1,3], strides=[2,2], auto_pad="SAME_LOWER")
ct("ct_valid", [1,2,3,3], [2,3,2,2], [1,3], strides=[3,2], auto_pad="VALID", output_padding=[2,1])
ct("ct_asym", [1,2,4,4], [2,2,3,3], [1,2], strides=[2,2], pads=[0,2,1,0], output_padding=[1,0])
ct("ct_1d", [2,3,7], [3,2,3], [2,2], strides=[2], pads=[1,0], output_padding=[1])
ct("ct_oshape_sup", [1,2,4,4], [2,3,3,3], [1,3], strides=[2,2], output_shape=[8,8], auto_pad="SAME_UPPER")
# output_shape beyond what the taps reach (9 rows from 3 with stride 3): negative pads, left to ORT
ct("ct_oshape_beyond", [1,1,3,3], [1,1,3,3], [1,1], strides=[3,3], output_shape=[10,8])
# output_shape with a dynamic spatial input: not known to fit, left to ORT
ct("ct_oshape_dynamic", [1,2,"h",4], [2,3,3,3], [1,3], strides=[2,2], output_shape=[8,9])
# Gemm: every trans/alpha/beta/C combination
M, K, N = 3, 5, 4
cshapes = {"none": None, "scalar": [], "one": [1], "n": [N], "1n": [1, N], "m1": [M, 1], "mn": [M, N], "11": [1,1]}
for ta, tb, (cn, cs), (al, be) in itertools.product([0,1],[0,1], cshapes.items(), [(1.0,1.0),(0.5,-2.0),(2.0,0.0)]):
    a_shape = [K, M] if ta else [M, K]
    b_shape = [N, K] if tb else [K, N]
    ins = ["a", "b"] + ([] if cs is None else ["c"])
    inits = [] if cs is None else [w("c", cs)]
    name = f"gemm_ta{ta}_tb{tb}_{cn}_a{al}_b{be}".replace(".", "p").replace("-", "m")
    save(name, [helper.make_node("Gemm", ins, ["y"], name="g", transA=ta, transB=tb, alpha=al, beta=be)],
         [t("a", a_shape), t("b", b_shape)], [t("y", None)], inits)
# Gemm with C as a runtime input
save("gemm_c_input", [helper.make_node("Gemm", ["a","b","c"], ["y"], name="g", transB=1, beta=0.25)],
     [t("a",[6,7]), t("b",[5,7]), t("c",[5])], [t("y", None)], [])
# Conv 1-D
save("conv1d", [helper.make_node("Conv", ["x","w","b"], ["y"], name="c", strides=[2], pads=[1,2], dilations=[2], group=2)],
     [t("x",[2,4,11])], [t("y",None)], [w("w",[6,2,3]), w("b",[6])])
save("conv1d_same", [helper.make_node("Conv", ["x","w"], ["y"], name="c", strides=[2], auto_pad="SAME_UPPER")],
     [t("x",[1,3,10])], [t("y",None)], [w("w",[4,3,4])])
# Conv + Relu, Conv + BN-like chain
save("conv_relu", [helper.make_node("Conv", ["x","w","b"], ["c"], name="c", pads=[1,1,1,1]),
                   helper.make_node("Relu", ["c"], ["y"], name="r")],
     [t("x",[1,3,8,8])], [t("y",None)], [w("w",[5,3,3,3]), w("b",[5])])
save("conv_relu_nobias", [helper.make_node("Conv", ["x","w"], ["c"], name="c", pads=[1,1,1,1]),
                   helper.make_node("Relu", ["c"], ["y"], name="r")],
     [t("x",[1,3,8,8])], [t("y",None)], [w("w",[5,3,3,3])])
# relu output shared: conv output also a graph output -> no fusion
save("conv_relu_shared", [helper.make_node("Conv", ["x","w","b"], ["c"], name="c", pads=[1,1,1,1]),
                   helper.make_node("Relu", ["c"], ["y"], name="r")],
     [t("x",[1,3,8,8])], [t("y",None), t("c", None)], [w("w",[5,3,3,3]), w("b",[5])])
ct("ct_same_upper_odd", [1,2,4,5], [2,3,3,3], [1,3], strides=[2,2], auto_pad="SAME_UPPER")
ct("ct_same_lower_odd", [1,2,4,5], [2,3,3,3], [1,3], strides=[2,2], auto_pad="SAME_LOWER")
ct("ct_1x1_nopad", [1,8,3,3], [8,2,1,1], [1,8], group=4)
# 3-D ConvTranspose (volumes, video decoders): the reference and Vulkan backends run it, CUDA leaves it
# to ONNX Runtime; a ConvTranspose + Relu the conv fusion folds. Each must run entirely on gfxep there
# (must_claim.txt, "!cuda")
ct("ct3d_s2", [1,3,3,4,4], [3,2,3,3,3], [1,2], strides=[2,2,2], pads=[1,0,1,1,0,1], output_padding=[1,1,0])
ct("ct3d_group_dil", [2,4,3,3,5], [4,1,2,3,2], [2,2], group=2, strides=[1,2,1], dilations=[2,1,2], bias=False)
ct("ct3d_same", [1,2,2,3,3], [2,3,2,2,3], [1,3], strides=[2,1,2], auto_pad="SAME_UPPER")
save("ct3d_relu", [helper.make_node("ConvTranspose", ["x", "w", "b"], ["c"], name="ct", strides=[2, 1, 1]),
                   helper.make_node("Relu", ["c"], ["y"], name="r")],
     [t("x", [1, 2, 3, 4, 4])], [t("y", None)], [w("w", [2, 3, 2, 3, 3]), w("b", [3])])
with open(f"{out}/must_claim.txt", "w") as f:
    f.write("".join(f"{n} !cuda\n" for n in ["ct3d_s2", "ct3d_group_dil", "ct3d_same", "ct3d_relu"]))
