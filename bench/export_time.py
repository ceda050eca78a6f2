#!/usr/bin/python3
"""How long export_training_step takes, with torch.onnx.export called once
on the whole step and in segments of export.SEGMENT_OPS aten ops
(docs/TrainingStepFormat.md, "How the step is traced"), on the zoo's large
steps and on torchvision models when python3-torchvision is installed.

For each model and each way: the seconds of the whole export, of its
torch.onnx part, and the nodes written; the two graphs must have the same
inputs, outputs and metadata (else the row says DIFFERENT). Prints a table
and appends it, with the machine and date, to bench/results/export_time.md.

    PYTHONPATH=python /usr/bin/python3 bench/export_time.py [MODEL...]
"""
import argparse
import importlib.util
import os
import sys
import tempfile
import time
import warnings

import onnx
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from amp_opt import export, zoo  # noqa: E402
from torchvision_steps import append_result  # noqa: E402

ZOO = ["cnn", "transformer", "gpt"]
TORCHVISION = ["mobilenet_v3_small", "efficientnet_b0"]
#: One torch.onnx.export call, whatever the step's size.
WHOLE = 10 ** 9


def export_model(name, path):
    """Exports `name` (zoo, large; or a torchvision classifier on a batch of
    2 at 64x64, dropout off) with SGD."""
    if name in zoo.MODELS:
        zoo.export(name, "sgd", path, size="large")
        return
    import torchvision.models as models
    torch.manual_seed(0)
    model = getattr(models, name)(num_classes=5)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    x, y = torch.randn(2, 3, 64, 64), torch.randint(0, 5, (2,))
    export.export_training_step(model, (x,), (y,), F.cross_entropy, path,
                                optimizer="sgd", lr=0.01)


def timed_export(name, path, segment_ops):
    """(seconds in all, seconds in torch.onnx, aten ops) of one export."""
    spent = {}
    to_onnx = export._to_onnx

    def timed(graph_module, *args):
        spent["ops"] = sum(1 for n in graph_module.graph.nodes if n.op not in (
            "placeholder", "get_attr", "output"))
        start = time.time()
        try:
            return to_onnx(graph_module, *args)
        finally:
            spent["onnx"] = time.time() - start

    saved = export.SEGMENT_OPS
    export.SEGMENT_OPS, export._to_onnx = segment_ops, timed
    start = time.time()
    try:
        export_model(name, path)
    finally:
        export.SEGMENT_OPS, export._to_onnx = saved, to_onnx
    return time.time() - start, spent["onnx"], spent["ops"]


def signature(model):
    return ([(v.name, v.type) for v in model.graph.input],
            [(v.name, v.type) for v in model.graph.output],
            {p.key: p.value for p in model.metadata_props})


def row(name, folder):
    paths = {ways: os.path.join(folder, f"{name}_{ways}.onnx")
             for ways in ("whole", "segments")}
    whole = timed_export(name, paths["whole"], WHOLE)
    parts = timed_export(name, paths["segments"], export.SEGMENT_OPS)
    graphs = {ways: onnx.load(path) for ways, path in paths.items()}
    same = signature(graphs["whole"]) == signature(graphs["segments"])
    nodes = {ways: len(g.graph.node) for ways, g in graphs.items()}
    return (f"| {name} | {whole[2]} | {whole[0]:.1f} s ({whole[1]:.1f} s) | "
            f"{parts[0]:.1f} s ({parts[1]:.1f} s) | "
            f"{whole[1] / parts[1]:.1f}x | {nodes['whole']} / "
            f"{nodes['segments']}{'' if same else ' DIFFERENT'} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    models = args.models or ZOO + (
        TORCHVISION if importlib.util.find_spec("torchvision") else [])
    rows = []
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in models:
            rows.append(row(name, folder))
            print(rows[-1], file=sys.stderr)
    table = "\n".join(
        ["| model | aten ops | one torch.onnx call: export (torch.onnx) | "
         f"segments of {export.SEGMENT_OPS}: export (torch.onnx) | "
         "torch.onnx speed-up | nodes (one call / segments) |",
         "|---|---|---|---|---|---|"] + rows)
    print(table)
    if not args.no_record:
        append_result("export_time.md",
                      "`bench/export_time.py` (SGD; zoo models large, "
                      "torchvision at 64x64, batch 2)", table)


if __name__ == "__main__":
    main()
