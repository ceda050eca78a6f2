"""Random dropout in amp-run: Dropout in training mode and ONNX Runtime's
BitmaskDropout, BiasDropout and their gradients. Masks are reproducible
from --seed, new at every step, different per node, keep about 1 - ratio
of the elements, and the forward output and the gradient agree on them
(the ONNX Runtime fusion test graphs of the corpus)."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api

HERE = os.path.dirname(os.path.abspath(__file__))
FUSION = os.path.normpath(os.path.join(
    HERE, "..", "..", "..", "shared", "corpus", "external",
    "onnxruntime_onnxruntime-qnn", "onnxruntime", "test", "testdata",
    "transform", "fusion"))


def run(tmp_path, model_path, steps, seed, inputs, extra=()):
    out = tmp_path / f"out_{steps}_{seed}"
    args = ["--save-outputs", str(out), *extra]
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    api.train(model_path, steps, seed=seed, args=args)
    return {f[:-4]: np.load(out / f) for f in os.listdir(out)}


def test_dropout_masks(tmp_path):
    ratio = 0.25
    nodes = [helper.make_node("Dropout", ["x", "ratio", "training"],
                              [f"y{i}", f"mask{i}"]) for i in (0, 1)]
    info = helper.make_tensor_value_info
    n = 4096
    graph = helper.make_graph(
        nodes, "dropout", [info("x", TensorProto.FLOAT, [n])],
        [info(f"{kind}{i}", dtype, [n]) for i in (0, 1)
         for kind, dtype in (("y", TensorProto.FLOAT),
                             ("mask", TensorProto.BOOL))],
        [numpy_helper.from_array(np.array(ratio, np.float32), "ratio"),
         numpy_helper.from_array(np.array(True), "training")])
    path = str(tmp_path / "dropout.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = np.linspace(1, 2, n, dtype=np.float32)

    first = run(tmp_path, path, 1, 0, dict(x=x))
    mask = first["mask0"]
    assert abs(mask.mean() - (1 - ratio)) < 0.03, mask.mean()
    np.testing.assert_allclose(first["y0"], np.where(mask, x / (1 - ratio), 0),
                               rtol=1e-6)
    # Another node draws another mask; the same seed repeats exactly.
    assert (first["mask1"] != mask).mean() > 0.2
    again = run(tmp_path, path, 1, 0, dict(x=x))
    np.testing.assert_array_equal(again["mask0"], mask)
    # The next step and another seed draw new masks.
    step2 = run(tmp_path, path, 2, 0, dict(x=x))
    other_seed = run(tmp_path, path, 1, 1, dict(x=x))
    for other in (step2, other_seed):
        assert (other["mask0"] != mask).mean() > 0.2


def test_dropout_runtime_ratio_and_seed_attribute(tmp_path):
    """The ratio and training_mode may be graph inputs (as in the ONNX
    backend test test_training_dropout_mask); a seed attribute fixes the
    stream."""
    info = helper.make_tensor_value_info
    n = 2048
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"],
                            seed=5)
    graph = helper.make_graph(
        [node], "dropout",
        [info("x", TensorProto.FLOAT, [n]), info("r", TensorProto.FLOAT, []),
         info("t", TensorProto.BOOL, [])],
        [info("y", TensorProto.FLOAT, [n]), info("mask", TensorProto.BOOL,
                                                 [n])])
    path = str(tmp_path / "dropout.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = np.ones(n, np.float32)
    inputs = dict(x=x, r=np.array(0.75, np.float32), t=np.array(True))
    got = run(tmp_path, path, 1, 0, inputs)
    assert abs(got["mask"].mean() - 0.25) < 0.04, got["mask"].mean()
    np.testing.assert_allclose(got["y"], got["mask"] * 4.0, rtol=1e-6)
    # The node's seed, not --seed, picks its stream.
    np.testing.assert_array_equal(run(tmp_path, path, 1, 9, inputs)["mask"],
                                  got["mask"])
    # training_mode false at run time drops nothing.
    inference = run(tmp_path, path, 1, 3, dict(inputs, t=np.array(False)))
    assert inference["mask"].all()
    np.testing.assert_array_equal(inference["y"], x)


needs_fusion_graphs = pytest.mark.skipif(
    not os.path.isdir(FUSION), reason=f"the corpus is absent ({FUSION})")


@needs_fusion_graphs
def test_bitmask_dropout_and_grad_agree(tmp_path):
    """Y = BitmaskDropout(X + B), dX = BitmaskDropoutGrad(dY, mask): the
    same elements drop in both, scaled by 1 / (1 - 0.1)."""
    rng = np.random.default_rng(0)
    m, n = 16, 100  # 1600 elements: 50 mask words
    inputs = {"A": rng.standard_normal((m, n)).astype(np.float32) + 3,
              "B": rng.standard_normal(n).astype(np.float32),
              "dY": rng.standard_normal((m, n)).astype(np.float32)}
    model = onnx.load(os.path.join(FUSION,
                                   "bitmask_bias_dropout_fusion_basic.onnx"))
    names = [i.name for i in model.graph.input]
    inputs = dict(zip(names, inputs.values()))
    got = run(tmp_path,
              os.path.join(FUSION, "bitmask_bias_dropout_fusion_basic.onnx"),
              1, 0, inputs, ["--dim", f"M={m}", "--dim", f"N={n}"])
    x, bias, dy = inputs.values()
    kept = got["Y"] != 0
    assert abs(kept.mean() - 0.9) < 0.03, kept.mean()
    np.testing.assert_allclose(got["Y"], np.where(kept, (x + bias) / 0.9, 0),
                               rtol=1e-6)
    np.testing.assert_allclose(got["dX"], np.where(kept, dy / 0.9, 0),
                               rtol=1e-6)


@needs_fusion_graphs
def test_bias_dropout_with_residual(tmp_path):
    """Y = BiasDropout(X, B, R), dX = DropoutGrad(dY, mask): dropped
    elements of Y are the residual alone."""
    rng = np.random.default_rng(1)
    m, n = 8, 64
    path = os.path.join(FUSION, "bitmask_bias_dropout_replacement_basic.onnx")
    names = [i.name for i in onnx.load(path).graph.input]
    values = [rng.standard_normal((m, n)).astype(np.float32) + 3,
              rng.standard_normal(n).astype(np.float32),
              rng.standard_normal((m, n)).astype(np.float32),
              rng.standard_normal((m, n)).astype(np.float32)]
    inputs = dict(zip(names, values))
    got = run(tmp_path, path, 1, 0, inputs,
              ["--dim", f"M={m}", "--dim", f"N={n}"])
    x, bias, residual, dy = values
    kept = got["dX"] != 0
    assert abs(kept.mean() - 0.9) < 0.06, kept.mean()
    np.testing.assert_allclose(
        got["Y"], np.where(kept, (x + bias) / 0.9, 0) + residual, rtol=1e-5,
        atol=1e-6)
    np.testing.assert_allclose(got["dX"], np.where(kept, dy / 0.9, 0),
                               rtol=1e-6)
