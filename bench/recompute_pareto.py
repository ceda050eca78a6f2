"""Recomputation's Pareto front: saved activations against extra FLOPs.

    /usr/bin/python3 bench/recompute_pareto.py [--zoo-dir DIR]
        [--seqs 128 256 512 1024] [--time-limit 30]

For the large zoo transformer and GPT steps (FP32 and BF16) and the GPT at
hidden 768 over sequence lengths (BF16), runs amp-opt's pipeline with
recompute=mincut, sqrt, budget at 100% down to 0% of the saved activations,
and optimal (the MILP, where it solves within --time-limit seconds) at the
same budgets and without one. Records each plan's saved-activation and
peak bytes (the memory planner's) and extra FLOPs to
bench/results/recompute_pareto.md, the points to recompute_pareto.json and
the fronts to recompute_pareto.png.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, record  # noqa: E402

BUDGETS = (100, 90, 80, 70, 60, 50, 40, 30, 25, 20, 10, 5, 0)
OPTIMAL_BUDGETS = (50, 25, 10)


def plan(path, pipeline, folder, timeout):
    """amp-opt's report of `pipeline` on `path`, with the wall time, or
    None when it fails or runs past `timeout` seconds."""
    report = os.path.join(folder, "report.json")
    if os.path.exists(report):
        os.remove(report)
    start = time.time()
    proc = subprocess.run(
        [api.find_amp_opt(), path, "-o", os.devnull,
         f"--amp-pipeline={pipeline} report={report}"],
        capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return None
    with open(report) as f:
        result = json.load(f)["recompute"]
    result["seconds"] = time.time() - start
    result["warning"] = "cannot reduce" in proc.stderr
    return result


def graphs(args, folder):
    """(label, path, precisions) of each graph to measure."""
    def exported(name, size, config=None):
        path = os.path.join(args.zoo_dir or folder, f"{name}_sgd_{size}.onnx")
        if not os.path.exists(path):
            if config:
                zoo.SIZES[name][size] = config
            zoo.export(name, "sgd", path, size=size)
        return path
    yield "transformer", exported("transformer", "large"), ("fp32", "bf16")
    yield "gpt seq 128", exported("gpt", "large"), ("fp32", "bf16")
    for seq in args.seqs:
        if seq == 128:
            continue
        config = dict(zoo.SIZES["gpt"]["large"], seq=seq)
        yield (f"gpt seq {seq}", exported("gpt", f"seq{seq}", config),
               ("bf16",))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo-dir", help="reuse <model>_sgd_<size>.onnx "
                        "(gpt_sgd_seq<N>.onnx for the sweep) from here")
    parser.add_argument("--seqs", type=int, nargs="+",
                        default=[128, 256, 512, 1024])
    parser.add_argument("--time-limit", type=float, default=30)
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()

    points = {}
    lines = [heading("recompute Pareto (`/usr/bin/python3 "
                     "bench/recompute_pareto.py " +
                     " ".join(sys.argv[1:]) + "`)"), "",
             "| graph | precision | mode | budget | saved MB | saved % | "
             "peak MB | extra FLOPs % | extra modeled time % | recomputed | "
             "amp-opt s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        for label, path, precisions in graphs(args, folder):
            for precision in precisions:
                runs = [("mincut", None, "recompute=mincut"),
                        ("sqrt", None, "recompute=sqrt"),
                        ("optimal", None, "recompute=optimal "
                         f"optimal-time-limit={args.time_limit}")]
                runs += [("budget", b, f"memory-budget={b}%")
                         for b in BUDGETS]
                runs += [("optimal", b, f"recompute=optimal "
                          f"optimal-time-limit={args.time_limit} "
                          f"memory-budget={b}%") for b in OPTIMAL_BUDGETS]
                key = f"{label} {precision}"
                points[key] = []
                for mode, budget, options in runs:
                    pipeline = f"precision={precision} {options}"
                    result = plan(path, pipeline, folder,
                                  timeout=args.time_limit * 4 + 120)
                    if result is None:
                        lines.append(f"| {label} | {precision} | {mode} | "
                                     f"{budget}% | failed or timed out | | "
                                     "| | | | |")
                        continue
                    saved = result["saved_activation_bytes"]
                    share = 100 * saved["after"] / max(saved["before"], 1)
                    point = dict(mode=mode, budget=budget,
                                 saved=saved["after"],
                                 saved_before=saved["before"],
                                 share=share,
                                 peak=result["peak_bytes"]["after"],
                                 extra=result["extra_flops_percent"],
                                 extra_time=result["extra_modeled_percent"],
                                 recomputed_by_type=result[
                                     "recomputed_by_type"],
                                 recomputed=result["recomputed_ops"],
                                 proven=result.get("optimal_proven"),
                                 fastest_time=result.get(
                                     "fastest_extra_modeled_us"),
                                 extra_us=result["extra_modeled_us"],
                                 met=not result["warning"])
                    points[key].append(point)
                    note = "" if point["met"] else " (not met)"
                    if point["proven"] is False:
                        note += " (not proven)"
                    lines.append(
                        f"| {label} | {precision} | {mode} | "
                        f"{'' if budget is None else f'{budget}%'}{note} | "
                        f"{saved['after'] / 1e6:.1f} | {share:.1f} | "
                        f"{point['peak'] / 1e6:.1f} | {point['extra']:.2f} | "
                        f"{point['extra_time']:.2f} | "
                        f"{point['recomputed']} | {result['seconds']:.1f} |")
                    print(lines[-1], flush=True)
    lines += peak_table(points) + milp_table(points)
    lines.append("")
    record(lines, args.out, "recompute_pareto.md")
    with open(os.path.join(args.out, "recompute_pareto.json"), "w") as f:
        json.dump(points, f, indent=1)
    plot(points, os.path.join(args.out, "recompute_pareto.png"))


def table(title, columns, rows):
    """A Markdown table's lines, after a blank line and `title`."""
    return (["", title, "", "| " + " | ".join(columns) + " |",
             "|" + "---|" * len(columns)] +
            ["| " + " | ".join(row) + " |" for row in rows])


def peak_table(points):
    """Whether mode=budget's peak falls or stays as the budget shrinks."""
    rows = []
    for key, runs in points.items():
        peaks = [p["peak"] for p in runs if p["mode"] == "budget"]
        if peaks:
            monotone = all(a >= b for a, b in zip(peaks, peaks[1:]))
            rows.append([key, f"{peaks[0] / 1e6:.1f}",
                         f"{peaks[-1] / 1e6:.1f}", "yes" if monotone else "no"])
    return table("Peak across budgets (mode=budget, 100% down to 0%): the "
                 "peak check keeps it from rising on its 10% rungs.",
                 ["graph", "peak MB at 100%", "peak MB at the lowest budget",
                  "non-increasing"], rows)


def milp_table(points):
    """Budget mode's extra modeled time against the MILP's proven optimum."""
    rows = []
    for key, runs in points.items():
        for b in OPTIMAL_BUDGETS:
            exact = [p for p in runs if p["mode"] == "optimal" and
                     p["budget"] == b and p["proven"]]
            heuristic = [p for p in runs if p["mode"] == "budget" and
                         p["budget"] == b]
            if not exact or not heuristic:
                continue
            best, plan = exact[0]["extra_us"], heuristic[0]
            row = [key, f"{b}%", f"{best:.1f}"]
            for us in (plan["fastest_time"], plan["extra_us"]):
                row += [f"{us:.1f}",
                        f"{us / best:.3f}" if best > 0 else "-"]
            rows.append(row)
    return table("Budget mode against the MILP where it proved its optimum "
                 "(extra modeled us; the search's fastest plan is "
                 "peak-check=false's):",
                 ["graph", "budget", "MILP", "search's fastest", "ratio",
                  "after the peak check", "ratio"], rows)


def plot(points, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(9, 6))
    markers = {"mincut": "o", "sqrt": "s", "budget": ".", "optimal": "x"}
    for key, values in points.items():
        budget = sorted((p for p in values if p["mode"] == "budget"),
                        key=lambda p: p["share"])
        line, = axes.plot([p["extra"] for p in budget],
                          [p["share"] for p in budget], "-", label=key)
        for p in values:
            if p["mode"] != "budget":
                axes.plot(p["extra"], p["share"], markers[p["mode"]],
                          color=line.get_color())
    axes.set_xlabel("extra FLOPs (% of the step)")
    axes.set_ylabel("saved activations (% of no recomputation)")
    axes.set_title("amp-recompute: budget front (lines); o mincut, "
                   "s sqrt, x optimal")
    axes.legend(fontsize=8)
    axes.grid(True, alpha=0.3)
    figure.savefig(path, dpi=100, bbox_inches="tight")


if __name__ == "__main__":
    main()
