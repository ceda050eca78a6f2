"""assign=optimal through --amp-pipeline: never modeled slower than FP32 or
than the propagation rules, on the corpus's forward graphs and on a CNN
training step from our exporter, whose convolutions and their gradients go
FP16 with the ops between them."""
import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from amp_opt import AmpOptError, api
from amp_opt import export as export_module

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                "bench"))

import corpus_fp16  # noqa: E402


def _amp_opt():
    try:
        return api.find_amp_opt()
    except AmpOptError as error:
        pytest.skip(str(error))


def _report(amp_opt, path, folder, options):
    report = os.path.join(folder, "report.json")
    proc = subprocess.run(
        [amp_opt, path, "-o", os.path.join(folder, "out.onnx"),
         f"--amp-pipeline=report={report} {options}"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(report) as f:
        return json.load(f), proc.stderr


def _check_guarantees(optimal, propagate):
    times = optimal["modeled_time_us"]
    tolerance = 1e-9 * times["fp32"]
    assert times["amp"] <= times["fp32"] + tolerance
    assert times["amp"] <= propagate["modeled_time_us"]["amp"] + tolerance
    # The report's propagate figure is the objective of the rules' labels,
    # which is what materializing them makes, less what amp-fuse-casts then
    # saves (a retargeted Cast node reading a narrower input).
    assert propagate["modeled_time_us"]["amp"] <= times["propagate"] + tolerance
    assert times["propagate"] == pytest.approx(
        propagate["modeled_time_us"]["amp"], rel=1e-6)
    # The cut's objective bounds what materialization and fusion made.
    assert times["amp"] <= optimal["cut_us"] + tolerance


def test_corpus_forward_graphs_never_slower(tmp_path):
    amp_opt = _amp_opt()
    paths = list(corpus_fp16.corpus_forward_graphs(corpus_fp16.CORPUS)) \
        if os.path.isdir(corpus_fp16.CORPUS) else []
    if not paths:
        pytest.skip(f"no corpus at {corpus_fp16.CORPUS}")
    gains = {}
    for path in paths:
        optimal, _ = _report(amp_opt, path, str(tmp_path), "")
        propagate, _ = _report(amp_opt, path, str(tmp_path),
                               "assign=propagate")
        _check_guarantees(optimal, propagate)
        gains[os.path.basename(path)] = (
            optimal["modeled_time_us"]["amp"],
            propagate["modeled_time_us"]["amp"],
            optimal["modeled_time_us"]["fp32"])
    for name, (amp, rules, fp32) in sorted(gains.items()):
        print(f"{name}: modeled {fp32:.1f} us FP32 -> {amp:.1f} us "
              f"(propagation rules: {rules:.1f} us)")
    # bert_toy_optimized: the rules make it slower than FP32, the cut faster.
    amp, rules, fp32 = gains["bert_toy_optimized.onnx"]
    assert rules > fp32 and amp < fp32
    assert sum(amp < rules for amp, rules, _ in gains.values()) >= 5


class _ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.body(x)


def test_cnn_step_convolutions_and_gradients_low(tmp_path):
    amp_opt = _amp_opt()
    torch.manual_seed(0)
    path = str(tmp_path / "cnn.onnx")
    export_module.export_training_step(
        _ConvNet(), (torch.randn(32, 3, 32, 32),), (torch.randint(0, 10, (32,)),),
        nn.CrossEntropyLoss(), path, optimizer="sgd", lr=0.01, momentum=0.9)
    optimal, summary = _report(amp_opt, path, str(tmp_path), "")
    propagate, _ = _report(amp_opt, path, str(tmp_path), "assign=propagate")
    _check_guarantees(optimal, propagate)
    times = optimal["modeled_time_us"]
    print(f"CNN step: modeled {times['fp32']:.1f} us FP32 -> "
          f"{times['amp']:.1f} us (propagation rules: "
          f"{times['propagate']:.1f} us)")
    assert times["amp"] < times["fp32"] and times["amp"] < times["propagate"]
    assert "loss scaling dynamic" in summary
    convs = [d for d in optimal["decisions"]
             if d["op_type"] in ("Conv", "ConvTranspose")]
    # The 64-channel convolutions (forward, input and weight gradients)
    # are the large ones; the 3-channel stem and its weight gradient are
    # launch-bound and may stay FP32.
    large = [d for d in convs if d["time_us"]["fp32"] > 20]
    assert len(large) == 6
    assert {d["region"] for d in large} == {"forward", "backward"}
    assert all(d["precision"] == "f16" for d in large), large
    # A Relu between two FP16 convolutions runs in FP16 too.
    relus = [d for d in optimal["decisions"]
             if d["op_type"] == "Relu" and d["region"] == "forward"]
    assert any(d["precision"] == "f16" for d in relus)


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer", "gpt"])
def test_default_pipeline_converts_small_zoo_steps(name, zoo_steps,
                                                  tmp_path):
    """The small zoo steps (GEMMs of 32x32x64) are bound by kernel launches.
    With the default casts=fused a cast costs its bytes inside a
    neighbouring kernel, so the plain --amp-pipeline converts their GEMMs
    and convolutions, modeled no slower than FP32, and amp-run trains the
    converted step (its losses are not FP32's); with casts=kernels each
    cast costs a launch, nothing pays, and the summary says so."""
    amp_opt = _amp_opt()
    path = zoo_steps[name, "sgd"]
    report, summary = _report(amp_opt, path, str(tmp_path), "")
    gemms = [d for d in report["decisions"]
             if d["op_type"] in ("MatMul", "Gemm", "Conv")]
    low = [d for d in gemms if d["precision"] == "f16"]
    print(f"{name}: {len(low)} of {len(gemms)} GEMMs and convolutions "
          f"FP16, {report['flops']['low_precision'] / report['flops']['total']:.1%}"
          f" of FLOPs; {summary.splitlines()[0]}")
    assert low, summary
    assert report["modeled_time_us"]["amp"] <= report["modeled_time_us"]["fp32"]
    assert "no op is faster" not in summary
    fp32, _ = api.train(path, 4)
    fp16, _ = api.train(path, 4, "precision=fp16")
    assert [r["loss"] for r in fp16] != [r["loss"] for r in fp32]
    assert fp16[-1]["loss"] < fp16[0]["loss"]
    kept, summary = _report(amp_opt, path, str(tmp_path), "casts=kernels")
    assert kept["ops"]["low_precision"] == 0
    assert "no op is faster in low precision" in summary
    assert "cast inside neighbouring kernels with casts=fused" in summary
