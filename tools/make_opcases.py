#!/usr/bin/python3
"""Writes the op-level test cases: many small single-node ONNX models, one manifest.

Usage: make_opcases.py OUTPUT_DIR

For every ONNX operator gfxep has or plans (see OPS below) a few cases with seeded random shapes,
attributes, broadcast patterns and opsets, including the opsets where attributes became inputs.
Shape-like inputs (Reshape shape, Slice starts, Pad pads, Resize scales, axes, Clip min/max) are
constant initializers, as in exported models, so a backend can read them at parse time.

Each float case has an fp32 model and, where the operator's type constraints allow, an fp16 and a
bf16 variant. A variant's oracle is an fp32 twin of the same graph with the same weights rounded to
the variant's precision (ORT's CPU EP lacks most fp16/bf16 kernels); the inputs are rounded the same
way by the test. Tolerances follow the dtype: fp32 atol 1e-5 + rtol 1e-4 (looser where a case says
why), fp16 1e-2, bf16 5e-2 (about 4 units in the last place of each format, plus the rounding of
intermediate results).

Each graph input carries its value range ("range" [lo, hi], "int": true for integer values) so the
math stays in its domain (Log and Sqrt positive, Div away from zero, Pow base positive...).

manifest.json: {"cases": [{"name", "op", "dtype", "model", "oracle", "atol", "rtol",
"expect": "claimed"|"full"|"any"|"refused", "note", "inputs": [{"name", "range", "int"}]}]}
expect "claimed": when gfxep's op table has the op and claims the dtype, the node must run on gfxep;
"full": the same on the backends that run the whole op table (reference, CUDA), "any" elsewhere;
"any": attribute combinations an implementation may reasonably leave to ORT; "refused": gfxep must
leave the node to ONNX Runtime (a documented limit) and the result must still be right.
Run with Debian's python3 (python3-onnx, python3-numpy): same bytes on every machine.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20261130
F32, F16, BF16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16
DTYPE_NAME = {F32: "fp32", F16: "fp16", BF16: "bf16"}
TOL = {F32: (1e-5, 1e-4), F16: (1e-2, 1e-2), BF16: (5e-2, 5e-2)}
# the newest opset the Debian onnx package checks; cases of newer ops (GroupNormalization 18, Gelu 20)
# are written without the checker and only in fp32/fp16
CHECKED_OPSET = onnx.defs.onnx_opset_version()

rng = np.random.default_rng(SEED)


def bf16_bits(a):
    """The bf16 bit patterns nearest to fp32 values (round to nearest, ties to even)."""
    b = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + np.uint64(0x7FFF) + ((b >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)


def bf16_round(a):
    """Rounds fp32 values to the nearest bf16, returned as fp32."""
    return (bf16_bits(a).astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(np.shape(a))


def bf16_tensor(name, a):
    t = TensorProto()
    t.name = name
    t.data_type = BF16
    t.dims.extend(np.shape(a))
    t.raw_data = bf16_bits(a).tobytes()
    return t


class In:
    """A graph input: float data in [lo, hi] (integer-valued when integer), or an int64/bool input."""

    def __init__(self, shape, lo=-1.0, hi=1.0, integer=False, elem=None):
        self.shape, self.lo, self.hi, self.integer, self.elem = list(shape), lo, hi, integer, elem


class Const:
    """A constant initializer. Float arrays follow the case dtype unless keep_f32 (Resize scales)."""

    def __init__(self, value, keep_f32=False):
        self.value, self.keep_f32 = np.asarray(value), keep_f32


def rand(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


class Case:
    def __init__(self, op, opset, inputs, attrs=None, n_out=1, expect="claimed", note="", tol=None,
                 dtypes=(F32, F16, BF16), tag="", out_elem=None):
        self.op, self.opset, self.inputs = op, opset, inputs  # inputs: list of In | Const | None (absent)
        self.attrs = attrs or {}
        self.n_out, self.expect, self.note, self.tol = n_out, expect, note, tol
        # out_elem: the output type of an op newer than the onnx checker whose output is not of the
        # input's type (QuantizeLinear's integers)
        self.dtypes, self.tag, self.out_elem = dtypes, tag, out_elem


# ---- model writing ----

def build(case, dtype, name, oracle):
    """The model of `case` in `dtype`; oracle=True writes the fp32 twin (values rounded to dtype)."""
    elem = F32 if oracle else dtype
    nodes_in, graph_in, inits, meta = [], [], [], []
    for i, x in enumerate(case.inputs):
        if x is None:
            nodes_in.append("")
            continue
        nm = "x%d" % i
        nodes_in.append(nm)
        if isinstance(x, In):
            t = x.elem if x.elem is not None else elem
            graph_in.append(helper.make_tensor_value_info(nm, t, x.shape))
            meta.append({"name": nm, "range": [x.lo, x.hi], "int": bool(x.integer or x.elem is not None)})
            continue
        v = x.value
        if v.dtype.kind == "f" and not x.keep_f32:
            v = v.astype(np.float32)
            if dtype == F16:
                v = v.astype(np.float16).astype(np.float32)
            elif dtype == BF16:
                v = bf16_round(v)
            if elem == F16:
                inits.append(numpy_helper.from_array(v.astype(np.float16), nm))
            elif elem == BF16:
                inits.append(bf16_tensor(nm, v))
            else:
                inits.append(numpy_helper.from_array(v, nm))
        else:
            inits.append(numpy_helper.from_array(v.astype(np.float32) if v.dtype.kind == "f" else v, nm))
    attrs = dict(case.attrs)
    if case.op == "Cast" and attrs.get("to") in (F16, BF16) and oracle:
        attrs["to"] = F32
    outs = ["y%d" % i for i in range(case.n_out)]
    node = helper.make_node(case.op, nodes_in, outs, name=case.op.lower() + "_node", **attrs)
    graph = helper.make_graph([node], name, graph_in,
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)], producer_name="gfxep")
    model.ir_version = 8
    # outputs: types from ONNX type inference (strict: a dtype the op does not allow raises)
    if case.opset <= CHECKED_OPSET:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        known = {v.name: v for v in inferred.graph.output}
        for o in model.graph.output:
            o.type.CopyFrom(known[o.name].type)
            if o.type.tensor_type.elem_type == TensorProto.UNDEFINED:
                raise onnx.shape_inference.InferenceError("no output type for " + o.name)
            if not o.type.tensor_type.HasField("shape"):
                # dims decided by input values (a Slice of computed starts; NonMaxSuppression-10, which
                # the onnx package leaves unshaped): the rank, each dim named
                rank = 2 if case.op == "NonMaxSuppression" else len(case.inputs[0].shape)
                for d in range(rank):
                    o.type.tensor_type.shape.dim.add().dim_param = "%s_%d" % (o.name, d)
    else:
        for o in model.graph.output:
            # these ops (GroupNormalization, Gelu) output their input type, unless the case says otherwise
            o.type.tensor_type.elem_type = case.out_elem if case.out_elem is not None else elem
    if case.opset <= CHECKED_OPSET:
        onnx.checker.check_model(model, full_check=True)
    return model, meta


def write_case(out_dir, case, idx, manifest):
    base = "%s_%d%s" % (case.op, idx, ("_" + case.tag) if case.tag else "")
    for dtype in case.dtypes:
        if dtype == BF16 and case.opset > CHECKED_OPSET:
            continue
        name = "%s_%s" % (base, DTYPE_NAME[dtype])
        try:
            model, meta = build(case, dtype, name, oracle=False)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
            if dtype == F32:
                raise RuntimeError("%s: %s" % (name, e))
            continue  # the op's type constraints leave this dtype out
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))
        oracle = name + ".onnx"
        if dtype != F32:
            twin, _ = build(case, dtype, name + "_oracle", oracle=True)
            oracle = name + "_oracle.onnx"
            onnx.save(twin, os.path.join(out_dir, oracle))
        atol, rtol = TOL[dtype]
        if case.tol and dtype == F32:
            atol, rtol = case.tol
        manifest.append({"name": name, "op": case.op, "dtype": DTYPE_NAME[dtype], "opset": case.opset,
                         "model": name + ".onnx", "oracle": oracle, "atol": atol, "rtol": rtol,
                         "expect": case.expect, "note": case.note, "inputs": meta})


# ---- the cases, by family ----

def pick(options):
    return options[int(rng.integers(len(options)))]


def rshape(rank, lo=1, hi=5):
    return [int(v) for v in rng.integers(lo, hi + 1, size=rank)]


def broadcast_of(shape):
    """A shape that broadcasts against `shape`: some dims 1, maybe fewer leading dims."""
    s = [d if rng.random() < 0.5 else 1 for d in shape]
    return s[int(rng.integers(0, len(s))):] or [1]


def unary_cases():
    specs = {  # op: (lo, hi, opsets, attrs)
        "Relu": (-2, 2, [6, 13, 14], {}),
        "LeakyRelu": (-2, 2, [6, 16], {"alpha": 0.07}),
        "Sigmoid": (-6, 6, [6, 13], {}),
        "Tanh": (-3, 3, [6, 13], {}),
        "HardSigmoid": (-4, 4, [6], {"alpha": 0.3, "beta": 0.4}),
        "HardSwish": (-4, 4, [14], {}),
        "Elu": (-3, 2, [6], {"alpha": 0.8}),
        "Selu": (-3, 2, [6], {"alpha": 1.5, "gamma": 1.1}),
        "Erf": (-2.5, 2.5, [9, 13], {}),
        "Softplus": (-5, 5, [1], {}),
        "Sqrt": (0.01, 4, [6, 13], {}),
        "Exp": (-3, 3, [6, 13], {}),
        "Log": (0.05, 5, [6, 13], {}),
        "Neg": (-2, 2, [6, 13], {}),
        "Abs": (-2, 2, [6, 13], {}),
        "Reciprocal": (0.25, 2, [6, 13], {}),
        "Identity": (-2, 2, [1, 13, 16], {}),
        "Floor": (-3, 3, [6, 13], {}),
        "Ceil": (-3, 3, [6, 13], {}),
        "Round": (-3, 3, [11], {}),
        "Sign": (-2, 2, [9, 13], {}),
        "Sin": (-6, 6, [7], {}),
        "Cos": (-6, 6, [7], {}),
        "Softsign": (-4, 4, [1], {}),
        "Mish": (-5, 5, [18], {}),
        "Celu": (-3, 2, [12], {"alpha": 0.7}),
        "ThresholdedRelu": (-2, 2, [10], {"alpha": 0.4}),
    }
    out = []
    for op, (lo, hi, opsets, attrs) in specs.items():
        for i, opset in enumerate(opsets):
            shape = rshape(int(rng.integers(1, 5)))
            a = dict(attrs) if i == 0 else {}  # the default attribute values too
            out.append(Case(op, opset, [In(shape, lo, hi)], a))
        # a larger, odd-sized tensor: tails of vectorized loops
        out.append(Case(op, opsets[-1], [In([3, 37, 11], lo, hi)], dict(attrs), tag="odd"))
    # Reciprocal of negatives, Sqrt and Log of larger values
    out.append(Case("Reciprocal", 13, [In([4, 9], -2, -0.25)], tag="neg"))
    # Sin and Cos over many periods (the argument reduction)
    out.append(Case("Sin", 7, [In([3, 40], -200, 200)], tag="wide"))
    out.append(Case("Cos", 7, [In([3, 40], -200, 200)], tag="wide"))
    out.append(Case("Gelu", 20, [In([2, 3, 7], -3, 3)], {}, dtypes=(F32, F16)))
    out.append(Case("Gelu", 20, [In([5, 16], -3, 3)], {"approximate": "tanh"}, dtypes=(F32, F16), tag="tanh"))
    # PRelu: slope broadcast per channel, scalar, full shape
    out.append(Case("PRelu", 9, [In([2, 3, 4, 5], -2, 2), Const(rand([3, 1, 1], 0, 0.5))]))
    out.append(Case("PRelu", 16, [In([2, 6, 5], -2, 2), Const(rand([1], 0, 0.5))]))
    out.append(Case("PRelu", 16, [In([3, 4], -2, 2), In([3, 4], -0.5, 0.5)]))
    # Clip: attributes up to opset 6, inputs from 11 (min only, max only, both)
    out.append(Case("Clip", 6, [In([3, 8], -2, 2)], {"min": -0.5, "max": 0.7}))
    out.append(Case("Clip", 11, [In([2, 3, 5], -2, 2), Const(np.array(-0.3, np.float32)),
                                 Const(np.array(0.6, np.float32))]))
    out.append(Case("Clip", 13, [In([4, 7], -2, 2), Const(np.array(-0.2, np.float32))], tag="min_only"))
    out.append(Case("Clip", 13, [In([4, 7], -2, 2), None, Const(np.array(0.1, np.float32))], tag="max_only"))
    out.append(Case("Clip", 13, [In([4, 7], -2, 2)], tag="no_bounds"))
    # an absent trailing input ("" at the end of the node's input list): compiling must still read them all
    out.append(Case("Clip", 13, [In([4, 7], -2, 2), Const(np.array(-0.2, np.float32)), None], tag="trailing_absent"))
    return out


def binary_cases():
    out = []
    ranges = {"Add": ((-2, 2), (-2, 2)), "Sub": ((-2, 2), (-2, 2)), "Mul": ((-2, 2), (-2, 2)),
              "Div": ((-2, 2), (0.5, 2)), "Pow": ((0.2, 2), (-2, 2)),
              "Min": ((-2, 2), (-2, 2)), "Max": ((-2, 2), (-2, 2))}
    for op, ((alo, ahi), (blo, bhi)) in ranges.items():
        opsets = {"Pow": [7, 13, 15], "Min": [8, 13], "Max": [8, 13]}.get(op, [7, 13, 14])
        for i, opset in enumerate(opsets):
            a = rshape(int(rng.integers(2, 5)))
            b = broadcast_of(a) if i > 0 else list(a)
            if i == 2:  # the broadcast the other way round
                a, b = b, a
                alo, ahi, blo, bhi = alo, ahi, blo, bhi
            out.append(Case(op, opset, [In(a, alo, ahi), In(b, blo, bhi)]))
        # a constant operand (bias-like), and both sides broadcasting: [3,1,5] x [4,1]
        out.append(Case(op, opsets[-1], [In([2, 3, 4, 5], alo, ahi), Const(rand([3, 1, 1], blo, bhi))], tag="const"))
        out.append(Case(op, opsets[-1], [In([3, 1, 5], alo, ahi), In([4, 1], blo, bhi)], tag="bothbc"))
        out.append(Case(op, opsets[-1], [In([2, 3], alo, ahi), In([], blo, bhi)], tag="scalar"))
    # Div by negative numbers, Pow with integer exponents of negative bases (defined there)
    out.append(Case("Div", 14, [In([5, 6], -2, 2), In([5, 6], -2, -0.5)], tag="negden"))
    out.append(Case("Pow", 15, [In([4, 5], -2, 2), Const(np.array([2.0, 3.0, 1.0, 0.0, -1.0], np.float32))],
                    tag="intexp", note="negative bases with integer exponents"))
    # variadic Sum/Mean/Min/Max with broadcasting, 1 to 4 inputs
    for op in ("Sum", "Mean", "Min", "Max"):
        out.append(Case(op, 13, [In([3, 4])], tag="one"))
        out.append(Case(op, 8 if op in ("Sum", "Mean") else 12, [In([2, 3, 4]), In([3, 1]), In([4])], tag="three"))
        out.append(Case(op, 13, [In([2, 5]), In([2, 5]), In([1, 5]), In([2, 1])], tag="four"))
    # comparisons: integer-valued inputs so equal values occur
    for op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
        out.append(Case(op, 13, [In([3, 4, 5], -2, 2, integer=True), In([4, 1], -2, 2, integer=True)]))
        opset = {"Equal": 11, "Greater": 7, "Less": 7}.get(op, 12)  # the first opset with float inputs
        out.append(Case(op, opset, [In([6, 7], -2, 2, integer=True),
                                                          In([6, 7], -2, 2, integer=True)], tag="same"))
    out.append(Case("Where", 9, [In([3, 4], 0, 1, elem=TensorProto.BOOL), In([3, 4]), In([3, 4])]))
    out.append(Case("Where", 16, [In([2, 1, 5], 0, 1, elem=TensorProto.BOOL), In([3, 1]), In([1])], tag="bc"))
    return out


def layout_cases():
    out = []
    out.append(Case("Concat", 4, [In([2, 3, 4]), In([2, 5, 4])], {"axis": 1}))
    out.append(Case("Concat", 13, [In([3, 2]), In([3, 2]), In([3, 1])], {"axis": -1}, tag="neg"))
    out.append(Case("Concat", 11, [In([1, 2, 3, 4]), Const(rand([2, 2, 3, 4]))], {"axis": 0}, tag="const"))
    # Split: 'split' attribute up to 11, input from 13; equal split
    out.append(Case("Split", 11, [In([2, 7, 3])], {"axis": 1, "split": [2, 5]}, n_out=2))
    out.append(Case("Split", 13, [In([4, 9])], {"axis": -1}, n_out=3, tag="equal"))
    out.append(Case("Split", 13, [In([6, 2, 5]), Const(np.array([1, 2, 3], np.int64))], {"axis": 0}, n_out=3,
                    tag="input"))
    # Slice: attributes (opset 1), inputs (10+), negative steps and indices, clamped ends
    out.append(Case("Slice", 1, [In([5, 6])], {"starts": [1, 0], "ends": [4, 100], "axes": [0, 1]}))
    i64 = lambda v: Const(np.array(v, np.int64))
    out.append(Case("Slice", 10, [In([4, 6, 5]), i64([1, -4]), i64([3, 1000]), i64([0, 1])], tag="axes"))
    out.append(Case("Slice", 13, [In([7, 6]), i64([-1, 0]), i64([-100, 6]), i64([0, 1]), i64([-2, 2])], tag="step"))
    out.append(Case("Slice", 13, [In([3, 8]), i64([2]), i64([7])], tag="noaxes"))
    # Pad: pads attribute (2), input (11); constant, reflect, edge; negative pads crop
    out.append(Case("Pad", 2, [In([2, 3, 4])], {"pads": [0, 1, 2, 0, 2, 1], "value": 0.5}))
    out.append(Case("Pad", 11, [In([1, 2, 5, 4]), i64([0, 0, 1, 2, 0, 0, 2, 1])], {"mode": "reflect"}, tag="reflect"))
    out.append(Case("Pad", 13, [In([2, 3, 3]), i64([0, 2, 1, 1, 0, 2]), Const(np.array(-1.5, np.float32))],
                    tag="const"))
    out.append(Case("Pad", 13, [In([3, 4]), i64([1, 2, 2, 1])], {"mode": "edge"}, tag="edge"))
    out.append(Case("Pad", 13, [In([4, 6]), i64([-1, 1, 0, -2])], tag="crop"))
    # Reshape with 0 and -1; Flatten at several axes
    out.append(Case("Reshape", 5, [In([2, 3, 4]), i64([4, -1])]))
    out.append(Case("Reshape", 14, [In([2, 3, 4]), i64([0, 0, 2, 2])], tag="zero"))
    out.append(Case("Reshape", 14, [In([6, 4]), i64([-1])], tag="flat"))
    out.append(Case("Flatten", 9, [In([2, 3, 4, 5])], {"axis": 2}))
    out.append(Case("Flatten", 13, [In([2, 3, 4])], {"axis": 0}, tag="axis0"))
    out.append(Case("Flatten", 13, [In([2, 3, 4])], {"axis": -1}, tag="neg"))
    out.append(Case("Transpose", 1, [In([2, 3, 4])]))
    out.append(Case("Transpose", 13, [In([2, 3, 4, 5])], {"perm": [0, 2, 3, 1]}, tag="nhwc"))
    out.append(Case("Transpose", 13, [In([3, 1, 5, 2, 2])], {"perm": [4, 2, 0, 3, 1]}, tag="rank5"))
    # Squeeze/Unsqueeze: axes attribute up to 11, input from 13
    out.append(Case("Squeeze", 11, [In([1, 3, 1, 4])], {"axes": [0, -2]}))
    out.append(Case("Squeeze", 13, [In([1, 3, 1, 4]), i64([2])], tag="input"))
    out.append(Case("Squeeze", 13, [In([1, 3, 1, 4])], tag="all"))
    out.append(Case("Unsqueeze", 11, [In([3, 4])], {"axes": [0, 3]}))
    out.append(Case("Unsqueeze", 13, [In([3, 4]), i64([-1, 1])], tag="input"))
    out.append(Case("Tile", 6, [In([2, 3]), i64([2, 3])]))
    out.append(Case("Tile", 13, [In([2, 1, 3]), i64([1, 4, 1])], tag="one"))
    out.append(Case("Expand", 8, [In([3, 1]), i64([2, 3, 4])]))
    out.append(Case("Expand", 13, [In([1, 4, 1]), i64([3, 1, 5])], tag="ones"))
    # Gather: constant indices (negative ones too), a graph-input index tensor, scalar index
    out.append(Case("Gather", 1, [In([5, 4]), i64([0, 4, 2, 2])], {"axis": 0}))
    out.append(Case("Gather", 13, [In([3, 6, 2]), i64([[-1, 0], [3, -6]])], {"axis": 1}, tag="neg"))
    out.append(Case("Gather", 13, [In([4, 5]), In([3], 0, 4, elem=TensorProto.INT64)], {"axis": -1}, tag="input"))
    out.append(Case("Gather", 13, [In([4, 5]), i64(2)], {"axis": 0}, tag="scalar"))
    # Shape: of an input with dynamic dims (so ORT cannot fold it), start/end from opset 15
    out.append(Case("Shape", 13, [In(["N", 3, "W"])], dtypes=(F32, F16)))
    out.append(Case("Shape", 15, [In([2, "C", 4, 5])], {"start": 1, "end": -1}, dtypes=(F32, F16), tag="slice"))
    # ConstantOfShape: a constant shape (ORT folds the node itself when it can) or one computed at run
    # time (read back before the node), with the 'value' attribute of any type
    out.append(Case("ConstantOfShape", 9, [i64([2, 3, 4])], dtypes=(F32,), tag="default", expect="any",
                    note="a constant node: ORT may fold it"))
    out.append(Case("ConstantOfShape", 9, [In([3], 1, 4, elem=TensorProto.INT64)],
                    {"value": numpy_helper.from_array(np.array([1.25], np.float32))}, dtypes=(F32,),
                    note="a shape read back from the device"))
    out.append(Case("ConstantOfShape", 9, [In([2], 1, 5, elem=TensorProto.INT64)],
                    {"value": numpy_helper.from_array(np.array([-7], np.int64))}, dtypes=(F32,), tag="int64"))
    out.append(Case("ConstantOfShape", 9, [In([3], 1, 4, elem=TensorProto.INT64)], dtypes=(F32,), tag="zeros",
                    note="float32 zeros in a shape read back from the device"))
    # Cast between float types and to/from integers and bool
    out.append(Case("Cast", 13, [In([3, 5], -3, 3)], {"to": F16}, dtypes=(F32,), tag="to_f16"))
    out.append(Case("Cast", 13, [In([3, 5], -3, 3)], {"to": BF16}, dtypes=(F32,), tag="to_bf16"))
    out.append(Case("Cast", 13, [In([4, 6], -3, 3)], {"to": F32}, dtypes=(F16, BF16), tag="to_f32"))
    out.append(Case("Cast", 9, [In([4, 4], -9.5, 9.5)], {"to": TensorProto.INT32}, dtypes=(F32,), tag="to_i32"))
    out.append(Case("Cast", 13, [In([7], -3, 3, integer=True)], {"to": TensorProto.BOOL}, dtypes=(F32,),
                    tag="to_bool"))
    out.append(Case("Cast", 13, [In([2, 5], -100, 100, elem=TensorProto.INT64)], {"to": F32}, dtypes=(F32,),
                    tag="from_i64"))
    out.append(Case("Cast", 6, [In([3, 3], -3, 3)], {"to": F16}, dtypes=(F32,), tag="opset6"))
    return out


def resample_cases():
    out = []
    f32 = lambda v: Const(np.array(v, np.float32), keep_f32=True)
    i64 = lambda v: Const(np.array(v, np.int64))
    empty = Const(np.zeros([0], np.float32), keep_f32=True)
    # Resize 10 (scales only), 11/13 (roi, scales or sizes), modes and coordinate transforms
    old = "Resize-10 (Upsample-9's semantics) is left to ORT"
    out.append(Case("Resize", 10, [In([1, 2, 3, 4]), f32([1, 1, 2, 2])], {"mode": "nearest"}, expect="any", note=old))
    out.append(Case("Resize", 10, [In([1, 2, 3, 4]), f32([1, 1, 2, 1.5])], {"mode": "linear"}, tag="linear",
                    expect="any", note=old))
    out.append(Case("Resize", 11, [In([1, 3, 4, 4]), empty, f32([1, 1, 2, 2])],
                    {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
                    tag="asym"))
    out.append(Case("Resize", 13, [In([2, 2, 5, 3]), None, f32([1, 1, 0.6, 2])],
                    {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, tag="half_pixel"))
    out.append(Case("Resize", 13, [In([1, 2, 4, 6]), None, None, i64([1, 2, 7, 3])],
                    {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, tag="sizes"))
    out.append(Case("Resize", 13, [In([1, 1, 5, 5]), None, f32([1, 1, 1.5, 1.5])],
                    {"mode": "nearest", "coordinate_transformation_mode": "pytorch_half_pixel",
                     "nearest_mode": "round_prefer_ceil"}, tag="pytorch"))
    out.append(Case("Resize", 13, [In([1, 2, 4, 4]), None, f32([1, 1, 2, 2])],
                    {"mode": "cubic", "cubic_coeff_a": -0.5}, expect="any", tag="cubic",
                    note="cubic interpolation may be left to ORT"))
    # any dims (the general geometry): volumes, channels and batch, channels-last images; the Vulkan
    # backend leaves a resize of a leading dim to ORT
    gen = "a dim before the last two resizes: reference and CUDA; the Vulkan backend leaves it to ORT"
    out.append(Case("Resize", 13, [In([1, 2, 3, 4, 4]), None, f32([1, 1, 2, 1.5, 2])],
                    {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, expect="full", tag="5d_linear",
                    note=gen))
    out.append(Case("Resize", 13, [In([2, 3, 4]), None, f32([1.5, 2, 0.75])],
                    {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, expect="full",
                    tag="3d_linear_all", note=gen))
    out.append(Case("Resize", 13, [In([1, 1, 3, 4, 4]), None, f32([1, 1, 2, 1, 1])],
                    {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
                    expect="full", tag="5d_depth", note=gen))
    out.append(Case("Resize", 13, [In([2, 3, 2, 2]), None, f32([2, 0.7, 1, 2])],
                    {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, expect="full", tag="batch_channels",
                    note=gen))
    out.append(Case("Resize", 13, [In([1, 4, 5, 3]), None, f32([1, 2, 1.5, 1])],
                    {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, expect="full",
                    tag="nhwc_linear", note=gen))
    out.append(Case("Resize", 13, [In([1, 4, 4, 2]), None, f32([1, 2, 1.5, 1])],
                    {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, expect="full", tag="nhwc_cubic",
                    note=gen))
    out.append(Case("Resize", 18, [In([1, 2, 4, 3, 5]), None, None, i64([6, 5, 7])],
                    {"mode": "linear", "axes": [2, 3, 4]}, expect="full", tag="5d_axes_sizes", note=gen))
    out.append(Case("Resize", 13, [In([1, 1, 4, 4, 4]), f32([0, 0, -0.1, 0.2, 0, 1, 1, 0.9, 0.8, 1]),
                                   f32([1, 1, 1.5, 1.5, 1])],
                    {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                     "extrapolation_value": 2.5}, expect="full", tag="5d_crop", note=gen))
    out.append(Case("Upsample", 9, [In([1, 1, 2, 3, 3]), f32([1, 1, 2, 2, 2])], {"mode": "nearest"}, expect="full",
                    tag="5d", note=gen))
    # Upsample: scales attribute (7), input (9)
    out.append(Case("Upsample", 7, [In([1, 2, 3, 3])], {"scales": [1.0, 1.0, 2.0, 3.0], "mode": "nearest"}, expect="any",
                    note="Upsample-7's scales are a float-list attribute, which gfxep does not read"))
    out.append(Case("Upsample", 9, [In([1, 2, 3, 4]), f32([1, 1, 2, 2])], {"mode": "linear"}, tag="linear"))
    out.append(Case("DepthToSpace", 11, [In([1, 8, 2, 3])], {"blocksize": 2, "mode": "DCR"}))
    out.append(Case("DepthToSpace", 13, [In([2, 18, 2, 2])], {"blocksize": 3, "mode": "CRD"}, tag="crd"))
    out.append(Case("DepthToSpace", 1, [In([1, 4, 3, 2])], {"blocksize": 2}, tag="opset1"))
    out.append(Case("SpaceToDepth", 1, [In([1, 2, 4, 6])], {"blocksize": 2}))
    out.append(Case("SpaceToDepth", 13, [In([2, 3, 6, 3])], {"blocksize": 3}, tag="b3"))
    out += grid_sample_cases()
    return out


def grid_sample_cases():
    """GridSample: every mode (opset 16's names and 20's), padding mode and align_corners over a grid
    reaching past the borders; far-out grids (reflection bouncing several times, border and zeros
    taps all outside); nearest-mode ties, which round halves to even; tiny images."""
    out = []
    names = {16: ("bilinear", "nearest", "bicubic"), 20: ("linear", "nearest", "cubic")}
    for opset, modes in names.items():
        for mode in modes:
            for pad in ("zeros", "border", "reflection"):
                for align in (0, 1):
                    out.append(Case("GridSample", opset, [In([2, 3, 5, 6]), In([2, 4, 7, 2], -1.25, 1.25)],
                                    {"mode": mode, "padding_mode": pad, "align_corners": align},
                                    tag="%s_%s_a%d" % (mode, pad, align)))
        out.append(Case("GridSample", opset, [In([1, 2, 4, 3]), In([1, 3, 3, 2], -1.1, 1.1)], tag="defaults"))
        for mode in modes:
            if mode == "nearest":
                continue
            for pad in ("border", "reflection", "zeros"):
                out.append(Case("GridSample", opset, [In([1, 2, 4, 5]), In([1, 6, 5, 2], -3.5, 3.5)],
                                {"mode": mode, "padding_mode": pad, "align_corners": opset == 20},
                                tag="far_%s_%s" % (mode, pad)))
    # nearest ties: on a 4-wide axis without align_corners x = (4g + 3) / 2 is a half for g a multiple
    # of 1/2; on a 5-wide one with align_corners x = 2g + 2 is a half for g an odd multiple of 1/4
    ties = {0: [-1.0, -0.5, 0.0, 0.5, 1.0, -1.5, 1.5, 0.25], 1: [-0.75, -0.25, 0.25, 0.75, -1.25, 1.25, 0.5, 0.0]}
    for align, vals in ties.items():
        g = np.array([vals[(i * 3 + j) % len(vals)] for i in range(4) for j in range(12)], np.float32).reshape(1, 4, 6, 2)
        for pad in ("zeros", "border", "reflection"):
            out.append(Case("GridSample", 16, [In([1, 2, 4 + align, 4 + align]), Const(g)],
                            {"mode": "nearest", "padding_mode": pad, "align_corners": align},
                            tag="ties_%s_a%d" % (pad, align)))
    # single-pixel and single-row images: reflection about borders one pixel apart
    for mode in ("bilinear", "bicubic", "nearest"):
        out.append(Case("GridSample", 16, [In([1, 2, 1, 1]), In([1, 3, 4, 2], -2, 2)],
                        {"mode": mode, "padding_mode": "reflection"}, tag="pixel_%s" % mode))
        out.append(Case("GridSample", 16, [In([2, 1, 1, 7]), In([2, 2, 5, 2], -1.5, 1.5)],
                        {"mode": mode, "padding_mode": "border", "align_corners": 1}, tag="row_%s" % mode))
    # a larger image: the kernels' grid-stride loops and channel walk
    out.append(Case("GridSample", 20, [In([2, 5, 17, 23]), In([2, 19, 29, 2], -1.05, 1.05)],
                    {"mode": "linear", "padding_mode": "border"}, tag="large"))
    out.append(Case("GridSample", 20, [In([1, 2, 3, 4, 5]), In([1, 2, 3, 4, 3], -1, 1)],
                    {"mode": "linear"}, expect="refused", dtypes=(F32,), tag="volumetric",
                    note="5-D (volumetric) input is left to ORT"))
    return out


def reduce_cases():
    out = []
    i64 = lambda v: Const(np.array(v, np.int64))
    red_tol = (1e-5, 2e-4)  # sums over up to ~100 terms in another order: a few ulps of the total
    for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceL1", "ReduceSumSquare"):
        tol = red_tol if op in ("ReduceSum", "ReduceMean", "ReduceL2", "ReduceL1", "ReduceSumSquare") else None
        if op == "ReduceSum":
            # axes as an input from opset 13 (attribute before); noop_with_empty_axes
            out.append(Case(op, 11, [In([3, 4, 5])], {"axes": [1], "keepdims": 1}, tol=tol))
            out.append(Case(op, 13, [In([3, 4, 5]), i64([0, -1])], {"keepdims": 0}, tol=tol, tag="input"))
            out.append(Case(op, 13, [In([2, 3, 4])], tol=tol, tag="all"))
            out.append(Case(op, 13, [In([2, 3]), i64(np.zeros([0], np.int64))], {"noop_with_empty_axes": 1},
                            tol=tol, tag="noop"))
        else:
            # axes attribute through opset 17 (an input from 18)
            out.append(Case(op, 13, [In([3, 4, 5])], {"axes": [1], "keepdims": 1}, tol=tol))
            out.append(Case(op, 11, [In([2, 3, 4, 3])], {"axes": [0, -1], "keepdims": 0}, tol=tol, tag="two"))
            out.append(Case(op, 13, [In([4, 6])], tol=tol, tag="all"))
        out.append(Case(op, 13, [In([2, 64, 3], 0, 1)], {"axes": [1]} if op != "ReduceSum" else {},
                        tol=tol, tag="long"))
    # ReduceProd and ReduceLogSumExp: axes as an attribute (opsets 11, 13) and as an input (18), two
    # axes, all axes, noop_with_empty_axes; long rows (a product near 1, a sum of exponentials of values
    # up to 100, which overflows float32 unless the maximum is subtracted first)
    for op in ("ReduceProd", "ReduceLogSumExp"):
        tol = red_tol if op == "ReduceLogSumExp" else (1e-5, 3e-4)
        out.append(Case(op, 13, [In([3, 4, 5], -2, 2)], {"axes": [1], "keepdims": 1}, tol=tol))
        out.append(Case(op, 11, [In([2, 3, 4, 3], -2, 2)], {"axes": [0, -1], "keepdims": 0}, tol=tol, tag="two"))
        out.append(Case(op, 18, [In([3, 4, 5], -2, 2), i64([-1])], {"keepdims": 0}, tol=tol, tag="input"))
        out.append(Case(op, 18, [In([3, 2, 2], -1.5, 1.5)], tol=tol, tag="all"))
        out.append(Case(op, 18, [In([2, 3], -2, 2), i64(np.zeros([0], np.int64))], {"noop_with_empty_axes": 1},
                        tol=tol, tag="noop"))
    out.append(Case("ReduceProd", 13, [In([2, 64, 3], 0.8, 1.25)], {"axes": [1]}, tol=(1e-5, 3e-4), tag="long"))
    out.append(Case("ReduceLogSumExp", 13, [In([2, 64, 3], 60, 100)], {"axes": [1]}, tol=red_tol, tag="large"))
    # ArgMax / ArgMin (int64 output): axes, keepdims, and ties (integer-valued inputs) with
    # select_last_index both ways
    for op in ("ArgMax", "ArgMin"):
        out.append(Case(op, 11, [In([3, 4, 5])], {"axis": 1}))
        out.append(Case(op, 13, [In([2, 3, 7])], {"axis": -1, "keepdims": 0}, tag="last_axis"))
        out.append(Case(op, 13, [In([5, 6], -2, 2, integer=True)], {"axis": 0}, tag="ties_first"))
        out.append(Case(op, 12, [In([5, 6], -2, 2, integer=True)], {"axis": 0, "select_last_index": 1},
                        tag="ties_last"))
        out.append(Case(op, 13, [In([2, 1, 40])], {"axis": 2, "keepdims": 1}, tag="long"))
    out.append(Case("Softmax", 13, [In([2, 3, 5])], {"axis": 1}))
    out.append(Case("Softmax", 13, [In([4, 7], -5, 5)], tag="last"))
    out.append(Case("Softmax", 11, [In([2, 3, 4])], {"axis": 1}, tag="coerced",
                    note="opset < 13: coerced to 2-D at axis"))
    out.append(Case("LogSoftmax", 13, [In([3, 6], -4, 4)], {"axis": -1}))
    out.append(Case("LogSoftmax", 11, [In([2, 3, 4])], {"axis": 2}, tag="o11"))
    # LpNormalization: p 1 and 2 along the last, a middle and the first axis; defaults; long rows (zero
    # norms are covered by the backend op test)
    for p in (1, 2):
        for axis in (-1, 1, 0):
            out.append(Case("LpNormalization", 1, [In([3, 4, 5], -2, 2)], {"p": p, "axis": axis},
                            dtypes=(F32, F16), tag="p%d_axis%d" % (p, axis)))
    out.append(Case("LpNormalization", 13, [In([4, 7], -3, 3)], dtypes=(F32, F16), tag="defaults"))
    out.append(Case("LpNormalization", 1, [In([3, 2000], -1, 1)], {"p": 1}, dtypes=(F32, F16), tag="long"))
    out.append(Case("LpNormalization", 1, [In([3, 4])], {"p": 3}, dtypes=(F32,), expect="refused", tag="p3",
                    note="p other than 1 and 2 is left to ORT"))
    # normalizations
    c = 3
    bn = [Const(rand([c], 0.5, 1.5)), Const(rand([c], -0.5, 0.5)), Const(rand([c], -0.5, 0.5)),
          Const(rand([c], 0.5, 2))]
    out.append(Case("BatchNormalization", 15, [In([2, c, 4, 5])] + bn, {"epsilon": 1e-3}))
    out.append(Case("BatchNormalization", 9, [In([2, c, 6])] + bn, tag="rank3"))
    out.append(Case("BatchNormalization", 14, [In([1, c, 2, 2])] + bn, {"momentum": 0.8}, tag="o14"))
    out.append(Case("InstanceNormalization", 6, [In([2, 3, 4, 5]), Const(rand([3], 0.5, 1.5)),
                                                 Const(rand([3], -0.5, 0.5))], {"epsilon": 1e-4}))
    out.append(Case("InstanceNormalization", 6, [In([1, 2, 9]), Const(rand([2], 0.5, 1.5)),
                                                 Const(rand([2], -0.5, 0.5))], tag="rank3"))
    out.append(Case("LayerNormalization", 17, [In([2, 3, 8]), Const(rand([8], 0.5, 1.5)), Const(rand([8]))]))
    out.append(Case("LayerNormalization", 17, [In([2, 3, 4]), Const(rand([3, 4], 0.5, 1.5))],
                    {"axis": -2, "epsilon": 1e-3}, tag="twoaxes"))
    # the optional Mean and InvStdDev outputs (float32 whatever the input type: stash_type 1), over
    # every axis, with and without bias; Mean alone
    for axis in (-1, -2, 0, 1, 2):
        shape = [2, 3, 5]
        norm = shape[axis:] if axis < 0 else shape[axis:]
        ins = [In(shape, -2, 2), Const(rand(norm, 0.5, 1.5))] + ([Const(rand(norm))] if axis != 0 else [])
        out.append(Case("LayerNormalization", 17, ins, {"axis": axis, "epsilon": 1e-4}, n_out=3,
                        tag="stats_axis%d" % axis))
    out.append(Case("LayerNormalization", 17, [In([4, 6], 1, 3), Const(rand([6], 0.5, 1.5)), Const(rand([6]))],
                    {"stash_type": 1}, n_out=2, tag="mean_only"))
    out.append(Case("LayerNormalization", 17, [In([3, 300], -3, 1), Const(rand([300], 0.5, 1.5))],
                    n_out=3, tag="stats_long"))
    # RMSNormalization (opset 23): every axis, scale of the normalized shape and broadcast to it (one
    # element; the trailing dims; the leading dims; a middle run of them), long rows, the defaults
    rms = [([2, 3, 8], -1, [8]), ([2, 3, 4], -2, [3, 4]), ([2, 3, 5], 0, [2, 3, 5]), ([2, 3, 4, 5], 1, [4, 5]),
           ([2, 3, 4, 5], 1, [1]), ([2, 3, 4, 5], 1, [3, 1, 1]), ([2, 3, 4, 5], 1, [4, 1]), ([3, 300], 1, [300])]
    for k, (shape, axis, sshape) in enumerate(rms):
        attrs = {"axis": axis, "epsilon": 1e-3 if k % 2 else 1e-5}
        if k == 0:
            attrs["stash_type"] = 1
        out.append(Case("RMSNormalization", 23, [In(shape, -2, 2), Const(rand(sshape, 0.5, 1.5))], attrs,
                        dtypes=(F32, F16), tag="axis%d_scale%s" % (axis, "x".join(map(str, sshape)))))
    out.append(Case("RMSNormalization", 23, [In([4, 6], 0.5, 2), Const(rand([6], 0.5, 1.5))], dtypes=(F32, F16),
                    tag="defaults"))
    out.append(Case("RMSNormalization", 23, [In([3, 4, 5], -2, 2), Const(rand([3, 1, 5], 0.5, 1.5))], {"axis": 0},
                    dtypes=(F32,), expect="refused", tag="two_runs",
                    note="a scale broadcast along two separate runs of the normalized dims is left to ORT"))
    # LRN: sizes 1 to 7, windows wider than the channels, every attribute; alpha large enough that the
    # normalization shows (ONNX Runtime's CPU kernel refuses even sizes: the backend op test checks them)
    for k, (size, c) in enumerate([(3, 6), (5, 7), (5, 3), (1, 4), (7, 5)]):
        out.append(Case("LRN", 13 if k % 2 else 1, [In([2, c, 4, 5], -2, 2)],
                        {"size": size, "alpha": 0.6, "beta": 0.75 if k % 2 else 0.5, "bias": 1.0 + 0.5 * k},
                        tag="size%d_c%d" % (size, c)))
    out.append(Case("LRN", 13, [In([1, 5, 3, 3], -3, 3)], {"size": 3}, tag="defaults",
                    note="alpha 1e-4: close to x, but the window's squares of values up to 3 still show"))
    out.append(Case("GroupNormalization", 18, [In([2, 4, 3, 3]), Const(rand([2], 0.5, 1.5)), Const(rand([2]))],
                    {"num_groups": 2}, dtypes=(F32, F16),
                    note="opset 18: scale and bias per group (opset 21 makes them per channel)"))
    # pooling
    out.append(Case("MaxPool", 12, [In([1, 2, 6, 6])], {"kernel_shape": [2, 2], "strides": [2, 2]}))
    out.append(Case("MaxPool", 12, [In([2, 3, 7, 5])], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                                       "strides": [2, 1]}, tag="pads"))
    out.append(Case("MaxPool", 10, [In([1, 1, 7, 7])], {"kernel_shape": [3, 2], "strides": [2, 2],
                                                       "ceil_mode": 1}, tag="ceil"))
    out.append(Case("MaxPool", 12, [In([1, 2, 8, 8])], {"kernel_shape": [2, 2], "dilations": [2, 2]}, tag="dil",
                    expect="any", note="dilated pooling may be left to ORT"))
    out.append(Case("MaxPool", 8, [In([1, 2, 5, 6])], {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"},
                    tag="same"))
    out.append(Case("AveragePool", 11, [In([1, 2, 6, 6])], {"kernel_shape": [2, 2], "strides": [2, 2]}))
    out.append(Case("AveragePool", 11, [In([2, 3, 5, 5])], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                                           "count_include_pad": 1}, tag="incl"))
    out.append(Case("AveragePool", 11, [In([1, 2, 5, 7])], {"kernel_shape": [3, 3], "pads": [1, 0, 1, 2],
                                                           "strides": [2, 2]}, tag="excl"))
    out.append(Case("AveragePool", 10, [In([1, 1, 6, 6])], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                           "ceil_mode": 1}, tag="ceil"))
    # 3-D pooling (NCDHW): pads are the depth, height and width begins, then the ends
    out.append(Case("MaxPool", 12, [In([1, 2, 4, 5, 6])], {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2],
                                                          "pads": [1, 1, 0, 0, 1, 1]}, tag="3d"))
    out.append(Case("MaxPool", 12, [In([2, 1, 6, 5, 7])], {"kernel_shape": [2, 2, 3], "strides": [2, 1, 2],
                                                          "dilations": [2, 1, 1], "ceil_mode": 1}, tag="3d_dil_ceil"))
    out.append(Case("MaxPool", 11, [In([1, 2, 3, 5, 4])], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1],
                                                          "auto_pad": "SAME_LOWER"}, tag="3d_same"))
    out.append(Case("AveragePool", 11, [In([1, 2, 4, 5, 5])], {"kernel_shape": [3, 2, 3], "pads": [1, 0, 1, 1, 1, 1],
                                                              "count_include_pad": 1}, tag="3d_incl"))
    out.append(Case("AveragePool", 11, [In([2, 2, 5, 4, 6])], {"kernel_shape": [2, 2, 3], "pads": [1, 1, 0, 0, 1, 2],
                                                              "strides": [2, 1, 2]}, tag="3d_excl"))
    out.append(Case("AveragePool", 10, [In([1, 1, 5, 6, 6])], {"kernel_shape": [2, 3, 3], "strides": [2, 2, 2],
                                                              "ceil_mode": 1, "auto_pad": "NOTSET"}, tag="3d_ceil"))
    out.append(Case("AveragePool", 11, [In([1, 2, 4, 4, 5])], {"kernel_shape": [2, 2, 2], "auto_pad": "SAME_UPPER",
                                                              "count_include_pad": 1}, tag="3d_same"))
    out.append(Case("MaxPool", 12, [In([1, 2, 4, 4, 4])], {"kernel_shape": [2, 2, 2]}, n_out=2, tag="3d_indices",
                    expect="refused", note="MaxPool's Indices output is left to ORT (as in 2-D)"))
    out.append(Case("GlobalAveragePool", 1, [In([2, 3, 5, 4])]))
    out.append(Case("GlobalAveragePool", 1, [In([1, 4, 9])], tag="rank3"))
    out.append(Case("GlobalMaxPool", 1, [In([2, 3, 4, 5])]))
    out.append(Case("GlobalMaxPool", 1, [In([1, 2, 2, 3, 3])], tag="rank5"))
    return out


def nn_cases():
    out = []
    conv_tol = (2e-5, 2e-4)  # sums of up to 72 products: a few ulps more than one rounding
    w = lambda *s: Const(rand(list(s), -0.5, 0.5))
    out.append(Case("Conv", 11, [In([1, 3, 6, 6]), w(4, 3, 3, 3), w(4)], {"pads": [1, 1, 1, 1]}, tol=conv_tol))
    out.append(Case("Conv", 11, [In([2, 4, 7, 5]), w(6, 2, 3, 2)], {"group": 2, "strides": [2, 1],
                                                                    "pads": [0, 1, 1, 0]}, tol=conv_tol, tag="group"))
    out.append(Case("Conv", 11, [In([1, 2, 9, 9]), w(3, 2, 3, 3), w(3)], {"dilations": [2, 2]}, tol=conv_tol,
                    tag="dil"))
    out.append(Case("Conv", 11, [In([1, 4, 5, 6]), w(4, 1, 3, 3)], {"group": 4, "auto_pad": "SAME_UPPER",
                                                                    "strides": [2, 2]}, tol=conv_tol, tag="dw"))
    out.append(Case("Conv", 1, [In([1, 3, 5, 5]), w(2, 3, 1, 1)], {"kernel_shape": [1, 1]}, tol=conv_tol,
                    tag="pointwise"))
    out.append(Case("Conv", 11, [In([1, 2, 8]), w(3, 2, 3)], {"pads": [1, 1]}, tol=conv_tol, tag="1d",
                    note="1-D convolution runs as 2-D with a unit height"))
    out.append(Case("Conv", 11, [In([1, 2, 4, 5, 5]), w(3, 2, 3, 3, 3), w(3)], {"pads": [1, 1, 1, 1, 1, 1]},
                    tol=conv_tol, tag="3d", note="3-D convolution (video, volumes); the Vulkan backend's direct kernel"))
    out.append(Case("Conv", 11, [In([2, 4, 5, 6, 7]), w(4, 2, 2, 3, 2)],
                    {"group": 2, "strides": [1, 2, 2], "dilations": [2, 1, 1], "pads": [1, 0, 1, 1, 0, 1]},
                    tol=conv_tol, tag="3d_group_stride_dil"))
    out.append(Case("Conv", 11, [In([1, 3, 3, 6, 6]), w(2, 3, 1, 3, 3), w(2)], {"pads": [0, 1, 0, 0, 1, 0]},
                    expect="any", tol=conv_tol, tag="3d_asym",
                    note="asymmetric pads in 3-D: the CUDA backend leaves them to ORT (cuDNN pads both sides alike)"))
    out.append(Case("ConvTranspose", 11, [In([1, 3, 4, 4]), w(3, 2, 3, 3), w(2)], {"strides": [2, 2]},
                    tol=conv_tol))
    out.append(Case("ConvTranspose", 11, [In([1, 4, 3, 5]), w(4, 1, 2, 2)],
                    {"group": 2, "strides": [2, 2], "pads": [0, 1, 1, 0], "output_padding": [1, 0]},
                    tol=conv_tol, tag="group"))
    out.append(Case("ConvTranspose", 11, [In([1, 2, 3, 3]), w(2, 3, 3, 3)], {"dilations": [2, 2], "pads": [1, 1, 1, 1]},
                    tol=conv_tol, tag="dil"))
    out.append(Case("ConvTranspose", 11, [In([1, 2, 3, 3]), w(2, 3, 3, 3), w(3)],
                    {"strides": [3, 3], "output_shape": [9, 8]}, tol=conv_tol, tag="outshape",
                    note="output_shape within what the taps reach: pads derived from it"))
    out.append(Case("ConvTranspose", 11, [In([1, 2, 3, 3, 4]), w(2, 3, 2, 3, 3), w(3)],
                    {"strides": [2, 1, 2], "pads": [0, 1, 1, 1, 0, 0]}, expect="any", tol=conv_tol, tag="3d",
                    note="3-D: the reference and Vulkan backends (tools/nn_models.py requires it there); CUDA "
                         "leaves it to ORT"))
    out.append(Case("ConvTranspose", 11, [In([1, 2, 3, 3]), w(2, 3, 3, 3), w(3)],
                    {"strides": [3, 3], "output_shape": [10, 8]}, expect="refused", tol=conv_tol, tag="outshape_beyond",
                    note="output_shape beyond the taps (negative pads): left to ONNX Runtime"))
    out.append(Case("ConvTranspose", 11, [In([1, 2, 3, 3]), w(2, 3, 1, 1)],
                    {"strides": [3, 3], "auto_pad": "SAME_UPPER"}, expect="refused", tol=conv_tol, tag="same_beyond",
                    note="SAME output (input x stride) beyond a 1x1 kernel's taps: left to ONNX Runtime"))
    mm_tol = (2e-5, 2e-4)
    out.append(Case("MatMul", 13, [In([4, 7]), In([7, 5])], tol=mm_tol))
    out.append(Case("MatMul", 13, [In([2, 3, 4, 6]), Const(rand([6, 5]))], tol=mm_tol, tag="bcast"))
    out.append(Case("MatMul", 9, [In([3, 1, 2, 8]), In([4, 8, 3])], tol=mm_tol, tag="batch"))
    out.append(Case("MatMul", 13, [In([5, 9]), In([9])], expect="refused", tol=mm_tol, tag="vec",
                    note="1-D operand: gfxep does rank >= 2 only"))
    # Einsum: the batched products attention is written with run as MatMul; anything else stays with ORT
    es = lambda eq: {"equation": eq}
    out.append(Case("Einsum", 12, [In([2, 3, 5, 8]), In([2, 3, 7, 8])], es("bhid,bhjd->bhij"), tol=mm_tol,
                    tag="qk", note="q k^T of attention: b read transposed"))
    out.append(Case("Einsum", 12, [In([2, 3, 5, 7]), In([2, 3, 7, 8])], es("bhij,bhjd->bhid"), tol=mm_tol,
                    tag="av", note="attention weights times v"))
    out.append(Case("Einsum", 12, [In([4, 6]), Const(rand([6, 5]))], es("ij,jk->ik"), tol=mm_tol, tag="plain"))
    out.append(Case("Einsum", 12, [In([1, 2, 2, 4, 8]), In([1, 2, 2, 6, 8])], es("BGHID,BGHJD->BGHIJ"), tol=mm_tol,
                    tag="upper5", note="MaxViT's grid attention: rank 5, upper-case letters"))
    out.append(Case("Einsum", 12, [In([3, 4, 6]), In([3, 5, 6])], es("bij,bkj->bik"), tol=mm_tol, tag="letters"))
    for tag, eq, shapes, why in (
            ("out_t", "ij,jk->ki", ([4, 6], [6, 5]), "a transposed output"),
            ("sum", "bij,bjk->bk", ([2, 4, 6], [2, 6, 5]), "a summed-out output dim"),
            ("ellipsis", "...ij,...jk->...ik", ([2, 4, 6], [2, 6, 5]), "an ellipsis"),
            ("outer", "ij,kl->ijkl", ([2, 3], [4, 5]), "an outer product"),
            ("implicit", "ij,jk", ([4, 6], [6, 5]), "the implicit output form")):
        out.append(Case("Einsum", 12, [In(shapes[0]), In(shapes[1])], es(eq), tol=mm_tol, tag=tag, expect="refused",
                        note=why + ": left to ONNX Runtime"))
    out.append(Case("Gemm", 13, [In([3, 5]), Const(rand([5, 4])), Const(rand([4]))], tol=mm_tol))
    out.append(Case("Gemm", 11, [In([6, 3]), In([4, 6]), In([3, 1])], {"transA": 1, "transB": 1, "alpha": 0.5,
                                                                      "beta": 2.0}, tol=mm_tol, tag="trans"))
    out.append(Case("Gemm", 9, [In([2, 7]), Const(rand([7, 3])), Const(rand([2, 3]))], {"beta": 0.0},
                    tol=mm_tol, tag="o9"))
    out.append(Case("Gemm", 13, [In([4, 4]), In([4, 2])], tol=mm_tol, tag="noc"))
    return out


def logic_index_cases():
    out = []
    BOOL, I32, I64 = TensorProto.BOOL, TensorProto.INT32, TensorProto.INT64
    b = lambda shape: In(shape, 0, 1, elem=BOOL)
    # Not, And, Or, Xor: bool tensors only (the dtype label is fp32 by convention); broadcasting both
    # ways, a scalar, and a long odd-sized tensor
    out.append(Case("Not", 1, [b([3, 4, 5])], dtypes=(F32,)))
    out.append(Case("Not", 1, [b([1001])], dtypes=(F32,), tag="long"))
    for op in ("And", "Or", "Xor"):
        out.append(Case(op, 7, [b([3, 4, 5]), b([3, 4, 5])], dtypes=(F32,)))
        out.append(Case(op, 7, [b([2, 3, 4]), b([3, 1])], dtypes=(F32,), tag="bc"))
        out.append(Case(op, 7, [b([3, 1, 5]), b([4, 1])], dtypes=(F32,), tag="bothbc"))
        out.append(Case(op, 7, [b([]), b([2, 5])], dtypes=(F32,), tag="scalar"))
    # Mod: integers with fmod 0 (the divisor's sign) and 1 (truncated), divisors of both signs (a
    # zero divisor traps ORT's CPU EP, so none here: the backend op test and the reference's unit
    # test cover it); floats with fmod 1 in every float type
    for elem, nm in ((I32, "i32"), (I64, "i64")):
        for fm in (0, 1):
            out.append(Case("Mod", 10, [In([4, 5], -20, 20, elem=elem), In([4, 5], 1, 7, elem=elem)],
                            {"fmod": fm}, dtypes=(F32,), tag="%s_f%d_pos" % (nm, fm)))
            out.append(Case("Mod", 13, [In([3, 4, 5], -20, 20, elem=elem), In([4, 1], -7, -1, elem=elem)],
                            {"fmod": fm}, dtypes=(F32,), tag="%s_f%d_neg" % (nm, fm)))
    out.append(Case("Mod", 13, [In([6], -9, 9, elem=I64), In([], 4, 4, elem=I64)], dtypes=(F32,), tag="scalar"))
    # integer Div (truncating) by a constant divisor without zeros, of both signs and -1; a divisor
    # computed at run time stays with ORT (a zero must fail the run there)
    out.append(Case("Div", 14, [In([4, 5], -50, 50, elem=I64), Const(np.array([7, -3, 1, -1, 91], np.int64))],
                    dtypes=(F32,), tag="i64_const"))
    out.append(Case("Div", 14, [In([3, 4], -50, 50, elem=I32), Const(np.array([[2], [-5], [3]], np.int32))],
                    dtypes=(F32,), tag="i32_const"))
    out.append(Case("Div", 14, [In([4, 5], -50, 50, elem=I64), In([4, 5], 1, 7, elem=I64)], dtypes=(F32,),
                    tag="i64_computed", expect="refused", note="a computed integer divisor: left to ORT"))
    out.append(Case("Mod", 10, [In([4, 6], -10, 10), In([4, 6], 0.5, 3)], {"fmod": 1}, tag="float"))
    out.append(Case("Mod", 13, [In([2, 3, 5], -10, 10), In([3, 1], -3, -0.5)], {"fmod": 1}, tag="float_neg"))
    # CumSum: the axis a constant input (0-D or [1], int64 or int32); exclusive, reverse, both;
    # integer data; a long line; a computed axis is left to ORT
    i64 = lambda v: Const(np.array(v, np.int64))
    i32 = lambda v: Const(np.array(v, np.int32))
    out.append(Case("CumSum", 11, [In([3, 4, 5]), i64(1)]))
    out.append(Case("CumSum", 14, [In([3, 4, 5]), i64(-1)], {"exclusive": 1}, tag="excl"))
    out.append(Case("CumSum", 14, [In([3, 4, 5]), i32([0])], {"reverse": 1}, tag="rev"))
    out.append(Case("CumSum", 14, [In([2, 6, 3]), i64(1)], {"exclusive": 1, "reverse": 1}, tag="excl_rev"))
    out.append(Case("CumSum", 14, [In([2, 300]), i64(1)], tag="long"))
    out.append(Case("CumSum", 14, [In([4, 7], -50, 50, elem=I32), i64(1)], {"reverse": 1}, dtypes=(F32,), tag="i32"))
    out.append(Case("CumSum", 14, [In([5, 3], -50, 50, elem=I64), i64(0)], {"exclusive": 1}, dtypes=(F32,), tag="i64"))
    out.append(Case("CumSum", 14, [In([3, 4]), In([], 1, 1, elem=I64)], expect="refused", dtypes=(F32,), tag="axis_input",
                    note="a computed axis: left to ORT"))
    # Range: constant start, limit and delta (the count is the output's shape); negative steps, an
    # empty result, float and both integer types; a computed input is left to ORT
    f32c = lambda v: Const(np.array(v, np.float32))
    out.append(Case("Range", 11, [f32c(-1.5), f32c(2.25), f32c(0.25)], dtypes=(F32,)))
    out.append(Case("Range", 11, [f32c(0.0), f32c(2.0), f32c(0.1)], dtypes=(F32,), tag="tenth"))
    out.append(Case("Range", 11, [f32c(3.0), f32c(-4.0), f32c(-0.75)], dtypes=(F32,), tag="down"))
    out.append(Case("Range", 11, [i64(10), i64(-8), i64(-3)], dtypes=(F32,), tag="i64"))
    out.append(Case("Range", 11, [i32(-5), i32(17), i32(4)], dtypes=(F32,), tag="i32"))
    out.append(Case("Range", 11, [i64(5), i64(1), i64(2)], dtypes=(F32,), tag="empty"))
    out.append(Case("Range", 11, [In([], 2, 2, elem=I64), i64(9), i64(2)], dtypes=(F32,), expect="refused",
                    tag="input", note="a computed start: the output shape depends on it, left to ORT"))
    # Trilu: upper and lower, k of both signs and beyond the matrix, batches, integer and bool data;
    # a computed k is left to ORT
    out.append(Case("Trilu", 14, [In([4, 5])]))
    out.append(Case("Trilu", 14, [In([2, 3, 4, 5])], {"upper": 0}, tag="lower"))
    out.append(Case("Trilu", 14, [In([5, 4]), i64(2)], tag="k2"))
    out.append(Case("Trilu", 14, [In([3, 5, 4]), i64(-1)], {"upper": 0}, tag="lower_kneg"))
    out.append(Case("Trilu", 14, [In([4, 5]), i64(-7)], tag="k_beyond"))
    out.append(Case("Trilu", 14, [In([6, 3]), i64(-2)], {"upper": 0}, tag="lower_k_low"))
    out.append(Case("Trilu", 14, [In([3, 6], -9, 9, elem=I64), i64(1)], dtypes=(F32,), tag="i64"))
    out.append(Case("Trilu", 14, [In([2, 4, 4], 0, 1, elem=BOOL)], {"upper": 0}, dtypes=(F32,), tag="bool"))
    out.append(Case("Trilu", 14, [In([4, 4]), In([], 1, 1, elem=I64)], expect="refused", dtypes=(F32,), tag="k_input",
                    note="a computed k: left to ORT"))
    # GatherElements: each axis, negative indices (graph inputs over [-dim, dim)), int32 and int64
    # indices, more indices than the axis holds, integer data, constant indices
    out.append(Case("GatherElements", 11, [In([3, 4]), In([2, 4], -3, 2, elem=I64)], {"axis": 0}))
    out.append(Case("GatherElements", 13, [In([3, 4]), In([3, 6], -4, 3, elem=I32)], {"axis": 1}, tag="i32"))
    out.append(Case("GatherElements", 13, [In([2, 3, 5]), In([2, 2, 7], -5, 4, elem=I64)], {"axis": -1}, tag="rank3"))
    out.append(Case("GatherElements", 13, [In([4, 3], -50, 50, elem=I64), i64([[3, -1, 0], [-4, 2, 1]])],
                    {"axis": 0}, dtypes=(F32,), tag="int_data"))
    # GatherND: tuples shorter than the rank (slices) and as long (elements), batch_dims 1 and 2,
    # a single tuple, int64 data
    out.append(Case("GatherND", 11, [In([2, 3, 4]), i64([[0, 1], [1, -1], [-2, 0]])]))
    out.append(Case("GatherND", 12, [In([3, 3]), In([4, 2], -3, 2, elem=I64)], tag="elements"))
    out.append(Case("GatherND", 12, [In([2, 3, 4]), In([2, 2, 1], -3, 2, elem=I64)], {"batch_dims": 1}, tag="b1"))
    out.append(Case("GatherND", 13, [In([2, 3, 4]), In([2, 3, 1], -4, 3, elem=I64)], {"batch_dims": 2}, tag="b2"))
    out.append(Case("GatherND", 13, [In([4, 5]), i64([2])], tag="one"))
    out.append(Case("GatherND", 13, [In([3, 2, 2], -50, 50, elem=I64), i64([[[1], [0]], [[2], [-1]]])], dtypes=(F32,),
                    tag="int_data"))
    # ScatterElements: reduction none with distinct indices per line (duplicates are undefined),
    # every reduction with duplicates, negative axis and indices, int32 indices, integer data
    out.append(Case("ScatterElements", 11, [In([3, 4]), i64([[0, 2, 1, 2], [1, 0, 2, 0]]), In([2, 4])], {"axis": 0}))
    out.append(Case("ScatterElements", 13, [In([2, 5]), Const(np.array([[4, -1, 0], [-5, 1, 2]], np.int32)),
                                            In([2, 3])], {"axis": -1}, tag="neg"))
    for red, opset in (("add", 16), ("mul", 16), ("max", 18), ("min", 18)):
        out.append(Case("ScatterElements", opset, [In([3, 4]), In([5, 4], -3, 2, elem=I64), In([5, 4], -2, 2)],
                        {"axis": 0, "reduction": red}, tag=red))
    out.append(Case("ScatterElements", 16, [In([2, 3, 4], -50, 50, elem=I64), In([2, 3, 6], -4, 3, elem=I64),
                                            In([2, 3, 6], -50, 50, elem=I64)], {"axis": 2, "reduction": "add"},
                    dtypes=(F32,), tag="int_add"))
    # ScatterND: row slices and single elements with distinct tuples (reduction none), every
    # reduction with duplicate tuples, rank 3, integer data
    out.append(Case("ScatterND", 11, [In([4, 5]), i64([[1], [-1]]), In([2, 5])]))
    out.append(Case("ScatterND", 13, [In([3, 4]), i64([[0, 1], [2, 3], [1, -1]]), In([3])], tag="elements"))
    out.append(Case("ScatterND", 13, [In([2, 3, 4]), i64([[0, 2], [1, 0]]), In([2, 4])], tag="rank3"))
    for red, opset in (("add", 16), ("mul", 16), ("max", 18), ("min", 18)):
        out.append(Case("ScatterND", opset, [In([4, 5]), In([6, 1], -4, 3, elem=I64), In([6, 5], -2, 2)],
                        {"reduction": red}, tag=red))
    out.append(Case("ScatterND", 16, [In([3, 3], -50, 50, elem=I64), In([5, 2], -3, 2, elem=I64),
                                      In([5], -50, 50, elem=I64)], {"reduction": "mul"}, dtypes=(F32,), tag="int_mul"))
    return out


def topk_cases():
    out = []
    I32, I64 = TensorProto.INT32, TensorProto.INT64
    k = lambda v: Const(np.array([v], np.int64))
    # TopK: k a constant input; integer-valued data in a narrow range, so lines hold ties, which go to
    # the lower index (ORT's rule); largest and smallest, each axis, k up to the whole line, int32
    # and int64 data; a computed k is left to ORT
    out.append(Case("TopK", 11, [In([3, 10], -3, 3, integer=True), k(4)], n_out=2, tag="ties"))
    out.append(Case("TopK", 11, [In([2, 7, 5], -2, 2, integer=True), k(3)], {"axis": 1, "largest": 0}, n_out=2,
                    tag="smallest_ties"))
    out.append(Case("TopK", 10, [In([4, 6]), k(6)], {"axis": 1}, n_out=2, tag="opset10_whole"))
    out.append(Case("TopK", 11, [In([5, 3, 4], -4, 4, integer=True), k(2)], {"axis": 0}, n_out=2, tag="axis0"))
    out.append(Case("TopK", 11, [In([2, 300], -8, 8), k(7)], {"axis": -1, "largest": 1}, n_out=2, tag="long"))
    out.append(Case("TopK", 11, [In([3, 9], -5, 5, elem=I32), k(5)], n_out=2, dtypes=(F32,), tag="i32"))
    out.append(Case("TopK", 11, [In([2, 4, 9], -3, 3, elem=I64), k(4)], {"axis": 2, "largest": 0}, n_out=2,
                    dtypes=(F32,), tag="i64_smallest"))
    out.append(Case("TopK", 11, [In([3, 8], -2, 2, integer=True), k(3)], {"sorted": 0}, n_out=2, tag="unsorted",
                    expect="refused", note="sorted = 0: the order is the implementation's; left to ORT"))
    out.append(Case("TopK", 11, [In([3, 8]), In([1], 2, 2, elem=I64)], n_out=2, tag="computed_k",
                    note="k given at run time: read back before the output shapes are resolved"))
    return out


def quant_cases():
    out = []
    I8, U8, I32 = TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
    f = lambda v: Const(np.array(v, np.float32))  # follows the case dtype (a scale of x's type)
    i8 = lambda v: Const(np.array(v, np.int8))
    u8 = lambda v: Const(np.array(v, np.uint8))
    # QuantizeLinear: per tensor and per axis, int8 and uint8 zero points (or none: uint8), values
    # that saturate at both ends, integer values over a scale of 2 whose quotients are exact halves
    # (rounded to even)
    out.append(Case("QuantizeLinear", 10, [In([2, 3, 4], -3, 3), f(0.02), i8(5)], dtypes=(F32,)))
    out.append(Case("QuantizeLinear", 13, [In([2, 4, 3], -2, 2), f([0.01, 0.02, 0.005, 0.03]), u8([128, 0, 255, 10])],
                    dtypes=(F32,), tag="per_axis"))
    out.append(Case("QuantizeLinear", 13, [In([3, 7], -9, 9, integer=True), f(2.0), i8(0)], dtypes=(F32,),
                    tag="half_even"))
    out.append(Case("QuantizeLinear", 13, [In([4, 6], -1, 3), f(0.01)], dtypes=(F32,), tag="no_zero_point"))
    out.append(Case("QuantizeLinear", 13, [In([3, 5], -1, 1), f([0.01, 0.004, 0.02, 0.008, 0.1]),
                                           i8([0, -5, 3, 9, -1])], {"axis": -1}, dtypes=(F32,), tag="axis_last"))
    # float32 only: ORT's CPU kernel for float16 x rounds some quotients differently from the float32
    # division of the same values (its fp32 twin, the oracle), off by one next to a half; gfxep
    # divides in float32 (float16 x is compared with the CUDA backend by the backend op test)
    out.append(Case("QuantizeLinear", 19, [In([2, 3, 4], -2, 2), f(0.015), u8(100)], dtypes=(F32,),
                    out_elem=U8, tag="opset19"))
    # DequantizeLinear: int8, uint8 and int32 values, per tensor and per axis, float16 scales (19)
    out.append(Case("DequantizeLinear", 10, [In([2, 3, 4], -128, 127, elem=I8), f(0.05), i8(-3)], dtypes=(F32,)))
    out.append(Case("DequantizeLinear", 13, [In([3, 4, 2], 0, 255, elem=U8), f([0.1, 0.02, 0.5]), u8([128, 3, 250])],
                    {"axis": 0}, dtypes=(F32,), tag="per_axis"))
    out.append(Case("DequantizeLinear", 13, [In([4, 5], -100000, 100000, elem=I32), f(0.001)], dtypes=(F32,),
                    tag="int32"))
    out.append(Case("DequantizeLinear", 19, [In([2, 5, 3], -128, 127, elem=I8), f([0.01, 0.02, 0.03, 0.04, 0.05]),
                                             i8([1, -2, 3, -4, 5])], dtypes=(F32, F16), tag="opset19"))
    out.append(Case("DequantizeLinear", 21, [In([2, 4], -128, 127, elem=I8), f([[0.1, 0.2], [0.3, 0.4]])],
                    {"axis": 1, "block_size": 2}, dtypes=(F32,), expect="refused", tag="blocked",
                    note="block quantization (opset 21) is left to ORT"))
    return out


def roi_align_cases():
    out = []
    f = lambda v: Const(np.array(v, np.float32))
    i64 = lambda v: Const(np.array(v, np.int64))
    # RoiAlign: regions inside, across and beyond the plane's edges (samples more than a pixel out
    # count as 0), fixed and adaptive sampling, avg and max (ORT's rule: the largest weighted tap of
    # each sample), half_pixel and output_half_pixel, a spatial scale
    rois = f([[0, 0, 4, 4], [1.5, 2.2, 7.3, 6.1], [-3, -2, 5, 9.5], [6, 1, 9.7, 7.9]])
    out.append(Case("RoiAlign", 16, [In([2, 3, 8, 10]), rois, i64([0, 1, 1, 0])],
                    {"output_height": 3, "output_width": 2, "sampling_ratio": 2}, tag="avg"))
    out.append(Case("RoiAlign", 16, [In([2, 3, 8, 10]), rois, i64([1, 0, 1, 0])],
                    {"mode": "max", "output_height": 2, "output_width": 3,
                     "coordinate_transformation_mode": "output_half_pixel"}, tag="max_adaptive"))
    out.append(Case("RoiAlign", 16, [In([1, 4, 6, 7]), f([[2, 4, 18, 20], [0, 0, 26, 22], [10.5, 3, 13, 9]]),
                                     i64([0, 0, 0])],
                    {"output_height": 4, "output_width": 4, "spatial_scale": 0.25}, tag="scale_adaptive"))
    out.append(Case("RoiAlign", 10, [In([2, 2, 9, 9]), f([[1, 1, 6, 5], [0.5, 3, 8, 8.5]]), i64([1, 0])],
                    {"output_height": 2, "output_width": 2, "sampling_ratio": 3, "spatial_scale": 1.0},
                    tag="opset10"))
    return out


def attention_cases():
    out = []
    BOOL = TensorProto.BOOL
    q4 = lambda b, h, s, d: In([b, h, s, d])
    # Attention (23): 4-D and 3-D inputs, grouped kv heads, bool and float masks broadcast from
    # [q seq, kv seq] and [1, heads, q seq, kv seq], is_causal (upper-left aligned when q seq < kv
    # seq), scale; past inputs, present outputs and a softcap stay with ORT
    out.append(Case("Attention", 23, [q4(2, 3, 5, 8), q4(2, 3, 6, 8), q4(2, 3, 6, 4)], dtypes=(F32, F16)))
    out.append(Case("Attention", 23, [q4(1, 2, 7, 16), q4(1, 2, 7, 16), q4(1, 2, 7, 16)], {"is_causal": 1},
                    dtypes=(F32, F16), tag="causal"))
    out.append(Case("Attention", 23, [q4(1, 2, 4, 8), q4(1, 2, 9, 8), q4(1, 2, 9, 8)], {"is_causal": 1},
                    dtypes=(F32,), tag="causal_short_q"))
    out.append(Case("Attention", 23, [q4(2, 2, 5, 8), q4(2, 2, 6, 8), q4(2, 2, 6, 8), In([5, 6], 0, 1, elem=BOOL)],
                    dtypes=(F32, F16), tag="bool_mask"))
    out.append(Case("Attention", 23, [q4(2, 3, 5, 8), q4(2, 3, 6, 8), q4(2, 3, 6, 8), In([1, 3, 5, 6], -3, 0)],
                    {"scale": 0.3}, dtypes=(F32, F16), tag="float_mask_scale"))
    out.append(Case("Attention", 23, [q4(2, 4, 5, 8), q4(2, 2, 7, 8), q4(2, 2, 7, 6)], dtypes=(F32, F16), tag="gqa"))
    out.append(Case("Attention", 23, [In([2, 5, 4 * 6]), In([2, 7, 2 * 6]), In([2, 7, 2 * 3])],
                    {"q_num_heads": 4, "kv_num_heads": 2}, dtypes=(F32, F16), tag="rank3_gqa"))
    mask = np.ones([4, 6], bool)
    mask[1, :] = False
    mask[2, 3:] = False
    out.append(Case("Attention", 23, [q4(1, 2, 4, 8), q4(1, 2, 6, 8), q4(1, 2, 6, 8), Const(mask)],
                    dtypes=(F32,), tag="masked_row"))
    fmask = np.zeros([4, 6], np.float32)
    fmask[0, :] = -np.inf
    fmask[3, 1:4] = -np.inf
    out.append(Case("Attention", 23, [q4(1, 2, 4, 8), q4(1, 2, 6, 8), q4(1, 2, 6, 8), Const(fmask)],
                    dtypes=(F32,), tag="inf_row"))
    out.append(Case("Attention", 23, [q4(1, 2, 4, 8), q4(1, 2, 4, 8), q4(1, 2, 4, 8)], {"softcap": 2.0},
                    dtypes=(F32,), expect="refused", tag="softcap", note="softcap is left to ORT"))
    out.append(Case("Attention", 23, [q4(1, 2, 3, 8), q4(1, 2, 4, 8), q4(1, 2, 4, 8)], n_out=3, dtypes=(F32,),
                    expect="refused", tag="present", note="present_key/present_value outputs are left to ORT"))
    out.append(Case("Attention", 23, [q4(1, 2, 3, 8), q4(1, 2, 4, 8), q4(1, 2, 4, 8), None, q4(1, 2, 2, 8),
                                      q4(1, 2, 2, 8)], n_out=3, dtypes=(F32,), expect="refused", tag="past",
                    note="past key/value inputs are left to ORT"))
    return out


def data_dependent_cases():
    """Operators whose output shape the data decides: the count is read back during the Run."""
    out = []
    BOOL, U8, I32, I64 = TensorProto.BOOL, TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64
    f = lambda v: Const(np.array(v, np.float32))
    i64 = lambda v: Const(np.array(v, np.int64))
    # NonZero: integer-valued floats in [-1, 1] (a third are zero), each rank, every element type ORT's
    # CPU EP has (fp16/bf16 against the fp32 twin), all nonzero, none nonzero (count 0). (A scalar X is
    # left to ORT: ONNX declares its output [0, N], ORT gives [1, N], so no bound output can match.)
    out.append(Case("NonZero", 13, [In([3, 5], -1, 1, integer=True)]))
    out.append(Case("NonZero", 9, [In([2, 3, 4], -1, 1, integer=True)], tag="opset9"))
    out.append(Case("NonZero", 13, [In([17], 0, 1, elem=BOOL)], dtypes=(F32,), tag="bool"))
    out.append(Case("NonZero", 13, [In([2, 1, 3, 5], -1, 1, elem=I32)], dtypes=(F32,), tag="i32_rank4"))
    out.append(Case("NonZero", 13, [In([4, 3], 0, 2, elem=I64)], dtypes=(F32,), tag="i64"))
    out.append(Case("NonZero", 13, [In([3, 4], 0, 1, elem=U8)], dtypes=(F32,), tag="u8"))
    out.append(Case("NonZero", 13, [In([3, 7], 0.5, 2)], dtypes=(F32,), tag="all"))
    out.append(Case("NonZero", 13, [In([2, 6], 0, 0, integer=True)], dtypes=(F32,), tag="none"))
    # Slice with starts/ends computed at run time (what a count becomes); computed axes stay with ORT
    out.append(Case("Slice", 13, [In([5, 6]), In([2], -3, 1, elem=I64), In([2], 2, 6, elem=I64), i64([0, 1])],
                    dtypes=(F32,), tag="computed_starts_ends"))
    out.append(Case("Slice", 13, [In([4, 7]), i64([1]), In([1], 0, 7, elem=I64), i64([1])], dtypes=(F32,),
                    tag="computed_end"))
    out.append(Case("Slice", 13, [In([4, 7]), i64([1]), i64([3]), In([1], 0, 1, elem=I64)], dtypes=(F32,),
                    expect="refused", tag="computed_axes", note="computed axes are left to ORT"))
    # TopK with k computed at run time: none, the whole line, in between
    out.append(Case("TopK", 11, [In([2, 9], -4, 4, integer=True), In([1], 0, 0, elem=I64)], n_out=2, dtypes=(F32,),
                    tag="computed_k0"))
    out.append(Case("TopK", 11, [In([3, 6], -2, 2, integer=True), In([1], 6, 6, elem=I64)], {"axis": 1, "largest": 0},
                    n_out=2, dtypes=(F32,), tag="computed_k_whole"))
    # NonMaxSuppression (10, 11): corner boxes of any diagonal and centred boxes, integer coordinates and
    # scores with many ties (ties go to the lower index; equal overlaps meet the threshold exactly),
    # max_output_boxes_per_class below, at and above the box count, with and without the thresholds;
    # absent max_output_boxes_per_class and a score threshold above every score keep nothing
    corners = In([2, 9, 4], 0, 10)
    scores = In([2, 3, 9], 0, 1)
    out.append(Case("NonMaxSuppression", 11, [corners, scores, i64([3]), f(0.5), f(0.3)], dtypes=(F32,)))
    out.append(Case("NonMaxSuppression", 10, [In([1, 12, 4], 0, 8), In([1, 2, 12], 0, 1), i64([20]), f(0.4)],
                    dtypes=(F32,), tag="opset10_no_score_threshold"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 10, 4], 0, 6, integer=True), In([1, 1, 10], 0, 3, integer=True),
                                              i64([10]), f(0.25), f(0.5)], dtypes=(F32,), tag="ties"))
    out.append(Case("NonMaxSuppression", 11, [In([2, 8, 4], 1, 6), In([2, 2, 8], 0, 1), i64([2]), f(0.3)],
                    {"center_point_box": 1}, dtypes=(F32,), tag="center"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 7, 4], 0, 5, integer=True), In([1, 1, 7], 0, 1), i64([7]),
                                              f(0.0)], dtypes=(F32,), tag="iou0"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 6, 4], 0, 5), In([1, 2, 6], 0, 1)], dtypes=(F32,),
                    tag="no_max_output"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 6, 4], 0, 5), In([1, 2, 6], 0, 1), i64([4]), f(0.5), f(2.0)],
                    dtypes=(F32,), tag="none_above"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 70, 4], 0, 40), In([1, 1, 70], 0, 1), i64([1000]), f(0.2)],
                    dtypes=(F32,), tag="words"))
    out.append(Case("NonMaxSuppression", 11, [In([1, 6, 4], 0, 5), In([1, 1, 6], 0, 1), i64([3]), In([], 0.5, 0.5)],
                    dtypes=(F32,), expect="refused", tag="computed_iou",
                    note="a computed iou_threshold is left to ORT"))
    return out


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    cases = unary_cases() + binary_cases() + layout_cases() + resample_cases() + reduce_cases() + nn_cases() + logic_index_cases()
    cases += topk_cases() + quant_cases() + roi_align_cases() + attention_cases() + data_dependent_cases()
    counters = {}
    for c in cases:
        counters[c.op] = counters.get(c.op, 0) + 1
        write_case(out_dir, c, counters[c.op], manifest)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        f.write('{"seed": %d, "cases": [\n' % SEED)
        f.write(",\n".join(json.dumps(m, sort_keys=True) for m in manifest))
        f.write("\n]}\n")
    print("%d cases of %d ops in %s" % (len(manifest), len(counters), out_dir))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_opcases.py OUTPUT_DIR")
    main(sys.argv[1])
