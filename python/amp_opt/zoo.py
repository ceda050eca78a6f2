"""Model zoo of training steps: an MLP, a residual CNN with BatchNorm, a
transformer encoder and a GPT-style causal block, each with SGD and Adam.

    python3 -m amp_opt.zoo --out DIR [--size small|large] [--models ...]

writes DIR/<model>_<optimizer>.onnx and DIR/zoo.json (nodes, parameters,
bytes and export seconds of each graph). Small graphs are for tests; large
ones (hidden 768, 12 layers for the transformers) for benchmarks. Dropout is
0 so that a step is deterministic.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F



class ZooError(ValueError):
    pass


#===--- models ---===#


class MLP(nn.Module):
    def __init__(self, features, hidden, classes, layers):
        super().__init__()
        widths = [features] + [hidden] * layers
        self.hidden = nn.ModuleList(
            nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.head(x)


class ResidualBlock(nn.Module):
    def __init__(self, channels, stride=1):
        super().__init__()
        out = channels * stride
        self.conv1 = nn.Conv2d(channels, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = None
        if stride != 1:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels, out, 1, stride, bias=False),
                nn.BatchNorm2d(out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.shortcut is None else self.shortcut(x)
        return F.relu(y + skip)


class ResNet(nn.Module):
    def __init__(self, channels, stages, blocks, classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU(),
                                  nn.MaxPool2d(2))
        layers = []
        for stage in range(stages):
            for block in range(blocks):
                stride = 2 if stage > 0 and block == 0 else 1
                layers.append(ResidualBlock(channels, stride))
                channels *= stride
        self.blocks = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.pool(self.blocks(self.stem(x)))
        return self.head(torch.flatten(x, 1))


class TransformerEncoder(nn.Module):
    """Token classification over nn.TransformerEncoderLayer."""

    def __init__(self, vocab, dim, heads, layers, seq, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0,
                                           activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:tokens.shape[1]]
        return self.head(self.norm(self.encoder(x)))


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).bool(),
                             persistent=False)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, seq, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (dim // self.heads) ** 0.5
        scores = scores.masked_fill(~self.mask[:seq, :seq], float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(batch, seq, dim))


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, seq)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        up, gate = self.fc(self.ln2(x)).chunk(2, dim=-1)
        return x + self.out(torch.cat([F.gelu(up), gate], dim=-1))


class GPT(nn.Module):
    """Causal language model; the output projection is tied to the token
    embedding."""

    def __init__(self, vocab, dim, heads, layers, seq):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        # GPT-2's initialization: with nn.Embedding's N(0, 1) the tied head's
        # logits start with a standard deviation of sqrt(dim).
        nn.init.normal_(self.tokens.weight, std=0.02)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.blocks = nn.ModuleList(GPTBlock(dim, heads, seq)
                                    for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.tokens.weight

    def forward(self, tokens):
        x = self.tokens(tokens) + self.pos[:tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln(x))


def _token_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


#===--- the zoo ---===#

SIZES = {
    "mlp": {"small": dict(features=32, hidden=64, classes=10, layers=2,
                          batch=8),
            "large": dict(features=768, hidden=3072, classes=1000, layers=4,
                          batch=64)},
    "cnn": {"small": dict(channels=8, stages=2, blocks=1, classes=10,
                          batch=4, image=16),
            "large": dict(channels=64, stages=4, blocks=2, classes=1000,
                          batch=8, image=224)},
    "transformer": {"small": dict(vocab=50, dim=32, heads=4, layers=2,
                                  seq=8, classes=5, batch=2),
                    "large": dict(vocab=30522, dim=768, heads=12, layers=12,
                                  seq=128, classes=2, batch=8)},
    "gpt": {"small": dict(vocab=64, dim=32, heads=4, layers=2, seq=8,
                          batch=2),
            "large": dict(vocab=50257, dim=768, heads=12, layers=12, seq=128,
                          batch=4)},
}
MODELS = tuple(SIZES)
OPTIMIZERS = {"sgd": dict(lr=0.01, momentum=0.9), "adam": dict(lr=1e-3)}


def build(name, size="small", seed=0):
    """(model, example_inputs, example_targets, loss_fn) of a zoo model."""
    if name not in SIZES:
        raise ZooError(f"unknown zoo model '{name}'; expected one of "
                       f"{', '.join(MODELS)}")
    if size not in SIZES[name]:
        raise ZooError(f"unknown size '{size}'; expected small or large")
    c = SIZES[name][size]
    torch.manual_seed(seed)
    if name == "mlp":
        model = MLP(c["features"], c["hidden"], c["classes"], c["layers"])
        inputs = (torch.randn(c["batch"], c["features"]),)
        targets = (torch.randint(0, c["classes"], (c["batch"],)),)
        return model, inputs, targets, nn.CrossEntropyLoss()
    if name == "cnn":
        model = ResNet(c["channels"], c["stages"], c["blocks"], c["classes"])
        inputs = (torch.randn(c["batch"], 3, c["image"], c["image"]),)
        targets = (torch.randint(0, c["classes"], (c["batch"],)),)
        return model, inputs, targets, nn.CrossEntropyLoss()
    # Token ids repeat within a batch, as in real text.
    tokens = torch.randint(0, min(c["vocab"], 16), (c["batch"], c["seq"]))
    if name == "transformer":
        model = TransformerEncoder(c["vocab"], c["dim"], c["heads"],
                                   c["layers"], c["seq"], c["classes"])
        targets = torch.randint(0, c["classes"], (c["batch"], c["seq"]))
        return model, (tokens,), (targets,), _token_loss
    model = GPT(c["vocab"], c["dim"], c["heads"], c["layers"], c["seq"])
    targets = torch.roll(tokens, -1, dims=1)
    return model, (tokens,), (targets,), _token_loss


def step_values(name, size="small", seed=0):
    """{exported step's input name: numpy array} of the zoo model's
    PyTorch parameters, buffers and example batch (input<i>, target<i>), as
    export() names them: what amp-run's --input or a step library takes to
    train the exported step from PyTorch's starting point."""
    model, inputs, targets, _ = build(name, size, seed)
    values = {k: v.detach().numpy() for k, v in
              [*model.named_parameters(), *model.named_buffers()]}
    values.update({f"input{i}": x.numpy() for i, x in enumerate(inputs)})
    values.update({f"target{i}": y.numpy() for i, y in enumerate(targets)})
    return values


def export(name, optimizer, path, size="small", lr=None, opset=17, seed=0,
           dtype=torch.float32, **export_kwargs):
    """Exports one zoo training step, with parameters and float inputs of
    `dtype`; returns export_training_step's dict. `export_kwargs` go to
    export_training_step (plain=..., loss_name=..., ...)."""
    from . import export as export_module  # needs torch's ONNX exporter
    if optimizer not in export_module.optim.DEFAULTS:
        raise ZooError(f"unknown optimizer '{optimizer}'; expected one of "
                       f"{', '.join(sorted(export_module.optim.DEFAULTS))}")
    model, inputs, targets, loss_fn = build(name, size, seed)
    model = model.to(dtype)
    inputs = tuple(x.to(dtype) if x.is_floating_point() else x
                   for x in inputs)
    hyper = dict(OPTIMIZERS.get(optimizer, {}))
    if lr is not None:
        hyper["lr"] = lr
    return export_module.export_training_step(
        model, inputs, targets, loss_fn, path, optimizer=optimizer,
        opset=opset, **export_kwargs, **hyper)


def main(argv=None):
    from .export import ExportError
    parser = argparse.ArgumentParser(
        prog="python3 -m amp_opt.zoo",
        description="Write the zoo's training-step graphs as ONNX.")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--size", choices=["small", "large"], default="small",
                        help="small (tests, default) or large (benchmarks)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated subset of {','.join(MODELS)}")
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS),
                        help="comma-separated optimizers (default sgd,adam)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    index = {}
    try:
        for name in args.models.split(","):
            for optimizer in args.optimizers.split(","):
                suffix = "" if args.size == "small" else f"_{args.size}"
                path = os.path.join(args.out,
                                    f"{name}_{optimizer}{suffix}.onnx")
                start = time.perf_counter()
                info = export(name, optimizer, path, size=args.size)
                seconds = time.perf_counter() - start
                index[os.path.basename(path)] = dict(
                    model=name, optimizer=optimizer, size=args.size,
                    nodes=info["nodes"], parameters=info["parameters"],
                    bytes=os.path.getsize(path),
                    export_seconds=round(seconds, 2))
                print(f"{path}: {info['nodes']} nodes, "
                      f"{os.path.getsize(path) / 2**20:.1f} MiB, "
                      f"{seconds:.1f} s", file=sys.stderr, flush=True)
    except (ZooError, ExportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with open(os.path.join(args.out, "zoo.json"), "w") as f:
        json.dump(index, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
