"""Does mixed-precision training track FP32? Runs a training step with
amp-run in FP32, FP16 (dynamic loss scaling) and BF16 from one seed and
compares the loss curves (docs/AmpRun.md, bench/amp_run_numerics.py).

A step that dynamic loss scaling skipped applies no update, so an AMP run's
final loss is compared with FP32's loss after the same number of applied
updates: a run that skipped k of n steps is compared with FP32's step n-k.
"""
import math

from . import api

# Every GEMM and convolution in low precision, so that the small zoo models
# train in FP16/BF16 whatever the cost model says about their size.
FORCED = "op-class=Gemm:always,MatMul:always,Conv:always,ConvTranspose:always"

PRECISIONS = {
    "fp32": None,
    "fp16": f"precision=fp16 {FORCED}",
    "bf16": f"precision=bf16 {FORCED}",
}


def run_precisions(path, steps, seed=0, args=()):
    """{precision: per-step records} for FP32, FP16 and BF16."""
    return {name: api.train(path, steps, pipeline, seed=seed, args=args)[0]
            for name, pipeline in PRECISIONS.items()}


def summarize(curves):
    """Per precision: first and final loss, skipped steps, whether every
    loss is finite, and the relative gap of the final loss to FP32's after
    as many applied updates."""
    fp32 = [r["loss"] for r in curves["fp32"]]
    summary = {}
    for name, records in curves.items():
        losses = [r["loss"] for r in records]
        skipped = sum(bool(r["skipped"]) for r in records)
        finite = all(x is not None and math.isfinite(x) for x in losses)
        reference = fp32[len(losses) - 1 - skipped]
        gap = (abs(losses[-1] - reference) / abs(reference)
               if finite and reference else float("nan"))
        summary[name] = {"first": losses[0], "final": losses[-1],
                         "skipped": skipped, "finite": finite,
                         "reference": reference, "gap": gap}
    return summary
