"""A thin Python API over the amp-opt binary."""
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class AmpOptError(RuntimeError):
    """amp-opt is missing or failed; the message has its diagnostics."""


def find_tool(name):
    """Path of an amp-opt tool: $AMP_OPT's folder (or ${NAME} for others),
    then PATH, then the build folder."""
    env = os.environ.get(name.upper().replace("-", "_"))
    candidates = [env, shutil.which(name),
                  os.path.join(REPO, "build", "bin", name)]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise AmpOptError(f"{name} not found: build it (`make`), put it on PATH "
                      f"or set {name.upper().replace('-', '_')} to its path")


def find_amp_opt():
    """Path of amp-opt: $AMP_OPT, then PATH, then the build folder."""
    return find_tool("amp-opt")


def train(model_path, steps, amp_pipeline=None, seed=0, args=(),
          timeout=1800):
    """Runs `steps` training steps of an .onnx step with amp-run; returns
    the list of per-step records ({"step", "loss", "loss_scale", "skipped",
    "time_ms"}) and amp-run's standard error (compile times)."""
    command = [find_tool("amp-run"), model_path, "--steps", str(steps),
               "--seed", str(seed), *args]
    if amp_pipeline is not None:
        command.append(f"--amp-pipeline={amp_pipeline}")
    proc = subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise AmpOptError(f"amp-run failed (exit {proc.returncode}):\n"
                          f"{' '.join(command)}\n{proc.stderr}")
    records = [json.loads(line) for line in proc.stdout.splitlines()
               if line.startswith("{")]
    return records, proc.stderr


def conv_record_modes(lowered):
    """The modes (include/amp/Runtime/ConvRecord.h: 0 forward, 1 backward
    filter, 2 backward data) of the convolution records that `lowered`, an
    LLVM-dialect module that amp-run or amp-compile wrote with
    --dump-lowered, calls: one per call, sorted. Each call reads its record
    through an element pointer to the record global's address (which the
    lowering may take once for several calls)."""
    records = dict(re.findall(
        r"llvm\.mlir\.global private constant (@amp_conv_record\w*)"
        r"\(dense<\[(\d+),", lowered))
    modes = []
    # SSA names are per function.
    for function in lowered.split("llvm.func ")[1:]:
        addresses = dict(re.findall(
            r"(%\w+) = llvm\.mlir\.addressof (@amp_conv_record\w*)",
            function))
        for address in re.findall(r"= llvm\.getelementptr (%\w+)\[0, 0\]",
                                  function):
            if address in addresses:
                modes.append(int(records[addresses[address]]))
    calls = len(re.findall(r"llvm\.call @amp_conv_", lowered))
    if len(modes) != calls:
        raise AmpOptError(f"{calls} convolution calls read {len(modes)} "
                          "records")
    return sorted(modes)


def load_saved(folder, name):
    """The tensor `name` that amp-run wrote into `folder` with --save-inputs
    or --save-outputs (`/` in names becomes `_`)."""
    return np.load(os.path.join(folder, name.replace("/", "_") + ".npy"))


class SavedTensors(Mapping):
    """The tensors amp-run wrote into `folder` with --save-outputs (or
    --save-inputs), read by value name as `load_saved` reads them; iterating
    gives the names as saved (`/` already `_`). `records` holds the run's
    per-step records when `run_with_inputs` made it."""

    def __init__(self, folder, records=()):
        self.folder = str(folder)
        self.records = list(records)

    def _path(self, name):
        return os.path.join(self.folder, name.replace("/", "_") + ".npy")

    def __getitem__(self, name):
        if not os.path.isfile(self._path(name)):
            raise KeyError(f"amp-run saved no tensor '{name}' in "
                           f"{self.folder}")
        return np.load(self._path(name))

    def __iter__(self):
        return (name[:-4] for name in sorted(os.listdir(self.folder))
                if name.endswith(".npy"))

    def __len__(self):
        return sum(1 for _ in self)


def run_with_inputs(model_path, inputs, folder, steps=1, amp_pipeline=None,
                    seed=0, args=()):
    """Runs `steps` amp-run steps of `model_path` with each array of
    `inputs` ({value name: array}) fed through --input (written as .npy
    files into `folder`); returns the outputs of the last step, saved into
    `folder`/out, as a SavedTensors. Raises AmpOptError when amp-run
    fails."""
    folder = str(folder)
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, "out")
    command = ["--save-outputs", out]
    for i, (name, value) in enumerate(inputs.items()):
        path = os.path.join(folder, f"input_{i}.npy")
        np.save(path, value)
        command += ["--input", f"{name}={path}"]
    records, _ = train(str(model_path), steps, amp_pipeline=amp_pipeline,
                       seed=seed, args=[*command, *args])
    return SavedTensors(out, records)


def _pipeline_text(precision, options):
    parts = [] if precision is None else [f"precision={precision}"]
    for key, value in options.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


def convert(model_or_path, precision="fp16", **pipeline_options):
    """Runs amp-opt on an onnx.ModelProto or an .onnx path. Returns the
    converted onnx.ModelProto and the report as a dict ({} when the pipeline
    writes none).

    precision and pipeline_options become --amp-pipeline="precision=...
    key=value ..." (underscores in keys become dashes); precision=None runs
    no pipeline, a plain import and export.
    """
    amp_opt = find_amp_opt()
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(model_or_path, onnx.ModelProto):
            source = os.path.join(tmp, "input.onnx")
            onnx.save(model_or_path, source)
        else:
            source = os.fspath(model_or_path)
            if not os.path.isfile(source):
                raise AmpOptError(f"no such model file: '{source}'")
        output = os.path.join(tmp, "output.onnx")
        report = os.path.join(tmp, "report.json")
        command = [amp_opt, source, "-o", output]
        if precision is not None or pipeline_options:
            options = dict(pipeline_options)
            options.setdefault("report", report)
            command.append(
                f"--amp-pipeline={_pipeline_text(precision, options)}")
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AmpOptError(f"amp-opt failed (exit {proc.returncode}):\n"
                              f"{proc.stderr.strip()}")
        model = onnx.load(output)
        result = {}
        if os.path.isfile(report):
            with open(report) as f:
                result = json.load(f)
        return model, result
