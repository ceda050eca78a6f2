#!/usr/bin/python3
"""Speed of the full --amp-pipeline against plain import + export.

On the graphs of bench/roundtrip.py (MatMul + Add + Relu blocks), times in
the same run and on the same files:
  amp-opt IN -o OUT                                     (import + export)
  amp-opt IN -o OUT --amp-pipeline="precision=fp16 op-class=MatMul:always"
  the same with assign=propagate
The policy sends every MatMul low, so every op is decided, cast and every
weight converted in place (the cost model alone keeps these 16x16 GEMMs
FP32). Targets: the pipeline within 5x import + export at 100k nodes
(issue 4); assign=optimal (the default: min-cut, with the propagation rules
and the 8x sensitivity computed too) within 1.5x assign=propagate (issue
18). Prints a table and appends it, with the machine and date, to
bench/results/pipeline_speed.md.
"""
import os
import sys
import tempfile

from roundtrip import make_graph, paired, parse_arguments, record

PIPELINE = "--amp-pipeline=precision=fp16 op-class=MatMul:always"
PROPAGATE = PIPELINE + " assign=propagate"


def main():
    args = parse_arguments(__doc__, "10000,100000")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            path = os.path.join(tmp, f"g{size}.onnx")
            n = make_graph(size, path)
            out = os.path.join(tmp, "out.onnx")
            optimal = paired([args.amp_opt, path, "-o", out, PIPELINE],
                             [args.amp_opt, path, "-o", out], args.repeat)
            propagate = paired([args.amp_opt, path, "-o", out, PIPELINE],
                               [args.amp_opt, path, "-o", out, PROPAGATE],
                               args.repeat)
            rows.append((n,) + optimal + propagate[2:])
            print(f"  {n} nodes done", file=sys.stderr)

    header = ("| nodes | pipeline s | pipeline peak MiB | import+export s | "
              "import+export peak MiB | median paired ratio | "
              "assign=propagate s | propagate peak MiB | optimal / propagate "
              "|\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [f"| {n} | {pt:.3f} | {pm:.0f} | {at:.3f} | {am:.0f} | "
             f"{ratio:.2f} | {qt:.3f} | {qm:.0f} | {qratio:.2f} |"
             for n, pt, pm, at, am, ratio, qt, qm, qratio in rows]
    table = "\n".join([header] + lines)
    print(table)
    if not args.no_record:
        record("pipeline_speed.md",
               f"`bench/pipeline_speed.py --sizes {args.sizes} --repeat "
               f"{args.repeat}` (best of {args.repeat}; ratio: median of the "
               f"pairs)", table)


if __name__ == "__main__":
    main()
