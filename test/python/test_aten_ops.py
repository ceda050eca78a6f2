"""ORTModule's graphs: the org.pytorch.aten ATen nodes it exports (through
symbolics registered as ORTModule registers them) and the gradient graph it
writes for them, with YieldOp between forward and backward, run by amp-run
(onnxg-expand-aten, onnxg-expose-yield) and checked against PyTorch: the
forward of nn.Embedding, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, GroupNorm,
nearest interpolation, max, min, argmax, diagonal, unfold, multinomial and
bitwise_or as torch.onnx writes them, and
the gradients of steps with those and BCEWithLogitsLoss against autograd,
in FP32 (also in the CUDA backend's kernels) and converted to FP16, which
then trains."""

import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api

torch = pytest.importorskip("torch")
F = torch.nn.functional

ATEN = "org.pytorch.aten"
MS = "com.microsoft"
AMP_OPT = api.find_amp_opt()
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "..", "shared", "corpus")


@pytest.fixture
def ortmodule_symbolics():
    """The exporter overrides ORTModule registers for these operators (each
    an ATen node naming the operator, its arguments as inputs), removed
    again after the test."""
    from torch.onnx import (register_custom_op_symbolic,
                            unregister_custom_op_symbolic)

    def aten(operator, outputs=1):
        def symbolic(g, *args):
            return g.op(f"{ATEN}::ATen", *args, operator_s=operator,
                        outputs=outputs)
        return symbolic

    max_pool = aten("max_pool2d_with_indices", outputs=2)

    def group_norm(g, x, groups, weight, bias, eps, cudnn_enabled):
        # N, C and HxW from the input's shape, as ORTModule computes them.
        shape = g.op("Shape", x)
        n, c = (g.op("Gather", shape, g.op("Constant", value_t=torch.tensor(
            axis)), axis_i=0) for axis in (0, 1))
        hxw = g.op("Div", g.op("Size", x), g.op("Mul", n, c))
        return g.op(f"{ATEN}::ATen", x, weight, bias, n, c, hxw, groups,
                    g.op("Cast", eps, to_i=1), operator_s="native_group_norm",
                    outputs=3)[0]

    def upsample_nearest2d(g, x, output_size, scale_factors):
        return g.op(f"{ATEN}::ATen", x, output_size, scale_factors,
                    operator_s="upsample_nearest2d", overload_name_s="vec")

    def extreme(name, elementwise):
        def symbolic(g, x, dim_or_y=None, keepdim=None):
            if dim_or_y is None and keepdim is None:
                return g.op(f"{ATEN}::ATen", x, operator_s=name)
            if keepdim is None:
                return g.op(elementwise, x, dim_or_y)
            return g.op(f"{ATEN}::ATen", x, dim_or_y, keepdim, operator_s=name,
                        overload_name_s="dim", outputs=2)
        return symbolic

    symbolics = {
        "embedding": aten("embedding"),
        "max_pool2d": lambda g, *args: max_pool(g, *args)[0],
        "avg_pool2d": aten("avg_pool2d"),
        "adaptive_avg_pool2d": aten("_adaptive_avg_pool2d"),
        "argmax": aten("argmax"),
        "group_norm": group_norm,
        "upsample_nearest2d": upsample_nearest2d,
        "max": extreme("max", "Max"),
        "min": extreme("min", "Min"),
        "diagonal": aten("diagonal"),
        "unfold": aten("unfold"),
        "multinomial": aten("multinomial"),
        "bitwise_or": lambda g, x, y: g.op(
            f"{ATEN}::ATen", x, y, operator_s="bitwise_or",
            overload_name_s="Tensor"),
    }
    for name, symbolic in symbolics.items():
        register_custom_op_symbolic(f"aten::{name}", symbolic, 14)
    yield
    for name in symbolics:
        unregister_custom_op_symbolic(f"aten::{name}", 14)


class Features(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(10, 4, padding_idx=0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 4)

    def forward(self, ids, image):
        words = self.embedding(ids)
        pooled = F.max_pool2d(self.conv(image), 3, 2, padding=1)
        pooled = F.avg_pool2d(pooled, 2, padding=1, count_include_pad=False)
        pooled = F.adaptive_avg_pool2d(pooled, (1, 1))
        features = F.interpolate(self.norm(self.conv(image)), scale_factor=2)
        lowest, where = features.min(dim=1)
        return (words.sum() + pooled.sum(), pooled, torch.argmax(words, 1),
                torch.argmax(words), features.max(), lowest, where,
                features.diagonal(-1, 2, 3), features.unfold(3, 3, 2))


OUTPUTS = ["total", "pooled", "best", "best_flat", "highest", "lowest",
           "where", "diagonal", "windows"]


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid_loops"])
def test_exported_aten_forward_matches_pytorch(tmp_path, grid,
                                              ortmodule_symbolics):
    """torch.onnx's ATen nodes (constant lists, an empty stride list as an
    empty float tensor, None as a missing input) run as PyTorch computes
    them, on the CPU and in the CUDA backend's kernels."""
    import io
    torch.manual_seed(0)
    module = Features().eval()
    with torch.no_grad():
        module.norm.weight.normal_()
        module.norm.bias.normal_()
    ids = torch.randint(0, 10, (2, 3))
    ids[0, 0] = 0
    image = torch.randn(2, 3, 9, 9)
    buffer = io.BytesIO()
    torch.onnx.export(module, (ids, image), buffer, opset_version=14,
                      input_names=["ids", "image"],
                      output_names=OUTPUTS,
                      custom_opsets={ATEN: 1})
    model = onnx.load_from_string(buffer.getvalue())
    operators = sorted(helper.get_attribute_value(a).decode()
                       for n in model.graph.node if n.op_type == "ATen"
                       for a in n.attribute if a.name == "operator")
    assert operators == ["_adaptive_avg_pool2d", "argmax", "argmax",
                         "avg_pool2d", "diagonal", "embedding", "max",
                         "max_pool2d_with_indices", "min",
                         "native_group_norm", "unfold",
                         "upsample_nearest2d"], operators
    path = str(tmp_path / "features.onnx")
    onnx.save(model, path)
    out = api.run_with_inputs(
        path, {"ids": ids.numpy(), "image": image.numpy()}, tmp_path,
        args=["--grid-loops"] if grid else [])
    with torch.no_grad():
        expected = module(ids, image)
    for name, value in zip(OUTPUTS, expected):
        np.testing.assert_allclose(out[name], value.numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)


class Draws(torch.nn.Module):
    def forward(self, weights, a, b):
        return torch.multinomial(weights, 1), torch.bitwise_or(a, b)


def test_exported_draws_and_masks(tmp_path, ortmodule_symbolics):
    """multinomial (one draw without replacement: the same as with) from
    rows of one nonzero weight, which must draw that class, and the Or of
    two masks."""
    import io
    weights = torch.zeros(4, 6)
    classes = torch.tensor([5, 0, 3, 3])
    weights[torch.arange(4), classes] = torch.tensor([0.5, 2.0, 1.0, 3.0])
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    buffer = io.BytesIO()
    torch.onnx.export(Draws(), (weights, a, b), buffer, opset_version=14,
                      input_names=["weights", "a", "b"],
                      output_names=["drawn", "either"],
                      custom_opsets={ATEN: 1})
    model = onnx.load_from_string(buffer.getvalue())
    assert sum(n.op_type == "ATen" for n in model.graph.node) == 2
    path = str(tmp_path / "draws.onnx")
    onnx.save(model, path)
    out = api.run_with_inputs(path, {"weights": weights.numpy(),
                                     "a": a.numpy(), "b": b.numpy()},
                              tmp_path, steps=3)
    np.testing.assert_array_equal(out["drawn"], classes.numpy()[:, None])
    np.testing.assert_array_equal(out["either"], (a | b).numpy())


# The step: embedding (padding_idx 0, scale_grad_by_freq) -> MatMul, and
# image * scale -> MaxPool2d(3, 2, 1) -> AvgPool2d(3, 1, 1, no padding
# counted) -> AdaptiveAvgPool2d(2); the loss a weighted sum of both.
SHAPES = {"ids": [2, 3], "image": [2, 3, 8, 8], "embedding": [10, 4],
          "projection": [4, 4], "scale": [1, 3, 1, 1], "word_weights": [6, 4],
          "pool_weights": [2, 3, 2, 2]}
PARAMETERS = ["embedding", "projection", "scale"]


def constant_node(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(
                                np.array(value, dtype), name))


def aten_node(inputs, outputs, operator, overload=""):
    return helper.make_node("ATen", inputs, outputs, domain=ATEN,
                            operator=operator, overload_name=overload)


def ortmodule_model(nodes, name, inputs, parameters, extra_outputs=()):
    """The model of a step with outputs `<param>_grad` declared without
    shapes, as ORTModule writes them (and `extra_outputs`, pairs of a name
    and an element type)."""
    outputs = [helper.make_tensor_value_info(f"{param}_grad",
                                             TensorProto.FLOAT, None)
               for param in parameters]
    outputs += [helper.make_tensor_value_info(output, element, None)
                for output, element in extra_outputs]
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 14), helper.make_opsetid(MS, 1),
        helper.make_opsetid(ATEN, 1)])
    model.ir_version = 8
    return model


def ortmodule_step():
    """The step as ORTModule writes it: ATen forward nodes, YieldOp handing
    the loss to PyTorch and returning its gradient, the backward's ATen
    gradients (num_weights as Gather(Shape(weight), 0)), the parameter
    gradients `<param>_grad` as outputs without shapes."""
    make, constant, aten = helper.make_node, constant_node, aten_node
    nodes = [
        constant("pad", 0), constant("true", True, np.bool_),
        constant("false", False, np.bool_), constant("k3", [3, 3]),
        constant("s1", [1, 1]), constant("s2", [2, 2]),
        constant("p1", [1, 1]), constant("d1", [1, 1]),
        constant("out2", [2, 2]), constant("flat", [6, 4]),
        constant("unflat", [2, 3, 4]), constant("zero", 0),
        constant("reduced", [0, 2, 3]),
        aten(["embedding", "ids", "pad", "true", "false"], ["words"],
             "embedding"),
        make("Reshape", ["words", "flat"], ["words2"]),
        make("MatMul", ["words2", "projection"], ["projected"]),
        make("Mul", ["projected", "word_weights"], ["weighted_words"]),
        make("ReduceSum", ["weighted_words"], ["word_loss"], keepdims=0),
        make("Mul", ["image", "scale"], ["scaled"]),
        aten(["scaled", "k3", "s2", "p1", "d1", "false"],
             ["maxed", "argmaxes"], "max_pool2d_with_indices"),
        aten(["maxed", "k3", "s1", "p1", "false", "false", ""],
             ["averaged"], "avg_pool2d"),
        aten(["averaged", "out2"], ["adapted"], "_adaptive_avg_pool2d"),
        make("Mul", ["adapted", "pool_weights"], ["weighted_pools"]),
        make("ReduceSum", ["weighted_pools"], ["pool_loss"], keepdims=0),
        make("Add", ["word_loss", "pool_loss"], ["loss"]),
        make("YieldOp", ["loss"], ["loss_grad"], domain=MS,
             full_shape_outputs=[0]),
        make("Mul", ["word_weights", "loss_grad"], ["projected_grad"]),
        aten(["words2"], ["words2_t"], "numpy_T"),
        make("MatMul", ["words2_t", "projected_grad"], ["projection_grad"]),
        make("Transpose", ["projection"], ["projection_t"], perm=[1, 0]),
        make("MatMul", ["projected_grad", "projection_t"], ["words2_grad"]),
        make("Reshape", ["words2_grad", "unflat"], ["words_grad"]),
        make("Shape", ["embedding"], ["embedding_shape"]),
        make("Gather", ["embedding_shape", "zero"], ["rows"], axis=0),
        aten(["words_grad", "ids", "rows", "pad", "true", "false"],
             ["embedding_grad"], "embedding_backward"),
        make("Mul", ["pool_weights", "loss_grad"], ["adapted_grad"]),
        aten(["adapted_grad", "averaged"], ["averaged_grad"],
             "_adaptive_avg_pool2d_backward"),
        aten(["averaged_grad", "maxed", "k3", "s1", "p1", "false", "false",
              ""], ["maxed_grad"], "avg_pool2d_backward"),
        aten(["maxed_grad", "scaled", "k3", "s2", "p1", "d1", "false",
              "argmaxes"], ["scaled_grad"],
             "max_pool2d_with_indices_backward"),
        make("Mul", ["scaled_grad", "image"], ["scale_terms"]),
        make("ReduceSum", ["scale_terms", "reduced"], ["scale_grad"],
             keepdims=1),
    ]
    info = helper.make_tensor_value_info
    inputs = [info("ids", TensorProto.INT64, SHAPES["ids"])] + [
        info(name, TensorProto.FLOAT, SHAPES[name]) for name in SHAPES
        if name != "ids"]
    # The max pool's indices come out too: PyTorch's, within each plane.
    return ortmodule_model(nodes, "ortmodule_step", inputs, PARAMETERS,
                           [("argmaxes", TensorProto.INT64)])


def step_data():
    rng = np.random.default_rng(3)
    ids = np.array([[0, 4, 4], [7, 0, 2]], np.int64)
    data = {"ids": ids}
    for name in SHAPES:
        if name != "ids":
            data[name] = rng.standard_normal(SHAPES[name]).astype(np.float32)
    return data


def autograd(data):
    """The loss and the parameter gradients PyTorch computes."""
    t = {name: torch.tensor(value) for name, value in data.items()}
    for name in PARAMETERS:
        t[name].requires_grad_(True)
    words = F.embedding(t["ids"], t["embedding"], padding_idx=0,
                        scale_grad_by_freq=True)
    word_loss = ((words.reshape(6, 4) @ t["projection"])
                 * t["word_weights"]).sum()
    pooled, argmaxes = F.max_pool2d(t["image"] * t["scale"], 3, 2,
                                    padding=1, return_indices=True)
    pooled = F.avg_pool2d(pooled, 3, 1, padding=1, count_include_pad=False)
    pooled = F.adaptive_avg_pool2d(pooled, 2)
    loss = word_loss + (pooled * t["pool_weights"]).sum()
    loss.backward()
    grads = {name: t[name].grad.numpy() for name in PARAMETERS}
    grads["argmaxes"] = argmaxes.numpy()
    return float(loss), grads


def save_step(tmp_path):
    path = str(tmp_path / "ortmodule_step.onnx")
    onnx.save(ortmodule_step(), path)
    data = step_data()
    params = str(tmp_path / "params.npz")
    np.savez(params, **{name: data[name] for name in PARAMETERS})
    inputs = {name: value for name, value in data.items()
              if name not in PARAMETERS}
    return path, data, params, inputs


def test_ortmodule_step_is_typed_at_import(tmp_path):
    """The ATen outputs are typed (embedding_backward's rows from the
    weight's shape), so the parameter gradients, declared without shapes,
    are static."""
    path, _, _, _ = save_step(tmp_path)
    text = subprocess.run([AMP_OPT, path, "--mlir-print-debuginfo=false"],
                          capture_output=True, text=True, check=True).stdout
    signature = re.search(r"func\.func @main\(.*\) -> \((.*)\) attributes",
                          text).group(1)
    assert re.findall(r"tensor<([^>]*)>", signature) == [
        "10x4xf32", "4x4xf32", "1x3x1x1xf32", "2x3x4x4xi64"], signature
    assert re.search(r'"ATen".*operator = "max_pool2d_with_indices".* -> '
                     r'\(tensor<2x3x4x4xf32>, tensor<2x3x4x4xi64>\)', text)


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid_loops"])
def test_ortmodule_step_matches_autograd(tmp_path, grid):
    """One step: the loss YieldOp hands out, and the gradients from a seed
    of ones (amp-run's default for YieldOp's gradients), as autograd's, on
    the CPU and in the CUDA backend's kernels."""
    path, data, params, inputs = save_step(tmp_path)
    out = api.run_with_inputs(path, inputs, tmp_path,
                              args=["--params", params,
                                    *(["--grid-loops"] if grid else [])])
    loss, grads = autograd(data)
    assert out.records[0]["loss"] == pytest.approx(loss, rel=1e-5)
    np.testing.assert_array_equal(out["argmaxes"], grads["argmaxes"])
    for name in PARAMETERS:
        np.testing.assert_allclose(out[f"{name}_grad"], grads[name],
                                   rtol=1e-4, atol=1e-5, err_msg=name)
    # The padding row gets nothing; index 4, used twice, its mean.
    assert not out["embedding_grad"][0].any()
    assert out["embedding_grad"][4].any()


def test_ortmodule_step_trains_in_fp16(tmp_path):
    """Converted to FP16 (the MatMuls forced): dynamic loss scaling backs
    off from 65536 until the FP16 backward is finite, the gradients are then
    near autograd's, and SGD on them lowers the loss."""
    path, data, params, inputs = save_step(tmp_path)
    fp16 = "precision=fp16 op-class=MatMul:always"
    out = api.run_with_inputs(path, inputs, tmp_path / "fp16", steps=12,
                              amp_pipeline=fp16, args=["--params", params])
    last = out.records[-1]
    assert not last["skipped"] and last["loss_scale"] < 65536, out.records
    _, grads = autograd(data)
    for name in PARAMETERS:
        np.testing.assert_allclose(out[f"{name}_grad"], grads[name],
                                   rtol=2e-2, atol=2e-2, err_msg=name)
    records, stderr = api.train(
        path, 20, amp_pipeline=fp16,
        args=["--params", params, "--sgd-lr", "0.05",
              *(f"--input={name}={file}"
                for name, file in save_inputs(tmp_path, inputs))])
    converted = re.search(r"amp: (\d+) of \d+ ops in fp16", stderr)
    assert converted and int(converted.group(1)) > 0, stderr
    assert "seed inputs (loss_grad) are ones" in stderr, stderr
    losses = [r["loss"] for r in records]
    assert losses[-1] < losses[0] - 1, losses


def save_inputs(tmp_path, inputs):
    pairs = []
    for name, value in inputs.items():
        file = str(tmp_path / f"{name}.npy")
        np.save(file, value)
        pairs.append((name, file))
    return pairs


def test_yield_gradient_can_be_given(tmp_path):
    """YieldOp's gradient is an input named as its output: --input gives
    PyTorch's (here 2: every gradient doubles)."""
    path, data, params, inputs = save_step(tmp_path)
    inputs["loss_grad"] = np.array(2, np.float32)
    out = api.run_with_inputs(path, inputs, tmp_path,
                              args=["--params", params])
    _, grads = autograd(data)
    np.testing.assert_allclose(out["projection_grad"],
                               2 * grads["projection"], rtol=1e-4, atol=1e-5)


# The second step: image * scale -> GroupNorm(2) -> nearest upsampling by
# 2 -> max over the channels and min of all; the loss a weighted sum.
NORM_SHAPES = {"image": [2, 4, 3, 3], "scale": [1, 4, 1, 1],
               "norm.weight": [4], "norm.bias": [4],
               "channel_weights": [2, 6, 6], "min_weight": []}
NORM_PARAMETERS = ["scale", "norm.weight", "norm.bias"]


def ortmodule_norm_step():
    """As ORTModule writes it: native_group_norm (N, C and HxW computed from
    the shape), upsample_nearest2d (overload vec) by scale factors, max over
    a dim (overload dim) and min; in the backward
    value_selecting_reduction_backward with the shape of its input, the
    min's gradient shared among the minima (ONNX nodes, as ORTModule's
    gradient of min writes them), upsample_nearest2d_backward with the
    sizes sliced from shapes, native_group_norm_backward."""
    make, constant, aten = helper.make_node, constant_node, aten_node
    nodes = [
        constant("zero", 0), constant("one", 1), constant("groups", 2),
        constant("eps", 1e-5, np.float32), constant("false", False, np.bool_),
        constant("factors", [2.0, 2.0], np.float32),
        constant("mask", [True, True, True], np.bool_),
        constant("spatial_start", [2]), constant("spatial_end", [4]),
        constant("reduced", [0, 2, 3]),
        constant("one_f", 1.0, np.float32), constant("zero_f", 0.0, np.float32),
        make("Mul", ["image", "scale"], ["scaled"]),
        make("Shape", ["scaled"], ["scaled_shape"]),
        make("Size", ["scaled"], ["size"]),
        make("Gather", ["scaled_shape", "zero"], ["n"], axis=0),
        make("Gather", ["scaled_shape", "one"], ["c"], axis=0),
        make("Mul", ["n", "c"], ["nc"]),
        make("Div", ["size", "nc"], ["hxw"]),
        aten(["scaled", "norm.weight", "norm.bias", "n", "c", "hxw",
              "groups", "eps"], ["normed", "mean", "rstd"],
             "native_group_norm"),
        aten(["normed", "", "factors"], ["upsampled"], "upsample_nearest2d",
             "vec"),
        aten(["upsampled", "one", "false"], ["highest", "where"], "max",
             "dim"),
        aten(["upsampled"], ["lowest"], "min"),
        make("Mul", ["highest", "channel_weights"], ["weighted"]),
        make("ReduceSum", ["weighted"], ["channel_loss"], keepdims=0),
        make("Mul", ["lowest", "min_weight"], ["min_loss"]),
        make("Add", ["channel_loss", "min_loss"], ["loss"]),
        make("YieldOp", ["loss"], ["loss_grad"], domain=MS,
             full_shape_outputs=[0]),
        make("Mul", ["channel_weights", "loss_grad"], ["highest_grad"]),
        make("Shape", ["upsampled"], ["upsampled_shape"]),
        aten(["highest_grad", "one", "where", "upsampled_shape", "false"],
             ["from_highest"], "value_selecting_reduction_backward"),
        make("Equal", ["upsampled", "lowest"], ["is_lowest"]),
        make("Where", ["is_lowest", "one_f", "zero_f"], ["lowest_mask"]),
        make("ReduceSum", ["lowest_mask"], ["lowest_count"], keepdims=0),
        make("Mul", ["min_weight", "loss_grad"], ["lowest_grad"]),
        make("Div", ["lowest_grad", "lowest_count"], ["lowest_share"]),
        make("Mul", ["lowest_mask", "lowest_share"], ["from_lowest"]),
        make("Add", ["from_highest", "from_lowest"], ["upsampled_grad"]),
        make("Shape", ["normed"], ["normed_shape"]),
        make("Slice", ["upsampled_shape", "spatial_start", "spatial_end"],
             ["output_size"]),
        aten(["upsampled_grad", "output_size", "normed_shape", "", ""],
             ["normed_grad"], "upsample_nearest2d_backward"),
        aten(["normed_grad", "scaled", "mean", "rstd", "norm.weight", "n",
              "c", "hxw", "groups", "mask"],
             ["scaled_grad", "norm.weight_grad", "norm.bias_grad"],
             "native_group_norm_backward"),
        make("Mul", ["scaled_grad", "image"], ["scale_terms"]),
        make("ReduceSum", ["scale_terms", "reduced"], ["scale_grad"],
             keepdims=1),
    ]
    info = helper.make_tensor_value_info
    inputs = [info(name, TensorProto.FLOAT, shape)
              for name, shape in NORM_SHAPES.items()]
    return ortmodule_model(nodes, "ortmodule_norm_step", inputs,
                           NORM_PARAMETERS)


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid_loops"])
def test_ortmodule_norm_step_matches_autograd(tmp_path, grid):
    path = str(tmp_path / "norm_step.onnx")
    onnx.save(ortmodule_norm_step(), path)
    rng = np.random.default_rng(5)
    data = {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in NORM_SHAPES.items()}
    params = str(tmp_path / "params.npz")
    np.savez(params, **{name: data[name] for name in NORM_PARAMETERS})
    out = api.run_with_inputs(
        path, {name: value for name, value in data.items()
               if name not in NORM_PARAMETERS}, tmp_path,
        args=["--params", params, *(["--grid-loops"] if grid else [])])
    t = {name: torch.tensor(value, requires_grad=name in NORM_PARAMETERS)
         for name, value in data.items()}
    normed = F.group_norm(t["image"] * t["scale"], 2, t["norm.weight"],
                          t["norm.bias"], 1e-5)
    upsampled = F.interpolate(normed, scale_factor=2.0)
    loss = ((upsampled.max(dim=1).values * t["channel_weights"]).sum()
            + upsampled.min() * t["min_weight"])
    loss.backward()
    assert out.records[0]["loss"] == pytest.approx(float(loss), rel=1e-5)
    for name in NORM_PARAMETERS:
        np.testing.assert_allclose(out[f"{name}_grad"], t[name].grad.numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("reduction,positive", [(1, True), (2, False),
                                                (0, True)],
                         ids=["mean", "sum", "none"])
def test_ortmodule_bce_step_matches_autograd(tmp_path, reduction, positive):
    """BCEWithLogitsLoss as (older) ORTModule exports it, an ATen
    binary_cross_entropy_with_logits after a MatMul, and its ATen gradient;
    YieldOp's seed is ones (for reduction none: the gradient of the sum)."""
    make, constant, aten = helper.make_node, constant_node, aten_node
    weights = "pos_weight" if positive else ""
    nodes = [
        constant("reduction", reduction),
        make("MatMul", ["features", "weight"], ["logits"]),
        aten(["logits", "target", "", weights, "reduction"], ["loss"],
             "binary_cross_entropy_with_logits"),
        make("YieldOp", ["loss"], ["loss_grad"], domain=MS,
             full_shape_outputs=[0]),
        aten(["loss_grad", "logits", "target", "", weights, "reduction"],
             ["logits_grad"], "binary_cross_entropy_with_logits_backward"),
        make("Transpose", ["features"], ["features_t"], perm=[1, 0]),
        make("MatMul", ["features_t", "logits_grad"], ["weight_grad"]),
    ]
    info = helper.make_tensor_value_info
    inputs = [info("features", TensorProto.FLOAT, [4, 5]),
              info("weight", TensorProto.FLOAT, [5, 3]),
              info("target", TensorProto.FLOAT, [4, 3]),
              info("pos_weight", TensorProto.FLOAT, [3])]
    path = str(tmp_path / "bce_step.onnx")
    onnx.save(ortmodule_model(nodes, "bce_step", inputs, ["weight"]), path)
    rng = np.random.default_rng(7)
    data = {"features": rng.standard_normal((4, 5)).astype(np.float32),
            "weight": rng.standard_normal((5, 3)).astype(np.float32),
            "target": (rng.random((4, 3)) > 0.5).astype(np.float32),
            "pos_weight": rng.random(3).astype(np.float32) + 0.5}
    out = api.run_with_inputs(path, data, tmp_path)
    t = {name: torch.tensor(value) for name, value in data.items()}
    t["weight"].requires_grad_(True)
    loss = F.binary_cross_entropy_with_logits(
        t["features"] @ t["weight"], t["target"],
        pos_weight=t["pos_weight"] if positive else None,
        reduction=["none", "mean", "sum"][reduction])
    loss.sum().backward()
    np.testing.assert_allclose(out["loss"], loss.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(out["weight_grad"], t["weight"].grad.numpy(),
                               rtol=1e-4, atol=1e-6)


def test_ortmodule_window_step_matches_autograd(tmp_path):
    """Tensor.diagonal and Tensor.unfold as ORTModule exports them, and their
    ATen gradients diagonal_backward and unfold_backward (sizes from
    Shape(x))."""
    make, constant, aten = helper.make_node, constant_node, aten_node
    nodes = [
        constant("offset", 1), constant("one", 1), constant("two", 2),
        constant("reduced", [0, 2]),
        make("Mul", ["data", "scale"], ["x"]),
        aten(["x", "offset", "one", "two"], ["diagonal"], "diagonal"),
        aten(["x", "one", "two", "two"], ["windows"], "unfold"),
        make("Mul", ["diagonal", "diagonal_weights"], ["weighted_diagonal"]),
        make("ReduceSum", ["weighted_diagonal"], ["diagonal_loss"],
             keepdims=0),
        make("Mul", ["windows", "window_weights"], ["weighted_windows"]),
        make("ReduceSum", ["weighted_windows"], ["window_loss"], keepdims=0),
        make("Add", ["diagonal_loss", "window_loss"], ["loss"]),
        make("YieldOp", ["loss"], ["loss_grad"], domain=MS,
             full_shape_outputs=[0]),
        make("Shape", ["x"], ["x_shape"]),
        make("Mul", ["diagonal_weights", "loss_grad"], ["diagonal_grad"]),
        aten(["diagonal_grad", "x_shape", "offset", "one", "two"],
             ["from_diagonal"], "diagonal_backward"),
        make("Mul", ["window_weights", "loss_grad"], ["windows_grad"]),
        aten(["windows_grad", "x_shape", "one", "two", "two"],
             ["from_windows"], "unfold_backward"),
        make("Add", ["from_diagonal", "from_windows"], ["x_grad"]),
        make("Mul", ["x_grad", "data"], ["scale_terms"]),
        make("ReduceSum", ["scale_terms", "reduced"], ["scale_grad"],
             keepdims=1),
    ]
    shapes = {"data": [2, 5, 4], "scale": [1, 5, 1],
              "diagonal_weights": [2, 3], "window_weights": [2, 2, 4, 2]}
    info = helper.make_tensor_value_info
    inputs = [info(name, TensorProto.FLOAT, shape)
              for name, shape in shapes.items()]
    path = str(tmp_path / "window_step.onnx")
    onnx.save(ortmodule_model(nodes, "window_step", inputs, ["scale"]), path)
    rng = np.random.default_rng(9)
    data = {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in shapes.items()}
    out = api.run_with_inputs(path, data, tmp_path)
    t = {name: torch.tensor(value) for name, value in data.items()}
    t["scale"].requires_grad_(True)
    x = t["data"] * t["scale"]
    loss = ((x.diagonal(1, 1, 2) * t["diagonal_weights"]).sum()
            + (x.unfold(1, 2, 2) * t["window_weights"]).sum())
    loss.backward()
    assert out.records[0]["loss"] == pytest.approx(float(loss), rel=1e-5)
    np.testing.assert_allclose(out["scale_grad"], t["scale"].grad.numpy(),
                               rtol=1e-4, atol=1e-5)


def int64s(name, values):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.INT64, [len(values)] if isinstance(values, list)
        else [], values if isinstance(values, list) else [values]))


MALFORMED = {
    "no_outputs": ([aten_node(["x", "x"], [], "bitwise_or", "Tensor"),
                    helper.make_node("Identity", ["x"], ["y"])],
                   "ATen 'bitwise_or': has no outputs"),
    "no_inputs": ([aten_node([], ["y"], "embedding")],
                  "needs a static 2-D weight and ranked indices"),
    "no_sizes": ([aten_node(["x", "", ""], ["y"], "upsample_nearest2d",
                            "vec")],
                 "needs constant output sizes or scale factors"),
    "zero_stride": ([int64s("k", [2, 2]), int64s("s", [0, 0]),
                     aten_node(["x", "k", "s", "s", "k", ""], ["y", "i"],
                               "max_pool2d_with_indices")],
                    "needs positive strides and kernel sizes"),
    "negative_window": ([int64s("d", 1), int64s("n", -3),
                         aten_node(["x", "d", "n", "d"], ["y"], "unfold")],
                        "a size within it and a positive step"),
    "unknown": ([aten_node(["x"], ["y"], "upsample_bilinear2d", "vec")],
                "overload 'vec' has no expansion"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_aten_nodes_are_errors(tmp_path, case):
    """ATen nodes without outputs, inputs, sizes, with a zero stride, a
    negative window or an unknown operator: amp-run stops with one error
    that names the node, exit status 1 (no crash, in the import's typing
    either)."""
    nodes, message = MALFORMED[case]
    graph = helper.make_graph(
        nodes, case, [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(ATEN, 1)])
    model.ir_version = 8
    path = str(tmp_path / f"{case}.onnx")
    onnx.save(model, path)
    proc = subprocess.run([api.find_tool("amp-run"), path, "--steps", "1"],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines()
              if "error:" in line and "(ATen)" in line]
    assert len(errors) == 1 and message in errors[0], proc.stderr


def test_corpus_ortmodule_graph_runs(tmp_path):
    """ORTModule's recompute_gelu.onnx (an MLP whose logits YieldOp hands
    out) runs: the logits come out, their gradient is the seed of ones, and
    fc2.bias's gradient is then the batch size in every class."""
    found = [os.path.join(root, name) for root, _, names in os.walk(CORPUS)
             for name in names if name == "recompute_gelu.onnx"]
    if not found:
        pytest.skip("../shared/corpus is absent")
    out = api.run_with_inputs(found[0], {}, tmp_path,
                              args=["--dim", "input1_dim0=3",
                                    "--dim", "input1_dim1=784"])
    assert out["data"].shape == (3, 10)
    np.testing.assert_allclose(out["_original_module.fc2.bias_grad"],
                               np.full(10, 3.0))
