#!/usr/bin/python3
"""Does ONNX Runtime run the exported FP8 training steps?

Exports each zoo transformer and GPT step (SGD) with
--amp-pipeline="precision=fp8" and each recipe, runs two training steps of
it in ONNX Runtime on the zoo's example batch (parameters and FP8 scaling
state carried), and compares the losses with the unconverted FP32 step's in
ONNX Runtime. The base is FP16: ONNX Runtime's CPU build has no BF16
kernels for most ops (no BF16 Add), so a BF16 base that converts more than
the GEMMs does not load there (the table says when it does not). Large
steps use the cost model's choice (fp8=auto), small ones fp8=always.
Appends the table with the machine and date to
bench/results/fp8_onnx_runtime.md.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402
from corpus_fp16 import ort_failure, zoo_losses  # noqa: E402

RECIPES = ("delayed", "current", "block")


def export(path, pipeline, out):
    subprocess.run([api.find_amp_opt(), path, "-o", out,
                    f"--amp-pipeline={pipeline}"], check=True,
                   capture_output=True)
    model = onnx.load(out)
    fp8_casts = sum(1 for n in model.graph.node if n.op_type == "Cast"
                    for a in n.attribute if a.name == "to" and a.i in (17, 19))
    opset = [o.version for o in model.opset_import if o.domain == ""][0]
    return fp8_casts, opset


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["small", "large"],
                        default="large")
    parser.add_argument("--models", nargs="+", default=["transformer", "gpt"])
    parser.add_argument("--zoo-dir", help="reuse <model>_sgd_<size>.onnx "
                        "from this folder instead of exporting")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    mode = "fp8=always" if args.size == "small" else "fp8=auto"
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            path = os.path.join(args.zoo_dir or folder,
                                f"{name}_sgd_{args.size}.onnx")
            if not args.zoo_dir:
                zoo.export(name, "sgd", path, size=args.size)
            reference = zoo_losses(path, name, args.size)
            configs = [(f"base=fp16 fp8-recipe={r}", r) for r in RECIPES]
            configs.append(("fp8-recipe=delayed", "delayed, BF16 base"))
            for options, label in configs:
                out = os.path.join(folder, "fp8.onnx")
                casts, opset = export(
                    path, f"precision=fp8 {mode} {options}", out)
                try:
                    losses = zoo_losses(out, name, args.size)
                    gap = max(abs(a - b) / abs(b)
                              for a, b in zip(losses, reference))
                    result = (f"{losses[0]:.5g}, {losses[1]:.5g} | "
                              f"{100 * gap:.3f}%")
                except Exception as error:  # ONNX Runtime's refusal
                    result = f"not run: {ort_failure(error)} | -"
                rows.append(f"| {name} | {label} | {opset} | {casts} | "
                            f"{reference[0]:.5g}, {reference[1]:.5g} | "
                            f"{result} |")
                print(rows[-1], file=sys.stderr)
    lines = [heading(f"{args.size} zoo, SGD, FP8 {mode} in ONNX Runtime"),
             "",
             f"Command: `/usr/bin/python3 bench/fp8_onnx_runtime.py --size "
             f"{args.size}`", "",
             "| graph | recipe | opset | FP8 casts | FP32 losses (ORT) | "
             "FP8 losses (ORT) | largest gap |",
             "|---|---|---|---|---|---|---|", *rows]
    record(lines, args.out, "fp8_onnx_runtime.md")


if __name__ == "__main__":
    main()
