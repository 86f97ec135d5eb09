# Writes small Resize/Upsample/DepthToSpace/SpaceToDepth models (every mode x coordinate mode x
# scales/sizes set) and frame-warp chains ending in GridSample into the folder given; check each with
#   build/gfxep-run --backend reference --atol 1e-5 --rtol 1e-4 MODEL
import onnx, sys, os, itertools, json
from onnx import helper, TensorProto, numpy_helper
import numpy as np

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
cases = []

def model(name, op, opset, xshape, yshape, attrs, inputs_spec, dtype=TensorProto.FLOAT):
    """inputs_spec: list of (name, np.array or None for empty-string input)"""
    inits = []
    names = ['X']
    for nm, arr in inputs_spec:
        if arr is None:
            names.append('')
        else:
            inits.append(numpy_helper.from_array(arr, nm))
            names.append(nm)
    node = helper.make_node(op, names, ['Y'], name='n0', **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info('X', dtype, xshape)],
                          [helper.make_tensor_value_info('Y', dtype, yshape)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 9 if opset >= 19 else 8
    path = os.path.join(OUT, name + '.onnx')
    onnx.save(m, path)
    cases.append(name)

f32 = lambda *v: np.array(v, dtype=np.float32)
i64 = lambda *v: np.array(v, dtype=np.int64)
empty_f = np.zeros((0,), dtype=np.float32)

X = [2, 3, 5, 7]
scale_sets = {
    'up2': f32(1, 1, 2, 2), 'down05': f32(1, 1, 0.5, 0.5), 'frac': f32(1, 1, 1.7, 1.3), 'mixed': f32(1, 1, 0.6, 2.5),
    'one': f32(1, 1, 1, 1.5),
}
size_sets = {'sz_up': i64(2, 3, 9, 11), 'sz_down': i64(2, 3, 3, 4), 'sz_one': i64(2, 3, 1, 1), 'sz_same': i64(2, 3, 5, 7)}
coords = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_crop_and_resize', 'half_pixel_symmetric']
modes = [('nearest', {'nearest_mode': m}) for m in ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil']] + \
        [('linear', {}), ('cubic', {}), ('cubic', {'exclude_outside': 1, 'cubic_coeff_a': -0.5})]
roi = f32(0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7)
roi_wide = f32(0, 0, -0.2, 0.3, 1, 1, 1.3, 0.8)
for ci, coord in enumerate(coords):
    for mi, (mode, extra) in enumerate(modes):
        opset = 19 if coord == 'half_pixel_symmetric' else [11, 13, 18, 19][(ci + mi) % 4]
        attrs = dict(mode=mode, coordinate_transformation_mode=coord, **extra)
        if coord == 'tf_crop_and_resize':
            attrs['extrapolation_value'] = 0.25
        for sk, sv in list(scale_sets.items()) + list(size_sets.items()):
            r = (roi_wide if sk in ('up2', 'sz_up') else roi) if coord == 'tf_crop_and_resize' else None
            if sk.startswith('sz'):
                yshape = list(sv)
                if opset == 11:
                    ins = [('roi', r if r is not None else empty_f), ('scales', empty_f), ('sizes', sv)]
                else:
                    ins = [('roi', r) if r is not None else ('', None), ('', None), ('sizes', sv)]
            else:
                yshape = [int(np.float32(a) * np.float32(b)) for a, b in zip(X, sv)]
                if opset == 11:
                    ins = [('roi', r if r is not None else empty_f), ('scales', sv)]
                else:
                    ins = [('roi', r) if r is not None else ('', None), ('scales', sv)]
            name = f'resize_{coord}_{mode}{mi}_{sk}_op{opset}'
            model(name, 'Resize', opset, X, None, attrs, ins)

# rank 2 and 3, axes (18), keep_aspect_ratio_policy
model('resize_rank2_linear', 'Resize', 13, [6, 5], None, dict(mode='linear'), [('', None), ('scales', f32(1.5, 0.8))])
model('resize_rank3_cubic', 'Resize', 13, [2, 6, 5], None, dict(mode='nearest'), [('', None), ('scales', f32(1, 1.5, 0.8))])
model('resize_axes_scales', 'Resize', 18, X, None, dict(mode='linear', axes=[2, 3]), [('', None), ('scales', f32(1.6, 0.7))])
model('resize_axes_neg', 'Resize', 18, X, None, dict(mode='cubic', axes=[-1]), [('', None), ('scales', f32(2.2))])
for pol in ['not_larger', 'not_smaller']:
    model(f'resize_policy_{pol}', 'Resize', 18, X, None, dict(mode='linear', axes=[2, 3], keep_aspect_ratio_policy=pol),
          [('', None), ('', None), ('sizes', i64(8, 20))])
model('resize_axes_tfcrop', 'Resize', 19, X, None, dict(mode='linear', axes=[3, 2], coordinate_transformation_mode='tf_crop_and_resize'),
      [('roi', f32(0.1, 0.2, 0.8, 0.9)), ('', None), ('sizes', i64(6, 4))])
model('resize_tfhalfnn', 'Resize', 11, X, None, dict(mode='nearest', coordinate_transformation_mode='tf_half_pixel_for_nn'),
      [('roi', empty_f), ('scales', f32(1, 1, 1.5, 0.6))])
# Upsample 9
for mode in ['nearest', 'linear']:
    for sk, sv in [('up2', f32(1, 1, 2, 2)), ('frac', f32(1, 1, 1.7, 3.0)), ('one', f32(1, 1, 1, 2.5))]:
        model(f'upsample_{mode}_{sk}', 'Upsample', 9, X, None, dict(mode=mode), [('scales', sv)])
# DepthToSpace / SpaceToDepth
for op_set in [1, 11, 13]:
    model(f'd2s_default_op{op_set}', 'DepthToSpace', op_set, [2, 8, 3, 5], None, dict(blocksize=2), [])
for mode in ['DCR', 'CRD']:
    model(f'd2s_{mode}', 'DepthToSpace', 13, [2, 18, 3, 5], None, dict(blocksize=3, mode=mode), [])
model('s2d_2', 'SpaceToDepth', 13, [2, 3, 4, 6], None, dict(blocksize=2), [])
model('s2d_3', 'SpaceToDepth', 1, [1, 2, 6, 9], None, dict(blocksize=3), [])
# GridSample as frame interpolation uses it: a flow predicted from the frame (Conv, Tanh), laid out as
# [N, H, W, 2] (Transpose), added to the identity grid, then the frame warped by it; the interpolating
# modes (nearest would flip pixels wherever the backend's Conv and ORT's differ by an ulp next to a
# rounding tie; the op cases check it on identical grids) with every padding mode, in opset 16 and 20
rng = np.random.default_rng(20261202)


def warp_model(name, opset, mode, padding, align):
    n, c, h, w = 1, 3, 24, 40
    xs = np.linspace(-1, 1, w, dtype=np.float32) if align else (np.arange(w, dtype=np.float32) * 2 + 1) / w - 1
    ys = np.linspace(-1, 1, h, dtype=np.float32) if align else (np.arange(h, dtype=np.float32) * 2 + 1) / h - 1
    base = np.stack(np.meshgrid(xs, ys), axis=-1)[None].astype(np.float32)  # [1, H, W, 2], x first
    inits = [numpy_helper.from_array((rng.standard_normal([2, c, 3, 3]) * 0.3).astype(np.float32), 'w'),
             numpy_helper.from_array(np.zeros([2], np.float32), 'b'),
             numpy_helper.from_array(np.float32(0.15), 'reach'),
             numpy_helper.from_array(base, 'base')]
    nodes = [helper.make_node('Conv', ['X', 'w', 'b'], ['flow_nchw'], name='flow', pads=[1, 1, 1, 1]),
             helper.make_node('Tanh', ['flow_nchw'], ['flow_t'], name='bound'),
             helper.make_node('Mul', ['flow_t', 'reach'], ['flow_s'], name='reach'),
             helper.make_node('Transpose', ['flow_s'], ['flow'], name='nhwc', perm=[0, 2, 3, 1]),
             helper.make_node('Add', ['flow', 'base'], ['grid'], name='grid'),
             helper.make_node('GridSample', ['X', 'grid'], ['Y'], name='warp', mode=mode, padding_mode=padding,
                              align_corners=align)]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('X', TensorProto.FLOAT, [n, c, h, w])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 9 if opset >= 19 else 8
    onnx.save(m, os.path.join(OUT, name + '.onnx'))
    cases.append(name)


for opset, names in [(16, ['bilinear', 'bicubic']), (20, ['linear', 'cubic'])]:
    for mi, mode in enumerate(names):
        for pi, padding in enumerate(['zeros', 'border', 'reflection']):
            warp_model(f'warp_{mode}_{padding}_op{opset}', opset, mode, padding, (mi + pi + opset) % 2)
# Resize to sizes computed at run time, as detection transforms export it (torchvision's
# GeneralizedRCNNTransform: the frame's H and W scaled by a factor, floored, cast back to int64): from
# the input's symbolic dims (ONNX Runtime cannot fold them), in float arithmetic the device computes and
# gfxep reads back; and from int64 shape arithmetic alone, which gfxep computes on the host. Each must
# run entirely on gfxep, on every backend (must_claim.txt).
def computed_sizes_model(name, opset, axes, float_path, mode='linear', unknown_length=False):
    nodes = [helper.make_node('Shape', ['X'], ['S']),
             helper.make_node('Slice', ['S', 'hw0', 'hw1'], ['HW'])]
    inits = [numpy_helper.from_array(i64(2), 'hw0'), numpy_helper.from_array(i64(4), 'hw1')]
    if float_path:
        nodes += [helper.make_node('Cast', ['HW'], ['HWf'], to=TensorProto.FLOAT),
                  helper.make_node('Mul', ['HWf', 'fac'], ['HWs']),
                  helper.make_node('Floor', ['HWs'], ['HWfl']),
                  helper.make_node('Cast', ['HWfl'], ['HWn'], to=TensorProto.INT64)]
        inits.append(numpy_helper.from_array(f32(1.6, 0.75), 'fac'))
    else:
        nodes += [helper.make_node('Mul', ['HW', 'two'], ['HW2']), helper.make_node('Sub', ['HW2', 'one'], ['HWn'])]
        inits += [numpy_helper.from_array(i64(2, 1), 'two'), numpy_helper.from_array(i64(1), 'one')]
    if axes:
        sizes = 'HWn'
        attrs = dict(mode=mode, axes=[2, 3])
    else:
        nodes.append(helper.make_node('Slice', ['S', 'z0', 'hw0'], ['NC']))
        nodes.append(helper.make_node('Concat', ['NC', 'HWn'], ['sizes'], axis=0))
        inits.append(numpy_helper.from_array(i64(0), 'z0'))
        sizes = 'sizes'
        attrs = dict(mode=mode)
    value_info = []
    if unknown_length:  # as PyTorch's export declares it: a 1-D int64 of unknown length
        value_info = [helper.make_tensor_value_info(sizes, TensorProto.INT64, ['L'])]
    nodes.append(helper.make_node('Resize', ['X', '', '', sizes], ['Y'], name='n0', **attrs))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, 3, 'H', 'W'])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)], initializer=inits,
                          value_info=value_info)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + '.onnx'))
    cases.append(name)
    must_claim.append(name)


# Nearest next to rounding ties: 7 -> 4 (sizes) and the float scale 4/7 put source positions a few ulp
# from a half (2 / (4/7.f) = 3.4999998), which ONNX Runtime takes as a tie; every nearest_mode.
for ni, nm in enumerate(['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil']):
    for coord in ['asymmetric', 'half_pixel', 'align_corners']:
        attrs = dict(mode='nearest', coordinate_transformation_mode=coord, nearest_mode=nm)
        model(f'resize_tie_{coord}_{nm}_sizes', 'Resize', 13, [1, 2, 11, 7], [1, 2, 6, 4], attrs,
              [('', None), ('', None), ('sizes', i64(1, 2, 6, 4))])
        model(f'resize_tie_{coord}_{nm}_scales', 'Resize', 13, [1, 2, 13, 14], None, attrs,
              [('', None), ('scales', f32(1, 1, 4 / 7, 4 / 7))])


# The FPN's top-down path as torchvision exports it (F.interpolate(x, size=lateral.shape[-2:],
# mode='nearest')): a coarser map resized to the finer map's H and W, read from its shape at run time,
# then added to it. Odd frame sizes make the ratio fractional.
def fpn_upsample_model(name, nearest_mode, coord):
    nodes = [helper.make_node('MaxPool', ['X'], ['coarse'], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node('Shape', ['X'], ['S']),
             helper.make_node('Slice', ['S', 'hw0', 'hw1'], ['HW']),
             helper.make_node('Slice', ['S', 'z0', 'hw0'], ['NC']),
             helper.make_node('Concat', ['NC', 'HW'], ['sizes'], axis=0),
             helper.make_node('Resize', ['coarse', '', '', 'sizes'], ['up'], name='n0', mode='nearest',
                              coordinate_transformation_mode=coord, nearest_mode=nearest_mode),
             helper.make_node('Add', ['up', 'X'], ['Y'])]
    inits = [numpy_helper.from_array(i64(2), 'hw0'), numpy_helper.from_array(i64(4), 'hw1'),
             numpy_helper.from_array(i64(0), 'z0')]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, 4, 'H', 'W'])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + '.onnx'))
    cases.append(name)
    must_claim.append(name)


must_claim = []
fpn_upsample_model('resize_fpn_nearest_floor', 'floor', 'asymmetric')
fpn_upsample_model('resize_fpn_nearest_round', 'round_prefer_floor', 'half_pixel')
for name in [c for c in cases if c.startswith('resize_tie_')]:
    must_claim.append(name)
computed_sizes_model('resize_sizes_from_frame_float', 13, False, True)
computed_sizes_model('resize_sizes_from_frame_int', 13, False, False)
computed_sizes_model('resize_sizes_axes_float', 18, True, True, mode='cubic')
computed_sizes_model('resize_sizes_unknown_length', 13, False, True, unknown_length=True)
with open(os.path.join(OUT, 'must_claim.txt'), 'w') as f:
    f.write('\n'.join(must_claim) + '\n')
json.dump(cases, open(os.path.join(OUT, 'cases.json'), 'w'))
print(len(cases))
