#!/usr/bin/python3
"""Limits: the largest inputs amp-opt handles, with their time and memory.

Cases (issue 22), each run as one amp-opt process, with its wall time and
peak RSS (the largest of amp-opt and its shape-inference and checker
children):
  nodes        bench/roundtrip.py's MatMul + Add + Relu chain of --nodes
               nodes (default 1,000,000): import + check + export, then the
               same through --amp-pipeline (FP16, every MatMul forced low);
               peak RSS per node is the bound the table records;
  attribute    a Constant node holding --attribute-mib MiB (default 1024)
               inline: import + check + export (the output keeps it inline);
  external     initializers in an external data file of --external-mib MiB
               (default 2560, over protobuf's 2 GiB): import, then export,
               which writes them to <output>.data on its own; every byte is
               compared with the input's;
  concat       a Concat of --concat-inputs inputs (default 1000; torch.stack
               of a long list, ConcatTraining), each a Mul of the graph's
               input: --amp-lower-to-cpu (one-shot bufferization's analysis
               of a chain of insert_slices grew with the fourth power of its
               length: 200 inputs took 24 s before 2026-11-29).
A case that fails prints amp-opt's error and fails the run. Prints a table
and appends it, with the machine and date, to bench/results/limits.md.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from roundtrip import make_graph, record, run

PIPELINE = "--amp-pipeline=precision=fp16 op-class=MatMul:always"


def attribute_model(mib, path):
    """A Constant of `mib` MiB of floats, added to the input."""
    count = mib * (1 << 20) // 4
    value = np.arange(count, dtype=np.float32).reshape(-1, 1024)
    node = helper.make_node("Constant", [], ["k"], name="k",
                            value=numpy_helper.from_array(value, "k"))
    add = helper.make_node("Add", ["x", "k"], ["y"], name="add")
    graph = helper.make_graph(
        [node, add], "attribute",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       list(value.shape))])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def external_model(mib, folder):
    """Three initializers of `mib` / 3 MiB each in `folder`/weights.bin,
    summed into the output; returns the model's path and the arrays' bytes
    (a pattern, so that misplaced bytes show)."""
    count = mib * (1 << 20) // 3 // 4
    inits, arrays = [], []
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        for i in range(3):
            array = (np.arange(count, dtype=np.uint32) * (i + 1)).view(
                np.float32)
            tensor = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT,
                                 dims=[count])
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (("location", "weights.bin"),
                               ("offset", str(f.tell())),
                               ("length", str(array.nbytes))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            f.write(array.tobytes())
            inits.append(tensor)
            arrays.append(array)
    nodes = [helper.make_node("Sum", ["w0", "w1", "w2"], ["y"], name="sum")]
    graph = helper.make_graph(
        nodes, "external", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(folder, "external.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path, arrays


def check_external(out, arrays):
    """Every tensor of the output at `out` holds the input's bytes; returns
    whether they are external (they must be over 2 GiB)."""
    model = onnx.load(out, load_external_data=False)
    folder = os.path.dirname(out)
    external = False
    for tensor, array in zip(model.graph.initializer, arrays):
        if tensor.data_location == TensorProto.EXTERNAL:
            entries = {e.key: e.value for e in tensor.external_data}
            data = np.memmap(os.path.join(folder, entries["location"]),
                             np.uint32, "r", int(entries["offset"]),
                             (int(entries["length"]) // 4,))
            external = True
        else:
            data = np.frombuffer(tensor.raw_data, np.uint32)
        assert np.array_equal(data, array.view(np.uint32)), tensor.name
    total = sum(array.nbytes for array in arrays)
    assert external or total < 2**31, "over 2 GiB, yet inline"
    return external


def concat_model(inputs, path):
    """y = Concat(x * x, ..., x * x) of `inputs` Muls of x [1, 64]."""
    info = helper.make_tensor_value_info
    nodes = [helper.make_node("Mul", ["x", "x"], [f"m{i}"], name=f"mul{i}")
             for i in range(inputs)]
    nodes.append(helper.make_node("Concat", [f"m{i}" for i in range(inputs)],
                                  ["y"], name="concat", axis=0))
    graph = helper.make_graph(nodes, "concat",
                              [info("x", TensorProto.FLOAT, [1, 64])],
                              [info("y", TensorProto.FLOAT, [inputs, 64])])
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 17)]),
              path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt", default="build/bin/amp-opt")
    parser.add_argument("--nodes", type=int, default=1000000)
    parser.add_argument("--attribute-mib", type=int, default=1024)
    parser.add_argument("--external-mib", type=int, default=2560)
    parser.add_argument("--concat-inputs", type=int, default=1000)
    parser.add_argument("--cases", nargs="+",
                        default=["nodes", "attribute", "external", "concat"])
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.onnx")
        if "nodes" in args.cases:
            path = os.path.join(tmp, "nodes.onnx")
            nodes = make_graph(args.nodes, path)
            mib = os.path.getsize(path) / (1 << 20)
            for what, extra in (("import + check + export", []),
                                ("--amp-pipeline (FP16)", [PIPELINE])):
                seconds, peak = run([args.amp_opt, path, "-o", out, *extra])
                rows.append((f"{nodes} nodes ({mib:.0f} MiB)", what, seconds,
                             peak, f"{peak * (1 << 20) / nodes:.0f}"))
                print(f"  {rows[-1]}", file=sys.stderr)
            os.remove(path)
        if "attribute" in args.cases:
            path = os.path.join(tmp, "attribute.onnx")
            attribute_model(args.attribute_mib, path)
            seconds, peak = run([args.amp_opt, path, "-o", out])
            assert os.path.getsize(out) > args.attribute_mib << 20
            rows.append((f"Constant of {args.attribute_mib} MiB",
                         "import + check + export", seconds, peak, "-"))
            print(f"  {rows[-1]}", file=sys.stderr)
            os.remove(path)
        if "external" in args.cases:
            path, arrays = external_model(args.external_mib, tmp)
            seconds, peak = run([args.amp_opt, path, "-o", out])
            where = ("<output>.data" if check_external(out, arrays)
                     else "inline")
            rows.append((f"external data of {args.external_mib} MiB",
                         f"import + check + export ({where})", seconds,
                         peak, "-"))
            print(f"  {rows[-1]}", file=sys.stderr)
        if "concat" in args.cases:
            path = os.path.join(tmp, "concat.onnx")
            concat_model(args.concat_inputs, path)
            seconds, peak = run([args.amp_opt, path, "-o",
                                 os.path.join(tmp, "out.mlir"),
                                 "--amp-lower-to-cpu"])
            rows.append((f"Concat of {args.concat_inputs} inputs",
                         "--amp-lower-to-cpu", seconds, peak, "-"))
            print(f"  {rows[-1]}", file=sys.stderr)

    table = "\n".join(
        ["| input | run | wall s | peak RSS MiB | peak bytes per node |",
         "|---|---|---:|---:|---:|"] +
        [f"| {a} | {b} | {c:.1f} | {d:.0f} | {e} |" for a, b, c, d, e in rows])
    print(table)
    if not args.no_record:
        record("limits.md",
               f"`bench/limits.py --nodes {args.nodes} --attribute-mib "
               f"{args.attribute_mib} --external-mib {args.external_mib} "
               f"--concat-inputs {args.concat_inputs} --cases "
               f"{' '.join(args.cases)}` "
               "(peak RSS: the largest of amp-opt and its children)", table)


if __name__ == "__main__":
    main()
