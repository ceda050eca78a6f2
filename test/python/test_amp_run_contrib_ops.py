"""ONNX Runtime's training contrib ops that amp-run executes, checked
against numpy (ConcatTraining with its lengths output, SliceGrad,
DropoutGrad, ScatterND) and PyTorch autograd (LayerNormalizationGrad,
BatchNormalizationGrad, ConvGrad, GatherGrad, MaxPoolGrad, and the
SigmoidGrad, FastGeluGrad, QuickGelu(Grad), DivGrad, GatherElementsGrad,
Trilu and SimplifiedLayerNormalization(Grad) of newer versions,
ConvTransposeGrad, AveragePoolGrad, LeakyReluGrad, ResizeGrad, GatherNDGrad
and SplitTraining), and
ConvTranspose against PyTorch."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api


def test_contrib_training_ops_match_numpy(tmp_path):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    y = np.ones((4, 2), np.float32)
    dy = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    mask = np.array([[True, False, True, True, False, True]] * 4)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("ConcatTraining", ["x", "y"], ["c", "lengths"],
                         domain=ms, axis=1),
        helper.make_node("SliceGrad", ["dy", "shape", "starts", "ends",
                                       "axes", "steps"], ["dx"], domain=ms),
        helper.make_node("DropoutGrad", ["x", "mask", "ratio"], ["dd"],
                         domain=ms),
    ]
    constants = {"shape": [4, 6], "starts": [1, 0], "ends": [3, 6],
                 "axes": [0, 1], "steps": [1, 2]}
    inits = [numpy_helper.from_array(np.array(v, np.int64), k)
             for k, v in constants.items()]
    inits.append(numpy_helper.from_array(np.array(0.25, np.float32), "ratio"))
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "contrib",
        [info("x", TensorProto.FLOAT, [4, 6]),
         info("y", TensorProto.FLOAT, [4, 2]),
         info("dy", TensorProto.FLOAT, [2, 3]),
         info("mask", TensorProto.BOOL, [4, 6])],
        [info("c", TensorProto.FLOAT, [4, 8]),
         info("lengths", TensorProto.INT64, [2]),
         info("dx", TensorProto.FLOAT, [4, 6]),
         info("dd", TensorProto.FLOAT, [4, 6])], inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    path = str(tmp_path / "contrib.onnx")
    onnx.save(model, path)
    out = api.run_with_inputs(path, dict(x=x, y=y, dy=dy, mask=mask),
                              tmp_path).__getitem__
    np.testing.assert_array_equal(out("c"), np.concatenate([x, y], axis=1))
    np.testing.assert_array_equal(out("lengths"), [6, 2])
    expected = np.zeros((4, 6), np.float32)
    expected[1:3, 0:6:2] = dy
    np.testing.assert_array_equal(out("dx"), expected)
    np.testing.assert_allclose(out("dd"), np.where(mask, x / 0.75, 0),
                               rtol=1e-6)


def nodes_model(nodes, inputs, outputs, opset=17):
    """The model of a graph of `nodes` (or one node) with `inputs`
    ({name: array}) and `outputs` ({name: shape} (float32) or {name:
    (shape, numpy dtype)})."""
    info = helper.make_tensor_value_info
    def to_onnx(dtype):
        return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]

    def output_info(name, spec):
        shape, dtype = spec if isinstance(spec[-1], type) else (spec,
                                                                np.float32)
        return info(name, to_onnx(np.dtype(dtype)), shape)
    graph = helper.make_graph(
        nodes if isinstance(nodes, list) else [nodes], "nodes",
        [info(n, to_onnx(v.dtype), v.shape) for n, v in inputs.items()],
        [output_info(n, spec) for n, spec in outputs.items()])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset),
        helper.make_opsetid("com.microsoft", 1),
        helper.make_opsetid("ai.onnx.preview.training", 1)])


def run_nodes(tmp_path, nodes, inputs, outputs, opset=17, extra=()):
    """Runs nodes_model(nodes, inputs, outputs, opset) on `inputs` with
    amp-run's `extra` arguments. Returns {name: array} of `outputs`."""
    path = str(tmp_path / "node.onnx")
    onnx.save(nodes_model(nodes, inputs, outputs, opset), path)
    saved = api.run_with_inputs(path, inputs, tmp_path, args=extra)
    return {n: saved[n] for n in outputs}


def check_gather_grad(tmp_path, op_type, attrs, indices, dy, data):
    """Runs ONNX Runtime's `op_type` (GatherGrad, GatherNDGrad: shape,
    indices, dY) on the shape of `data`, a torch tensor whose gradient
    autograd computed, and compares dX with it."""
    node = helper.make_node(op_type, ["shape", "indices", "dy"], ["dx"],
                            domain="com.microsoft", **attrs)
    got = run_nodes(tmp_path, node,
                    dict(shape=np.array(data.shape, np.int64),
                         indices=indices, dy=dy),
                    dict(dx=tuple(data.shape)))
    np.testing.assert_allclose(got["dx"], data.grad.numpy(), rtol=0,
                               atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm_grad_matches_autograd(axis, tmp_path):
    import torch
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    normalized = x.shape[axis:] if axis > 0 else x.shape[-1:]
    scale = rng.standard_normal(normalized).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axes, keepdims=True)
    inv_std = 1 / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    xt = torch.tensor(x, requires_grad=True)
    st = torch.tensor(scale, requires_grad=True)
    bt = torch.zeros(normalized, requires_grad=True)
    torch.nn.functional.layer_norm(xt, normalized, st, bt, 1e-5).backward(
        torch.tensor(dy))
    node = helper.make_node(
        "LayerNormalizationGrad", ["dy", "x", "scale", "mean", "inv_std"],
        ["dx", "dscale", "dbias"], domain="com.microsoft", axis=axis)
    got = run_nodes(
        tmp_path, node,
        dict(dy=dy, x=x, scale=scale, mean=mean, inv_std=inv_std),
        dict(dx=x.shape, dscale=normalized, dbias=normalized))
    for name, expected in (("dx", xt.grad), ("dscale", st.grad),
                           ("dbias", bt.grad)):
        np.testing.assert_allclose(got[name], expected.numpy(), rtol=0,
                                   atol=1e-5, err_msg=name)


def test_batch_norm_grad_matches_autograd(tmp_path):
    import torch
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 2, 5)).astype(np.float32)
    scale = rng.standard_normal(3).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    mean = x.mean((0, 2, 3))
    inv_std = 1 / np.sqrt(x.var((0, 2, 3)) + 1e-5)
    xt = torch.tensor(x, requires_grad=True)
    st = torch.tensor(scale, requires_grad=True)
    bt = torch.zeros(3, requires_grad=True)
    torch.nn.functional.batch_norm(xt, None, None, st, bt, training=True,
                                   eps=1e-5).backward(torch.tensor(dy))
    node = helper.make_node(
        "BatchNormalizationGrad", ["dy", "x", "scale", "mean", "inv_std"],
        ["dx", "dscale", "dbias"], domain="com.microsoft")
    got = run_nodes(
        tmp_path, node,
        dict(dy=dy, x=x, scale=scale, mean=mean.astype(np.float32),
             inv_std=inv_std.astype(np.float32)),
        dict(dx=x.shape, dscale=(3,), dbias=(3,)))
    for name, expected in (("dx", xt.grad), ("dscale", st.grad),
                           ("dbias", bt.grad)):
        np.testing.assert_allclose(got[name], expected.numpy(), rtol=0,
                                   atol=1e-5, err_msg=name)


@pytest.mark.parametrize("x_shape,w_shape,attrs", [
    # The transposed convolution needs an output padding of 1 for dX.
    ((2, 3, 8, 8), (4, 3, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 4, 7, 6), (6, 2, 3, 2),
     dict(group=2, dilations=[2, 1], pads=[2, 0, 1, 1])),
    ((2, 2, 9), (3, 2, 4), dict(strides=[3], auto_pad="SAME_UPPER")),
    ((1, 2, 5, 4, 5), (3, 2, 3, 2, 3), dict(pads=[1, 0, 1, 1, 1, 1])),
])
@pytest.mark.parametrize("records", [False, True],
                         ids=["cpu", "conv_records"])
def test_conv_grad_matches_autograd(x_shape, w_shape, attrs, records,
                                    tmp_path):
    """ConvGrad's three gradients; with `records`, through the CUDA
    backend's grid loops, dX (lowered as a convolution of the upsampled dY
    by the flipped W) as a backward-data record of dY and W, and dW as a
    backward-filter record, executed by the CPU runtime: groups,
    dilations, strides, 1-d and 3-d convolutions."""
    import torch
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    # Forward with torch's padding: explicit begin/end pads via F.pad.
    spatial = len(x_shape) - 2
    strides = attrs.get("strides", [1] * spatial)
    dilations = attrs.get("dilations", [1] * spatial)
    pads = attrs.get("pads", [0] * 2 * spatial)
    if attrs.get("auto_pad") == "SAME_UPPER":
        pads = [0] * 2 * spatial
        for i in range(spatial):
            out = -(-x_shape[2 + i] // strides[i])
            extent = (w_shape[2 + i] - 1) * dilations[i] + 1
            total = max(0, (out - 1) * strides[i] + extent - x_shape[2 + i])
            pads[i], pads[spatial + i] = total // 2, total - total // 2
    torch_pads = []
    for i in reversed(range(spatial)):
        torch_pads += [pads[i], pads[spatial + i]]
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    bt = torch.zeros(w_shape[0], requires_grad=True)
    conv = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
            3: torch.nn.functional.conv3d}[spatial]
    y = conv(torch.nn.functional.pad(xt, torch_pads), wt, bt,
             stride=strides, dilation=dilations, groups=attrs.get("group", 1))
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    node = helper.make_node("ConvGrad", ["dy", "x", "w"], ["dx", "dw", "db"],
                            domain="com.microsoft",
                            kernel_shape=list(w_shape[2:]), **attrs)
    lowered = tmp_path / "lowered.mlir"
    extra = ["--grid-loops", "--dump-lowered", str(lowered)] if records \
        else []
    got = run_nodes(tmp_path, node, dict(dy=dy, x=x, w=w),
                    dict(dx=x_shape, dw=w_shape, db=(w_shape[0],)),
                    extra=extra)
    if records:
        assert api.conv_record_modes(lowered.read_text()) == [1, 2]
    for name, expected in (("dx", xt.grad), ("dw", wt.grad),
                           ("db", bt.grad)):
        np.testing.assert_allclose(got[name], expected.numpy(), rtol=0,
                                   atol=1e-4, err_msg=name)


# ConvTranspose's cases (input, weight, attributes): strides, asymmetric
# pads, output padding, groups, dilations, 1-d and 3-d.
CONV_TRANSPOSE_CASES = [
    ((2, 4, 5, 5), (4, 3, 3, 3),
     dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    ((2, 4, 5, 7), (4, 2, 3, 2),
     dict(strides=[2, 3], pads=[0, 1, 1, 0], output_padding=[0, 2],
          group=2)),
    ((2, 6, 6), (6, 2, 4),
     dict(strides=[3], pads=[2, 1], output_padding=[1], dilations=[2],
          group=3)),
    ((2, 2, 3, 4, 3), (2, 2, 2, 3, 2),
     dict(strides=[2, 1, 2], pads=[0, 1, 0, 1, 0, 1],
          output_padding=[1, 0, 0])),
]


def torch_conv_transpose(x, w, bias, attrs):
    """ONNX's ConvTranspose of `attrs` in torch: unpadded, with the output
    padding, then cropped by the pads."""
    import torch
    spatial = x.dim() - 2
    pads = attrs.get("pads", [0] * 2 * spatial)
    transpose = {1: torch.nn.functional.conv_transpose1d,
                 2: torch.nn.functional.conv_transpose2d,
                 3: torch.nn.functional.conv_transpose3d}[spatial]
    full = transpose(x, w, bias, stride=attrs["strides"],
                     dilation=attrs.get("dilations", [1] * spatial),
                     groups=attrs.get("group", 1),
                     output_padding=attrs["output_padding"])
    return full[(slice(None), slice(None)) + tuple(
        slice(pads[i], full.shape[2 + i] - pads[spatial + i])
        for i in range(spatial))]


@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_TRANSPOSE_CASES + [
    ((2, 4, 4, 4), (4, 3, 1, 1), dict(strides=[2, 2], output_padding=[1, 1])),
])
@pytest.mark.parametrize("records", [False, True],
                         ids=["cpu", "conv_records"])
def test_conv_transpose_matches_torch(x_shape, w_shape, attrs, records,
                                      tmp_path):
    """ConvTranspose against torch's conv_transpose; with `records`,
    through the grid loops, as one backward-data convolution record of its
    input and W (cuDNN's backward data), not a convolution of the
    upsampled input: strides, asymmetric pads, output padding, groups,
    dilations, 1-d and 3-d."""
    import torch
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    expected = torch_conv_transpose(torch.tensor(x), torch.tensor(w), None,
                                    attrs).numpy()
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
    lowered = tmp_path / "lowered.mlir"
    extra = ["--grid-loops", "--dump-lowered", str(lowered)] if records \
        else []
    got = run_nodes(tmp_path, node, dict(x=x, w=w), dict(y=expected.shape),
                    extra=extra)
    if records:
        assert api.conv_record_modes(lowered.read_text()) == [2]
    np.testing.assert_allclose(got["y"], expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_TRANSPOSE_CASES)
@pytest.mark.parametrize("records", [False, True],
                         ids=["cpu", "conv_records"])
def test_conv_transpose_grad_matches_autograd(x_shape, w_shape, attrs,
                                              records, tmp_path):
    """ONNX Runtime's ConvTransposeGrad (the gradient builder's for a
    ConvTranspose: a GAN's generator, a U-Net's decoder) against autograd
    through torch's conv_transpose: dX, dW and dB, with strides, asymmetric
    pads, output padding, groups, dilations, 1-d and 3-d; with `records`,
    through the CUDA backend's grid loops."""
    import torch
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    bt = torch.zeros(w_shape[1] * attrs.get("group", 1), requires_grad=True)
    y = torch_conv_transpose(xt, wt, bt, attrs)
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    node = helper.make_node("ConvTransposeGrad", ["dy", "x", "w"],
                            ["dx", "dw", "db"], domain="com.microsoft",
                            kernel_shape=list(w_shape[2:]), **attrs)
    extra = ["--grid-loops"] if records else []
    got = run_nodes(tmp_path, node, dict(dy=dy, x=x, w=w),
                    dict(dx=x_shape, dw=w_shape, db=(bt.shape[0],)),
                    extra=extra)
    for name, expected in (("dx", xt.grad), ("dw", wt.grad),
                           ("db", bt.grad)):
        np.testing.assert_allclose(got[name], expected.numpy(), rtol=0,
                                   atol=1e-4, err_msg=name)


@pytest.mark.parametrize("x_shape,kernel,stride,padding", [
    ((2, 3, 7, 6), [3, 2], [2, 2], [1, 1]),
    ((2, 3, 9), [4], [3], [2]),
    ((1, 2, 5, 4, 6), [2, 3, 3], [2, 1, 2], [1, 1, 0]),
    ((2, 2, 6, 6), [2, 2], [2, 2], [0, 0]),
])
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_pool_grad_matches_autograd(x_shape, kernel, stride, padding,
                                            count_include_pad, tmp_path):
    """ONNX Runtime's AveragePoolGrad (default domain, as MaxPoolGrad: the
    gradient builder's for AveragePool) against autograd through torch's
    avg_pool: overlapping and padded windows, the count with and without
    the padding, 1-d to 3-d."""
    import torch
    rng = np.random.default_rng(6)
    x = rng.standard_normal(x_shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    pool = {1: torch.nn.functional.avg_pool1d,
            2: torch.nn.functional.avg_pool2d,
            3: torch.nn.functional.avg_pool3d}[len(kernel)]
    y = pool(xt, kernel, stride=stride, padding=padding,
             count_include_pad=bool(count_include_pad))
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    node = helper.make_node("AveragePoolGrad", ["dy"], ["dx"],
                            kernel_shape=kernel, strides=stride,
                            pads=padding + padding,
                            count_include_pad=count_include_pad)
    got = run_nodes(tmp_path, node, dict(dy=dy), dict(dx=x_shape))
    np.testing.assert_allclose(got["dx"], xt.grad.numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("x_shape,size,mode,align,scales", [
    ((2, 3, 4, 5), (8, 10), "bilinear", False, True),
    ((2, 3, 5, 4), (8, 7), "bilinear", False, False),
    ((2, 3, 5, 4), (8, 7), "bilinear", True, False),
    ((2, 3, 6), (9,), "linear", False, True),
    ((2, 2, 4, 6), (8, 3), "nearest", None, False),
])
def test_resize_grad_matches_autograd(x_shape, size, mode, align, scales,
                                      tmp_path):
    """ONNX Runtime's ResizeGrad(dY, X, roi, scales) (its gradient builder's
    for Resize; its CUDA kernel's modes linear and nearest) against
    autograd through F.interpolate: up and down, by scales or sizes,
    align_corners, 1-d and 2-d."""
    import torch
    rng = np.random.default_rng(8)
    x = rng.standard_normal(x_shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.interpolate(xt, size=size, mode=mode,
                                        align_corners=align)
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    attrs = dict(mode="nearest" if mode == "nearest" else "linear")
    if mode == "nearest":
        attrs.update(coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    elif align:
        attrs.update(coordinate_transformation_mode="align_corners")
    inputs = dict(dy=dy, x=x)
    names = ["dy", "x"]
    if scales:
        factors = [1.0, 1.0] + [o / i for o, i in zip(size, x_shape[2:])]
        inputs.update(roi=np.zeros(0, np.float32),
                      scales=np.array(factors, np.float32))
        names += ["roi", "scales"]
    node = helper.make_node("ResizeGrad", names, ["dx"],
                            domain="com.microsoft", **attrs)
    if scales:
        # Scales as constants, as ONNX Runtime's artifacts hold them.
        consts = [helper.make_node("Constant", [], [n],
                                   value=numpy_helper.from_array(inputs.pop(n),
                                                                 n))
                  for n in ("roi", "scales")]
        node = consts + [node]
    got = run_nodes(tmp_path, node, inputs, dict(dx=x_shape))
    np.testing.assert_allclose(got["dx"], xt.grad.numpy(), rtol=0, atol=1e-5)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_grad_matches_autograd(batch_dims, tmp_path):
    """ONNX Runtime's GatherNDGrad(shape, indices, dY) (its gradient
    builder's for GatherND: x[rows, cols] in PyTorch) against autograd,
    repeated and negative tuples accumulating, with and without a batch
    dimension."""
    import torch
    rng = np.random.default_rng(9)
    data = rng.standard_normal((3, 5, 4, 2)).astype(np.float32)
    indices = np.array([[[1, 2], [0, -1], [1, 2]],
                        [[4, 0], [2, 3], [-5, 1]],
                        [[0, 0], [0, 0], [3, 2]]], np.int64)
    dt = torch.tensor(data, requires_grad=True)
    rows = torch.tensor(indices[..., 0])
    cols = torch.tensor(indices[..., 1])
    if batch_dims:
        batch = torch.arange(3).reshape(3, 1)
        y = dt[batch, rows, cols]
    else:
        y = dt[torch.tensor(indices[..., 0] % 3), torch.tensor(
            indices[..., 1] % 5)]
        indices = np.stack([indices[..., 0] % 3, indices[..., 1]], -1)
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    check_gather_grad(tmp_path, "GatherNDGrad", dict(batch_dims=batch_dims),
                      indices, dy, dt)


def test_leaky_relu_grad_and_split_training_match_autograd(tmp_path):
    """ONNX Runtime's LeakyReluGrad(dY, Y) against autograd, and
    SplitTraining, ConcatTraining's gradient, splitting by the lengths
    ConcatTraining computes (a split known only at run time)."""
    import torch
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.leaky_relu(xt, 0.2)
    dy = rng.standard_normal((4, 6)).astype(np.float32)
    y.backward(torch.tensor(dy))
    a = rng.standard_normal((4, 2)).astype(np.float32)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("LeakyReluGrad", ["dy", "y"], ["dx"], domain=ms,
                         alpha=0.2),
        helper.make_node("ConcatTraining", ["a", "y"], ["c", "lengths"],
                         domain=ms, axis=1),
        helper.make_node("SplitTraining", ["c", "lengths"], ["a2", "y2"],
                         domain=ms, axis=1),
    ]
    got = run_nodes(tmp_path, nodes,
                    dict(dy=dy, y=y.detach().numpy(), a=a),
                    dict(dx=(4, 6), a2=(4, 2), y2=(4, 6)))
    np.testing.assert_allclose(got["dx"], xt.grad.numpy(), rtol=0, atol=0)
    np.testing.assert_array_equal(got["a2"], a)
    np.testing.assert_array_equal(got["y2"], y.detach().numpy())


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_nd_matches_numpy(reduction, tmp_path):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 3, 2)).astype(np.float32)
    # Slices of depth 1 (rows) with a repeated and a negative index.
    indices = np.array([[[1], [3]], [[-3], [0]]], np.int64)
    updates = rng.standard_normal((2, 2, 3, 2)).astype(np.float32)
    expected = data.copy()
    for i in np.ndindex(indices.shape[:-1]):
        row = indices[i][0]
        if reduction == "none":
            expected[row] = updates[i]
        elif reduction == "add":
            expected[row] += updates[i]
        else:
            expected[row] = np.maximum(expected[row], updates[i])
    attrs = {} if reduction == "none" else dict(reduction=reduction)
    node = helper.make_node("ScatterND", ["data", "indices", "updates"],
                            ["out"], **attrs)
    got = run_nodes(tmp_path, node,
                    dict(data=data, indices=indices, updates=updates),
                    dict(out=data.shape), opset=18)
    np.testing.assert_array_equal(got["out"], expected)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_grad_matches_autograd(axis, tmp_path):
    import torch
    rng = np.random.default_rng(4)
    data = rng.standard_normal((5, 6, 2)).astype(np.float32)
    # Repeated and negative indices accumulate into one slice.
    indices = np.array([[0, 2], [-1, 2], [2, 4]], np.int64)
    dt = torch.tensor(data, requires_grad=True)
    gathered = torch.index_select(
        dt, axis, torch.tensor(indices.reshape(-1) % data.shape[axis]))
    out_shape = data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    dy = rng.standard_normal(out_shape).astype(np.float32)
    gathered.reshape(out_shape).backward(torch.tensor(dy))
    check_gather_grad(tmp_path, "GatherGrad", dict(axis=axis), indices, dy,
                      dt)


def test_max_pool_grad_matches_autograd(tmp_path):
    import torch
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    # Overlapping windows: one input can be the maximum of several.
    xt = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.max_pool2d(xt, 3, stride=2, padding=1)
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy))
    nodes = [
        helper.make_node("MaxPool", ["x"], ["y", "indices"],
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPoolGrad", ["dy", "indices"], ["dx"]),
    ]
    got = run_nodes(tmp_path, nodes, dict(x=x, dy=dy),
                    dict(y=tuple(y.shape), dx=x.shape))
    np.testing.assert_allclose(got["y"], y.detach().numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(got["dx"], xt.grad.numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("opset", [12, 17])
def test_gradient_op_matches_autograd(opset, tmp_path):
    """ONNX's Gradient over every node kind onnxg-expand-gradients
    differentiates, with a broadcast bias and divisor (ReduceSum takes its
    axes as an attribute before opset 13, as an input after), against
    PyTorch autograd of y.sum(); an x that y does not read gets zeros."""
    import torch
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((4, 3)),
              "w": rng.standard_normal((3, 5)),
              "bias": rng.standard_normal(5),
              "s": 1.5 + rng.random((1, 5)),
              "unused": rng.standard_normal(2)}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    node = helper.make_node
    nodes = [
        node("Constant", [], ["one"], value=helper.make_tensor(
            "one", onnx.TensorProto.FLOAT, [], [1.0])),
        node("MatMul", ["x", "w"], ["h"]),
        node("Add", ["h", "bias"], ["z"]),
        node("Relu", ["z"], ["relu"]),
        node("Sigmoid", ["z"], ["sigmoid"]),
        node("Mul", ["relu", "sigmoid"], ["a"]),
        node("Tanh", ["z"], ["tanh"]),
        node("Neg", ["z"], ["neg"]),
        node("Exp", ["neg"], ["exp"]),
        node("Sub", ["tanh", "exp"], ["b"]),
        node("Div", ["a", "s"], ["c"]),
        node("Mul", ["b", "b"], ["b2"]),
        node("Add", ["b2", "one"], ["b2p1"]),
        node("Sqrt", ["b2p1"], ["root"]),
        node("Log", ["root"], ["d"]),
        node("Identity", ["d"], ["d_copy"]),
        node("Add", ["c", "d_copy"], ["y"]),
        node("Gradient", ["x", "w", "bias", "s", "unused"],
             ["dx", "dw", "dbias", "ds", "dunused"],
             domain="ai.onnx.preview.training",
             xs=["x", "w", "bias", "s", "unused"], y="y")]
    outputs = {"y": (4, 5), "dx": (4, 3), "dw": (3, 5), "dbias": (5,),
               "ds": (1, 5), "dunused": (2,)}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=opset)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items()}
    z = t["x"] @ t["w"] + t["bias"]
    c = torch.relu(z) * torch.sigmoid(z) / t["s"]
    b = torch.tanh(z) - torch.exp(-z)
    y = c + torch.log(torch.sqrt(b * b + 1))
    y.sum().backward()
    np.testing.assert_allclose(got["y"], y.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    for name in ["x", "w", "bias", "s"]:
        expected = t[name].grad.numpy()
        np.testing.assert_allclose(got["d" + name], expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max(),
                                   err_msg=name)
    assert not got["dunused"].any()


@pytest.mark.parametrize("opset", [12, 17])
def test_gradient_op_differentiates_a_classifier(opset, tmp_path):
    """ONNX's Gradient over what a loss and a classifier need: Gemm (each
    transpose flag, alpha, beta, a broadcast C), Reshape, Transpose,
    Unsqueeze, Squeeze, Softmax, LogSoftmax, Pow by a constant, Cast,
    ReduceSum and ReduceMean (axes an attribute at opset 12, ReduceSum's
    an input at 17, keepdims 0 and 1), against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(3)
    inputs = {"x": rng.standard_normal((6, 4)),
              "w": rng.standard_normal((5, 4)),
              "v": rng.standard_normal((5, 3)),
              "c": rng.standard_normal((1, 3)),
              "t": rng.random((6, 3))}
    inputs = {k: val.astype(np.float32) for k, val in inputs.items()}
    node = helper.make_node
    scalar = lambda name, value, dtype=onnx.TensorProto.FLOAT: node(
        "Constant", [], [name], value=helper.make_tensor(name, dtype, [],
                                                         [value]))
    axes = lambda name, values: node("Constant", [], [name],
                                     value=helper.make_tensor(
                                         name, onnx.TensorProto.INT64,
                                         [len(values)], values))
    if opset >= 13:
        reduce_sum = lambda i, o, ax, keep: node(
            "ReduceSum", [i, f"{o}_axes"], [o], keepdims=keep)
        sum_axes = lambda o, ax: [axes(f"{o}_axes", ax)]
        unsqueeze = node("Unsqueeze", ["h", "unsq_axes"], ["h3"])
        squeeze = node("Squeeze", ["h3t", "unsq_axes"], ["h2"])
        extra = [axes("unsq_axes", [1])]
    else:
        reduce_sum = lambda i, o, ax, keep: node(
            "ReduceSum", [i], [o], axes=ax, keepdims=keep)
        sum_axes = lambda o, ax: []
        unsqueeze = node("Unsqueeze", ["h"], ["h3"], axes=[1])
        squeeze = node("Squeeze", ["h3t"], ["h2"], axes=[1])
        extra = []
    nodes = extra + sum_axes("rowsum", [1]) + [
        scalar("two", 2.0), node("Constant", [], ["shape"],
                                 value=helper.make_tensor(
                                     "shape", onnx.TensorProto.INT64, [2],
                                     [5, 6])),
        node("Gemm", ["x", "w"], ["h"], transB=1, alpha=0.5),
        unsqueeze,
        node("Transpose", ["h3"], ["h3t"], perm=[0, 1, 2]),
        squeeze,
        node("Reshape", ["h2", "shape"], ["r"]),
        node("Transpose", ["r"], ["rt"]),
        node("Gemm", ["r", "v", "c"], ["logits"], transA=1, beta=2.0),
        node("Gemm", ["v", "rt"], ["aux"], transA=1, transB=1),
        node("ReduceSum", ["aux"], ["aux_sum"], keepdims=0),
        scalar("small", 0.01),
        node("Mul", ["aux_sum", "small"], ["aux_term"]),
        node("Softmax", ["logits"], ["p"], axis=1),
        node("LogSoftmax", ["logits"], ["logp"], axis=1),
        node("Mul", ["t", "logp"], ["tl"]),
        reduce_sum("tl", "rowsum", [1], 0),
        node("Sub", ["p", "t"], ["diff"]),
        node("Pow", ["diff", "two"], ["sq"]),
        node("Cast", ["sq"], ["sq64"], to=onnx.TensorProto.DOUBLE),
        node("Cast", ["sq64"], ["sq32"], to=onnx.TensorProto.FLOAT),
        node("ReduceMean", ["sq32"], ["mse"], axes=[0, 1], keepdims=1),
        node("ReduceMean", ["rowsum"], ["nll"], keepdims=0),
        node("Squeeze" if opset >= 13 else "Reshape",
             ["mse", "mse_shape"], ["mse0"]),
        axes("mse_shape", [0, 1] if opset >= 13 else []),
        node("Sub", ["mse0", "nll"], ["diff_loss"]),
        node("Add", ["diff_loss", "aux_term"], ["loss"]),
        node("Gradient", ["x", "w", "v", "c"], ["dx", "dw", "dv", "dc"],
             domain="ai.onnx.preview.training", xs=["x", "w", "v", "c"],
             y="loss")]
    outputs = {"loss": ([], np.float32), "dx": (6, 4), "dw": (5, 4), "dv": (5, 3),
               "dc": (1, 3)}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=opset)

    t = {k: torch.tensor(val, dtype=torch.float64, requires_grad=True)
         for k, val in inputs.items()}
    h = 0.5 * t["x"] @ t["w"].T
    logits = h.reshape(5, 6).T @ t["v"] + 2.0 * t["c"]
    p = torch.softmax(logits, 1)
    nll = (t["t"] * torch.log_softmax(logits, 1)).sum(1).mean()
    aux = t["v"].T @ h.reshape(5, 6)
    loss = ((p - t["t"]) ** 2).mean() - nll + 0.01 * aux.sum()
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-5)
    for name in ["x", "w", "v", "c"]:
        expected = t[name].grad.numpy()
        np.testing.assert_allclose(got["d" + name], expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max(),
                                   err_msg=name)


def int64_constant(name, values):
    """A Constant node of the 1-D int64 `values`, output `name`."""
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, onnx.TensorProto.INT64, [len(values)], values))


def sum_and_differentiate(parts, xs):
    """Nodes that sum each of `parts` into a 0-d loss, add them up into
    "loss", and take ONNX's Gradient of it with respect to `xs` (outputs
    "d<x>")."""
    node = helper.make_node
    sums = [node("ReduceSum", [p], [f"{p}_sum"], keepdims=0) for p in parts]
    return sums + [
        node("Sum", [f"{p}_sum" for p in parts], ["loss"]),
        node("Gradient", xs, [f"d{x}" for x in xs],
             domain="ai.onnx.preview.training", xs=xs, y="loss")]


def check_against_autograd(got, loss, tensors, names, rtol=1e-4,
                           atol=1e-5):
    """`got` (run_nodes' outputs: the loss and d<name>) against the torch
    `loss`, after loss.backward(), and the gradients of `tensors[name]`
    (each nonzero: a gradient that vanished would pass for right); atol
    relative to each gradient's largest element."""
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-5)
    for name in names:
        expected = tensors[name].grad.numpy()
        assert np.abs(expected).max() > 0, name
        np.testing.assert_allclose(got["d" + name], expected, rtol=rtol,
                                   atol=atol * np.abs(expected).max(),
                                   err_msg=name)


CNN_PARAMS = ["w1", "b1", "w2", "emb", "wf", "bf", "c"]


def gradient_cnn_step():
    """A CNN classifier's SoftmaxCrossEntropyLoss and ONNX's Gradient of it
    with respect to CNN_PARAMS: (nodes, inputs, outputs) as run_nodes
    takes them."""
    rng = np.random.default_rng(5)
    inputs = {"x": rng.standard_normal((2, 3, 8, 8)),
              "w1": rng.standard_normal((4, 3, 3, 3)) * 0.3,
              "b1": rng.standard_normal(4) * 0.1,
              "w2": rng.standard_normal((4, 4, 3, 3)) * 0.3,
              "emb": rng.standard_normal((10, 4)),
              "wf": rng.standard_normal((3, 20)) * 0.3,
              "bf": rng.standard_normal(3) * 0.1,
              "c": rng.standard_normal((1, 3))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    inputs["ids"] = np.array([7, 2], np.int64)
    inputs["labels"] = np.array([1, 2], np.int64)
    inputs["keep"] = np.array([[True, False, True], [True, True, False]])
    node = helper.make_node
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["h1"], pads=[1, 1, 1, 1]),
        node("LeakyRelu", ["h1"], ["a1"], alpha=0.1),
        node("MaxPool", ["a1"], ["p1"], **pool),
        node("Conv", ["p1", "w2"], ["h2"], pads=[1, 1, 1, 1]),
        node("Abs", ["h2"], ["a2"]),
        node("AveragePool", ["a2"], ["p2"], **pool),
        node("Flatten", ["p2"], ["flat"]),
        node("Gather", ["emb", "ids"], ["e"]),
        node("Erf", ["e"], ["ee"]),
        node("Concat", ["flat", "ee"], ["features"], axis=1),
        node("Gemm", ["features", "wf", "bf"], ["logits"], transB=1),
        node("Constant", [], ["shape"], value=helper.make_tensor(
            "shape", onnx.TensorProto.INT64, [2], [2, 3])),
        node("Expand", ["c", "shape"], ["fill"]),
        node("Where", ["keep", "logits", "fill"], ["mixed"]),
        node("SoftmaxCrossEntropyLoss", ["mixed", "labels"], ["loss"]),
        node("Gradient", CNN_PARAMS, [f"d{p}" for p in CNN_PARAMS],
             domain="ai.onnx.preview.training", xs=CNN_PARAMS, y="loss")]
    outputs = {"loss": ([], np.float32),
               **{f"d{p}": inputs[p].shape for p in CNN_PARAMS}}
    return nodes, inputs, outputs


@pytest.mark.parametrize("opset", [12, 17])
def test_gradient_op_differentiates_a_cnn(opset, tmp_path):
    """ONNX's Gradient of a CNN classifier's SoftmaxCrossEntropyLoss: Conv
    (with and without bias, through ONNX Runtime's ConvGrad), LeakyRelu,
    MaxPool (a copy returns the Indices MaxPoolGrad reads), Abs,
    AveragePool, Flatten, an embedding Gather (GatherGrad) through Erf,
    Concat, Gemm, Where and Expand, against PyTorch autograd."""
    import torch
    nodes, inputs, outputs = gradient_cnn_step()
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=opset)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items() if k in CNN_PARAMS or k == "x"}
    f = torch.nn.functional
    a1 = f.leaky_relu(f.conv2d(t["x"], t["w1"], t["b1"], padding=1), 0.1)
    a2 = f.conv2d(f.max_pool2d(a1, 2), t["w2"], padding=1).abs()
    flat = f.avg_pool2d(a2, 2).flatten(1)
    ee = torch.erf(t["emb"][torch.tensor(inputs["ids"])])
    logits = torch.cat([flat, ee], 1) @ t["wf"].T + t["bf"]
    mixed = torch.where(torch.tensor(inputs["keep"]), logits,
                        t["c"].expand(2, 3))
    loss = f.cross_entropy(mixed, torch.tensor(inputs["labels"]))
    check_against_autograd(got, loss, t, CNN_PARAMS)


@pytest.mark.parametrize("step", ["cnn", "transformer"])
def test_converted_gradient_step_trains_as_converted(step, tmp_path):
    """The path a user runs with those steps: amp-opt converts them (the
    GEMMs and convolutions forced to FP16, dynamic loss scaling), and
    amp-run trains the converted file with --sgd-lr on the unscaled
    gradients it outputs: the losses of amp-run's in-process
    --amp-pipeline, bit for bit, falling and not FP32's. Before, --sgd-lr
    found no gradient output (the Gradient node's own outputs are the
    scaled gradients)."""
    build, forced = {
        "cnn": (gradient_cnn_step, "Conv:always,Gemm:always"),
        "transformer": (gradient_transformer_step, "MatMul:always")}[step]
    nodes, inputs, outputs = build()
    source = tmp_path / "step.onnx"
    onnx.save(nodes_model(nodes, inputs, outputs), source)
    pipeline = f"precision=fp16 op-class={forced}"
    converted, report = api.convert(str(source), "fp16", op_class=forced)
    forced_types = {entry.split(":")[0] for entry in forced.split(",")}
    low = {d["op_type"] for d in report["decisions"] if d["precision"] == "f16"}
    assert forced_types <= low, report["decisions"]
    onnx.save(converted, tmp_path / "converted.onnx")
    args = ["--sgd-lr", "0.1"]
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    runs = {"converted": (tmp_path / "converted.onnx", None),
            "in-process": (source, pipeline), "fp32": (source, None)}
    losses = {kind: [r["loss"] for r in api.train(
        str(path), 8, amp_pipeline=amp_pipeline, args=args)[0]]
        for kind, (path, amp_pipeline) in runs.items()}
    print(losses)
    assert losses["converted"] == losses["in-process"]
    assert losses["converted"] != losses["fp32"]
    assert losses["converted"][-1] < 0.8 * losses["converted"][0]


def test_gradient_op_differentiates_normalizations(tmp_path):
    """ONNX's Gradient through a transformer's and a CNN's normalizations:
    LayerNormalization (scale and bias), a [batch, T, C] by [C, N] MatMul
    (the weight's gradient summed over the batch), BatchNormalization with
    batch statistics (training_mode) and with its input statistics,
    against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(11)
    inputs = {"x": rng.standard_normal((2, 5, 8)) * 2 + 1,
              "gamma": rng.standard_normal(8), "beta": rng.standard_normal(8),
              "w": rng.standard_normal((8, 6)),
              "img": rng.standard_normal((3, 2, 4, 4)) * 3 - 1,
              "s": rng.standard_normal(2), "b": rng.standard_normal(2),
              "s2": rng.standard_normal(2), "b2": rng.standard_normal(2),
              "mean": rng.standard_normal(2), "var": rng.random(2) + 0.5,
              "t": rng.standard_normal((2, 5, 6))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    params = ["x", "gamma", "beta", "w", "img", "s", "b", "s2", "b2"]
    node = helper.make_node
    nodes = [
        node("LayerNormalization", ["x", "gamma", "beta"], ["ln"],
             epsilon=1e-3),
        node("MatMul", ["ln", "w"], ["h"]),
        node("Sub", ["h", "t"], ["d"]),
        node("Mul", ["d", "d"], ["sq"]),
        node("ReduceMean", ["sq"], ["mse"], keepdims=0),
        node("BatchNormalization", ["img", "s", "b", "mean", "var"],
             ["bn", "running_mean", "running_var"], training_mode=1,
             momentum=0.9),
        node("BatchNormalization", ["bn", "s2", "b2", "mean", "var"],
             ["bn2"], epsilon=1e-2),
        node("Tanh", ["bn2"], ["act"]),
        node("ReduceMean", ["act"], ["act_mean"], keepdims=0),
        node("Add", ["mse", "act_mean"], ["loss"]),
        node("Gradient", params, [f"d{p}" for p in params],
             domain="ai.onnx.preview.training", xs=params, y="loss")]
    outputs = {"loss": ([], np.float32),
               **{f"d{p}": inputs[p].shape for p in params}}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=17)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k in params)
         for k, v in inputs.items()}
    f = torch.nn.functional
    ln = f.layer_norm(t["x"], (8,), t["gamma"], t["beta"], eps=1e-3)
    mse = ((ln @ t["w"] - t["t"]) ** 2).mean()
    bn = f.batch_norm(t["img"], t["mean"].clone(), t["var"].clone(), t["s"],
                      t["b"], training=True, eps=1e-5)
    bn2 = f.batch_norm(bn, t["mean"], t["var"], t["s2"], t["b2"],
                       training=False, eps=1e-2)
    loss = mse + torch.tanh(bn2).mean()
    check_against_autograd(got, loss, t, params)


def test_gradient_op_differentiates_dropout_and_clip(tmp_path):
    """ONNX's Gradient through Clip (constant bounds), Softplus, Sum and
    Mean of broadcast operands, and a training-mode Dropout (dy through its
    mask over the keep probability; the mask is the run's), against
    PyTorch autograd."""
    import torch
    rng = np.random.default_rng(13)
    inputs = {"x": rng.standard_normal((4, 6)), "a": rng.standard_normal(6),
              "b": rng.standard_normal((4, 1))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    params = ["x", "a", "b"]
    node = helper.make_node
    const = lambda name, value, kind=onnx.TensorProto.FLOAT: node(
        "Constant", [], [name], value=helper.make_tensor(name, kind, [],
                                                         [value]))
    nodes = [
        const("lo", -0.5), const("hi", 1.0), const("ratio", 0.25),
        const("train", True, onnx.TensorProto.BOOL),
        node("Clip", ["x", "lo", "hi"], ["c"]),
        node("Softplus", ["c"], ["sp"]),
        node("Sum", ["sp", "a", "b"], ["s"]),
        node("Mean", ["s", "a"], ["m"]),
        node("Dropout", ["m", "ratio", "train"], ["d", "mask"]),
        node("ReduceSum", ["d"], ["loss"], keepdims=0),
        node("Gradient", params, [f"d{p}" for p in params],
             domain="ai.onnx.preview.training", xs=params, y="loss")]
    outputs = {"loss": ([], np.float32), "mask": ((4, 6), np.bool_),
               **{f"d{p}": inputs[p].shape for p in params}}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=17)

    mask = torch.tensor(got["mask"])
    assert 0 < got["mask"].mean() < 1
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items()}
    c = t["x"].clamp(-0.5, 1.0)
    s = torch.nn.functional.softplus(c) + t["a"] + t["b"]
    d = torch.where(mask, (s + t["a"]) / 2 / 0.75, 0.0)
    loss = d.sum()
    check_against_autograd(got, loss, t, params, rtol=1e-5, atol=1e-6)


def test_gradient_op_differentiates_strided_slices(tmp_path):
    """ONNX's Gradient through Slices with steps other than 1 (dy's
    elements spread that far apart, then padded back; one on two axes at
    once, one from a negative start to past the end, one whose last element
    is not the last of x) and negative steps (dy reversed first: a flip, and
    steps of -2 and -3 on two axes), against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(29)
    inputs = {"x": rng.standard_normal((5, 9)), "w4": rng.standard_normal(
        (5, 9)), "w5": rng.standard_normal((2, 2))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    node = helper.make_node
    nodes = [
        int64_constant("s1", [1, 0]), int64_constant("e1", [5, 9]),
        int64_constant("a1", [0, 1]), int64_constant("p1", [2, 3]),
        node("Slice", ["x", "s1", "e1", "a1", "p1"], ["y1"]),
        int64_constant("s2", [-4]), int64_constant("e2", [100]),
        int64_constant("a2", [1]), int64_constant("p2", [2]),
        node("Slice", ["x", "s2", "e2", "a2", "p2"], ["y2"]),
        int64_constant("s3", [0]), int64_constant("e3", [4]),
        int64_constant("a3", [0]), int64_constant("p3", [3]),
        node("Slice", ["x", "s3", "e3", "a3", "p3"], ["y3"]),
        node("Sin", ["y1"], ["z1"]),
        node("Mul", ["y2", "y2"], ["z2"]),
        node("Exp", ["y3"], ["z3"]),
        int64_constant("s4", [100]), int64_constant("e4", [-100]),
        int64_constant("a4", [1]), int64_constant("p4", [-1]),
        node("Slice", ["x", "s4", "e4", "a4", "p4"], ["y4"]),
        node("Mul", ["y4", "w4"], ["z4"]),
        int64_constant("s5", [3, 7]), int64_constant("e5", [0, 1]),
        int64_constant("a5", [0, 1]), int64_constant("p5", [-2, -3]),
        node("Slice", ["x", "s5", "e5", "a5", "p5"], ["y5"]),
        node("Mul", ["y5", "w5"], ["z5"]),
        *sum_and_differentiate(["z1", "z2", "z3", "z4", "z5"], ["x"])]
    got = run_nodes(tmp_path, nodes, inputs,
                    {"loss": ([], np.float32), "dx": (5, 9)}, opset=17)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k == "x")
         for k, v in inputs.items()}
    x = t["x"]
    rows, columns = torch.tensor([3, 1]), torch.tensor([7, 4])
    loss = (torch.sin(x[1:5:2, 0:9:3]).sum() + (x[:, -4::2] ** 2).sum()
            + torch.exp(x[0:4:3]).sum() + (x.flip(1) * t["w4"]).sum()
            + (x[rows][:, columns] * t["w5"]).sum())
    check_against_autograd(got, loss, t, ["x"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [13, 18])
def test_gradient_op_differentiates_tile_and_extrema(opset, tmp_path):
    """ONNX's Gradient through Sin, Cos, HardSigmoid, Tile (dy summed over
    the repeats) and ReduceMax and ReduceMin (dy shared by the elements
    equal to the result: the tiled rows tie), with axes as an attribute
    before opset 18 and as an input from it, against PyTorch autograd
    (amax and amin share ties the same way)."""
    import torch
    rng = np.random.default_rng(23)
    inputs = {"x": rng.standard_normal((3, 5)) * 2,
              "w": rng.standard_normal(5)}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    params = ["x", "w"]
    node = helper.make_node

    def reduce(op, data, out, axis):
        if opset >= 18:
            return [int64_constant(out + "_axes", [axis]),
                    node(op, [data, out + "_axes"], [out], keepdims=0)]
        return [node(op, [data], [out], axes=[axis], keepdims=0)]

    nodes = [
        int64_constant("repeats", [2, 1]),
        node("HardSigmoid", ["x"], ["h"], alpha=0.3, beta=0.4),
        node("Tile", ["h", "repeats"], ["t"]),
        *reduce("ReduceMax", "t", "mx", 0),
        node("Sin", ["x"], ["s"]),
        node("Cos", ["x"], ["c"]),
        node("Mul", ["c", "w"], ["cw"]),
        *reduce("ReduceMin", "cw", "mn", 1),
        node("Mul", ["s", "w"], ["sw"]),
        *sum_and_differentiate(["mx", "mn", "sw"], params)]
    outputs = {"loss": ([], np.float32),
               **{f"d{p}": inputs[p].shape for p in params}}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=opset)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items()}
    h = (0.3 * t["x"] + 0.4).clamp(0, 1)
    mx = h.repeat(2, 1).amax(dim=0)
    mn = (torch.cos(t["x"]) * t["w"]).amin(dim=1)
    loss = mx.sum() + mn.sum() + (torch.sin(t["x"]) * t["w"]).sum()
    # Some of x saturate the HardSigmoid (no gradient there).
    assert 0 < (h.detach() == 1).sum() + (h.detach() == 0).sum() < h.numel()
    check_against_autograd(got, loss, t, params, rtol=1e-5, atol=1e-6)


def test_gradient_op_differentiates_resize(tmp_path):
    """ONNX's Gradient through Resize, by ONNX Runtime's ResizeGrad: nearest
    upsampling as PyTorch exports it (asymmetric, floor, by scales),
    bilinear to another size (pytorch_half_pixel; scales an empty tensor)
    and bilinear downsampling with aligned corners (no scales). Against
    PyTorch autograd."""
    import torch
    F = torch.nn.functional
    rng = np.random.default_rng(37)
    inputs = {"x": rng.standard_normal((1, 2, 4, 3)),
              "w1": rng.standard_normal((1, 2, 8, 6)),
              "w2": rng.standard_normal((1, 2, 7, 5)),
              "w3": rng.standard_normal((1, 2, 3, 2))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    node = helper.make_node
    floats = lambda name, values: node("Constant", [], [name],
                                       value=helper.make_tensor(
                                           name, onnx.TensorProto.FLOAT,
                                           [len(values)], values))
    nodes = [
        floats("up", [1, 1, 2, 2]),
        int64_constant("to", [1, 2, 7, 5]),
        int64_constant("down", [1, 2, 3, 2]),
        node("Resize", ["x", "", "up"], ["r1"], mode="nearest",
             coordinate_transformation_mode="asymmetric",
             nearest_mode="floor"),
        floats("none", []),
        node("Resize", ["x", "", "none", "to"], ["r2"], mode="linear",
             coordinate_transformation_mode="pytorch_half_pixel"),
        node("Resize", ["x", "", "", "down"], ["r3"], mode="linear",
             coordinate_transformation_mode="align_corners"),
        node("Mul", ["r1", "w1"], ["m1"]),
        node("Mul", ["r2", "w2"], ["m2"]),
        node("Mul", ["r3", "w3"], ["m3"]),
        *sum_and_differentiate(["m1", "m2", "m3"], ["x"])]
    got = run_nodes(tmp_path, nodes, inputs,
                    {"loss": ([], np.float32), "dx": (1, 2, 4, 3)}, opset=17)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k == "x")
         for k, v in inputs.items()}
    x = t["x"]
    loss = ((F.interpolate(x, scale_factor=2, mode="nearest") * t["w1"]).sum()
            + (F.interpolate(x, size=(7, 5), mode="bilinear",
                             align_corners=False) * t["w2"]).sum()
            + (F.interpolate(x, size=(3, 2), mode="bilinear",
                             align_corners=True) * t["w3"]).sum())
    check_against_autograd(got, loss, t, ["x"], rtol=1e-5, atol=1e-6)


def test_gradient_op_differentiates_dropout_without_mask(tmp_path):
    """ONNX's Gradient through a training-mode Dropout that does not output
    its mask: the expansion makes the forward node return it, so that the
    backward uses the mask the forward drew (the elements it zeroed, read
    off its output), against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(31)
    inputs = {"x": rng.standard_normal((6, 8)).astype(np.float32),
              "w": rng.standard_normal(8).astype(np.float32)}
    params = ["x", "w"]
    node = helper.make_node
    const = lambda name, value, kind=onnx.TensorProto.FLOAT: node(
        "Constant", [], [name], value=helper.make_tensor(name, kind, [],
                                                         [value]))
    nodes = [
        const("ratio", 0.25), const("train", True, onnx.TensorProto.BOOL),
        node("Dropout", ["x", "ratio", "train"], ["d"]),
        node("Tanh", ["d"], ["t"]),
        node("Mul", ["t", "w"], ["tw"]),
        node("ReduceSum", ["tw"], ["loss"], keepdims=0),
        node("Gradient", params, [f"d{p}" for p in params],
             domain="ai.onnx.preview.training", xs=params, y="loss")]
    outputs = {"loss": ([], np.float32), "d": ((6, 8), np.float32),
               **{f"d{p}": inputs[p].shape for p in params}}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=17)

    mask = torch.tensor(got["d"] != 0)
    assert 0 < got["d"].astype(bool).mean() < 1
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items()}
    d = torch.where(mask, t["x"] / 0.75, 0.0)
    loss = (torch.tanh(d) * t["w"]).sum()
    check_against_autograd(got, loss, t, params, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [9, 17])
def test_gradient_op_differentiates_split_and_slice(opset, tmp_path):
    """ONNX's Gradient through Split (the parts' gradients joined, zeros
    for a part the loss does not read) and Slice (dy padded back; bounds as
    attributes before opset 10, inputs after), against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(19)
    inputs = {"x": rng.standard_normal((4, 7)).astype(np.float32)}
    node = helper.make_node
    if opset >= 13:
        split = [int64_constant("sizes", [2, 4, 1]),
                 node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1)]
    else:
        split = [node("Split", ["x"], ["a", "b", "c"], axis=1,
                      split=[2, 4, 1])]
    if opset >= 10:
        slice_ = [int64_constant("starts", [1, -3]),
                  int64_constant("ends", [3, 100]),
                  int64_constant("axes", [0, 1]),
                  node("Slice", ["b", "starts", "ends", "axes"], ["s"])]
    else:
        slice_ = [node("Slice", ["b"], ["s"], starts=[1, -3], ends=[3, 100],
                       axes=[0, 1])]
    nodes = split + slice_ + [
        node("Tanh", ["s"], ["t"]),
        node("ReduceSum", ["t"], ["ts"], keepdims=0),
        node("Mul", ["a", "a"], ["aa"]),
        node("ReduceSum", ["aa"], ["as"], keepdims=0),
        node("Add", ["ts", "as"], ["loss"]),
        node("Gradient", ["x"], ["dx"], domain="ai.onnx.preview.training",
             xs=["x"], y="loss")]
    got = run_nodes(tmp_path, nodes, inputs,
                    {"loss": ([], np.float32), "dx": (4, 7)}, opset=opset)
    x = torch.tensor(inputs["x"], dtype=torch.float64, requires_grad=True)
    a, b, _ = x.split([2, 4, 1], 1)
    loss = torch.tanh(b[1:3, 1:]).sum() + (a * a).sum()
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-5)
    np.testing.assert_allclose(got["dx"], x.grad.numpy(), rtol=1e-5,
                               atol=1e-6)
    assert not got["dx"][:, 6].any() and not got["dx"][0, 2:6].any()


@pytest.mark.parametrize("reduction,weighted",
                         [("mean", False), ("mean", True), ("sum", True),
                          ("none", False)])
def test_gradient_op_differentiates_nll_loss(reduction, weighted, tmp_path):
    """ONNX's Gradient of NegativeLogLikelihoodLoss over LogSoftmax
    (log_softmax and nll_loss as torch exports them) on [N, C, d] scores:
    each reduction, class weights and ignore_index, against autograd."""
    import torch
    rng = np.random.default_rng(23)
    inputs = {"x": rng.standard_normal((4, 5, 3)).astype(np.float32),
              "target": np.array([[0, 4, 2], [1, 1, 3], [2, 0, 4],
                                  [3, 2, 2]], np.int64),
              "w": (rng.random(5) + 0.5).astype(np.float32)}
    node = helper.make_node
    attrs = {"reduction": reduction}
    operands = ["logp", "target"]
    if weighted:
        attrs["ignore_index"] = 2
        operands.append("w")
    nodes = [node("LogSoftmax", ["x"], ["logp"], axis=1),
             node("NegativeLogLikelihoodLoss", operands, ["l"], **attrs)]
    if reduction == "none":
        nodes.append(node("ReduceSum", ["l"], ["loss"], keepdims=0))
    else:
        nodes.append(node("Identity", ["l"], ["loss"]))
    nodes.append(node("Gradient", ["x"], ["dx"],
                      domain="ai.onnx.preview.training", xs=["x"],
                      y="loss"))
    got = run_nodes(tmp_path, nodes, inputs,
                    {"loss": ([], np.float32), "dx": (4, 5, 3)}, opset=17)
    t = {"x": torch.tensor(inputs["x"], dtype=torch.float64,
                           requires_grad=True)}
    loss = torch.nn.functional.nll_loss(
        torch.log_softmax(t["x"], 1), torch.tensor(inputs["target"]),
        weight=torch.tensor(inputs["w"], dtype=torch.float64)
        if weighted else None,
        ignore_index=2 if weighted else -100, reduction=reduction)
    if reduction == "none":
        loss = loss.sum()
    check_against_autograd(got, loss, t, ["x"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [9, 17])
def test_gradient_op_differentiates_gathers_and_pad(opset, tmp_path):
    """ONNX's Gradient through Gather on axis 1 (GatherGrad; repeated
    indices accumulate), GatherElements (GatherElementsGrad, opset 11 on)
    and a constant Pad (dy sliced back; pads as attribute before opset 11),
    against PyTorch autograd."""
    import torch
    rng = np.random.default_rng(29)
    inputs = {"x": rng.standard_normal((3, 5)).astype(np.float32),
              "cols": np.array([4, 0, 4], np.int64),
              "picks": np.array([[1, 1], [0, 4], [2, 3]], np.int64)}
    node = helper.make_node
    if opset >= 11:
        pad = [node("Constant", [], ["pads"], value=helper.make_tensor(
            "pads", onnx.TensorProto.INT64, [4], [1, 0, 0, 2])),
            node("Pad", ["x", "pads"], ["p"])]
        elements = [node("GatherElements", ["x", "picks"], ["ge"], axis=1),
                    node("Mul", ["ge", "ge"], ["ge2"]),
                    node("ReduceSum", ["ge2"], ["ges"], keepdims=0)]
    else:
        pad = [node("Pad", ["x"], ["p"], pads=[1, 0, 0, 2])]
        elements = [node("Constant", [], ["ges"], value=helper.make_tensor(
            "ges", onnx.TensorProto.FLOAT, [], [0.0]))]
    nodes = pad + elements + [
        node("Gather", ["x", "cols"], ["g"], axis=1),
        node("Tanh", ["g"], ["gt"]),
        node("ReduceSum", ["gt"], ["gs"], keepdims=0),
        node("Tanh", ["p"], ["ps"]),
        node("Mul", ["ps", "ps"], ["pp"]),
        node("ReduceSum", ["pp"], ["pps"], keepdims=0),
        node("Sum", ["gs", "pps", "ges"], ["loss"]),
        node("Gradient", ["x"], ["dx"], domain="ai.onnx.preview.training",
             xs=["x"], y="loss")]
    got = run_nodes(tmp_path, nodes, inputs,
                    {"loss": ([], np.float32), "dx": (3, 5)}, opset=opset)
    t = {"x": torch.tensor(inputs["x"], dtype=torch.float64,
                           requires_grad=True)}
    x = t["x"]
    padded = torch.nn.functional.pad(x, (0, 2, 1, 0))
    loss = torch.tanh(x[:, torch.tensor(inputs["cols"])]).sum() + \
        (torch.tanh(padded) ** 2).sum()
    if opset >= 11:
        loss = loss + (x.gather(1, torch.tensor(inputs["picks"])) ** 2).sum()
    check_against_autograd(got, loss, t, ["x"], rtol=1e-5, atol=1e-6)


def test_gradient_op_differentiates_conv_transpose(tmp_path):
    """ONNX's Gradient through a grouped, strided ConvTranspose with bias
    and output padding (ONNX Runtime's ConvTransposeGrad), against PyTorch
    autograd."""
    import torch
    rng = np.random.default_rng(31)
    inputs = {"x": rng.standard_normal((2, 4, 3, 3)),
              "w": rng.standard_normal((4, 3, 3, 3)) * 0.3,
              "b": rng.standard_normal(6) * 0.1}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    params = ["x", "w", "b"]
    node = helper.make_node
    nodes = [
        node("ConvTranspose", ["x", "w", "b"], ["y"], group=2,
             strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
        node("Tanh", ["y"], ["t"]),
        node("ReduceSum", ["t"], ["loss"], keepdims=0),
        node("Gradient", params, [f"d{p}" for p in params],
             domain="ai.onnx.preview.training", xs=params, y="loss")]
    outputs = {"loss": ([], np.float32),
               **{f"d{p}": inputs[p].shape for p in params}}
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=17)
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items()}
    y = torch.nn.functional.conv_transpose2d(
        t["x"], t["w"], t["b"], stride=2, padding=1, output_padding=1,
        groups=2)
    check_against_autograd(got, torch.tanh(y).sum(), t, params)


TRANSFORMER_PARAMS = ["emb", "g1", "b1", "wq", "wk", "wv", "wo", "g2", "b2",
                      "w1", "w2", "head"]


def gradient_transformer_step():
    """A one-block causal transformer language model's
    SoftmaxCrossEntropyLoss and ONNX's Gradient of it with respect to
    TRANSFORMER_PARAMS, as ONNX nodes: embedding Gather, LayerNormalization,
    4-D attention MatMuls, a broadcast causal mask, Softmax, an Erf GELU,
    [batch, T, C] by [C, N] MatMuls. (nodes, inputs, outputs) as run_nodes
    takes them."""
    rng = np.random.default_rng(17)
    batch, steps, width, heads, vocab = 2, 5, 8, 2, 11
    shapes = {"emb": (vocab, width), "g1": (width,), "b1": (width,),
              "wq": (width, width), "wk": (width, width),
              "wv": (width, width), "wo": (width, width), "g2": (width,),
              "b2": (width,), "w1": (width, 2 * width),
              "w2": (2 * width, width), "head": (width, vocab)}
    inputs = {k: (rng.standard_normal(v) * (1 if k in ("g1", "g2", "emb")
                                            else 0.4)).astype(np.float32)
              for k, v in shapes.items()}
    inputs["tokens"] = rng.integers(0, vocab, (batch, steps)).astype(np.int64)
    inputs["targets"] = rng.integers(0, vocab, batch * steps).astype(np.int64)
    node = helper.make_node
    scalar = lambda name, value: node("Constant", [], [name],
                                      value=helper.make_tensor(
                                          name, onnx.TensorProto.FLOAT, [],
                                          [value]))
    causal = np.triu(np.full((steps, steps), -1e4, np.float32), 1)
    head_size = width // heads
    nodes = [
        int64_constant("split_heads", [batch, steps, heads, head_size]),
        int64_constant("join_heads", [batch, steps, width]),
        int64_constant("flat_tokens", [batch * steps, vocab]),
        scalar("scale", 1 / np.sqrt(head_size)), scalar("half", 0.5),
        scalar("one", 1.0), scalar("root2", np.sqrt(2.0)),
        node("Constant", [], ["mask"], value=numpy_helper.from_array(
            causal, "mask")),
        node("Gather", ["emb", "tokens"], ["x0"]),
        node("LayerNormalization", ["x0", "g1", "b1"], ["n1"]),
        node("MatMul", ["n1", "wq"], ["q0"]),
        node("MatMul", ["n1", "wk"], ["k0"]),
        node("MatMul", ["n1", "wv"], ["v0"]),
        *[node("Reshape", [f"{t}0", "split_heads"], [f"{t}1"])
          for t in "qkv"],
        node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        node("MatMul", ["q", "kt"], ["scores0"]),
        node("Mul", ["scores0", "scale"], ["scores1"]),
        node("Add", ["scores1", "mask"], ["scores"]),
        node("Softmax", ["scores"], ["attn"], axis=-1),
        node("MatMul", ["attn", "v"], ["ctx0"]),
        node("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx1", "join_heads"], ["ctx"]),
        node("MatMul", ["ctx", "wo"], ["o"]),
        node("Add", ["x0", "o"], ["x1"]),
        node("LayerNormalization", ["x1", "g2", "b2"], ["n2"]),
        node("MatMul", ["n2", "w1"], ["h"]),
        node("Div", ["h", "root2"], ["hs"]),
        node("Erf", ["hs"], ["he"]),
        node("Add", ["he", "one"], ["h1"]),
        node("Mul", ["h", "h1"], ["h2"]),
        node("Mul", ["h2", "half"], ["gelu"]),
        node("MatMul", ["gelu", "w2"], ["f"]),
        node("Add", ["x1", "f"], ["x2"]),
        node("MatMul", ["x2", "head"], ["logits3"]),
        node("Reshape", ["logits3", "flat_tokens"], ["logits"]),
        node("SoftmaxCrossEntropyLoss", ["logits", "targets"], ["loss"]),
        node("Gradient", TRANSFORMER_PARAMS,
             [f"d{p}" for p in TRANSFORMER_PARAMS],
             domain="ai.onnx.preview.training", xs=TRANSFORMER_PARAMS,
             y="loss")]
    outputs = {"loss": ([], np.float32),
               **{f"d{p}": inputs[p].shape for p in TRANSFORMER_PARAMS}}
    return nodes, inputs, outputs


def test_gradient_op_differentiates_a_transformer(tmp_path):
    """ONNX's Gradient of a one-block transformer language model (every
    parameter: embedding, both LayerNormalizations, attention and MLP
    weights, the head), against PyTorch autograd."""
    import torch
    nodes, inputs, outputs = gradient_transformer_step()
    got = run_nodes(tmp_path, nodes, inputs, outputs, opset=17)

    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in inputs.items() if k in TRANSFORMER_PARAMS}
    f = torch.nn.functional
    batch, steps = inputs["tokens"].shape
    x0 = t["emb"][torch.tensor(inputs["tokens"])]
    n1 = f.layer_norm(x0, (8,), t["g1"], t["b1"])
    q, k, v = [(n1 @ t[w]).reshape(batch, steps, 2, 4).transpose(1, 2)
               for w in ("wq", "wk", "wv")]
    causal = torch.triu(torch.full((steps, steps), -1e4,
                                   dtype=torch.float64), 1)
    attn = torch.softmax(q @ k.transpose(2, 3) / 2.0 + causal, -1)
    ctx = (attn @ v).transpose(1, 2).reshape(batch, steps, 8)
    x1 = x0 + ctx @ t["wo"]
    h = f.layer_norm(x1, (8,), t["g2"], t["b2"]) @ t["w1"]
    x2 = x1 + f.gelu(h) @ t["w2"]
    loss = f.cross_entropy((x2 @ t["head"]).reshape(batch * steps, 11),
                           torch.tensor(inputs["targets"]))
    check_against_autograd(got, loss, t, TRANSFORMER_PARAMS, atol=1e-4)


GRID_LOOPS = ["--grid-loops", "--reverse-grid-loops"]


@pytest.mark.parametrize("extra", [[], GRID_LOOPS], ids=["cpu", "grid"])
def test_newer_gradient_ops_match_autograd(extra, tmp_path):
    """The gradient ops newer ONNX Runtime versions write: SigmoidGrad,
    FastGeluGrad, QuickGelu and QuickGeluGrad, DivGrad (both operands
    broadcast), GatherElementsGrad (TopK's and GatherElements' backward,
    repeated indices summed) and Trilu of dY; on the CPU and in the CUDA
    backend's grid loops."""
    import torch
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    dy = rng.standard_normal((3, 4)).astype(np.float32)
    a = rng.standard_normal((3, 1)).astype(np.float32)
    d = (rng.random((1, 4)) + 0.5).astype(np.float32)
    indices = np.array([[0, 0, 2], [1, 3, 1], [3, 3, 3]], np.int64)
    dg = rng.standard_normal((3, 3)).astype(np.float32)

    def grad(fn, *args):
        tensors = [torch.tensor(v, requires_grad=True) for v in args]
        fn(*tensors).backward(torch.tensor(dy))
        return [t.grad.numpy() for t in tensors]

    y = 1 / (1 + np.exp(-x))
    ms = "com.microsoft"
    nodes = [
        helper.make_node("SigmoidGrad", ["dy", "y"], ["sigmoid"], domain=ms),
        helper.make_node("FastGeluGrad", ["dy", "x"], ["fast_gelu"],
                         domain=ms),
        helper.make_node("QuickGelu", ["x"], ["quick"], domain=ms, alpha=1.5),
        helper.make_node("QuickGeluGrad", ["dy", "x"], ["quick_grad"],
                         domain=ms, alpha=1.5),
        helper.make_node("DivGrad", ["dy", "a", "d"], ["da", "dd"],
                         domain=ms),
        helper.make_node("GatherElementsGrad", ["dg", "shape", "indices"],
                         ["gathered"], domain=ms, axis=1),
        helper.make_node("Trilu", ["dy"], ["trilu"], domain=ms, upper=0),
    ]
    got = run_nodes(
        tmp_path, [helper.make_node("Constant", [], ["shape"],
                                    value=numpy_helper.from_array(
                                        np.array([3, 4], np.int64)))]
        + nodes,
        dict(dy=dy, y=y.astype(np.float32), x=x, a=a, d=d, dg=dg,
             indices=indices),
        dict(sigmoid=(3, 4), fast_gelu=(3, 4), quick=(3, 4),
             quick_grad=(3, 4), da=(3, 1), dd=(1, 4), gathered=(3, 4),
             trilu=(3, 4)), extra=extra)
    expected = {
        "sigmoid": grad(torch.sigmoid, x)[0],
        "fast_gelu": grad(lambda t: torch.nn.functional.gelu(
            t, approximate="tanh"), x)[0],
        "quick": x / (1 + np.exp(-1.5 * x)),
        "quick_grad": grad(lambda t: t * torch.sigmoid(1.5 * t), x)[0],
        "trilu": np.tril(dy),
    }
    expected["da"], expected["dd"] = grad(lambda p, q: p / q, a, d)
    gathered = torch.zeros(3, 4, requires_grad=True)
    torch.gather(gathered, 1, torch.tensor(indices)).backward(
        torch.tensor(dg))
    expected["gathered"] = gathered.grad.numpy()
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@pytest.mark.parametrize("extra", [[], GRID_LOOPS], ids=["cpu", "grid"])
def test_simplified_layer_norm_and_grad_match_autograd(extra, tmp_path):
    """ONNX Runtime's RMS normalization (SimplifiedLayerNormalization, with
    its inverse RMS output) and its gradient, on the CPU and in the grid
    loops."""
    import torch
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    scale = rng.standard_normal(8).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    st = torch.tensor(scale, requires_grad=True)
    inv_rms = torch.rsqrt(xt.pow(2).mean(-1, keepdim=True) + 1e-6)
    yt = xt * inv_rms * st
    yt.backward(torch.tensor(dy))
    ms = "com.microsoft"
    nodes = [
        helper.make_node("SimplifiedLayerNormalization", ["x", "scale"],
                         ["y", "inv_rms"], domain=ms, axis=-1, epsilon=1e-6),
        helper.make_node("SimplifiedLayerNormalizationGrad",
                         ["dy", "x", "scale", "inv_rms"], ["dx", "dscale"],
                         domain=ms, axis=-1),
    ]
    got = run_nodes(tmp_path, nodes, dict(x=x, scale=scale, dy=dy),
                    dict(y=x.shape, inv_rms=(2, 3, 1), dx=x.shape,
                         dscale=(8,)), extra=extra)
    for name, value in (("y", yt), ("inv_rms", inv_rms), ("dx", xt.grad),
                        ("dscale", st.grad)):
        np.testing.assert_allclose(got[name], value.detach().numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("attrs", [
    dict(strides=[2, 2], output_shape=[10, 9]),
    dict(strides=[2, 3], output_shape=[9, 12], output_padding=[0, 1]),
    dict(strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(strides=[2, 2], auto_pad="SAME_LOWER"),
    dict(strides=[3, 2], auto_pad="SAME_UPPER", dilations=[2, 1]),
])
def test_conv_transpose_output_shape_matches_onnx_runtime(attrs, tmp_path,
                                                          needs_ort):
    """ConvTranspose whose pads come from output_shape or auto_pad SAME_*,
    against ONNX Runtime."""
    from amp_opt import ort
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    w = rng.standard_normal((3, 4, 3, 3)).astype(np.float32)
    shape = attrs.get("output_shape")
    if shape is None:
        shape = [5 * attrs["strides"][0], 4 * attrs["strides"][1]]
    shape = (2, 4) + tuple(shape[-2:])
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
    got = run_nodes(tmp_path, node, dict(x=x, w=w), dict(y=shape))
    expected = ort.run(str(tmp_path / "node.onnx"), dict(x=x, w=w))["y"]
    assert got["y"].shape == expected.shape
    np.testing.assert_allclose(got["y"], expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
         count_include_pad=1),
])
def test_average_pool_ceil_mode_matches_torch(attrs, tmp_path):
    """AveragePool with ceil_mode against torch's avg_pool2d: the last
    windows run past the input, and that part is never counted (with
    count_include_pad, the explicit pads are)."""
    import torch
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    expected = torch.nn.functional.avg_pool2d(
        torch.tensor(x), attrs["kernel_shape"], attrs["strides"],
        padding=attrs.get("pads", [0, 0])[:2], ceil_mode=True,
        count_include_pad=bool(attrs.get("count_include_pad", 0))).numpy()
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    got = run_nodes(tmp_path, node, dict(x=x), dict(y=expected.shape))
    np.testing.assert_allclose(got["y"], expected, rtol=1e-5, atol=1e-6)


def test_max_pool_ceil_mode_drops_windows_in_the_padding(tmp_path):
    """ceil_mode's last window must start inside the input or its start
    padding (PyTorch's rule, ONNX's since 1.15): 7 columns, pads 1 and 1,
    kernel 2, stride 2 give 4 windows, not 5."""
    import torch
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    expected = torch.nn.functional.max_pool2d(
        torch.tensor(x), [3, 2], [2, 2], padding=[1, 1],
        ceil_mode=True).numpy()
    assert expected.shape == (1, 2, 3, 4)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2],
                            strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    got = run_nodes(tmp_path, node, dict(x=x), dict(y=expected.shape))
    np.testing.assert_array_equal(got["y"], expected)


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
def test_unsigned_integers_match_numpy(grid, tmp_path):
    """Unsigned integer arithmetic as numpy computes it (wrapping, unsigned
    division, remainder, comparisons and extremes), casts from and to
    unsigned integers, and unsigned constants: a uint8 image normalized
    in the graph, as exporters write image preprocessing."""
    image = np.array([[0, 1, 127, 128], [200, 254, 255, 9]], np.uint8)
    offset = numpy_helper.from_array(np.array([10], np.uint8), "offset")
    nodes = [
        helper.make_node("Sub", ["image", "offset"], ["shifted"]),
        helper.make_node("Div", ["image", "seven"], ["quotient"]),
        helper.make_node("Mod", ["image", "seven"], ["remainder"]),
        helper.make_node("Max", ["image", "shifted"], ["larger"]),
        helper.make_node("Min", ["image", "shifted"], ["smaller"]),
        helper.make_node("Greater", ["image", "offset"], ["above"]),
        helper.make_node("Cast", ["image"], ["pixels"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["image"], ["wide"], to=TensorProto.UINT16),
        helper.make_node("Cast", ["image"], ["signed"], to=TensorProto.INT8),
        helper.make_node("Div", ["pixels", "scale"], ["normalized"]),
        helper.make_node("Cast", ["pixels"], ["back"], to=TensorProto.UINT8),
    ]
    info = helper.make_tensor_value_info
    inits = [offset,
             numpy_helper.from_array(np.array([7], np.uint8), "seven"),
             numpy_helper.from_array(np.array(255, np.float32), "scale")]
    shape = list(image.shape)
    outputs = {"shifted": TensorProto.UINT8, "quotient": TensorProto.UINT8,
               "remainder": TensorProto.UINT8, "larger": TensorProto.UINT8,
               "smaller": TensorProto.UINT8, "above": TensorProto.BOOL,
               "wide": TensorProto.UINT16, "signed": TensorProto.INT8,
               "normalized": TensorProto.FLOAT, "back": TensorProto.UINT8}
    graph = helper.make_graph(
        nodes, "unsigned", [info("image", TensorProto.UINT8, shape)],
        [info(name, kind, shape) for name, kind in outputs.items()], inits)
    path = tmp_path / "unsigned.onnx"
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    saved = api.run_with_inputs(path, {"image": image}, tmp_path,
                                args=["--grid-loops"] if grid else [])
    shifted = image - np.uint8(10)
    expected = {"shifted": shifted, "quotient": image // 7,
                "remainder": image % 7, "larger": np.maximum(image, shifted),
                "smaller": np.minimum(image, shifted), "above": image > 10,
                "wide": image.astype(np.uint16),
                "signed": image.astype(np.int8),
                "normalized": image.astype(np.float32) / 255, "back": image}
    for name, value in expected.items():
        got = saved[name]
        assert got.dtype == value.dtype, name
        np.testing.assert_array_equal(got, value, err_msg=name)
