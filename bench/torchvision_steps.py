#!/usr/bin/python3
"""Training steps of torchvision's models (image classifiers, two
segmentation models and a video model), models nobody here wrote, through
the paths a user runs.

Each model (5 classes, a batch of 2; a segmentation model's logits
averaged over the image) is exported with
amp_opt.export.export_training_step (SGD) and run in amp-run: step 1's
loss and every updated parameter and buffer must match eager PyTorch's
(amp_opt.verify.compare_state: 1e-5, or about as close to eager float64
as eager float32 is: ROUNDING_WORST, ROUNDING_MEAN), step 2's loss eager's
forward from amp-run's own step-1 state (verify.forward_explains: 1e-5, or
as close to eager float64's forward as ROUNDING_WORST times eager
float32's). Then it runs
through `--amp-pipeline=precision=fp16` with every convolution and GEMM
forced low (the cost model may keep some of these small layers in FP32),
whose losses must be finite and go down once dynamic loss scaling has
found its scale (the column gives the scale, its first step, and the loss
from there to the last step). Prints a table and appends it,
with the machine and date, to bench/results/torchvision_steps.md.

    PYTHONPATH=python /usr/bin/python3 bench/torchvision_steps.py [MODEL...]

Needs Debian's python3-torchvision (0.14, for torch 1.13); without it the
script says so and exits 0.
"""
import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import sys
import tempfile
import time
import warnings

import onnx
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from amp_opt import api, export_training_step, verify  # noqa: E402
from amp_opt.numerics import FORCED  # noqa: E402

# Dynamic loss scaling skips the first FP16 steps whose gradients overflow
# at the initial scale (65536; shufflenet_v2_x0_5's settles at 2048 on step
# 6). mnasnet0_5's step-1 weight gradients reach 1725 in eager float32
# (layers.0.weight, batch 2), which f16 holds only times 32 or less: the
# scale halves to 32 by step 12, as PyTorch's GradScaler's would. Sixteen
# steps show the training go on for every model.
FP16_STEPS = 16
# amp-run's rounding against eager float32's (each one's distance to eager
# float64, per tensor that is not within 1e-5): a wrong gradient is off by
# far more than 16 times, and a systematically worse summation shows in the
# geometric mean. The two are samples of rounding noise, so one tensor's
# ratio scatters: amp-run and PyTorch sum in blocks of different sizes, and
# a BatchNorm's running mean of a normalized input is 0 in float64 and pure
# noise in float32 (shufflenet's is 3.2x eager's noise there; 5.6x while
# amp-run summed in order).
ROUNDING_WORST = 16.0
ROUNDING_MEAN = 4.0
# name: one input's shape (about the smallest each architecture takes):
# image classifiers, then a segmentation model's and a video model's.
MODELS = {
    "resnet18": (3, 64, 64), "mobilenet_v3_small": (3, 64, 64),
    "shufflenet_v2_x0_5": (3, 64, 64), "squeezenet1_0": (3, 64, 64),
    "efficientnet_b0": (3, 64, 64), "regnet_x_400mf": (3, 64, 64),
    "densenet121": (3, 64, 64), "googlenet": (3, 64, 64),
    "mnasnet0_5": (3, 64, 64), "alexnet": (3, 64, 64),
    "vgg11_bn": (3, 32, 32), "resnext50_32x4d": (3, 32, 32),
    "lraspp_mobilenet_v3_large": (3, 64, 64),
    "deeplabv3_mobilenet_v3_large": (3, 64, 64), "r3d_18": (3, 4, 32, 32),
}
SEGMENTATION = {"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"}
VIDEO = {"r3d_18"}


class MeanLogits(torch.nn.Module):
    """A segmentation model's per-pixel logits averaged over the image, so
    that the step's loss is the classifiers' cross-entropy."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"].mean((2, 3))


def build(name):
    """The model, its dropout and stochastic depth off: their draws in
    amp-run are not eager PyTorch's (test_amp_run_random.py trains
    dropout), and the bench compares losses."""
    import torchvision.models as models
    import torchvision.ops
    options = {"num_classes": 5}
    if name == "googlenet":
        options.update(aux_logits=False, init_weights=True)
    if name in SEGMENTATION:
        options.update(weights=None, weights_backbone=None)
        model = MeanLogits(getattr(models.segmentation, name)(**options))
    elif name in VIDEO:
        model = getattr(models.video, name)(**options)
    else:
        model = getattr(models, name)(**options)
    for module in model.modules():
        if isinstance(module, (torch.nn.Dropout,
                               torchvision.ops.StochasticDepth)):
            module.p = 0.0
    return model


def run_model(name, shape, folder):
    """The table row of one model, on a batch of 2 inputs of `shape`."""
    torch.manual_seed(0)
    model = build(name)
    x = torch.randn(2, *shape)
    y = torch.randint(0, 5, (2,))
    path = os.path.join(folder, f"{name}.onnx")
    start = time.time()
    try:
        export_training_step(model, (x,), (y,), F.cross_entropy, path,
                             optimizer="sgd", lr=0.01)
    except Exception as error:  # report any failure as the row
        return f"| {name} | export fails: {str(error)[:150]} | | | |"
    exported = time.time() - start
    feeds = {"input0": x.numpy(), "target0": y.numpy()}
    try:
        one = api.run_with_inputs(path, feeds, os.path.join(folder, "one"))
        two = api.run_with_inputs(path, feeds, os.path.join(folder, "two"),
                                  steps=2).records
        report = os.path.join(folder, f"{name}.json")
        fp16 = api.run_with_inputs(
            path, feeds, os.path.join(folder, "fp16"), steps=FP16_STEPS,
            amp_pipeline=f"precision=fp16 {FORCED} report={report}").records
    except api.AmpOptError as error:
        lines = [line for line in str(error).splitlines() if "error" in line]
        return (f"| {name} | {exported:.0f} s | amp-run fails: "
                f"{(lines[0] if lines else str(error))[:150]} | | |")
    # Step 1's loss and updated state against eager, float64 deciding what
    # float32 rounding explains; step 2's loss against eager's forward from
    # amp-run's own step-1 state: with batch 2 the BatchNorms make step 2
    # amplify step 1's rounding (eager float32 and float64 differ by up to
    # 4e-3 there).
    carried = verify.carried_outputs(verify.roles(onnx.load(path)))
    state = {carried[out]: one[out] for out in carried if out in one}
    checks = verify.compare_state(model, (x,), (y,), F.cross_entropy, "sgd",
                                  {"lr": 0.01}, [one.records[0]["loss"]],
                                  state, rounding_factor=ROUNDING_WORST)
    failed = [key for key, check in checks.items() if check[2] == "FAIL"]
    ratios = [check[3] for check in checks.values() if check[3] is not None]
    mean = math.exp(sum(math.log(max(r, 1e-3)) for r in ratios) /
                    len(ratios)) if ratios else 0.0
    if mean > ROUNDING_MEAN:
        failed.append(f"{mean:.1f}x eager's rounding on average")
    if not verify.forward_explains(model, state, (x,), (y,), F.cross_entropy,
                                   two[1]["loss"],
                                   rounding_factor=ROUNDING_WORST):
        failed.append("step 2 loss")
    within = (f"{len(checks) - len(ratios)} of {len(checks)} tensors "
              "within 1e-5")
    if ratios:
        within += (f"; the rest within float32 rounding, at most "
                   f"{max(ratios):.1f}x, on average {mean:.1f}x eager's own")
    verdict = (f"WRONG: {', '.join(failed[:3])}" if failed
               else f"matches eager ({within})")
    with open(report) as f:
        ops = json.load(f)["ops"]
    finite = all(math.isfinite(r["loss"]) for r in fp16)
    applied = [r for r in fp16 if not r["skipped"]]
    if not finite:
        fp16_column = "NOT FINITE: " + ", ".join(
            f"{r['loss']:.4f}" for r in fp16)
    elif len(applied) < 2:
        fp16_column = (f"NOT TRAINING: {len(fp16) - len(applied)} of "
                       f"{len(fp16)} steps skipped")
    else:
        trained = applied[-1]["loss"] < applied[0]["loss"]
        fp16_column = (
            f"{'trains' if trained else 'LOSS DOES NOT GO DOWN'}: scale "
            f"{applied[0]['loss_scale']:g} from step {applied[0]['step']}, "
            f"loss {applied[0]['loss']:.4f} -> {applied[-1]['loss']:.4f} "
            f"(step {applied[-1]['step']})")
    losses = ", ".join(f"{r['loss']:.4f}" for r in two)
    return (f"| {name} | {exported:.0f} s | {verdict}; losses {losses} | "
            f"{fp16_column} | {ops['low_precision']} of {ops['total']} |")


def append_result(filename, what, table):
    """Appends `table` to bench/results/`filename` under a heading with the
    date and time, the machine and torch's version, and `what` (Markdown)
    between the two."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    machine = f"{platform.node()}, {os.cpu_count()} cores, torch " \
              f"{torch.__version__}"
    with open(os.path.join(HERE, "results", filename), "a") as f:
        f.write(f"\n## {stamp} on {machine}\n\n{what}\n\n{table}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    if importlib.util.find_spec("torchvision") is None:
        print("torchvision is not installed (apt-get install "
              "python3-torchvision): nothing to run")
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.models:
            rows.append(run_model(name, MODELS.get(name, (3, 64, 64)),
                                  folder))
            print(rows[-1], file=sys.stderr)
    table = "\n".join(
        ["| model | export | amp-run FP32, 2 steps | FP16 "
         f"pipeline, {FP16_STEPS} steps (convolutions and GEMMs forced) | "
         "ops in FP16 |",
         "|---|---|---|---|---|"] + rows)
    print(table)
    if not args.no_record:
        append_result("torchvision_steps.md",
                      "`bench/torchvision_steps.py` (SGD, batch 2, 5 classes)",
                      table)


if __name__ == "__main__":
    main()
