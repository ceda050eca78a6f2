"""amp-fuse-casts converts constants in place exactly as a cast would:
round to nearest even, subnormals, overflow to infinity, NaN kept."""
import subprocess

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

from amp_opt import AmpOptError, api


def special_f32_values():
    """Edge cases of f32 -> f16/bf16 rounding, then random bit patterns."""
    f16_edges = [0.0, -0.0, 1.0, 0.1, 65504.0, 65519.996, 65520.0, 1e5,
                 2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26,
                 2.0 ** -25 * 1.0000001, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11,
                 np.inf, -np.inf, np.nan, 3.3895e38, 3.4028e38, 1e-40,
                 2.0 ** -133, 2.0 ** -134, 1e-45]
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, size=20000, dtype=np.uint64)
    random = bits.astype(np.uint32).view(np.float32)
    return np.concatenate([np.array(f16_edges, np.float32), random])


def bf16_reference(values):
    """f32 -> bf16 bits, round to nearest even; NaN stays NaN."""
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def convert(tmp_path, values, element):
    """The values of an initializer after amp-fuse-casts folded its cast."""
    try:
        amp_opt = api.find_amp_opt()
    except AmpOptError as error:
        pytest.skip(str(error))
    blob = "0x04000000" + values.astype("<f4").tobytes().hex().upper()
    n = values.size
    source = tmp_path / "constant.mlir"
    source.write_text(f"""
func.func @main() -> tensor<{n}x{element}> {{
  %w = onnxg.initializer "w" dense_resource<w> : tensor<{n}xf32>
  %c = amp.cast %w : tensor<{n}xf32> to tensor<{n}x{element}>
  return %c : tensor<{n}x{element}>
}}
{{-#
  dialect_resources: {{ builtin: {{ w: "{blob}" }} }}
#-}}
""")
    out = tmp_path / "constant.onnx"
    subprocess.run([amp_opt, str(source), "--amp-fuse-casts", "-o", str(out)],
                   check=True)
    model = onnx.load(str(out))
    (tensor,) = model.graph.initializer
    assert not [n for n in model.graph.node if n.op_type == "Cast"]
    return np.frombuffer(tensor.raw_data, dtype=np.uint16)


def test_f16_conversion_matches_numpy(tmp_path):
    values = special_f32_values()
    got = convert(tmp_path, values, "f16")
    with np.errstate(over="ignore"):
        want = values.astype(np.float16).view(np.uint16)
    nan = np.isnan(values)
    assert np.isnan(got[nan].view(np.float16)).all()
    mismatch = np.nonzero(got[~nan] != want[~nan])[0]
    assert mismatch.size == 0, values[~nan][mismatch[:5]]


def test_bf16_conversion_rounds_to_nearest_even(tmp_path):
    values = special_f32_values()
    got = convert(tmp_path, values, "bf16")
    want = bf16_reference(values)
    nan = np.isnan(values)
    assert (got[nan] & 0x7FFF > 0x7F80).all()
    mismatch = np.nonzero(got[~nan] != want[~nan])[0]
    assert mismatch.size == 0, values[~nan][mismatch[:5]]
