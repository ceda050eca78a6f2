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
from ort_artifacts import artifact_io, make_artifact

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
    inputs, outputs = artifact_io(
        {"input": (TensorProto.FLOAT, [batch, size]),
         "targets": (TensorProto.FLOAT, [batch, classes])}, params, nodes)
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


def generator_artifact(batch):
    """A training graph in ONNX Runtime's artifact form for a small image
    generator's head, ConvTranspose -> LeakyRelu -> AveragePool -> Gemm,
    trained on a squared error: its backward goes through the gradient ops
    ONNX Runtime's builder writes for them (ConvTransposeGrad,
    LeakyReluGrad, AveragePoolGrad in the default domain), and each
    gradient into an InPlaceAccumulatorV2."""
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    ms = "com.microsoft"
    make = helper.make_node
    params = {"deconv.weight": [8, 4, 3, 3], "deconv.bias": [4],
              "fc.weight": [10, 64], "fc.bias": [10]}
    deconv = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                  output_padding=[1, 1])
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        make("ConvTranspose", ["input", "deconv.weight", "deconv.bias"],
             ["up"], **deconv),
        make("LeakyRelu", ["up"], ["act"], alpha=0.2),
        make("AveragePool", ["act"], ["pooled"], **pool),
        make("Reshape", ["pooled", "flat_shape"], ["flat"]),
        make("Gemm", ["flat", "fc.weight", "fc.bias"], ["out"], transB=1),
        make("Sub", ["out", "targets"], ["diff"]),
        make("Mul", ["diff", "diff"], ["squared"]),
        make("ReduceSum", ["squared"], ["sum"], keepdims=0),
        make("Div", ["sum", "count"], ["loss"]),
        # Backward: d loss / d out = 2 * diff / count.
        make("Div", ["loss_grad", "count"], ["sum_grad"]),
        make("Mul", ["sum_grad", "two"], ["twice"]),
        make("Mul", ["diff", "twice"], ["out_grad"]),
        make("Gemm", ["out_grad", "flat"], ["fc.weight_grad"], transA=1),
        make("ReduceSum", ["out_grad", "batch_axis"], ["fc.bias_grad"],
             keepdims=0),
        make("Gemm", ["out_grad", "fc.weight"], ["flat_grad"]),
        make("Reshape", ["flat_grad", "pooled_shape"], ["pooled_grad"]),
        make("AveragePoolGrad", ["pooled_grad"], ["act_grad"], **pool),
        make("LeakyReluGrad", ["act_grad", "act"], ["up_grad"], domain=ms,
             alpha=0.2),
        make("ConvTransposeGrad", ["up_grad", "input", "deconv.weight"],
             ["", "deconv.weight_grad", "deconv.bias_grad"], domain=ms,
             **deconv),
    ]
    inputs, outputs = artifact_io(
        {"input": (TensorProto.FLOAT, [batch, 8, 4, 4]),
         "targets": (TensorProto.FLOAT, [batch, 10])}, params, nodes)
    initializers = [
        numpy_helper.from_array(np.array(1, np.float32), "loss_grad"),
        numpy_helper.from_array(np.array(batch * 10, np.float32), "count"),
        numpy_helper.from_array(np.array(2, np.float32), "two"),
        numpy_helper.from_array(np.array([0], np.int64), "batch_axis"),
        numpy_helper.from_array(np.array([batch, 64], np.int64),
                                "flat_shape"),
        numpy_helper.from_array(np.array([batch, 4, 4, 4], np.int64),
                                "pooled_shape")]
    contrib = {"act_grad": [batch, 4, 8, 8], "up_grad": [batch, 4, 8, 8],
               "deconv.weight_grad": params["deconv.weight"],
               "deconv.bias_grad": params["deconv.bias"]}
    return make_artifact("generator", nodes, inputs, outputs, initializers,
                         contrib)


def test_generator_artifact_trains_as_torch(tmp_path):
    """ConvTransposeGrad, LeakyReluGrad and AveragePoolGrad in a training
    artifact: amp-run's SGD steps (--sgd-lr on the accumulated gradients)
    give torch's losses, and the FP16 pipeline converts the transposed
    convolution and its gradient and trains as FP32 does."""
    import numpy as np
    import torch
    from amp_opt import api
    batch, lr, steps = 16, 0.05, 8
    path = str(tmp_path / "training_model.onnx")
    onnx.save(generator_artifact(batch), path)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 8, 4, 4)).astype(np.float32)
    targets = rng.standard_normal((batch, 10)).astype(np.float32)
    start = {"deconv.weight": rng.standard_normal((8, 4, 3, 3)) * 0.3,
             "deconv.bias": rng.standard_normal(4) * 0.1,
             "fc.weight": rng.standard_normal((10, 64)) * 0.3,
             "fc.bias": rng.standard_normal(10) * 0.1}
    start = {k: v.astype(np.float32) for k, v in start.items()}
    np.savez(tmp_path / "params.npz", **start)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "t.npy", targets)
    args = ["--sgd-lr", str(lr), "--params", str(tmp_path / "params.npz"),
            "--input", f"input={tmp_path / 'x.npy'}",
            "--input", f"targets={tmp_path / 't.npy'}"]
    fp32, _ = api.train(path, steps, args=args)
    weights = {k: torch.tensor(v, requires_grad=True)
               for k, v in start.items()}
    expected = []
    for _ in range(steps):
        up = torch.nn.functional.conv_transpose2d(
            torch.tensor(x), weights["deconv.weight"], weights["deconv.bias"],
            stride=2, padding=1, output_padding=1)
        act = torch.nn.functional.leaky_relu(up, 0.2)
        pooled = torch.nn.functional.avg_pool2d(act, 2, 2)
        out = pooled.reshape(batch, 64) @ weights["fc.weight"].T + \
            weights["fc.bias"]
        loss = ((out - torch.tensor(targets)) ** 2).mean()
        expected.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for value in weights.values():
                value -= lr * value.grad
                value.grad = None
    losses = [r["loss"] for r in fp32]
    print("amp-run:", losses, "\ntorch:  ", expected)
    assert expected[-1] < 0.7 * expected[0]
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    _, report = api.convert(path, "fp16", op_class=FORCED.split("=", 1)[1])
    decisions = {(d["op_type"], d["precision"]) for d in report["decisions"]}
    assert ("ConvTranspose", "f16") in decisions
    assert ("com.microsoft::ConvTransposeGrad", "f16") in decisions
    fp16, _ = api.train(path, steps, amp_pipeline=f"precision=fp16 {FORCED}",
                        args=args)
    losses16 = [r["loss"] for r in fp16]
    assert losses16 != losses
    np.testing.assert_allclose(losses16, losses, rtol=0.01)


def test_converted_artifact_runs_as_converted_in_amp_run(tmp_path):
    """The path of a user who converts once and runs the output: amp-run on
    amp-opt's FP16 artifact trains as amp-run's own --amp-pipeline does (the
    same losses, bit for bit), without warnings about the gradients the
    converted accumulators read; converting the output again is refused
    with one error line, and nothing is written."""
    import numpy as np
    from amp_opt import api
    batch, steps = 16, 6
    source = str(tmp_path / "training_model.onnx")
    onnx.save(generator_artifact(batch), source)
    rng = np.random.default_rng(1)
    params = {"deconv.weight": rng.standard_normal((8, 4, 3, 3)) * 0.3,
              "deconv.bias": rng.standard_normal(4) * 0.1,
              "fc.weight": rng.standard_normal((10, 64)) * 0.3,
              "fc.bias": rng.standard_normal(10) * 0.1}
    np.savez(tmp_path / "params.npz",
             **{k: v.astype(np.float32) for k, v in params.items()})
    np.save(tmp_path / "x.npy",
            rng.standard_normal((batch, 8, 4, 4)).astype(np.float32))
    np.save(tmp_path / "t.npy",
            rng.standard_normal((batch, 10)).astype(np.float32))
    args = ["--sgd-lr", "0.05", "--params", str(tmp_path / "params.npz"),
            "--input", f"input={tmp_path / 'x.npy'}",
            "--input", f"targets={tmp_path / 't.npy'}"]
    pipeline = f"precision=fp16 {FORCED}"
    expected, _ = api.train(source, steps, amp_pipeline=pipeline, args=args)
    model, report = api.convert(source, "fp16",
                                op_class=FORCED.split("=", 1)[1])
    assert report["ops"]["low_precision"] > 0
    converted = str(tmp_path / "training_model.fp16.onnx")
    onnx.save(model, converted)
    got, stderr = api.train(converted, steps, args=args)
    assert "warning" not in stderr, stderr
    assert [r["loss"] for r in got] == [r["loss"] for r in expected]
    assert not all(r["skipped"] for r in got)
    fp32, _ = api.train(source, steps, args=args)
    assert [r["loss"] for r in got] != [r["loss"] for r in fp32]

    again = str(tmp_path / "twice.onnx")
    proc = subprocess.run([api.find_amp_opt(), converted,
                           f"--amp-pipeline={pipeline}", "-o", again],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "error: the step already has loss scaling (metadata " \
        "amp_opt.loss_scaling: amp-opt converted it before)" in proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    assert not os.path.exists(again)


def preview_training_step(batch=64, features=32, hidden=64, classes=8):
    """A training step in ONNX's preview-training ops: an MLP whose
    Gradient node differentiates a mean squared error (ReduceMean over a
    square) into two weight gradients, and a Momentum node that updates
    the weights and their velocities."""
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    rng = np.random.default_rng(0)
    node = helper.make_node
    preview = "ai.onnx.preview.training"
    nodes = [
        node("MatMul", ["x", "w1"], ["h"]), node("Relu", ["h"], ["a"]),
        node("MatMul", ["a", "w2"], ["o"]), node("Sub", ["o", "t"], ["e"]),
        node("Mul", ["e", "e"], ["e2"]),
        node("ReduceMean", ["e2"], ["loss"], keepdims=0),
        node("Gradient", ["x", "t", "w1", "w2"], ["dw1", "dw2"],
             domain=preview, xs=["w1", "w2"], y="loss"),
        node("Momentum", ["lr", "step", "w1", "w2", "dw1", "dw2", "v1",
                          "v2"], ["w1.new", "w2.new", "v1.new", "v2.new"],
             domain=preview, alpha=0.9, beta=1.0, mode="standard",
             norm_coefficient=0.0)]
    shapes = {"w1": [features, hidden], "w2": [hidden, classes],
              "v1": [features, hidden], "v2": [hidden, classes]}
    initializers = [
        numpy_helper.from_array(
            (rng.standard_normal(shapes[name]) * 0.2).astype(np.float32)
            if name.startswith("w") else
            np.zeros(shapes[name], np.float32), name)
        for name in shapes] + [
        numpy_helper.from_array(np.array(0.05, np.float32), "lr"),
        numpy_helper.from_array(np.array(1, np.int64), "step")]
    info = helper.make_tensor_value_info
    float32 = TensorProto.FLOAT
    inputs = [info("x", float32, [batch, features]),
              info("t", float32, [batch, classes])] + [
        info(name, float32, shape) for name, shape in shapes.items()] + [
        info("lr", float32, []), info("step", TensorProto.INT64, [])]
    outputs = [info("loss", float32, [])] + [
        info(f"{name}.new", float32, shape)
        for name, shape in shapes.items()]
    graph = helper.make_graph(nodes, "preview_step", inputs, outputs,
                              initializers)
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(preview, 1)])


def test_preview_training_step_trains_converted(tmp_path):
    """ONNX's preview-training step (Gradient of a ReduceMean loss,
    Momentum) through the paths a user runs: amp-run trains it (the loss
    falls), with --amp-pipeline in FP16 as in FP32 within 0.1%, and
    amp-opt's FP16 file, run as it is, gives the in-process FP16 losses
    bit for bit: the analysis takes the loss from the Gradient's scaled y
    and the updates from the outputs that skip on overflow, and counts
    each parameter once."""
    from amp_opt import api
    source = str(tmp_path / "preview_step.onnx")
    onnx.save(preview_training_step(), source)
    remark = subprocess.run(
        [api.find_amp_opt(), source, "--amp-analyze-training=remarks=true",
         "-o", os.devnull], capture_output=True, text=True).stderr
    assert "onnx.gradient: loss 'loss', 0 seeds, 2 parameters with " \
        "gradients, 4 updates" in remark, remark
    steps = 6
    pipeline = "precision=fp16 op-class=MatMul:always"
    fp32, _ = api.train(source, steps)
    expected, _ = api.train(source, steps, amp_pipeline=pipeline)
    model, report = api.convert(source, "fp16", op_class="MatMul:always")
    assert report["ops"]["low_precision"] > 0
    converted = str(tmp_path / "preview_step.fp16.onnx")
    onnx.save(model, converted)
    got, stderr = api.train(converted, steps)
    assert "warning" not in stderr, stderr
    losses = [r["loss"] for r in got]
    assert losses == [r["loss"] for r in expected]
    assert losses[-1] < 0.8 * losses[0]
    assert losses != [r["loss"] for r in fp32]
    import numpy as np
    np.testing.assert_allclose(losses, [r["loss"] for r in fp32], rtol=1e-3)


def test_converted_artifact_runs_with_its_optimizer_graph(tmp_path):
    """ONNX Runtime's test artifact, converted by amp-opt and run as it is
    with its AdamW optimizer graph (amp-run --optimizer, as the training
    API runs the two): the optimizer reads the unscaled gradients the
    accumulators read, not the scaled FP16 values named `<P>_grad`, and the
    losses are amp-run's in-process --amp-pipeline's bit for bit. With a
    scale that overflows at every step, the optimizer's updates are
    skipped, as the training API's caller skips its optimizer step: the
    weights, moments and step count stay as they were."""
    import numpy as np
    from amp_opt import api
    folder = os.path.join(CORPUS, "external", "onnxruntime_onnxruntime-qnn",
                          "onnxruntime", "test", "testdata", "training_api")
    source = os.path.join(folder, "training_model.onnx")
    if not os.path.isfile(source):
        pytest.skip(f"{source} is absent (../shared/corpus)")
    args = ["--optimizer", os.path.join(folder, "adamw.onnx"),
            "--learning-rate", "0.001", "--dim", "input-0_dim0=4",
            "--dim", "input-0_dim1=784", "--dim", "output-0_dim0=4"]
    forced = "op-class=Gemm:always,MatMul:always"
    for scale in ("65536", "1e30"):
        pipeline = f"precision=fp16 {forced} init-scale={scale}"
        expected, _ = api.train(source, 4, amp_pipeline=pipeline, args=args)
        converted = str(tmp_path / f"training_model.{scale}.onnx")
        proc = subprocess.run([api.find_amp_opt(), source,
                               f"--amp-pipeline={pipeline}", "-o",
                               converted], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        got, stderr = api.train(converted, 4, args=args)
        assert "warning" not in stderr, stderr
        assert [r["loss"] for r in got] == [r["loss"] for r in expected]
        skipped = [r["skipped"] for r in got]
        assert skipped == [scale == "1e30"] * 4
    assert got[-1]["loss"] == got[0]["loss"]
    states = {}
    for steps in (1, 3):
        folder_out = tmp_path / f"after{steps}"
        api.train(converted, steps, args=args + ["--save-outputs",
                                                 str(folder_out)])
        states[steps] = {f: np.load(folder_out / f)
                         for f in os.listdir(folder_out)}
    assert states[3]["step.updated.npy"].item() == 1
    for name in ("fc1.weight.updated.npy", "fc1.weight.momentum0.updated.npy",
                 "fc2.bias.momentum1.updated.npy"):
        np.testing.assert_array_equal(states[3][name], states[1][name],
                                      err_msg=name)
