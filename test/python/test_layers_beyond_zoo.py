"""Training steps of layers the zoo does not have, through the paths a user
runs: amp-run's step matches ONNX Runtime's, the CUDA backend's kernels (as
grid loops on the CPU) match amp-run's CPU path in FP32 and FP16, and
amp-compile builds the FP16 step into a library. The layers: Conv1d,
GroupNorm, SiLU, dilated grouped convolutions, max and adaptive pooling;
Embedding; LayerNorm, Softplus, Hardswish, clamp, where, cumsum (its
gradient a Slice with step -1), ELU, concat; causal attention (a boolean
mask initializer); BatchNorm, LeakyReLU, average pooling with padding (Pad),
ConvTranspose2d, amax; InstanceNorm, PReLU, pixel shuffle (DepthToSpace),
nearest upsampling (Resize), a softmax over channels; L2 normalization,
Mish, tanh GELU, variance, log-softmax with NLL; a Llama block (RMSNorm,
rotary embeddings, SwiGLU); Conv3d with flip and roll; an LSTM; top-2
routing over experts (TopK); cross-entropy with label smoothing; a
spectrogram classifier (torch.stft as STFT); nn.Unfold; a spatial
transformer (affine_grid, grid_sample); test_export's TrapModel; and,
from torchvision, small Swin and ViT models."""
import importlib.util
import json
import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from amp_opt import api, export_training_step
from test_amp_run import (assert_matches_reference,
                           run_beside_onnx_runtime)
from test_cuda_backend import (PRECISIONS, check_library, compare_grid_to_cpu,
                               compile_library, toolkit_found)
from test_export import SpatialTransformer, TrapModel
from test_signal_ops import Spectrogram


class Conv1dGroupNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 16, 5, padding=2)
        self.norm = nn.GroupNorm(4, 16)
        self.dilated = nn.Conv1d(16, 16, 3, stride=2, dilation=2, padding=2,
                                 groups=4)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        h = F.silu(self.norm(self.conv(x)))
        h = F.max_pool1d(self.dilated(h), 2)
        return self.fc(F.adaptive_avg_pool1d(h, 1).flatten(1))


class EmbeddingBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 12)
        self.fc1 = nn.Linear(12, 24)
        self.fc2 = nn.Linear(24, 3)

    def forward(self, tokens):
        h = self.embed(tokens).mean(1)
        gate = torch.sigmoid(h.sum(-1, keepdim=True))
        return self.fc2(torch.tanh(self.fc1(h)) * gate)


class Pointwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(20)
        self.fc = nn.Linear(20, 20)
        self.out = nn.Linear(40, 4)

    def forward(self, x):
        h = self.norm(x)
        a = F.softplus(self.fc(h))
        b = F.hardswish(h).clamp(-1, 2)
        c = torch.where(a > 0.5, a, b) + torch.cumsum(h, -1) * 0.1
        return self.out(torch.cat([c, F.elu(h)], -1))


class CausalAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.head = nn.Linear(16, 7)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / 8 ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        y = self.proj(y.transpose(1, 2).reshape(b, t, 16)) + x
        return self.head(y.mean(1))


class DownUp(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(8)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = F.leaky_relu(self.norm(self.down(x)), 0.1)
        h = self.up(F.avg_pool2d(h, 3, 1, 1)) + x[:, :1]
        return self.fc(h.amax((2, 3)))


class PixelShuffleUpsample(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.norm = nn.InstanceNorm2d(8, affine=True)
        self.act = nn.PReLU()
        self.mix = nn.Conv2d(2, 4, 1)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = F.pixel_shuffle(self.act(self.norm(self.conv(x))), 2)
        h = self.mix(F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.fc(F.softmax(h, 1).mean((2, 3)))


class Normalized(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 16)
        self.b = nn.Linear(16, 12)
        self.scale = nn.Parameter(torch.ones(16) * 0.5)

    def forward(self, x):
        h = F.normalize(self.a(x), dim=-1) * self.scale
        h = h * torch.tanh(F.softplus(h)) + F.gelu(h, approximate="tanh")
        h = (h - h.mean(-1, keepdim=True)) / (
            h.var(-1, keepdim=True) + 1e-5).sqrt()
        return F.log_softmax(self.b(h), -1)


class LlamaBlock(nn.Module):
    """RMSNorm, rotary embeddings, causal attention, SwiGLU, no biases."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(40, 16)
        self.qkv = nn.Linear(16, 48, bias=False)
        self.proj = nn.Linear(16, 16, bias=False)
        self.gate = nn.Linear(16, 32, bias=False)
        self.up = nn.Linear(16, 32, bias=False)
        self.down = nn.Linear(32, 16, bias=False)
        self.norm = nn.Parameter(torch.ones(16))
        self.head = nn.Linear(16, 40, bias=False)

    def rms(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * \
            self.norm

    @staticmethod
    def rotate(x):
        t = x.shape[-2]
        inverse = 1.0 / (10000 ** (torch.arange(0, 4, 2).float() / 4))
        angles = torch.outer(torch.arange(t).float(), inverse)
        cos = torch.cat([angles.cos()] * 2, -1)
        sin = torch.cat([angles.sin()] * 2, -1)
        return x * cos + torch.cat([-x[..., 2:], x[..., :2]], -1) * sin

    def forward(self, tokens):
        x = self.embed(tokens)
        b, t, _ = x.shape
        q, k, v = self.qkv(self.rms(x)).view(b, t, 3, 4, 4).permute(
            2, 0, 3, 1, 4)
        scores = self.rotate(q) @ self.rotate(k).transpose(-1, -2) * 0.5
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, 16))
        h = self.rms(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(x).flatten(0, 1)


class Volume(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = F.relu(self.conv(x))[:, :, ::2, ::2, ::2].amax((2, 3, 4))
        return self.fc(torch.flip(h, [1]) + torch.roll(h, 1, 1))


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, batch_first=True)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y.mean(1))


class MixtureOfExperts(nn.Module):
    """Top-2 routing over 4 experts: TopK picks each token's experts, a
    softmax of the chosen logits weighs them (TopK's backward scatters the
    gradient to the chosen logits), and GatherElements reads the chosen
    experts' outputs."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4)
        self.w1 = nn.Parameter(torch.randn(4, 8, 16) * 0.2)
        self.w2 = nn.Parameter(torch.randn(4, 16, 8) * 0.2)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        top, chosen = self.router(x).topk(2, dim=-1)
        hidden = torch.einsum("td,edh->teh", x, self.w1).relu()
        y = torch.einsum("teh,ehd->ted", hidden, self.w2)
        picked = torch.gather(y, 1, chosen[..., None].expand(-1, -1, 8))
        return self.out((picked * top.softmax(-1)[..., None]).sum(1))


class InvertedResidual(nn.Module):
    """MobileNetV2's block: expand, depthwise 3x3, project, with BatchNorm
    and ReLU6 (its backward ors two masks)."""

    def __init__(self, channels=4, expansion=3):
        super().__init__()
        hidden = channels * expansion
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden),
            nn.ReLU6(), nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden,
                                  bias=False),
            nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False),
            nn.BatchNorm2d(channels))
        # BatchNorm scales that push values past ReLU6's 6: below it, the
        # next BatchNorm normalizes the first one's scale away, and its
        # gradient is rounding noise.
        for norm in (self.block[1], self.block[4]):
            nn.init.constant_(norm.weight, 4.0)
        self.head = nn.Linear(channels, 3)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(x + self.block(x), 1)
                         .flatten(1))


class ConvNeXtBlock(nn.Module):
    """Depthwise 7x7, then LayerNorm, GELU and a layer scale over channels
    last (permuted): the mean's backward expands to a shape that ONNX
    shape inference cannot see, so values stay partly dynamic until the
    lowering."""

    def __init__(self, channels=8):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 7, padding=3,
                                   groups=channels)
        self.norm = nn.LayerNorm(channels)
        self.up = nn.Linear(channels, 4 * channels)
        self.down = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(0.1 * torch.ones(channels))
        self.head = nn.Linear(channels, 3)

    def forward(self, x):
        y = self.depthwise(x).permute(0, 2, 3, 1)
        y = self.down(F.gelu(self.up(self.norm(y)))) * self.gamma
        return self.head((x + y.permute(0, 3, 1, 2)).mean((2, 3)))


class DenseBlock(nn.Module):
    """DenseNet: each layer reads the concatenation of all before it; a
    transition's average pooling."""

    def __init__(self, channels=4, growth=3):
        super().__init__()
        self.first = nn.Conv2d(channels, growth, 3, padding=1)
        self.second = nn.Conv2d(channels + growth, growth, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels + 2 * growth)
        self.head = nn.Linear(channels + 2 * growth, 3)

    def forward(self, x):
        a = torch.cat([x, F.relu(self.first(x))], 1)
        b = torch.cat([a, F.relu(self.second(a))], 1)
        return self.head(F.avg_pool2d(F.relu(self.norm(b)), 2).mean((2, 3)))


class Unfolded(nn.Module):
    """nn.Unfold (im2col), whose export computes its gather indices with
    Shape, Range and Unsqueeze arithmetic that ONNX cannot type."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.unfold = nn.Unfold(3, padding=1, stride=2)
        self.fc = nn.Linear(36, 3)

    def forward(self, x):
        return self.fc(self.unfold(self.conv(x)).mean(-1))


def swin():
    """torchvision's Swin Transformer, small: shifted windows (roll, a mask
    that `x[slice] = number` fills), relative position bias, patch
    merging. Stochastic depth off: its draws are not ONNX Runtime's."""
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2],
                           num_heads=[2, 2], window_size=[4, 4],
                           stochastic_depth_prob=0.0, num_classes=3)


def vision_transformer():
    """torchvision's ViT, small: a class token, nn.MultiheadAttention,
    exact GELU. Its head starts at zero, which leaves every other
    gradient zero in step 1: drawn instead, so that every parameter
    moves."""
    from torchvision.models.vision_transformer import VisionTransformer
    model = VisionTransformer(image_size=16, patch_size=4, num_layers=2,
                              num_heads=2, hidden_dim=16, mlp_dim=32,
                              num_classes=3)
    nn.init.normal_(model.heads.head.weight, std=0.1)
    return model


def smoothed_cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets, label_smoothing=0.1)


def token_loss(logits, targets):
    return F.cross_entropy(logits, targets.flatten())


def classes(n, *shape):
    return lambda: (torch.randint(0, n, shape),)


# name: (model, inputs, targets, loss, the op types its ONNX step must have)
LAYERS = {
    "conv1d_groupnorm": (Conv1dGroupNorm, lambda: (torch.randn(6, 4, 32),),
                         classes(5, 6), F.cross_entropy, {"Conv", "MaxPool"}),
    "embedding": (EmbeddingBag, classes(50, 8, 7), classes(3, 8),
                  F.cross_entropy, {"Gather"}),
    "pointwise": (Pointwise, lambda: (torch.randn(10, 20),),
                  lambda: (torch.randn(10, 4),), F.mse_loss,
                  {"CumSum", "Where", "Slice"}),
    "causal_attention": (CausalAttention, lambda: (torch.randn(4, 6, 16),),
                         classes(7, 4), F.cross_entropy, {"Where", "Softmax"}),
    "down_up": (DownUp, lambda: (torch.randn(3, 3, 8, 8),), classes(2, 3),
                F.cross_entropy, {"Pad", "ConvTranspose", "ReduceMax"}),
    "pixel_shuffle_upsample": (
        PixelShuffleUpsample, lambda: (torch.randn(2, 3, 6, 6),),
        classes(2, 2), F.cross_entropy, {"DepthToSpace", "Resize", "PRelu"}),
    "normalized": (Normalized, lambda: (torch.randn(7, 12),), classes(12, 7),
                   F.nll_loss, {"ReduceL2", "Softplus", "Tanh"}),
    "llama_block": (LlamaBlock, classes(40, 2, 6), classes(40, 2, 6),
                    token_loss, {"Gather", "Softmax", "Sigmoid"}),
    "volume": (Volume, lambda: (torch.randn(2, 2, 5, 5, 5),), classes(3, 2),
               F.cross_entropy, {"Conv", "ReduceMax"}),
    "lstm": (Recurrent, lambda: (torch.randn(3, 4, 5),), classes(2, 3),
             F.cross_entropy, {"Tanh", "Sigmoid"}),
    "smoothed_labels": (EmbeddingBag, classes(50, 8, 7), classes(3, 8),
                        smoothed_cross_entropy, {"Gather", "LogSoftmax"}),
    "mixture_of_experts": (MixtureOfExperts, lambda: (torch.randn(6, 8),),
                           classes(3, 6), F.cross_entropy,
                           {"TopK", "GatherElements", "ScatterElements"}),
    "inverted_residual": (InvertedResidual, lambda: (torch.randn(3, 4, 6, 6),),
                          classes(3, 3), F.cross_entropy, {"Clip", "Or"}),
    "convnext_block": (ConvNeXtBlock, lambda: (torch.randn(2, 8, 6, 6),),
                       classes(3, 2), F.cross_entropy,
                       {"LayerNormalization", "Expand", "Erf"}),
    "dense_block": (DenseBlock, lambda: (torch.randn(2, 4, 6, 6),),
                    classes(3, 2), F.cross_entropy,
                    {"Concat", "AveragePool", "ConvTranspose"}),
    "spectrogram": (Spectrogram, lambda: (torch.randn(4, 256),),
                    classes(4, 4), F.cross_entropy, {"STFT", "Conv"}),
    "spatial_transformer": (
        lambda: nn.Sequential(SpatialTransformer(), nn.Flatten(),
                              nn.Linear(4 * 5 * 7, 3)),
        lambda: (torch.randn(2, 3, 6, 6),), classes(3, 2), F.cross_entropy,
        {"GridSample", "ScatterElements"}),
    "unfold": (Unfolded, lambda: (torch.randn(2, 3, 8, 8),), classes(3, 2),
               F.cross_entropy, {"Range", "Gather"}),
    "traps": (TrapModel, lambda: (torch.randn(2, 2, 9, 9),
                                  torch.randn(2, 5, 16)),
              lambda: (torch.randn(2, 5, 16),), F.mse_loss, {"MaxPool"}),
}
# Models nobody here wrote, where Debian's python3-torchvision is installed
# (test_torchvision_is_installed says when it is not).
if importlib.util.find_spec("torchvision") is not None:
    LAYERS.update({
        "swin": (swin, lambda: (torch.randn(2, 3, 16, 16),), classes(3, 2),
                 F.cross_entropy, {"Softmax", "LayerNormalization", "Erf"}),
        "vision_transformer": (
            vision_transformer, lambda: (torch.randn(2, 3, 16, 16),),
            classes(3, 2), F.cross_entropy, {"Softmax", "Concat", "Erf"}),
    })


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    """Each layer's SGD step, exported once: {name: path}. (Adam's first
    step is lr * sign(g), which turns a gradient that is zero but for
    rounding, such as the attention keys' bias, into a full step of either
    sign.)"""
    folder = tmp_path_factory.mktemp("layers")
    paths = {}
    for name, (model, inputs, targets, loss, ops) in LAYERS.items():
        torch.manual_seed(0)
        path = str(folder / f"{name}.onnx")
        export_training_step(model(), inputs(), targets(), loss, path,
                             optimizer="sgd", lr=0.05)
        found = {node.op_type for node in onnx.load(path).graph.node}
        assert ops <= found, (name, ops - found)
        paths[name] = path
    return paths


def test_torchvision_is_installed():
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("python3-torchvision is not installed: the swin and "
                    "vision_transformer layers are left out")


def test_negative_slice_steps_are_exported():
    """The cumsum's gradient reads backwards: a Slice with step -1, which
    the lowering must take (this test fails if the exporter stops writing
    one, so that the case stays covered)."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "pointwise.onnx")
        model, inputs, targets, loss, _ = LAYERS["pointwise"]
        export_training_step(model(), inputs(), targets(), loss, path,
                             optimizer="sgd", lr=0.1)
        graph = onnx.load(path).graph
        constants = {out: onnx.numpy_helper.to_array(a.t)
                     for node in graph.node if node.op_type == "Constant"
                     for out in node.output for a in node.attribute}
        steps = [constants.get(node.input[4]) for node in graph.node
                 if node.op_type == "Slice" and len(node.input) > 4]
        assert any(s is not None and (s < 0).any() for s in steps), steps


@pytest.mark.parametrize("name", LAYERS)
def test_step_matches_onnx_runtime(name, steps, tmp_path, needs_ort):
    """One amp-run step equals ONNX Runtime's within 1e-5 of each output's
    largest value, and it trains: every parameter moves."""
    path = steps[name]
    feeds, outputs, reference = run_beside_onnx_runtime(path, tmp_path)
    assert reference
    for output, expected in reference.items():
        actual = api.load_saved(outputs, output)
        assert actual.shape == expected.shape, output
        assert_matches_reference(actual, expected, 1e-5, output)
    meta = {p.key: p.value for p in onnx.load(path).metadata_props}
    parameters = json.loads(meta["amp_opt.parameters"])
    assert parameters
    for parameter in parameters:
        before = feeds[parameter["name"]]
        after = api.load_saved(outputs, parameter["updated"])
        assert not np.array_equal(before, after), parameter["name"]


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", LAYERS)
def test_kernels_run_as_grid_loops(name, precision, steps, tmp_path):
    """The CUDA backend's kernels and library records, run on the CPU, give
    amp-run's CPU results (test_cuda_backend's bounds; FP16 norm-wise), with
    every GEMM a cuBLASLt or cuDNN record (FP16 convolutions with a bias
    too: cuDNN rounds before the bias)."""
    pipeline, ulp = PRECISIONS[precision]
    compare_grid_to_cpu(steps[name], pipeline, ulp, tmp_path, reverse=True,
                        norm_wise=precision != "fp32")


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("name", LAYERS)
def test_fp16_step_compiles_to_a_library(name, steps, tmp_path):
    pipeline, _ = PRECISIONS["fp16"]
    check_library(*compile_library(steps[name], pipeline, tmp_path / "lib"))
