"""The CUDA backend without a GPU. Every small zoo step, in every precision:
- its kernels, as block and thread loops run sequentially on the CPU
  (amp-run --grid-loops), give the CPU path's outputs, and the same bits
  with the loops run last to first (no thread depends on another);
- --amp-lower-to-cuda compiles it (ptxas accepts every kernel for sm_80 and
  sm_90, merged into one fatbin per kernel) to host code that is LLVM
  dialect only (needs the CUDA toolkit; skipped without it)."""
import ctypes
import json
import os
import re
import subprocess

import numpy as np
import pytest

from amp_opt import api, numerics, zoo
from test_amp_run_contractions import (RECORD_PRECISIONS, count_gelu_epilogues,
                                       count_scaled_matmuls,
                                       export_tanh_gelu_step)

# The records' tolerances: here too the non-GEMM contractions sum in
# another order (grid loops, not the CPU's vectorized ones), and the GEMMs
# go through their records.
PRECISIONS = RECORD_PRECISIONS


def run_step(path, pipeline, folder, extra):
    lowered = folder.with_suffix(".mlir")
    run = subprocess.run(
        [api.find_tool("amp-run"), path, "--steps", "1",
         f"--amp-pipeline={pipeline}", "--save-outputs", str(folder),
         "--dump-lowered", str(lowered)] + extra,
        check=True, capture_output=True, text=True)
    outputs = {f: np.load(folder / f) for f in sorted(os.listdir(folder))}
    return outputs, lowered.read_text(), run.stderr


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_kernels_run_as_grid_loops(name, precision, zoo_steps,
                                            tmp_path):
    """The grid loops (with the GEMMs through their records, as on the
    GPU) give the CPU path's outputs: within two units in the last place of
    the step's lowest precision, and 99% within FP32's rounding; the AMP
    steps within numerics.backend_mismatch's bounds, since the CPU path
    sums in blocks of 32 (amp-split-reductions{serial-terms}) and 32 lanes
    share each LayerNorm row's sums in the grid (amp-linalg-to-grid-loops'
    row-lanes): other summation orders, which FP16 rounding makes a few
    units of FP16 apart in a gradient (in FP32 they stay element-wise; the
    CNN's FP16 momentum buffers 98.4% within FP32's rounding). Run last to
    first, they give
    the same bits (within those bounds where atomic additions sum in
    another order)."""
    pipeline, ulp = PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    path = zoo_steps[name, "sgd"]
    log, grid_text, _, _ = compare_grid_to_cpu(
        path, pipeline, ulp, tmp_path, reverse=True,
        norm_wise=precision != "fp32")
    if precision in ("fp32", "fp16"):
        # Every Conv and ConvTranspose node (the zoo's backward convolutions
        # among them) ran through a cuDNN-style record; in FP16 one that
        # rounds its f32 accumulator to f16 itself (PSEUDO_HALF). Each
        # ConvTranspose (a data gradient) is cuDNN's backward data of dY
        # and W, not a convolution of the upsampled dY; each Conv of two
        # transposed tensors (a weight gradient, X and dY batch-last) is
        # cuDNN's backward filter of X and dY.
        import onnx
        graph = onnx.load(path).graph
        ops = [node.op_type for node in graph.node]
        nodes = ops.count("Conv") + ops.count("ConvTranspose")
        assert f"convolution records: {nodes}\n" in log
        modes = api.conv_record_modes(grid_text)
        # (The exporter restates a weight gradient's kernel shape with a
        # Reshape of its transpose.)
        transposed = set()
        for node in graph.node:
            if node.op_type == "Transpose" or (
                    node.op_type == "Reshape" and node.input[0] in transposed):
                transposed.update(node.output)
        weight_gradients = sum(
            node.op_type == "Conv" and set(node.input[:2]) <= transposed
            for node in graph.node)
        assert modes.count(2) == ops.count("ConvTranspose")
        assert modes.count(1) == weight_gradients
        if nodes:
            # A step with convolutions trains them: it has both gradients.
            assert weight_gradients > 0 and ops.count("ConvTranspose") > 0
        if precision == "fp16":
            assert len(re.findall(r"call @amp_conv_f16_f16_f16\(",
                                  grid_text)) == nodes
    if precision in ("fp16", "bf16") and name != "cnn":
        # GEMM results that the next kernel only rounds are written rounded
        # (cuBLASLt's output type): at least one per Linear layer's forward.
        t = {"fp16": "f16", "bf16": "bf16"}[precision]
        assert re.search(rf"call @amp_gemm_{t}_{t}_{t}\(", grid_text)
    if precision in ("fp16", "bf16"):
        # Elementwise kernels read and write 16-bit data in aligned pairs.
        t = {"fp16": "f16", "bf16": "bf16"}[precision]
        assert re.search(rf"llvm\.store .*\{{alignment = 4 : i64\}} : "
                         rf"vector<2x{t}>", grid_text)


def test_bf16_convolutions_go_to_cudnn_with_onnx_types_false(zoo_steps,
                                                             tmp_path):
    """ONNX's Conv, ConvTranspose and MaxPool take no bfloat16 before opset
    22, so by default the CNN's BF16 step keeps them FP32
    (unsupported-type): its library convolved in FP32 on the H200 (18.2 ms
    against FP16's 7.4). With onnx-types=false, for steps that are lowered,
    every convolution is a cuDNN BF16 record, the grid loops match the CPU
    path, and amp-opt refuses to write the step as ONNX; amp-compile notes
    the FP32 convolutions without it."""
    import onnx
    path = zoo_steps["cnn", "sgd"]
    base, ulp = PRECISIONS["bf16"]
    ops = [node.op_type for node in onnx.load(path).graph.node]
    nodes = ops.count("Conv") + ops.count("ConvTranspose")
    assert nodes > 0 and "MaxPool" in ops
    _, default_text, _ = run_step(path, base, tmp_path / "default",
                                  ["--grid-loops"])
    assert len(re.findall(r"call @amp_conv_f32_f32_f32\(",
                          default_text)) == nodes
    pipeline = f"{base} onnx-types=false"
    _, grid_text, _, _ = compare_grid_to_cpu(path, pipeline, ulp, tmp_path,
                                             norm_wise=True)
    assert len(re.findall(r"call @amp_conv_bf16_bf16_bf16\(",
                          grid_text)) == nodes
    out = tmp_path / "step.onnx"
    run = subprocess.run([api.find_tool("amp-opt"), path,
                          f"--amp-pipeline={pipeline}", "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "the step was converted with onnx-types=false, and Conv at node" \
        in run.stderr
    assert not out.exists()
    if not toolkit_found():
        return
    # amp-compile says so where the convolutions stay FP32, not after.
    note = (f"amp-compile: note: {nodes} GEMM or convolution ops stay f32 "
            "only because their ONNX schemas at the step's opset do not "
            "allow the low type (the first: Conv at node ")
    for text, expected in ((base, True), (pipeline, False)):
        run = subprocess.run(
            [api.find_tool("amp-compile"), path, f"--amp-pipeline={text}",
             "-o", str(tmp_path / "step.so")], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert (note in run.stderr) == expected, run.stderr


@pytest.mark.skipif(not os.environ.get("AMP_LARGE_ZOO"),
                    reason="the large zoo runs in make check-cuda "
                    "(AMP_LARGE_ZOO=1)")
@pytest.mark.parametrize("name", ["mlp", "transformer", "gpt"])
def test_large_zoo_step_kernels_run_as_grid_loops(name, tmp_path):
    """The large zoo's FP16 steps (grids of many blocks) in grid loops, in
    both orders, against the CPU path, as the small zoo's above but within
    the GPU tests' bounds (numerics.backend_mismatch, with the CPU's FP32
    run as the reference): the large GPT's sums over 2048 tokens of values
    rounded to FP16 in another order (LayerNorm rows summed by 32 lanes)
    are 1.3e-3 apart norm-wise in a momentum, a bit more than FP16's unit
    (9.8e-4), and no farther from FP32 than the CPU's own FP16 run. Not
    the CNN: the CPU's reference for its convolution records takes more
    than 12 minutes on its step."""
    pipeline, ulp = PRECISIONS["fp16"]
    if why := numerics.why_no_forced_step(name, "fp16"):
        pytest.skip(why)
    path = str(tmp_path / f"{name}.onnx")
    zoo.export(name, "sgd", path, size="large")
    compare_grid_to_cpu(path, pipeline, ulp, tmp_path, reverse=True,
                        norm_wise=True)


@pytest.mark.skipif(not os.environ.get("AMP_LARGE_ZOO"),
                    reason="the large zoo runs in make check-cuda "
                    "(AMP_LARGE_ZOO=1)")
def test_large_zoo_gpt_fp16_trains_at_full_loss_scale_in_grid_loops(
        tmp_path):
    """The large GPT-2's FP16 step library, from PyTorch's parameters and
    batch (as bench/cuda_speed.py runs it on a GPU), trains at the initial
    loss scale in the grid loops: on the H200 on 2026-12-01 it skipped
    every step (65536, 32768, 16384) where PyTorch's autocast trained,
    since the first LayerNorm backward multiplied the scaled gradient by
    768 in FP16 (amp-assign-precision's gradient-range keeps it FP32). Its
    losses follow the CPU path's FP32 losses within FP16's unit roundoff
    (2.2e-5 apart after three steps when written)."""
    pipeline, ulp = PRECISIONS["fp16"]
    path = str(tmp_path / "gpt.onnx")
    zoo.export("gpt", "sgd", path, size="large")
    inputs = zoo.step_values("gpt", "large")
    fp32 = api.run_with_inputs(path, inputs, tmp_path / "fp32", steps=3,
                               amp_pipeline="precision=fp32").records
    fp16 = api.run_with_inputs(path, inputs, tmp_path / "grid", steps=3,
                               amp_pipeline=pipeline,
                               args=["--grid-loops"]).records
    assert [(r["loss_scale"], r["skipped"]) for r in fp16] == \
        [(65536, False)] * 3
    losses = [r["loss"] for r in fp16]
    assert losses[-1] < losses[0] - 1
    assert numerics.norm_error(losses, [r["loss"] for r in fp32]) < ulp


def compare_grid_to_cpu(path, pipeline, ulp, tmp_path, reverse=False,
                        norm_wise=False, unrecorded=0):
    """Runs one step of `path` through the CPU path and the grid loops and
    asserts they agree; returns amp-run's log and lowered IR of the grid
    run, and the outputs of both grid runs. With `reverse`, runs the grid
    loops last to first too (--reverse-grid-loops): a kernel whose threads
    depend on one another (a race on a GPU) gives other results in one of
    the two orders. A correct kernel gives the same bits in both, unless
    atomic additions sum in another order. `unrecorded` GEMMs have no
    record and stay kernels, each with a warning."""
    cpu, cpu_text, _ = run_step(path, pipeline, tmp_path / "cpu", [])
    grid, grid_text, log = run_step(path, pipeline, tmp_path / "grid",
                                    ["--grid-loops"])
    # The grid pipeline ran: every GEMM through a record (a convolution's
    # through a convolution record), none via BLAS.
    gemms = len(re.findall(r"call @amp_contract_", cpu_text))
    assert gemms > 0
    assert "call @amp_contract_" not in grid_text
    convolutions = int(re.search(r"convolution records: (\d+)", log)[1])
    assert len(re.findall(r"call @amp_conv_", grid_text)) == convolutions
    records = gemms - convolutions - unrecorded
    assert f"GEMM records: {records} of {records} GEMMs (the others in grid " \
           "loops)" in log
    assert log.count("warning: no GEMM record, so the contraction stays a "
                     "kernel of the grid loops") == unrecorded
    fp32 = FP32Reference(path, tmp_path / "fp32")
    assert_close_to_cpu(grid, cpu, ulp, norm_wise, fp32)
    if not reverse:
        return log, grid_text, grid, None
    reversed_, _, reversed_log = run_step(
        path, pipeline, tmp_path / "reversed",
        ["--grid-loops", "--reverse-grid-loops"])
    assert "grid loops run last to first" in reversed_log
    if "llvm.atomicrmw" in grid_text:
        assert_close_to_cpu(reversed_, cpu, ulp, norm_wise, fp32)
    else:
        for f, expected in grid.items():
            np.testing.assert_array_equal(reversed_[f], expected, err_msg=f)
    return log, grid_text, grid, reversed_


class FP32Reference:
    """The CPU path's FP32 outputs of the step at `path`, run once when
    first asked for (a large step's FP32 run takes minutes)."""

    def __init__(self, path, folder):
        self.path, self.folder = path, folder
        self.outputs = None

    def get(self):
        if self.outputs is None:
            self.outputs, _, _ = run_step(self.path, PRECISIONS["fp32"][0],
                                          self.folder, [])
        return self.outputs


def assert_close_to_cpu(grid, cpu, ulp, norm_wise=False, fp32=None):
    """The grid loops' outputs `grid` are the CPU path's `cpu` within two
    units in the last place `ulp`, and 99% within FP32's rounding; with
    `norm_wise`, within numerics.backend_mismatch's bounds, as on the GPU:
    beyond one unit norm-wise, no farther from the CPU's FP32 run (the
    FP32Reference `fp32`) than the CPU's own run is."""
    assert grid.keys() == cpu.keys()
    if norm_wise:
        for f, expected in cpu.items():
            problem = numerics.backend_mismatch(grid[f], expected, ulp)
            if problem is not None and fp32 is not None:
                problem = numerics.backend_mismatch(
                    grid[f], expected, ulp, fp32.get().get(f))
            assert problem is None, f"{f}: {problem}"
        return
    for f, expected in cpu.items():
        got = grid[f].astype(np.float64)
        expected = expected.astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=2 * ulp, atol=1e-6,
                                   err_msg=f)
        close = np.isclose(got, expected, rtol=1e-5, atol=1e-6)
        assert close.mean() >= 0.99, f


def lower_with(path, passes):
    """`path` converted to linalg and then through `passes` by amp-opt."""
    run = subprocess.run(
        [api.find_tool("amp-opt"), path, "-mlir-print-debuginfo=false",
         "--pass-pipeline=builtin.module(func.func(onnxg-expand-gradients),"
         f"convert-onnxg-to-linalg,{passes})"],
        check=True, capture_output=True, text=True)
    return run.stdout


def test_wide_cnn_reductions_and_scatters_run_in_parallel(tmp_path):
    """A ResNet step on 4 images of 32x32 (the small zoo's are too small to
    split): its BatchNorm sums over images and pixels are reduced per image
    first (amp-split-reductions' two steps), its MaxPool gradient scatters
    each image's channels in parallel (amp-parallelize-loop-nests), with
    atomic additions every update, and the grid loops still give the CPU
    path's outputs."""
    from amp_opt import export
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    path = str(tmp_path / "wide_cnn.onnx")
    export.export_training_step(
        zoo.ResNet(8, 2, 1, 10), (torch.randn(4, 3, 32, 32),),
        (torch.randint(0, 10, (4,)),), torch.nn.CrossEntropyLoss(), path,
        optimizer="sgd", lr=0.01, momentum=0.9)
    split = lower_with(path, "func.func(amp-split-reductions)")
    # Partials of the stem's 8 channels for each of the 4 images.
    assert re.search(r"linalg.fill .* -> tensor<8x4xf32>", split)
    scattered = lower_with(
        path, "one-shot-bufferize{bufferize-function-boundaries},"
        "func.func(canonicalize,amp-parallelize-loop-nests)")
    assert re.search(r"scf.parallel \(%\w+, %\w+\) = \(%c0, %c0\) to "
                     r"\(%c4, %c8\)", scattered)
    # As the CUDA pipeline runs it: over every update too, atomically.
    atomic = lower_with(
        path, "one-shot-bufferize{bufferize-function-boundaries},"
        "func.func(canonicalize,amp-parallelize-loop-nests{atomic-updates="
        "true})")
    assert re.search(r"scf.parallel \(%\w+, %\w+, %\w+\) = \(%c0, %c0, "
                     r"%c0\) to \(%c4, %c8, %c256\)", atomic)
    assert "memref.atomic_rmw addf" in atomic
    compare_grid_to_cpu(path, *PRECISIONS["fp32"], tmp_path, reverse=True)


def test_reversed_grid_loops_sum_atomically_in_another_order(tmp_path):
    """--reverse-grid-loops takes effect through amp-run: a GatherGrad whose
    256 indices name 2 rows sums about 128 values into each element with
    atomic additions, which run last to first round otherwise (other bits,
    the same sums within rounding)."""
    from onnx import helper
    from test_amp_run_contrib_ops import run_nodes
    rng = np.random.default_rng(6)
    indices = rng.integers(0, 2, 256)
    dy = rng.standard_normal((256, 4)).astype(np.float32)
    expected = np.zeros((2, 4))
    np.add.at(expected, indices, dy.astype(np.float64))
    node = helper.make_node("GatherGrad", ["shape", "indices", "dy"], ["dx"],
                            domain="com.microsoft")
    inputs = dict(shape=np.array([2, 4], np.int64), indices=indices, dy=dy)
    lowered = tmp_path / "lowered.mlir"
    results = []
    for order in (["--dump-lowered", str(lowered)], ["--reverse-grid-loops"]):
        folder = tmp_path / str(len(results))
        folder.mkdir()
        results.append(run_nodes(folder, node, inputs, dict(dx=(2, 4)),
                                 extra=["--grid-loops", *order])["dx"])
        np.testing.assert_allclose(results[-1], expected, rtol=0, atol=1e-4)
    assert "llvm.atomicrmw fadd" in lowered.read_text()
    assert not np.array_equal(results[0], results[1])


@pytest.mark.parametrize("vocab, split_shapes", [
    (4100, [r"output_shape \[16, 50, 82\] : tensor<16x4100xf32>"]),
    (4099, [r"tensor.extract_slice .* \[16, 4096\] \[1, 1\] : "
            r"tensor<16x4099xf32> to tensor<16x4096xf32>",
            r"output_shape \[16, 64, 64\] : tensor<16x4096xf32>",
            r"tensor.extract_slice .*\[0, 4096\] \[16, 3\] \[1, 1\] : "
            r"tensor<16x4099xf32> to tensor<16x3xf32>"])])
def test_wide_vocabulary_gpt_softmax_splits(tmp_path, vocab, split_shapes):
    """A GPT step over a wide vocabulary and 16 tokens: its softmax's fused
    sum of exponentials over the vocabulary reads each row's max from a
    [rows, 1] tensor, whose unit dimension amp-split-reductions drops before
    splitting it, 4100 words by a ratio that is no power of two (82), the
    prime 4099 by 64 over its first 4096 words, the last 3 reduced after;
    the grid loops still give the CPU path's outputs."""
    from amp_opt import export
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    path = str(tmp_path / "wide_gpt.onnx")
    tokens = torch.randint(0, vocab, (2, 8))
    export.export_training_step(
        zoo.GPT(vocab, 32, 4, 1, 8), (tokens,), (torch.roll(tokens, -1, 1),),
        zoo._token_loss, path, optimizer="sgd", lr=0.01, momentum=0.9)
    split = lower_with(path, "func.func(canonicalize,cse,amp-fuse-elementwise,"
                       "amp-split-reductions)")
    # The row max, without its unit dimension, next to the split logits.
    assert re.search(r"tensor.collapse_shape .* : tensor<16x1xf32> into "
                     r"tensor<16xf32>", split)
    for shape in split_shapes:
        assert re.search(shape, split), shape
    compare_grid_to_cpu(path, *PRECISIONS["fp32"], tmp_path)


def toolkit_found():
    """Whether amp-opt has a CUDA toolkit to lower with (the one CMake
    found): it lowers an empty module."""
    run = subprocess.run([api.find_tool("amp-opt"), "--amp-lower-to-cuda",
                          "-o", os.devnull], input="module {}", text=True,
                         capture_output=True)
    return run.returncode == 0


def has_cuda_device():
    """Whether a GPU answers nvidia-smi (then the no-GPU error path is not
    what a step library does)."""
    try:
        run = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0 and "GPU" in run.stdout


CALL_STEP = r"""
#include "STEP.h"
#include <stdio.h>
#include <stdlib.h>
int (*run)(void *const *, void *const *) = STEP;
const char *(*error)(void) = STEP_error;
const char *(*signature)(void) = STEP_signature;
int main(void) {
  void *in[NUM_INPUTS + 1], *out[NUM_OUTPUTS + 1];
  for (int i = 0; i < NUM_INPUTS; ++i) in[i] = calloc(1, 1 << 20);
  for (int i = 0; i < NUM_OUTPUTS; ++i) out[i] = calloc(1, 1 << 20);
  int status = run(in, out);
  printf("%d %s\n", status, error());
  return 0;
}
"""


def compile_library(path, pipeline, folder, name="step", extra=()):
    """amp-compile's step library, header and lowered module, and its
    summary line."""
    folder.mkdir(exist_ok=True)
    library = folder / f"{name}.so"
    lowered = folder / f"{name}.mlir"
    args = [api.find_tool("amp-compile"), str(path), "-o", str(library),
            "--dump-lowered", str(lowered)] + list(extra)
    if pipeline:
        args.append(f"--amp-pipeline={pipeline}")
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # The step reads and writes no buffer on the host (docs/AmpCompile.md):
    # callers pass device memory.
    assert "on the host" not in run.stderr, run.stderr
    summary = run.stderr.strip().splitlines()[-1]
    return library, folder / f"{name}.h", lowered.read_text(), summary


def check_kernels(text, summary):
    """amp-compile's counts (kernels, GEMMs, FP8 GEMMs, convolutions,
    inputs, outputs), once ptxas accepted every kernel for both chips: one
    fatbin each (the magic 0xBA55ED50), no cubin left."""
    found = re.search(r": (\d+) kernels, (\d+) cuBLASLt GEMMs \((\d+) FP8\), "
                      r"(\d+) cuDNN convolutions, (\d+) inputs, (\d+) outputs",
                      summary)
    assert found, summary
    counts = tuple(map(int, found.groups()))
    binaries = len(re.findall(r"^  gpu\.binary @", text, re.MULTILINE))
    objects = re.findall(r"#gpu\.object<#nvvm\.target<[^>]*>, \"(.{8})", text)
    assert binaries == counts[0] and len(objects) == counts[0]
    assert all(o.startswith("P\\ED") for o in objects), objects[:3]
    return counts


def check_library(library, header, text, summary, name="step"):
    """The library's kernels, exports, dependencies, header and no-GPU
    behaviour (docs/AmpCompile.md)."""
    kernels, gemms, fp8_gemms, convolutions, inputs, outputs = check_kernels(
        text, summary)
    assert kernels > 0
    assert len(re.findall(r"llvm\.call @amp_gemm_", text)) == gemms > 0
    assert len(re.findall(r"llvm\.call @amp_gemm_f8", text)) == fp8_gemms
    assert len(re.findall(r"llvm\.call @amp_conv_", text)) == convolutions
    # Host code is the LLVM dialect only, and touches no buffer itself.
    assert "func.func" not in text and "unrealized_conversion_cast" not in text
    # Exactly the three entry points; no LLVM or MLIR at run time.
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library)],
                             check=True, capture_output=True,
                             text=True).stdout
    symbols = {line.split()[-1] for line in listing.splitlines()}
    assert symbols == {name, f"{name}_error", f"{name}_signature"}, symbols
    needed = subprocess.run(["readelf", "-d", str(library)], check=True,
                            capture_output=True, text=True).stdout
    assert "libcublasLt" in needed
    assert "libMLIR" not in needed and "libLLVM" not in needed
    # The header: its counts are the signature's, its declarations compile
    # with the documented types; a program links the library and calls it.
    head = header.read_text()
    upper = name.upper()
    assert f"#define {upper}_NUM_INPUTS {inputs}\n" in head
    assert f"#define {upper}_NUM_OUTPUTS {outputs}\n" in head
    lib = ctypes.CDLL(str(library))
    describe = getattr(lib, f"{name}_signature")
    describe.restype = ctypes.c_char_p
    signature = json.loads(describe())
    assert signature["step"] == name
    assert len(signature["inputs"]) == inputs
    assert len(signature["outputs"]) == outputs
    # A start value only where every element of an initializer is equal:
    # the zoo's zeroed momenta, the loss scale.
    for entry in signature["inputs"]:
        if entry["name"].endswith(".momentum_buffer"):
            assert entry.get("value") == 0, entry
        if entry["name"] == "amp.loss_scale":
            assert entry.get("value") == 65536, entry
        assert entry["initializer"] or "value" not in entry, entry
    program = library.parent / "call.c"
    program.write_text(CALL_STEP.replace("STEP", name)
                       .replace("NUM_INPUTS", f"{upper}_NUM_INPUTS")
                       .replace("NUM_OUTPUTS", f"{upper}_NUM_OUTPUTS"))
    binary = library.parent / "call"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I",
                    str(header.parent), str(program), str(library), "-o",
                    str(binary), f"-Wl,-rpath,{library.parent}"], check=True)
    if has_cuda_device():
        return  # test_cuda_device.py runs it
    # Without a GPU: status 1, and a message that names the step and why.
    out = subprocess.run([str(binary)], check=True, capture_output=True,
                         text=True).stdout
    assert re.fullmatch(rf"1 step '{name}': (no CUDA driver|initializing the "
                        r"CUDA driver|no CUDA device).*\n", out), out


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_compiles_to_a_library(name, precision, zoo_steps, tmp_path):
    """amp-compile builds each small zoo step in each precision into a
    library: ptxas accepts every kernel for sm_80 and sm_90, the library
    links with no undefined symbol, its header compiles, its exports are
    the documented three, and without a GPU it fails with one message."""
    pipeline, _ = PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    path = zoo_steps[name, "sgd"]
    compiled = compile_library(path, pipeline, tmp_path / "lib")
    check_library(*compiled)
    # Every FP8 GEMM of the step is a cuBLASLt FP8 call, none of another.
    fp8 = count_scaled_matmuls(path, pipeline)
    assert (fp8 > 0) == (precision == "fp8")
    assert f"cuBLASLt GEMMs ({fp8} FP8)" in compiled[3]


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_tanh_gelu_step_compiles_with_gelu_epilogues(precision, tmp_path):
    """A step with GELU's tanh approximation after a Linear layer compiles
    to a library whose GEMMs take GELU (GELU_AUX_BIAS) and its backward
    (DGELU), calling the runtime's aux entry points: the library links,
    its header compiles, and without a GPU it fails with one message."""
    path = tmp_path / "gelu.onnx"
    export_tanh_gelu_step(path)
    compiled = compile_library(path, PRECISIONS[precision][0],
                               tmp_path / "lib")
    check_library(*compiled)
    assert count_gelu_epilogues(compiled[2].replace("llvm.call", "call"),
                                precision) == (1, 1, 1, 1)


def count_kernels_without(path, pipeline, folder, option):
    """The kernels of the step's library by default and with
    `--lower-options=<option>`, each library checked (check_library)."""
    counts = []
    for name, extra in (("default", ()),
                        ("without", (f"--lower-options={option}",))):
        compiled = compile_library(path, pipeline, folder / name, extra=extra)
        check_library(*compiled)
        counts.append(int(re.search(r": (\d+) kernels", compiled[3]).group(1)))
    return counts


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("name", ["cnn", "transformer"])
def test_grid_fusion_cuts_kernels(name, zoo_steps, tmp_path):
    """amp-linalg-to-grid-loops' fusion (a reduction with its epilogue,
    sibling reductions, ops over the same points) runs through amp-compile:
    the FP32 step has at least a quarter fewer kernels than with
    fuse-grids=false (one kernel per op). test_zoo_step_kernels_run_as_-
    grid_loops checks the fused kernels' results."""
    counts = count_kernels_without(zoo_steps[name, "sgd"], "precision=fp32",
                                   tmp_path, "fuse-grids=false")
    fused, unfused = counts
    assert fused < 0.75 * unfused, counts


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
def test_independent_grid_fusion_cuts_kernels(zoo_steps, tmp_path):
    """amp-linalg-to-grid-loops' fuse-independent runs through amp-compile:
    the FP16 transformer's per-parameter all-finite checks and updates run
    as a few kernels, at least a fifth fewer kernels in all than with
    fuse-independent-grids=false, and ptxas takes every kernel's parameters.
    test_zoo_step_kernels_run_as_grid_loops checks their results."""
    pipeline, _ = PRECISIONS["fp16"]
    counts = count_kernels_without(zoo_steps["transformer", "sgd"], pipeline,
                                   tmp_path, "fuse-independent-grids=false")
    fused, vertical = counts
    assert fused < 0.8 * vertical, counts


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("name,precision", [("transformer", "fp16"),
                                            ("gpt", "fp32")])
def test_attention_transposes_fold_into_gemms(name, precision, zoo_steps,
                                              tmp_path):
    """amp-contractions-to-gemm-records' transposes run through
    amp-compile: attention's batched GEMMs read the heads' transposed
    copies from their sources and write P V (and gradients) where the
    copies of it put them (the transformer's heads; in FP16 through the
    kernel that rounds it, now a copy), so the step has at least one kernel
    fewer per attention (Softmax node) than with gemm-transposes=false.
    GPT's batch-first heads ([b, s, h, d]) need two batch strides, so only
    its backward's transposed inputs fold. test_zoo_step_kernels_run_as_-
    grid_loops checks the strided records' results."""
    import onnx
    path = zoo_steps[name, "sgd"]
    attentions = [n for n in onnx.load(path).graph.node
                  if n.op_type == "Softmax"]
    pipeline, _ = PRECISIONS[precision]
    folded, copied = count_kernels_without(path, pipeline, tmp_path,
                                           "gemm-transposes=false")
    assert folded <= copied - len(attentions) < copied, (folded, copied)


def kernels_with_barriers(path, lower_options):
    """The kernels of the FP32 step at `path` (PTX, sm_90) that use shared
    memory and a barrier, and all its kernels."""
    run = subprocess.run(
        [api.find_tool("amp-opt"), path, "--amp-pipeline=precision=fp32",
         f"--amp-lower-to-cuda=chips=sm_90 format=isa {lower_options}",
         "-mlir-print-debuginfo=false"],
        check=True, capture_output=True, text=True)
    kernels = re.findall(r"^  gpu\.binary @.*$", run.stdout, re.MULTILINE)
    return sum("bar.sync" in k and ".shared" in k for k in kernels), \
        len(kernels)


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
def test_layer_norm_rows_share_lanes(zoo_steps):
    """amp-linalg-to-grid-loops' row-lanes reaches the kernels: in the FP32
    transformer, each LayerNorm's kernel (and its gradient's) gives every
    row 32 lanes that combine their sums through shared memory between
    barriers; with row-lanes=1 no kernel needs either, and the kernel
    count is within a few (such kernels join no independent grid).
    test_zoo_step_kernels_run_as_grid_loops checks their results."""
    import onnx
    path = zoo_steps["transformer", "sgd"]
    norms = [n for n in onnx.load(path).graph.node
             if n.op_type == "LayerNormalization"]
    shared, total = kernels_with_barriers(path, "")
    assert shared >= len(norms) > 0, (shared, len(norms))
    none, total_one = kernels_with_barriers(path, "row-lanes=1")
    assert none == 0
    assert total_one <= total <= total_one + shared, (total, total_one)


ARTIFACTS = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                         "shared", "corpus", "external")
ORT_STEPS = {
    "training_model": ("onnxruntime_onnxruntime-qnn/onnxruntime/test/"
                       "testdata/training_api/training_model.onnx",
                       ["input-0_dim0=4", "input-0_dim1=784",
                        "output-0_dim0=4"]),
    "gradient_graph": ("onnxruntime_onnxruntime-qnn@8890461/onnxruntime/"
                       "test/testdata/training_api/gradient_graph.onnx",
                       ["input1_dim0=4", "input1_dim1=784",
                        "output-0_dim0=4"]),
}


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("artifact", ORT_STEPS)
def test_ort_artifact_compiles_to_a_library(artifact, precision, tmp_path):
    """The corpus's ONNX Runtime training artifacts compile too (FP16:
    with dynamic loss scaling, its state among the outputs)."""
    relative, dims = ORT_STEPS[artifact]
    path = os.path.join(ARTIFACTS, relative)
    if not os.path.isfile(path):
        pytest.skip(f"{path} is absent (../shared/corpus)")
    pipeline, _ = PRECISIONS[precision]
    extra = [a for d in dims for a in ("--dim", d)]
    compiled = compile_library(path, pipeline, tmp_path / "lib", extra=extra)
    check_library(*compiled)
    if precision == "fp16":
        assert "amp.loss_scale.updated" in compiled[1].read_text()


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_artifact_weight_gradient_convolutions_stay_records(precision,
                                                            tmp_path):
    """An ONNX Runtime artifact with ConvTranspose in FP16 or BF16 keeps
    FP32's cuDNN records: the transposed convolution stays a backward-data
    call (the lowering's flip of W also rounds it: the call reads W rounded
    in its own layout), and ConvTransposeGrad's weight gradient a
    backward-filter call although (FP16, dynamic loss scaling) two kernels
    read it, the finite check and the accumulation, each only rounding it.
    The grid loops with the records match the CPU path (norm-wise: the
    convolution rounds before its bias, as cuDNN does)."""
    from test_training_graphs import generator_artifact
    import onnx
    path = str(tmp_path / "training_model.onnx")
    onnx.save(generator_artifact(16), path)
    pipeline, ulp = PRECISIONS[precision]
    modes = {}
    for name, step_pipeline in (("fp32", None), (precision, pipeline)):
        _, _, lowered, _ = compile_library(path, step_pipeline,
                                           tmp_path / name)
        modes[name] = api.conv_record_modes(lowered)
    assert modes[precision] == modes["fp32"]
    assert 1 in modes[precision]  # a backward-filter record
    _, grid_text, _, _ = compare_grid_to_cpu(path, pipeline, ulp, tmp_path,
                                             norm_wise=True)
    assert f"amp_conv_{precision.replace('fp', 'f')}" in grid_text
