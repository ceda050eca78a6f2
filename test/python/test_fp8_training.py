"""FP8 through the paths a user runs: --amp-pipeline="precision=fp8" on the
zoo's small transformer and GPT steps, trained 20 steps in amp-run with
each recipe next to BF16 (docs/FP8.md). The small models are too small for the cost
model to pick FP8 GEMMs, so fp8=always converts every eligible one; the
report must show FP8 GEMMs, or the comparison proves nothing."""
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
    # HYBRID: the backward's gradient operands are E5M2.
    if recipe != "block":
        assert formats == {"e4m3", "e5m2"}
    assert (report["fp8"]["states"] > 0) == (recipe == "delayed")
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


def test_fp8_export_below_opset_19_is_refused(zoo_steps, tmp_path):
    """The zoo exports opset 17, which has no FP8 types: the ONNX export
    refuses with a clear error and writes no file."""
    out = tmp_path / "fp8.onnx"
    proc = subprocess.run(
        [api.find_amp_opt(), zoo_steps["transformer", "sgd"], "-o", str(out),
         "--amp-pipeline=precision=fp8 fp8=always"],
        capture_output=True, text=True)
    assert proc.returncode != 0
    assert "FP8 types need ONNX opset 19 or later; the model imports " \
           "opset 17" in proc.stderr
    assert not out.exists()
