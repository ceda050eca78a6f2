#!/usr/bin/python3
"""Numerics proof: does AMP training track FP32 on the CPU executor?

Exports every zoo training step (MLP, CNN, transformer, GPT, each with SGD
and with Adam), runs each for --steps steps with amp-run in FP32, FP16
(dynamic loss scaling) and BF16 from one seed, and compares final losses
(an AMP run that skipped k steps is compared with FP32's step n-k: see
python/amp_opt/numerics.py). Prints a table, appends it with the machine
and date to bench/results/amp_run_numerics.md, and plots the loss curves to
bench/results/amp_run_numerics.png (with python3-matplotlib).
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import numerics, zoo  # noqa: E402

MODELS = [(name, optimizer) for name in zoo.MODELS
          for optimizer in ("sgd", "adam")]


def heading(what):
    """The Markdown heading of a recorded result: date, machine, `what`."""
    return (f"## {datetime.date.today()} on {platform.node()} "
            f"({platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores): {what}")


def record(lines, out, name):
    """Prints the Markdown table `lines` and appends it to `out`/`name`."""
    table = "\n".join(lines) + "\n"
    print(table)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "a") as f:
        f.write(table + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, optimizer in MODELS:
            path = os.path.join(folder, f"{name}_{optimizer}.onnx")
            zoo.export(name, optimizer, path)
            curves = numerics.run_precisions(path, args.steps, args.seed)
            results[f"{name}_{optimizer}"] = {
                "curves": {p: [r["loss"] for r in records]
                           for p, records in curves.items()},
                "summary": numerics.summarize(curves)}
            print(f"{name}_{optimizer} done", file=sys.stderr)

    lines = [heading(f"{args.steps} steps, seed {args.seed}"),
             "",
             "Command: `/usr/bin/python3 bench/amp_run_numerics.py`",
             "",
             "| graph | FP32 first -> final | FP16 final (gap, skipped) | "
             "BF16 final (gap) |",
             "|---|---|---|---|"]
    for graph, result in results.items():
        s = result["summary"]
        lines.append(
            f"| {graph} | {s['fp32']['first']:.5g} -> "
            f"{s['fp32']['final']:.5g} | {s['fp16']['final']:.5g} "
            f"({100 * s['fp16']['gap']:.3f}%, {s['fp16']['skipped']}) | "
            f"{s['bf16']['final']:.5g} ({100 * s['bf16']['gap']:.3f}%) |")
    record(lines, args.out, "amp_run_numerics.md")
    with open(os.path.join(args.out, "amp_run_numerics.json"), "w") as f:
        json.dump(results, f, indent=1)

    plot_curves(results, os.path.join(args.out, "amp_run_numerics.png"),
                reference="fp32")


def plot_curves(results, png, reference):
    """Plots {graph: {"curves": {run: losses}}} on a log scale, one panel
    per graph, `reference`'s curve solid and the others dashed, to `png`
    (with python3-matplotlib; says so and returns without it)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: python3-matplotlib is not installed", file=sys.stderr)
        return
    columns = (len(results) + 1) // 2
    figure, axes = plt.subplots(2, columns, figsize=(5 * columns, 8),
                                squeeze=False)
    for axis, (graph, result) in zip(axes.T.flat, results.items()):
        for run, losses in result["curves"].items():
            axis.plot(range(1, len(losses) + 1), losses, label=run,
                      linewidth=1.5 if run == reference else 1,
                      linestyle="-" if run == reference else "--")
        axis.set_yscale("log")
        axis.set_title(graph)
        axis.set_xlabel("step")
        axis.set_ylabel("loss")
        axis.legend()
    figure.tight_layout()
    figure.savefig(png, dpi=90)
    print(f"plot: {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
