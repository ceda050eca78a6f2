"""Data movement that amp-run executes, against numpy (the ONNX spec's
reference) and ONNX Runtime: Pad in its four modes (negative pads crop,
opset 18's axes), Slice and SliceGrad with negative steps, a boolean
initializer (bytes in ONNX, no LLVM global of i1), and graph outputs whose
value_info has no shape (an unknown rank, not a scalar); Mod, which
exporters write for index arithmetic; and GridSample against PyTorch's
grid_sample and ONNX Runtime."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort

X = np.random.RandomState(0).randn(3, 7).astype(np.float32)
DY = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
MASK = np.random.RandomState(1).rand(3, 7) > 0.5


def pad(pads, mode, value=0.0):
    rank = len(pads) // 2
    cropped = X[tuple(slice(max(0, -pads[i]), X.shape[i] - max(0, -pads[i + rank]))
                      for i in range(rank))]
    widths = [(max(0, pads[i]), max(0, pads[i + rank])) for i in range(rank)]
    if mode == "constant":
        return np.pad(cropped, widths, constant_values=value)
    return np.pad(cropped, widths, mode=mode)


# name: (op inputs besides X as (name suffix, value), attributes, expected)
PADS = {
    "pad_constant": ([("pads", [1, -2, 0, 3]), ("value", 2.5)],
                     {"mode": "constant"}, pad([1, -2, 0, 3], "constant", 2.5)),
    "pad_edge": ([("pads", [2, 1, 1, 4])], {"mode": "edge"},
                 pad([2, 1, 1, 4], "edge")),
    "pad_reflect_axes": ([("pads", [2, 5]), ("value", None), ("axes", [1])],
                         {"mode": "reflect"}, pad([0, 2, 0, 5], "reflect")),
    "pad_reflect": ([("pads", [2, 6, 0, 5])], {"mode": "reflect"},
                    pad([2, 6, 0, 5], "reflect")),
    "pad_wrap": ([("pads", [1, 3, 2, -2])], {"mode": "wrap"},
                 pad([1, 3, 2, -2], "wrap")),
}
# name: (starts, ends, axes, steps, expected)
SLICES = {
    "slice_reversed": ([-1], [-2 ** 62], [1], [-1], X[:, ::-1]),
    "slice_two_axes": ([5, 2], [0, -10], [1, 0], [-2, -1], X[2::-1, 5:0:-2]),
    "slice_clamped": ([100], [-100], [1], [-3], X[:, 6::-3]),
    "slice_mixed": ([0, 6], [3, 1], [0, 1], [2, -2], X[0:3:2, 6:1:-2]),
    "slice_empty": ([2], [4], [1], [-1], X[:, 2:4:-1]),
}


def slice_grad():
    dx = np.zeros((4, 7), np.float32)
    dx[3:0:-1, 6:0:-2] = DY
    return dx


def build(tmp_path, with_contrib):
    nodes, inits, expected = [], [], {}

    def const(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(values, dtype), name))
        return name

    for name, (operands, attributes, result) in PADS.items():
        names = ["x"]
        for suffix, value in operands:
            names.append("" if value is None else const(
                f"{name}.{suffix}", value,
                np.float32 if suffix == "value" else np.int64))
        nodes.append(helper.make_node("Pad", names, [name], **attributes))
        expected[name] = result
    for name, (starts, ends, axes, steps, result) in SLICES.items():
        names = ["x"] + [const(f"{name}.{k}", v) for k, v in
                         zip("seat", (starts, ends, axes, steps))]
        nodes.append(helper.make_node("Slice", names, [name]))
        expected[name] = result
    ints = np.array([[7, -7, 7, -7, 0, 5, -1]] * 3, np.int64)
    divisors = np.array([3, 3, -3, -3, 2, 5, 4], np.int64)
    const("ints", ints)
    const("divisors", divisors)
    nodes.append(helper.make_node("Mod", ["ints", "divisors"], ["mod"]))
    expected["mod"] = np.mod(ints, divisors)
    const("float_divisors", [1.5, -2.0, 0.7, 3.0, -0.5, 2.5, 1.0],
          np.float32)
    nodes.append(helper.make_node("Mod", ["x", "float_divisors"], ["fmod"],
                                  fmod=1))
    expected["fmod"] = np.fmod(X, np.array(
        [1.5, -2.0, 0.7, 3.0, -0.5, 2.5, 1.0], np.float32))
    const("mask", MASK, np.bool_)
    nodes.append(helper.make_node("Where", ["mask", "x", "pad_constant.value"],
                                  ["masked"]))
    expected["masked"] = np.where(MASK, X, np.float32(2.5))
    if with_contrib:
        names = ["dy"] + [const(f"grad.{k}", v) for k, v in zip(
            ("shape", "s", "e", "a", "t"),
            ([4, 7], [-1, 6], [0, 0], [0, 1], [-1, -2]))]
        nodes.append(helper.make_node("SliceGrad", names, ["slice_grad"],
                                      domain="com.microsoft"))
        expected["slice_grad"] = slice_grad()
    info = helper.make_tensor_value_info
    inputs = [info("x", TensorProto.FLOAT, [3, 7])]
    if with_contrib:
        inputs.append(info("dy", TensorProto.FLOAT, [3, 3]))
    # No shapes on the outputs: their rank is for shape inference to find.
    graph = helper.make_graph(
        nodes, "data_movement", inputs,
        [info(name, TensorProto.INT64 if name == "mod" else TensorProto.FLOAT,
              None) for name in expected], inits)
    opsets = [helper.make_opsetid("", 19)]
    if with_contrib:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 9
    path = tmp_path / "data_movement.onnx"
    path.write_bytes(model.SerializeToString())
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "dy.npy", DY)
    return str(path), expected


def run(path, tmp_path, with_contrib):
    args = ["--input", f"x={tmp_path / 'x.npy'}", "--save-outputs",
            str(tmp_path / "out")]
    if with_contrib:
        args += ["--input", f"dy={tmp_path / 'dy.npy'}"]
    api.train(path, 1, args=args)
    return tmp_path / "out"


def test_data_movement_matches_numpy(tmp_path):
    path, expected = build(tmp_path, with_contrib=True)
    out = run(path, tmp_path, with_contrib=True)
    for name, value in expected.items():
        actual = api.load_saved(out, name)
        assert actual.shape == value.shape, name
        np.testing.assert_array_equal(actual, value, err_msg=name)


def test_data_movement_matches_onnx_runtime(tmp_path, needs_ort):
    path, expected = build(tmp_path, with_contrib=False)
    out = run(path, tmp_path, with_contrib=False)
    reference = ort.run(path, {"x": X})
    assert reference.keys() == expected.keys()
    for name, value in reference.items():
        np.testing.assert_array_equal(api.load_saved(out, name), value,
                                      err_msg=name)


@pytest.mark.parametrize("pads", [[0, 7, 0, 0], [0, 0, 0, 8]])
def test_reflect_pads_past_the_border_repeat(pads, tmp_path):
    """numpy (the spec's reference) reflects pads wider than the axis again
    and again; ONNX Runtime refuses them. amp-run follows numpy."""
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
        "reflect", [info("x", TensorProto.FLOAT, [3, 7])],
        [info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(pads, np.int64), "pads")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "reflect.onnx"
    path.write_bytes(model.SerializeToString())
    np.save(tmp_path / "x.npy", X)
    out = run(str(path), tmp_path, with_contrib=False)
    np.testing.assert_array_equal(api.load_saved(out, "y"),
                                  pad(pads, "reflect"))


IMAGE = np.random.RandomState(2).randn(2, 8, 4, 6).astype(np.float32)


def depth_to_space(x, block, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, block, block, c // block ** 2, h, w)
        t = t.transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // block ** 2, block, block, h, w)
        t = t.transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // block ** 2, h * block, w * block)


def space_to_depth(x, block):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // block, block, w // block, block)
    return t.transpose(0, 3, 5, 1, 2, 4).reshape(
        n, c * block ** 2, h // block, w // block)


def interpolate(size, mode, align_corners=None):
    import torch
    import torch.nn.functional as F
    return F.interpolate(torch.from_numpy(IMAGE), size=size, mode=mode,
                         align_corners=align_corners).numpy()


# name: (Resize attributes, scales or None, sizes or None, expected)
RESIZES = {
    "nearest_up": ({"mode": "nearest", "nearest_mode": "floor",
                    "coordinate_transformation_mode": "asymmetric"},
                   [1, 1, 2, 3], None, interpolate((8, 18), "nearest")),
    "nearest_down": ({"mode": "nearest", "nearest_mode": "floor",
                      "coordinate_transformation_mode": "asymmetric"},
                     None, [2, 8, 2, 4], interpolate((2, 4), "nearest")),
    "bilinear": ({"mode": "linear",
                  "coordinate_transformation_mode": "pytorch_half_pixel"},
                 None, [2, 8, 7, 11], interpolate((7, 11), "bilinear", False)),
    "bilinear_corners": ({"mode": "linear",
                          "coordinate_transformation_mode": "align_corners"},
                         None, [2, 8, 9, 5],
                         interpolate((9, 5), "bilinear", True)),
    # PyTorch's bicubic: Keys' kernel with a = -0.75, borders repeated.
    "bicubic": ({"mode": "cubic", "cubic_coeff_a": -0.75,
                 "coordinate_transformation_mode": "half_pixel"},
                None, [2, 8, 9, 13], interpolate((9, 13), "bicubic", False)),
    "bicubic_corners": ({"mode": "cubic",
                         "coordinate_transformation_mode": "align_corners"},
                        None, [2, 8, 3, 7],
                        interpolate((3, 7), "bicubic", True)),
}


def build_image_ops(tmp_path):
    nodes, inits, expected = [], [], {}
    for mode in ("DCR", "CRD"):
        name = f"depth_to_space_{mode}"
        nodes.append(helper.make_node("DepthToSpace", ["x"], [name],
                                      blocksize=2, mode=mode))
        expected[name] = depth_to_space(IMAGE, 2, mode)
    nodes.append(helper.make_node("SpaceToDepth", ["x"], ["space_to_depth"],
                                  blocksize=2))
    expected["space_to_depth"] = space_to_depth(IMAGE, 2)
    for name, (attributes, scales, sizes, result) in RESIZES.items():
        operands = ["x", ""]
        if scales is not None:
            inits.append(numpy_helper.from_array(
                np.array(scales, np.float32), f"{name}.scales"))
            operands.append(f"{name}.scales")
        else:
            inits.append(numpy_helper.from_array(np.array(sizes, np.int64),
                                                 f"{name}.sizes"))
            operands += ["", f"{name}.sizes"]
        nodes.append(helper.make_node("Resize", operands, [name],
                                      **attributes))
        expected[name] = result
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "image_ops", [info("x", TensorProto.FLOAT, list(IMAGE.shape))],
        [info(name, TensorProto.FLOAT, None) for name in expected], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "image_ops.onnx"
    path.write_bytes(model.SerializeToString())
    np.save(tmp_path / "x.npy", IMAGE)
    return str(path), expected


def test_image_ops_match_numpy_and_pytorch(tmp_path):
    """DepthToSpace in both modes and SpaceToDepth against the spec's
    numpy; Resize (nearest, and bilinear and bicubic with PyTorch's two
    corner conventions) against F.interpolate."""
    path, expected = build_image_ops(tmp_path)
    out = run(path, tmp_path, with_contrib=False)
    for name, value in expected.items():
        actual = api.load_saved(out, name)
        assert actual.shape == value.shape, name
        # Bilinear weights multiply in another order than PyTorch's.
        np.testing.assert_allclose(actual, value, rtol=1e-5, atol=1e-5,
                                   err_msg=name)


def test_image_ops_match_onnx_runtime(tmp_path, needs_ort):
    path, expected = build_image_ops(tmp_path)
    out = run(path, tmp_path, with_contrib=False)
    reference = ort.run(path, {"x": IMAGE})
    assert reference.keys() == expected.keys()
    for name, value in reference.items():
        np.testing.assert_allclose(api.load_saved(out, name), value,
                                   rtol=1e-6, atol=1e-6, err_msg=name)


# name: (opset, Upsample or opset-10 Resize, mode, scales)
UPSAMPLES = {
    "upsample9_nearest": (9, "Upsample", "nearest", [1, 1, 2, 3]),
    "upsample9_nearest_fraction": (9, "Upsample", "nearest",
                                   [1, 1, 1.5, 2.5]),
    "upsample9_linear": (9, "Upsample", "linear", [1, 1, 2, 1.5]),
    "upsample7_nearest": (7, "Upsample", "nearest", [1, 1, 3, 2]),
    "upsample7_linear": (7, "Upsample", "linear", [1, 1, 2, 2]),
    "resize10_nearest_down": (10, "Resize", "nearest", [1, 1, 0.6, 0.5]),
    "resize10_linear_down": (10, "Resize", "linear", [1, 1, 0.6, 0.5]),
}


@pytest.mark.parametrize("name", sorted(UPSAMPLES))
def test_upsample_matches_onnx_runtime(name, tmp_path, needs_ort):
    """The deprecated Upsample (scales an attribute at opset 7, an input at
    9) and opset 10's Resize: asymmetric coordinates, nearest or linear, as
    ONNX Runtime computes them (for integer scales, PyTorch's nearest)."""
    opset, op_type, mode, scales = UPSAMPLES[name]
    inits = []
    if opset == 7:
        node = helper.make_node(op_type, ["x"], ["y"], mode=mode,
                                scales=[float(s) for s in scales])
    else:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32),
                                             "scales"))
        node = helper.make_node(op_type, ["x", "scales"], ["y"], mode=mode)
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], name, [info("x", TensorProto.FLOAT, list(IMAGE.shape))],
        [info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    np.save(tmp_path / "x.npy", IMAGE)
    actual = api.load_saved(run(str(path), tmp_path, with_contrib=False), "y")
    reference = ort.run(str(path), {"x": IMAGE})["y"]
    np.testing.assert_allclose(actual, reference, rtol=1e-6, atol=1e-6)
    if mode == "nearest" and all(float(s).is_integer() for s in scales):
        import torch
        import torch.nn.functional as F
        expected = IMAGE
        for axis, scale in enumerate(scales):
            expected = np.repeat(expected, int(scale), axis=axis)
        np.testing.assert_array_equal(actual, expected)
        if scales[:2] == [1, 1]:
            np.testing.assert_array_equal(actual, F.interpolate(
                torch.from_numpy(IMAGE), scale_factor=scales[2:],
                mode="nearest").numpy())


GRID_SAMPLE = [(mode, padding, align)
               for mode in ("bilinear", "nearest", "bicubic")
               for padding in ("zeros", "border", "reflection")
               for align in (0, 1)]


def save_grid_sample(path, x, grid, **attributes):
    """A GridSample model (opset 16) of inputs x and grid, output y."""
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attributes)
    graph = helper.make_graph(
        [node], "grid_sample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT,
                                       grid.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return str(path)


@pytest.mark.parametrize("grid_loops", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("mode,padding,align", GRID_SAMPLE)
def test_grid_sample_matches_pytorch(mode, padding, align, grid_loops,
                                     tmp_path):
    """GridSample against torch's F.grid_sample in every mode, padding mode
    and align_corners, with sample points past the image (reflected twice
    and more), exactly on pixel centres and halfway (nearest rounds half to
    even) and huge coordinates (but for reflection, which torch computes
    through an int conversion that overflows); on the CPU and in the grid
    loops."""
    import torch
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    grid = rng.uniform(-2.7, 2.7, (2, 4, 6, 2)).astype(np.float32)
    grid[0, 0, :3] = [[-1, -1], [1, 1], [0, 0]]
    grid[0, 1, :2] = [[1 / 7, 0.2], [3 / 7, -0.6]]  # halfway (align 0)
    if padding != "reflection":
        # torch reflects through an int conversion that overflows there.
        grid[1, 0, 0] = [1e30, -1e30]
    path = save_grid_sample(tmp_path / "grid_sample.onnx", x, grid,
                            mode=mode, padding_mode=padding,
                            align_corners=align)
    got = api.run_with_inputs(
        path, {"x": x, "grid": grid}, tmp_path,
        args=["--grid-loops"] if grid_loops else [])["y"]
    expected = torch.nn.functional.grid_sample(
        torch.from_numpy(x), torch.from_numpy(grid), mode=mode,
        padding_mode=padding, align_corners=bool(align)).numpy()
    assert got.shape == expected.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_matches_onnx_runtime(mode, tmp_path, needs_ort):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 6, 5)).astype(np.float32)
    grid = rng.uniform(-1.5, 1.5, (1, 3, 4, 2)).astype(np.float32)
    path = save_grid_sample(tmp_path / "grid_sample.onnx", x, grid,
                            mode=mode, padding_mode="reflection")
    got = api.run_with_inputs(path, {"x": x, "grid": grid}, tmp_path)["y"]
    np.testing.assert_allclose(got, ort.run(path, {"x": x, "grid": grid})
                               ["y"], rtol=1e-5, atol=1e-5)
