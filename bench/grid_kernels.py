#!/usr/bin/python3
"""The CUDA backend's kernels read off the IR, without a GPU.

  grid_kernels.py [--models mlp cnn ...] [--size small|large]
                  [--precisions fp32 fp16 ...] [--top N]
                  [--lower-options "row-lanes=1 ..."]

For each zoo SGD step and precision, runs `amp-opt --amp-lower-to-cuda`
(chips=sm_90) and reads its IR just before amp-grid-phases-to-gpu: every
grid (a block loop around a thread loop, or around several: the phases of
rows that lanes share) is one kernel. For each, the threads it launches and
the sequential iterations one thread runs: its scf.for loops one after the
other (a fused kernel runs several; a phased one, each phase's), each its
constant trip count times its body's, the longest case of an
scf.index_switch (independent ops fused into one kernel run one case per
thread). A kernel with few threads and a long chain is what made the large
CNN take 1.9 s a step on an H100; its `serial` column is the first place to
look. Prints a summary per step and the `--top` kernels by serial
iterations, and appends them to bench/results/grid_kernels.md (or --out).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api  # noqa: E402
from amp_opt.numerics import FORCED_PRECISIONS, why_no_forced_step  # noqa

from amp_run_numerics import heading, record  # noqa: E402

BLOCK = re.compile(r"^(\s*)scf\.parallel \((%\w+)\) = \((%\w+)\) to "
                   r"\((%\w+)\) step \((%\w+)\) \{$")
FOR = re.compile(r"scf\.for %\w+ = (%\w+) to (%\w+) step (%\w+)")
CONSTANT = re.compile(r"(%\w+) = arith\.constant (-?\d+) : index")
# An H100's resident threads: a kernel with more runs in several waves.
RESIDENT_THREADS = 132 * 2048


def grid_ir(model, pipeline, lower_options=""):
    """The IR before amp-grid-phases-to-gpu, as text."""
    command = [api.find_tool("amp-opt"), model,
               f"--amp-lower-to-cuda=chips=sm_90 {lower_options}".strip(),
               "--mlir-print-ir-before=amp-grid-phases-to-gpu",
               "-mlir-print-debuginfo=false",
               "-mlir-elide-elementsattrs-if-larger=16", "-o", os.devnull]
    if pipeline:
        command.insert(2, f"--amp-pipeline={pipeline}")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{model}: {run.stderr.strip()[-2000:]}")
    return run.stderr


def indentation(line):
    return len(line) - len(line.lstrip())


def region_work(lines, i, indent, constants):
    """The sequential iterations one thread runs in the region whose ops
    start at line `i` with `indent`: its loops one after the other (each
    its trip count times its body's), an scf.index_switch's cases as
    alternatives (the longest), an scf.if's branches taken; at least 1.
    Returns it and the line after the region."""
    total, alternatives = 0, None
    while i < len(lines) and indentation(lines[i]) >= indent:
        line = lines[i].strip()
        if indentation(lines[i]) > indent:
            i += 1
            continue
        if line.startswith(("case ", "default")) and alternatives is not None:
            work, i = region_work(lines, i + 1, indent + 2, constants)
            alternatives = max(alternatives, work)
            i += 1  # the case's closing brace
            continue
        if alternatives is not None:
            total += alternatives
            alternatives = None
        if line.startswith("scf.index_switch"):
            alternatives = 0
            i += 1
            continue
        if not line.endswith("{"):
            i += 1
            continue
        trips = 1
        if f := FOR.search(line):
            lower, upper, step = (constants.get(v) for v in f.groups())
            if None not in (lower, upper, step):
                trips = max((upper - lower) // step, 1)
        work, i = region_work(lines, i + 1, indent + 2, constants)
        while i < len(lines) and lines[i].strip().startswith("} else {"):
            other, i = region_work(lines, i + 1, indent + 2, constants)
            work = max(work, other)
        total += trips * work if f else work
        i += 1  # the closing brace
    if alternatives is not None:
        total += alternatives
    return max(total, 1), i


def kernels(text):
    """(threads, serial iterations, first line) of each grid in `text`: a
    block loop's points for a grid of one thread loop; for a phased grid
    (scratch buffers, then several thread loops), its blocks times a thread
    loop's trip count, the phases' work in turn."""
    lines = text.split("\n")
    constants = {}
    for line in lines:
        if m := CONSTANT.search(line):
            constants[m[1]] = int(m[2])
    found = []
    i = 0
    while i < len(lines):
        m = BLOCK.match(lines[i])
        if not m or i + 1 >= len(lines) or not re.match(
                r"\s*(scf\.parallel|%\w+ = memref\.alloc\(\))",
                lines[i + 1]):
            i += 1
            continue
        indent = indentation(lines[i]) + 2
        threads, serial, phases = constants.get(m[4]), 0, 0
        j = i + 1
        while j < len(lines) and indentation(lines[j]) >= indent:
            if indentation(lines[j]) == indent and \
                    (t := BLOCK.match(lines[j])):
                # A thread loop's body: two levels inside the block loop.
                work, j = region_work(lines, j + 1, indent + 2, constants)
                serial += work
                phases += 1
                per_block = constants.get(t[4])
            j += 1
        if phases > 1 and None not in (threads, per_block):
            step = constants.get(m[5]) or 1
            threads = math.ceil(threads / step) * per_block
        found.append((threads, serial, i + 1))
        i = j
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*")
    parser.add_argument("--size", default="small", choices=["small", "large"])
    parser.add_argument("--precisions", nargs="*", default=["fp32"])
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--lower-options", default="",
                        help="more options of --amp-lower-to-cuda")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    from amp_opt import zoo
    command = " ".join(["bench/grid_kernels.py", "--size", args.size] +
                       (["--models"] + args.models if args.models else []) +
                       ["--precisions"] + args.precisions +
                       (["--top", str(args.top)] if args.top != 5 else []) +
                       (["--lower-options", f'"{args.lower_options}"']
                        if args.lower_options else []))
    summary = [heading(f"zoo --size {args.size}, SGD, amp-lower-to-cuda's "
                       "grids"), "",
               f"Command: `{command}`. "
               "serial: the sequential iterations one thread runs (its "
               "loops in turn, an index_switch's longest case); waves: "
               "threads / (132 SMs x 2048).", "",
               "| graph | precision | kernels | max serial | "
               "sum of serial x waves |", "|---|---|---|---|---|"]
    top = ["", "| graph | precision | threads | serial | IR line |",
           "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models or zoo.MODELS:
            model = os.path.join(folder, f"{name}.onnx")
            zoo.export(name, "sgd", model, size=args.size)
            for precision in args.precisions:
                if why_no_forced_step(name, precision):
                    continue
                pipeline = FORCED_PRECISIONS[precision][0] \
                    if precision != "fp32" else None
                found = kernels(grid_ir(model, pipeline, args.lower_options))
                cost = sum(serial * math.ceil((threads or 1) /
                                              RESIDENT_THREADS)
                           for threads, serial, _ in found)
                summary.append(
                    f"| {name} | {precision} | {len(found)} | "
                    f"{max(s for _, s, _ in found)} | {cost} |")
                for threads, serial, line in sorted(
                        found, key=lambda k: -k[1])[:args.top]:
                    top.append(f"| {name} | {precision} | {threads} | "
                               f"{serial} | {line} |")
                print(summary[-1], file=sys.stderr, flush=True)
            os.remove(model)
    record(summary + (top if args.top > 0 else []), args.out,
           "grid_kernels.md")


if __name__ == "__main__":
    main()
