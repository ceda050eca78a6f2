"""Models with local functions (ModelProto.functions), which torch.onnx
writes with export_modules_as_functions and onnxscript-based exporters
write for modules and aten ops: the importer inlines them
(lib/Target/ONNX/InlineFunctions.cpp), so they run, convert and export as
the flat graph does."""
import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
from onnx import helper

from amp_opt import api, export_training_step, ort
from amp_opt.numerics import FORCED


class Block(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.fc = nn.Linear(size, size)
        self.norm = nn.LayerNorm(size)

    def forward(self, x):
        return x + torch.relu(self.norm(self.fc(x)))


class Blocks(nn.Module):
    def __init__(self, size=256, classes=10):
        super().__init__()
        self.blocks = nn.Sequential(Block(size), Block(size))
        self.head = nn.Linear(size, classes)

    def forward(self, x):
        return self.head(self.blocks(x))


def test_module_functions_match_onnx_runtime(tmp_path, needs_ort):
    """torch.onnx's export_modules_as_functions (a function per module
    class, nested): amp-run computes ONNX Runtime's output; the FP16
    pipeline converts the inlined GEMMs, and its file (no functions left)
    runs in ONNX Runtime within FP16's rounding."""
    torch.manual_seed(0)
    model = Blocks().eval()
    x = torch.randn(64, 256)
    path = str(tmp_path / "functions.onnx")
    torch.onnx.export(model, (x,), path, opset_version=17,
                      input_names=["x"], export_modules_as_functions=True)
    exported = onnx.load(path)
    assert len(exported.functions) >= 3
    # torch 1.13 keeps its own output name with functions.
    output = exported.graph.output[0].name
    np.save(tmp_path / "x.npy", x.numpy())
    api.train(path, 1, args=["--input", f"x={tmp_path / 'x.npy'}",
                             "--save-outputs", str(tmp_path / "out")])
    got = api.load_saved(tmp_path / "out", output)
    reference = ort.run(path, {"x": x.numpy()})[output]
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-4,
                               atol=1e-4)

    converted, report = api.convert(path, "fp16",
                                    op_class=FORCED.split("=", 1)[1])
    assert not converted.functions
    gemms = [d for d in report["decisions"] if d["op_type"] == "Gemm"]
    assert len(gemms) == 3 and all(d["precision"] == "f16" for d in gemms)
    converted_path = str(tmp_path / "fp16.onnx")
    onnx.save(converted, converted_path)
    low = ort.run(converted_path, {"x": x.numpy()})[output]
    assert not np.array_equal(low, reference)
    np.testing.assert_allclose(low, reference, rtol=2e-2, atol=2e-2)


def wrap_in_function(model):
    """`model` with its whole graph moved into one local function that the
    graph calls once: the initializers become the call's inputs."""
    graph = model.graph
    inputs = [i.name for i in graph.input] + [
        t.name for t in graph.initializer
        if t.name not in {i.name for i in graph.input}]
    outputs = [o.name for o in graph.output]
    function = helper.make_function(
        "wrapped", "Step", inputs, outputs, list(graph.node),
        list(model.opset_import))
    wrapped = onnx.ModelProto()
    wrapped.CopyFrom(model)
    del wrapped.graph.node[:]
    wrapped.graph.node.append(helper.make_node(
        "Step", inputs, outputs, name="step", domain="wrapped"))
    wrapped.opset_import.append(helper.make_opsetid("wrapped", 1))
    wrapped.functions.append(function)
    return wrapped


@pytest.mark.parametrize("precision", [None, "fp16"])
def test_training_step_inside_a_function_trains_as_flat(precision, tmp_path):
    """A whole training step (exported the plain way, no metadata) inside
    one local function: after inlining, the analysis finds the loss, the
    gradients and the updates from the dataflow, and amp-run's losses equal
    the flat step's, in FP32 and through the FP16 pipeline."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
    x, target = torch.randn(128, 256), torch.randn(128, 10)
    flat = str(tmp_path / "flat.onnx")
    export_training_step(model, (x,), (target,), nn.functional.mse_loss,
                         flat, lr=0.05, plain="suffix_new")
    wrapped = str(tmp_path / "wrapped.onnx")
    onnx.save(wrap_in_function(onnx.load(flat)), wrapped)
    pipeline = None if precision is None else f"precision=fp16 {FORCED}"
    flat_run, _ = api.train(flat, 10, amp_pipeline=pipeline)
    wrapped_run, _ = api.train(wrapped, 10, amp_pipeline=pipeline)
    losses = [r["loss"] for r in flat_run]
    assert [r["loss"] for r in wrapped_run] == losses
    assert losses[-1] < losses[0]
    if precision:
        assert wrapped_run[0]["loss_scale"] > 1
