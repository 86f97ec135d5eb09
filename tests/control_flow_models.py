# gfxep — If between gfxep partitions, as detectors export it (torchvision's batched NMS tests for an
# empty set of boxes and returns an empty index list), checked against ONNX Runtime's CPU EP. Usage:
# python3 tests/control_flow_models.py OUT_DIR, then for each model
#   build/gfxep-run --backend reference --atol 1e-5 --rtol 1e-4 OUT_DIR/<model>.onnx
# The condition comes from the data (sum(|X|) against -1), so ONNX Runtime cannot fold it and each
# model takes the branch its name says. The models in must_claim.txt must run entirely on gfxep,
# branches included: the If on ORT's control-flow kernel for gfxep's device, the branches' nodes in
# gfxep partitions of their own. One model has a branch node gfxep leaves to ORT (Det): the If stays
# on gfxep and the result must still agree. An If whose branches give a sequence has no kernel of
# gfxep's: it is left to ORT, and must agree too.
import os
import sys

import numpy as np
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

os.makedirs(sys.argv[1], exist_ok=True)
os.chdir(sys.argv[1])
N = h.make_node
claims = []


def graph(name, nodes, outs, elem=TP.FLOAT):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(o, elem, None) for o in outs])


def condition(taken):
    """cond: sum(|X|) > -1 (always true) or < -1 (always false)"""
    return [N("Abs", ["X"], ["ax"]), N("ReduceSum", ["ax"], ["s"], keepdims=0),
            N("Greater" if taken else "Less", ["s", "m1"], ["cond"])]


def save(name, nodes, x_shape, claim=True, opset=17):
    inits = [nh.from_array(np.array(v, t), n) for n, v, t in
             [("m1", -1.0, np.float32), ("two", 2.0, np.float32), ("one_f", 1.0, np.float32),
              ("zero", 0.0, np.float32), ("one", [1], np.int64)]]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("X", TP.FLOAT, x_shape)],
                     [h.make_tensor_value_info("Z", TP.FLOAT, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    open(name + ".onnx", "wb").write(m.SerializeToString())
    if claim:
        claims.append(name)


def float_branches():
    then_g = graph("then", [N("Relu", ["X"], ["r"]), N("Mul", ["r", "two"], ["y_then"])], ["y_then"])
    else_g = graph("else", [N("Neg", ["X"], ["n"]), N("Add", ["n", "one_f"], ["y_else"])], ["y_else"])
    return then_g, else_g


# a float result either way, then more work on gfxep after the If
for taken, opset in ((True, 17), (False, 13), (True, 21), (False, 11)):
    then_g, else_g = float_branches()
    save(f"if_float_{'then' if taken else 'else'}_op{opset}",
         condition(taken) + [N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
                             N("Sigmoid", ["y"], ["Z"])], [4, 6], opset=opset)

# the detectors' pattern: no boxes gives an empty int64 list, otherwise indices the data decides
for taken in (True, False):
    then_g = graph("then", [N("Constant", [], ["k_then"], value=nh.from_array(np.zeros((0,), np.int64)))],
                   ["k_then"], TP.INT64)
    else_g = graph("else", [N("Greater", ["X", "zero"], ["pos"]), N("NonZero", ["pos"], ["nz"]),
                            N("Gather", ["nz", "one"], ["k_else"], axis=0)], ["k_else"], TP.INT64)
    save(f"if_indices_{'empty' if taken else 'found'}",
         condition(taken) + [N("If", ["cond"], ["k"], then_branch=then_g, else_branch=else_g),
                             N("Cast", ["k"], ["kf"], to=TP.FLOAT), N("ReduceSum", ["kf"], ["Z"], keepdims=1)],
         [5, 7])

# branches that read a value a gfxep partition computed before the If (|X|), not only graph inputs
then_g = graph("then", [N("Sqrt", ["ax"], ["r"]), N("Mul", ["r", "two"], ["y_then"])], ["y_then"])
else_g = graph("else", [N("Neg", ["ax"], ["y_else"])], ["y_else"])
save("if_outer_value", condition(True) + [N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
                                          N("Add", ["y", "X"], ["Z"])], [6, 5])

# an If whose branches give a sequence, not a tensor: no kernel of gfxep's takes it (left to ORT)
then_g = h.make_graph([N("SequenceConstruct", ["X", "X"], ["seq_then"])], "then", [],
                      [h.make_tensor_sequence_value_info("seq_then", TP.FLOAT, None)])
else_g = h.make_graph([N("SequenceConstruct", ["X"], ["seq_else"])], "else", [],
                      [h.make_tensor_sequence_value_info("seq_else", TP.FLOAT, None)])
save("if_sequence_left", condition(True) + [N("If", ["cond"], ["seq"], then_branch=then_g, else_branch=else_g),
                                            N("ConcatFromSequence", ["seq"], ["Z"], axis=0)], [2, 3], claim=False)

# an If inside a branch
then_g, else_g = float_branches()
outer_then = graph("outer_then", [N("Abs", ["X"], ["ax2"]), N("ReduceMax", ["ax2"], ["mx"], keepdims=0),
                                  N("Greater", ["mx", "m1"], ["cond2"]),
                                  N("If", ["cond2"], ["y_inner"], then_branch=then_g, else_branch=else_g),
                                  N("Tanh", ["y_inner"], ["y_outer"])], ["y_outer"])
outer_else = graph("outer_else", [N("Sigmoid", ["X"], ["y_outer_else"])], ["y_outer_else"])
save("if_nested", condition(True) + [N("If", ["cond"], ["y"], then_branch=outer_then, else_branch=outer_else),
                                     N("Mul", ["y", "two"], ["Z"])], [3, 8])

# a branch with a node gfxep leaves to ORT (Det): the If stays on gfxep, the result must agree
then_g = graph("then", [N("Reshape", ["X", "sq"], ["m"]), N("Det", ["m"], ["d"]), N("Mul", ["d", "two"], ["y_then"])],
               ["y_then"])
else_g = graph("else", [N("ReduceSum", ["X"], ["y_else"], keepdims=0)], ["y_else"])
save("if_branch_on_ort", condition(True) + [N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
                                            N("Neg", ["y"], ["Z"])], [2, 9], claim=False)
# the Reshape's target shape: two 3x3 matrices
import onnx  # noqa: E402
m = onnx.load("if_branch_on_ort.onnx")
m.graph.initializer.append(nh.from_array(np.array([2, 3, 3], np.int64), "sq"))
onnx.save(m, "if_branch_on_ort.onnx")

# Convs before and inside the branches' inputs: under layout=nhwc (ctest control_flow_models_reference_nhwc)
# ORT transforms the layout and asks gfxep again, and the If claimed the first time must be claimed
# again (it carries gfxep's name by then)
w = nh.from_array(np.random.default_rng(3).standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.2, "w")
then_g = graph("then", [N("Relu", ["c"], ["r"]), N("Mul", ["r", "two"], ["y_then"])], ["y_then"])
else_g = graph("else", [N("Neg", ["c"], ["y_else"])], ["y_else"])
save("if_after_conv", [N("Conv", ["X", "w"], ["c"], pads=[1, 1, 1, 1])] + condition(True) +
     [N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
      N("Conv", ["y", "w"], ["Z"], pads=[1, 1, 1, 1])], [1, 4, 6, 6])
m = onnx.load("if_after_conv.onnx")
m.graph.initializer.append(w)
onnx.save(m, "if_after_conv.onnx")

open("must_claim.txt", "w").write("\n".join(claims) + "\n")
