"""Random ops in amp-run. Dropout in training mode and ONNX Runtime's
BitmaskDropout, BiasDropout and their gradients: masks are reproducible
from --seed, new at every step, different per node, keep about 1 - ratio
of the elements, and the forward output and the gradient agree on them
(the ONNX Runtime fusion test graphs of the corpus). The generators
RandomUniform(Like), RandomNormal(Like) and Bernoulli draw the
distributions they name; the training steps our exporter writes for
models with dropout and a VAE's reparameterization train in FP32 and
FP16 with the same draws."""
import math
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import torch
import torch.nn as nn

from amp_opt import api, export_training_step, ort
from test_cuda_backend import check_library, compile_library, toolkit_found

HERE = os.path.dirname(os.path.abspath(__file__))
FUSION = os.path.normpath(os.path.join(
    HERE, "..", "..", "..", "shared", "corpus", "external",
    "onnxruntime_onnxruntime-qnn", "onnxruntime", "test", "testdata",
    "transform", "fusion"))


def run(tmp_path, model_path, steps, seed, inputs, extra=()):
    return dict(api.run_with_inputs(model_path, inputs,
                                    tmp_path / f"run_{steps}_{seed}",
                                    steps=steps, seed=seed, args=extra))


def test_dropout_masks(tmp_path):
    ratio = 0.25
    nodes = [helper.make_node("Dropout", ["x", "ratio", "training"],
                              [f"y{i}", f"mask{i}"]) for i in (0, 1)]
    info = helper.make_tensor_value_info
    n = 4096
    graph = helper.make_graph(
        nodes, "dropout", [info("x", TensorProto.FLOAT, [n])],
        [info(f"{kind}{i}", dtype, [n]) for i in (0, 1)
         for kind, dtype in (("y", TensorProto.FLOAT),
                             ("mask", TensorProto.BOOL))],
        [numpy_helper.from_array(np.array(ratio, np.float32), "ratio"),
         numpy_helper.from_array(np.array(True), "training")])
    path = str(tmp_path / "dropout.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = np.linspace(1, 2, n, dtype=np.float32)

    first = run(tmp_path, path, 1, 0, dict(x=x))
    mask = first["mask0"]
    assert abs(mask.mean() - (1 - ratio)) < 0.03, mask.mean()
    np.testing.assert_allclose(first["y0"], np.where(mask, x / (1 - ratio), 0),
                               rtol=1e-6)
    # Another node draws another mask; the same seed repeats exactly.
    assert (first["mask1"] != mask).mean() > 0.2
    again = run(tmp_path, path, 1, 0, dict(x=x))
    np.testing.assert_array_equal(again["mask0"], mask)
    # The next step and another seed draw new masks.
    step2 = run(tmp_path, path, 2, 0, dict(x=x))
    other_seed = run(tmp_path, path, 1, 1, dict(x=x))
    for other in (step2, other_seed):
        assert (other["mask0"] != mask).mean() > 0.2


def test_dropout_runtime_ratio_and_seed_attribute(tmp_path):
    """The ratio and training_mode may be graph inputs (as in the ONNX
    backend test test_training_dropout_mask); a seed attribute fixes the
    stream."""
    info = helper.make_tensor_value_info
    n = 2048
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"],
                            seed=5)
    graph = helper.make_graph(
        [node], "dropout",
        [info("x", TensorProto.FLOAT, [n]), info("r", TensorProto.FLOAT, []),
         info("t", TensorProto.BOOL, [])],
        [info("y", TensorProto.FLOAT, [n]), info("mask", TensorProto.BOOL,
                                                 [n])])
    path = str(tmp_path / "dropout.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = np.ones(n, np.float32)
    inputs = dict(x=x, r=np.array(0.75, np.float32), t=np.array(True))
    got = run(tmp_path, path, 1, 0, inputs)
    assert abs(got["mask"].mean() - 0.25) < 0.04, got["mask"].mean()
    np.testing.assert_allclose(got["y"], got["mask"] * 4.0, rtol=1e-6)
    # The node's seed, not --seed, picks its stream.
    np.testing.assert_array_equal(run(tmp_path, path, 1, 9, inputs)["mask"],
                                  got["mask"])
    # training_mode false at run time drops nothing.
    inference = run(tmp_path, path, 1, 3, dict(inputs, t=np.array(False)))
    assert inference["mask"].all()
    np.testing.assert_array_equal(inference["y"], x)


needs_fusion_graphs = pytest.mark.skipif(
    not os.path.isdir(FUSION), reason=f"the corpus is absent ({FUSION})")


@needs_fusion_graphs
def test_bitmask_dropout_and_grad_agree(tmp_path):
    """Y = BitmaskDropout(X + B), dX = BitmaskDropoutGrad(dY, mask): the
    same elements drop in both, scaled by 1 / (1 - 0.1)."""
    rng = np.random.default_rng(0)
    m, n = 16, 100  # 1600 elements: 50 mask words
    inputs = {"A": rng.standard_normal((m, n)).astype(np.float32) + 3,
              "B": rng.standard_normal(n).astype(np.float32),
              "dY": rng.standard_normal((m, n)).astype(np.float32)}
    model = onnx.load(os.path.join(FUSION,
                                   "bitmask_bias_dropout_fusion_basic.onnx"))
    names = [i.name for i in model.graph.input]
    inputs = dict(zip(names, inputs.values()))
    got = run(tmp_path,
              os.path.join(FUSION, "bitmask_bias_dropout_fusion_basic.onnx"),
              1, 0, inputs, ["--dim", f"M={m}", "--dim", f"N={n}"])
    x, bias, dy = inputs.values()
    kept = got["Y"] != 0
    assert abs(kept.mean() - 0.9) < 0.03, kept.mean()
    np.testing.assert_allclose(got["Y"], np.where(kept, (x + bias) / 0.9, 0),
                               rtol=1e-6)
    np.testing.assert_allclose(got["dX"], np.where(kept, dy / 0.9, 0),
                               rtol=1e-6)


@needs_fusion_graphs
def test_bias_dropout_with_residual(tmp_path):
    """Y = BiasDropout(X, B, R), dX = DropoutGrad(dY, mask): dropped
    elements of Y are the residual alone."""
    rng = np.random.default_rng(1)
    m, n = 8, 64
    path = os.path.join(FUSION, "bitmask_bias_dropout_replacement_basic.onnx")
    names = [i.name for i in onnx.load(path).graph.input]
    values = [rng.standard_normal((m, n)).astype(np.float32) + 3,
              rng.standard_normal(n).astype(np.float32),
              rng.standard_normal((m, n)).astype(np.float32),
              rng.standard_normal((m, n)).astype(np.float32)]
    inputs = dict(zip(names, values))
    got = run(tmp_path, path, 1, 0, inputs,
              ["--dim", f"M={m}", "--dim", f"N={n}"])
    x, bias, residual, dy = values
    kept = got["dX"] != 0
    assert abs(kept.mean() - 0.9) < 0.06, kept.mean()
    np.testing.assert_allclose(
        got["Y"], np.where(kept, (x + bias) / 0.9, 0) + residual, rtol=1e-5,
        atol=1e-6)
    np.testing.assert_allclose(got["dX"], np.where(kept, dy / 0.9, 0),
                               rtol=1e-6)


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def test_random_generators(tmp_path):
    """Each generator's draws follow its distribution (Kolmogorov-Smirnov
    distance below 1%), in the type it names; they repeat with the seed and
    change with the step and the node."""
    n = 20000
    info = helper.make_tensor_value_info
    nodes = [
        helper.make_node("RandomUniform", [], ["u"], shape=[n], low=-2.0,
                         high=3.0),
        helper.make_node("RandomUniformLike", ["x"], ["u16"],
                         dtype=TensorProto.FLOAT16),
        helper.make_node("RandomNormal", [], ["z"], shape=[n], mean=1.0,
                         scale=2.0),
        helper.make_node("RandomNormalLike", ["x"], ["z2"]),
        helper.make_node("Bernoulli", ["p"], ["b"], dtype=TensorProto.INT32)]
    graph = helper.make_graph(
        nodes, "generators",
        [info("x", TensorProto.FLOAT, [n]), info("p", TensorProto.FLOAT, [n])],
        [info("u", TensorProto.FLOAT, [n]),
         info("u16", TensorProto.FLOAT16, [n]),
         info("z", TensorProto.FLOAT, [n]), info("z2", TensorProto.FLOAT, [n]),
         info("b", TensorProto.INT32, [n])])
    path = str(tmp_path / "generators.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    p = np.linspace(0, 1, n, dtype=np.float32)
    inputs = dict(x=np.zeros(n, np.float32), p=p)
    got = run(tmp_path, path, 1, 0, inputs)

    def ks_distance(sample, cdf):
        sample = np.sort(sample.astype(np.float64))
        return np.max(np.abs(cdf(sample) - np.arange(1, n + 1) / n))

    assert got["u"].dtype == np.float32 and got["u16"].dtype == np.float16
    assert got["u"].min() >= -2 and got["u"].max() < 3
    # 11-bit draws: float16 never rounds one up to `high`.
    assert got["u16"].min() >= 0 and got["u16"].max() < 1
    assert ks_distance(got["u"], lambda v: (v + 2) / 5) < 0.01
    assert ks_distance(got["u16"], lambda v: v) < 0.01
    assert ks_distance(got["z"], lambda v: normal_cdf((v - 1) / 2)) < 0.01
    assert ks_distance(got["z2"], normal_cdf) < 0.01
    # Bernoulli(p) is 1 with probability p: its running sum follows p's.
    b = got["b"]
    assert b.dtype == np.int32 and set(np.unique(b)) == {0, 1}
    for part in np.array_split(np.arange(n), 4):
        assert abs(b[part].mean() - p[part].mean()) < 0.03
    again = run(tmp_path, path, 1, 0, inputs)
    for name in got:
        np.testing.assert_array_equal(again[name], got[name])
    step2 = run(tmp_path, path, 2, 0, inputs)
    assert (step2["z2"] != got["z2"]).mean() > 0.99
    assert (got["z2"] != (got["z"] - 1) / 2).mean() > 0.99


class DropoutMLP(nn.Module):
    def __init__(self, size=256):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(size, 4 * size), nn.ReLU(), nn.Dropout(0.25),
            nn.Linear(4 * size, size))

    def forward(self, x):
        return self.layers(x)


class VAE(nn.Module):
    """Encoder to (mean, log variance), a sample by the reparameterization
    trick (torch.randn_like), decoder; trained on reconstruction plus KL."""

    def __init__(self, size=256, latent=64):
        super().__init__()
        self.latent = latent
        self.encode = nn.Linear(size, 2 * latent)
        self.decode = nn.Sequential(nn.Linear(latent, 4 * size), nn.ReLU(),
                                    nn.Linear(4 * size, size))

    def forward(self, x):
        h = self.encode(x)
        mean, logvar = h[:, :self.latent], h[:, self.latent:]
        z = mean + torch.randn_like(mean) * torch.exp(0.5 * logvar)
        kl = -0.5 * torch.mean(1 + logvar - mean * mean - logvar.exp())
        return self.decode(z), kl


def vae_loss(output, target):
    reconstruction, kl = output
    return nn.functional.mse_loss(reconstruction, target) + 0.01 * kl


@pytest.mark.parametrize("name", ["dropout", "vae"])
def test_exported_random_steps_train(name, tmp_path, needs_ort):
    """Our exporter writes dropout's mask as RandomUniformLike < keep
    (torch.onnx's bernoulli) and randn_like as RandomNormalLike. amp-run
    trains both: the loss falls, another seed draws otherwise, and FP16
    (GEMMs converted, by the report) draws the same values and stays
    within AMP's bounds of FP32. ONNX Runtime runs the converted file."""
    torch.manual_seed(0)
    size, batch = 512, 512
    model = DropoutMLP(size) if name == "dropout" else VAE(size)
    loss_fn = nn.functional.mse_loss if name == "dropout" else vae_loss
    x = torch.randn(batch, size)
    target = torch.tanh(x @ torch.randn(size, size) / 16)
    path = str(tmp_path / f"{name}.onnx")
    export_training_step(model, (x,), (target,), loss_fn, path,
                         optimizer="adam", lr=1e-3)
    op_types = {node.op_type for node in onnx.load(path).graph.node}
    assert ("RandomUniformLike" if name == "dropout"
            else "RandomNormalLike") in op_types

    data = []
    for name, value in (("input0", x), ("target0", target)):
        np.save(tmp_path / f"{name}.npy", value.numpy())
        data += ["--input", f"{name}={tmp_path / name}.npy"]
    steps = 30
    fp32, _ = api.train(path, steps, args=data)
    losses = np.array([r["loss"] for r in fp32])
    assert losses[-5:].mean() < 0.8 * losses[:5].mean(), losses
    again, _ = api.train(path, 3, args=data)
    assert [r["loss"] for r in again] == list(losses[:3])
    other_seed, _ = api.train(path, 3, seed=1, args=data)
    assert [r["loss"] for r in other_seed] != list(losses[:3])

    converted, report = api.convert(path, "fp16")
    low = [d for d in report["decisions"]
           if d["op_type"] == "Gemm" and d["precision"] == "f16"]
    assert low, "the pipeline converted no GEMM"
    fp16, _ = api.train(path, steps, amp_pipeline="precision=fp16", args=data)
    fp16_losses = np.array([r["loss"] for r in fp16])
    assert not np.array_equal(fp16_losses, losses)
    np.testing.assert_allclose(fp16_losses, losses, rtol=2e-2)

    # ONNX Runtime draws its own values: its loss is eager PyTorch's up to
    # the noise of the draws.
    converted_path = str(tmp_path / f"{name}.fp16.onnx")
    onnx.save(converted, converted_path)
    outputs = ort.run(converted_path, {"input0": x.numpy(),
                                       "target0": target.numpy()})
    eager = loss_fn(model(x), target).item()
    assert abs(float(outputs["loss"]) - eager) < 0.02 * eager
    assert abs(losses[0] - eager) < 0.02 * eager


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("name", ["dropout", "vae"])
def test_random_steps_compile_without_host_reads(name, tmp_path):
    """amp-compile's library of a step that draws: the stream keys (and a
    ratio) are computed in kernels from the key buffer, so the step reads
    no buffer on the host and callers may pass device memory
    (compile_library fails on the host-access warning)."""
    torch.manual_seed(0)
    model = DropoutMLP(64) if name == "dropout" else VAE(64, 16)
    loss_fn = nn.functional.mse_loss if name == "dropout" else vae_loss
    x = torch.randn(8, 64)
    path = str(tmp_path / f"{name}.onnx")
    export_training_step(model, (x,), (torch.randn(8, 64),), loss_fn, path,
                         lr=0.1)
    library = compile_library(path, "precision=fp16", tmp_path / "lib")
    check_library(*library)
    assert "amp.random_key" in library[1].read_text()
