# gfxep — small ONNX models of every reduction, pooling, softmax and normalization case checked against
# ONNX Runtime's CPU EP. Usage: python3 tests/reduce_models.py OUT_DIR, then for each model
#   build/gfxep-run --backend reference --atol 1e-5 --rtol 1e-4 OUT_DIR/<model>.onnx
import os, sys
os.makedirs(sys.argv[1], exist_ok=True); os.chdir(sys.argv[1])
import sys, numpy as np
from onnx import helper, TensorProto, numpy_helper
F=TensorProto.FLOAT
def model(name, op, in_shape, out_shape, attrs={}, opset=13, consts=None, extra_inputs=(), n_out=1, dtype=F):
    inputs=[helper.make_tensor_value_info('x', dtype, in_shape)]
    inits=[]
    names=['x']
    for nm, arr in (consts or []):
        if arr is None: names.append(''); continue
        inits.append(numpy_helper.from_array(arr, nm)); names.append(nm)
    for nm, shp in extra_inputs:
        inputs.append(helper.make_tensor_value_info(nm, dtype, shp)); names.append(nm)
    node=helper.make_node(op, names, ['y'], name='n0', **attrs)
    g=helper.make_graph([node], name, inputs, [helper.make_tensor_value_info('y', dtype, out_shape)], inits)
    m=helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version=8
    open(name+'.onnx','wb').write(m.SerializeToString())
i64=lambda *v: np.array(v, dtype=np.int64)
f32=lambda a: np.asarray(a, dtype=np.float32)
rng=np.random.default_rng(0)
X=[2,3,4,5]
# reductions
for op in ['ReduceSum','ReduceMean','ReduceMax','ReduceMin','ReduceL2','ReduceL1','ReduceSumSquare']:
    for opset in [11,13,18]:
        axes_in = opset >= (13 if op=='ReduceSum' else 18)
        for axes, kd in [((1,3),1),((0,2),0),((-1,),0),((-3,-1),1),((0,1,2,3),0),(None,1),((1,2),0)]:
            tag=f"{op}_{opset}_{'all' if axes is None else '_'.join(str(a).replace('-','m') for a in axes)}_k{kd}"
            attrs={'keepdims':kd}
            consts=None
            if axes is not None:
                if axes_in: consts=[('axes', i64(*axes))]
                else: attrs['axes']=list(axes)
            model(tag, op, X, None, attrs, opset, consts)
    if op not in ('ReduceL2','ReduceL1','ReduceSumSquare'):
        model(f"{op}_18_noop", op, X, None, {'keepdims':1,'noop_with_empty_axes':1}, 18)
model("ReduceSum_13_noop", 'ReduceSum', X, None, {'keepdims':0,'noop_with_empty_axes':1}, 13)
model("ReduceSum_13_emptyaxes", 'ReduceSum', X, None, {'keepdims':0}, 13, [('axes', np.zeros((0,),np.int64))])
model("GlobalAveragePool", 'GlobalAveragePool', [2,3,17,19], None)
model("GlobalMaxPool", 'GlobalMaxPool', [2,3,17,19], None)
model("GlobalAveragePool3d", 'GlobalAveragePool', [2,3,4,5,6], None)
# pooling
P=[2,3,11,13]
cases=[
 dict(kernel_shape=[3,3]),
 dict(kernel_shape=[3,3], strides=[2,2]),
 dict(kernel_shape=[3,3], strides=[2,2], ceil_mode=1),
 dict(kernel_shape=[2,2], strides=[2,2], ceil_mode=1),
 dict(kernel_shape=[3,2], strides=[2,3], pads=[1,0,2,1]),
 dict(kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1], ceil_mode=1),
 dict(kernel_shape=[3,3], strides=[3,3], pads=[0,1,2,0], ceil_mode=1),
 dict(kernel_shape=[3,3], strides=[2,2], auto_pad='SAME_UPPER'),
 dict(kernel_shape=[4,4], strides=[3,3], auto_pad='SAME_LOWER'),
 dict(kernel_shape=[3,3], strides=[2,2], auto_pad='VALID'),
]
for opset in [11,12,19,22]:
  for i,c in enumerate(cases):
    model(f"MaxPool_{opset}_{i}", 'MaxPool', P, None, c, opset)
    model(f"AveragePool_{opset}_{i}", 'AveragePool', P, None, c, opset)
    if 'auto_pad' not in c:
        model(f"AveragePool_{opset}_{i}_cip", 'AveragePool', P, None, dict(c, count_include_pad=1), opset)
  model(f"MaxPool_{opset}_dil", 'MaxPool', P, None, dict(kernel_shape=[3,2], dilations=[2,3], pads=[1,1,2,0], strides=[1,2]), opset)
  model(f"MaxPool_{opset}_dilceil", 'MaxPool', P, None, dict(kernel_shape=[2,2], dilations=[2,2], strides=[2,2], ceil_mode=1), opset)
# softmax
for op in ['Softmax','LogSoftmax']:
  for opset in [11,13]:
    for ax in [0,1,2,3,-1,-2, None]:
        a={} if ax is None else {'axis':ax}
        model(f"{op}_{opset}_{'d' if ax is None else str(ax).replace('-','m')}", op, X, None, a, opset)
# norms
model("LayerNorm_m1", 'LayerNormalization', [2,3,8], None, {}, 17, [('s', f32(rng.standard_normal(8))), ('b', f32(rng.standard_normal(8)))])
model("LayerNorm_1", 'LayerNormalization', [2,3,8], None, {'axis':1,'epsilon':1e-3}, 17, [('s', f32(rng.standard_normal((3,8)))), ('b', f32(rng.standard_normal((3,8))))])
model("LayerNorm_nobias", 'LayerNormalization', [4,768], None, {'axis':-1}, 17, [('s', f32(rng.standard_normal(768)))])
model("LayerNorm_dynscale", 'LayerNormalization', [2,3,8], None, {}, 17, extra_inputs=[('s',[8]),('b',[8])])
model("InstanceNorm", 'InstanceNormalization', [2,3,5,7], None, {'epsilon':1e-4}, 11, [('s', f32(rng.standard_normal(3))), ('b', f32(rng.standard_normal(3)))])
model("InstanceNorm3", 'InstanceNormalization', [2,4,9], None, {}, 6, [('s', f32(rng.standard_normal(4))), ('b', f32(rng.standard_normal(4)))])
model("GroupNorm18", 'GroupNormalization', [2,6,5,7], None, {'num_groups':3}, 18, [('s', f32(rng.standard_normal(3))), ('b', f32(rng.standard_normal(3)))])
model("GroupNorm21", 'GroupNormalization', [2,6,5,7], None, {'num_groups':3,'epsilon':1e-3}, 21, [('s', f32(rng.standard_normal(6))), ('b', f32(rng.standard_normal(6)))])
# integer reductions as detection graphs use them (the minimum of a few sizes is a TopK's k; dims
# multiplied together): int64/int32 values made on the device from the float input (x * 1000, cast),
# Sum/Max/Min/Prod over an axis and over all, cast back for the comparison. Each must run entirely on
# gfxep (must_claim.txt), on every backend.
claims = []
for op in ['ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd']:
    for elem, tn in ((TensorProto.INT64, 'i64'), (TensorProto.INT32, 'i32')):
        for axes, kd in (((1,), 0), (None, 1)):
            name = f"int_{op}_{tn}_{'all' if axes is None else 'a1'}"
            scale = 3.0 if op == 'ReduceProd' else 1000.0  # products of a few small integers
            nodes = [helper.make_node('Mul', ['x', 'k'], ['xs']), helper.make_node('Cast', ['xs'], ['xi'], to=elem)]
            inits = [numpy_helper.from_array(f32(scale), 'k')]
            ins = ['xi']
            if axes is not None:
                inits.append(numpy_helper.from_array(i64(*axes), 'axes'))
                ins.append('axes')
            nodes += [helper.make_node(op, ins, ['r'], keepdims=kd), helper.make_node('Cast', ['r'], ['y'], to=F)]
            g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', F, [3, 5, 2])],
                                  [helper.make_tensor_value_info('y', F, None)], inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 18)])
            m.ir_version = 8
            open(name + '.onnx', 'wb').write(m.SerializeToString())
            claims.append(name)
open('must_claim.txt', 'w').write('\n'.join(claims) + '\n')
