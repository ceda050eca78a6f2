#!/usr/bin/python3
"""FP8 training emulated in PyTorch: is a lag FP8's, or amp-opt's?

Trains the zoo's PyTorch GPT on the batch amp-run draws for the exported
step (`amp-run --save-inputs`: parameters, tokens, targets), with the
exporter's SGD, once in FP32 and once per recipe with the GEMM operands
fake-quantized as Transformer Engine quantizes them: round to nearest even
on the FP8 grid, saturating, FP32 accumulation.
- `delayed`: E4M3 forward, E5M2 gradients, one scale per operand from the
  largest amax of the earlier steps (history longer than the run), 1 at
  step 1;
- `current`: the same formats, scales from the tensor's own amax;
- `block`: E4M3 everywhere, power-of-two scales per 1x128 block along each
  GEMM's K (activations, gradients) and per 128x128 tile (weights).
The block GEMMs (qkv, proj, fc, out: 144 GEMMs on the large GPT) go FP8;
`--gemms all` adds attention's two batched products (216). Everything else
stays FP32, so each curve is compared with the FP32 one of the same run.
None of amp-opt's code runs here: if the emulation lags FP32 by as many
steps as amp-run's FP8 lags BF16 (bench/results/fp8_numerics.md), the lag
is FP8 rounding, not amp-opt. Prints a table, appends it to
bench/results/fp8_emulated.md, writes the curves to fp8_emulated.json and
plots every run saved there to fp8_emulated.png.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import types

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from amp_opt import api, zoo  # noqa: E402
from amp_run_numerics import heading, plot_curves, record  # noqa: E402
from fp8_numerics import compare, training_arguments  # noqa: E402

# (mantissa bits, smallest normal exponent, largest finite value)
FORMATS = {"e4m3": (3, -6, 448.0), "e5m2": (2, -14, 57344.0)}
# recipe: (forward format, gradient format)
RECIPES = {"delayed": ("e4m3", "e5m2"), "current": ("e4m3", "e5m2"),
           "block": ("e4m3", "e4m3")}
BLOCK = 128


def round_to_fp8(x, fmt):
    """`x` (already scaled) rounded to the nearest even value of `fmt`,
    saturating at its largest finite value."""
    mantissa_bits, min_exponent, largest = FORMATS[fmt]
    x = x.clamp(-largest, largest)
    _, exponent = torch.frexp(x)  # x = m 2^e with 0.5 <= |m| < 1
    exponent = (exponent - 1).clamp_min(min_exponent) - mantissa_bits
    quantum = torch.pow(2.0, exponent.to(x.dtype))
    return torch.round(x / quantum) * quantum


def scales_of(amax, fmt, pow2):
    """TE's scale, (max / amax); an amax of 0 keeps scale 1."""
    largest = FORMATS[fmt][2]
    scale = torch.where(amax > 0, largest / amax, torch.ones_like(amax))
    return torch.pow(2.0, torch.floor(torch.log2(scale))) if pow2 else scale


def blocks_along(x, axis):
    """`x` with `axis` moved last and split into blocks of BLOCK (the edge
    zero-padded): shape (..., blocks, BLOCK), and the undo function."""
    moved = x.movedim(axis, -1)
    length = moved.shape[-1]
    padded = F.pad(moved, (0, -length % BLOCK))
    tiles = padded.reshape(*padded.shape[:-1], -1, BLOCK)

    def undo(t):
        return t.reshape(padded.shape)[..., :length].movedim(-1, axis)
    return tiles, undo


def weight_tiles(w):
    """A 2-D weight as (row tiles, BLOCK, column tiles, BLOCK), zero-padded,
    and the undo function."""
    rows, cols = w.shape
    padded = F.pad(w, (0, -cols % BLOCK, 0, -rows % BLOCK))
    tiles = padded.reshape(padded.shape[0] // BLOCK, BLOCK,
                           padded.shape[1] // BLOCK, BLOCK)

    def undo(t):
        return t.reshape(padded.shape)[:rows, :cols]
    return tiles, undo


class Operand:
    """One GEMM operand's quantizer: its recipe, format and (delayed) the
    largest amax seen before this step."""

    def __init__(self, recipe, fmt):
        self.recipe, self.fmt = recipe, fmt
        self.history_max = None  # delayed: max amax of the earlier steps
        self.step_amax = None

    def __call__(self, x, k_axis, weight=False):
        """`x` quantized and dequantized; `k_axis` is the GEMM's K."""
        with torch.no_grad():
            if self.recipe == "block":
                tiles, undo = (weight_tiles(x) if weight
                               else blocks_along(x, k_axis))
                dims = (1, 3) if weight else (-1,)
                scale = scales_of(tiles.abs().amax(dim=dims, keepdim=True),
                                  self.fmt, pow2=True)
                return undo(round_to_fp8(tiles * scale, self.fmt) / scale)
            amax = x.abs().max()
            if self.recipe == "current":
                scale = scales_of(amax, self.fmt, pow2=False)
            else:
                self.step_amax = (amax if self.step_amax is None
                                  else torch.maximum(self.step_amax, amax))
                scale = (torch.tensor(1.0) if self.history_max is None else
                         scales_of(self.history_max, self.fmt, pow2=False))
            return round_to_fp8(x * scale, self.fmt) / scale

    def end_step(self):
        if self.step_amax is not None and torch.isfinite(self.step_amax):
            self.history_max = (self.step_amax if self.history_max is None
                                else torch.maximum(self.history_max,
                                                   self.step_amax))
        self.step_amax = None


class Fp8Matmul(torch.autograd.Function):
    """a @ b, a (..., M, K) an activation, b (..., K, N) an activation or
    (weight=True) a weight's transpose (K, N); operands quantized per use
    along each GEMM's K, as TE does for the forward, dgrad and wgrad."""

    @staticmethod
    def forward(ctx, a, b, quantizers, weight):
        qa, qb, _ = quantizers
        ctx.quantizers, ctx.weight = quantizers, weight
        if weight:
            # A weight's 128x128 tiles serve both of its GEMMs: quantized
            # once, as TE does.
            w = qb(b.t(), None, weight=True)  # (N, K)
            ctx.save_for_backward(a, w)
            return qa(a, -1) @ w.t()
        ctx.save_for_backward(a, b)
        return qa(a, -1) @ qb(b, -2)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # b: the quantized weight (N, K)
        qa, qb, qg = ctx.quantizers
        if ctx.weight:
            grad_a = qg(grad, -1) @ b
            a2, g2 = a.reshape(-1, a.shape[-1]), grad.reshape(-1,
                                                              grad.shape[-1])
            grad_b = qa(a2, 0).t() @ qg(g2, 0)
            return grad_a, grad_b, None, None
        grad_a = qg(grad, -1) @ qb(b, -1).transpose(-2, -1)
        grad_b = qa(a, -2).transpose(-2, -1) @ qg(grad, -2)
        return grad_a, grad_b, None, None


def operands(recipe, registry):
    forward_fmt, grad_fmt = RECIPES[recipe]
    trio = (Operand(recipe, forward_fmt), Operand(recipe, forward_fmt),
            Operand(recipe, grad_fmt))
    registry.extend(trio)
    return trio


def fp8_linear(linear, recipe, registry):
    quantizers = operands(recipe, registry)

    def forward(self, x):
        y = Fp8Matmul.apply(x, self.weight.t(), quantizers, True)
        return y + self.bias if self.bias is not None else y
    linear.forward = types.MethodType(forward, linear)


def fp8_attention(attention, recipe, registry):
    """CausalSelfAttention.forward with its two batched products in FP8."""
    scores_q, values_q = (operands(recipe, registry),
                          operands(recipe, registry))

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, seq, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = Fp8Matmul.apply(q, k.transpose(-2, -1), scores_q, False)
        scores = scores / (dim // self.heads) ** 0.5
        scores = scores.masked_fill(~self.mask[:seq, :seq], float("-inf"))
        y = Fp8Matmul.apply(F.softmax(scores, dim=-1), v, values_q, False)
        return self.proj(y.transpose(1, 2).reshape(batch, seq, dim))
    attention.forward = types.MethodType(forward, attention)


def save_step_inputs(path, seed, folder):
    """Writes amp-run's step-1 inputs of `path` into `folder`; returns its
    FP32 step-1 loss."""
    run = subprocess.run([api.find_tool("amp-run"), path, "--steps", "1",
                          "--seed", str(seed), f"--save-inputs={folder}"],
                         check=True, capture_output=True, text=True)
    return json.loads(run.stdout.splitlines()[-1])["loss"]


def train(folder, size, recipe, gemms, optimizer_name, steps, lr, threads):
    """The loss curve of `steps` steps of `optimizer_name` on the inputs
    saved in `folder`; recipe None: FP32."""
    torch.set_num_threads(threads)
    inputs = {name.removesuffix(".npy"): np.load(os.path.join(folder, name))
              for name in os.listdir(folder)}
    model, _, _, loss_fn = zoo.build("gpt", size)
    with torch.no_grad():
        for name, parameter in model.named_parameters():  # tied: once
            parameter.copy_(torch.from_numpy(inputs[name]))
    registry = []
    if recipe:
        for block in model.blocks:
            for linear in (block.attn.qkv, block.attn.proj, block.fc,
                           block.out):
                fp8_linear(linear, recipe, registry)
            if gemms == "all":
                fp8_attention(block.attn, recipe, registry)
    tokens = torch.from_numpy(inputs["input0"])
    targets = torch.from_numpy(inputs["target0"])
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[
        optimizer_name](model.parameters(),
                        **dict(zoo.OPTIMIZERS[optimizer_name], lr=lr))
    curve, start = [], time.time()
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(tokens), targets)
        loss.backward()
        optimizer.step()
        for operand in registry:
            operand.end_step()
        curve.append(loss.item())
        if step % 20 == 0:
            print(f"  {recipe or 'fp32'} step {step + 1}: {curve[-1]:.5g} "
                  f"({time.time() - start:.0f} s)", file=sys.stderr,
                  flush=True)
    return curve


def run_one(job):
    return train(*job)


def main():
    parser = training_arguments(__doc__.splitlines()[0])
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--recipes", nargs="*", default=list(RECIPES),
                        choices=RECIPES)
    parser.add_argument("--gemms", choices=["linear", "all"],
                        default="linear")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--zoo-dir", help="reuse gpt_sgd_<size>.onnx from "
                        "this folder (exported with --lr)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--amp-run-json", metavar="JSON",
                        help="fp8_numerics_<size>.json of the same model, "
                        "seed and lr: adds amp-run's gaps against its own "
                        "FP32 curve, and how far amp-run's FP8 curves are "
                        "from the emulated ones")
    parser.add_argument("--curves-from", metavar="JSON",
                        help="tabulate the curves an earlier run saved in "
                        "this fp8_emulated.json instead of training")
    args = parser.parse_args()
    key = f"{args.size} {args.optimizer} {args.lr} {args.gemms}"
    if args.curves_from:
        saved = json.load(open(args.curves_from))[key]
        curves, amp_run_loss = saved["curves"], saved["amp_run_loss"]
        command = saved["command"]
    else:
        curves, amp_run_loss = train_all(args)
        command = sys.argv[1:]
    fp32 = curves["fp32"]
    if abs(fp32[0] - amp_run_loss) > 1e-4 * abs(amp_run_loss):
        sys.exit(f"fp8_emulated: PyTorch's FP32 step 1 loss {fp32[0]} is not "
                 f"amp-run's {amp_run_loss}: the emulation does not train "
                 "the exported step")
    amp_run = (json.load(open(args.amp_run_json))["gpt"]["curves"]
               if args.amp_run_json else None)
    if amp_run and len(amp_run["fp32"]) != len(fp32):
        sys.exit(f"fp8_emulated: {args.amp_run_json} has "
                 f"{len(amp_run['fp32'])} steps, not {len(fp32)}")
    record(table(curves, amp_run, command, args), args.out,
           "fp8_emulated.md")
    if not args.curves_from:
        json_path = os.path.join(args.out, "fp8_emulated.json")
        saved = (json.load(open(json_path)) if os.path.exists(json_path)
                 else {})
        saved[key] = {"curves": curves, "amp_run_loss": amp_run_loss,
                      "command": command}
        with open(json_path, "w") as out:
            json.dump(saved, out, indent=1)
        plot_curves(saved, os.path.join(args.out, "fp8_emulated.png"),
                    reference="fp32")


def train_all(args):
    """The curves of FP32 and each recipe, and amp-run's step-1 loss."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(args.zoo_dir or folder,
                            f"gpt_sgd_{args.size}.onnx")
        if not args.zoo_dir:
            zoo.export("gpt", "sgd", path, size=args.size, seed=args.seed,
                       lr=args.lr)
        inputs = os.path.join(folder, "in")
        amp_run_loss = save_step_inputs(path, args.seed, inputs)
        threads = max(1, (os.cpu_count() or 1) // args.jobs)
        jobs = [(inputs, args.size, recipe, args.gemms, args.optimizer,
                 args.steps, args.lr, threads)
                for recipe in [None] + args.recipes]
        # spawn: a forked child of a process that ran torch can hang in
        # OpenMP.
        with torch.multiprocessing.get_context("spawn").Pool(
                args.jobs) as pool:
            curves = dict(zip(["fp32"] + args.recipes,
                              pool.map(run_one, jobs, chunksize=1)))
    return curves, amp_run_loss


def gap_cells(reference, curve):
    gaps = compare(reference, curve)
    behind = gaps["steps_behind"]
    return (f"{100 * gaps['step_gap']:.2f}% | {100 * gaps['final_gap']:.2f}%"
            f" | {'-' if behind is None else behind}")


def table(curves, amp_run, command, args):
    """The Markdown lines of one run's result."""
    fp32 = curves["fp32"]
    lines = [heading(f"{args.size} GPT in PyTorch, "
                     f"{args.optimizer.upper()} (lr {args.lr}), "
                     f"{args.steps} steps, seed {args.seed}, emulated FP8 "
                     f"on the {args.gemms} GEMMs"), "",
             f"Command: `/usr/bin/python3 bench/fp8_emulated.py "
             f"{' '.join(command)}`" +
             (f" (tabulated by `... {' '.join(sys.argv[1:])}`)"
              if args.curves_from else ""), "",
             "Largest step gap (of the first loss), final gap and steps "
             "behind, each against the FP32 curve of the same "
             "implementation."]
    header = "| recipe | first -> final | step gap | final gap | behind |"
    rule = "|---|---|---|---|---|"
    if amp_run:
        header += (" amp-run final | step gap | final gap | behind | "
                   "amp-run vs emulated |")
        rule += "---|---|---|---|---|"
        lines.append("amp-run's columns come from `" + args.amp_run_json +
                     "` (its FP8 runs have a BF16 base; the emulation's "
                     "base is FP32); the last is the largest "
                     "|amp-run - emulated| over the steps, of the first "
                     "loss.")
    lines += ["", header, rule]
    for recipe in curves:  # fp32 first
        curve = curves[recipe]
        row = (f"| {recipe} | {curve[0]:.5g} -> {curve[-1]:.5g} | " +
               ("- | - | -" if recipe == "fp32" else gap_cells(fp32, curve))
               + " |")
        theirs = amp_run and amp_run.get("fp32" if recipe == "fp32"
                                         else f"fp8 {recipe}")
        if amp_run and not theirs:
            row += " - | - | - | - | - |"
        elif amp_run:
            apart = max(abs(a - b) for a, b in zip(theirs, curve))
            row += (f" {theirs[-1]:.5g} | " +
                    ("- | - | -" if recipe == "fp32"
                     else gap_cells(amp_run["fp32"], theirs)) +
                    f" | {100 * apart / abs(curve[0]):.2f}% |")
        lines.append(row)
    return lines


if __name__ == "__main__":
    main()
