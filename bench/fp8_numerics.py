#!/usr/bin/python3
"""Numerics proof for FP8: does FP8 training track BF16 in amp-run?

Trains the zoo's transformer and GPT steps (SGD, or Adam with --optimizer)
for --steps steps with
amp-run, from one seed, in BF16 and in FP8 with each recipe (delayed,
current, block), and checks issue 19's bounds: every step's loss within 2%
of BF16's first loss from BF16's loss at that step, the final loss within
3% of BF16's, no NaN. With --fp32, an FP32 run's gaps to BF16 show how far
two precisions part without FP8: the noise floor. The FP8 GEMM count comes
from the report: a run with none would prove nothing, so it fails the
bounds.

The cost model need not pick BF16 or FP8 on the small steps'
GEMMs, so there every GEMM is BF16 (numerics.FORCED, in both runs) and
every eligible one FP8 (fp8=always); the large ones run with the cost
model's choices (fp8=auto), and a recipe for which the cost model picks no
GEMM (current scaling, whose extra amax pass costs more than hidden-768
GEMMs gain) runs with fp8=always instead, marked in the table. Prints a
table, appends it with the machine and date to bench/results/fp8_numerics.md,
writes the curves to fp8_numerics_<size>.json and plots them to
fp8_numerics_<size>.png.

BF16 training is deterministic: --bf16-from takes BF16 curves from an
earlier run's JSON, each only when a fresh BF16 run reproduces its first
REPLAY_STEPS losses exactly (the same graph, seed and learning rate), which
saves one large run per model.
"""
import argparse
import concurrent.futures
import fcntl
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, numerics, zoo  # noqa: E402
from amp_run_numerics import heading, plot_curves, record  # noqa: E402

RECIPES = ("delayed", "current", "block")
STEP_BOUND = 0.02  # of BF16's first loss, at every step
FINAL_BOUND = 0.03  # of BF16's final loss
REPLAY_STEPS = 3


def fp8_gemms(path, pipeline):
    """The FP8 GEMM count of the report of `pipeline` on `path`."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        subprocess.run([api.find_amp_opt(), path, "-o", os.devnull,
                        f"--amp-pipeline={pipeline} report={report}"],
                       check=True, capture_output=True)
        with open(report) as f:
            return json.load(f)["fp8"]["gemms"]


def reusable_bf16(results_path, name, path, pipeline, args):
    """The BF16 curve of `name` in an earlier run's JSON, if a fresh run of
    REPLAY_STEPS steps reproduces its start exactly; else None."""
    if not results_path:
        return None
    with open(results_path) as f:
        curve = json.load(f).get(name, {}).get("curves", {}).get("bf16")
    if not curve or len(curve) < args.steps:
        print(f"{name}: no {args.steps}-step BF16 curve in {results_path}",
              file=sys.stderr)
        return None
    records, _ = api.train(path, REPLAY_STEPS, pipeline, seed=args.seed,
                           timeout=None)
    replay = [r["loss"] for r in records]
    if replay != curve[:REPLAY_STEPS]:
        print(f"{name}: BF16 replay {replay} differs from "
              f"{curve[:REPLAY_STEPS]}; running BF16", file=sys.stderr)
        return None
    print(f"{name}: BF16 curve reused from {results_path} (first "
          f"{REPLAY_STEPS} steps reproduced)", file=sys.stderr)
    return curve[:args.steps]


def key(name, args):
    """A model's key in the results: its name, with the optimizer unless
    SGD."""
    return name if args.optimizer == "sgd" else f"{name} {args.optimizer}"


def base_options(size):
    """The pipeline options both BF16 and FP8 runs of `size` take: the
    cost model need not pick BF16 GEMMs on the small steps."""
    return numerics.FORCED if size == "small" else ""


def fp8_pipeline(size, recipe, mode):
    """The FP8 run of `recipe` with `fp8=mode`."""
    return (f"precision=fp8 {base_options(size)} fp8={mode} "
            f"fp8-recipe={recipe}")


def table_row(name, bf16, label, gemms, curve, gaps, verdict):
    """One Markdown row: a run's curve and its compare() gaps to BF16's."""
    return (f"| {name} | {bf16[0]:.5g} -> {bf16[-1]:.5g} | {label} | "
            f"{gemms} | {curve[-1]:.5g} | {100 * gaps['step_gap']:.3f}% | "
            f"{100 * gaps['final_gap']:.3f}% | {gaps['steps_behind']} | "
            f"{verdict} |")


def steps_behind(curve, reference):
    """How many steps before its end `reference` first reached `curve`'s
    final loss (negative: `curve` reached `reference`'s that much earlier).
    On a steep end a small lag is a large final gap."""
    ahead = curve[-1] < reference[-1]
    slow, fast = (reference, curve) if ahead else (curve, reference)
    first = next(i for i, x in enumerate(fast) if x <= slow[-1])
    return (len(fast) - 1 - first) * (-1 if ahead else 1)


def compare(bf16, fp8):
    """Issue 19's bounds for one FP8 curve against BF16's."""
    finite = all(x is not None and math.isfinite(x) for x in fp8)
    if not finite:
        return {"finite": False, "step_gap": math.inf,
                "final_gap": math.inf, "steps_behind": None}
    step_gap = max(abs(a - b) for a, b in zip(fp8, bf16)) / abs(bf16[0])
    final_gap = abs(fp8[-1] - bf16[-1]) / abs(bf16[-1])
    return {"finite": True, "step_gap": step_gap, "final_gap": final_gap,
            "steps_behind": steps_behind(fp8, bf16)}


def training_arguments(description):
    """A parser with the options of a zoo training run: --size, --steps,
    --seed, --optimizer."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=["small", "large"],
                        default="small")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", choices=["sgd", "adam"],
                        default="sgd", help="the zoo's optimizer, with its "
                        "hyperparameters but the learning rate")
    return parser


def main():
    parser = training_arguments(__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["transformer", "gpt"])
    parser.add_argument("--zoo-dir", help="reuse <model>_<optimizer>_"
                        "<size>.onnx "
                        "from this folder (python3 -m amp_opt.zoo writes "
                        "them) instead of exporting")
    parser.add_argument("--lr", type=float, help="learning rate of the "
                        "exported steps (default: the zoo's, SGD 0.01, Adam "
                        "0.001); exports even with --zoo-dir")
    parser.add_argument("--fp8", choices=["auto", "always"],
                        help="which GEMMs go FP8 (default: always for "
                        "small, auto for large)")
    parser.add_argument("--recipes", nargs="*", choices=RECIPES,
                        default=list(RECIPES),
                        help="none: only BF16 (and FP32 with --fp32)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="amp-run processes at once")
    parser.add_argument("--bf16-from", metavar="JSON",
                        help="reuse the BF16 curves of this earlier "
                        "fp8_numerics_<size>.json where a short BF16 run "
                        "reproduces them")
    parser.add_argument("--fp32", action="store_true",
                        help="also train in FP32 and report its gaps to "
                        "BF16: the noise floor the FP8 gaps compare with")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    small = args.size == "small"
    fp8_mode = args.fp8 or ("always" if small else "auto")
    fp8_options = f"fp8={fp8_mode}"
    runs = {"bf16": f"precision=bf16 {base_options(args.size)}",
            **({"fp32": None} if args.fp32 else {}),
            **{f"fp8 {recipe}": fp8_pipeline(args.size, recipe, fp8_mode)
               for recipe in args.recipes}}

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name in args.models:
            reuse = args.zoo_dir and args.lr is None
            paths[name] = os.path.join(args.zoo_dir if reuse else folder,
                                       f"{name}_{args.optimizer}_"
                                       f"{args.size}.onnx")
            if not reuse:
                zoo.export(name, args.optimizer, paths[name], size=args.size,
                           seed=args.seed, lr=args.lr)
        chosen = {(name, run): pipeline for name in args.models
                  for run, pipeline in runs.items()}
        gemms, forced = {}, set()
        for (name, run), pipeline in chosen.items():
            if not run.startswith("fp8"):
                continue
            gemms[name, run] = fp8_gemms(paths[name], pipeline)
            if gemms[name, run] == 0 and fp8_mode == "auto":
                chosen[name, run] = fp8_pipeline(args.size, run.split()[1],
                                                 "always")
                gemms[name, run] = fp8_gemms(paths[name], chosen[name, run])
                forced.add((name, run))
        reused = {}
        for name in args.models:
            curve = reusable_bf16(args.bf16_from, key(name, args),
                                  paths[name], runs["bf16"], args)
            if curve:
                reused[name] = curve
                del chosen[name, "bf16"]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {key: pool.submit(api.train, paths[key[0]],
                                        args.steps, pipeline, seed=args.seed,
                                        timeout=None)
                       for key, pipeline in chosen.items()}
            for name in args.models:
                curves = {}
                for run in runs:
                    if run == "bf16" and name in reused:
                        curves[run] = reused[name]
                        continue
                    records, _ = futures[name, run].result()
                    curves[run] = [r["loss"] for r in records]
                    print(f"{name} {run} done", file=sys.stderr)
                results[key(name, args)] = {
                    "curves": curves,
                    "fp8": {run: {"gemms": gemms[name, run],
                                  "forced": (name, run) in forced,
                                  **compare(curves["bf16"], curves[run])}
                            for run in runs if run.startswith("fp8")}}
                if "fp32" in curves:
                    results[key(name, args)]["fp32"] = compare(
                        curves["bf16"], curves["fp32"])

    lr = (args.lr if args.lr is not None
          else zoo.OPTIMIZERS[args.optimizer]["lr"])
    command = ("/usr/bin/python3 bench/fp8_numerics.py " +
               " ".join(sys.argv[1:]))
    lines = [heading(f"{args.size} zoo, {args.optimizer.upper()} "
                     f"(lr {lr:g}), {args.steps} steps, "
                     f"seed {args.seed}, FP8 {fp8_options}"
                     f"{', GEMMs forced to BF16' if small else ''}"),
             "",
             f"Command: `{command}`",
             "",
             f"Bounds: every step within {100 * STEP_BOUND:g}% of BF16's "
             f"first loss, final within {100 * FINAL_BOUND:g}% of BF16's, "
             "no NaN, at least one FP8 GEMM.",
             "",
             "| graph | BF16 first -> final | recipe | FP8 GEMMs | "
             "FP8 final | largest step gap | final gap | steps behind | "
             "bounds |",
             "|---|---|---|---|---|---|---|---|---|"]
    failed = False
    for name, result in results.items():
        bf16 = result["curves"]["bf16"]
        if "fp32" in result:
            lines.append(table_row(name, bf16, "FP32", "-",
                                   result["curves"]["fp32"], result["fp32"],
                                   "noise floor"))
        for run, fp8 in result["fp8"].items():
            ok = (fp8["finite"] and fp8["gemms"] > 0
                  and fp8["step_gap"] <= STEP_BOUND
                  and fp8["final_gap"] <= FINAL_BOUND)
            failed |= not ok
            forced = " (fp8=always: auto picks none)" if fp8["forced"] else ""
            lines.append(table_row(name, bf16, run.split()[1],
                                   f"{fp8['gemms']}{forced}",
                                   result["curves"][run], fp8,
                                   "met" if ok else "MISSED"))
    record(lines, args.out, "fp8_numerics.md")
    # Models not run this time keep their curves, and so do recipes not
    # run this time next to the same BF16 curve (the same settings).
    json_path = os.path.join(args.out, f"fp8_numerics_{args.size}.json")
    # Two runs of this script (other models) may merge at once.
    folder_fd = os.open(args.out, os.O_RDONLY)
    try:
        fcntl.flock(folder_fd, fcntl.LOCK_EX)
        merged = {}
        if os.path.exists(json_path):
            with open(json_path) as f:
                merged = json.load(f)
        for name, result in results.items():
            earlier = merged.get(name, {})
            same_bf16 = (earlier.get("curves", {}).get("bf16") ==
                         result["curves"]["bf16"])
            if same_bf16:
                earlier["curves"].update(result["curves"])
                earlier["fp8"].update(result["fp8"])
                if "fp32" in result:
                    earlier["fp32"] = result["fp32"]
                earlier.setdefault("commands", []).append(command)
            else:
                merged[name] = {**result, "commands": [command]}
        with open(json_path, "w") as f:
            json.dump(merged, f, indent=1)
        plot_curves(merged,
                    os.path.join(args.out, f"fp8_numerics_{args.size}.png"),
                    reference="bf16")
    finally:
        os.close(folder_fd)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
