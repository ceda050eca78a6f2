#!/usr/bin/python3
"""amp-compile's step libraries on a GPU, against the CPU and PyTorch.

Two halves, so that the GPU machine needs no amp-opt build:

  cuda_speed.py prepare DIR [--size small|large]   (here: build + toolkit)
  cuda_speed.py run DIR                            (there: GPU, numpy, torch)

`prepare` exports each zoo model's SGD step, compiles it in each precision
(docs/AmpCompile.md) and, for the small size, runs it on the CPU with
amp-run for --steps steps (its losses, first inputs and last outputs are
the reference). `run` trains each library on the GPU through
amp_opt.step_library: small steps from the CPU run's inputs, compared with
its losses and outputs (numerics.backend_mismatch, and the loss moves);
large steps from the zoo's PyTorch parameters and batch, next to PyTorch
eager training the same model on the same GPU (FP32, TF32 for the FP32
libraries run with AMP_CUDA_TF32=1, FP16 autocast with GradScaler, BF16
autocast; FP8 next to BF16), the loss after --steps steps compared (FP32
within 1e-4 relative). Then
it times both: milliseconds per step.
Prints a table, appends it with the machine and date to
bench/results/cuda_speed.md (or --out), exits 1 when a check fails.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, step_library  # noqa: E402
from amp_opt.numerics import (FORCED_PRECISIONS, backend_mismatch,  # noqa
                              norm_error, why_no_forced_step)

#===--- prepare (needs the build and the CUDA toolkit) ---===#

def prepare(args):
    from amp_opt import zoo
    os.makedirs(args.dir, exist_ok=True)
    entries = []
    for name in args.models or zoo.MODELS:
        model = os.path.join(args.dir, f"{name}.onnx")
        zoo.export(name, "sgd", model, size=args.size)
        for precision in args.precisions:
            if why_no_forced_step(name, precision):
                continue
            pipeline, ulp = FORCED_PRECISIONS[precision]
            folder = os.path.join(args.dir, f"{name}_{precision}")
            os.makedirs(folder, exist_ok=True)
            entry = {"model": name, "precision": precision, "ulp": ulp,
                     "library": f"{name}_{precision}/step.so"}
            run = subprocess.run(
                [api.find_tool("amp-compile"), model, "-o",
                 os.path.join(folder, "step.so"),
                 f"--amp-pipeline={pipeline}",
                 f"--lower-options=chips={args.chips}"],
                capture_output=True, text=True)
            if run.returncode:
                sys.exit(f"{name} {precision}: {run.stderr.strip()}")
            entry["summary"] = run.stderr.strip().splitlines()[-1]
            if args.size == "small":
                try:
                    records, _ = api.train(model, args.steps, pipeline, args=[
                        "--save-inputs", os.path.join(folder, "in"),
                        "--save-outputs", os.path.join(folder, "out")])
                except api.AmpOptError as error:
                    sys.exit(f"{name} {precision}: {error}")
                entry["cpu_losses"] = [r["loss"] for r in records]
                entry["cpu_ms"] = float(np.median(
                    [r["time_ms"] for r in records[1:] or records]))
            entries.append(entry)
            print(f"{name} {precision}: {entry['summary']}", file=sys.stderr)
            # After each step, so that a failure keeps what was built.
            with open(os.path.join(args.dir, "manifest.json"), "w") as f:
                json.dump({"size": args.size, "steps": args.steps,
                           "entries": entries}, f, indent=1)
        if args.size == "large":
            os.remove(model)  # the GPU side rebuilds it from the zoo


#===--- run (needs a GPU, numpy and, for the large size, torch) ---===#

def cpu_values(folder, signature):
    return {e["name"]: api.load_saved(os.path.join(folder, "in"), e["name"])
            for e in signature["inputs"]}


def torch_values(name, size, signature):
    """The zoo's PyTorch parameters and batch (seed 0, as exported), and
    each splat initializer's value (moments, counters, loss scale)."""
    from amp_opt import zoo
    model, inputs, targets, _ = zoo.build(name, size)
    values = {k: v.detach().numpy() for k, v in
              [*model.named_parameters(), *model.named_buffers()]}
    values.update({f"input{i}": x.numpy() for i, x in enumerate(inputs)})
    values.update({f"target{i}": y.numpy() for i, y in enumerate(targets)})
    for e in signature["inputs"]:
        if "value" in e and e["name"] not in values:
            values[e["name"]] = np.full(e["shape"], e["value"], np.float64)
    return values


def torch_reference(name, size, precision, steps, timing_steps):
    """PyTorch training the zoo model on the GPU: losses of `steps` steps
    and milliseconds per step."""
    import torch
    from amp_opt import zoo
    model, inputs, targets, loss_fn = zoo.build(name, size)
    model = model.cuda()
    inputs = [x.cuda() for x in inputs]
    targets = [y.cuda() for y in targets]
    optimizer = torch.optim.SGD(model.parameters(), **zoo.OPTIMIZERS["sgd"])
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16,
             "fp8": torch.bfloat16}.get(precision)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32,
                            enabled=dtype is not None):
            loss = loss_fn(model(*inputs), *targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss

    losses = [float(step()) for _ in range(steps)]
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(timing_steps):
        step()
    torch.cuda.synchronize()
    return losses, (time.perf_counter() - start) * 1e3 / timing_steps


def run_entry(args, manifest, entry, driver, tf32=False):
    """One library: its check and timings, as a table row. `tf32`: an FP32
    library's GEMMs in TF32 (AMP_CUDA_TF32=1, on a copy of the library,
    whose runtime makes its own GEMM plans)."""
    size, steps = manifest["size"], manifest["steps"]
    folder = os.path.join(args.dir, os.path.dirname(entry["library"]))
    path = os.path.join(args.dir, entry["library"])
    if tf32:
        copy = os.path.join(folder, "step_tf32.so")
        shutil.copyfile(path, copy)
        path = copy
        entry = dict(entry, precision="tf32")
        os.environ["AMP_CUDA_TF32"] = "1"
    else:
        os.environ.pop("AMP_CUDA_TF32", None)
    library = step_library.StepLibrary(path, entry="step")
    signature = library.signature
    values = cpu_values(folder, signature) if size == "small" else \
        torch_values(entry["model"], size, signature)
    step = step_library.DeviceStep(library, values, driver)
    losses = step.train(steps)
    row = {"model": entry["model"], "precision": entry["precision"],
           "kernels": re.search(r"(\d+) kernels", entry["summary"])[1],
           "gemms": re.search(r"(\d+) cuBLASLt", entry["summary"])[1],
           "losses": losses}
    problems = []
    if not all(np.isfinite(losses)) or losses[-1] == losses[0]:
        problems.append(f"losses {losses} do not train")
    if size == "small":
        error = norm_error(losses, entry["cpu_losses"])
        if backend_mismatch(losses, entry["cpu_losses"], entry["ulp"]):
            problems.append(f"losses {losses} vs CPU {entry['cpu_losses']}")
        # The CPU's FP32 run of the same step, where prepare made one.
        fp32_folder = os.path.join(args.dir, f"{entry['model']}_fp32", "out")
        compare_fp32 = entry["precision"] != "fp32" and \
            os.path.isdir(fp32_folder)
        for o in signature["outputs"]:
            got = step.output(o["name"])
            expected = api.load_saved(os.path.join(folder, "out"), o["name"])
            error = max(error, norm_error(got, expected))
            try:
                fp32 = api.load_saved(fp32_folder, o["name"]) \
                    if compare_fp32 else None
            except FileNotFoundError:  # state FP32 has not (FP8's, say)
                fp32 = None
            problem = backend_mismatch(got, expected, entry["ulp"], fp32)
            if problem:
                problems.append(f"output {o['name']}: {problem}")
        # The CPU's time is prepare's, on its machine: not a ratio to quote.
        row["reference"] = "CPU (amp-run, prepare's machine)"
        row["ref_ms"] = entry["cpu_ms"]
    else:
        reference, row["ref_ms"] = torch_reference(
            entry["model"], size, entry["precision"], steps,
            args.timing_steps)
        error = abs(losses[-1] - reference[-1]) / abs(reference[-1])
        row["reference"] = "PyTorch " + {
            "fp32": "fp32", "tf32": "tf32", "fp16": "fp16 autocast",
            "bf16": "bf16 autocast", "fp8": "bf16 autocast"}[
                entry["precision"]]
        row["ref_losses"] = reference
        # FP32 is the same arithmetic as PyTorch's up to summation order.
        if entry["precision"] == "fp32" and error > 1e-4:
            problems.append(f"losses {losses} vs PyTorch's {reference}")
    row["error"] = error
    step.time_steps(2)  # warm up: plans, modules
    row["ms"] = step.time_steps(args.timing_steps)
    row["problems"] = problems
    step.close()
    return row


def run(args):
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    driver = step_library.Driver()
    rows = []
    for entry in manifest["entries"]:
        if args.models and entry["model"] not in args.models:
            continue
        variants = [False, True] if manifest["size"] == "large" and \
            entry["precision"] == "fp32" else [False]
        for tf32 in variants:
            try:
                row = run_entry(args, manifest, entry, driver, tf32)
            except step_library.StepLibraryError as error:
                row = {"model": entry["model"],
                       "precision": "tf32" if tf32 else entry["precision"],
                       "problems": [str(error)]}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    from amp_run_numerics import heading, record
    size = manifest["size"]
    error_column = "worst norm-wise rel. error" if size == "small" else \
        "last loss rel. error"
    lines = [heading(f"{driver.name}, zoo --size {size}, SGD, step libraries"),
             "",
             f"Commands: `bench/cuda_speed.py prepare DIR --size {size}` "
             f"(here), `bench/cuda_speed.py run DIR` (on the GPU); "
             f"{manifest['steps']} checked steps, then "
             f"{args.timing_steps} timed.",
             "",
             "| graph | precision | kernels | GEMMs | reference | "
             f"{error_column} | ms/step | reference ms/step | ratio | "
             "check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ms" not in r:
            lines.append(f"| {r['model']} | {r['precision']} | | | | | | | "
                         f"| FAILED: {r['problems'][0][:200]} |")
            continue
        check = "ok" if not r["problems"] else \
            "FAILED: " + "; ".join(r["problems"])[:300]
        lines.append(
            f"| {r['model']} | {r['precision']} | {r['kernels']} | "
            f"{r['gemms']} | {r['reference']} | {r['error']:.2g} | "
            f"{r['ms']:.3f} | {r['ref_ms']:.3f} | "
            f"{r['ms'] / r['ref_ms']:.2f} | {check} |")
    record(lines, args.out, "cuda_speed.md")
    sys.exit(1 if any(r["problems"] for r in rows) else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare", help="compile and run on the CPU")
    p.add_argument("dir")
    p.add_argument("--size", default="small", choices=["small", "large"])
    p.add_argument("--models", nargs="*",
                   help="zoo models (default: all)")
    p.add_argument("--precisions", nargs="*",
                   default=list(FORCED_PRECISIONS))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--chips", default="sm_90",
                   help="--amp-lower-to-cuda chips (default sm_90)")
    r = commands.add_parser("run", help="train and time on the GPU")
    r.add_argument("dir")
    r.add_argument("--models", nargs="*")
    r.add_argument("--timing-steps", type=int, default=20)
    r.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    prepare(args) if args.command == "prepare" else run(args)


if __name__ == "__main__":
    main()
