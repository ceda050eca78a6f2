"""ONNX's RNN, GRU and LSTM through amp-run (onnxg-expand-recurrent unrolls
them into MatMuls and gates), against ONNX Runtime on random weights with
every attribute, on the CPU and in the CUDA backend's grid loops; the
recurrent layers torch.onnx exports, against PyTorch; and the FP16
pipeline on them."""
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, export_training_step, ort
from ort_artifacts import artifact_io, make_artifact
from test_cuda_backend import (check_kernels, check_library, compile_library,
                               toolkit_found)

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
    saved = api.run_with_inputs(path, feeds, tmp_path, args=extra)
    return {name: saved[name] for name in outputs}


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


def torch_lstm(x, w, r, b, h0, c0, p=None):
    """ONNX's LSTM (gates i, o, f, c) unrolled in torch: LSTMTraining's
    outputs (all hidden states, the last hidden and cell state, all cell
    states, the activated gates). LSTMGrad takes no peepholes, so ONNX
    Runtime's gradient sees the cell states they read as constants: so do
    these (detached), which changes the gradients and not the values."""
    size = w.shape[1] // 4
    bias = b[0, :4 * size] + b[0, 4 * size:]
    h, c = h0[0], c0[0]
    hidden, cells, gates = [], [], []
    for t in range(x.shape[0]):
        i, o, f, g = (x[t] @ w[0].T + h @ r[0].T + bias).split(size, dim=1)
        if p is not None:
            p_i, p_o, p_f = p[0].split(size)
            i, f = i + p_i * c.detach(), f + p_f * c.detach()
        i, f, g = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g)
        c = f * c + i * g
        o = torch.sigmoid(o + p_o * c.detach() if p is not None else o)
        h = o * torch.tanh(c)
        hidden.append(h)
        cells.append(c)
        gates.append(torch.cat([i, o, f, g], 1))
    return (torch.stack(hidden)[:, None], h[None], c[None],
            torch.stack(cells)[:, None], torch.stack(gates)[:, None])


def torch_gru(x, w, r, b, h0, linear_before_reset):
    """ONNX's GRU (gates z, r, h) unrolled in torch: GRUTraining's outputs
    (all hidden states, the last one, the activated gates)."""
    size = w.shape[1] // 3
    w_bias, r_bias = b[0, :3 * size].split(size), b[0, 3 * size:].split(size)
    r_z, r_r, r_h = r[0].split(size)
    h = h0[0]
    hidden, gates = [], []
    for t in range(x.shape[0]):
        x_z, x_r, x_h = (x[t] @ w[0].T).split(size, dim=1)
        z = torch.sigmoid(x_z + h @ r_z.T + w_bias[0] + r_bias[0])
        reset = torch.sigmoid(x_r + h @ r_r.T + w_bias[1] + r_bias[1])
        if linear_before_reset:
            candidate = torch.tanh(x_h + w_bias[2] +
                                   reset * (h @ r_h.T + r_bias[2]))
        else:
            candidate = torch.tanh(x_h + (reset * h) @ r_h.T + w_bias[2] +
                                   r_bias[2])
        h = (1 - z) * candidate + z * h
        hidden.append(h)
        gates.append(torch.cat([z, reset, candidate], 1))
    return torch.stack(hidden)[:, None], h[None], torch.stack(gates)[:, None]


def training_pair_model(op, shapes, forward_inputs, grad_inputs, attrs):
    """ONNX Runtime's <op>Training node and its <op>Grad on the forward's
    outputs, every value an output."""
    ms = "com.microsoft"
    forward_outputs = (["HAll", "HFinal", "CFinal", "CAll", "gates"]
                       if op == "LSTM" else ["HAll", "HFinal", "gates"])
    grad_outputs = (["dX", "dW", "dR", "dB", "dH0", "dC0", "dP"]
                    if op == "LSTM" else ["dX", "dW", "dR", "dB", "dH0"])
    nodes = [
        helper.make_node(f"{op}Training", forward_inputs, forward_outputs,
                         domain=ms, **attrs),
        helper.make_node(f"{op}Grad", grad_inputs, grad_outputs, domain=ms,
                         **attrs)]
    info = helper.make_tensor_value_info
    fed = {name for name in forward_inputs + grad_inputs if name} - set(
        forward_outputs)
    graph = helper.make_graph(
        nodes, f"{op.lower()}_training",
        [info(name, TensorProto.FLOAT, shapes[name]) for name in sorted(fed)],
        [info(name, TensorProto.FLOAT, shapes[name])
         for name in forward_outputs + grad_outputs if name in shapes])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 14), helper.make_opsetid(ms, 1)])
    model.ir_version = 7
    return model


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("peepholes", [False, True],
                         ids=["plain", "peepholes"])
def test_lstm_training_and_grad_match_autograd(peepholes, grid, tmp_path):
    """LSTMTraining's outputs and LSTMGrad's gradients (ONNX Runtime's ops,
    which its training graphs use for nn.LSTM) against PyTorch autograd."""
    steps, batch, size, hidden = 5, 3, 4, 6
    rng = np.random.default_rng(7)
    shapes = {"X": [steps, batch, size], "W": [1, 4 * hidden, size],
              "R": [1, 4 * hidden, hidden], "B": [1, 8 * hidden],
              "H0": [1, batch, hidden], "C0": [1, batch, hidden],
              "P": [1, 3 * hidden], "dHAll": [steps, 1, batch, hidden],
              "dHFinal": [1, batch, hidden], "dCFinal": [1, batch, hidden]}
    feeds = {name: (rng.standard_normal(shape) * 0.5).astype(np.float32)
             for name, shape in shapes.items()
             if peepholes or name != "P"}
    shapes.update({"HAll": [steps, 1, batch, hidden],
                   "HFinal": [1, batch, hidden], "CFinal": [1, batch, hidden],
                   "CAll": [steps, 1, batch, hidden],
                   "gates": [steps, 1, batch, 4 * hidden],
                   "dX": shapes["X"], "dW": shapes["W"], "dR": shapes["R"],
                   "dB": shapes["B"], "dH0": shapes["H0"],
                   "dC0": shapes["C0"], "dP": shapes["P"]})
    model = training_pair_model(
        "LSTM", shapes,
        ["X", "W", "R", "B", "", "H0", "C0", "P" if peepholes else ""],
        ["X", "W", "R", "", "H0", "C0", "HAll", "CAll", "gates", "dHAll",
         "dHFinal", "dCFinal"], {"hidden_size": hidden})
    path = tmp_path / "lstm_training.onnx"
    onnx.save(model, str(path))
    outputs = [output.name for output in model.graph.output]
    got = run_amp(path, feeds, outputs, tmp_path, GRID_LOOPS if grid else ())

    params = {name: torch.tensor(feeds[name], requires_grad=True)
              for name in ("X", "W", "R", "B", "H0", "C0", "P")
              if name in feeds}
    forward = torch_lstm(*(params[name] for name in
                           ("X", "W", "R", "B", "H0", "C0")),
                         params.get("P"))
    for name, value in zip(["HAll", "HFinal", "CFinal", "CAll", "gates"],
                           forward):
        np.testing.assert_allclose(got[name], value.detach().numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=name)
    seeds = [torch.tensor(feeds[name])
             for name in ("dHAll", "dHFinal", "dCFinal")]
    loss = sum((value * seed).sum() for value, seed in zip(forward, seeds))
    loss.backward()
    for name in params:
        np.testing.assert_allclose(got["d" + name], params[name].grad.numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg="d" + name)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_training_and_grad_match_autograd(linear_before_reset,
                                              tmp_path):
    """GRUTraining's outputs and GRUGrad's gradients against PyTorch
    autograd, with and without linear_before_reset (nn.GRU's form)."""
    steps, batch, size, hidden = 5, 3, 4, 6
    rng = np.random.default_rng(8)
    shapes = {"X": [steps, batch, size], "W": [1, 3 * hidden, size],
              "R": [1, 3 * hidden, hidden], "B": [1, 6 * hidden],
              "H0": [1, batch, hidden], "dHAll": [steps, 1, batch, hidden],
              "dHFinal": [1, batch, hidden]}
    feeds = {name: (rng.standard_normal(shape) * 0.5).astype(np.float32)
             for name, shape in shapes.items()}
    shapes.update({"HAll": [steps, 1, batch, hidden],
                   "HFinal": [1, batch, hidden],
                   "gates": [steps, 1, batch, 3 * hidden],
                   "dX": shapes["X"], "dW": shapes["W"], "dR": shapes["R"],
                   "dB": shapes["B"], "dH0": shapes["H0"]})
    model = training_pair_model(
        "GRU", shapes, ["X", "W", "R", "B", "", "H0"],
        ["X", "W", "R", "B", "", "H0", "HAll", "gates", "dHAll", "dHFinal"],
        {"hidden_size": hidden, "linear_before_reset": linear_before_reset})
    path = tmp_path / "gru_training.onnx"
    onnx.save(model, str(path))
    outputs = [output.name for output in model.graph.output]
    got = run_amp(path, feeds, outputs, tmp_path)

    params = {name: torch.tensor(feeds[name], requires_grad=True)
              for name in ("X", "W", "R", "B", "H0")}
    forward = torch_gru(*params.values(), linear_before_reset)
    for name, value in zip(["HAll", "HFinal", "gates"], forward):
        np.testing.assert_allclose(got[name], value.detach().numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=name)
    loss = sum((value * torch.tensor(feeds[seed])).sum()
               for value, seed in zip(forward, ("dHAll", "dHFinal")))
    loss.backward()
    for name, param in params.items():
        np.testing.assert_allclose(got["d" + name], param.grad.numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg="d" + name)


def lstm_training_artifact(steps, batch, size, hidden, classes):
    """A training graph as ONNX Runtime's generate_artifacts writes one for
    nn.LSTM followed by a linear classifier: LSTMTraining, Gemm,
    SoftmaxCrossEntropyLoss, their gradients with LSTMGrad, and an
    InPlaceAccumulatorV2 per parameter."""
    ms = "com.microsoft"
    params = {"lstm.W": [1, 4 * hidden, size],
              "lstm.R": [1, 4 * hidden, hidden], "lstm.B": [1, 8 * hidden],
              "fc.weight": [classes, hidden], "fc.bias": [classes]}
    make = helper.make_node
    nodes = [
        make("LSTMTraining", ["input", "lstm.W", "lstm.R", "lstm.B"],
             ["hall", "hfinal", "cfinal", "call", "iofc"], domain=ms,
             hidden_size=hidden),
        make("Reshape", ["hfinal", "features_shape"], ["features"]),
        make("Gemm", ["features", "fc.weight", "fc.bias"], ["logits"],
             transB=1),
        make("SoftmaxCrossEntropyLoss", ["logits", "labels"],
             ["loss", "log_prob"]),
        make("SoftmaxCrossEntropyLossGrad", ["loss_grad", "log_prob",
                                             "labels"], ["logits_grad"],
             domain=ms),
        make("ReduceSum", ["logits_grad", "batch_axis"], ["fc.bias_grad"],
             keepdims=0),
        make("Gemm", ["logits_grad", "features"], ["fc.weight_grad"],
             transA=1),
        make("Gemm", ["logits_grad", "fc.weight"], ["features_grad"]),
        make("Reshape", ["features_grad", "state_shape"], ["hfinal_grad"]),
        make("LSTMGrad", ["input", "lstm.W", "lstm.R", "", "", "", "hall",
                          "call", "iofc", "", "hfinal_grad", ""],
             ["input_grad", "lstm.W_grad", "lstm.R_grad", "lstm.B_grad"],
             domain=ms, hidden_size=hidden),
    ]
    inputs, outputs = artifact_io(
        {"input": (TensorProto.FLOAT, [steps, batch, size]),
         "labels": (TensorProto.INT64, [batch])}, params, nodes)
    initializers = [
        numpy_helper.from_array(np.array(1, np.float32), "loss_grad"),
        numpy_helper.from_array(np.array([0], np.int64), "batch_axis"),
        numpy_helper.from_array(np.array([batch, hidden], np.int64),
                                     "features_shape"),
        numpy_helper.from_array(np.array([1, batch, hidden], np.int64),
                                     "state_shape")]
    # ONNX Runtime writes the types of what its contrib ops compute; ONNX's
    # shape inference types the rest.
    contrib = {"hall": [steps, 1, batch, hidden], "hfinal": [1, batch, hidden],
               "cfinal": [1, batch, hidden], "call": [steps, 1, batch, hidden],
               "iofc": [steps, 1, batch, 4 * hidden],
               "logits_grad": [batch, classes],
               "input_grad": [steps, batch, size],
               **{f"{name}_grad": shape for name, shape in params.items()
                  if name.startswith("lstm")}}
    return make_artifact("lstm_classifier", nodes, inputs, outputs, initializers,
                         contrib)


def test_ort_lstm_training_graph_trains_in_fp16(tmp_path):
    """An ONNX Runtime training graph of an LSTM classifier through the
    path a user runs: amp-opt finds the loss and the parameters' gradients
    (LSTMGrad's among them), sends the LSTM's GEMMs to FP16 with loss
    scaling, and amp-run trains it with --sgd-lr: the loss falls, and FP16
    follows FP32."""
    model = lstm_training_artifact(steps=16, batch=64, size=256, hidden=256,
                                   classes=5)
    path = tmp_path / "training_model.onnx"
    onnx.save(model, str(path))
    _, report = api.convert(str(path), "fp16")
    training = report["training"]
    assert (training["kind"], training["loss"], training["parameters"]) == (
        "ort.training_artifact", "loss", 5)
    precisions = {d["op_type"]: d["precision"] for d in report["decisions"]
                  if "LSTM" in d["op_type"]}
    assert precisions == {"com.microsoft::LSTMTraining": "f16",
                          "com.microsoft::LSTMGrad": "f16"}
    args = ["--sgd-lr", "0.5"]
    fp32, _ = api.train(str(path), 30, args=args)
    fp16, _ = api.train(str(path), 30, amp_pipeline="precision=fp16",
                        args=args)
    losses32 = [record["loss"] for record in fp32]
    losses16 = [record["loss"] for record in fp16]
    assert losses32[-1] < 0.2 * losses32[0], losses32
    assert fp16[0]["loss_scale"] > 1
    np.testing.assert_allclose(losses16, losses32, rtol=0.01)
    # The LSTM ran in FP16: not the same bits.
    assert losses16 != losses32


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
def test_ort_lstm_training_graph_compiles_to_a_library(tmp_path):
    """The same training graph in FP16 through amp-compile: every kernel
    passes ptxas for sm_80 and sm_90. Its 16 steps' states are copied into
    one stacked tensor each; one kernel for all of them passed PTX's
    parameter limit before amp-linalg-to-grid-loops bounded same-space
    fusion by max-parameter-bytes."""
    path = tmp_path / "training_model.onnx"
    onnx.save(lstm_training_artifact(steps=16, batch=64, size=256,
                                     hidden=256, classes=5), str(path))
    library = compile_library(path, "precision=fp16", tmp_path / "lib")
    check_library(*library)
    gemms = check_kernels(*library[2:])[1]
    # The input projection and the per-step recurrence, forward and
    # backward, are GEMMs.
    assert gemms >= 2 * 16


class _LastStepClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[-1])


def test_exported_lstm_step_over_64_steps_trains(tmp_path):
    """Our exporter's step of an nn.LSTM over 70 steps splits the sequence
    with a Split of 70 sizes of one, a constant of more than 64 equal
    elements, which the lowering writes as a fill and must still read as
    the sizes; amp-run's first loss is eager PyTorch's, and SGD lowers it."""
    torch.manual_seed(0)
    model = _LastStepClassifier()
    x, target = torch.randn(70, 1, 3), torch.tensor([1])
    path = str(tmp_path / "lstm.onnx")
    export_training_step(model, (x,), (target,),
                         torch.nn.functional.cross_entropy, path,
                         optimizer="sgd", lr=0.1)
    splits = [len(node.output) for node in onnx.load(path).graph.node
              if node.op_type == "Split"]
    assert max(splits) == 70, splits
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "target.npy", target.numpy())
    records, _ = api.train(path, 10, args=[
        "--input", f"input0={tmp_path / 'x.npy'}",
        "--input", f"target0={tmp_path / 'target.npy'}"])
    losses = [r["loss"] for r in records]
    eager = torch.nn.functional.cross_entropy(model(x), target).item()
    assert abs(losses[0] - eager) < 1e-5 * max(1.0, eager), (losses, eager)
    assert losses[-1] < 0.8 * losses[0], losses
