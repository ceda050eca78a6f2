#!/usr/bin/python3
"""Gradient error of one step: how far BF16 and each FP8 recipe are from FP32.

Runs one SGD step of a zoo model in amp-run in FP32 (no pipeline), BF16
and FP8 with each recipe, from one seed, saves the step's outputs, and
compares the momentum buffers (after the first step, the gradients) with
FP32's: per parameter ||g - g_fp32|| / ||g_fp32||. Where a recipe's error
is much larger than another's on the same parameters, its quantization
loses more than its format explains; that localizes a loss gap to the
parameters (and so the GEMMs) behind it. Prints a table grouped by
parameter kind and appends it to bench/results/fp8_gradient_error.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402
from fp8_numerics import RECIPES, base_options, fp8_pipeline  # noqa: E402

MOMENTUM_FILE = ".momentum_buffer.updated.npy"


def run_step(path, pipeline, seed, folder):
    """The momentum buffers after one step of `pipeline` (None: FP32)."""
    os.makedirs(folder)
    command = [api.find_tool("amp-run"), path, "--steps", "1", "--seed",
               str(seed), f"--save-outputs={folder}"]
    if pipeline:
        command.append(f"--amp-pipeline={pipeline}")
    subprocess.run(command, check=True, capture_output=True)
    return {name.removesuffix(MOMENTUM_FILE):
            np.load(os.path.join(folder, name))
            for name in os.listdir(folder) if name.endswith(MOMENTUM_FILE)}


def kind(name):
    """A parameter's name without layer indices: its kind."""
    return re.sub(r"\.\d+\.", ".*.", name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["small", "large"],
                        default="small")
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--fp8", choices=["auto", "always"],
                        default="always")
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES),
                        choices=RECIPES)
    parser.add_argument("--zoo-dir", help="reuse <model>_sgd_<size>.onnx "
                        "from this folder (exported with --lr) instead of "
                        "exporting")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    runs = {"bf16": f"precision=bf16 {base_options(args.size)}",
            **{recipe: fp8_pipeline(args.size, recipe, args.fp8)
               for recipe in args.recipes}}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(args.zoo_dir or folder,
                            f"{args.model}_sgd_{args.size}.onnx")
        if not args.zoo_dir:
            zoo.export(args.model, "sgd", path, size=args.size,
                       seed=args.seed, lr=args.lr)
        reference = run_step(path, None, args.seed,
                             os.path.join(folder, "fp32"))
        grads = {}
        for run, pipeline in runs.items():
            grads[run] = run_step(path, pipeline, args.seed,
                                  os.path.join(folder, run))
            print(f"{run} done", file=sys.stderr, flush=True)

    kinds = sorted({kind(name) for name in reference})
    lines = [heading(f"{args.size} {args.model}, SGD (lr {args.lr:g}), one "
                     f"step, seed {args.seed}, FP8 fp8={args.fp8}"),
             "",
             "Command: `/usr/bin/python3 bench/fp8_gradient_error.py " +
             " ".join(sys.argv[1:]) + "`",
             "",
             "Per parameter kind: the relative error against FP32, "
             "||g - g_fp32|| / ||g_fp32||, and in parentheses the gain, "
             "<g, g_fp32> / <g_fp32, g_fp32> (below 1: the gradient is "
             "biased small).",
             "",
             "| parameter kind | " + " | ".join(runs) + " |",
             "|---|" + "---|" * len(runs)]
    for group in kinds + ["all"]:
        names = [n for n in reference if group in ("all", kind(n))]
        square = sum(np.sum(reference[n].astype(np.float64) ** 2)
                     for n in names)
        cells = []
        for run in runs:
            error = sum(np.sum((grads[run][n].astype(np.float64) -
                                reference[n]) ** 2) for n in names)
            inner = sum(np.sum(grads[run][n].astype(np.float64) *
                               reference[n]) for n in names)
            cells.append(f"{np.sqrt(error / square):.4f} "
                         f"({inner / square:.3f})" if square else "-")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    record(lines, args.out, "fp8_gradient_error.md")


if __name__ == "__main__":
    main()
