"""ORTModule's graphs: the org.pytorch.aten ATen nodes it exports (through
symbolics registered as ORTModule registers them) and the gradient graph it
writes for them, with YieldOp between forward and backward, run by amp-run
(onnxg-expand-aten, onnxg-expose-yield) and checked against PyTorch: the
forward of nn.Embedding, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and argmax
as torch.onnx writes them, and a step's gradients against autograd, in FP32
and converted to FP16, which then trains."""

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
    symbolics = {
        "embedding": aten("embedding"),
        "max_pool2d": lambda g, *args: max_pool(g, *args)[0],
        "avg_pool2d": aten("avg_pool2d"),
        "adaptive_avg_pool2d": aten("_adaptive_avg_pool2d"),
        "argmax": aten("argmax"),
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

    def forward(self, ids, image):
        words = self.embedding(ids)
        pooled = F.max_pool2d(self.conv(image), 3, 2, padding=1)
        pooled = F.avg_pool2d(pooled, 2, padding=1, count_include_pad=False)
        pooled = F.adaptive_avg_pool2d(pooled, (1, 1))
        return (words.sum() + pooled.sum(), pooled, torch.argmax(words, 1),
                torch.argmax(words))


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid_loops"])
def test_exported_aten_forward_matches_pytorch(tmp_path, grid,
                                              ortmodule_symbolics):
    """torch.onnx's ATen nodes (constant lists, an empty stride list as an
    empty float tensor, None as a missing input) run as PyTorch computes
    them, on the CPU and in the CUDA backend's kernels."""
    import io
    torch.manual_seed(0)
    module = Features().eval()
    ids = torch.randint(0, 10, (2, 3))
    ids[0, 0] = 0
    image = torch.randn(2, 3, 9, 9)
    buffer = io.BytesIO()
    torch.onnx.export(module, (ids, image), buffer, opset_version=14,
                      input_names=["ids", "image"],
                      output_names=["total", "pooled", "best", "best_flat"],
                      custom_opsets={ATEN: 1})
    model = onnx.load_from_string(buffer.getvalue())
    operators = sorted(helper.get_attribute_value(a).decode()
                       for n in model.graph.node if n.op_type == "ATen"
                       for a in n.attribute if a.name == "operator")
    assert operators == ["_adaptive_avg_pool2d", "argmax", "argmax",
                         "avg_pool2d", "embedding",
                         "max_pool2d_with_indices"], operators
    path = str(tmp_path / "features.onnx")
    onnx.save(model, path)
    out = api.run_with_inputs(
        path, {"ids": ids.numpy(), "image": image.numpy()}, tmp_path,
        args=["--grid-loops"] if grid else [])
    with torch.no_grad():
        expected = module(ids, image)
    for name, value in zip(["total", "pooled", "best", "best_flat"],
                           expected):
        np.testing.assert_allclose(out[name], value.numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)


# The step: embedding (padding_idx 0, scale_grad_by_freq) -> MatMul, and
# image * scale -> MaxPool2d(3, 2, 1) -> AvgPool2d(3, 1, 1, no padding
# counted) -> AdaptiveAvgPool2d(2); the loss a weighted sum of both.
SHAPES = {"ids": [2, 3], "image": [2, 3, 8, 8], "embedding": [10, 4],
          "projection": [4, 4], "scale": [1, 3, 1, 1], "word_weights": [6, 4],
          "pool_weights": [2, 3, 2, 2]}
PARAMETERS = ["embedding", "projection", "scale"]


def ortmodule_step():
    """The step as ORTModule writes it: ATen forward nodes, YieldOp handing
    the loss to PyTorch and returning its gradient, the backward's ATen
    gradients (num_weights as Gather(Shape(weight), 0)), the parameter
    gradients `<param>_grad` as outputs without shapes."""
    make = helper.make_node

    def constant(name, value, dtype=np.int64):
        return make("Constant", [], [name], value=numpy_helper.from_array(
            np.array(value, dtype), name))

    def aten(inputs, outputs, operator):
        return make("ATen", inputs, outputs, domain=ATEN, operator=operator,
                    overload_name="")

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
    outputs = [info(f"{name}_grad", TensorProto.FLOAT, None)
               for name in PARAMETERS]
    graph = helper.make_graph(nodes, "ortmodule_step", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 14), helper.make_opsetid(MS, 1),
        helper.make_opsetid(ATEN, 1)])
    model.ir_version = 8
    return model


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
    pooled = F.max_pool2d(t["image"] * t["scale"], 3, 2, padding=1)
    pooled = F.avg_pool2d(pooled, 3, 1, padding=1, count_include_pad=False)
    pooled = F.adaptive_avg_pool2d(pooled, 2)
    loss = word_loss + (pooled * t["pool_weights"]).sum()
    loss.backward()
    return float(loss), {name: t[name].grad.numpy() for name in PARAMETERS}


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
        "10x4xf32", "4x4xf32", "1x3x1x1xf32"], signature
    assert re.search(r'"ATen".*operator = "max_pool2d_with_indices".* -> '
                     r'\(tensor<2x3x4x4xf32>, tensor<2x3x4x4xi64>\)', text)


def test_ortmodule_step_matches_autograd(tmp_path):
    """One step: the loss YieldOp hands out, and the gradients from a seed
    of ones (amp-run's default for YieldOp's gradients), as autograd's."""
    path, data, params, inputs = save_step(tmp_path)
    out = api.run_with_inputs(path, inputs, tmp_path,
                              args=["--params", params])
    loss, grads = autograd(data)
    assert out.records[0]["loss"] == pytest.approx(loss, rel=1e-5)
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
