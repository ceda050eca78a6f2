#!/usr/bin/python3
"""Speed of amp-run on the CPU next to ONNX Runtime on the same FP32 step.

Exports the zoo's training steps (--size large: hidden 768 and 12 layers for
the transformers, as in python/amp_opt/zoo.py), then in one run measures
  amp-run: import + lowering time, JIT compile time (every part compiled:
           --jit-cache=none; on all cores), and the median step time over
           --steps steps;
  ONNX Runtime (npm onnxruntime-node, CPU, all graph optimizations): session
           creation and the median time of --steps runs of the same step,
           fed amp-run's inputs of step 1.
Prints a table and appends it, with the machine and date, to
bench/results/amp_run_speed.md. Ratios are of medians from the same run.
"""
import argparse
import glob
import os
import re
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, ort, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small", choices=["small", "large"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--models", nargs="*", default=list(zoo.MODELS))
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            path = os.path.join(folder, f"{name}_sgd.onnx")
            zoo.export(name, "sgd", path, size=args.size)
            inputs = os.path.join(folder, name + ".in")
            records, log = api.train(path, args.steps,
                                     args=["--save-inputs", inputs,
                                           "--jit-cache=none"])
            times = re.search(r"import\+lower ([\d.]+) s, JIT ([\d.]+) s", log)
            step_ms = statistics.median(r["time_ms"] for r in records)
            feeds = {os.path.basename(f)[:-4]: np.load(f)
                     for f in glob.glob(os.path.join(inputs, "*.npy"))}
            timing = {"repeat": args.steps}
            ort.run(path, feeds, optimize=True, timing=timing)
            ort_ms = statistics.median(timing["run_ms"])
            rows.append((name, float(times.group(1)), float(times.group(2)),
                         step_ms, timing["create_ms"] / 1000, ort_ms))
            print(f"{name} done", file=sys.stderr)
    lines = [heading(f"zoo --size {args.size}, SGD, FP32, median of "
                     f"{args.steps} steps"),
             "",
             f"Command: `/usr/bin/python3 bench/amp_run_speed.py --size "
             f"{args.size} --steps {args.steps} --models "
             f"{' '.join(args.models)}`",
             "",
             "| graph | amp-run lower s | amp-run JIT s | amp-run step ms | "
             "ORT session s | ORT step ms | amp-run / ORT step |",
             "|---|---|---|---|---|---|---|"]
    for name, lower, jit, step, create, ort_step in rows:
        lines.append(f"| {name} | {lower:.2f} | {jit:.2f} | {step:.2f} | "
                     f"{create:.2f} | {ort_step:.2f} | "
                     f"{step / ort_step:.2g}x |")
    record(lines, args.out, "amp_run_speed.md")


if __name__ == "__main__":
    main()
