#!/usr/bin/python3
"""amp-compile on the zoo's training steps: every model in every precision
compiled to a CUDA step library (the check behind `make check-cuda`).

For each step: kernels before and after fusion (linalg ops left after
amp-fuse-elementwise's fusion, kernels in the library), cuBLASLt GEMMs
(how many of them are FP8, how many add a bias or compute a bias
gradient in their epilogue), cuDNN convolutions (how many of them are
weight and data gradients through cuDNN's backward filter and backward
data),
lowering time and compile+link time. With --compare-grid-fusion, each
step is lowered twice more, with `fuse-grids=false` (one kernel per op
left after elementwise fusion) and with `fuse-independent-grids=false`
(ops over the same points fused, independent kernels not), for columns
of kernels without amp-linalg-to-grid-loops' fusions. Exits 1 when a
step does not compile.
Prints a table and appends it, with the machine and date, to
bench/results/cuda_compile.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, numerics, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402

PRECISIONS = {name: pipeline for name, (pipeline, _) in
              numerics.FORCED_PRECISIONS.items()}
UNFUSED_OPTIONS = ("fuse-grids=false", "fuse-independent-grids=false")


def count_unfused(path, pipeline):
    """The linalg ops of the converted step before fusion: the kernels
    that one kernel per op would give."""
    converted = subprocess.run(
        [api.find_tool("amp-opt"), path, f"--amp-pipeline={pipeline}"],
        check=True, capture_output=True, text=True).stdout
    converted = subprocess.run(
        [api.find_tool("amp-opt"),
         "--pass-pipeline=builtin.module(func.func(onnxg-expand-gradients),"
         "convert-onnxg-to-linalg)"], input=converted,
        check=True, capture_output=True, text=True).stdout
    return len(re.findall(r"= linalg\.\w+", converted))


def compile_step(path, library, pipeline, *options):
    """amp-compile's run and the match of its summary line (kernels, GEMMs,
    FP8 GEMMs, convolutions, lower s, compile+link s), or None."""
    run = subprocess.run(
        [api.find_tool("amp-compile"), path, "-o", library,
         f"--amp-pipeline={pipeline}", *options],
        capture_output=True, text=True)
    return run, re.search(r": (\d+) kernels, (\d+) cuBLASLt GEMMs "
                          r"\((\d+) FP8\), (\d+) cuDNN convolutions.*"
                          r"lower ([\d.]+) s, compile\+link ([\d.]+) s",
                          run.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="large", choices=["small", "large"])
    parser.add_argument("--models", nargs="*", default=list(zoo.MODELS))
    parser.add_argument("--precisions", nargs="*", default=list(PRECISIONS))
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--compare-grid-fusion", action="store_true",
                        help="also count the kernels with fuse-grids=false "
                        "and with fuse-independent-grids=false")
    args = parser.parse_args()
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            path = os.path.join(folder, f"{name}_sgd.onnx")
            zoo.export(name, "sgd", path, size=args.size)
            for precision in args.precisions:
                if numerics.why_no_forced_step(name, precision):
                    continue
                pipeline = PRECISIONS[precision]
                library = os.path.join(folder, f"{name}_{precision}.so")
                lowered = library.replace(".so", ".mlir")
                start = time.time()
                run, found = compile_step(path, library, pipeline,
                                          "--dump-lowered", lowered)
                seconds = time.time() - start
                unfused_grids = []
                for option in (UNFUSED_OPTIONS if found and
                               args.compare_grid_fusion else ()):
                    unfused_run, unfused = compile_step(
                        path, library, pipeline, f"--lower-options={option}")
                    if unfused_run.returncode or not unfused:
                        failures.append(
                            f"{name} {precision} {option}: "
                            f"{unfused_run.stderr.strip()[-500:]}")
                    unfused_grids.append(int(unfused.group(1))
                                         if unfused else None)
                if run.returncode or not found:
                    failures.append(f"{name} {precision}: "
                                    f"{run.stderr.strip()[-500:]}")
                    print(f"{name} {precision} FAILED", file=sys.stderr)
                    continue
                kernels, gemms, fp8, convolutions, lower, link = found.groups()
                with open(lowered) as f:
                    text = f.read()
                gradients = len(re.findall(r"llvm\.call @amp_gemm_bgrad_",
                                           text))
                biases = len(re.findall(r"llvm\.call @amp_gemm_bias_", text))
                modes = api.conv_record_modes(text)
                backward_filter, backward_data = modes.count(1), modes.count(2)
                rows.append((name, precision, count_unfused(path, pipeline),
                             unfused_grids,
                             int(kernels), int(gemms), int(fp8), biases,
                             gradients, int(convolutions), backward_filter,
                             backward_data,
                             float(lower), float(link),
                             seconds))
                print(f"{name} {precision}: {kernels} kernels, {seconds:.1f} s",
                      file=sys.stderr)
    lines = [heading(f"zoo --size {args.size}, SGD, amp-compile"),
             "",
             f"Command: `/usr/bin/python3 bench/cuda_compile.py --size "
             f"{args.size} --models {' '.join(args.models)} --precisions "
             f"{' '.join(args.precisions)}"
             + (" --compare-grid-fusion" if args.compare_grid_fusion else "")
             + "`",
             "",
             "| graph | precision | linalg ops before fusion | "
             + ("kernels without grid fusion | kernels without fusing "
                "independent grids | " if args.compare_grid_fusion else "") +
             "kernels | "
             "cuBLASLt GEMMs | of them FP8 | of them with a bias | "
             "of them with a bias gradient | cuDNN convolutions | "
             "of them backward filter | of them backward data | lower s | "
             "compile+link s | total s |",
             "|---|---|---|" + ("---|---|" if args.compare_grid_fusion
                                else "")
             + "---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, precision, unfused, unfused_grids, kernels, gemms, fp8,
         biases, gradients, convolutions, backward_filter, backward_data,
         lower, link, total) in rows:
        grids = "".join(f"{count} | " for count in unfused_grids)
        lines.append(f"| {name} | {precision} | {unfused} | {grids}"
                     f"{kernels} | "
                     f"{gemms} | {fp8} | {biases} | {gradients} | "
                     f"{convolutions} | {backward_filter} | {backward_data} | "
                     f"{lower:.1f} | {link:.1f} | {total:.1f} |")
    lines += [f"- FAILED {failure}" for failure in failures]
    record(lines, args.out, "cuda_compile.md")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
