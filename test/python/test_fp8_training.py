"""FP8 through the paths a user runs: --amp-pipeline="precision=fp8" on the
zoo's small transformer and GPT steps, trained 20 steps in amp-run with
each recipe next to BF16 (docs/FP8.md). The small models are too small for the cost
model to pick FP8 GEMMs, so fp8=always converts every eligible one; the
report must show FP8 GEMMs, or the comparison proves nothing. ONNX Runtime
runs the exported FP8 steps as amp-run does."""
import json
import os
import subprocess

import numpy as np
import pytest

from amp_opt import api

STEPS = 20


def fp8_report(path, options, tmp_path):
    report = tmp_path / "report.json"
    subprocess.run([api.find_amp_opt(), path, "-o", os.devnull,
                    f"--amp-pipeline=precision=fp8 {options} "
                    f"report={report}"], check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


@pytest.mark.parametrize("recipe", ["delayed", "current", "block"])
@pytest.mark.parametrize("name", ["transformer", "gpt"])
def test_fp8_step_trains_next_to_bf16(name, recipe, zoo_steps, tmp_path):
    path = zoo_steps[name, "sgd"]
    options = f"fp8=always fp8-recipe={recipe}"
    report = fp8_report(path, options, tmp_path)
    assert report["fp8"]["recipe"] == recipe
    assert report["fp8"]["gemms"] > 0
    formats = {d["formats"]["a"] for d in report["decisions"]
               if d["precision"] == "fp8"}
    # fp8-format=auto: HYBRID (the backward's gradient operands E5M2) for
    # the per-tensor recipes, E4M3 everywhere for block scaling (as TE).
    assert formats == ({"e4m3"} if recipe == "block" else {"e4m3", "e5m2"})
    assert report["fp8"]["format"] == ("e4m3" if recipe == "block"
                                       else "hybrid")
    assert (report["fp8"]["states"] > 0) == (recipe == "delayed")
    # Each FP8 GEMM carries its share of the quantizations it reads: the
    # shares add up to every quantization's time, counted once, and with
    # the other ops and the remaining casts make the step's modeled time.
    gemms = [d for d in report["decisions"] if d["precision"] == "fp8"]
    shares = sum(d["time_us"]["quantize"] for d in gemms)
    assert all(d["time_us"]["quantize"] > 0 for d in gemms)
    times = report["modeled_time_us"]
    assert (times["casts"] > 0) == (report["casts"]["remaining"] > 0)
    assert times["amp"] == pytest.approx(
        sum(d["time_us"]["fp8"] for d in gemms) + shares + times["casts"] +
        sum(d["time_us"][d["precision"] == "f32" and "fp32" or "low"]
            for d in report["decisions"] if d["precision"] != "fp8"),
        rel=1e-6)
    bf16, _ = api.train(path, STEPS, amp_pipeline="precision=bf16")
    fp8, _ = api.train(path, STEPS, amp_pipeline=f"precision=fp8 {options}")
    reference = [r["loss"] for r in bf16]
    losses = [r["loss"] for r in fp8]
    gaps = [abs(a - b) / reference[0] for a, b in zip(losses, reference)]
    print(f"{name} {recipe}: {report['fp8']['gemms']} FP8 GEMMs; loss "
          f"{losses[0]:.5f} -> {losses[-1]:.5f} (BF16 {reference[0]:.5f} -> "
          f"{reference[-1]:.5f}), largest gap {100 * max(gaps):.3f}%")
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]
    # Issue 19's per-step bound (2% of BF16's first loss); its 200-step
    # final-loss bound belongs to the benchmark.
    assert max(gaps) <= 0.02


# TensorProto.FLOAT8E4M3FN from ONNX 1.14 on; Debian's onnx 1.12 has no name.
FLOAT8E4M3FN = 17

# (model, recipe, extra options): every recipe on both models over an FP16
# base (ONNX Runtime's CPU build has no BF16 kernel of a computing op, not
# even Add, and the base converts the ops between the FP8 GEMMs), and one
# with every GEMM forced low.
ORT_CASES = [(name, recipe, "base=fp16") for name in ("transformer", "gpt")
             for recipe in ("delayed", "current", "block")] + [
    ("transformer", "block", "base=fp16 op-class=Gemm:always,MatMul:always")]


@pytest.mark.parametrize("name,recipe,extra", ORT_CASES)
def test_onnx_runtime_runs_the_exported_fp8_step(name, recipe, extra,
                                                 zoo_steps, tmp_path,
                                                 needs_ort):
    """The zoo exports opset 17; the pipeline upgrades it to 19, the FP8
    types' first opset. ONNX Runtime runs the exported step three times,
    carrying parameters and FP8 scaling state, and its losses match
    amp-run's within FP8 tolerance."""
    import onnx
    from amp_opt import verify
    path = zoo_steps[name, "sgd"]
    pipeline = f"precision=fp8 fp8=always fp8-recipe={recipe} {extra}"
    saved = tmp_path / "inputs"
    records, _ = api.train(path, 3, pipeline,
                           args=["--save-inputs", str(saved)])
    exported = tmp_path / "fp8.onnx"
    subprocess.run([api.find_amp_opt(), path, "-o", str(exported),
                    f"--amp-pipeline={pipeline}"], check=True,
                   capture_output=True)
    model = onnx.load(str(exported))
    assert {o.version for o in model.opset_import if o.domain == ""} == {19}
    casts = {a.i for n in model.graph.node if n.op_type == "Cast"
             for a in n.attribute if a.name == "to"}
    assert FLOAT8E4M3FN in casts
    meta = verify.roles(model)

    losses, _ = verify.run_exported(
        str(exported), [api.load_saved(saved, n) for n in meta["inputs"]],
        [api.load_saved(saved, n) for n in meta["targets"]], steps=3)
    expected = [r["loss"] for r in records]
    print(f"{name} {recipe} {extra}: ONNX Runtime {losses}, amp-run "
          f"{expected}")
    # ONNX Runtime's CPU computes the FP16 ops of base=fp16 in FP32 and
    # amp-run rounds them: after three FP8 steps the 7 cases differ by up
    # to 1.4e-3 (transformer, delayed, base=fp16, since the scaled LayerNorm
    # gradients stay FP32), step 1 by at most 8e-4. An export mistake (a
    # lost scale, a wrong FP8 format) moves the loss by far more.
    np.testing.assert_allclose(losses, expected, rtol=2e-3)
    assert losses[-1] < losses[0]


def test_fp8_step_without_our_metadata(zoo_steps, tmp_path):
    """The same transformer step exported the plain way (no amp_opt
    metadata, next_* update names): the training step is found from its
    dataflow, the FP8 GEMMs and their scaling state appear, and amp-run
    trains it exactly as the step with metadata."""
    from amp_opt import zoo
    plain = str(tmp_path / "plain.onnx")
    zoo.export("transformer", "sgd", plain, plain="next")
    options = "precision=fp8 fp8=always"
    report = fp8_report(plain, "fp8=always", tmp_path)
    assert report["training"]["kind"] == "training_step"
    assert report["fp8"]["gemms"] > 0 and report["fp8"]["states"] > 0
    losses = [r["loss"] for r in api.train(plain, 3, options)[0]]
    expected = [r["loss"]
                for r in api.train(zoo_steps["transformer", "sgd"], 3,
                                   options)[0]]
    assert losses == expected
    assert losses[-1] < losses[0]
