#!/usr/bin/python3
"""Which common PyTorch layers and losses export as training steps.

Exports a one-layer training step (SGD) of each case with
amp_opt.export.export_training_step and, when ONNX Runtime is installed,
checks it against eager PyTorch (amp_opt.verify.compare); runs it in
amp-run, whose losses must match eager PyTorch's, and through the FP16
pipeline. Prints a table
and appends it, with the machine and date, to
bench/results/export_coverage.md.

    PYTHONPATH=python /usr/bin/python3 bench/export_coverage.py
"""
import argparse
import datetime
import os
import platform
import re
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from amp_opt import (ExportError, api, export_training_step, ort,  # noqa
                     verify)


class Apply(nn.Module):
    """A layer, optionally followed by a function of its output."""

    def __init__(self, layer, then=None):
        super().__init__()
        self.layer = layer
        self.then = then

    def forward(self, *args):
        y = self.layer(*args)
        if isinstance(y, tuple):
            y = y[0]
        return self.then(y) if self.then else y


class Fn(nn.Module):
    """A function of the input times a parameter."""

    def __init__(self, fn, shape):
        super().__init__()
        self.w = nn.Parameter(torch.rand(shape) + 0.5)
        self.fn = fn

    def forward(self, x):
        return self.fn(x * self.w)


def separated_indices(t):
    """Index tensors a slice separates, written in place and read."""
    z = t * 1.0
    z[torch.tensor([1, 0]), :, torch.tensor([2, 7])] = t[0, :2, :5] * 2
    return z[torch.tensor([1, 0, 1]), :, torch.tensor([2, 7, 2])]


class Spectrum(nn.Module):
    """A learned projection of a signal's log-power spectrogram."""

    def __init__(self, n_fft, features):
        super().__init__()
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft))
        self.fc = nn.Linear(n_fft // 2 + 1, features)

    def forward(self, x):
        spectrum = torch.stft(x, self.n_fft, self.n_fft // 4,
                              window=self.window, return_complex=False)
        power = spectrum.pow(2).sum(-1).transpose(1, 2)
        return self.fc(torch.log(power + 1e-6))


class Resampler(nn.Module):
    """Features sampled where a learned affine transform points
    (F.affine_grid, F.grid_sample)."""

    def __init__(self, **options):
        super().__init__()
        # No sample on a pixel boundary, where bilinear sampling's gradient
        # jumps and FP32 rounding picks a side (0.9, 0.2, 0.1 on an 8x8
        # grid put some there: eager's FP32 and FP64 gradients differ 1%).
        self.theta = nn.Parameter(torch.tensor([[0.93, 0.17, 0.07],
                                                [-0.11, 1.07, 0.03]]))
        self.conv = nn.Conv2d(4, 4, 1)
        self.options = options

    def forward(self, x):
        grid = F.affine_grid(self.theta.expand(x.shape[0], 2, 3), x.shape,
                             align_corners=False)
        return F.grid_sample(self.conv(x), grid, align_corners=False,
                             **self.options)


def mse_to(shape):
    return (torch.randn(shape),), F.mse_loss


# Cases whose step draws random numbers: ONNX Runtime's differ from eager.
RANDOM = {"Dropout"}


def cases():
    x2d = torch.randn(2, 4, 8, 8)
    seq = torch.randn(2, 5, 8)
    tokens = torch.tensor([[1, 2, 2, 0, 5], [3, 3, 3, 1, 0]])
    labels = torch.tensor([1, 3])
    yield "Conv1d", Apply(nn.Conv1d(4, 6, 3, padding=1)), \
        (torch.randn(2, 4, 9),), *mse_to((2, 6, 9))
    yield "Conv2d stride 2", Apply(nn.Conv2d(4, 6, 3, stride=2)), (x2d,), \
        *mse_to((2, 6, 3, 3))
    yield "Conv3d", Apply(nn.Conv3d(2, 3, 3, padding=1)), \
        (torch.randn(1, 2, 4, 4, 4),), *mse_to((1, 3, 4, 4, 4))
    yield "Conv2d depthwise", Apply(nn.Conv2d(4, 4, 3, groups=4)), (x2d,), \
        *mse_to((2, 4, 6, 6))
    yield "ConvTranspose2d", Apply(nn.ConvTranspose2d(4, 2, 2, stride=2)), \
        (x2d,), *mse_to((2, 2, 16, 16))
    yield "BatchNorm1d", Apply(nn.BatchNorm1d(8)), (torch.randn(6, 8),), \
        *mse_to((6, 8))
    yield "BatchNorm2d", Apply(nn.BatchNorm2d(4)), (x2d,), \
        *mse_to((2, 4, 8, 8))
    yield "GroupNorm", Apply(nn.GroupNorm(2, 4)), (x2d,), \
        *mse_to((2, 4, 8, 8))
    yield "InstanceNorm2d affine", Apply(nn.InstanceNorm2d(4, affine=True)), \
        (x2d,), *mse_to((2, 4, 8, 8))
    yield "LayerNorm", Apply(nn.LayerNorm(8)), (seq,), *mse_to((2, 5, 8))
    yield "Embedding padding_idx", Apply(nn.Embedding(8, 4, padding_idx=0)), \
        (tokens,), *mse_to((2, 5, 4))
    yield "EmbeddingBag", Apply(nn.EmbeddingBag(8, 4, mode="mean")), \
        (tokens,), *mse_to((2, 4))
    yield "EmbeddingBag sum, offsets", Apply(nn.EmbeddingBag(8, 4,
                                                            mode="sum")), \
        (tokens.flatten(), torch.tensor([0, 3, 3, 7])), *mse_to((4, 4))
    yield "LSTM", Apply(nn.LSTM(8, 6, batch_first=True)), (seq,), \
        *mse_to((2, 5, 6))
    yield "GRU", Apply(nn.GRU(8, 6, batch_first=True)), (seq,), \
        *mse_to((2, 5, 6))
    yield "MultiheadAttention", Apply(nn.MultiheadAttention(
        8, 2, batch_first=True), None), (seq, seq, seq), *mse_to((2, 5, 8))
    for name, act in [("GELU", nn.GELU()), ("GELU tanh",
                                            nn.GELU(approximate="tanh")),
                      ("SiLU", nn.SiLU()), ("Mish", nn.Mish()),
                      ("Hardswish", nn.Hardswish()),
                      ("LeakyReLU", nn.LeakyReLU(0.1)), ("ELU", nn.ELU()),
                      ("Softplus", nn.Softplus()), ("Tanh", nn.Tanh()),
                      ("Sigmoid", nn.Sigmoid()), ("PReLU", nn.PReLU())]:
        yield name, Apply(nn.Linear(8, 8), act), (seq,), *mse_to((2, 5, 8))
    yield "MaxPool1d", Apply(nn.Conv1d(4, 4, 1), nn.MaxPool1d(2)), \
        (torch.randn(2, 4, 8),), *mse_to((2, 4, 4))
    yield "MaxPool2d overlapping", Apply(nn.Conv2d(4, 4, 1),
                                         nn.MaxPool2d(3, stride=2)), \
        (x2d,), *mse_to((2, 4, 3, 3))
    yield "AvgPool2d", Apply(nn.Conv2d(4, 4, 1), nn.AvgPool2d(2)), (x2d,), \
        *mse_to((2, 4, 4, 4))
    yield "AdaptiveAvgPool2d 3x3", Apply(nn.Conv2d(4, 4, 1),
                                         nn.AdaptiveAvgPool2d(3)), (x2d,), \
        *mse_to((2, 4, 3, 3))
    yield "AdaptiveMaxPool2d", Apply(nn.Conv2d(4, 4, 1),
                                     nn.AdaptiveMaxPool2d(2)), (x2d,), \
        *mse_to((2, 4, 2, 2))
    yield "Upsample nearest", Apply(nn.Conv2d(4, 4, 1),
                                    nn.Upsample(scale_factor=2)), (x2d,), \
        *mse_to((2, 4, 16, 16))
    yield "Upsample bilinear", Apply(nn.Conv2d(4, 4, 1), nn.Upsample(
        scale_factor=2, mode="bilinear")), (x2d,), *mse_to((2, 4, 16, 16))
    yield "Dropout", Apply(nn.Linear(8, 8), nn.Dropout(0.5)), (seq,), \
        *mse_to((2, 5, 8))
    yield "PixelShuffle", Apply(nn.Conv2d(4, 4, 1), nn.PixelShuffle(2)), \
        (x2d,), *mse_to((2, 1, 16, 16))
    head = nn.Linear(8, 4)
    x = torch.randn(2, 8)
    yield "CrossEntropy label_smoothing", Apply(head), (x,), (labels,), \
        nn.CrossEntropyLoss(label_smoothing=0.1)
    yield "NLLLoss", Apply(nn.Linear(8, 4), nn.LogSoftmax(-1)), (x,), \
        (labels,), nn.NLLLoss()
    yield "BCEWithLogits", Apply(nn.Linear(8, 4)), (x,), \
        (torch.rand(2, 4).round(),), nn.BCEWithLogitsLoss()
    yield "L1Loss", Apply(nn.Linear(8, 4)), (x,), (torch.randn(2, 4),), \
        nn.L1Loss()
    yield "SmoothL1Loss", Apply(nn.Linear(8, 4)), (x,), (torch.randn(2, 4),), \
        nn.SmoothL1Loss()
    yield "KLDivLoss", Apply(nn.Linear(8, 4), nn.LogSoftmax(-1)), (x,), \
        (torch.softmax(torch.randn(2, 4), -1),), \
        nn.KLDivLoss(reduction="batchmean")
    yield "cumsum", Fn(lambda t: t.cumsum(1), (5, 8)), (seq,), \
        *mse_to((2, 5, 8))
    yield "topk", Fn(lambda t: t.topk(3, dim=-1).values, (5, 8)), (seq,), \
        *mse_to((2, 5, 3))
    yield "sort", Fn(lambda t: t.sort(-1).values, (5, 8)), (seq,), \
        *mse_to((2, 5, 8))
    yield "gather", Fn(lambda t: t.gather(2, torch.tensor(
        [[[0, 1]] * 5] * 2)), (5, 8)), (seq,), *mse_to((2, 5, 2))
    yield "norm", Fn(lambda t: t.norm(dim=-1), (5, 8)), (seq,), \
        *mse_to((2, 5))
    yield "cosine_similarity", Fn(lambda t: F.cosine_similarity(
        t, t.flip(1), dim=-1), (5, 8)), (seq,), *mse_to((2, 5))
    yield "where / clamp", Fn(lambda t: torch.where(t > 0, t, 0.1 * t)
                              .clamp(-1, 1), (5, 8)), (seq,), \
        *mse_to((2, 5, 8))
    yield "einsum", Fn(lambda t: torch.einsum("bij,bkj->bik", t, t), (5, 8)), \
        (seq,), *mse_to((2, 5, 5))
    yield ("Conv2d reflect padding",
           Apply(nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")),
           (x2d,), *mse_to((2, 4, 8, 8)))
    yield ("Conv2d replicate padding",
           Apply(nn.Conv2d(4, 4, 3, padding=1, padding_mode="replicate")),
           (x2d,), *mse_to((2, 4, 8, 8)))
    yield ("Conv2d circular padding",
           Apply(nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular")),
           (x2d,), *mse_to((2, 4, 8, 8)))
    yield ("Upsample bicubic",
           Apply(nn.Conv2d(4, 4, 1),
                 nn.Upsample(scale_factor=2, mode="bicubic")),
           (x2d,), *mse_to((2, 4, 16, 16)))
    yield ("PixelUnshuffle", Apply(nn.Conv2d(4, 4, 1), nn.PixelUnshuffle(2)),
           (x2d,), *mse_to((2, 16, 4, 4)))
    yield ("Unfold", Apply(nn.Conv2d(4, 4, 1), nn.Unfold(3, padding=1)),
           (x2d,), *mse_to((2, 36, 64)))
    yield ("TransformerDecoderLayer",
           Apply(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                            batch_first=True)),
           (seq, seq), *mse_to((2, 5, 8)))
    yield "GRUCell", Apply(nn.GRUCell(8, 8)), (x,), *mse_to((2, 8))
    yield ("LSTM bidirectional 2 layers",
           Apply(nn.LSTM(8, 6, 2, batch_first=True, bidirectional=True)),
           (seq,), *mse_to((2, 5, 12)))
    yield ("Conv1d dilated", Apply(nn.Conv1d(4, 4, 3, dilation=2, padding=2)),
           (torch.randn(2, 4, 9),), *mse_to((2, 4, 9)))
    yield ("MaxPool2d ceil_mode",
           Apply(nn.Conv2d(4, 4, 1), nn.MaxPool2d(3, 2, ceil_mode=True)),
           (x2d,), *mse_to((2, 4, 4, 4)))
    yield ("AvgPool2d ceil_mode",
           Apply(nn.Conv2d(4, 4, 1), nn.AvgPool2d(3, 2, ceil_mode=True)),
           (x2d,), *mse_to((2, 4, 4, 4)))
    yield ("LPPool2d", Apply(nn.Conv2d(4, 4, 1), nn.LPPool2d(2, 2)), (x2d,),
           *mse_to((2, 4, 4, 4)))
    yield ("Softmin", Apply(nn.Linear(8, 4), nn.Softmin(-1)), (x,),
           *mse_to((2, 4)))
    yield ("LogSigmoid", Apply(nn.Linear(8, 8), nn.LogSigmoid()), (x,),
           *mse_to((2, 8)))
    yield ("Hardtanh", Apply(nn.Linear(8, 8), nn.Hardtanh(-0.5, 0.5)), (x,),
           *mse_to((2, 8)))
    yield "SELU", Apply(nn.Linear(8, 8), nn.SELU()), (x,), *mse_to((2, 8))
    yield "CELU", Apply(nn.Linear(8, 8), nn.CELU()), (x,), *mse_to((2, 8))
    yield ("Softshrink", Apply(nn.Linear(8, 8), nn.Softshrink()), (x,),
           *mse_to((2, 8)))
    yield ("Tanhshrink", Apply(nn.Linear(8, 8), nn.Tanhshrink()), (x,),
           *mse_to((2, 8)))
    yield "GLU", Apply(nn.Linear(8, 8), nn.GLU()), (x,), *mse_to((2, 4))
    yield ("HuberLoss", Apply(nn.Linear(8, 4)), (x,), (torch.randn(2, 4),),
           nn.HuberLoss(delta=0.5))
    yield ("MultiLabelSoftMarginLoss", Apply(nn.Linear(8, 4)), (x,),
           (torch.rand(2, 4).round(),), nn.MultiLabelSoftMarginLoss())
    yield ("MultiMarginLoss", Apply(nn.Linear(8, 4)), (x,), (labels,),
           nn.MultiMarginLoss())
    yield ("CosineEmbeddingLoss", Apply(nn.Linear(8, 4)), (x,),
           (torch.randn(2, 4), torch.tensor([1., -1.])), lambda o, t,
           y: nn.CosineEmbeddingLoss()(o, t, y))
    yield ("TripletMarginLoss", Apply(nn.Linear(8, 4)), (x,),
           (torch.randn(2, 4), torch.randn(2, 4)), lambda o, p,
           n: nn.TripletMarginLoss()(o, p, n))
    yield ("GaussianNLLLoss", Apply(nn.Linear(8, 4)), (x,),
           (torch.randn(2, 4), torch.rand(2, 4) + 0.1), lambda o, t,
           v: nn.GaussianNLLLoss()(o, t, v))
    yield ("PoissonNLLLoss", Apply(nn.Linear(8, 4)), (x,), (torch.rand(2, 4),),
           nn.PoissonNLLLoss())
    yield ("BCELoss", Apply(nn.Linear(8, 4), nn.Sigmoid()), (x,),
           (torch.rand(2, 4),), nn.BCELoss())
    yield ("CrossEntropy probabilities", Apply(nn.Linear(8, 4)), (x,),
           (torch.softmax(torch.randn(2, 4), -1),), nn.CrossEntropyLoss())
    yield ("CrossEntropy ignore_index weights", Apply(nn.Linear(8, 4)), (x,),
           (torch.tensor([1, -100]),),
           nn.CrossEntropyLoss(weight=torch.tensor([1., 2., 3., 4.])))
    yield ("InstanceNorm1d", Apply(nn.Conv1d(4, 4, 1), nn.InstanceNorm1d(4)),
           (torch.randn(2, 4, 9),), *mse_to((2, 4, 9)))
    yield ("LocalResponseNorm",
           Apply(nn.Conv2d(4, 4, 1), nn.LocalResponseNorm(3)), (x2d,),
           *mse_to((2, 4, 8, 8)))
    yield ("Embedding max_norm-free + scale_grad",
           Apply(nn.Embedding(10, 4, scale_grad_by_freq=True)),
           (torch.tensor([[1, 2, 2, 3]]),), *mse_to((1, 4, 4)))
    yield ("masked_fill", Fn(lambda t: t.masked_fill(t > 1.0, 0.0), (5, 8)),
           (seq,), *mse_to((2, 5, 8)))
    yield ("logsumexp", Fn(lambda t: t.logsumexp(-1), (5, 8)), (seq,),
           *mse_to((2, 5)))
    yield ("cumprod", Fn(lambda t: t.cumprod(1), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))
    yield ("roll", Fn(lambda t: t.roll(2, 1), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))
    yield "flip", Fn(lambda t: t.flip(2), (5, 8)), (seq,), *mse_to((2, 5, 8))
    yield "triu", Fn(lambda t: t.triu(), (5, 8)), (seq,), *mse_to((2, 5, 8))
    yield ("var / std", Fn(lambda t: t.var(-1) + t.std(1).sum(), (5, 8)),
           (seq,), *mse_to((2, 5)))
    yield ("amax / amin", Fn(lambda t: t.amax(-1) - t.amin(-1), (5, 8)),
           (seq,), *mse_to((2, 5)))
    yield ("atan2 / hypot",
           Fn(lambda t: torch.atan2(t, t + 2) + torch.hypot(t, t), (5, 8)),
           (seq,), *mse_to((2, 5, 8)))
    yield ("bmm / baddbmm",
           Fn(lambda t: torch.baddbmm(t[:, :, :5], t, t.transpose(1, 2)),
              (5, 8)),
           (seq,), *mse_to((2, 5, 5)))
    yield ("scatter_add",
           Fn(lambda t: torch.zeros(2, 3, 8).scatter_add(
               1, torch.tensor([[[0] * 8, [1] * 8, [2] * 8, [0] * 8,
                                 [1] * 8]] * 2), t), (5, 8)),
           (seq,), *mse_to((2, 3, 8)))
    yield ("index_select / gather",
           Fn(lambda t: t.index_select(1, torch.tensor([4, 0, 2])), (5, 8)),
           (seq,), *mse_to((2, 3, 8)))
    yield ("clamp_min / clamp_max",
           Fn(lambda t: t.clamp_min(-0.5).clamp_max(0.5), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))
    yield ("erfinv", Fn(lambda t: torch.erfinv(torch.tanh(t) * 0.9), (5, 8)),
           (seq,), *mse_to((2, 5, 8)))
    yield ("lerp", Fn(lambda t: torch.lerp(t, t * 2, 0.3), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))
    yield ("stft (log power)", Spectrum(32, 6), (torch.randn(2, 128),),
           *mse_to((2, 17, 6)))
    yield ("grid_sample / affine_grid", Resampler(), (x2d,),
           *mse_to((2, 4, 8, 8)))
    yield ("grid_sample reflection", Resampler(padding_mode="reflection"),
           (x2d,), *mse_to((2, 4, 8, 8)))
    yield ("AvgPool2d divisor_override",
           Apply(nn.Conv2d(4, 4, 1), nn.AvgPool2d(3, 2, 1, ceil_mode=True,
                                                  divisor_override=4)),
           (x2d,), *mse_to((2, 4, 5, 5)))
    yield ("EmbeddingBag max, offsets",
           Apply(nn.EmbeddingBag(8, 4, mode="max")),
           (tokens.flatten(), torch.tensor([0, 3, 3, 7])), *mse_to((4, 4)))
    yield ("x[i, :, j] written and read", Fn(separated_indices, (5, 8)),
           (seq,), *mse_to((3, 5)))
    yield ("Bilinear", Apply(nn.Bilinear(8, 8, 3)), (x, x * 2),
           *mse_to((2, 3)))
    yield ("Upsample linear", Apply(nn.Conv1d(2, 2, 1),
                                    nn.Upsample(size=7, mode="linear")),
           (torch.randn(2, 2, 4),), *mse_to((2, 2, 7)))
    yield ("Upsample trilinear",
           Apply(nn.Conv3d(2, 2, 1), nn.Upsample(scale_factor=2,
                                                  mode="trilinear")),
           (torch.randn(1, 2, 2, 3, 3),), *mse_to((1, 2, 4, 6, 6)))
    yield ("MaxPool3d", Apply(nn.Conv3d(2, 2, 1), nn.MaxPool3d(2)),
           (torch.randn(1, 2, 4, 4, 4),), *mse_to((1, 2, 2, 2, 2)))
    yield ("MaxUnpool2d", Fn(lambda t: F.max_unpool2d(
        *F.max_pool2d(t, 2, return_indices=True), 2), (8, 8)), (x2d,),
        *mse_to((2, 4, 8, 8)))
    yield ("Threshold", Apply(nn.Linear(8, 8), nn.Threshold(0.1, -1.0)),
           (x,), *mse_to((2, 8)))
    yield ("index_add repeated / repeat_interleave",
           Fn(lambda t: t.index_add(1, torch.tensor([0, 2, 0]), t[:, :3])
              .repeat_interleave(2, dim=1), (5, 8)),
           (seq,), *mse_to((2, 10, 8)))
    yield ("kthvalue / median", Fn(lambda t: t.kthvalue(2, -1)[0]
                                   + t.median(-1)[0], (5, 8)),
           (seq,), *mse_to((2, 5)))
    yield ("cummax / logcumsumexp",
           Fn(lambda t: t.cummax(1)[0] + t.logcumsumexp(1), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))
    yield ("cdist", Fn(lambda t: torch.cdist(t, t.flip(1)), (5, 8)), (seq,),
           *mse_to((2, 5, 5)))
    yield ("diag / diagonal", Fn(lambda t: torch.diag(t[0, :, 0], 1)[:5, :5]
                                 + torch.diagonal(t[:, :, :5], 0, 1, 2)
                                 .sum(), (5, 8)),
           (seq,), *mse_to((5, 5)))
    yield ("Fold (of Unfold)",
           Apply(nn.Conv2d(4, 4, 1), nn.Sequential(
               nn.Unfold(3, padding=1), nn.Fold((8, 8), 3, padding=1))),
           (x2d,), *mse_to((2, 4, 8, 8)))
    yield ("one_hot targets (MSE)", Apply(nn.Linear(8, 4)), (x,), (labels,),
           lambda output, target: F.mse_loss(output,
                                             F.one_hot(target, 4).float()))
    frozen = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
    frozen[0].requires_grad_(False)
    yield ("frozen first layer", frozen, (x,), *mse_to((2, 4)))
    yield ("cosine_embedding_loss, 1024 pairs", Apply(nn.Linear(8, 4)),
           (torch.randn(1024, 8),), (torch.randn(1024, 4),),
           lambda output, target: F.cosine_embedding_loss(
               output, target, torch.ones(1024)))
    yield ("ReflectionPad2d after a layer (its backward)",
           Apply(nn.Conv2d(4, 4, 1), nn.ReflectionPad2d((2, 1, 1, 3))),
           (x2d,), *mse_to((2, 4, 12, 11)))
    yield ("Upsample nearest-exact",
           Apply(nn.Conv2d(4, 4, 1),
                 nn.Upsample(scale_factor=1.5, mode="nearest-exact")),
           (x2d,), *mse_to((2, 4, 12, 12)))
    yield ("spectral_norm", nn.Sequential(
        nn.utils.spectral_norm(nn.Linear(8, 8)), nn.Tanh(), nn.Linear(8, 4)),
        (x,), *mse_to((2, 4)))
    yield ("MultiLabelMarginLoss", Apply(nn.Linear(8, 4)), (x,),
           (torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0]]),),
           nn.MultiLabelMarginLoss())
    yield ("BatchNorm1d momentum=None (cumulative average)",
           Apply(nn.BatchNorm1d(8, momentum=None)), (torch.randn(6, 8),),
           *mse_to((6, 8)))
    yield ("CTCLoss", Apply(nn.Linear(8, 5), nn.LogSoftmax(-1)),
           (torch.randn(12, 2, 8),),
           (torch.tensor([[1, 1, 2, 3], [4, 2, 1, 0]]),
            torch.tensor([12, 9]), torch.tensor([4, 3])), nn.CTCLoss())
    yield ("expm1 / asinh / frac / addcdiv",
           Fn(lambda t: t.expm1() + t.asinh() + (t * 3).frac()
              + torch.addcdiv(t, t, t.abs() + 1), (5, 8)), (seq,),
           *mse_to((2, 5, 8)))


def one_line(text, limit=200):
    """`text` as one table cell: whitespace runs as one space, at most
    `limit` characters."""
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_amp_run(name, model, inputs, targets, loss_fn, path, tmp):
    """Two steps in amp-run against eager PyTorch's losses (relative error
    below 1e-5), then two with --amp-pipeline=precision=fp16 (finite
    losses; the cell says how many ops it converted). Returns the table
    cell."""
    args = []
    for kind, values in (("input", inputs), ("target", targets)):
        for i, value in enumerate(values):
            file = os.path.join(tmp, f"{kind}{i}.npy")
            np.save(file, value.numpy())
            args += ["--input", f"{kind}{i}={file}"]
    try:
        fp32, _ = api.train(path, 2, args=args)
        fp16, summary = api.train(path, 2, amp_pipeline="precision=fp16",
                                  args=args)
    except api.AmpOptError as error:
        lines = [line for line in str(error).splitlines() if "error" in line]
        return "fails: " + one_line(lines[0].split("error: ")[-1]
                                    if lines else str(error))
    if name in RANDOM:
        return "runs (random)"
    eager, _ = verify.run_eager(model, inputs, targets,
                                loss_fn, "sgd", {"lr": 0.1}, 2)
    errors = [abs(r["loss"] - e) / max(abs(e), 1e-12)
              for r, e in zip(fp32, eager)]
    if max(errors) > 1e-5:
        return f"WRONG: loss error {max(errors):.1e}"
    converted = re.search(r"amp: (\d+ of \d+) ops in fp16", summary)
    converted = f"{converted.group(1)} ops" if converted else "no op"
    if not all(np.isfinite(r["loss"]) for r in fp16):
        return (f"matches eager ({max(errors):.1e}); FP16 ({converted}) not "
                "finite")
    return f"matches eager ({max(errors):.1e}); FP16 runs ({converted})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help="only the cases whose name contains one of these")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    check = ort.available()
    rows, amp_run = [], {}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, model, inputs, targets, loss_fn in cases():
            if args.names and not any(part in name for part in args.names):
                continue
            torch.manual_seed(0)
            path = os.path.join(tmp, "step.onnx")
            try:
                export_training_step(model, inputs, targets, loss_fn, path,
                                     optimizer="sgd", lr=0.1)
            except ExportError as error:
                rows.append((name, "export fails",
                             one_line(str(error).split(";")[0])))
                amp_run[name] = "-"
                continue
            amp_run[name] = check_amp_run(name, model, inputs, targets,
                                          loss_fn, path, tmp)
            if not check:
                rows.append((name, "exports", "not run (no ONNX Runtime)"))
                continue
            if name in RANDOM:
                rows.append((name, "exports", "random draws: not compared "
                             "(test_amp_run_random.py trains it)"))
                continue
            try:
                results = verify.compare(model, inputs, targets, loss_fn, path,
                                         "sgd", {"lr": 0.1})
            except RuntimeError as error:
                rows.append((name, "ORT fails",
                             one_line(str(error).splitlines()[-1])))
                continue
            worst = max(results.items(), key=lambda kv: kv[1][0])
            failed = [k for k, v in results.items() if v[2] == "FAIL"]
            verdict = "matches eager" if not failed else "WRONG"
            rows.append((name, verdict, f"worst {worst[0]}: {worst[1][0]:.1e}"
                         + (f"; wrong: {', '.join(failed)}" if failed else "")))
            print(f"  {name}: {verdict}", file=sys.stderr)
    table = "\n".join(
        ["| case | ONNX Runtime | detail | amp-run (FP32; FP16 pipeline) |",
         "|---|---|---|---|"] +
        [f"| {a} | {b} | {c} | {amp_run[a]} |" for a, b, c in rows])
    print(table)
    if not args.no_record:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        machine = f"{platform.node()}, {os.cpu_count()} cores, torch " \
                  f"{torch.__version__}"
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        with open(os.path.join(HERE, "results", "export_coverage.md"),
                  "a") as f:
            f.write(f"\n## {stamp} on {machine}\n\n`bench/export_coverage.py`"
                    f" (SGD, opset 17, two steps against eager PyTorch in "
                    f"ONNX Runtime and in amp-run)\n\n"
                    f"{table}\n")


if __name__ == "__main__":
    main()
