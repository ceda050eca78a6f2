#!/usr/bin/python3
"""Import + export speed of amp-opt against onnx.load + onnx.save.

Generates training-like graphs (MatMul + Add + Relu blocks with their
weights, forward and a backward-shaped chain) of about 1k, 10k and 100k
nodes, then times, in the same run and on the same files:
  amp-opt IN -o OUT                      (C++ import, MLIR, export)
  /usr/bin/python3: onnx.load + onnx.save (protobuf round trip, no IR)
Each tool runs as its own process (start-up included), the two alternately,
--repeat times each; the ratio is the median of the per-pair ratios.
Prints a table and appends it, with the machine and date, to
bench/results/roundtrip.md.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTH = 16


def make_graph(num_nodes, path):
    """~num_nodes nodes: blocks of MatMul, Add, Relu with a weight and bias."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    for i in range(num_nodes // 3):
        w, b = f"layer{i}.weight", f"layer{i}.bias"
        inits.append(numpy_helper.from_array(
            rng.standard_normal((WIDTH, WIDTH)).astype(np.float32), w))
        inits.append(numpy_helper.from_array(np.zeros(WIDTH, np.float32), b))
        nodes += [helper.make_node("MatMul", [x, w], [f"mm{i}"], name=f"mm{i}"),
                  helper.make_node("Add", [f"mm{i}", b], [f"add{i}"],
                                   name=f"add{i}"),
                  helper.make_node("Relu", [f"add{i}"], [f"relu{i}"],
                                   name=f"relu{i}")]
        x = f"relu{i}"
    graph = helper.make_graph(
        nodes, f"chain{num_nodes}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", WIDTH])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["N", WIDTH])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return len(nodes)


def run(cmd):
    """Wall time (s) and peak RSS (MiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}: {proc.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def paired(amp_cmd, py_cmd, repeat):
    """Runs the two commands alternately, `repeat` times each, so that load
    from other tenants hits both alike. Returns the best time and the peak
    memory of each, and the median of the per-pair time ratios."""
    amp_runs, py_runs = [], []
    for _ in range(repeat):
        amp_runs.append(run(amp_cmd))
        py_runs.append(run(py_cmd))
    ratios = sorted(a[0] / p[0] for a, p in zip(amp_runs, py_runs))
    return (min(t for t, _ in amp_runs), max(m for _, m in amp_runs),
            min(t for t, _ in py_runs), max(m for _, m in py_runs),
            ratios[len(ratios) // 2])


def record(file_name, command, body):
    """Appends `body` under a heading with the date and the machine to
    bench/results/`file_name`, after the line `command`."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    machine = (f"{platform.node()}, {os.cpu_count()} cores, "
               f"{platform.platform()}")
    with open(os.path.join(HERE, "results", file_name), "a") as f:
        f.write(f"\n## {stamp} on {machine}\n\n{command}\n\n{body}\n")


def parse_arguments(doc, sizes):
    """The options of the timing benchmarks: the amp-opt to run, graph sizes
    (default `sizes`), repetitions, and whether to record the table."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--amp-opt", default="build/bin/amp-opt")
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    return parser.parse_args()


def main():
    args = parse_arguments(__doc__, "1000,10000,100000")

    py_roundtrip = ("import onnx, sys; m = onnx.load(sys.argv[1]); "
                    "onnx.save(m, sys.argv[2])")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            path = os.path.join(tmp, f"g{size}.onnx")
            n = make_graph(size, path)
            mib = os.path.getsize(path) / 2**20
            rows.append((n, mib) + paired(
                [args.amp_opt, path, "-o", os.path.join(tmp, "amp.onnx")],
                ["/usr/bin/python3", "-c", py_roundtrip, path,
                 os.path.join(tmp, "py.onnx")], args.repeat))
            print(f"  {n} nodes done", file=sys.stderr)

    header = ("| nodes | file MiB | amp-opt s | amp-opt peak MiB | "
              "onnx.load+save s | python peak MiB | "
              "median paired ratio amp/python |\n"
              "|---:|---:|---:|---:|---:|---:|---:|")
    lines = [f"| {n} | {mib:.1f} | {at:.3f} | {am:.0f} | {pt:.3f} | {pm:.0f} "
             f"| {ratio:.2f} |" for n, mib, at, am, pt, pm, ratio in rows]
    per_node = [f"{r[2] / r[0] * 1e6:.1f}" for r in rows]
    table = "\n".join([header] + lines)
    print(table)
    print(f"amp-opt microseconds per node: {', '.join(per_node)}")
    if not args.no_record:
        record("roundtrip.md",
               f"`bench/roundtrip.py --sizes {args.sizes} --repeat "
               f"{args.repeat}` (whole processes, run alternately; times are "
               f"the best of {args.repeat}, the ratio is the median of the "
               f"{args.repeat} pairs)",
               f"{table}\n\namp-opt microseconds per node: "
               f"{', '.join(per_node)}")


if __name__ == "__main__":
    main()
