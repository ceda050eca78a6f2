"""Random ops in amp-run. Dropout in training mode and ONNX Runtime's
BitmaskDropout, BiasDropout and their gradients: masks are reproducible
from --seed, new at every step, different per node, keep about 1 - ratio
of the elements, and the forward output and the gradient agree on them
(the ONNX Runtime fusion test graphs of the corpus). The generators
RandomUniform(Like), RandomNormal(Like) and Bernoulli draw the
distributions they name; the training steps our exporter writes for
models with dropout and a VAE's reparameterization train in FP32 and
FP16 with the same draws; torch's samplers (x.uniform_(), torch.randint,
torch.multinomial, RReLU, ...) export, and amp-run and ONNX Runtime draw
their distributions."""
import math
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import torch
import torch.nn as nn

from amp_opt import (api, decompositions, export_training_step, numerics,
                     ort)
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


def ks_distance(sample, cdf):
    """Kolmogorov-Smirnov distance of `sample` from the distribution of
    `cdf`."""
    sample = np.sort(sample.astype(np.float64).ravel())
    n = sample.size
    return np.max(np.abs(cdf(sample) - np.arange(1, n + 1) / n))


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


class NoisyMLP(nn.Module):
    """An MLP whose hidden activation draws: Gumbel-softmax relaxations
    (exponential_ noise) or RReLU's random slopes."""

    def __init__(self, activation, size=256):
        super().__init__()
        self.activation = activation
        self.first = nn.Linear(size, 4 * size)
        self.second = nn.Linear(4 * size, size)

    def forward(self, x):
        return self.second(self.activation(self.first(x)))


def vae_loss(output, target):
    reconstruction, kl = output
    return nn.functional.mse_loss(reconstruction, target) + 0.01 * kl


# name: (model of a size, loss, a generator its export holds)
RANDOM_STEPS = {
    "dropout": (DropoutMLP, nn.functional.mse_loss, "RandomUniform"),
    "vae": (VAE, vae_loss, "RandomNormalLike"),
    # categorical latents of 8 classes
    "gumbel": (lambda size: NoisyMLP(
        lambda h: nn.functional.gumbel_softmax(
            h.reshape(h.shape[0], -1, 8), tau=1.0).reshape(h.shape), size),
        nn.functional.mse_loss, "RandomUniform"),
    "rrelu": (lambda size: NoisyMLP(
        lambda h: nn.functional.rrelu(h, training=True), size),
        nn.functional.mse_loss, "RandomUniform"),
}


@pytest.mark.parametrize("name", RANDOM_STEPS)
def test_exported_random_steps_train(name, tmp_path, needs_ort):
    """Our exporter writes dropout's mask as RandomUniform < keep,
    randn_like as RandomNormalLike, gumbel_softmax's noise and RReLU's
    slopes from RandomUniform. amp-run trains each: the loss falls,
    another seed draws otherwise, and FP16 (GEMMs converted, by the report)
    draws the same values and stays within AMP's bounds of FP32. ONNX
    Runtime runs the converted file."""
    torch.manual_seed(0)
    size, batch = 512, 512
    make_model, loss_fn, generator = RANDOM_STEPS[name]
    model = make_model(size)
    x = torch.randn(batch, size)
    target = torch.tanh(x @ torch.randn(size, size) / 16)
    path = str(tmp_path / f"{name}.onnx")
    export_training_step(model, (x,), (target,), loss_fn, path,
                         optimizer="adam", lr=1e-3)
    op_types = {node.op_type for node in onnx.load(path).graph.node}
    assert generator in op_types

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
    # The MSE's gradient (2 (y - t) times 65536 before its division by the
    # count) stays FP32 up to the first GEMM: no step overflows. Were one
    # skipped, it would apply no update; each loss is compared with FP32's
    # after as many applied updates.
    assert not any(r["skipped"] for r in fp16), fp16
    np.testing.assert_allclose(
        fp16_losses, numerics.fp32_losses_after_applied(fp32, fp16),
        rtol=2e-2)

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
    loss_fn = RANDOM_STEPS[name][1]
    x = torch.randn(8, 64)
    path = str(tmp_path / f"{name}.onnx")
    export_training_step(model, (x,), (torch.randn(8, 64),), loss_fn, path,
                         lr=0.1)
    library = compile_library(path, "precision=fp16", tmp_path / "lib")
    check_library(*library)
    assert "amp.random_key" in library[1].read_text()


class Sampler(nn.Module):
    """x * w + draw(x): with x zeros, the output is the draw."""

    def __init__(self, draw, shape):
        super().__init__()
        self.draw = draw
        self.w = nn.Parameter(torch.ones(shape))
        self.register_buffer("probs", torch.tensor([[0.1, 0.6, 0.3]] * 4))

    def forward(self, x):
        return x * self.w + self.draw(self, x).to(x.dtype)


def _frequencies_match(values, expected, tolerance=0.02):
    """Asserts that `values` take only the keys of `expected`, each about
    as often as it says; True (for the checks of SAMPLERS)."""
    counts = {v: float(np.mean(values == v)) for v in expected}
    assert set(np.unique(values)) <= set(expected), np.unique(values)
    for value, p in expected.items():
        assert abs(counts[value] - p) < tolerance, (value, counts[value], p)
    return True


N = 20000
# The KS distance of N true draws passes 0.02 with probability about
# 2 exp(-2 N 0.02^2) = 2e-7 (ONNX Runtime's draws are unseeded); a wrong
# transform is off by tenths.
KS = 0.02
SAMPLERS = {
    # name: (draw(module, x), shape, check(draws))
    "uniform_": (lambda m, x: torch.empty_like(x).uniform_(-2, 3), [N],
                 lambda d: (d.min() >= -2 and d.max() < 3 and
                            ks_distance(d, lambda v: (v + 2) / 5) < KS)),
    "normal_": (lambda m, x: torch.empty(x.shape).normal_(1, 2), [N],
                lambda d: ks_distance(
                    d, lambda v: normal_cdf((v - 1) / 2)) < KS),
    "log_normal_": (lambda m, x: torch.empty_like(x).log_normal_(0, 0.5), [N],
                    lambda d: d.min() > 0 and ks_distance(
                        d, lambda v: normal_cdf(np.log(v) / 0.5)) < KS),
    "exponential_": (lambda m, x: torch.empty_like(x).exponential_(2), [N],
                     lambda d: d.min() > 0 and ks_distance(
                         d, lambda v: 1 - np.exp(-2 * v)) < KS),
    "cauchy_": (lambda m, x: torch.empty_like(x).cauchy_(1, 0.5), [N],
                lambda d: ks_distance(
                    d, lambda v: 0.5 + np.arctan((v - 1) / 0.5) / np.pi) < KS),
    "geometric_": (lambda m, x: torch.empty_like(x).geometric_(0.4), [N],
                   lambda d: _frequencies_match(
                       d, {k: 0.4 * 0.6 ** (k - 1) for k in range(1, 40)})),
    "randint": (lambda m, x: torch.randint(3, 10, x.shape), [N],
                lambda d: _frequencies_match(
                    d, {k: 1 / 7 for k in range(3, 10)})),
    # Over 2^30 integers: with 24-bit draws every value was a multiple of
    # 64 (draws of doubles carry 53 bits).
    "randint_wide_parity": (lambda m, x: torch.randint(0, 2**30, x.shape) % 2,
                            [N], lambda d: _frequencies_match(
                                d, {0: 0.5, 1: 0.5})),
    "randint_like": (lambda m, x: torch.randint_like(x, 4), [N],
                     lambda d: _frequencies_match(
                         d, {k: 1 / 4 for k in range(4)})),
    "random_": (lambda m, x: torch.empty_like(x).random_(2, 5), [N],
                lambda d: _frequencies_match(
                    d, {k: 1 / 3 for k in range(2, 5)})),
    "bernoulli_": (lambda m, x: torch.empty_like(x).bernoulli_(0.3), [N],
                   lambda d: _frequencies_match(d, {0: 0.7, 1: 0.3})),
    "randperm": (lambda m, x: torch.randperm(x.shape[0]), [N],
                 lambda d: (np.array_equal(np.sort(d), np.arange(N))
                            and abs(np.corrcoef(d, np.arange(N))[0, 1]) < 0.05
                            and np.mean(d == np.arange(N)) < 0.01)),
    "multinomial": (lambda m, x: torch.multinomial(m.probs, 5000,
                                                   replacement=True),
                    [4, 5000],
                    lambda d: _frequencies_match(
                        d, {0: 0.1, 1: 0.6, 2: 0.3})),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_exported_samplers_draw_their_distribution(name, tmp_path, needs_ort):
    """torch's samplers (in place on torch.empty, and torch.randint,
    randperm, multinomial) export as RandomUniform or RandomNormal of the
    tensor's shape, transformed, or as Multinomial; amp-run's draws follow
    the sampler's distribution, so do ONNX Runtime's on the same file, and
    the export is the same bytes twice (no torch.empty contents in it)."""
    draw, shape, check = SAMPLERS[name]
    x = torch.zeros(shape)
    paths = [str(tmp_path / f"{name}{i}.onnx") for i in (0, 1)]
    for path in paths:
        torch.manual_seed(0)
        export_training_step(Sampler(draw, shape), (x,), (x,),
                             nn.functional.mse_loss, path, lr=0.1,
                             output_logits=True)
    assert open(paths[0], "rb").read() == open(paths[1], "rb").read()
    op_types = {node.op_type for node in onnx.load(paths[0]).graph.node}
    assert op_types & {"RandomUniform", "RandomNormal", "Multinomial"}, \
        op_types
    got = run(tmp_path, paths[0], 1, 0, {"input0": x.numpy(),
                                         "target0": x.numpy()})
    assert check(got["logits"]), got["logits"]
    step2 = run(tmp_path, paths[0], 2, 0, {"input0": x.numpy(),
                                           "target0": x.numpy()})
    assert (step2["logits"] != got["logits"]).mean() > 0.3
    outputs = ort.run(paths[0], {"input0": x.numpy(), "target0": x.numpy()})
    assert check(outputs["logits"]), outputs["logits"]


def test_exponential_draws_are_never_zero(monkeypatch):
    """U = 0 (one in 2^24 of amp-run's draws, more of ONNX Runtime's in
    FP16) gives exponential_ a positive value, so gumbel_softmax's noise
    -log(e) stays finite and its loss is no NaN."""
    for u in (0.0, 1 - 2.0 ** -24):
        monkeypatch.setattr(decompositions, "_draw_uniform",
                            lambda input, generator, name: torch.full(
                                input.shape, u))
        draws = decompositions.exponential(torch.empty(4), 2.0)
        assert (draws > 0).all() and torch.isfinite(draws).all(), (u, draws)
        assert torch.isfinite(torch.log(draws)).all()


def test_rrelu_forward_and_backward_share_the_slopes(tmp_path):
    """RReLU in training: each negative input gets a slope uniform on
    [lower, upper) that the backward multiplies its gradient by. With y =
    rrelu(x w) and the loss sum(y), SGD's update of w is lr * x * slope,
    y = x w slope: the update and the output agree element by element."""
    lower, upper, lr = 0.1, 0.4, 0.5

    class RReLU(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(N))

        def forward(self, x):
            return nn.functional.rrelu(x * self.w, lower, upper,
                                       training=True)

    x = torch.linspace(-1, 1, N)
    path = str(tmp_path / "rrelu.onnx")
    export_training_step(RReLU(), (x,), (torch.zeros(N),),
                         lambda y, _: y.sum(), path, lr=lr,
                         output_logits=True)
    got = run(tmp_path, path, 1, 0, {"input0": x.numpy()})
    y, w = got["logits"], got["w.updated"]
    x = x.numpy()
    negative = x < 0
    slopes = y[negative] / x[negative]
    assert ks_distance(slopes, lambda v: (v - lower) / (upper - lower)) < KS
    np.testing.assert_array_equal(y[~negative], x[~negative])
    np.testing.assert_allclose(1 - w, lr * y, rtol=1e-5, atol=1e-7)
