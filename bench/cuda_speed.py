#!/usr/bin/python3
"""amp-compile's step libraries on a GPU, against the CPU and PyTorch.

Two halves, so that the GPU machine needs no amp-opt build:

  cuda_speed.py prepare DIR [--size small|large]   (here: build + toolkit)
  cuda_speed.py run DIR                            (there: GPU, numpy, torch)

`prepare` exports each zoo model's SGD step, compiles it in each precision
(docs/AmpCompile.md; with onnx-types=false, so that BF16 convolutions are
cuDNN BF16 ones, as in PyTorch's autocast) and, for the small size, runs
it on the CPU with amp-run for --steps steps (its losses, first inputs and
last outputs are the reference). `run` trains each library on the GPU through
amp_opt.step_library: small steps from the CPU run's inputs, compared with
its losses and outputs (numerics.backend_mismatch, and the loss moves);
large steps from the zoo's PyTorch parameters and batch, next to PyTorch
eager training the same model on the same GPU (FP32, TF32 for the FP32
libraries run with AMP_CUDA_TF32=1, FP16 autocast with GradScaler, BF16
autocast; FP8 next to BF16), the loss after --steps steps compared (FP32
within 1e-4 relative). Then
it times both: milliseconds per step.
`prepare` also compiles two single-op graphs, timed by `run` in a second
table: an elementwise kernel (Relu(2x) over 2^26 floats) in GB/s next to
the driver's device-to-device copy of the same bytes, and an 8192^3 GEMM
(FP32, TF32, FP16, BF16) in TFLOP/s next to torch.matmul's on the same GPU
and the device's dense peak from its data sheet.
Prints the tables, appends them with the machine and date to
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

ELEMENTWISE_SIZE = 1 << 26
GEMM_SIZE = 8192
# The GEMM libraries: precision -> (ONNX element type, library, AMP_CUDA_TF32).
GEMM_PRECISIONS = {"fp32": ("FLOAT", "gemm_fp32", False),
                   "tf32": ("FLOAT", "gemm_fp32", True),
                   "fp16": ("FLOAT16", "gemm_fp16", False),
                   "bf16": ("BFLOAT16", "gemm_bf16", False)}


def compile_library(model, library, args, pipeline=None):
    """amp-compile's library of `model`; its summary line."""
    command = [api.find_tool("amp-compile"), model, "-o", library,
               f"--lower-options=chips={args.chips}"]
    if pipeline:
        command.append(f"--amp-pipeline={pipeline}")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{model}: {run.stderr.strip()}")
    return run.stderr.strip().splitlines()[-1]


def prepare_kernels(args):
    """The single-op graphs and their libraries, in DIR/kernels."""
    import onnx
    from onnx import TensorProto, helper
    folder = os.path.join(args.dir, "kernels")
    os.makedirs(folder, exist_ok=True)

    def save(name, nodes, inputs, outputs, initializers=()):
        graph = helper.make_graph(nodes, name, inputs, outputs,
                                  initializer=list(initializers))
        path = os.path.join(folder, f"{name}.onnx")
        onnx.save(helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        summary = compile_library(path, os.path.join(folder, f"{name}.so"),
                                  args)
        os.remove(path)
        return summary

    n = ELEMENTWISE_SIZE
    kernels = [{
        "name": "elementwise", "precision": "fp32",
        "library": "kernels/elementwise.so", "bytes": 2 * 4 * n,
        "summary": save(
            "elementwise",
            [helper.make_node("Mul", ["x", "two"], ["doubled"]),
             helper.make_node("Relu", ["doubled"], ["y"])],
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
            [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])}]
    n = GEMM_SIZE
    built = {}
    for precision, (dtype, name, tf32) in GEMM_PRECISIONS.items():
        if name not in built:
            element = getattr(TensorProto, dtype)
            built[name] = save(
                name, [helper.make_node("MatMul", ["a", "b"], ["c"])],
                [helper.make_tensor_value_info(x, element, [n, n])
                 for x in "ab"],
                [helper.make_tensor_value_info("c", element, [n, n])])
        kernels.append({"name": "gemm", "precision": precision,
                        "library": f"kernels/{name}.so", "tf32": tf32,
                        "flops": 2 * n ** 3, "summary": built[name]})
    return kernels


def prepare(args):
    from amp_opt import zoo
    os.makedirs(args.dir, exist_ok=True)
    kernels = prepare_kernels(args)
    entries = []
    for name in args.models or zoo.MODELS:
        model = os.path.join(args.dir, f"{name}.onnx")
        zoo.export(name, "sgd", model, size=args.size)
        for precision in args.precisions:
            if why_no_forced_step(name, precision):
                continue
            pipeline, ulp = FORCED_PRECISIONS[precision]
            # Lowered, never exported: a BF16 Conv as PyTorch's autocast
            # runs it, though ONNX allows it from opset 22 only.
            pipeline += " onnx-types=false"
            folder = os.path.join(args.dir, f"{name}_{precision}")
            os.makedirs(folder, exist_ok=True)
            entry = {"model": name, "precision": precision, "ulp": ulp,
                     "library": f"{name}_{precision}/step.so"}
            entry["summary"] = compile_library(
                model, os.path.join(folder, "step.so"), args, pipeline)
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
                           "entries": entries, "kernels": kernels}, f,
                          indent=1)
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
    values = zoo.step_values(name, size)
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


def load_library(path, tf32, graphs=False):
    """The step library at `path`; with `tf32`, its GEMMs in TF32
    (AMP_CUDA_TF32=1), with `graphs`, its steps captured in CUDA graphs
    (AMP_CUDA_GRAPH=1), each on a copy of the library, whose runtime reads
    the variables and makes its own plans (once per loaded library)."""
    entry = step_library.entry_of(path)
    suffix = ("_tf32" if tf32 else "") + ("_graph" if graphs else "")
    if suffix:
        copy = path.replace(".so", suffix + ".so")
        shutil.copyfile(path, copy)
        path = copy
    for variable, on in [("AMP_CUDA_TF32", tf32), ("AMP_CUDA_GRAPH", graphs)]:
        if on:
            os.environ[variable] = "1"
        else:
            os.environ.pop(variable, None)
    return step_library.StepLibrary(path, entry=entry)


def time_in_graphs(args, entry, tf32, values, driver, losses, ulp):
    """ms/step of the library with AMP_CUDA_GRAPH=1 (from the fifth step
    on, each step replays one of its two graphs: DeviceStep swaps buffers),
    and the problems: its losses differ from `losses`."""
    library = load_library(os.path.join(args.dir, entry["library"]), tf32,
                           graphs=True)
    step = step_library.DeviceStep(library, values, driver)
    graph_losses = step.train(len(losses))
    problems = []
    if backend_mismatch(graph_losses, losses, ulp):
        problems.append(f"in CUDA graphs: losses {graph_losses} vs "
                        f"{losses} without")
    step.time_steps(4)  # warm up: both pointer sets captured
    ms = step.time_steps(args.timing_steps)
    step.close()
    return ms, problems


def run_guarded(run_one, failed_row):
    """`run_one()`'s row, or `failed_row` with the error as its problem
    where the library fails; printed as JSON as it comes."""
    try:
        row = run_one()
    except step_library.StepLibraryError as error:
        row = dict(failed_row, problems=[str(error)])
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def check_cell(problems, limit=None):
    """A row's check column: ok, or its problems."""
    return "ok" if not problems else \
        "FAILED: " + "; ".join(problems)[:limit]


def failed_line(first, columns, problems):
    """A table line for a row that has no numbers: its first cells, empty
    ones up to `columns`, then the first problem."""
    empty = columns - len(first) - 1
    return "| " + " | ".join(first) + " |" + " |" * empty + \
        f" FAILED: {problems[0][:200]} |"


def run_entry(args, manifest, entry, driver, tf32=False):
    """One library: its check and timings, as a table row. `tf32`: an FP32
    library's GEMMs in TF32 (AMP_CUDA_TF32=1, on a copy of the library,
    whose runtime makes its own GEMM plans)."""
    size, steps = manifest["size"], manifest["steps"]
    folder = os.path.join(args.dir, os.path.dirname(entry["library"]))
    library = load_library(os.path.join(args.dir, entry["library"]), tf32)
    if tf32:
        entry = dict(entry, precision="tf32")
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
    step.close()
    row["graph_ms"], graph_problems = time_in_graphs(
        args, entry, tf32, values, driver, losses, entry["ulp"])
    row["problems"] = problems + graph_problems
    return row


# Dense peaks from NVIDIA's data sheets, TFLOP/s, by a part of the name.
PEAK_TFLOPS = [("H100 PCIe", {"fp32": 51.2, "tf32": 378, "fp16": 756,
                              "bf16": 756}),
               ("H100", {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4,
                         "bf16": 989.4}),
               ("H200", {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4,
                         "bf16": 989.4})]


def time_copy(driver, size, repeats):
    """GB/s of the driver's device-to-device copy of `size` bytes (read
    and written)."""
    source, target = driver.alloc(size), driver.alloc(size)
    driver.copy(target, source, size)
    driver.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        driver.copy(target, source, size)
    driver.synchronize()
    seconds = (time.perf_counter() - start) / repeats
    driver.free(source)
    driver.free(target)
    return 2 * size / seconds / 1e9


def time_torch_matmul(precision, n, repeats):
    """torch.matmul's TFLOP/s for an n^3 GEMM, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(
        precision, torch.float32)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / repeats
    return 2 * n ** 3 / seconds / 1e12


def run_kernel(args, kernel, driver):
    """One single-op library: checked, timed and set against its
    reference, as a row of the kernels table."""
    library = load_library(os.path.join(args.dir, kernel["library"]),
                           kernel.get("tf32", False))
    rng = np.random.default_rng(0)
    values = {e["name"]: rng.standard_normal(e["shape"], np.float32)
              for e in library.signature["inputs"]
              if not e.get("initializer")}
    values.update({e["name"]: np.full(e["shape"], e["value"])
                   for e in library.signature["inputs"]
                   if e.get("initializer")})
    step = step_library.DeviceStep(library, values, driver)
    step.step()
    problems = []
    # The result, on a corner (the whole GEMM is too slow in numpy).
    got = step.output(library.signature["outputs"][0]["name"])
    if kernel["name"] == "elementwise":
        expected = np.maximum(2 * values["x"], 0)
        if not np.array_equal(got, expected):
            problems.append("Relu(2x) differs from numpy's")
    else:
        a = step_library.as_float(step_library.as_dtype(
            values["a"][:64], library.signature["inputs"][0]["dtype"]),
            library.signature["inputs"][0]["dtype"])
        b = step_library.as_float(step_library.as_dtype(
            values["b"][:, :64], library.signature["inputs"][1]["dtype"]),
            library.signature["inputs"][1]["dtype"])
        expected = a.astype(np.float64) @ b.astype(np.float64)
        error = norm_error(got[:64, :64], expected)
        if error > {"fp32": 1e-5, "tf32": 5e-3}.get(kernel["precision"],
                                                    1e-2):
            problems.append(f"corner's norm-wise error {error:.2g}")
    ms = step.time_steps(args.timing_steps)
    step.close()
    row = {"kernel": kernel["name"], "precision": kernel["precision"],
           "kernels": re.search(r"(\d+) kernels", kernel["summary"])[1],
           "ms": ms, "problems": problems}
    if kernel["name"] == "elementwise":
        row["unit"] = "GB/s"
        row["value"] = kernel["bytes"] / (ms / 1e3) / 1e9
        row["reference"] = "cuMemcpyDtoD"
        row["ref_value"] = time_copy(driver, kernel["bytes"] // 2,
                                     args.timing_steps)
        return row
    row["unit"] = "TFLOP/s"
    row["value"] = kernel["flops"] / (ms / 1e3) / 1e12
    row["reference"] = "torch.matmul"
    row["ref_value"] = time_torch_matmul(kernel["precision"], GEMM_SIZE,
                                         args.timing_steps)
    peak = next((p for part, p in PEAK_TFLOPS if part in driver.name), None)
    row["peak"] = peak[kernel["precision"]] if peak else None
    return row


def kernel_table(rows):
    lines = ["", "Single-op libraries (kernels/ in DIR): an elementwise "
             f"kernel over {ELEMENTWISE_SIZE} floats, a {GEMM_SIZE}^3 GEMM.",
             "", "| op | precision | kernels | ms | ours | reference | "
             "reference's | ratio | data-sheet dense peak | check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ms" not in r:
            lines.append(failed_line([r["kernel"], r["precision"]], 10,
                                     r["problems"]))
            continue
        unit, value, ref = r["unit"], r["value"], r["ref_value"]
        reference = f"{ref:.1f} {unit}" if ref else "(no torch)"
        ratio = f"{value / ref:.2f}" if ref else ""
        peak = r.get("peak")
        peak = f"{peak} TFLOP/s (ours {value / peak:.0%})" if peak else ""
        check = check_cell(r["problems"])
        lines.append(
            f"| {r['kernel']} | {r['precision']} | {r['kernels']} | "
            f"{r['ms']:.3f} | {value:.1f} {unit} | {r['reference']} | "
            f"{reference} | {ratio} | {peak} | {check} |")
    return lines


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
            rows.append(run_guarded(
                lambda: run_entry(args, manifest, entry, driver, tf32),
                {"model": entry["model"],
                 "precision": "tf32" if tf32 else entry["precision"]}))
    kernel_rows = [
        run_guarded(lambda: run_kernel(args, kernel, driver),
                    {"kernel": kernel["name"],
                     "precision": kernel["precision"]})
        for kernel in manifest.get("kernels", [])]
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
             "\"in graphs\" is the same library with AMP_CUDA_GRAPH=1 "
             "(each step replays a CUDA graph).",
             "",
             "| graph | precision | kernels | GEMMs | reference | "
             f"{error_column} | ms/step | in graphs ms/step | "
             "reference ms/step | ratio | ratio in graphs | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ms" not in r:
            lines.append(failed_line([r["model"], r["precision"]], 12,
                                     r["problems"]))
            continue
        check = check_cell(r["problems"], 300)
        lines.append(
            f"| {r['model']} | {r['precision']} | {r['kernels']} | "
            f"{r['gemms']} | {r['reference']} | {r['error']:.2g} | "
            f"{r['ms']:.3f} | {r['graph_ms']:.3f} | {r['ref_ms']:.3f} | "
            f"{r['ms'] / r['ref_ms']:.2f} | "
            f"{r['graph_ms'] / r['ref_ms']:.2f} | {check} |")
    if kernel_rows:
        lines += kernel_table(kernel_rows)
    record(lines, args.out, "cuda_speed.md")
    sys.exit(1 if any(r["problems"] for r in rows + kernel_rows) else 0)


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
