"""The amp dialect's FP8 ops run on the CPU (amp-run) exactly as the numpy
references of amp_opt.fp8 compute them: E4M3/E5M2 rounding with
saturation, per-tensor and block scales, Transformer Engine's scale formula
and amax-history roll (docs/FP8.md)."""
import numpy as np
import pytest

from amp_opt import api, fp8

# One function of every FP8 op; its inputs: x [4, 32], w [32, 16], an amax
# history h [8] and a previous scale s0. The blocks of w (24x16) and of
# the block amax of x (1x24) leave a partial block at the end of a dimension.
PROGRAM = """
func.func @main(%x: tensor<4x32xf32> loc("x"), %w: tensor<32x16xf32> loc("w"),
                %h: tensor<8xf32> loc("h"), %s0: tensor<f32> loc("s0"))
    -> (tensor<f32>, tensor<f32>, tensor<4x32xf32>, tensor<4x16xbf16>,
        tensor<4x2xf32>, tensor<8xf32>, tensor<f32>, tensor<4x32xf32>) {
  %a = amp.amax %x : tensor<4x32xf32> to tensor<f32>
  %s = amp.compute_scale %a previous %s0 {max = 448.0 : f32, margin = MARGIN : i64} : tensor<f32>, tensor<f32>
  %q, %inv = amp.quantize %x by %s : tensor<4x32xf32>, tensor<f32> to tensor<4x32xf8E4M3FN>
  %d = amp.dequantize %q by %inv : tensor<4x32xf8E4M3FN>, tensor<f32> to tensor<4x32xf32>
  %aw = amp.amax %w {block = array<i64: 24, 16>} : tensor<32x16xf32> to tensor<2x1xf32>
  %sw = amp.compute_scale %aw {max = 448.0 : f32, pow2} : tensor<2x1xf32>
  %qw, %iw = amp.quantize %w by %sw {block = array<i64: 24, 16>} : tensor<32x16xf32>, tensor<2x1xf32> to tensor<32x16xf8E4M3FN>
  %y = amp.scaled_matmul %q, %inv, %qw, %iw {b_block = array<i64: 24, 16>} : tensor<4x32xf8E4M3FN>, tensor<f32>, tensor<32x16xf8E4M3FN>, tensor<2x1xf32> to tensor<4x16xbf16>
  %ab = amp.amax %x {block = array<i64: 1, 24>} : tensor<4x32xf32> to tensor<4x2xf32>
  %h2, %s2 = amp.fp8_update histories(%h) amaxes(%a) scales(%s0) {maxes = array<f32: 448.0>, algo = "ALGO"} : tensor<8xf32>
  %g, %ginv = amp.quantize %x by %s0 : tensor<4x32xf32>, tensor<f32> to tensor<4x32xf8E5M2>
  %gd = amp.dequantize %g by %ginv : tensor<4x32xf8E5M2>, tensor<f32> to tensor<4x32xf32>
  return %a, %s, %d, %y, %ab, %h2, %s2, %gd : tensor<f32>, tensor<f32>, tensor<4x32xf32>, tensor<4x16xbf16>, tensor<4x2xf32>, tensor<8xf32>, tensor<f32>, tensor<4x32xf32>
}
"""


def program(margin=0, algo="max", gemm_type="bf16"):
    return PROGRAM.replace("MARGIN", str(margin)).replace("ALGO", algo) \
        .replace("4x16xbf16", f"4x16x{gemm_type}")


def run(folder, inputs, margin=0, algo="max", text=None):
    """amp-run's outputs of the program on `inputs`, in `folder`."""
    folder.mkdir(exist_ok=True)
    path = folder / "fp8.mlir"
    path.write_text(text or program(margin, algo))
    saved = api.run_with_inputs(path, inputs, folder)
    return [saved[f"output{i}"] for i in range(8)]


def inputs(x_scale=3.0, s0=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": (rng.standard_normal((4, 32)) * x_scale).astype(np.float32),
            "w": (rng.standard_normal((32, 16)) * 0.1).astype(np.float32),
            "h": np.array([0, 1, 9, 2, 3, 0.5, 1, 1], np.float32),
            "s0": np.array(s0, np.float32)}


def test_rounding_references():
    assert fp8.round_to(0.1, "e4m3") == 0.1015625
    assert list(fp8.round_to([0.3, 1.7, -5.1, 300.0, 1000.0, -0.01],
                             "e4m3")) == [0.3125, 1.75, -5.0, 288.0, 448.0,
                                          -0.009765625]
    assert fp8.round_to(1e6, "e5m2") == 57344.0
    assert fp8.round_to(-np.inf, "e4m3") == -448.0
    assert np.isnan(fp8.round_to(np.nan, "e5m2"))
    # Subnormals: E4M3's smallest is 2^-9, E5M2's 2^-16.
    assert fp8.round_to(2.0 ** -9 * 0.6, "e4m3") == 2.0 ** -9
    assert fp8.round_to(2.0 ** -17, "e5m2") == 0.0


@pytest.mark.parametrize("margin,algo", [(0, "max"), (2, "most_recent")])
def test_ops_match_the_references(tmp_path, margin, algo):
    feeds = inputs()
    a, s, d, y, ab, h2, s2, gd = run(tmp_path, feeds, margin, algo)
    x, w = feeds["x"], feeds["w"]
    assert a == fp8.amax(x)
    assert s == fp8.compute_scale(fp8.amax(x), feeds["s0"], margin=margin)
    q, inv = fp8.quantize(x, s)
    np.testing.assert_array_equal(d, fp8.dequantize(q, inv))
    # The conversion happened: E4M3 keeps 3 mantissa bits.
    assert np.abs(d - x).max() > 1e-3 * np.abs(x).max()
    aw = fp8.amax(w, (24, 16))
    sw = fp8.compute_scale(aw, pow2=True)
    assert set(np.log2(sw.ravel())) <= set(range(-126, 128))
    qw, iw = fp8.quantize(w, sw, block=(24, 16))
    reference = d.astype(np.float64) @ \
        fp8.dequantize(qw, iw, (24, 16)).astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), reference, rtol=1e-2,
                               atol=1e-2)
    np.testing.assert_array_equal(ab, fp8.amax(x, (1, 24)))
    history, scale = fp8.update_history(feeds["h"], fp8.amax(x),
                                        feeds["s0"], algo=algo)
    np.testing.assert_array_equal(h2, history)
    assert s2 == scale
    g, ginv = fp8.quantize(x, feeds["s0"], "e5m2")
    np.testing.assert_array_equal(gd, fp8.dequantize(g, ginv))


def test_saturation_and_a_non_finite_amax(tmp_path):
    """Values beyond 448 / scale saturate; an Inf in the data makes the
    amax Inf, and the scale stays the previous one."""
    feeds = inputs(s0=4.0)
    feeds["x"][0, 0] = np.inf
    feeds["x"][1, 1] = 512.0
    a, s, d, _, _, h2, s2, gd = run(tmp_path, feeds)
    assert np.isinf(a)
    assert s == 4.0 and s2 == 4.0
    assert d[0, 0] == 448.0 / 4.0 and d[1, 1] == 448.0 / 4.0
    assert gd[1, 1] == 512.0  # E5M2 holds 512 * 4 = 2048 exactly
    assert np.isinf(h2[-1])


def test_onnx_runtime_runs_the_exported_ops(tmp_path, needs_ort):
    """amp-opt exports the program (opset 19 Cast, Mul, ReduceMax, Where,
    Slice, Concat, MatMul); ONNX Runtime's outputs equal amp-run's, an Inf
    in the data included. (The scaled GEMM writes f32 here: the Node.js
    binding returns no bf16 tensors.)"""
    from amp_opt import ort
    import subprocess
    text = program(margin=1, gemm_type="f32")
    path = tmp_path / "fp8.mlir"
    path.write_text(text)
    exported = tmp_path / "fp8.onnx"
    subprocess.run([api.find_amp_opt(), str(path), "-o", str(exported)],
                   check=True)
    for poison in (None, np.inf, np.nan):
        feeds = inputs(s0=2.0)
        if poison is not None:
            feeds["x"][2, 3] = poison
        expected = run(tmp_path / f"run_{poison}", feeds, text=text)
        actual = list(ort.run(str(exported), feeds).values())
        for index, (got, want) in enumerate(zip(actual, expected)):
            got = np.asarray(got).reshape(np.shape(want))
            if index == 3:  # the GEMM: another summation order
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(got, want, err_msg=str(index))
        if poison is not None:
            assert expected[6] == 2.0  # the scale is kept


# Raw (non-saturating) casts f32 -> FP8 -> f32 and the FP8 codes, which the
# CPU pipeline computes with integer arithmetic (amp-expand-fp8-casts).
CASTS = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<SIZExf32> loc("x"))
    -> (tensor<SIZExTYPE>, tensor<SIZExf32>, tensor<SIZExi8>) {
  %e8 = tensor.empty() : tensor<SIZExTYPE>
  %e32 = tensor.empty() : tensor<SIZExf32>
  %ei = tensor.empty() : tensor<SIZExi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<SIZExf32>) outs(%e8 : tensor<SIZExTYPE>) {
  ^bb0(%in: f32, %out: TYPE):
    %t = arith.truncf %in : f32 to TYPE
    linalg.yield %t : TYPE
  } -> tensor<SIZExTYPE>
  %back = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%q : tensor<SIZExTYPE>) outs(%e32 : tensor<SIZExf32>) {
  ^bb0(%in: TYPE, %out: f32):
    %w = arith.extf %in : TYPE to f32
    linalg.yield %w : f32
  } -> tensor<SIZExf32>
  %codes = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%q : tensor<SIZExTYPE>) outs(%ei : tensor<SIZExi8>) {
  ^bb0(%in: TYPE, %out: i8):
    %c = arith.bitcast %in : TYPE to i8
    linalg.yield %c : i8
  } -> tensor<SIZExi8>
  return %q, %back, %codes : tensor<SIZExTYPE>, tensor<SIZExf32>, tensor<SIZExi8>
}
"""


def decode(codes, fmt):
    """The values of every FP8 code (NaN and infinity included)."""
    mantissa_bits, min_exponent, _ = fp8.FORMATS[fmt]
    bias = 1 - min_exponent
    codes = codes.astype(np.int64)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = (codes & 0x7F) >> mantissa_bits
    mantissa = codes & ((1 << mantissa_bits) - 1)
    top = 0x7F >> mantissa_bits
    value = np.where(exponent == 0,
                     mantissa * 2.0 ** (1 - bias - mantissa_bits),
                     (1 + mantissa / 2.0 ** mantissa_bits) *
                     2.0 ** (exponent - bias))
    if fmt == "e4m3":
        value = np.where((codes & 0x7F) == 0x7F, np.nan, value)
    else:
        value = np.where(exponent == top,
                         np.where(mantissa == 0, np.inf, np.nan), value)
    return sign * value


@pytest.mark.parametrize("fmt,mlir_type", [("e4m3", "f8E4M3FN"),
                                           ("e5m2", "f8E5M2")])
def test_casts_round_to_nearest_even_bit_for_bit(fmt, mlir_type, tmp_path):
    """Every FP8 value, the midpoints between neighbours (ties go to the
    even code), the f32 numbers next to them, subnormals of both formats,
    and overflow: past the largest finite value E5M2 gives infinity and
    E4M3FN (no infinity) NaN, as APFloat and ONNX's saturate=0 do."""
    values = decode(np.arange(256), fmt)
    finite = np.unique(values[np.isfinite(values)])
    largest = fp8.FORMATS[fmt][2]
    step_past = 2.0 ** (np.floor(np.log2(largest)) - fp8.FORMATS[fmt][0])
    middles = (finite[1:] + finite[:-1]) / 2
    edges = np.concatenate([finite, middles, [largest + step_past / 2,
                                              largest + step_past, 1e30,
                                              np.inf, -np.inf, np.nan,
                                              1e-40, -1e-45]])
    x = np.concatenate([edges.astype(np.float32),
                        np.nextafter(edges.astype(np.float32), np.inf),
                        np.nextafter(edges.astype(np.float32), -np.inf)])
    x = x.astype(np.float32)
    path = tmp_path / "casts.mlir"
    path.write_text(CASTS.replace("TYPE", mlir_type)
                    .replace("SIZE", str(x.size)))
    lowered = tmp_path / "lowered.mlir"
    saved = api.run_with_inputs(path, {"x": x}, tmp_path,
                                args=["--dump-lowered", str(lowered)])
    back = saved["output1"]
    codes = saved["output2"].view(np.uint8)

    # The reference: nearest even below the overflow threshold (halfway
    # past the largest value), then infinity (E5M2) or NaN (E4M3FN).
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        rounded = np.where(np.abs(x64) >= largest + step_past / 2,
                           np.sign(x64) * (np.inf if fmt == "e5m2"
                                           else np.nan),
                           fp8.round_to(x64, fmt))
    rounded = np.where(np.isnan(x64), np.nan, rounded)
    np.testing.assert_array_equal(back, rounded.astype(np.float32))
    np.testing.assert_array_equal(decode(codes, fmt), back)
    # Zeros keep their sign; -0 and +0 are different codes.
    assert set(codes[x == 0]) <= {0x00, 0x80}
    # The casts are integer arithmetic, not calls to APFloat.
    assert "_mlir_apfloat" not in lowered.read_text()
