#!/usr/bin/python3
"""FP16 conversion of real forward graphs and zoo training steps: amp-opt's
optimal assignment against its propagation rules, forced GEMMs and
onnxconverter-common's convert_float_to_float16.

For each forward graph of ../shared/corpus (census role "forward", float,
not already FP16) and, with --zoo small|all, each zoo training step (small,
or small and large):
  - amp-opt --amp-pipeline="precision=fp16" three ways: "optimal" (the
    default assign=optimal), "propagate" (assign=propagate, the anchors'
    rules) and "forced" (every GEMM and convolution `always`, the rest
    decided by the cut); from each run's report: the modeled speedup over
    FP32 (modeled_time_us fp32 / amp) and the share of GEMM FLOPs
    (MatMul, Gemm, FusedMatMul, Conv, ConvTranspose, Attention, RNNs) that
    runs low;
  - when --occ names its float16.py, convert_float_to_float16
    (keep_io_types=True), plus amp-opt told to convert the same op types as
    onnxconverter-common ("occ's ops": every op type outside its block list
    forced low), which compares cast placement under equal decisions and
    gives occ's op set a modeled speedup;
  - Cast nodes added, lossy round trips (f32 -> f16 -> f32 with nothing in
    between), and whether onnx.checker accepts the result when it accepted
    the input;
  - ONNX Runtime (npm onnxruntime-node): a forward graph runs FP32 and
    converted on the same random inputs (largest output error relative to
    the largest FP32 output magnitude); a small zoo step runs two training
    steps FP32 and converted (largest relative loss difference).

The summary says on how many models the modeled AMP time is at most FP32's
and at most propagate's (issue 18's guarantee).

onnxconverter-common is not a dependency: fetch its repository and extract
onnxconverter_common/float16.py into a temporary folder, e.g.
  git -C MIRROR archive HEAD onnxconverter_common/float16.py | tar -x -C /tmp/occ
then pass --occ /tmp/occ/onnxconverter_common/float16.py.

usage: /usr/bin/python3 bench/corpus_fp16.py [--amp-opt build/bin/amp-opt]
         [--occ PATH/float16.py] [--zoo small|all] [--zoo-dir DIR]
         [--record bench/results/corpus_fp16.md]
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

from amp_opt import casts, ort, verify, zoo  # noqa: E402

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


# The cost model may keep small GEMMs FP32; forcing them exercises FP16
# numerics on every model.
FORCED = "op-class=MatMul:always,Gemm:always,Conv:always,ConvTranspose:always"


# Op types whose FLOPs are GEMMs (estimateFlops counts their products).
GEMM_TYPES = {"MatMul", "Gemm", "FusedMatMul", "Conv", "ConvTranspose",
              "Attention", "LSTM", "GRU", "RNN"}


def convert_ours(amp_opt, path, folder, options="", precision="fp16"):
    """Converts the model at `path` with --amp-pipeline; returns the output
    path, the seconds taken and the report (docs/Report.md)."""
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
        return out, seconds, json.load(f)


def modeled(report):
    """The report's modeled speedup over FP32, its modeled AMP time and the
    share of GEMM FLOPs that run low (None without GEMM FLOPs)."""
    times = report["modeled_time_us"]
    gemm = low = 0.0
    for decision in report["decisions"]:
        if decision["op_type"].split("::")[-1] in GEMM_TYPES:
            gemm += decision.get("flops", 0.0)
            if decision["precision"] != "f32":
                low += decision.get("flops", 0.0)
    return {"fp32_us": times["fp32"], "amp_us": times["amp"],
            "speedup": times["fp32"] / times["amp"] if times["amp"] else 1.0,
            "gemm_low": low / gemm if gemm else None,
            "low_ops": report["ops"]["low_precision"]}


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


def zoo_losses(path, name, size):
    """The losses of two training steps of the zoo step at `path` in ONNX
    Runtime, on the zoo's example batch."""
    _, inputs, targets, _ = zoo.build(name, size)
    losses, _ = verify.run_exported(path, [t.numpy() for t in inputs],
                                    [t.numpy() for t in targets], steps=2)
    return losses


def loss_error(reference, losses):
    """max |loss - reference| / |reference| over the steps."""
    if not all(np.isfinite(losses)):
        return float("inf")
    return max(abs(a - b) / max(abs(b), 1e-30)
               for a, b in zip(losses, reference))


def ort_failure(error):
    """The useful part of ONNX Runtime's message."""
    message = str(error).splitlines()[-1]
    return message.split("] : 1 : FAIL : ")[-1].split("failed:")[-1][:160]


# (key, pipeline options): amp-opt's conversions.
OURS = [("amp", ""), ("propagate", "assign=propagate"), ("forced", FORCED)]


def measure(path, amp_opt, occ, zoo_step=None):
    """One row: the statistics of every converter on the model at path.
    `zoo_step` is (name, size) for a zoo training step, else the model is a
    forward graph run on random inputs."""
    name = os.path.relpath(path, CORPUS) if path.startswith(CORPUS) \
        else os.path.basename(path)
    model = onnx.load(path, load_external_data=False)
    row = {"model": name, "nodes": len(model.graph.node),
           "casts_before": casts.count_casts(model),
           "checker_before": checker_passes(model)}
    feeds = reference = None
    run_ort = zoo_step is None or zoo_step[1] == "small"
    if run_ort:
        try:
            if zoo_step:
                reference = zoo_losses(path, *zoo_step)
            else:
                feeds = random_feeds(model)
                reference = ort.run(path, feeds)
        except Exception as error:  # random inputs may not fit the model
            row["fp32_failure"] = str(error).splitlines()[-1][:120]
            run_ort = False
    with tempfile.TemporaryDirectory() as folder:
        converters = [(key, lambda options=options: convert_ours(
            amp_opt, path, folder, options)) for key, options in OURS]
        if occ:
            converters.append(("occ", lambda: convert_occ(
                occ, onnx.load(path), folder)))
            converters.append(("same", lambda: convert_ours(
                amp_opt, path, folder, occ_op_classes(occ, model))))
        for key, convert in converters:
            try:
                result = convert()
            except Exception as error:  # report it and go on
                row[key] = {"error": str(error)[:120]}
                continue
            out, seconds = result[0], result[1]
            converted = onnx.load(out, load_external_data=False)
            entry = {"seconds": seconds,
                     "casts": casts.count_casts(converted) -
                     row["casts_before"],
                     "lossy": len(casts.lossy_round_trips(converted)),
                     "checker": checker_passes(converted)}
            if key != "occ":
                entry.update(modeled(result[2]))
            # occ's op set forced low is there for cast placement and the
            # modeled time; ONNX Runtime lacks FP16 kernels for some of it.
            if run_ort and key != "same":
                try:
                    entry["error"] = (
                        loss_error(reference, zoo_losses(out, *zoo_step))
                        if zoo_step else
                        relative_error(reference, ort.run(out, feeds)))
                except Exception as error:
                    entry["ort_failure"] = ort_failure(error)
            row[key] = entry
    return row


def format_failures(rows):
    """Footnotes: a converted graph ONNX Runtime rejected, or onnx.checker
    rejected when it accepted the input."""
    lines = []
    for row in rows:
        for key in ("amp", "propagate", "forced", "occ", "same"):
            entry = row.get(key, {})
            if entry.get("ort_failure"):
                lines.append(f"- {row['model']} ({key}): ONNX Runtime: "
                             f"{entry['ort_failure']}")
            if row["checker_before"] and entry.get("checker") is False:
                lines.append(f"- {row['model']} ({key}): onnx.checker "
                             f"rejects the output")
    return lines


def format_table(rows, with_occ):
    def error(row, entry):
        if "fp32_failure" in row:
            return "no FP32 run"
        if "ort_failure" in entry:
            return "ORT rejects"
        value = entry.get("error")
        return "-" if value is None else f"{value:.1e}"

    def speed(entry):
        return [f"{entry['speedup']:.2f}x",
                "-" if entry["gemm_low"] is None
                else f"{100 * entry['gemm_low']:.0f}%"]

    def ours(row, key, with_error=True):
        entry = row.get(key, {})
        if "speedup" not in entry:
            return [f"fails: {entry.get('error', '?')}", "", ""] + \
                ([""] if with_error else [])
        return speed(entry) + [str(entry["casts"])] + \
            ([error(row, entry)] if with_error else [])

    header = "| model | nodes | FP32 us |"
    rule = "|---|---:|---:|"
    for title in ("optimal", "propagate", "forced"):
        header += f" {title}: speedup | GEMM low | casts | error |"
        rule += "---:|---:|---:|---:|"
    if with_occ:
        header += " occ: casts | error | occ's ops: speedup | GEMM low | " \
            "casts |"
        rule += "---:|---:|---:|---:|---:|"
    lines = [header, rule]
    for row in rows:
        fp32 = row.get("amp", {}).get("fp32_us")
        cells = ["-" if fp32 is None else f"{fp32:.1f}"]
        for key in ("amp", "propagate", "forced"):
            cells += ours(row, key)
        if with_occ:
            occ = row.get("occ", {})
            if "casts" not in occ:
                cells += [f"fails: {occ.get('error', '?')}", ""]
            else:
                cells += [str(occ["casts"]), error(row, occ)]
            cells += ours(row, "same", with_error=False)
        lines.append(f"| {row['model']} | {row['nodes']} | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines)


def summarize(rows, with_occ):
    """The summary lines under the table."""
    def total(key, field):
        return sum(row.get(key, {}).get(field, 0) for row in rows)

    def fewer(key, tie=False):
        def wins(row):
            ours, theirs = row.get(key, {}).get("casts"), \
                row.get("occ", {}).get("casts")
            return ours is not None and theirs is not None and (
                ours < theirs or (tie and ours == theirs))
        return sum(wins(row) for row in rows)

    def at_most(row, other):
        """Whether the optimal run's modeled time is at most `other`'s
        (relative slack 1e-9 for the report's rounding)."""
        amp = row.get("amp", {}).get("amp_us")
        return amp is not None and other is not None and \
            amp <= other * (1 + 1e-9)

    def mean_speedup(key):
        values = [row[key]["speedup"] for row in rows
                  if "speedup" in row.get(key, {})]
        if not values:
            return "-"
        geo = float(np.exp(np.mean(np.log(values))))
        return f"{geo:.3f}x (best {max(values):.2f}x)"

    count = len(rows)
    below_fp32 = sum(at_most(row, row.get("amp", {}).get("fp32_us"))
                     for row in rows)
    below_propagate = sum(at_most(row, row.get("propagate", {}).get(
        "amp_us")) for row in rows)
    lines = [f"modeled AMP time <= FP32 on {below_fp32} of {count} models, "
             f"<= propagate on {below_propagate} of {count}",
             f"modeled speedup over FP32, geometric mean: optimal "
             f"{mean_speedup('amp')}, propagate {mean_speedup('propagate')}, "
             f"forced {mean_speedup('forced')}" +
             (f", occ's ops {mean_speedup('same')}" if with_occ else ""),
             f"amp-opt: {total('amp', 'casts')} casts added, "
             f"{total('amp', 'lossy')} lossy round trips over {count} models;"
             f" propagate: {total('propagate', 'casts')} casts, "
             f"{total('propagate', 'lossy')} lossy; forced: "
             f"{total('forced', 'casts')} casts, "
             f"{total('forced', 'lossy')} lossy"]
    if with_occ:
        lines.append(
            f"onnxconverter-common: {total('occ', 'casts')} casts, "
            f"{total('occ', 'lossy')} lossy round trips; amp-opt adds fewer "
            f"casts on {fewer('amp')} of {count} models, forced on "
            f"{fewer('forced')}")
        lines.append(
            f"amp-opt converting onnxconverter-common's op set: "
            f"{total('same', 'casts')} casts, {total('same', 'lossy')} lossy "
            f"round trips; fewer casts on {fewer('same')} of {count} "
            f"models, as few or fewer on {fewer('same', tie=True)}")
    return lines


def zoo_steps(sizes, folder):
    """(path, (name, size)) of each zoo step in `sizes`, exported into
    `folder` unless already there."""
    for size in sizes:
        for name in zoo.MODELS:
            for optimizer in zoo.OPTIMIZERS:
                path = os.path.join(folder, f"{name}_{optimizer}_{size}.onnx")
                if not os.path.isfile(path):
                    print(f"exporting {os.path.basename(path)}",
                          file=sys.stderr)
                    zoo.export(name, optimizer, path + ".part", size=size)
                    os.replace(path + ".part", path)
                yield path, (name, size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt",
                        default=os.path.join(REPO, "build", "bin", "amp-opt"))
    parser.add_argument("--occ", help="onnxconverter-common's float16.py")
    parser.add_argument("--corpus", default=CORPUS)
    parser.add_argument("--zoo", choices=["none", "small", "all"],
                        default="none",
                        help="also the zoo training steps: small, or small "
                        "and large (ONNX Runtime runs the small ones)")
    parser.add_argument("--zoo-dir", help="keep the exported zoo steps here "
                        "and reuse them (large ones take minutes)")
    parser.add_argument("--record", help="append the table to this file")
    args = parser.parse_args()
    if not os.path.isdir(args.corpus):
        sys.exit(f"no corpus at {args.corpus}")
    if not ort.available():
        sys.exit("ONNX Runtime is not installed: run `make ort`")
    occ = load_occ(args.occ) if args.occ else None

    def progress(row):
        print(format_table([row], bool(occ)).splitlines()[-1],
              file=sys.stderr, flush=True)

    rows = []
    for path in corpus_forward_graphs(args.corpus):
        rows.append(measure(path, args.amp_opt, occ))
        progress(rows[-1])
    if args.zoo != "none":
        sizes = ["small"] + (["large"] if args.zoo == "all" else [])
        with tempfile.TemporaryDirectory() as temporary:
            folder = args.zoo_dir or temporary
            os.makedirs(folder, exist_ok=True)
            for path, step in zoo_steps(sizes, folder):
                rows.append(measure(path, args.amp_opt, occ, step))
                progress(rows[-1])

    text = io.StringIO()
    print(format_table(rows, bool(occ)), file=text)
    print("", file=text)
    for line in summarize(rows, bool(occ)):
        print(f"- {line}", file=text)
    failures = format_failures(rows)
    if failures:
        print("\nFailures:\n", file=text)
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
