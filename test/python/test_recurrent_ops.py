"""ONNX's RNN, GRU and LSTM through amp-run (onnxg-expand-recurrent unrolls
them into MatMuls and gates), against ONNX Runtime on random weights with
every attribute, on the CPU and in the CUDA backend's grid loops; the
recurrent layers torch.onnx exports, against PyTorch; and the FP16
pipeline on them."""
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from amp_opt import api, ort

GRID_LOOPS = ["--grid-loops", "--reverse-grid-loops"]
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def recurrent_model(op, steps, batch, size, hidden, attrs, inputs, opset,
                    rng):
    """A model of one `op` node whose `inputs` (a subset of B,
    sequence_lens, initial_h, initial_c, P) are fed with X, W and R;
    returns it and the feeds."""
    directions = 2 if attrs.get("direction") == "bidirectional" else 1
    gates = GATES[op]
    layout = attrs.get("layout", 0)
    x_shape = [steps, batch, size] if layout == 0 else [batch, steps, size]
    state_shape = ([directions, batch, hidden] if layout == 0
                   else [batch, directions, hidden])
    shapes = {
        "X": x_shape, "W": [directions, gates * hidden, size],
        "R": [directions, gates * hidden, hidden],
        "B": [directions, 2 * gates * hidden], "sequence_lens": [batch],
        "initial_h": state_shape, "initial_c": state_shape,
        "P": [directions, 3 * hidden]}
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + (
        ["initial_c", "P"] if op == "LSTM" else [])
    names = [name if name in ("X", "W", "R") or name in inputs else ""
             for name in order]
    while names[-1] == "":
        names.pop()
    feeds = {}
    for name in names:
        if name == "sequence_lens":
            feeds[name] = np.asarray(inputs[name], np.int32)
        elif name:
            feeds[name] = (rng.standard_normal(shapes[name]) *
                           (0.5 if name in "WRBP" else 1)).astype(np.float32)
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, hidden_size=hidden, **attrs)
    y_shape = ([steps, directions, batch, hidden] if layout == 0
               else [batch, steps, directions, hidden])
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], op.lower(),
        [info(name, TensorProto.INT32 if name == "sequence_lens"
              else TensorProto.FLOAT, value.shape)
         for name, value in feeds.items()],
        [info("Y", TensorProto.FLOAT, y_shape)] +
        [info(name, TensorProto.FLOAT, state_shape) for name in outputs[1:]])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model, feeds


def run_amp(path, feeds, outputs, tmp_path, extra=()):
    """amp-run's outputs of `path` on `feeds`, as {name: array}."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = ["--save-outputs", str(tmp_path / "out"), *extra]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    api.train(str(path), 1, args=args)
    return {name: api.load_saved(str(tmp_path / "out"), name)
            for name in outputs}


def optional(*names, sequence_lens=None):
    """The optional inputs of a case: {name: lengths or None}."""
    chosen = dict.fromkeys(names)
    if sequence_lens is not None:
        chosen["sequence_lens"] = sequence_lens
    return chosen


# (op, attributes, optional inputs, opset): each attribute the expansion
# handles, alone or combined.
CASES = {
    "lstm_defaults": ("LSTM", {}, optional(), 14),
    "lstm_bias_states": ("LSTM", {},
                         optional("B", "initial_h", "initial_c"), 14),
    "lstm_bidirectional_peepholes_lengths": (
        "LSTM", {"direction": "bidirectional"},
        optional("B", "P", "initial_h", "initial_c",
                 sequence_lens=[5, 3, 1]), 14),
    "lstm_reverse_clip_input_forget": (
        "LSTM", {"direction": "reverse", "clip": 0.7, "input_forget": 1},
        optional("B", "P"), 14),
    "lstm_batch_first": (
        "LSTM", {"layout": 1, "direction": "bidirectional"},
        optional("B", "initial_h", "initial_c", sequence_lens=[2, 5, 4]), 14),
    "lstm_activations": (
        "LSTM", {"activations": ["HardSigmoid", "Elu", "Softsign"],
                 "activation_alpha": [0.3, 0.8], "activation_beta": [0.4]},
        optional("B"), 14),
    "lstm_clip_opset_10": ("LSTM", {"clip": 0.5}, optional("B"), 10),
    "gru_defaults": ("GRU", {}, optional(), 14),
    "gru_bias_state": ("GRU", {}, optional("B", "initial_h"), 14),
    "gru_linear_before_reset": (
        "GRU", {"linear_before_reset": 1, "direction": "bidirectional"},
        optional("B", "initial_h", sequence_lens=[4, 5, 2]), 14),
    "gru_linear_before_reset_no_state": (
        "GRU", {"linear_before_reset": 1}, optional("B"), 14),
    "gru_reverse_clip_batch_first": (
        "GRU", {"direction": "reverse", "clip": 1.0, "layout": 1},
        optional("B", sequence_lens=[3, 5, 5]), 14),
    "gru_activations": (
        "GRU", {"activations": ["Sigmoid", "LeakyRelu"],
                "activation_alpha": [0.2]}, optional("B"), 14),
    "rnn_defaults": ("RNN", {}, optional(), 14),
    "rnn_relu_bidirectional": (
        "RNN", {"activations": ["Relu", "Tanh"],
                "direction": "bidirectional"},
        optional("B", "initial_h", sequence_lens=[1, 5, 3]), 14),
    "rnn_affine": ("RNN", {"activations": ["Affine"],
                           "activation_alpha": [0.5],
                           "activation_beta": [0.1]}, optional("B"), 14),
    "rnn_scaled_tanh": ("RNN", {"activations": ["ScaledTanh"],
                                "activation_alpha": [1.5],
                                "activation_beta": [0.5]}, optional("B"), 14),
    "rnn_thresholded_relu": ("RNN", {"activations": ["ThresholdedRelu"],
                                     "activation_alpha": [0.2]},
                             optional("B"), 14),
    "rnn_softplus_batch_first": ("RNN", {"activations": ["Softplus"],
                                         "layout": 1},
                                 optional("B", "initial_h"), 14),
}


def onnx_runtime_reference(model, feeds, tmp_path):
    """ONNX Runtime's outputs of `model`. Its CPU kernels refuse layout 1
    (batch first): that case runs as layout 0 on transposed inputs, and
    its outputs are transposed back."""
    node = model.graph.node[0]
    layout = next((attr.i for attr in node.attribute
                   if attr.name == "layout"), 0)
    if layout == 0:
        path = tmp_path / "model.onnx"
        return ort.run(str(path), feeds)
    batch_first = onnx.ModelProto()
    batch_first.CopyFrom(model)
    node = batch_first.graph.node[0]
    kept = [attr for attr in node.attribute if attr.name != "layout"]
    del node.attribute[:]
    node.attribute.extend(kept)
    for value in (list(batch_first.graph.input) +
                  list(batch_first.graph.output)):
        dims = value.type.tensor_type.shape.dim
        if value.name in ("X", "initial_h", "initial_c", "Y_h", "Y_c"):
            dims[0].dim_value, dims[1].dim_value = (dims[1].dim_value,
                                                    dims[0].dim_value)
        elif value.name == "Y":
            sizes = [dim.dim_value for dim in dims]
            for dim, size in zip(dims, [sizes[i] for i in (1, 2, 0, 3)]):
                dim.dim_value = size
    path = tmp_path / "layout0.onnx"
    onnx.save(batch_first, str(path))
    swapped = {name: value.swapaxes(0, 1)
               if name in ("X", "initial_h", "initial_c") else value
               for name, value in feeds.items()}
    outputs = ort.run(str(path), swapped)
    return {name: value.transpose(2, 0, 1, 3) if name == "Y"
            else value.swapaxes(0, 1) for name, value in outputs.items()}


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnx_runtime(case, grid, tmp_path, needs_ort):
    op, attrs, inputs, opset = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    model, feeds = recurrent_model(op, 5, 3, 4, 6, attrs, inputs, opset, rng)
    onnx.checker.check_model(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    outputs = [output.name for output in model.graph.output]
    got = run_amp(path, feeds, outputs, tmp_path,
                  GRID_LOOPS if grid else ())
    expected = onnx_runtime_reference(model, feeds, tmp_path)
    for name in outputs:
        assert got[name].shape == expected[name].shape, name
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5,
                                   atol=1e-5, err_msg=name)
    if "sequence_lens" in inputs:
        # Steps past a sequence's end output zeros; the test would not
        # see a wrong mask if every sequence were full.
        lengths = feeds["sequence_lens"]
        assert lengths.min() < 5
        y = got["Y"] if attrs.get("layout", 0) == 0 else \
            got["Y"].transpose(1, 2, 0, 3)
        for b, length in enumerate(lengths):
            assert np.all(y[length:, :, b] == 0)
            assert np.any(y[:length, :, b] != 0)


class Recurrent(torch.nn.Module):
    """A stack of torch's recurrent layers, as models use them."""

    def __init__(self, kind):
        super().__init__()
        torch.manual_seed(0)
        if kind == "lstm":
            self.layer = torch.nn.LSTM(6, 8, num_layers=2, batch_first=True,
                                       bidirectional=True)
        elif kind == "gru":
            self.layer = torch.nn.GRU(6, 8, num_layers=2)
        else:
            self.layer = torch.nn.RNN(6, 8, nonlinearity="relu",
                                      bidirectional=True)

    def forward(self, x):
        y, _ = self.layer(x)
        return y


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_torch_export_matches_pytorch(kind, tmp_path):
    """torch.onnx writes nn.LSTM, nn.GRU and nn.RNN as one node per layer
    (with its own gate order, Slice and Squeeze around)."""
    module = Recurrent(kind).eval()
    x = torch.randn(4, 7, 6)
    path = tmp_path / f"{kind}.onnx"
    torch.onnx.export(module, (x,), str(path), input_names=["x"],
                      output_names=["y"], opset_version=14)
    ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert kind.upper() in ops, ops
    got = run_amp(path, {"x": x.numpy()}, ["y"], tmp_path)["y"]
    with torch.no_grad():
        expected = module(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_fp16_pipeline_converts_lstm(tmp_path):
    """The cost model sends an LSTM of realistic size to FP16 (its GEMMs;
    the expansion keeps the gates in FP32): the converted model feeds it
    FP16, and amp-run's result stays within FP16's error of the FP32 one
    without being it."""
    torch.manual_seed(0)
    module = torch.nn.LSTM(128, 256, num_layers=2, batch_first=True,
                           bidirectional=True).eval()
    x = torch.randn(32, 16, 128)
    path = tmp_path / "lstm.onnx"
    torch.onnx.export(module, (x,), str(path), input_names=["x"],
                      output_names=["y", "h", "c"], opset_version=14)
    converted, report = api.convert(str(path), "fp16")
    decisions = [d for d in report["decisions"] if d["op_type"] == "LSTM"]
    assert [d["precision"] for d in decisions] == ["f16", "f16"], decisions
    lstms = [node for node in converted.graph.node if node.op_type == "LSTM"]
    producers = {output: node for node in converted.graph.node
                 for output in node.output}
    first = producers[lstms[0].input[0]]
    assert first.op_type == "Cast" and first.attribute[0].i == \
        TensorProto.FLOAT16, first
    fp32 = run_amp(path, {"x": x.numpy()}, ["y"], tmp_path / "fp32")["y"]
    fp16 = run_amp(path, {"x": x.numpy()}, ["y"], tmp_path / "fp16",
                   ["--amp-pipeline=precision=fp16"])["y"]
    with torch.no_grad():
        expected = module(x)[0].numpy()
    np.testing.assert_allclose(fp32, expected, rtol=1e-5, atol=1e-5)
    assert not np.array_equal(fp16, fp32)
    np.testing.assert_allclose(fp16, fp32, rtol=0, atol=2e-3)
