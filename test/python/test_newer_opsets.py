"""Ops of opsets 18 to 24, which exporters newer than torch 1.13 write and
Debian's libonnx 1.12 does not know: each single-node model runs in amp-run
as in ONNX Runtime (npm onnxruntime-node), on the CPU and as the CUDA
backend's kernels (--grid-loops). Among them forms that libonnx's
older schemas read wrong (AveragePool-19's dilations, LpPool-18's
ceil_mode), ops new in those opsets (Mish, the bitwise ops, Swish), booleans in
ReduceMax/ReduceMin (opset 20), Col2Im (opset 18: nn.Fold, nn.Unfold's
gradient), AffineGrid (opset 20), CenterCropPad (opset 18), and LpPool and
GlobalLpPool."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort
from test_attention_ops import save_model

RNG = np.random.RandomState(0)


def f32(*shape):
    return RNG.randn(*shape).astype(np.float32)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


X = f32(2, 6, 7)
# name: (opset, node, inputs, initializers, output element type)
CASES = {
    "split18_num_outputs": (
        18, helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1,
                             num_outputs=3), dict(x=f32(2, 7, 5)), [], None),
    "reduce_mean18_axes_input": (
        18, helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0),
        dict(x=X), [ints("axes", [1, -1])], None),
    "pad18_axes_reflect": (
        18, helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"],
                             mode="reflect"),
        dict(x=X), [ints("pads", [1, 2]), ints("axes", [2])], None),
    "pad19_wrap": (
        19, helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap"),
        dict(x=X), [ints("pads", [0, 1, 2, 0, 2, 1])], None),
    "scatter18_max": (
        18, helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                             axis=1, reduction="max"),
        dict(x=X, u=f32(2, 2, 7)),
        [ints("i", np.array([[[0] * 7, [3] * 7], [[0] * 7, [0] * 7]]))],
        None),
    "mish18": (18, helper.make_node("Mish", ["x"], ["y"]),
               dict(x=np.concatenate([X.ravel() * 4, [-100, 20, 100]])
                    .astype(np.float32)), [], None),
    "gelu20_tanh": (
        20, helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"),
        dict(x=X), [], None),
    "group_norm21": (
        21, helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                             num_groups=3),
        dict(x=X, s=f32(6), b=f32(6)), [], None),
    "bitwise_xor_int32": (
        18, helper.make_node("BitwiseXor", ["a", "b"], ["y"]),
        dict(a=np.array([1, 5, 7, -3], np.int32),
             b=np.array([3, 1, 8, 6], np.int32)), [], TensorProto.INT32),
    "bitwise_and_uint8": (
        18, helper.make_node("BitwiseAnd", ["a", "b"], ["y"]),
        dict(a=np.array([1, 255, 7, 200], np.uint8),
             b=np.array([3, 15, 8, 100], np.uint8)), [], TensorProto.UINT8),
    "bitwise_or_int64": (
        18, helper.make_node("BitwiseOr", ["a", "b"], ["y"]),
        dict(a=np.array([1, -5, 7, 2**40], np.int64),
             b=np.array([3, 1, 8, 6], np.int64)), [], TensorProto.INT64),
    "bitwise_not_uint8": (
        18, helper.make_node("BitwiseNot", ["a"], ["y"]),
        dict(a=np.array([1, 250, 0, 128], np.uint8)), [], TensorProto.UINT8),
    "average_pool19_dilations_ceil": (
        19, helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3],
                             strides=[2], dilations=[2], pads=[1, 1],
                             ceil_mode=1),
        dict(x=f32(2, 6, 8)), [], None),
    "lp_pool18_dilations_ceil": (
        18, helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2],
                             strides=[2], dilations=[2], ceil_mode=1, p=2),
        dict(x=X), [], None),
    "lp_pool11_p3_pads": (
        11, helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 2],
                             strides=[2, 1], pads=[1, 0, 1, 1], p=3),
        dict(x=f32(1, 2, 5, 4)), [], None),
    "global_lp_pool_p1": (
        11, helper.make_node("GlobalLpPool", ["x"], ["y"], p=1),
        dict(x=X), [], None),
    "reduce_max20_bool": (
        20, helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0),
        dict(x=np.array([[True, False, False], [False, False, False]])),
        [ints("axes", [1])], TensorProto.BOOL),
    "reduce_min20_bool": (
        20, helper.make_node("ReduceMin", ["x"], ["y"]),
        dict(x=np.array([[True, True], [True, False]])), [],
        TensorProto.BOOL),
    "col2im18": (
        18, helper.make_node("Col2Im", ["x", "image", "block"], ["y"]),
        dict(x=f32(1, 8, 9)), [ints("image", [4, 4]), ints("block", [2, 2])],
        None),
    "col2im18_strides_pads_dilations": (
        18, helper.make_node("Col2Im", ["x", "image", "block"], ["y"],
                             strides=[2, 1], pads=[1, 0, 1, 2],
                             dilations=[2, 1]),
        dict(x=f32(2, 12, 15)), [ints("image", [5, 4]),
                                 ints("block", [2, 2])], None),
    "affine_grid20": (
        20, helper.make_node("AffineGrid", ["theta", "size"], ["y"]),
        dict(theta=f32(2, 2, 3)), [ints("size", [2, 3, 4, 5])], None),
    "affine_grid20_corners_3d": (
        20, helper.make_node("AffineGrid", ["theta", "size"], ["y"],
                             align_corners=1),
        dict(theta=f32(2, 3, 4)), [ints("size", [2, 1, 3, 4, 5])], None),
    "center_crop_pad18": (
        18, helper.make_node("CenterCropPad", ["x", "shape"], ["y"]),
        dict(x=X), [ints("shape", [3, 3, 10])], None),
    "center_crop_pad18_axes": (
        18, helper.make_node("CenterCropPad", ["x", "shape"], ["y"],
                             axes=[-1, 1]),
        dict(x=X), [ints("shape", [4, 9])], None),
    "swish24": (24, helper.make_node("Swish", ["x"], ["y"], alpha=1.5),
                dict(x=X), [], None),
    "dft20_axis_input": (
        20, helper.make_node("DFT", ["x", "", "axis"], ["y"]),
        dict(x=f32(2, 8, 1)), [ints("axis", 1)], None),
}


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnx_runtime(name, grid, tmp_path, needs_ort):
    """On the CPU, and as the CUDA backend's kernels (grid loops)."""
    opset, node, inputs, inits, elem = CASES[name]
    outputs = list(node.output)
    path = save_model(tmp_path / "model.onnx", [node], inputs, outputs,
                      inits, elem=elem, opset=opset,
                      ir_version=8 if opset <= 18 else 9 if opset <= 20
                      else 10 if opset <= 23 else 11)
    got = api.run_with_inputs(path, inputs, tmp_path,
                              args=["--grid-loops"] if grid else [])
    reference = ort.run(path, inputs)
    for output in outputs:
        assert got[output].shape == reference[output].shape, output
        np.testing.assert_allclose(got[output], reference[output], rtol=1e-5,
                                   atol=1e-6, err_msg=output)
