"""Loss scaling in ONNX Runtime: the zoo's training steps converted with
--amp-pipeline="precision=fp16" run one step within FP16 tolerance of FP32,
and a step whose gradients overflow leaves the parameters and optimizer
state as they were and halves the loss scale (docs/LossScaling.md)."""
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from amp_opt import verify, zoo
from amp_opt.numerics import FORCED

HERE = os.path.dirname(os.path.abspath(__file__))
AMP_OPT = os.path.join(HERE, "..", "..", "build", "bin", "amp-opt")


@pytest.fixture
def steps(zoo_steps):
    return zoo_steps


def convert(path, options, suffix):
    out = path.replace(".onnx", f".{suffix}.onnx")
    proc = subprocess.run([AMP_OPT, path, f"--amp-pipeline={options}", "-o",
                           out], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def data(name):
    _, inputs, targets, _ = zoo.build(name)
    return [t.numpy() for t in inputs], [t.numpy() for t in targets]


def initial_state(path):
    return {init.name: numpy_helper.to_array(init)
            for init in onnx.load(path).graph.initializer}


@pytest.mark.parametrize("name", zoo.MODELS)
def test_fp16_step_tracks_fp32(name, steps, needs_ort):
    path = steps[name, "sgd"]
    inputs, targets = data(name)
    fp32, _ = verify.run_exported(path, inputs, targets, steps=2)
    out = convert(path, f"precision=fp16 {FORCED}", "fp16")
    meta = verify.roles(onnx.load(out))
    assert meta["loss_scaling"]["mode"] == "dynamic"
    fp16, state = verify.run_exported(out, inputs, targets, steps=2)
    print(f"{name}: loss FP32 {fp32}, FP16 {fp16}")
    np.testing.assert_allclose(fp16, fp32, rtol=5e-3)
    # Two clean steps: the scale waits for 2000 of them.
    assert state["amp.loss_scale"] == 65536.0
    assert state["amp.growth_count"] == 2


def assert_skipped(path, inputs, targets, scale):
    before = initial_state(path)
    meta = verify.roles(onnx.load(path))
    kept = [p["name"] for p in meta["parameters"]]
    for p in meta["parameters"]:
        kept += list(p["state"].values())
    if meta["optimizer"].get("step"):
        kept.append(meta["optimizer"]["step"])
    _, after = verify.run_exported(path, inputs, targets, steps=1)
    changed = [k for k in kept if k in before
               and not np.array_equal(before[k], after[k])]
    assert not changed, f"changed after an overflow: {changed}"
    assert after["amp.loss_scale"] == np.float32(scale * 0.5)
    assert after["amp.growth_count"] == 0


# ONNX Runtime's CPU provider has no FP16 Gemm: it runs the MLP's Gemms in
# FP32 and drops the FP32-FP16-FP32 cast pair, so a large scale cannot
# overflow there; the infinite input below covers the MLP.
@pytest.mark.parametrize("name", ["cnn", "transformer", "gpt"])
def test_overflowing_scale_skips_the_step(name, steps, needs_ort):
    out = convert(steps[name, "adam"], f"precision=fp16 {FORCED} "
                  f"init-scale=1e30", "overflow")
    inputs, targets = data(name)
    assert_skipped(out, inputs, targets, 1e30)


@pytest.mark.parametrize("name", zoo.MODELS)
def test_nonfinite_gradient_skips_the_step(name, steps, needs_ort):
    out = convert(steps[name, "adam"], f"precision=fp16 {FORCED}", "fp16")
    inputs, targets = data(name)
    if np.issubdtype(inputs[0].dtype, np.floating):
        inputs[0] = inputs[0].copy()
        inputs[0].flat[0] = np.inf
    else:
        pytest.skip("token inputs cannot be made infinite")
    assert_skipped(out, inputs, targets, 65536.0)


def test_bf16_has_no_loss_scaling(steps):
    out = convert(steps["mlp", "sgd"], f"precision=bf16 {FORCED}", "bf16")
    model = onnx.load(out)
    assert "loss_scaling" not in verify.roles(model)
    assert "amp.loss_scale" not in [i.name for i in model.graph.input]


def test_clipped_gradients_are_unscaled_once(tmp_path, needs_ort):
    """Clipping by the global norm is not linear in the seed: the step
    unscales the loss's gradients before the clipping, as GradScaler's
    unscale_ before clip_grad_norm_. (Unscaling the clipped gradients as
    well divided SGD's updates by the scale: the FP16 loss stood still.)
    The norm bound is below the gradients' norm, so the clipping acts."""
    path = str(tmp_path / "mlp_clipped.onnx")
    zoo.export("mlp", "sgd", path, lr=0.5, clip_grad_norm=0.05)
    proc = subprocess.run([AMP_OPT, path, "--amp-analyze-training"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "not linear" not in proc.stderr, \
        proc.stderr
    inputs, targets = data("mlp")
    fp32, _ = verify.run_exported(path, inputs, targets, steps=3)
    out = convert(path, f"precision=fp16 {FORCED}", "fp16")
    fp16, state = verify.run_exported(out, inputs, targets, steps=3)
    print(f"loss FP32 {fp32}, FP16 {fp16}")
    assert fp32[2] < 0.99 * fp32[0]
    assert state["amp.loss_scale"] == 65536.0
    np.testing.assert_allclose(fp16, fp32, rtol=5e-3)


def test_decomposed_batch_norm_variance_stays_fp32(tmp_path):
    """A training BatchNorm as the exporter writes it squares x - mean with
    a Mul; between FP16 convolutions that Mul is keep-fp32 (a square, as
    Pow). Fed activations of a few thousand, an FP16 square overflows
    (beyond 256): the variance was inf, the normalized values 0, and the
    FP16 step trained another function without a word (loss 2.345 against
    FP32's 2.478). Now its losses are FP32's after as many applied updates
    (dynamic loss scaling skips the first step)."""
    import torch
    from amp_opt import api, export_training_step, numerics
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(), torch.nn.Conv2d(16, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(16, 10))
    x = torch.randn(8, 3, 16, 16) * 3000
    y = torch.randint(0, 10, (8,))
    path = str(tmp_path / "bn.onnx")
    export_training_step(model, (x,), (y,), torch.nn.CrossEntropyLoss(),
                         path, optimizer="sgd", lr=0.01)
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "y.npy", y.numpy())
    args = ["--input", f"input0={tmp_path / 'x.npy'}",
            "--input", f"target0={tmp_path / 'y.npy'}"]
    pipeline = "precision=fp16 op-class=Conv:always,Gemm:always"
    _, report = api.convert(path, "fp16",
                            op_class="Conv:always,Gemm:always")
    decided = [(d["op_type"], d["precision"], d["reason"])
               for d in report["decisions"]
               if d.get("region") == "forward"]
    assert ("Conv", "f16", "policy") in decided
    assert ("Mul", "f32", "keep-fp32") in decided
    steps = 4
    fp32, _ = api.train(path, steps, args=args)
    fp16, _ = api.train(path, steps, amp_pipeline=pipeline, args=args)
    losses16 = [r["loss"] for r in fp16]
    expected = numerics.fp32_losses_after_applied(fp32, fp16)
    print("FP32", [r["loss"] for r in fp32], "\nFP16", losses16)
    assert all(np.isfinite(losses16))
    assert not all(r["skipped"] for r in fp16)
    assert losses16 != [r["loss"] for r in fp32]
    np.testing.assert_allclose(losses16, expected, rtol=1e-3)


def test_scaled_layer_norm_gradient_stays_fp32(tmp_path):
    """A LayerNorm's backward, as the exporter decomposes it, multiplies
    dy * gamma by the row size (512 here) before subtracting the row sums:
    in FP16, with gradients scaled by 65536, that product overflowed and
    dynamic loss scaling skipped steps until the scale had dropped (the
    large zoo GPT skipped its first three steps on an H200 where PyTorch's
    autocast trained). That Mul and what follows it up to the next GEMM
    stay FP32 (gradient-range): the first step applies at 65536 and the
    losses are FP32's."""
    import torch
    from amp_opt import api, export_training_step
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 512), torch.nn.LayerNorm(512), torch.nn.GELU(),
        torch.nn.Linear(512, 512), torch.nn.LayerNorm(512),
        torch.nn.Linear(512, 10))
    x = torch.randn(8, 64)
    y = torch.randint(0, 10, (8,))
    path = str(tmp_path / "ln.onnx")
    export_training_step(model, (x,), (y,), torch.nn.CrossEntropyLoss(),
                         path, optimizer="sgd", lr=0.1)
    _, report = api.convert(path, "fp16", op_class="Gemm:always,MatMul:always")
    ranged = [d for d in report["decisions"]
              if d["reason"] == "gradient-range"]
    assert any(d["op_type"] == "Mul" for d in ranged), report["decisions"]
    assert all(d["precision"] == "f32" and d["region"] == "backward"
               for d in ranged)
    steps = 3
    fp32, _ = api.train(path, steps)
    fp16, _ = api.train(path, steps, amp_pipeline=f"precision=fp16 {FORCED}")
    print("FP32", [r["loss"] for r in fp32],
          "\nFP16", [(r["loss"], r["loss_scale"]) for r in fp16])
    assert not any(r["skipped"] for r in fp16)
    assert fp16[-1]["loss_scale"] == 65536
    assert fp16[-1]["loss"] < 0.9 * fp16[0]["loss"]
    np.testing.assert_allclose([r["loss"] for r in fp16],
                               [r["loss"] for r in fp32], rtol=2e-3)
