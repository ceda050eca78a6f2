#!/usr/bin/python3
"""FP16 conversion of real forward graphs and zoo training graphs: amp-opt
against onnxconverter-common's convert_float_to_float16.

For each forward graph of ../shared/corpus (census role "forward", float,
not already FP16) and, with --zoo, each small zoo training step:
  - amp-opt --amp-pipeline="precision=fp16" (cost model, and "forced":
    every GEMM and convolution FP16) and, when --occ names its float16.py,
    convert_float_to_float16(keep_io_types=True), plus amp-opt told to
    convert the same op types as onnxconverter-common ("occ's ops": every
    op type outside its block list forced low), which compares cast
    placement under equal decisions;
  - Cast nodes added, lossy round trips (f32 -> f16 -> f32 with nothing in
    between), and whether onnx.checker accepts the result when it accepted
    the input;
  - for forward graphs, ONNX Runtime (npm onnxruntime-node) runs the FP32
    and both FP16 graphs on the same random inputs and reports the largest
    output error relative to the largest FP32 output magnitude.

onnxconverter-common is not a dependency: fetch its repository and extract
onnxconverter_common/float16.py into a temporary folder, e.g.
  git -C MIRROR archive HEAD onnxconverter_common/float16.py | tar -x -C /tmp/occ
then pass --occ /tmp/occ/onnxconverter_common/float16.py.

usage: /usr/bin/python3 bench/corpus_fp16.py [--amp-opt build/bin/amp-opt]
         [--occ PATH/float16.py] [--zoo] [--record bench/results/corpus_fp16.md]
"""
import argparse
import datetime
import importlib.util
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

from amp_opt import casts, ort, zoo  # noqa: E402

CORPUS = os.path.join(REPO, "..", "shared", "corpus")

_NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE:
          np.float64, onnx.TensorProto.INT64: np.int64,
          onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_,
          onnx.TensorProto.FLOAT16: np.float16}


def corpus_forward_graphs(corpus):
    """Paths of the corpus's float forward graphs, not already FP16."""
    with open(os.path.join(corpus, "census.json")) as f:
        census = json.load(f)
    return [os.path.join(corpus, entry["path"]) for entry in census
            if entry["role"] == "forward" and "FLOAT" in entry["elem_types"]
            and "FLOAT16" not in entry["elem_types"]]


def random_feeds(model, seed=0):
    """Random values for the graph inputs without initializers: floats from
    N(0, 1), integers in {0, 1} (valid ids, masks and segment ids);
    dynamic dimensions are 1."""
    rng = np.random.default_rng(seed)
    initialized = {tensor.name for tensor in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initialized:
            continue
        tensor = value.type.tensor_type
        dtype = _NUMPY.get(tensor.elem_type)
        if dtype is None:
            raise ValueError(f"input '{value.name}': unsupported element "
                             f"type {tensor.elem_type}")
        shape = [dim.dim_value if dim.HasField("dim_value") and
                 dim.dim_value > 0 else 1 for dim in tensor.shape.dim]
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[value.name] = rng.integers(0, 2, shape).astype(dtype)
    return feeds


def relative_error(reference, outputs):
    """max |out - ref| / max |ref| over the float outputs."""
    worst = 0.0
    for name, ref in reference.items():
        if not np.issubdtype(ref.dtype, np.floating):
            continue
        out = outputs[name].astype(np.float64)
        ref = ref.astype(np.float64)
        if out.shape != ref.shape:
            return float("nan")
        finite = np.isfinite(ref)
        scale = max(np.abs(ref[finite]).max(initial=0.0), 1e-30)
        if not np.array_equal(np.isfinite(out), finite):
            return float("inf")
        worst = max(worst, float(np.abs(out[finite] - ref[finite]).max(
            initial=0.0) / scale))
    return worst


def load_occ(path):
    spec = importlib.util.spec_from_file_location("occ_float16", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checker_passes(model):
    try:
        onnx.checker.check_model(model)
        return True
    except Exception:
        return False


# The cost model keeps small GEMMs FP32; forcing them exercises FP16
# numerics on every model.
FORCED = "op-class=MatMul:always,Gemm:always,Conv:always,ConvTranspose:always"


def convert_ours(amp_opt, path, folder, options="", precision="fp16"):
    out = os.path.join(folder, "amp.onnx")
    report = os.path.join(folder, "report.json")
    start = time.perf_counter()
    proc = subprocess.run(
        [amp_opt, path, "-o", out,
         f"--amp-pipeline=precision={precision} report={report} {options}"],
        capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
    with open(report) as f:
        low = json.load(f)["ops"]["low_precision"]
    return out, seconds, low


def occ_op_classes(occ, model):
    """The pipeline option that makes amp-opt convert the op types
    onnxconverter-common converts: every op type of the model and its
    subgraphs outside occ's block list, as `always`."""
    types = set()

    def walk(graph):
        for node in graph.node:
            if node.op_type not in occ.DEFAULT_OP_BLOCK_LIST:
                types.add(node.op_type if node.domain in ("", "ai.onnx")
                          else f"{node.domain}::{node.op_type}")
            for attribute in node.attribute:
                walk(attribute.g)
                for graph_attribute in attribute.graphs:
                    walk(graph_attribute)

    walk(model.graph)
    return "op-class=" + ",".join(f"{t}:always" for t in sorted(types))


def convert_occ(occ, model, folder):
    out = os.path.join(folder, "occ.onnx")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        converted = occ.convert_float_to_float16(model, keep_io_types=True)
    seconds = time.perf_counter() - start
    onnx.save(converted, out)
    return out, seconds


def measure(path, amp_opt, occ, run_ort):
    """One row: the statistics of both converters on the model at path."""
    name = os.path.relpath(path, CORPUS) if path.startswith(CORPUS) \
        else os.path.basename(path)
    model = onnx.load(path)
    row = {"model": name, "nodes": len(model.graph.node),
           "casts_before": casts.count_casts(model),
           "checker_before": checker_passes(model)}
    feeds = reference = None
    if run_ort:
        try:
            feeds = random_feeds(model)
            reference = ort.run(path, feeds)
        except Exception as error:  # random inputs may not fit the model
            row["fp32_failure"] = str(error).splitlines()[-1][:120]
            run_ort = False
    with tempfile.TemporaryDirectory() as folder:
        converters = [("amp", lambda: convert_ours(amp_opt, path, folder)),
                      ("forced", lambda: convert_ours(amp_opt, path, folder,
                                                      FORCED))]
        if occ:
            converters.append(("occ", lambda: convert_occ(occ, model, folder)))
            converters.append(("same", lambda: convert_ours(
                amp_opt, path, folder, occ_op_classes(occ, model))))
        for key, convert in converters:
            try:
                result = convert()
            except Exception as error:  # report it and go on
                row[key] = {"error": str(error)[:120]}
                continue
            out, seconds = result[0], result[1]
            converted = onnx.load(out)
            entry = {"seconds": seconds,
                     "casts": casts.count_casts(converted) -
                     row["casts_before"],
                     "lossy": len(casts.lossy_round_trips(converted)),
                     "checker": checker_passes(converted)}
            if key != "occ":
                entry["low_ops"] = result[2]
            if run_ort:
                try:
                    entry["error"] = relative_error(reference,
                                                    ort.run(out, feeds))
                except Exception as error:
                    message = str(error).splitlines()[-1]
                    entry["ort_failure"] = message.split("] : 1 : FAIL : ")[
                        -1].split("failed:")[-1][:160]
            row[key] = entry
    return row


def format_failures(rows):
    """Footnotes: why ONNX Runtime rejected a converted graph."""
    lines = []
    for row in rows:
        for key in ("amp", "forced", "occ", "same"):
            failure = row.get(key, {}).get("ort_failure")
            if failure:
                lines.append(f"- {row['model']} ({key}): {failure}")
    return lines


def format_table(rows, with_occ):
    def error(entry):
        if "ort_failure" in entry:
            return "ORT rejects"
        value = entry.get("error")
        return "-" if value is None else f"{value:.1e}"

    def ours(entry):
        if "low_ops" not in entry:
            return [f"fails: {entry.get('error', '?')}", "", "", ""]
        return [str(entry["low_ops"]), str(entry["casts"]),
                str(entry["lossy"]), error(entry)]

    header = "| model | nodes | low ops | casts | lossy | error | " \
             "forced: low ops | casts | lossy | error |"
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if with_occ:
        header += " occ: casts | lossy | error | " \
            "occ's ops: low ops | casts | lossy | error |"
        rule += "---:|---:|---:|---:|---:|---:|---:|"
    lines = [header, rule]
    for row in rows:
        cells = ours(row["amp"]) + ours(row["forced"])
        if with_occ:
            occ = row.get("occ", {})
            if "casts" not in occ:
                cells += [f"fails: {occ.get('error', '?')}", "", ""]
            else:
                cells += [str(occ["casts"]), str(occ["lossy"]), error(occ)]
            cells += ours(row.get("same", {}))
        if "fp32_failure" in row:
            for index in ([3, 7, 10, 14] if with_occ else [3, 7]):
                cells[index] = "no FP32 run"
        lines.append(f"| {row['model']} | {row['nodes']} | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt",
                        default=os.path.join(REPO, "build", "bin", "amp-opt"))
    parser.add_argument("--occ", help="onnxconverter-common's float16.py")
    parser.add_argument("--corpus", default=CORPUS)
    parser.add_argument("--zoo", action="store_true",
                        help="also the small zoo training steps (no ORT)")
    parser.add_argument("--record", help="append the table to this file")
    args = parser.parse_args()
    if not os.path.isdir(args.corpus):
        sys.exit(f"no corpus at {args.corpus}")
    if not ort.available():
        sys.exit("ONNX Runtime is not installed: run `make ort`")
    occ = load_occ(args.occ) if args.occ else None

    rows = []
    for path in corpus_forward_graphs(args.corpus):
        rows.append(measure(path, args.amp_opt, occ, run_ort=True))
        print(format_table(rows[-1:], bool(occ)).splitlines()[-1],
              file=sys.stderr)
    if args.zoo:
        with tempfile.TemporaryDirectory() as folder:
            for model, optimizer in [(m, o) for m in zoo.MODELS
                                     for o in zoo.OPTIMIZERS]:
                path = os.path.join(folder, f"{model}_{optimizer}.onnx")
                zoo.export(model, optimizer, path)
                rows.append(measure(path, args.amp_opt, occ, run_ort=False))
                print(format_table(rows[-1:], bool(occ)).splitlines()[-1],
                      file=sys.stderr)

    table = format_table(rows, bool(occ))
    def total(key, field):
        return sum(row.get(key, {}).get(field, 0) for row in rows)

    def fewer(key, tie=False):
        def wins(row):
            ours, theirs = row.get(key, {}).get("casts"), \
                row.get("occ", {}).get("casts")
            return ours is not None and theirs is not None and (
                ours < theirs or (tie and ours == theirs))
        return sum(wins(row) for row in rows)

    summary = [f"amp-opt: {total('amp', 'casts')} casts added, "
               f"{total('amp', 'lossy')} lossy round trips over {len(rows)} "
               f"models; forced: {total('forced', 'casts')} casts, "
               f"{total('forced', 'lossy')} lossy round trips"]
    if occ:
        summary.append(
            f"onnxconverter-common: {total('occ', 'casts')} casts, "
            f"{total('occ', 'lossy')} lossy round trips; amp-opt adds fewer "
            f"casts on {fewer('amp')} of {len(rows)} models, forced on "
            f"{fewer('forced')}")
        summary.append(
            f"amp-opt converting onnxconverter-common's op set: "
            f"{total('same', 'casts')} casts, {total('same', 'lossy')} lossy "
            f"round trips; fewer casts on {fewer('same')} of {len(rows)} "
            f"models, as few or fewer on {fewer('same', tie=True)}")
    text = io.StringIO()
    print(table, file=text)
    print("", file=text)
    for line in summary:
        print(f"- {line}", file=text)
    failures = format_failures(rows)
    if failures:
        print("\nONNX Runtime rejected:\n", file=text)
        print("\n".join(failures), file=text)
    print(text.getvalue())
    if args.record:
        with open(args.record, "a") as f:
            f.write(f"\n## {datetime.date.today()} on {platform.node()} "
                    f"({os.cpu_count()} cores)\n\n")
            f.write("`/usr/bin/python3 bench/corpus_fp16.py " +
                    " ".join(sys.argv[1:]) + "`\n\n")
            f.write(text.getvalue())


if __name__ == "__main__":
    main()
