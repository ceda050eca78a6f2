"""DFT, STFT and MelWeightMatrix (opset 17) through amp-run, on the CPU and
in the CUDA backend's grid loops, against numpy's FFT, ONNX's reference
formula and ONNX Runtime; and an audio classifier's training step (torch.stft
exported as STFT) that amp-run trains in FP32 and FP16 and ONNX Runtime
runs as eager PyTorch does."""
import json

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, numpy_helper

from amp_opt import api, export_training_step, ort
from amp_opt.numerics import FORCED
from test_attention_ops import save_model as save_nodes

GRID_LOOPS = ["--grid-loops", "--reverse-grid-loops"]


def save_model(path, nodes, inputs, outputs, initializers=()):
    """A model of `nodes` at opset 17 with `inputs` ({name: array}) and
    float `outputs` (names)."""
    return save_nodes(path, nodes, inputs, outputs, initializers, opset=17,
                      ir_version=8)


def scalar(name, value, dtype=np.int64):
    return numpy_helper.from_array(np.array(value, dtype), name)


def as_complex(x):
    """[..., 1 or 2] real form to a complex array."""
    return x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)


def as_real(z):
    return np.stack([z.real, z.imag], -1)


def dft_reference(x, axis, length, onesided, inverse):
    z = as_complex(x.astype(np.float64))
    transform = np.fft.ifft if inverse else np.fft.fft
    y = transform(z, n=length, axis=axis)
    if onesided:
        y = np.take(y, range(length // 2 + 1), axis=axis)
    return as_real(y)


def assert_close(actual, expected, relative=1e-5):
    """Within `relative` of the largest magnitude of `expected`."""
    assert actual.shape == expected.shape
    tolerance = relative * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tolerance)


# name: (input shape, attributes, dft_length or None)
DFT_CASES = {
    "real_axis1": ((2, 12, 3, 1), {"axis": 1}, None),
    "real_axis2": ((2, 12, 5, 1), {"axis": 2}, None),
    "complex_inverse": ((3, 8, 2), {"axis": 1, "inverse": 1}, None),
    "onesided_odd": ((2, 9, 1), {"axis": 1, "onesided": 1}, None),
    "real_inverse": ((2, 10, 1), {"inverse": 1}, None),
    "padded": ((2, 6, 2), {"axis": 1}, 10),
    "truncated": ((2, 16, 1), {"axis": 1, "onesided": 1}, 12),
    "axis0": ((7, 3, 2), {"axis": 0}, None),
}


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("name", sorted(DFT_CASES))
def test_dft_matches_numpy(name, grid, tmp_path):
    shape, attributes, length = DFT_CASES[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    inputs = ["x"] + (["length"] if length else [])
    initializers = [scalar("length", length)] if length else []
    node = helper.make_node("DFT", inputs, ["y"], **attributes)
    path = save_model(tmp_path / "dft.onnx", [node], {"x": x},
                      ["y"], initializers)
    got = api.run_with_inputs(path, {"x": x}, tmp_path,
                              args=GRID_LOOPS if grid else [])["y"]
    axis = attributes.get("axis", 1)
    expected = dft_reference(x, axis, length or shape[axis],
                             attributes.get("onesided", 0),
                             attributes.get("inverse", 0))
    assert_close(got, expected)


def stft_reference(signal, step, window, length, onesided):
    z = as_complex(signal.astype(np.float64))
    frames = (z.shape[1] - length) // step + 1
    window = np.ones(length) if window is None else window
    spectra = [np.fft.fft(z[:, f * step:f * step + length] * window, axis=1)
               for f in range(frames)]
    y = np.stack(spectra, 1)
    return as_real(y[:, :, :length // 2 + 1] if onesided else y)


# name: (signal shape, frame_step, window length or None, frame_length or
# None, onesided)
STFT_CASES = {
    "window": ((2, 64, 1), 8, 16, None, 1),
    "window_and_length": ((1, 50, 1), 5, 10, 10, 1),
    "length_only": ((3, 40, 1), 7, None, 12, 1),
    "two_sided": ((2, 33, 1), 4, 9, None, 0),
    "complex": ((2, 30, 2), 6, 8, None, 0),
}


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("name", sorted(STFT_CASES))
def test_stft_matches_numpy(name, grid, tmp_path):
    shape, step, window_length, frame_length, onesided = STFT_CASES[name]
    rng = np.random.default_rng(1)
    signal = rng.standard_normal(shape).astype(np.float32)
    feeds = {"signal": signal}
    initializers = [scalar("step", step)]
    window = None
    if window_length:
        window = np.hanning(window_length).astype(np.float32)
        feeds["window"] = window
    if frame_length:
        initializers.append(scalar("frame_length", frame_length))
    node = helper.make_node(
        "STFT", ["signal", "step", "window" if window_length else "",
                 "frame_length" if frame_length else ""], ["y"],
        onesided=onesided)
    path = save_model(tmp_path / "stft.onnx", [node], feeds,
                      ["y"], initializers)
    got = api.run_with_inputs(path, feeds, tmp_path,
                              args=GRID_LOOPS if grid else [])["y"]
    expected = stft_reference(signal, step, window,
                              frame_length or window_length, onesided)
    assert_close(got, expected)


def mel_reference(bins, length, rate, low, high):
    """ONNX's reference (onnx/backend/test/case/node/melweightmatrix.py),
    written out."""
    spectrum = length // 2 + 1
    edges = np.arange(0, bins + 2)
    low_mel = 2595 * np.log10(1 + np.float32(low) / 700)
    high_mel = 2595 * np.log10(1 + np.float32(high) / 700)
    step = (high_mel - low_mel) / edges.shape[0]
    edges = 700 * (np.power(10, (edges * step + low_mel) / 2595) - 1)
    edges = (((length + 1) * edges) // rate).astype(int)
    out = np.zeros((spectrum, bins))
    for i in range(bins):
        left, center, right = edges[i], edges[i + 1], edges[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out.astype(np.float32)


MEL_CASES = [(8, 16, 8192, 0.0, 4096.0), (40, 400, 16000, 20.0, 8000.0),
             (64, 512, 22050, 0.0, 11025.0), (10, 64, 8000, 300.0, 3000.0)]


@pytest.mark.parametrize("case", MEL_CASES, ids=lambda c: f"{c[0]}x{c[1]}")
def test_mel_weight_matrix(case, tmp_path, needs_ort):
    """The constant equals ONNX's reference formula and ONNX Runtime's
    kernel, and every filter has a peak of 1 (ONNX's definition)."""
    bins, length, rate, low, high = case
    initializers = [scalar("bins", bins, np.int32),
                    scalar("length", length, np.int32),
                    scalar("rate", rate, np.int32),
                    scalar("low", low, np.float32),
                    scalar("high", high, np.float32)]
    node = helper.make_node("MelWeightMatrix",
                            ["bins", "length", "rate", "low", "high"], ["y"])
    path = save_model(tmp_path / "mel.onnx", [node], {},
                      ["y"], initializers)
    got = api.run_with_inputs(path, {}, tmp_path)["y"]
    expected = mel_reference(bins, length, rate, low, high)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, ort.run(path, {})["y"])
    assert got.shape == (length // 2 + 1, bins)
    assert (got.max(0) == 1).all()


@pytest.mark.parametrize("name", ["onesided_odd", "real_inverse", "padded",
                                  "axis0", "truncated"])
def test_dft_matches_onnx_runtime(name, tmp_path, needs_ort):
    shape, attributes, length = DFT_CASES[name]
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    inputs = ["x"] + (["length"] if length else [])
    initializers = [scalar("length", length)] if length else []
    node = helper.make_node("DFT", inputs, ["y"], **attributes)
    path = save_model(tmp_path / "dft.onnx", [node], {"x": x},
                      ["y"], initializers)
    got = api.run_with_inputs(path, {"x": x}, tmp_path)["y"]
    assert_close(got, ort.run(path, {"x": x})["y"])


class Spectrogram(nn.Module):
    """A log-power spectrogram (torch.stft, centered, Hann window) through
    a mel-like fixed projection, a Conv1d over time and a classifier."""

    def __init__(self, n_fft=64, hop=16, bands=12, classes=4):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer(
            "bands", torch.rand(n_fft // 2 + 1, bands) / (n_fft // 2))
        self.conv = nn.Conv1d(bands, 16, 3, padding=1)
        self.fc = nn.Linear(16, classes)

    def forward(self, wave):
        spectrum = torch.stft(wave, self.n_fft, self.hop, window=self.window,
                              return_complex=False)
        power = spectrum.pow(2).sum(-1).transpose(1, 2)
        features = torch.log(power @ self.bands + 1e-6).transpose(1, 2)
        return self.fc(F.relu(self.conv(features)).mean(-1))


@pytest.fixture(scope="module")
def audio_step(tmp_path_factory):
    """The spectrogram classifier's Adam step, and the eager model, inputs
    and loss it was exported from."""
    torch.manual_seed(0)
    model = Spectrogram()
    wave = torch.randn(8, 512)
    labels = torch.randint(0, 4, (8,))
    path = str(tmp_path_factory.mktemp("audio") / "audio.onnx")
    export_training_step(model, (wave,), (labels,), F.cross_entropy, path,
                         optimizer="adam", lr=1e-2)
    loss = F.cross_entropy(model(wave), labels).item()
    return path, wave.numpy(), labels.numpy(), loss


def test_stft_exports_as_one_node(audio_step):
    path = audio_step[0]
    ops = [node.op_type for node in onnx.load(path).graph.node]
    assert ops.count("STFT") == 1
    onnx.checker.check_model(onnx.load(path), full_check=True)


def test_audio_step_matches_eager_in_onnx_runtime(audio_step, tmp_path,
                                                  needs_ort):
    """ONNX Runtime and amp-run compute eager PyTorch's loss from the same
    inputs: the STFT, its window and centering were exported right."""
    path, wave, labels, loss = audio_step
    feeds = {"input0": wave, "target0": labels}
    names = {i.name for i in onnx.load(path).graph.input}
    assert set(feeds) <= names, names
    assert ort.run(path, feeds)["loss"] == pytest.approx(loss, rel=1e-5)
    saved = api.run_with_inputs(path, feeds, tmp_path)
    assert saved["loss"] == pytest.approx(loss, rel=1e-5)


def test_audio_step_trains_in_fp16(audio_step, tmp_path):
    """amp-run trains the step 30 steps on one batch in FP32 and FP16: the
    loss falls, the FP16 run's GEMMs and convolutions are f16 by the report
    while the STFT stays f32, and the curves stay within 2% of the first
    loss."""
    path, wave, labels, _ = audio_step
    feeds = {"input0": wave, "target0": labels}
    report = tmp_path / "report.json"
    fp32 = api.run_with_inputs(path, feeds, tmp_path / "fp32",
                               steps=30).records
    fp16 = api.run_with_inputs(
        path, feeds, tmp_path / "fp16", steps=30,
        amp_pipeline=f"precision=fp16 {FORCED} report={report}").records
    decisions = {}
    for decision in json.loads(report.read_text())["decisions"]:
        decisions.setdefault(decision["op_type"], set()).add(
            decision["precision"])
    assert decisions["STFT"] == {"f32"}
    assert decisions["Conv"] == {"f16"} and decisions["Gemm"] == {"f16"}
    first = fp32[0]["loss"]
    assert fp32[-1]["loss"] < 0.8 * first
    assert [r["loss"] for r in fp16] != [r["loss"] for r in fp32]
    for a, b in zip(fp32, fp16):
        assert abs(a["loss"] - b["loss"]) < 0.02 * first
