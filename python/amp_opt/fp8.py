"""FP8 on numpy: the formats' rounding and Transformer Engine's scaling
formulas, as references for amp-opt's FP8 ops (docs/FP8.md). numpy has no
FP8 dtype: values are float64 holding exactly the FP8 numbers."""
import numpy as np

# (mantissa bits, smallest normal exponent, largest finite value)
FORMATS = {"e4m3": (3, -6, 448.0), "e5m2": (2, -14, 57344.0)}


def round_to(x, fmt):
    """x rounded to nearest even in `fmt`, saturating at its largest finite
    value (CUDA's .satfinite, ONNX Cast saturate=1); NaN stays NaN."""
    mantissa, min_exponent, largest = FORMATS[fmt]
    x = np.asarray(x, np.float64)
    magnitude = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1)))
    step = np.exp2(np.maximum(exponent, min_exponent) - mantissa)
    with np.errstate(invalid="ignore"):
        rounded = np.round(x / step) * step
    rounded = np.where(np.isinf(x), np.sign(x) * largest, rounded)
    return np.clip(rounded, -largest, largest)


def compute_scale(amax, previous=None, fp8_max=448.0, margin=0, pow2=False):
    """(fp8_max / amax) / 2^margin in float32; an amax of 0, Inf or NaN
    gives `previous` (1 without one); overflow clamps to the largest
    float32; `pow2` rounds down to a power of two."""
    amax = np.asarray(amax, np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = (np.float32(fp8_max) / amax) * np.float32(2.0 ** -margin)
    scale = np.where(np.isinf(scale), np.finfo(np.float32).max, scale)
    if pow2:
        bits = scale.astype(np.float32).view(np.uint32) & np.uint32(0xFF800000)
        scale = bits.view(np.float32)
    valid = (amax > 0) & np.isfinite(amax)
    fallback = np.float32(1) if previous is None else previous
    return np.where(valid, scale, fallback).astype(np.float32)


def _blocks(shape, block):
    return tuple(-(-d // b) for d, b in zip(shape, block))


def amax(x, block=None):
    """max |x| per block (all of x without one); NaN propagates."""
    x = np.abs(np.asarray(x, np.float32))
    if block is None:
        return np.float32(np.max(x)) if not np.isnan(x).any() else np.nan
    grid = np.zeros(_blocks(x.shape, block), np.float32)
    for index in np.ndindex(*grid.shape):
        cell = x[tuple(slice(i * b, (i + 1) * b)
                       for i, b in zip(index, block))]
        grid[index] = np.nan if np.isnan(cell).any() else cell.max()
    return grid


def expand(scale, shape, block=None):
    """Each element's block scale, in the data's shape."""
    scale = np.asarray(scale, np.float32)
    if block is None:
        return np.broadcast_to(scale, shape)
    for axis, size in enumerate(block):
        scale = np.repeat(scale, size, axis=axis)
    return scale[tuple(slice(0, d) for d in shape)]


def quantize(x, scale, fmt="e4m3", block=None):
    """(round_to(x * scale), 1 / scale) with per-block scales."""
    x = np.asarray(x, np.float32)
    scaled = x * expand(scale, x.shape, block)
    return round_to(scaled.astype(np.float32), fmt), \
        (np.float32(1) / np.asarray(scale, np.float32))


def dequantize(q, scale_inv, block=None):
    return (np.asarray(q, np.float32) *
            expand(scale_inv, np.shape(q), block)).astype(np.float32)


def update_history(history, current_amax, previous, fp8_max=448.0, margin=0,
                   algo="max"):
    """One step of delayed scaling: (new history, new scale)."""
    history = np.array(history, np.float32)
    history[0] = current_amax
    chosen = history[0] if algo == "most_recent" else (
        np.nan if np.isnan(history).any() else history.max())
    scale = compute_scale(chosen, previous, fp8_max, margin)
    history = np.roll(history, -1)
    history[0] = 0
    return history, scale
