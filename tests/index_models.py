# gfxep — small ONNX graphs in which the logic, Mod, scan, generator and index ops feed each other
# (bool masks, int64 indices and counts made on the device and read there), checked against ONNX
# Runtime's CPU EP. Usage: python3 tests/index_models.py OUT_DIR, then for each model
#   build/gfxep-run --backend reference --atol 1e-5 --rtol 1e-4 OUT_DIR/<model>.onnx
# Inputs are float32 in [-1, 1] (gfxep-run's); indices come from ArgMax or from constants, so they
# are always in range. Every node is one gfxep takes.
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

os.makedirs(sys.argv[1], exist_ok=True)
os.chdir(sys.argv[1])
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def save(name, nodes, inputs, outputs, inits, opset=18):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, F, None) for n in outputs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    open(name + ".onnx", "wb").write(m.SerializeToString())


def const(name, v, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(v, dtype), name)


N = helper.make_node
# the row maxima found by ArgMax, gathered, then written back negated (GatherElements and
# ScatterElements on device-made int64 indices); the top entry per row zeroed by a bool mask
save("argmax_gather_scatter",
     [N("ArgMax", ["x"], ["i"], axis=1, keepdims=1),
      N("GatherElements", ["x", "i"], ["m"], axis=1),
      N("Neg", ["m"], ["nm"]),
      N("ScatterElements", ["x", "i", "nm"], ["s"], axis=1),
      N("Equal", ["x", "m"], ["top"]),
      N("Not", ["top"], ["keep"]),
      N("Cast", ["keep"], ["kf"], to=F),
      N("Mul", ["s", "kf"], ["y"])],
     [("x", [4, 9])], ["y", "m"], [])

# a lower-triangular mask applied, running sums along the rows, folded with fmod; a causal-style
# mask from Range and comparisons with Xor/And/Or
save("trilu_cumsum_mod",
     [N("Trilu", ["x", "k"], ["t"], upper=0),
      N("CumSum", ["t", "ax"], ["c"], exclusive=1),
      N("Mod", ["c", "half"], ["y"], fmod=1)],
     [("x", [2, 6, 6])], ["y"], [const("k", 1), const("ax", -1), const("half", 0.5, np.float32)])
save("range_masks",
     [N("Range", ["r0", "r1", "r2"], ["r"]),
      N("Cast", ["r"], ["rf"], to=F),
      N("Greater", ["x", "rf"], ["g"]),
      N("Less", ["x", "zero"], ["l"]),
      N("Xor", ["g", "l"], ["xo"]),
      N("And", ["xo", "g"], ["a"]),
      N("Or", ["a", "l"], ["o"]),
      N("Where", ["o", "x", "rf"], ["y"])],
     [("x", [3, 8])], ["y"],
     [const("r0", -1.0, np.float32), const("r1", 1.0, np.float32), const("r2", 0.25, np.float32),
      const("zero", 0.0, np.float32)], opset=13)

# integer Mod (the divisor's sign) and CumSum on values made on the device
save("int_mod_cumsum",
     [N("Mul", ["x", "ten"], ["x10"]),
      N("Cast", ["x10"], ["xi"], to=I64),
      N("Mod", ["xi", "seven"], ["mi"]),
      N("CumSum", ["mi", "ax"], ["ci"], reverse=1),
      N("Cast", ["ci"], ["y"], to=F)],
     [("x", [5, 7])], ["y"], [const("ten", 10.0, np.float32), const("seven", [-7, 7, 3, -3, 5, 2, -2]),
                             const("ax", 0)])

# ScatterND with every reduction on slices made from the input, then GatherND of some of them
for red in ("none", "add", "mul", "max", "min"):
    idx = [[1], [3]] if red == "none" else [[1], [3], [1]]
    save("scatternd_gathernd_" + red,
         [N("Slice", ["x", "s0", "s1"], ["u"]),
          N("ScatterND", ["x", "idx", "u"], ["s"], reduction=red),
          N("GatherND", ["s", "gi"], ["y"], batch_dims=0)],
         [("x", [5, 4])], ["y", "s"],
         [const("s0", [0]), const("s1", [len(idx)]), const("idx", idx), const("gi", [[1, 0], [3, -1], [-4, 2]])])
