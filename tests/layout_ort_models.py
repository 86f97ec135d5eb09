"""Small ONNX models of the layout and data movement ops, to compare gfxep with ONNX Runtime's CPU EP:

    python3 tests/layout_ort_models.py OUTDIR
    for m in OUTDIR/*.onnx; do build/gfxep-run --backend reference --atol 0 --rtol 0 $m; done

gfxep-run feeds random float32 inputs. Other element types are reached through Cast nodes that ONNX
Runtime keeps: int64 cases add 2^60 before the op and subtract it after, so any byte not moved
exactly shows in the float32 result. float16 is left out: where ONNX Runtime's CPU EP lacks a
float16 kernel it computes in float32 and drops the Cast pair around the op, so its reference skips
the float16 rounding; the 2-byte path is covered by the reference kernel unit tests.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/layout_models"
os.makedirs(OUT, exist_ok=True)
count = 0


def const(name, values, dtype=np.int64):
    return nh.from_array(np.array(values, dtype=dtype), name)


def save(name, nodes, x_shape, y_shape, inits=(), opset=17, n_out=1, elem=TP.FLOAT, y_shapes=None):
    """One float32 input X; outputs Y (or Y0..Yn-1) of float32 after the typed part."""
    global count
    inputs = [h.make_tensor_value_info("X", TP.FLOAT, x_shape)]
    if n_out == 1:
        outputs = [h.make_tensor_value_info("Y", TP.FLOAT, y_shape)]
    else:
        outputs = [h.make_tensor_value_info("Y%d" % i, TP.FLOAT, y_shapes[i] if y_shapes else None) for i in range(n_out)]
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    count += 1


def typed(name, make_op, x_shape, y_shape, dtype, inits=(), opset=17, n_out=1, y_shapes=None):
    """X -> [scale, cast to dtype, (+2^60 for int64)] -> op -> [(-2^60), cast to float32] -> Y."""
    nodes = [h.make_node("Mul", ["X", "k"], ["Xs"]), h.make_node("Cast", ["Xs"], ["Xt"], to=dtype)]
    inits = list(inits) + [nh.from_array(np.array(1000.0, dtype=np.float32), "k")]
    src = "Xt"
    if dtype == TP.INT64:
        inits.append(const("big", 1 << 60))
        nodes.append(h.make_node("Add", ["Xt", "big"], ["Xb"]))
        src = "Xb"
    outs = ["T%d" % i for i in range(n_out)]
    nodes += make_op(src, outs)
    for i, o in enumerate(outs):
        y = "Y" if n_out == 1 else "Y%d" % i
        if dtype == TP.INT64:
            nodes.append(h.make_node("Sub", [o, "big"], [o + "s"]))
            o = o + "s"
        nodes.append(h.make_node("Cast", [o], [y], to=TP.FLOAT))
    save(name, nodes, x_shape, y_shape, inits, opset, n_out, y_shapes=y_shapes)


def both(name, make_op, x_shape, y_shape, inits=(), opset=17, n_out=1, types=(TP.INT64, TP.INT8, TP.BOOL, TP.INT32)):
    """The op on float32 X directly, and on each of `types` through casts."""
    outs = ["Y"] if n_out == 1 else ["Y%d" % i for i in range(n_out)]
    save(name, make_op("X", outs), x_shape, y_shape, inits, opset, n_out)
    for t in types:
        typed("%s_%s" % (name, TP.DataType.Name(t).lower()), make_op, x_shape, y_shape, t, inits, opset, n_out)


def op(op_type, extra_inputs=(), **attrs):
    return lambda x, outs: [h.make_node(op_type, [x] + list(extra_inputs), outs, **attrs)]


# Transpose
both("transpose_default", op("Transpose"), [2, 3, 4], [4, 3, 2])
both("transpose_perm", op("Transpose", perm=[1, 3, 0, 2]), [2, 3, 4, 5], [3, 5, 2, 4])
both("transpose_1", op("Transpose", opset=1) if False else op("Transpose", perm=[0, 2, 1]), [2, 1, 3], [2, 3, 1], opset=11)

# Concat: X with itself and a constant, negative axis
both("concat_axis1", lambda x, o: [h.make_node("Concat", [x, x, x], o, axis=1)], [2, 3, 2], [2, 9, 2])
save("concat_negaxis_const", [h.make_node("Concat", ["X", "C"], ["Y"], axis=-1)], [2, 3], [2, 5],
     [nh.from_array(np.arange(4, dtype=np.float32).reshape(2, 2), "C")])
save("concat_empty", [h.make_node("Concat", ["X", "C"], ["Y"], axis=0)], [2, 3], [2, 3],
     [nh.from_array(np.zeros((0, 3), dtype=np.float32), "C")])

# Split
both("split11_attr", op("Split", axis=1, split=[1, 3, 2]), [2, 6], None, opset=11, n_out=3)
both("split13_input", op("Split", ["s"], axis=-1), [2, 7], None, [const("s", [2, 0, 5])], opset=13, n_out=3)
both("split13_equal", op("Split", axis=0), [6, 2], None, opset=13, n_out=3)
save("split18_num_outputs", [h.make_node("Split", ["X"], ["Y0", "Y1", "Y2"], axis=1, num_outputs=3)], [2, 7], None,
     opset=18, n_out=3)

# Slice
def slice_case(name, shape, starts, ends, axes=None, steps=None, opset=13):
    ins = ["st", "en"] + (["ax"] if axes is not None else ([""] if steps is not None else [])) + (["sp"] if steps is not None else [])
    inits = [const("st", starts), const("en", ends)]
    if axes is not None:
        inits.append(const("ax", axes))
    if steps is not None:
        inits.append(const("sp", steps))
    both(name, op("Slice", ins), shape, None, inits, opset=opset)

slice_case("slice_basic", [4, 6], [1, 2], [3, 5])
slice_case("slice_neg_axes", [4, 6, 5], [-3], [100], axes=[-1])
slice_case("slice_neg_step", [5, 7], [-1, 6], [-100, 0], axes=[0, 1], steps=[-1, -2])
slice_case("slice_step3", [10, 3], [1], [9223372036854775807], axes=[0], steps=[3])
slice_case("slice_empty", [4, 3], [3], [1], axes=[0])
slice_case("slice_neg_start_clamp", [4, 3], [-100, 1], [2, -1], axes=[0, 1], opset=11)
slice_case("slice_rev_int_min", [6], [5], [-9223372036854775807], axes=[0], steps=[-2], opset=10)

# Pad
def pad_case(name, shape, pads, mode=None, value=None, axes=None, opset=13, types=(TP.INT64, TP.INT8, TP.BOOL, TP.INT32)):
    ins = ["p"] + (["v"] if value is not None else ([""] if axes is not None else [])) + (["a"] if axes is not None else [])
    inits = [const("p", pads)]
    if axes is not None:
        inits.append(const("a", axes))
    kw = {"mode": mode} if mode else {}
    # float32 only when a value is given (its type is the data's)
    if value is not None:
        inits.append(nh.from_array(np.array(value, dtype=np.float32), "v"))
        save(name, op("Pad", ins, **kw)("X", ["Y"]), shape, None, inits, opset)
    else:
        both(name, op("Pad", ins, **kw), shape, None, inits, opset=opset, types=types)

pad_case("pad_constant", [2, 3], [1, 0, 2, 3])
pad_case("pad_constant_value", [2, 3], [0, 2, 1, 1], value=1.5)
pad_case("pad_negative", [4, 5], [-1, 1, 0, -2])
pad_case("pad_edge", [3, 4], [2, 1, 3, 2], mode="edge")
pad_case("pad_reflect", [3, 4], [2, 3, 2, 3], mode="reflect")
pad_case("pad_axes18", [2, 3, 4], [1, 2, 3, 1], axes=[-1, 0], opset=18)
pad_case("pad_wrap19", [3, 4], [2, 4, 1, 3], mode="wrap", opset=19)
pad_case("pad11", [1, 2, 3, 3], [0, 0, 1, 1, 0, 0, 1, 1], mode="reflect", opset=11, types=(TP.INT64, TP.INT8, TP.INT32))
typed("pad_value_int64", op("Pad", ["p", "v"]), [2, 3], None, TP.INT64,
      [const("p", [1, 1, 1, 1]), const("v", (1 << 60) + 12345)])

# Reshape, Flatten, Squeeze, Unsqueeze
both("reshape_0_minus1", op("Reshape", ["s"]), [2, 3, 4], [2, 12], [const("s", [0, -1])])
both("reshape14_allowzero", op("Reshape", ["s"], allowzero=1), [2, 3, 4], [4, 6], [const("s", [4, 6])], opset=14)
save("reshape_empty", [h.make_node("Slice", ["X", "a", "b"], ["Z"]), h.make_node("Reshape", ["Z", "s"], ["Y"])],
     [4, 6], None, [const("a", [2]), const("b", [2]), const("s", [3, -1, 2])])
both("flatten_default", op("Flatten"), [2, 3, 4], [2, 12])
both("flatten_neg", op("Flatten", axis=-3), [2, 3, 4], [1, 24], opset=13)
both("flatten_0", op("Flatten", axis=0), [2, 3, 4], [1, 24])
both("squeeze11_attr", op("Squeeze", axes=[-1, 1]), [3, 1, 4, 1], [3, 4], opset=11)
both("squeeze13_input", op("Squeeze", ["a"]), [3, 1, 4, 1], [3, 1, 4], [const("a", [3])], opset=13)
both("squeeze13_all", op("Squeeze"), [1, 3, 1, 4], [3, 4], opset=13)
both("unsqueeze11_attr", op("Unsqueeze", axes=[0, -1]), [3, 4], [1, 3, 4, 1], opset=11)
both("unsqueeze13_input", op("Unsqueeze", ["a"]), [3, 4], [3, 1, 4, 1], [const("a", [1, -1])], opset=13)

# Tile, Expand
both("tile", op("Tile", ["r"]), [2, 3], [4, 9], [const("r", [2, 3])])
both("tile_zero", op("Tile", ["r"]), [2, 3], [0, 3], [const("r", [0, 1])])
both("expand_bidir", op("Expand", ["s"]), [3, 1], [2, 3, 4], [const("s", [2, 1, 4])])
both("expand_same", op("Expand", ["s"]), [2, 3], [2, 3], [const("s", [3])])

# Gather: constant indices (int32, int64, negative) and indices computed at run time
both("gather_axis0", op("Gather", ["i"], axis=0), [5, 3], [2, 2, 3], [const("i", [[0, 4], [-1, 2]])])
both("gather_axis_neg_i32", op("Gather", ["i"], axis=-1), [2, 3, 4], [2, 3], [const("i", 3, np.int32)])
both("gather_empty", op("Gather", ["i"], axis=1), [2, 3, 4], [2, 0, 4], [const("i", np.zeros(0, np.int64))])
# run-time indices: |X| * 4.9 floored into [0, 4], some negated, computed on ONNX Runtime
save("gather_runtime_indices",
     [h.make_node("Abs", ["X"], ["A"]), h.make_node("Mul", ["A", "k"], ["B"]), h.make_node("Floor", ["B"], ["F"]),
      h.make_node("Cast", ["F"], ["I"], to=TP.INT64), h.make_node("Sub", ["I", "two"], ["J"]),
      h.make_node("Gather", ["D", "J"], ["Y"], axis=0)],
     [2, 3], [2, 3, 4],
     [nh.from_array(np.array(4.9, np.float32), "k"), const("two", 2),
      nh.from_array(np.arange(20, dtype=np.float32).reshape(5, 4), "D")])

# Shape, ConstantOfShape
save("shape_all", [h.make_node("Shape", ["X"], ["S"]), h.make_node("Cast", ["S"], ["Y"], to=TP.FLOAT)], [2, 3, 4], [3])
save("shape15_start_end", [h.make_node("Shape", ["X"], ["S"], start=-2, end=10), h.make_node("Cast", ["S"], ["Y"], to=TP.FLOAT)],
     [2, 3, 4], [2], opset=15)
save("shape15_empty", [h.make_node("Shape", ["X"], ["S"], start=2, end=1), h.make_node("Cast", ["S"], ["Y"], to=TP.FLOAT)],
     [2, 3, 4], [0], opset=15)
save("constant_of_shape", [h.make_node("ConstantOfShape", ["s"], ["C"]), h.make_node("Add", ["X", "C"], ["Y"])],
     [2, 3], [2, 3], [const("s", [2, 3])])

# Shapes computed at run time (Reshape, Expand, ConstantOfShape): from the input's symbolic dims
# (shape arithmetic gfxep does on the host) and from the data (a value read back from the device);
# ConstantOfShape's value attribute of several types. Each must run entirely on gfxep, on every backend
# (must_claim.txt).
claims = []


def save_dyn(name, nodes, x_shape, y_shape, inits=(), opset=17, skip=""):
    save(name, nodes, x_shape, y_shape, inits, opset)
    claims.append(name + (" " + skip if skip else ""))


def data_zero(prefix):
    """An int64 scalar 0 the data decides (ReduceMax(X) * 0, cast): ONNX Runtime cannot fold it."""
    return [h.make_node("ReduceMax", ["X"], [prefix + "m"], keepdims=0),
            h.make_node("Mul", [prefix + "m", "zf"], [prefix + "z"]),
            h.make_node("Cast", [prefix + "z"], [prefix + "zi"], to=TP.INT64)]


zf = nh.from_array(np.array(0.0, dtype=np.float32), "zf")
save_dyn("reshape_shape_of_input", [h.make_node("Shape", ["X"], ["S"]), h.make_node("Gather", ["S", "i0"], ["n"]),
                                    h.make_node("Concat", ["n", "tail"], ["s"], axis=0),
                                    h.make_node("Reshape", ["X", "s"], ["Y"])],
         ["N", 6], ["N", 2, 3], [const("i0", [0]), const("tail", [2, 3])])
save_dyn("reshape_from_data", data_zero("a") + [h.make_node("Add", ["azi", "base"], ["s"]),
                                                h.make_node("Reshape", ["X", "s"], ["Y"])],
         [2, 3, 4], [4, 6], [zf, const("base", [4, 6])])
save_dyn("expand_shape_of_input", [h.make_node("Shape", ["X"], ["S"]), h.make_node("Mul", ["S", "times"], ["s"]),
                                   h.make_node("Expand", ["X", "s"], ["Y"])],
         ["N", 1], ["N", 5], [const("times", [1, 5])])
save_dyn("expand_from_data", data_zero("a") + [h.make_node("Add", ["azi", "base"], ["s"]),
                                               h.make_node("Expand", ["X", "s"], ["Y"])],
         [3, 1], [2, 3, 4], [zf, const("base", [2, 1, 4])])
save_dyn("constant_of_shape_zero_from_data",
         data_zero("a") + [h.make_node("Add", ["azi", "base"], ["s"]), h.make_node("ConstantOfShape", ["s"], ["C"]),
                           h.make_node("Add", ["X", "C"], ["Y"])],
         [2, 3], [2, 3], [zf, const("base", [2, 3])])
save_dyn("constant_of_shape_int64_of_input",
         [h.make_node("Shape", ["X"], ["s"]),
          h.make_node("ConstantOfShape", ["s"], ["C"], value=nh.from_array(np.array([(1 << 40) + 3], np.int64))),
          h.make_node("Cast", ["C"], ["Cf"], to=TP.FLOAT), h.make_node("Add", ["X", "Cf"], ["Y"])],
         ["N", 3], ["N", 3])
save_dyn("constant_of_shape_float_from_data",
         data_zero("a") + [h.make_node("Add", ["azi", "base"], ["s"]),
                           h.make_node("ConstantOfShape", ["s"], ["C"],
                                       value=nh.from_array(np.array([-1.5], np.float32))),
                           h.make_node("Mul", ["X", "C"], ["Y"])],
         [2, 3], [2, 3], [zf, const("base", [2, 3])])
save_dyn("constant_of_shape_bool_of_input",
         [h.make_node("Shape", ["X"], ["s"]),
          h.make_node("ConstantOfShape", ["s"], ["C"], value=nh.from_array(np.array([True], np.bool_))),
          h.make_node("Where", ["C", "X", "zf"], ["Y"])],
         ["N", 3], ["N", 3], [zf])
# Concat of more inputs than an IR node has (SSDlite concatenates its 90 per-class results): taken as a
# tree of Concats. 20 rows in reverse order; 90 pieces of 1 to 3 rows (a symbolic batch of columns),
# some empty, along axis 0; 11 pieces along the last axis.
def wide_concat(name, n, piece_rows, axis, x_shape, y_shape):
    nodes, inits, outs = [], [], []
    start = 0
    for i in range(n):
        rows = piece_rows(i)
        inits += [const("s%d" % i, [start]), const("e%d" % i, [start + rows])]
        nodes.append(h.make_node("Slice", ["X", "s%d" % i, "e%d" % i, "ax"], ["P%d" % i]))
        outs.append("P%d" % i)
        start += rows
    inits.append(const("ax", [axis]))
    nodes.append(h.make_node("Concat", outs[::-1], ["Y"], axis=axis))
    save_dyn(name, nodes, x_shape, y_shape, inits)


wide_concat("concat_wide_20_rows", 20, lambda i: 1, 0, [20, 3], [20, 3])
wide_concat("concat_wide_90_pieces", 90, lambda i: i % 4, 0, [133, "N"], [133, "N"])
wide_concat("concat_wide_11_last_axis", 11, lambda i: 2, 1, [2, 22], [2, 22])
with open(os.path.join(OUT, "must_claim.txt"), "w") as f:
    f.write("\n".join(claims) + "\n")

print(count, "models in", OUT)
