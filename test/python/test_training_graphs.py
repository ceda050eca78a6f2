"""amp-analyze-training on every training-side graph of ../shared/corpus
(its census roles training, optimizer and eval) and on every zoo step: the
counts per file, printed; and after --amp-pipeline="precision=fp16" no
value downstream of a gradient's unscale is low precision in the exported
ONNX (docs/TrainingGraphs.md)."""
import json
import os
import re
import subprocess

import onnx
import pytest

from amp_opt import verify, zoo
from amp_opt.numerics import FORCED

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(REPO, "..", "shared", "corpus")
AMP_OPT = os.path.join(REPO, "build", "bin", "amp-opt")
REMARK = re.compile(r"remark: ([\w.]+): loss '(.*)', (\d+) seeds, (\d+) "
                    r"parameters with gradients, (\d+) updates")

# What each corpus file must give: (kind, loss found, parameters).
EXPECTED = {
    "training_api/training_model.onnx": ("ort.training_artifact", True, 4),
    "custom_ops/training_model.onnx": ("ort.training_artifact", True, 2),
    "training_api/gradient_graph.onnx": ("ort.training_artifact", True, 4),
    "recompute_gelu.onnx": ("ort.module", False, 4),
    "recompute_tile.onnx": ("ort.module", False, 2),
    "test_gradient_of_add/model.onnx": ("onnx.gradient", True, 2),
    "test_gradient_of_add_and_mul/model.onnx": ("onnx.gradient", True, 2),
}


def corpus_graphs():
    census = os.path.join(CORPUS, "census.json")
    if not os.path.isfile(census):
        return []
    with open(census) as f:
        entries = json.load(f)
    return sorted(e["path"] for e in entries
                  if e["role"] in ("training", "optimizer", "eval"))


def analyze(path):
    proc = subprocess.run([AMP_OPT, path, "--amp-analyze-training=remarks=true",
                           "-o", os.devnull], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found = REMARK.search(proc.stderr)
    if not found:
        assert "no backward found" in proc.stderr, proc.stderr
        return ("forward", "", 0, 0, 0)
    kind, loss, seeds, params, updates = found.groups()
    return kind, loss, int(seeds), int(params), int(updates)


def low_precision_after_unscale(path, out):
    """Converts `path` to FP16 (GEMMs forced) into `out`; returns
    verify.low_precision_after_unscale of the result."""
    proc = subprocess.run([AMP_OPT, path, f"--amp-pipeline=precision=fp16 "
                           f"{FORCED}", "-o", out], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return verify.low_precision_after_unscale(onnx.load(out))


@pytest.mark.parametrize("path", corpus_graphs() or ["(absent)"])
def test_corpus_training_graph(path, tmp_path):
    if path == "(absent)":
        pytest.skip("../shared/corpus is absent")
    full = os.path.join(CORPUS, path)
    kind, loss, seeds, params, updates = analyze(full)
    print(f"{path}: {kind}, loss '{loss}', {seeds} seeds, {params} "
          f"parameters with gradients, {updates} updates")
    for suffix, (want_kind, want_loss, want_params) in EXPECTED.items():
        if path.endswith(suffix):
            assert (kind, bool(loss), params) == (want_kind, want_loss,
                                                  want_params)
    if kind in ("ort.training_artifact", "ort.module", "onnx.gradient"):
        unscaled, bad = low_precision_after_unscale(
            full, str(tmp_path / "out.onnx"))
        assert len(unscaled) == params and not bad, bad


@pytest.mark.parametrize("name", zoo.MODELS)
@pytest.mark.parametrize("optimizer", sorted(zoo.OPTIMIZERS))
def test_zoo_training_graph(name, optimizer, tmp_path):
    path = str(tmp_path / f"{name}_{optimizer}.onnx")
    zoo.export(name, optimizer, path)
    kind, loss, seeds, params, updates = analyze(path)
    print(f"zoo {name} {optimizer}: {kind}, loss '{loss}', {seeds} seeds, "
          f"{params} parameters with gradients, {updates} updates")
    model, _, _, _ = zoo.build(name)
    assert (kind, loss, seeds) == ("amp_opt.training_step", "loss", 1)
    assert params == len(list(model.parameters()))
    unscaled, bad = low_precision_after_unscale(path,
                                                str(tmp_path / "out.onnx"))
    assert len(unscaled) == params and not bad, bad
