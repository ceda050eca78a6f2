"""Does mixed-precision training track FP32? Runs a training step with
amp-run in FP32, FP16 (dynamic loss scaling) and BF16 from one seed and
compares the loss curves (docs/AmpRun.md, bench/amp_run_numerics.py).

A step that dynamic loss scaling skipped applies no update, so an AMP run's
final loss is compared with FP32's loss after the same number of applied
updates: a run that skipped k of n steps is compared with FP32's step n-k.
"""
import math

import numpy as np

from . import api

# Every GEMM and convolution in low precision, so that the small zoo models
# train in FP16/BF16 whatever the cost model says about their size.
FORCED = "op-class=Gemm:always,MatMul:always,Conv:always,ConvTranspose:always"

# Each precision forced on every eligible op (FP8: every FP8-eligible GEMM),
# with the unit roundoff of its lowest precision: the tolerance of a
# backend (GEMM records, grid loops, the GPU) against the CPU path.
FORCED_PRECISIONS = {"fp32": ("precision=fp32", 1e-5),
                     "fp16": (f"precision=fp16 {FORCED}", 2.0 ** -10),
                     "bf16": (f"precision=bf16 {FORCED}", 2.0 ** -7),
                     "fp8": ("precision=fp8 fp8=always", 2.0 ** -3)}


def why_no_forced_step(model, precision):
    """Why the zoo's `model` has no step in the forced `precision` (above),
    or None when it has one."""
    if model == "cnn" and precision == "fp8":
        return "the CNN has no FP8-eligible GEMM"
    return None


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


def fp32_losses_after_applied(fp32, amp):
    """FP32's loss after as many applied updates as each step of the AMP
    run had (per-step records of amp-run): a step that loss scaling skipped
    applied none."""
    losses = np.array([r["loss"] for r in fp32])
    applied = np.cumsum([0] + [not r["skipped"] for r in amp[:-1]])
    return losses[applied]


def norm_error(got, expected):
    """The norm-wise relative error of `got`."""
    got = np.asarray(got, np.float64)
    expected = np.asarray(expected, np.float64)
    norm = np.linalg.norm(expected)
    difference = np.linalg.norm(got - expected)
    return float(difference / norm if norm else difference)


def backend_mismatch(got, expected, ulp, fp32=None):
    """Why a tensor from another backend (the GPU) is not the CPU path's
    `expected`, or None when it is: every element within two units in the
    last place `ulp` (or 1e-6), or a norm-wise error within one. Beyond
    that it is still another summation order's rounding (cuBLASLt's GEMMs,
    FMAs in kernels) when `got` is no farther from the CPU's FP32 result
    `fp32` than `expected`, the CPU's own run in this precision, is."""
    if np.allclose(np.asarray(got, np.float64),
                   np.asarray(expected, np.float64), rtol=2 * ulp, atol=1e-6):
        return None
    error = norm_error(got, expected)
    if error <= ulp:
        return None
    if fp32 is None:
        return f"norm-wise relative error {error:.3g}"
    drift, own = norm_error(got, fp32), norm_error(expected, fp32)
    if drift <= 2 * own + ulp:
        return None
    return (f"norm-wise relative error {error:.3g}; from FP32 {drift:.3g}, "
            f"the CPU's {own:.3g}")
