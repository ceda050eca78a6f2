"""amp-analyze-training on every training-side graph of ../shared/corpus
(its census roles training, optimizer and eval) and on every zoo step: the
counts per file, printed; and after --amp-pipeline="precision=fp16" no
value downstream of a gradient's unscale is low precision in the exported
ONNX (docs/TrainingGraphs.md)."""
import json
import os
import re
import subprocess

import onnx
import pytest

from amp_opt import verify, zoo
from amp_opt.numerics import FORCED
from ort_artifacts import add_gradient_accumulators, make_artifact

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(REPO, "..", "shared", "corpus")
AMP_OPT = os.path.join(REPO, "build", "bin", "amp-opt")
REMARK = re.compile(r"remark: ([\w.]+): loss '(.*)', (\d+) seeds, (\d+) "
                    r"parameters with gradients, (\d+) updates")

# What each corpus file must give: (kind, loss found, parameters).
EXPECTED = {
    "training_api/training_model.onnx": ("ort.training_artifact", True, 4),
    "custom_ops/training_model.onnx": ("ort.training_artifact", True, 2),
    "training_api/gradient_graph.onnx": ("ort.training_artifact", True, 4),
    "recompute_gelu.onnx": ("ort.module", False, 4),
    "recompute_tile.onnx": ("ort.module", False, 2),
    "test_gradient_of_add/model.onnx": ("onnx.gradient", True, 2),
    "test_gradient_of_add_and_mul/model.onnx": ("onnx.gradient", True, 2),
}


def corpus_graphs():
    census = os.path.join(CORPUS, "census.json")
    if not os.path.isfile(census):
        return []
    with open(census) as f:
        entries = json.load(f)
    return sorted(e["path"] for e in entries
                  if e["role"] in ("training", "optimizer", "eval"))


def analyze(path):
    proc = subprocess.run([AMP_OPT, path, "--amp-analyze-training=remarks=true",
                           "-o", os.devnull], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found = REMARK.search(proc.stderr)
    if not found:
        assert "no backward found" in proc.stderr, proc.stderr
        return ("forward", "", 0, 0, 0)
    kind, loss, seeds, params, updates = found.groups()
    return kind, loss, int(seeds), int(params), int(updates)


def low_precision_after_unscale(path, out):
    """Converts `path` to FP16 (GEMMs forced) into `out`; returns
    verify.low_precision_after_unscale of the result."""
    proc = subprocess.run([AMP_OPT, path, f"--amp-pipeline=precision=fp16 "
                           f"{FORCED}", "-o", out], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return verify.low_precision_after_unscale(onnx.load(out))


@pytest.mark.parametrize("path", corpus_graphs() or ["(absent)"])
def test_corpus_training_graph(path, tmp_path):
    if path == "(absent)":
        pytest.skip("../shared/corpus is absent")
    full = os.path.join(CORPUS, path)
    kind, loss, seeds, params, updates = analyze(full)
    print(f"{path}: {kind}, loss '{loss}', {seeds} seeds, {params} "
          f"parameters with gradients, {updates} updates")
    for suffix, (want_kind, want_loss, want_params) in EXPECTED.items():
        if path.endswith(suffix):
            assert (kind, bool(loss), params) == (want_kind, want_loss,
                                                  want_params)
    if kind in ("ort.training_artifact", "ort.module", "onnx.gradient"):
        unscaled, bad = low_precision_after_unscale(
            full, str(tmp_path / "out.onnx"))
        assert len(unscaled) == params and not bad, bad


@pytest.mark.parametrize("name", zoo.MODELS)
@pytest.mark.parametrize("optimizer", sorted(zoo.OPTIMIZERS))
def test_zoo_training_graph(name, optimizer, tmp_path):
    path = str(tmp_path / f"{name}_{optimizer}.onnx")
    zoo.export(name, optimizer, path)
    kind, loss, seeds, params, updates = analyze(path)
    print(f"zoo {name} {optimizer}: {kind}, loss '{loss}', {seeds} seeds, "
          f"{params} parameters with gradients, {updates} updates")
    model, _, _, _ = zoo.build(name)
    assert (kind, loss, seeds) == ("amp_opt.training_step", "loss", 1)
    assert params == len(list(model.parameters()))
    unscaled, bad = low_precision_after_unscale(path,
                                                str(tmp_path / "out.onnx"))
    assert len(unscaled) == params and not bad, bad


def log_softmax_classifier_artifact(batch, size, hidden, classes):
    """A training graph in ONNX Runtime's artifact form for an MLP trained on
    -sum(log_softmax(logits) * targets) / batch: its backward goes through
    com.microsoft LogSoftmaxGrad_13 and ReluGrad, and each gradient into an
    InPlaceAccumulatorV2."""
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    ms = "com.microsoft"
    make = helper.make_node
    params = {"fc1.weight": [hidden, size], "fc1.bias": [hidden],
              "fc2.weight": [classes, hidden], "fc2.bias": [classes]}
    nodes = [
        make("Gemm", ["input", "fc1.weight", "fc1.bias"], ["pre"], transB=1),
        make("Relu", ["pre"], ["hidden"]),
        make("Gemm", ["hidden", "fc2.weight", "fc2.bias"], ["logits"],
             transB=1),
        make("LogSoftmax", ["logits"], ["log_prob"], axis=1),
        make("Mul", ["log_prob", "targets"], ["picked"]),
        make("ReduceSum", ["picked"], ["sum"], keepdims=0),
        make("Div", ["sum", "count"], ["mean"]),
        make("Neg", ["mean"], ["loss"]),
        # Backward: d mean / d picked = 1 / batch.
        make("Neg", ["loss_grad"], ["mean_grad"]),
        make("Div", ["mean_grad", "count"], ["picked_grad_scale"]),
        make("Mul", ["targets", "picked_grad_scale"], ["log_prob_grad"]),
        make("LogSoftmaxGrad_13", ["log_prob_grad", "log_prob"],
             ["logits_grad"], domain=ms, axis=1),
        make("Gemm", ["logits_grad", "hidden"], ["fc2.weight_grad"],
             transA=1),
        make("ReduceSum", ["logits_grad", "batch_axis"], ["fc2.bias_grad"],
             keepdims=0),
        make("Gemm", ["logits_grad", "fc2.weight"], ["hidden_grad"]),
        make("ReluGrad", ["hidden_grad", "hidden"], ["pre_grad"], domain=ms),
        make("Gemm", ["pre_grad", "input"], ["fc1.weight_grad"], transA=1),
        make("ReduceSum", ["pre_grad", "batch_axis"], ["fc1.bias_grad"],
             keepdims=0),
    ]
    info = helper.make_tensor_value_info
    inputs = [info("input", TensorProto.FLOAT, [batch, size]),
              info("targets", TensorProto.FLOAT, [batch, classes])]
    inputs += [info(name, TensorProto.FLOAT, shape)
               for name, shape in params.items()]
    outputs = [info("loss", TensorProto.FLOAT, [])]
    add_gradient_accumulators(params, nodes, inputs, outputs)
    initializers = [
        numpy_helper.from_array(np.array(1, np.float32), "loss_grad"),
        numpy_helper.from_array(np.array(batch, np.float32), "count"),
        numpy_helper.from_array(np.array([0], np.int64), "batch_axis")]
    contrib = {"logits_grad": [batch, classes], "pre_grad": [batch, hidden]}
    return make_artifact("log_softmax_classifier", nodes, inputs, outputs, initializers,
                         contrib)


def test_log_softmax_grad_artifact_trains_in_fp16(tmp_path):
    """LogSoftmaxGrad_13 (ONNX Runtime's gradient of LogSoftmax) is linear
    in its seed: loss scaling goes through it, the GEMMs on both sides run
    in FP16, and amp-run trains the graph in FP16 as in FP32."""
    import numpy as np
    from amp_opt import api
    path = str(tmp_path / "training_model.onnx")
    onnx.save(log_softmax_classifier_artifact(128, 256, 512, 10), path)
    _, report = api.convert(path, "fp16", op_class=FORCED.split("=", 1)[1])
    training = report["training"]
    assert (training["kind"], training["loss"], training["parameters"]) == (
        "ort.training_artifact", "loss", 4)
    decisions = {(d["op_type"], d["precision"]) for d in report["decisions"]}
    assert ("Gemm", "f16") in decisions
    assert ("com.microsoft::LogSoftmaxGrad_13", "f32") in decisions
    rng = np.random.RandomState(0)
    x = rng.randn(128, 256).astype(np.float32)
    targets = np.eye(10, dtype=np.float32)[(x[:, :10].argmax(1))]
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "t.npy", targets)
    args = ["--sgd-lr", "0.5", "--input", f"input={tmp_path / 'x.npy'}",
            "--input", f"targets={tmp_path / 't.npy'}"]
    fp32, _ = api.train(path, 20, args=args)
    fp16, _ = api.train(path, 20, amp_pipeline=f"precision=fp16 {FORCED}",
                        args=args)
    losses32 = [record["loss"] for record in fp32]
    losses16 = [record["loss"] for record in fp16]
    assert losses32[-1] < 0.5 * losses32[0], losses32
    assert fp16[0]["loss_scale"] > 1
    np.testing.assert_allclose(losses16, losses32, rtol=0.01)
    assert losses16 != losses32
