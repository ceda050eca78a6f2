#!/usr/bin/python3
"""Modeled FP8-vs-BF16 speed: which GEMMs amp-fp8 picks, and what the cost
model says they gain.

For each large zoo step (SGD) it runs --amp-pipeline="precision=bf16" and
"precision=fp8" (fp8=auto, each recipe) and prints the modeled step time of
both, the GEMM-only ratio of the FP8 GEMMs (base time over FP8 time plus
their share of the quantizations: Transformer Engine's "autocast" figure)
and the decisions grouped by their remark. It also models the GEMMs of
Transformer Engine's published speedup model (hidden 4096, FFN 16384;
docs/features/low_precision_training/speedups.rst: 1.69x delayed, 1.57x
current, 1.41x block on H200), as one forward graph of its four linear
layers. Appends the tables with the machine and date to
bench/results/fp8_modeled.md.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402

RECIPES = ("delayed", "current", "block")
# Transformer Engine's speedup model: one layer's GEMMs, (name, K, N).
TE_LAYER = [("qkv", 4096, 3 * 4096), ("proj", 4096, 4096),
            ("fc1", 4096, 16384), ("fc2", 16384, 4096)]


def te_layer_graph(path, tokens):
    """A forward graph of TE's four linear layers on `tokens` rows."""
    nodes, inits = [], []
    inputs = []
    for name, k, n in TE_LAYER:
        inputs.append(helper.make_tensor_value_info(
            f"{name}_x", TensorProto.FLOAT, [tokens, k]))
        inits.append(numpy_helper.from_array(
            np.zeros((k, n), np.float32), f"{name}_w"))
        nodes.append(helper.make_node("MatMul", [f"{name}_x", f"{name}_w"],
                                      [f"{name}_y"], name=name))
    outputs = [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT,
                                             [tokens, n])
               for name, _, n in TE_LAYER]
    graph = helper.make_graph(nodes, "te_layer", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def run_pipeline(path, pipeline, folder):
    """(report, remark lines) of amp-opt's pipeline on `path`."""
    report = os.path.join(folder, "report.json")
    proc = subprocess.run(
        [api.find_amp_opt(), path, "-o", os.devnull,
         f"--amp-pipeline={pipeline} report={report} remarks=true"],
        capture_output=True, text=True, check=True)
    with open(report) as f:
        return json.load(f), [line for line in proc.stderr.splitlines()
                              if "amp-fp8: " in line]


def gemm_ratio(report):
    """Base time over FP8 time plus quantization share, FP8 GEMMs only."""
    gemms = [d for d in report["decisions"] if d["precision"] == "fp8"]
    base = sum(d["time_us"]["base"] for d in gemms)
    fp8 = sum(d["time_us"]["fp8"] + d["time_us"]["quantize"] for d in gemms)
    return base / fp8 if fp8 else float("nan")


def grouped_remarks(remarks):
    """Counts of the remarks' messages."""
    return collections.Counter(re.sub(r".*amp-fp8: ", "", line)
                               for line in remarks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(zoo.MODELS))
    parser.add_argument("--zoo-dir", help="reuse <model>_sgd_large.onnx "
                        "from this folder instead of exporting")
    parser.add_argument("--tokens", type=int, default=8192,
                        help="rows of the TE layer's GEMMs")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()

    rows, groups = [], {}
    with tempfile.TemporaryDirectory() as folder:
        graphs = []
        for name in args.models:
            path = os.path.join(args.zoo_dir or folder,
                                f"{name}_sgd_large.onnx")
            if not args.zoo_dir:
                zoo.export(name, "sgd", path, size="large")
            graphs.append((f"{name} (large zoo)", path))
        te = os.path.join(folder, "te_layer.onnx")
        te_layer_graph(te, args.tokens)
        graphs.append((f"TE layer, {args.tokens} tokens", te))
        for graph, path in graphs:
            bf16, _ = run_pipeline(path, "precision=bf16", folder)
            for recipe in RECIPES:
                report, remarks = run_pipeline(
                    path, f"precision=fp8 fp8-recipe={recipe}", folder)
                eligible = len(remarks) - sum(
                    "not eligible" in line for line in remarks)
                base_us = bf16["modeled_time_us"]["amp"]
                fp8_us = report["modeled_time_us"]["amp"]
                rows.append(
                    f"| {graph} | {recipe} | {report['fp8']['gemms']} of "
                    f"{eligible} | {gemm_ratio(report):.2f}x | "
                    f"{base_us:.1f} | {fp8_us:.1f} | "
                    f"{base_us / fp8_us:.3f}x |")
                if recipe == "delayed":
                    groups[graph] = grouped_remarks(remarks)
                print(f"{graph} {recipe} done", file=sys.stderr)

    lines = [heading("modeled FP8 (fp8=auto) against BF16, H100 cost "
                     "model"), "",
             "Command: `/usr/bin/python3 bench/fp8_modeled.py`", "",
             "GEMM ratio: BF16 time over FP8 time plus the quantizations "
             "(report time_us base / (fp8 + quantize)) of the GEMMs in FP8; "
             "Transformer Engine measures 1.69x (delayed), 1.57x (current), "
             "1.41x (block) for its hidden-4096 model on H200.", "",
             "| graph | recipe | FP8 GEMMs of eligible | GEMM ratio | "
             "step BF16 us | step FP8 us | step ratio |",
             "|---|---|---|---|---|---|---|", *rows, "",
             "Decisions with the delayed recipe, by remark:", ""]
    for graph, counts in groups.items():
        lines.append(f"- {graph}:")
        lines += [f"  - {count} x {message}"
                  for message, count in counts.most_common()]
    record(lines, args.out, "fp8_modeled.md")


if __name__ == "__main__":
    main()
