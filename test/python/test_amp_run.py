"""amp-run: the CPU executor is the numerics oracle (docs/AmpRun.md).

- FP32: the first step of every zoo training graph agrees with ONNX
  Runtime on the loss and on every updated tensor within 1e-5.
- 200 steps from one seed in FP32, FP16 (dynamic loss scaling) and BF16:
  losses decrease, stay finite, and each AMP run's final loss is within 2%
  of FP32's after as many applied updates (amp_opt.numerics).
- An overflowing loss scale makes the scaler skip steps and recover.
- The small ONNX Runtime training artifacts of the corpus train too: with
  host SGD, or with their own optimizer graph (--optimizer): AdamOptimizer
  nodes, or one AdamWOptimizer over sequences.
"""
import glob
import os
import re

import numpy as np
import onnx
import pytest

from amp_opt import api, numerics, ort, zoo

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared",
                                       "corpus", "external"))
ARTIFACT = os.path.join(CORPUS, "onnxruntime_onnxruntime-qnn", "onnxruntime",
                        "test", "testdata", "training_api",
                        "training_model.onnx")
ARTIFACT_DIMS = ["--dim", "input-0_dim0=4", "--dim", "input-0_dim1=784",
                 "--dim", "output-0_dim0=4"]
# Its optimizer graph: one AdamWOptimizer over sequences (params,
# gradients, moments) that amp-run builds as the training API does.
ADAMW_ARGS = ["--optimizer", os.path.join(os.path.dirname(ARTIFACT),
                                          "adamw.onnx"),
              "--learning-rate", "0.0001"] + ARTIFACT_DIMS
PARAMETERS = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
# The older training API pair: a gradient graph (InPlaceAccumulator v1) and
# an optimizer graph of AdamOptimizer nodes, both opset 12.
OLD_API = os.path.join(CORPUS, "onnxruntime_onnxruntime-qnn@8890461",
                       "onnxruntime", "test", "testdata", "training_api")
OLD_API_DIMS = ["--dim", "input1_dim0=4", "--dim", "input1_dim1=784",
                "--dim", "output-0_dim0=4", "--learning-rate", "0.0001"]
OLD_API_ARGS = ["--optimizer", os.path.join(OLD_API, "optimizer_graph.onnx")
                ] + OLD_API_DIMS
# The graphs of the numerics proof (the MLP, CNN, transformer, GPT).
PROOF = [("mlp", "sgd"), ("cnn", "sgd"), ("transformer", "adam"),
         ("gpt", "adam")]
# amp-run's compile-time line: loop nests, parts, parts from the cache.
JIT_LINE = re.compile(r"JIT [\d.]+ s \((\d+) loop nests compiled as "
                      r"functions; (\d+) parts, (\d+) from the cache")


@pytest.fixture
def steps(zoo_steps):
    return zoo_steps


def run_beside_onnx_runtime(path, tmp_path):
    """One amp-run step of `path` and ONNX Runtime's on the same inputs:
    (the inputs amp-run fed, the folder of its outputs, ORT's outputs)."""
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    _, log = api.train(path, 1, args=["--save-inputs", str(inputs),
                                      "--save-outputs", str(outputs)])
    # LLVM compiled the step's loop nests as functions of their own.
    assert int(JIT_LINE.search(log)[1]) > 0
    feeds = {os.path.basename(f)[:-4]: np.load(f)
             for f in glob.glob(str(inputs / "*.npy"))}
    return feeds, outputs, ort.run(path, feeds)


def assert_matches_reference(actual, expected, relative, name):
    """`actual` within `relative` times the largest magnitude of
    `expected` (at least 1), element by element."""
    tolerance = relative * max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tolerance,
                               err_msg=name)


def updated_parameters(path):
    """Names of the outputs that are Adam-updated parameters: m / sqrt(v)
    normalizes each gradient, so a gradient that is rounding noise (the
    key bias of attention has none) moves its parameter by a full step
    either way; those are compared through Adam's state instead."""
    import json
    model = onnx.load(path)
    meta = {p.key: p.value for p in model.metadata_props}
    optimizer = json.loads(meta["amp_opt.optimizer"])["type"]
    if optimizer != "adam":
        return set()
    return {p["updated"] for p in json.loads(meta["amp_opt.parameters"])}


@pytest.mark.parametrize("name", zoo.MODELS)
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_fp32_step_matches_onnx_runtime(name, optimizer, steps, tmp_path,
                                        needs_ort):
    path = steps[name, optimizer]
    _, outputs, reference = run_beside_onnx_runtime(path, tmp_path)
    skip = updated_parameters(path)
    compared = 0
    for output, expected in reference.items():
        actual = api.load_saved(outputs, output)
        assert actual.shape == expected.shape, output
        if output in skip:
            continue
        assert_matches_reference(actual, expected, 1e-5, output)
        compared += 1
    assert compared >= len(reference) // 2
    print(f"{name}_{optimizer}: loss {float(np.load(outputs / 'loss.npy'))} "
          f"= ORT {float(reference['loss'])}; {compared} outputs within 1e-5")


def test_f64_step_accumulates_in_f64(tmp_path, needs_ort):
    """An f64 graph keeps f64 through GEMMs, reductions and the loss: its
    step agrees with ONNX Runtime far below f32's resolution (ONNX Runtime
    has no f64 Conv or Erf, so the MLP is the graph)."""
    import torch
    path = str(tmp_path / "mlp_sgd_f64.onnx")
    zoo.export("mlp", "sgd", path, dtype=torch.float64)
    feeds, outputs, reference = run_beside_onnx_runtime(path, tmp_path)
    for output, expected in reference.items():
        actual = api.load_saved(outputs, output)
        assert actual.dtype == expected.dtype, output
        assert_matches_reference(actual, expected, 1e-12, output)
    # The loss is eager float64's (torch.onnx wrote its mean in float32
    # when the default dtype was float32).
    model, _, _, loss_fn = zoo.build("mlp")
    eager = loss_fn(model.double()(torch.from_numpy(feeds["input0"])),
                    torch.from_numpy(feeds["target0"]))
    assert float(api.load_saved(outputs, "loss")) == pytest.approx(
        float(eager), rel=1e-12)


@pytest.mark.parametrize("name,optimizer", PROOF)
def test_amp_tracks_fp32_for_200_steps(name, optimizer, steps):
    curves = numerics.run_precisions(steps[name, optimizer], 200)
    summary = numerics.summarize(curves)
    for precision, row in summary.items():
        print(f"{name}_{optimizer} {precision}: {row['first']:.6g} -> "
              f"{row['final']:.6g} (FP32 {row['reference']:.6g}, gap "
              f"{100 * row['gap']:.3f}%, {row['skipped']} skipped)")
        assert row["finite"], precision
        assert row["final"] < row["first"], precision
        assert row["gap"] <= 0.02, (precision, row)
    # BF16 needs no loss scaling, so it never skips.
    assert summary["bf16"]["skipped"] == 0


def test_fp32_pipeline_trains_exactly_as_the_step(steps):
    """--amp-pipeline="precision=fp32" runs the training analysis and the
    report but converts nothing: the losses equal those of the step run as
    it is, bit for bit, and they move."""
    path = steps["transformer", "sgd"]
    plain, _ = api.train(path, 5)
    piped, _ = api.train(path, 5, "precision=fp32")
    assert [r["loss"] for r in piped] == [r["loss"] for r in plain]
    assert plain[-1]["loss"] != plain[0]["loss"]
    assert all(r["loss_scale"] == 1 for r in piped)


def test_scaler_skips_overflowing_steps_and_recovers(steps):
    options = f"precision=fp16 {numerics.FORCED} init-scale=1099511627776"  # 2^40
    records, _ = api.train(steps["mlp", "sgd"], 40, options)
    skipped = [r["skipped"] for r in records]
    assert skipped[0], "a scale of 2^40 overflows FP16 gradients"
    first_clean = skipped.index(False)
    # Each skipped step halves the scale and leaves the parameters alone.
    for before, after in zip(records[:first_clean], records[1:first_clean]):
        assert after["loss_scale"] == pytest.approx(before["loss_scale"] / 2,
                                                    rel=1e-7)
        assert after["loss"] == before["loss"]
    assert not any(skipped[first_clean:])
    assert records[-1]["loss"] < records[first_clean]["loss"]
    print(f"skipped {first_clean} steps, then trained at scale "
          f"{records[first_clean]['loss_scale']}")


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_onnx_runtime_artifact_trains():
    curves = numerics.run_precisions(
        ARTIFACT, 200, args=ARTIFACT_DIMS + ["--sgd-lr", "0.01"])
    summary = numerics.summarize(curves)
    for precision, row in summary.items():
        print(f"training_model.onnx {precision}: {row['first']:.6g} -> "
              f"{row['final']:.6g} (gap {100 * row['gap']:.3f}%)")
        assert row["finite"] and row["final"] < row["first"], precision
        assert row["gap"] <= 0.02, (precision, row)


@pytest.mark.skipif(not os.path.isdir(OLD_API),
                    reason=f"the corpus is absent ({OLD_API})")
def test_optimizer_graph_applies_adam(tmp_path):
    """One step of gradient graph + optimizer graph: each parameter moves
    as ONNX Runtime's AdamOptimizer (weight_decay_mode 1) moves it, given
    the accumulated gradient the step computed."""
    api.train(os.path.join(OLD_API, "gradient_graph.onnx"), 1,
              args=OLD_API_ARGS + ["--save-inputs", str(tmp_path / "in"),
                                   "--save-outputs", str(tmp_path / "out")])
    def load(folder, name):
        return np.load(tmp_path / folder / f"{name}.npy")

    lr, step = float(load("in", "learning_rate")[0]), int(load("in", "step")[0])
    assert step == 1
    alpha, beta, epsilon = 0.9, 0.999, 1e-6
    for name in ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]:
        weight = load("in", name).astype(np.float64)
        gradient = load("out", f"{name}_grad.accumulation.out")
        m = (1 - alpha) * gradient
        v = (1 - beta) * gradient * gradient
        step_size = lr * np.sqrt(1 - beta ** step) / (1 - alpha ** step)
        expected = weight - step_size * m / (np.sqrt(v) + epsilon)
        np.testing.assert_allclose(load("out", f"{name}.out"), expected,
                                   rtol=0, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(load("out", f"{name}.exp_avg.out"), m,
                                   rtol=1e-6, atol=1e-12, err_msg=name)


@pytest.mark.skipif(not os.path.isdir(OLD_API),
                    reason=f"the corpus is absent ({OLD_API})")
def test_overflow_skips_the_optimizer_graph(tmp_path):
    """amp-analyze-training pairs AdamOptimizer's outputs with the weights,
    moments and step count they replace, so dynamic loss scaling keeps all
    of them after an overflow (an infinite input): the step count stays 1
    and the moments 0, rather than the optimizer stepping on zeros."""
    x = np.zeros((4, 784), np.float32)
    x[0, 0] = np.inf
    np.save(tmp_path / "x.npy", x)
    records, _ = api.train(
        os.path.join(OLD_API, "gradient_graph.onnx"), 2,
        amp_pipeline="precision=fp16",
        args=OLD_API_ARGS + ["--input", f"input1={tmp_path / 'x.npy'}",
                             "--save-inputs", str(tmp_path / "in"),
                             "--save-outputs", str(tmp_path / "out")])
    assert [r["skipped"] for r in records] == [True, True]
    assert records[1]["loss_scale"] < records[0]["loss_scale"]
    for name in ["fc1.weight", "fc2.bias"]:
        np.testing.assert_array_equal(
            np.load(tmp_path / "out" / f"{name}.out.npy"),
            np.load(tmp_path / "in" / f"{name}.npy"))
        assert np.load(tmp_path / "out" / f"{name}.step.out.npy")[0] == 1
        assert not np.load(tmp_path / "out" / f"{name}.exp_avg.out.npy").any()


@pytest.mark.skipif(not os.path.isdir(OLD_API),
                    reason=f"the corpus is absent ({OLD_API})")
def test_onnx_runtime_optimizer_graph_trains():
    curves = numerics.run_precisions(
        os.path.join(OLD_API, "gradient_graph.onnx"), 200, args=OLD_API_ARGS)
    summary = numerics.summarize(curves)
    for precision, row in summary.items():
        print(f"gradient_graph + optimizer_graph {precision}: "
              f"{row['first']:.6g} -> {row['final']:.6g} "
              f"(gap {100 * row['gap']:.3f}%)")
        assert row["finite"] and row["final"] < 0.1 * row["first"], precision
        assert row["gap"] <= 0.02, (precision, row)
    # Opset 12's Gemm has no bfloat16, so the BF16 policy keeps it FP32.
    assert [r["loss"] for r in curves["bf16"]] == \
        [r["loss"] for r in curves["fp32"]]
    assert summary["fp16"]["final"] != summary["fp32"]["final"]


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_params_npz_replaces_generated_values(tmp_path):
    """--params loads every input of the artifact from numpy.savez: a run
    with another seed then starts from the first run's values exactly."""
    saved = tmp_path / "in"
    first, _ = api.train(ARTIFACT, 2, args=ARTIFACT_DIMS + [
        "--sgd-lr", "0.01", "--save-inputs", str(saved)])
    arrays = {os.path.basename(f)[:-4]: np.load(f)
              for f in glob.glob(str(saved / "*.npy"))}
    assert {"fc1.weight", "fc2.bias"} <= set(arrays)
    np.savez(tmp_path / "params.npz", **arrays)
    again, _ = api.train(ARTIFACT, 2, seed=7, args=ARTIFACT_DIMS + [
        "--sgd-lr", "0.01", "--params", str(tmp_path / "params.npz")])
    other, _ = api.train(ARTIFACT, 1, seed=7, args=ARTIFACT_DIMS)
    assert [r["loss"] for r in again] == [r["loss"] for r in first]
    assert other[0]["loss"] != first[0]["loss"]


def test_a_loss_that_is_not_finite_is_a_warning(tmp_path):
    """A KL divergence takes the log of its target: from amp-run's N(0, 1)
    target the loss is NaN, and one warning names the drawn inputs. With
    probabilities given through --input the loss is finite and falls, and
    nothing is said."""
    import torch
    import torch.nn.functional as F
    from amp_opt import export_training_step
    torch.manual_seed(0)
    path = str(tmp_path / "kl.onnx")

    def loss_fn(output, target):
        return F.kl_div(F.log_softmax(output, -1), target,
                        reduction="batchmean")
    export_training_step(torch.nn.Linear(6, 4), (torch.randn(5, 6),),
                         (F.softmax(torch.randn(5, 4), -1),), loss_fn, path,
                         lr=0.5)
    records, log = api.train(path, 3)
    assert [r["loss"] for r in records] == [None] * 3
    assert log.count("warning: step 1: the loss is NaN; amp-run drew input0, "
                     "target0 from N(0, 1)") == 1, log
    np.save(tmp_path / "target.npy",
            torch.softmax(torch.randn(5, 4), -1).numpy())
    records, log = api.train(path, 3, args=[
        "--input", f"target0={tmp_path / 'target.npy'}"])
    losses = [r["loss"] for r in records]
    assert None not in losses and losses[-1] < losses[0], losses
    assert "the loss is" not in log


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_adamw_graph_updates_as_onnx_runtime(tmp_path):
    """One step of training_model.onnx + adamw.onnx: every parameter and
    both moments move as ONNX Runtime's AdamWOptimizer (adam_mode 1,
    correct_bias) moves them given the step's gradient, starting from zero
    moments at step 1; the step count becomes 2."""
    api.train(ARTIFACT, 1, args=ADAMW_ARGS + [
        "--save-inputs", str(tmp_path / "in"),
        "--save-outputs", str(tmp_path / "out")])

    def load(folder, name):
        return np.load(tmp_path / folder / f"{name}.npy").astype(np.float64)

    lr, step = load("in", "learning_rate")[0], load("in", "step")[0]
    assert step == 1 and load("out", "step.updated")[0] == 2
    # The attributes' float32 values.
    alpha, beta, epsilon = (float(np.float32(v)) for v in (0.9, 0.999, 1e-6))
    for name in PARAMETERS:
        assert not load("in", f"{name}.momentum0").any()
        gradient = load("out", f"{name}_grad.accumulation.buffer.updated")
        m = (1 - alpha) * gradient
        v = (1 - beta) * gradient * gradient
        rate = lr * np.sqrt(1 - beta ** step) / (1 - alpha ** step)
        expected = load("in", name) - rate * m / (np.sqrt(v) + epsilon)
        np.testing.assert_allclose(load("out", f"{name}.updated"), expected,
                                   rtol=0, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(load("out", f"{name}.momentum0.updated"),
                                   m, rtol=1e-6, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(load("out", f"{name}.momentum1.updated"),
                                   v, rtol=1e-6, atol=1e-14, err_msg=name)


def sequence_optimizer_graph(path, optimizer, max_norm=None):
    """An optimizer graph as ONNX Runtime's onnxblock writes one (optim.py):
    inputs learning_rate, step, params, gradients and first_order_moments
    (and second_order_moments for AdamW), an optional InplaceClipGradNorm
    of the gradients, then SGDOptimizerV2(learning_rate, params,
    gradients) or AdamWOptimizer."""
    ms = "com.microsoft"
    info = onnx.helper.make_tensor_value_info
    sequence = onnx.helper.make_tensor_sequence_value_info
    moments = ["first_order_moments"]
    if optimizer == "adamw":
        moments.append("second_order_moments")
    inputs = [info("learning_rate", onnx.TensorProto.FLOAT, [1]),
              info("step", onnx.TensorProto.INT64, [1])]
    inputs += [sequence(name, onnx.TensorProto.FLOAT, None)
               for name in ["params", "gradients"] + moments]
    nodes, gradients = [], "gradients"
    if max_norm is not None:
        nodes.append(onnx.helper.make_node(
            "InplaceClipGradNorm", ["gradients"], ["clipped"], domain=ms,
            max_norm=max_norm))
        gradients = "clipped"
    if optimizer == "sgd":
        nodes.append(onnx.helper.make_node(
            "SGDOptimizerV2", ["learning_rate", "params", gradients],
            ["update_completed"], domain=ms))
    else:
        nodes.append(onnx.helper.make_node(
            "AdamWOptimizer", ["learning_rate", "step", "params", gradients]
            + moments, ["update_completed"], domain=ms, alpha=0.9,
            beta=0.999, epsilon=1e-6, weight_decay=0.0, correct_bias=1,
            adam_mode=1))
    graph = onnx.helper.make_graph(
        nodes, "optimizer", inputs,
        [info("update_completed", onnx.TensorProto.BOOL, [1])])
    model = onnx.helper.make_model(graph, opset_imports=[
        onnx.helper.make_opsetid("", 19), onnx.helper.make_opsetid(ms, 1)])
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
@pytest.mark.parametrize("max_norm", [None, 0.05])
def test_sgd_graph_updates_as_onnx_runtime(max_norm, tmp_path):
    """ONNX Runtime's SGD optimizer graph (SGDOptimizerV2 over sequences,
    optionally after InplaceClipGradNorm): one step moves every parameter
    by -lr times its gradient, scaled by min(max_norm / (norm + 1e-6), 1)
    for the norm of all gradients together; inputs no node reads (step,
    first_order_moments) get no value. Without clipping, 20 steps follow
    amp-run's host SGD."""
    sgd = sequence_optimizer_graph(tmp_path / "sgd.onnx", "sgd", max_norm)
    args = ["--optimizer", sgd, "--learning-rate", "0.01"] + ARTIFACT_DIMS
    api.train(ARTIFACT, 1, args=args + [
        "--save-inputs", str(tmp_path / "in"),
        "--save-outputs", str(tmp_path / "out")])

    def load(folder, name):
        return np.load(tmp_path / folder / f"{name}.npy").astype(np.float64)

    assert not (tmp_path / "in" / "step.npy").exists()
    assert not (tmp_path / "in" / "fc1.weight.momentum0.npy").exists()
    gradients = {name: load("out", f"{name}_grad.accumulation.buffer.updated")
                 for name in PARAMETERS}
    norm = np.sqrt(sum((g * g).sum() for g in gradients.values()))
    scale = 1.0 if max_norm is None else min(max_norm / (norm + 1e-6), 1.0)
    if max_norm is not None:
        assert scale < 0.5, norm  # the test clips
    for name in PARAMETERS:
        expected = load("in", name) - 0.01 * scale * gradients[name]
        np.testing.assert_allclose(load("out", f"{name}.updated"), expected,
                                   rtol=0, atol=1e-7, err_msg=name)
    if max_norm is None:
        graph, _ = api.train(ARTIFACT, 20, args=args)
        host, _ = api.train(ARTIFACT, 20,
                            args=["--sgd-lr", "0.01"] + ARTIFACT_DIMS)
        np.testing.assert_allclose([r["loss"] for r in graph],
                                   [r["loss"] for r in host], rtol=1e-6)
        assert graph[-1]["loss"] < graph[0]["loss"]


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_clipped_adamw_graph_trains_in_fp16(tmp_path):
    """AdamW after InplaceClipGradNorm, as generate_artifacts writes it with
    clip_grad: the analysis sees through the clip to the gradients (loss
    scaling unscales before it), and FP16 follows FP32."""
    adamw = sequence_optimizer_graph(tmp_path / "adamw.onnx", "adamw", 1.0)
    args = ["--optimizer", adamw, "--learning-rate", "0.001"] + ARTIFACT_DIMS
    fp32, _ = api.train(ARTIFACT, 30, args=args)
    fp16, _ = api.train(ARTIFACT, 30, amp_pipeline=f"precision=fp16 "
                        f"{numerics.FORCED}", args=args)
    losses32 = [r["loss"] for r in fp32]
    losses16 = [r["loss"] for r in fp16]
    assert losses32[-1] < 0.5 * losses32[0], losses32
    assert fp16[0]["loss_scale"] > 1
    assert losses16 != losses32
    np.testing.assert_allclose(losses16, losses32, rtol=0.02)


@pytest.mark.skipif(not os.path.isdir(OLD_API),
                    reason=f"the corpus is absent ({OLD_API})")
def test_adamw_graph_trains_as_adam_optimizer_graph():
    """The older API's two optimizer graphs for one gradient graph, AdamW
    over a gradient sequence the graph collects itself and one
    AdamOptimizer per parameter, with the same hyperparameters (mode 1, no
    weight decay), give the same losses."""
    adamw, _ = api.train(
        os.path.join(OLD_API, "gradient_graph.onnx"), 20,
        args=["--optimizer", os.path.join(OLD_API, "adamw.onnx")] +
        OLD_API_DIMS)
    adam, _ = api.train(os.path.join(OLD_API, "gradient_graph.onnx"), 20,
                        args=OLD_API_ARGS)
    assert [r["loss"] for r in adamw] == [r["loss"] for r in adam]
    assert adamw[-1]["loss"] < 0.5 * adamw[0]["loss"]


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_onnx_runtime_adamw_graph_trains():
    curves = numerics.run_precisions(ARTIFACT, 200, args=ADAMW_ARGS)
    summary = numerics.summarize(curves)
    for precision, row in summary.items():
        print(f"training_model + adamw {precision}: {row['first']:.6g} -> "
              f"{row['final']:.6g} (gap {100 * row['gap']:.3f}%)")
        assert row["finite"] and row["final"] < 0.1 * row["first"], precision
        assert row["gap"] <= 0.02, (precision, row)
    assert summary["bf16"]["final"] != summary["fp32"]["final"]


@pytest.mark.skipif(not os.path.exists(ARTIFACT),
                    reason=f"the corpus is absent ({ARTIFACT})")
def test_overflow_skips_the_adamw_graph(tmp_path):
    """amp-analyze-training pairs each `<input>.updated` output that amp-run
    gives AdamW's in-place updates with its input, so after an overflow
    dynamic loss scaling keeps the weights, the moments and the step."""
    x = np.zeros((4, 784), np.float32)
    x[0, 0] = np.inf
    np.save(tmp_path / "x.npy", x)
    records, _ = api.train(
        ARTIFACT, 2, amp_pipeline="precision=fp16",
        args=ADAMW_ARGS + ["--input", f"input-0={tmp_path / 'x.npy'}",
                           "--save-inputs", str(tmp_path / "in"),
                           "--save-outputs", str(tmp_path / "out")])
    assert [r["skipped"] for r in records] == [True, True]
    assert np.load(tmp_path / "out" / "step.updated.npy")[0] == 1
    for name in PARAMETERS:
        np.testing.assert_array_equal(
            np.load(tmp_path / "out" / f"{name}.updated.npy"),
            np.load(tmp_path / "in" / f"{name}.npy"))
        assert not np.load(
            tmp_path / "out" / f"{name}.momentum1.updated.npy").any()


def test_jit_parts_threads_and_cache_compute_the_same_step(steps, tmp_path):
    """The JIT compiles a step in parts on threads (amp::StepJIT): one
    thread, two, every part from the cache and a part compiled again after
    its cache file was damaged give the same bits on every output; a cache
    directory that cannot be made is a warning, and an LLVM option on the
    command line turns the cache and threads off."""
    path = steps["cnn", "sgd"]
    cache = tmp_path / "cache"
    results = []

    def run(name, *args):
        out = tmp_path / name
        records, log = api.train(path, 2, args=["--save-outputs", str(out),
                                                *args])
        outputs = {os.path.basename(f): np.load(f)
                   for f in glob.glob(str(out / "*.npy"))}
        results.append((name, [r["loss"] for r in records], outputs))
        match = JIT_LINE.search(log)
        return int(match[2]), int(match[3]), log

    parts, cached, log = run("one thread", "--jit-threads=1",
                             "--jit-cache=none")
    # The entry's part and the loop nests' (the zoo CNN's 329 in three).
    assert parts >= 3 and cached == 0 and "1 thread; no cache)" in log
    assert run("two threads, cold cache", "--jit-threads=2",
               f"--jit-cache={cache}")[:2] == (parts, 0)
    files = sorted(cache.glob("llvmcache-*"))
    assert len(files) == parts
    assert run("warm cache", f"--jit-cache={cache}")[:2] == (parts, parts)
    # A flipped byte: that part is compiled again and written back whole.
    damaged = bytearray(files[0].read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    files[0].write_bytes(bytes(damaged))
    assert run("damaged entry", f"--jit-cache={cache}")[:2] == (parts,
                                                                  parts - 1)
    assert run("repaired", f"--jit-cache={cache}")[:2] == (parts, parts)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    _, cached, log = run("no cache directory",
                         f"--jit-cache={blocker / 'cache'}")
    assert cached == 0
    assert re.search(r"amp-run: warning: JIT cache: cannot create .*a_file/"
                     r"cache: .*; compiled without it", log), log
    _, cached, log = run("LLVM option", f"--jit-cache={cache}",
                         "--combiner-store-merging=false")
    assert cached == 0 and log.count("1 thread; no cache or threads: "
                                     "--combiner-store-merging given") == 1

    name, losses, outputs = results[0]
    assert losses[0] != losses[1] and len(outputs) > 10
    for other, other_losses, other_outputs in results[1:]:
        assert other_losses == losses, other
        assert outputs.keys() == other_outputs.keys(), other
        for key, value in outputs.items():
            assert np.array_equal(value, other_outputs[key],
                                  equal_nan=True), (other, key)
