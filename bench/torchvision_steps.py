#!/usr/bin/python3
"""Training steps of torchvision's image classifiers, models nobody here
wrote, through the paths a user runs.

Each model (5 classes, a batch of 2) is exported with
amp_opt.export.export_training_step (SGD), run for two steps in amp-run,
whose losses must match eager PyTorch's (relative error below 1e-5), then
through `--amp-pipeline=precision=fp16` with every convolution and GEMM
forced low (the cost model keeps most of these small layers in FP32),
whose losses must be finite and go down once dynamic loss scaling has
found its scale. Prints a table and appends it,
with the machine and date, to bench/results/torchvision_steps.md.

    PYTHONPATH=python /usr/bin/python3 bench/torchvision_steps.py [MODEL...]

Needs Debian's python3-torchvision (0.14, for torch 1.13); without it the
script says so and exits 0.
"""
import argparse
import datetime
import json
import math
import os
import platform
import sys
import tempfile
import time
import warnings

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from amp_opt import api, export_training_step, verify  # noqa: E402
from amp_opt.numerics import FORCED  # noqa: E402

# Dynamic loss scaling skips the first FP16 steps whose gradients overflow
# at the initial scale (65536); four steps show the training go on.
FP16_STEPS = 4
# name: input size (the smallest each architecture takes).
MODELS = {
    "resnet18": 64, "mobilenet_v3_small": 64, "shufflenet_v2_x0_5": 64,
    "squeezenet1_0": 64, "efficientnet_b0": 64, "regnet_x_400mf": 64,
    "densenet121": 64, "googlenet": 64, "mnasnet0_5": 64,
}


def build(name):
    """The model, its dropout and stochastic depth off: their draws in
    amp-run are not eager PyTorch's (test_amp_run_random.py trains
    dropout), and the bench compares losses."""
    import torchvision.models as models
    import torchvision.ops
    options = {"num_classes": 5}
    if name == "googlenet":
        options.update(aux_logits=False, init_weights=True)
    model = getattr(models, name)(**options)
    for module in model.modules():
        if isinstance(module, (torch.nn.Dropout,
                               torchvision.ops.StochasticDepth)):
            module.p = 0.0
    return model


def run_model(name, size, folder):
    """The table row of one model."""
    torch.manual_seed(0)
    model = build(name)
    x = torch.randn(2, 3, size, size)
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
        fp32 = api.run_with_inputs(path, feeds, os.path.join(folder, "fp32"),
                                   steps=2).records
        report = os.path.join(folder, f"{name}.json")
        fp16 = api.run_with_inputs(
            path, feeds, os.path.join(folder, "fp16"), steps=FP16_STEPS,
            amp_pipeline=f"precision=fp16 {FORCED} report={report}").records
    except api.AmpOptError as error:
        lines = [line for line in str(error).splitlines() if "error" in line]
        return (f"| {name} | {exported:.0f} s | amp-run fails: "
                f"{(lines[0] if lines else str(error))[:150]} | | |")
    eager, _ = verify.run_eager(model, (x,), (y,), F.cross_entropy, "sgd",
                                {"lr": 0.01}, 2)
    error = max(abs(r["loss"] - e) / abs(e) for r, e in zip(fp32, eager))
    with open(report) as f:
        ops = json.load(f)["ops"]
    finite = all(math.isfinite(r["loss"]) for r in fp16)
    verdict = "matches eager" if error < 1e-5 else "WRONG"
    losses16 = ", ".join(f"{r['loss']:.4f}" + (" (skipped)" if r["skipped"]
                                               else "") for r in fp16)
    losses = ", ".join(f"{e:.4f}" for e in eager)
    return (f"| {name} | {exported:.0f} s | {verdict} ({error:.1e}; eager "
            f"{losses}) | {'finite' if finite else 'NOT FINITE'}: "
            f"{losses16} | {ops['low_precision']} of {ops['total']} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("torchvision is not installed (apt-get install "
              "python3-torchvision): nothing to run")
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.models:
            rows.append(run_model(name, MODELS.get(name, 64), folder))
            print(rows[-1], file=sys.stderr)
    table = "\n".join(
        ["| model | export | amp-run FP32, 2 steps (loss error) | FP16 "
         f"pipeline, {FP16_STEPS} steps (convolutions and GEMMs forced) | "
         "ops in FP16 |",
         "|---|---|---|---|---|"] + rows)
    print(table)
    if not args.no_record:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        machine = f"{platform.node()}, {os.cpu_count()} cores, torch " \
                  f"{torch.__version__}"
        with open(os.path.join(HERE, "results", "torchvision_steps.md"),
                  "a") as f:
            f.write(f"\n## {stamp} on {machine}\n\n"
                    f"`bench/torchvision_steps.py` (SGD, batch 2, 5 "
                    f"classes)\n\n{table}\n")


if __name__ == "__main__":
    main()
