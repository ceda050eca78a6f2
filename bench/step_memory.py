#!/usr/bin/python3
"""Memory of a CPU step's temporaries: freed after their last use (the CPU
pipeline's amp-free-dead-buffers) next to freed when the step returns.

Exports the zoo's training steps (SGD; FP32, and the FP16 pipeline), lowers
each with amp-opt's --amp-lower-to-cpu pass list, in which
amp-free-dead-buffers runs with remarks=true, and reads its remark: how
many buffers the step allocates, the most bytes of them live at once, and
their total (what freeing them at the end, as ownership-based
deallocation does, holds at once). Both come from the same lowered step.
Weights, gradients and optimizer state are the step's arguments and not
counted. Prints a table and appends it, with the machine and date, to
bench/results/step_memory.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402

REMARK = re.compile(r"freed (\d+) buffers: at most (\d+) of their (\d+) "
                    r"bytes live at once")


def cpu_pipeline_with_remarks(amp_opt, path):
    """--amp-lower-to-cpu's pass list, with amp-free-dead-buffers' remarks
    on."""
    dump = subprocess.run(
        [amp_opt, path, "--amp-lower-to-cpu", "--dump-pass-pipeline", "-o",
         os.devnull], capture_output=True, text=True, check=True).stderr
    pipeline = "".join(dump.splitlines()[1:])
    marked = pipeline.replace(
        "amp-free-dead-buffers{early=true remarks=false}",
        "amp-free-dead-buffers{early=true remarks=true}")
    if marked == pipeline:
        raise SystemExit("the CPU pipeline has no amp-free-dead-buffers")
    return marked


def measure(amp_opt, path, pipeline):
    """(buffers, peak bytes, total bytes) of the step at `path`."""
    run = subprocess.run(
        [amp_opt, path, f"--pass-pipeline={pipeline}", "-o", os.devnull],
        capture_output=True, text=True, check=True)
    found = [tuple(map(int, m.groups())) for m in REMARK.finditer(run.stderr)]
    if not found:
        raise SystemExit(f"no amp-free-dead-buffers remark for {path}")
    return tuple(sum(values) for values in zip(*found))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small", choices=["small", "large"])
    parser.add_argument("--models", nargs="*", default=list(zoo.MODELS))
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    amp_opt = api.find_amp_opt()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            path = os.path.join(folder, f"{name}_sgd.onnx")
            zoo.export(name, "sgd", path, size=args.size)
            fp16 = os.path.join(folder, f"{name}_sgd_fp16.onnx")
            subprocess.run([amp_opt, path, "--amp-pipeline=precision=fp16",
                            "-o", fp16], capture_output=True, check=True)
            pipeline = cpu_pipeline_with_remarks(amp_opt, path)
            for precision, step in (("fp32", path), ("fp16", fp16)):
                rows.append((name, precision) +
                            measure(amp_opt, step, pipeline))
            print(f"{name} done", file=sys.stderr)
    lines = [heading(f"zoo --size {args.size}, SGD: the step's temporaries"),
             "",
             f"Command: `/usr/bin/python3 bench/step_memory.py --size "
             f"{args.size} --models {' '.join(args.models)}`",
             "",
             "| graph | precision | buffers | MB freed at the end | "
             "MB freed after last use | ratio |",
             "|---|---|---|---|---|---|"]
    for name, precision, buffers, peak, total in rows:
        lines.append(f"| {name} | {precision} | {buffers} | "
                     f"{total / 1e6:.2f} | {peak / 1e6:.2f} | "
                     f"{peak / total:.2f} |")
    record(lines, args.out, "step_memory.md")


if __name__ == "__main__":
    main()
