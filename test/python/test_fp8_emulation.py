"""bench/fp8_emulated.py, the PyTorch reference that amp-run's FP8 curves are
compared with (docs/FP8.md): its rounding is the FP8 grid's, and it trains
the exported step's batch from the same start as amp-run."""
import json
import os
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench")
sys.path.insert(0, BENCH)

import fp8_emulated  # noqa: E402


# The OCP FP8 formats: (mantissa bits, smallest normal exponent, largest
# finite value), written out here rather than read from the script.
SPECS = {"e4m3": (3, -6, 448.0), "e5m2": (2, -14, 57344.0)}


def grid(fmt):
    """Every finite value of `fmt`, sorted, in float64."""
    mantissa_bits, min_exponent, largest = SPECS[fmt]
    steps = 2 ** mantissa_bits
    values = {k / steps * 2.0 ** min_exponent for k in range(steps)}
    values |= {(1 + k / steps) * 2.0 ** e
               for e in range(min_exponent, 16) for k in range(steps)}
    values = sorted(v for v in values if v <= largest)
    return torch.tensor([-v for v in reversed(values) if v] + values,
                        dtype=torch.float64)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_rounding_is_to_the_nearest_grid_value(fmt):
    values = grid(fmt)
    largest = values[-1].item()
    torch.manual_seed(0)
    x = torch.randn(100000) * torch.pow(2.0, torch.randint(-24, 20,
                                                           (100000,)).float())
    midpoints = ((values[1:] + values[:-1]) / 2).float()
    x = torch.cat([x, values.float(), midpoints,
                   torch.tensor([2 * largest, -3 * largest])])
    rounded = fp8_emulated.round_to_fp8(x, fmt).double()
    assert torch.isin(rounded, values).all()
    clamped = x.double().clamp(-largest, largest)
    nearest = (values[None, :] - clamped[:, None]).abs().min(dim=1).values
    assert torch.equal((rounded - clamped).abs(), nearest)
    # Ties go to the even code: the rounded midpoints' magnitude codes
    # (their index among the non-negative values) are even.
    magnitudes = values[values >= 0]
    codes = torch.searchsorted(magnitudes,
                               rounded[-len(midpoints) - 2:-2].abs())
    assert (codes % 2 == 0).all()


def test_small_gpt_matches_amp_run_and_quantizes(tmp_path):
    """Three steps of the small GPT: the script's own check that its FP32
    step 1 is amp-run's passes, and every recipe changes the curve (so the
    quantizers ran) without leaving FP8 rounding's range."""
    subprocess.run([sys.executable, os.path.join(BENCH, "fp8_emulated.py"),
                    "--size", "small", "--steps", "3", "--jobs", "1",
                    "--out", str(tmp_path)], check=True, capture_output=True)
    with open(tmp_path / "fp8_emulated.json") as f:
        result = json.load(f)["small sgd 0.001 linear"]
    curves = result["curves"]
    assert curves["fp32"][0] == pytest.approx(result["amp_run_loss"],
                                              rel=1e-5)
    assert set(curves) == {"fp32", "delayed", "current", "block"}
    for recipe in ("delayed", "current", "block"):
        assert curves[recipe] != curves["fp32"], recipe
        assert curves[recipe] == pytest.approx(curves["fp32"], rel=0.02)
