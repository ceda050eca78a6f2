"""If and Loop through amp-run (lib/Conversion/ONNXGraphToLinalg/
ControlFlow.cpp): a scripted PyTorch model exported by torch.onnx, whose
loop unrolls and whose data-dependent If becomes an scf.if, and while loops
of a run-time condition, against eager PyTorch and ONNX Runtime; the CUDA
backend refuses what its host code cannot evaluate. The FP16 pipeline on
a Loop and an If is in test_subgraphs_fp16.py."""
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort
from test_cuda_backend import toolkit_found
from test_onnx_conformance import assert_clean_error

F = TensorProto.FLOAT


@torch.jit.script
def _scripted(h: torch.Tensor) -> torch.Tensor:
    # A loop over a static dimension, and a branch on the data.
    acc = torch.zeros_like(h[:, 0])
    for i in range(h.size(1)):
        acc = acc + h[:, i] * (i + 1)
    if bool(acc.sum() > 0):
        out = acc * 2
    else:
        out = -acc
    return out


class Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(6, 5)

    def forward(self, x):
        return _scripted(self.linear(x))


def _amp_run_outputs(path, folder, inputs, outputs, amp_pipeline=None):
    """amp-run's `outputs` (name -> array) after one step on `inputs`
    (name -> array), through `amp_pipeline` when given."""
    args = ["--save-outputs", str(folder / "out")]
    for name, value in inputs.items():
        np.save(folder / f"{name}.npy", value)
        args += ["--input", f"{name}={folder / name}.npy"]
    api.train(str(path), 1, amp_pipeline=amp_pipeline, args=args)
    return {name: api.load_saved(folder / "out", name) for name in outputs}


def _amp_run(path, folder, inputs, output):
    """amp-run's output `output` after one step on `inputs`."""
    return _amp_run_outputs(path, folder, inputs, [output])[output]


def _lowered(path):
    """The graph at `path` after convert-onnxg-to-linalg, as text."""
    return subprocess.run(
        [api.find_amp_opt(), str(path), "--convert-onnxg-to-linalg"],
        capture_output=True, text=True, check=True).stdout


def test_scripted_torch_export_runs(tmp_path, needs_ort):
    """torch.onnx writes the scripted loop as a Loop (trip count from a
    shape: unrolled) and the branch as an If on the data (an scf.if); amp-run
    computes eager PyTorch's output for inputs that take either branch."""
    torch.manual_seed(0)
    model = Scripted()
    path = tmp_path / "scripted.onnx"
    torch.onnx.export(model, (torch.randn(4, 6),), str(path), opset_version=17,
                      input_names=["x"], output_names=["y"])
    op_types = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert {"Loop", "If"} <= op_types, op_types
    signs = set()
    for seed in range(8):
        x = torch.randn(4, 6, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            eager = model(x).numpy()
            weighted = model.linear(x) * torch.arange(1, 6)
            signs.add(bool(weighted.sum() > 0))
        got = _amp_run(path, tmp_path, {"x": x.numpy()}, "y")
        np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            got, ort.run(str(path), {"x": x.numpy()})["y"], rtol=1e-5,
            atol=1e-6)
    assert signs == {True, False}, "the inputs took one branch only"


def _while_model(trip_count, with_condition):
    """v <- v + tanh(v w) while |v| < 50, at most `trip_count` times (None:
    no trip count); without a condition input the body's condition still
    decides, as in ONNX Runtime."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["v", "w"], ["vw"]),
         helper.make_node("Tanh", ["vw"], ["t"]),
         helper.make_node("Add", ["t", "v"], ["v_out"]),
         helper.make_node("ReduceL2", ["v_out"], ["norm"], keepdims=0),
         helper.make_node("Less", ["norm", "limit"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", F, [4, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [4, 8])])
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array(
            (rng.standard_normal((8, 8)) / 4).astype(np.float32), "w"),
        numpy_helper.from_array(np.array(50.0, np.float32), "limit"),
        numpy_helper.from_array(np.array(True), "go")]
    if trip_count is not None:
        initializers.append(
            numpy_helper.from_array(np.array(trip_count, np.int64), "m"))
    loop = helper.make_node(
        "Loop", ["m" if trip_count is not None else "",
                 "go" if with_condition else "", "x"], ["y"], body=body)
    graph = helper.make_graph(
        [loop], "while", [helper.make_tensor_value_info("x", F, [4, 8])],
        [helper.make_tensor_value_info("y", F, [4, 8])], initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("trip_count,with_condition",
                         [(1000, True), (1000, False), (None, True), (5, True)])
def test_while_loops_match_onnx_runtime(trip_count, with_condition, tmp_path,
                                        needs_ort):
    """A condition computed from the data: an scf.while, which stops where
    ONNX Runtime does (the norm passing 50, or the trip count: 5 stops
    first); the lowered graph holds the while loop, not copies of the
    body."""
    path = tmp_path / "while.onnx"
    onnx.save(_while_model(trip_count, with_condition), str(path))
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    reference = ort.run(str(path), {"x": x})["y"]
    got = _amp_run(path, tmp_path, {"x": x}, "y")
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)
    assert not np.allclose(reference, x)
    lowered = _lowered(path)
    assert lowered.count("scf.while") == 1
    assert lowered.count("math.tanh") == 1


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
def test_cuda_refuses_run_time_control_flow(tmp_path):
    """The CUDA step's buffers are in device memory, where its host code
    cannot read a condition: amp-compile stops with one error line and
    writes no library."""
    path = tmp_path / "while.onnx"
    onnx.save(_while_model(1000, True), str(path))
    library = tmp_path / "step.so"
    run = subprocess.run([api.find_tool("amp-compile"), str(path), "-o",
                          str(library)], capture_output=True, text=True)
    assert_clean_error(run, "a Loop lowers for CUDA only when they are "
                            "constants")
    assert not library.exists()


def _scan_model(length):
    """A recurrence h <- tanh(h W + x_t) over the rows of X, forwards, that
    also reads the columns of XR backwards: the state h, each step's h
    stacked along axis 0 and h * xr_t stacked along axis 1 (given as -2)
    last step first."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", "w"], ["hw"]),
         helper.make_node("Add", ["hw", "x"], ["a"]),
         helper.make_node("Tanh", ["a"], ["h_out"]),
         helper.make_node("Mul", ["h_out", "xr"], ["p"])],
        "body",
        [helper.make_tensor_value_info("h", F, [3, 4]),
         helper.make_tensor_value_info("x", F, [3, 4]),
         helper.make_tensor_value_info("xr", F, [3, 4])],
        [helper.make_tensor_value_info("h_out", F, [3, 4]),
         helper.make_tensor_value_info("y", F, [3, 4]),
         helper.make_tensor_value_info("p", F, [3, 4])])
    body.node.append(helper.make_node("Identity", ["h_out"], ["y"]))
    scan = helper.make_node(
        "Scan", ["h0", "X", "XR"], ["h_last", "Y", "P"], body=body,
        num_scan_inputs=2, scan_input_axes=[0, -1],
        scan_input_directions=[0, 1], scan_output_axes=[0, -2],
        scan_output_directions=[0, 1])
    w = (np.random.default_rng(2).standard_normal((4, 4)) / 2).astype(
        np.float32)
    graph = helper.make_graph(
        [scan], "scan",
        [helper.make_tensor_value_info("h0", F, [3, 4]),
         helper.make_tensor_value_info("X", F, [length, 3, 4]),
         helper.make_tensor_value_info("XR", F, [3, 4, length])],
        [helper.make_tensor_value_info("h_last", F, [3, 4]),
         helper.make_tensor_value_info("Y", F, [length, 3, 4]),
         helper.make_tensor_value_info("P", F, [3, length, 4])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("length,lowered_as", [(6, "tensor.concat"),
                                               (300, "scf.for")])
def test_scans_match_onnx_runtime(length, lowered_as, tmp_path, needs_ort):
    """Scan with state, axes and both directions: unrolled up to 256
    elements (the body once per element), an scf.for beyond; both give
    ONNX Runtime's outputs."""
    path = tmp_path / "scan.onnx"
    onnx.save(_scan_model(length), str(path))
    rng = np.random.default_rng(3)
    feeds = {"h0": rng.standard_normal((3, 4)).astype(np.float32),
             "X": rng.standard_normal((length, 3, 4)).astype(np.float32),
             "XR": rng.standard_normal((3, 4, length)).astype(np.float32)}
    reference = ort.run(str(path), feeds)
    got = _amp_run_outputs(path, tmp_path, feeds, reference)
    for name in ("h_last", "Y", "P"):
        np.testing.assert_allclose(got[name], reference[name], rtol=1e-5,
                                   atol=1e-5, err_msg=name)
    lowered = _lowered(path)
    assert lowered_as in lowered
    assert lowered.count("math.tanh") == (length if length <= 256 else 1)


def test_counting_loop_past_unroll_limit(tmp_path, needs_ort):
    """A Loop without trip count whose condition counts iterations (i <
    299): each unrolled copy's condition folds, and when it is still true
    after 256 copies the loop becomes an scf.while that runs to the end,
    where ONNX Runtime stops too."""
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "limit"], ["cond_out"]),
         helper.make_node("Mul", ["v", "decay"], ["vd"]),
         helper.make_node("Add", ["vd", "x"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", F, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [4])])
    loop = helper.make_node("Loop", ["", "go", "v0"], ["y"], body=body)
    graph = helper.make_graph(
        [loop], "counting",
        [helper.make_tensor_value_info("v0", F, [4]),
         helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
        [numpy_helper.from_array(np.array(299, np.int64), "limit"),
         numpy_helper.from_array(np.array(0.99, np.float32), "decay"),
         numpy_helper.from_array(np.array(True), "go")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "counting.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(5)
    feeds = {"v0": rng.standard_normal(4).astype(np.float32),
             "x": rng.standard_normal(4).astype(np.float32)}
    reference = ort.run(str(path), feeds)["y"]
    # 300 iterations (i = 0 .. 299): far from 256 of them.
    expected = feeds["v0"].astype(np.float64)
    for _ in range(300):
        expected = expected * 0.99 + feeds["x"]
    np.testing.assert_allclose(reference, expected, rtol=1e-4)
    got = _amp_run(path, tmp_path, feeds, "y")
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)
    lowered = _lowered(path)
    assert lowered.count("scf.while") == 1


def _dropout_sum_model(kind, length):
    """Sums `length` dropout masks of a vector of ones (ratio 0.5, training
    mode: each kept element is 2): in a Loop whose trip count is a graph
    input (an scf.while), or in a Scan over `length` rows (an scf.for past
    256)."""
    ratio = numpy_helper.from_array(np.array(0.5, np.float32), "ratio")
    train = numpy_helper.from_array(np.array(True), "train")
    ones = numpy_helper.from_array(np.ones(64, np.float32), "ones")
    drop = helper.make_node("Dropout", ["ones", "ratio", "train"], ["mask"])
    add = helper.make_node("Add", ["acc", "mask"], ["acc_out"])
    if kind == "loop":
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond"], ["cond_out"]), drop, add],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
             helper.make_tensor_value_info("acc", F, [64])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("acc_out", F, [64])])
        node = helper.make_node("Loop", ["m", "", "acc0"], ["y"], body=body)
        inputs = [helper.make_tensor_value_info("m", TensorProto.INT64, [])]
    else:
        body = helper.make_graph(
            [drop, add], "body",
            [helper.make_tensor_value_info("acc", F, [64]),
             helper.make_tensor_value_info("row", F, [1])],
            [helper.make_tensor_value_info("acc_out", F, [64])])
        node = helper.make_node("Scan", ["acc0", "rows"], ["y"], body=body,
                                num_scan_inputs=1)
        inputs = [helper.make_tensor_value_info("rows", F, [length, 1])]
    graph = helper.make_graph(
        [node], "dropout_sum", inputs,
        [helper.make_tensor_value_info("y", F, [64])],
        [ratio, train, ones,
         numpy_helper.from_array(np.zeros(64, np.float32), "acc0")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("kind,lowered_as", [("loop", "scf.while"),
                                             ("scan", "scf.for")])
def test_loop_bodies_draw_new_masks_each_iteration(kind, lowered_as,
                                                   tmp_path):
    """A body that lowers once but runs 300 times draws by the iteration
    number: the sum of its 300 dropout masks is binomial (mean 300, each
    element between 0 and 600), not one mask times 300 (each element 0 or
    600)."""
    length = 300
    path = tmp_path / f"{kind}.onnx"
    onnx.save(_dropout_sum_model(kind, length), str(path))
    feeds = ({"m": np.array(length, np.int64)} if kind == "loop" else
             {"rows": np.zeros((length, 1), np.float32)})
    got = _amp_run(path, tmp_path, feeds, "y")
    lowered = _lowered(path)
    assert lowered.count(lowered_as) == 1
    assert np.all(got % 2 == 0) and got.min() >= 0 and got.max() <= 600
    assert not np.isin(got, [0, 600]).all(), "one mask in every iteration"
    # Binomial(300, 1/2) times 2: mean 300, deviation 17.3 per element.
    assert abs(got.mean() - 300) < 4 * 17.3 / 8, got.mean()
    assert 10 < got.std() < 25, got.std()
