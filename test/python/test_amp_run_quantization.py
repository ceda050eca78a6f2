"""Linear quantization in amp-run: QuantizeLinear, DequantizeLinear and
DynamicQuantizeLinear per tensor and per axis, in 8- and 16-bit integers
and FP8, against ONNX Runtime and the spec's numpy; and ONNX Runtime's
quantization-aware training ops FakeQuant and FakeQuantGrad against
PyTorch's fake quantization and its gradient."""
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort

# TensorProto.FLOAT8E4M3FN from ONNX 1.14 on; Debian's onnx 1.12 has no name.
FLOAT8E4M3FN = 17
RNG = np.random.RandomState(0)
X = (RNG.randn(2, 3, 4, 5) * 40).astype(np.float32)
NUMPY_TYPES = {TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8,
               TensorProto.UINT16: np.uint16, TensorProto.INT16: np.int16}


def run_model(tmp_path, nodes, inputs, outputs, initializers, opset,
              domains=()):
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "quantization",
        [info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype],
              list(value.shape)) for name, value in inputs.items()],
        [info(name, dtype, None) for name, dtype in outputs], initializers)
    imports = [helper.make_opsetid("", opset)]
    imports += [helper.make_opsetid(domain, 1) for domain in domains]
    model = helper.make_model(graph, opset_imports=imports)
    path = str(tmp_path / "model.onnx")
    onnx.save(model, path)
    saved = api.run_with_inputs(path, inputs, tmp_path)
    return path, {name: saved[name] for name, _ in outputs}


def quantize_reference(x, scale, zero_point, dtype):
    info = np.iinfo(dtype)
    q = np.rint(x / scale) + zero_point.astype(np.float64)
    return np.clip(q, info.min, info.max).astype(dtype)


# name: (zero point type, per-axis?, opset)
QUANTIZE_CASES = {
    "uint8_tensor": (TensorProto.UINT8, False, 13),
    "int8_axis": (TensorProto.INT8, True, 13),
    "uint16_axis": (TensorProto.UINT16, True, 21),
    "int16_tensor": (TensorProto.INT16, False, 21),
}


@pytest.mark.parametrize("name", sorted(QUANTIZE_CASES))
def test_quantize_dequantize(name, tmp_path, needs_ort):
    """x -> QuantizeLinear -> q -> DequantizeLinear -> y: q saturates and
    rounds half to even, y = (q - zero point) * scale; both as ONNX Runtime
    computes them."""
    dtype, per_axis, opset = QUANTIZE_CASES[name]
    np_type = NUMPY_TYPES[dtype]
    info = np.iinfo(np_type)
    shape = [X.shape[1]] if per_axis else []
    scale = (np.full(shape, 0.5) * (np.arange(1, 4) if per_axis else 1)
             ).astype(np.float32)
    zero_point = np.full(shape, info.min // 2 + info.max // 4 + 3, np_type)
    x = X.copy()
    x.flat[:4] = [0.25, 0.75, -0.25, 1e9]  # ties to even, saturation
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"],
                              axis=1),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"],
                              axis=1)]
    inits = [numpy_helper.from_array(scale, "scale"),
             numpy_helper.from_array(zero_point, "zp")]
    path, got = run_model(tmp_path, nodes, {"x": x},
                          [("q", dtype), ("y", TensorProto.FLOAT)], inits,
                          opset)
    broadcast = (lambda v: v.reshape(1, -1, 1, 1)) if per_axis else np.asarray
    expected_q = quantize_reference(x, broadcast(scale),
                                    broadcast(zero_point), np_type)
    assert got["q"].dtype == np_type
    np.testing.assert_array_equal(got["q"], expected_q)
    assert got["q"].min() == info.min or got["q"].max() == info.max
    np.testing.assert_allclose(
        got["y"], (expected_q.astype(np.float32) - broadcast(zero_point))
        * broadcast(scale), rtol=1e-6)
    reference = ort.run(path, {"x": x})
    np.testing.assert_array_equal(got["q"], reference["q"])
    np.testing.assert_allclose(got["y"], reference["y"], rtol=1e-6)


@pytest.mark.parametrize("saturate", [1, 0])
def test_quantize_to_fp8(saturate, tmp_path, needs_ort):
    """Opset 19's FP8 QuantizeLinear: x / scale rounded to float8e4m3fn,
    saturating to 448 or (saturate=0) NaN, and back, as ONNX Runtime."""
    scale = np.array(0.25, np.float32)
    zero_point = onnx.TensorProto(name="zp", data_type=FLOAT8E4M3FN,
                                  raw_data=b"\0")
    x = X.copy()
    x.flat[:2] = [1e4, -1e4]
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"],
                              saturate=saturate),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"])]
    path, got = run_model(
        tmp_path, nodes, {"x": x}, [("y", TensorProto.FLOAT)],
        [numpy_helper.from_array(scale, "scale"), zero_point], 19)
    reference = ort.run(path, {"x": x})["y"]
    np.testing.assert_array_equal(got["y"], reference)
    if saturate:
        assert got["y"].flat[0] == 448 * 0.25 and got["y"].flat[1] == -112
    else:
        assert np.isnan(got["y"].flat[:2]).all()
    # FP8 keeps 3 significand bits: within 1/16 of x, relatively.
    inside = np.abs(x) < 100
    np.testing.assert_allclose(got["y"][inside], x[inside], rtol=1 / 16,
                               atol=0.25 * 2 ** -9)


@pytest.mark.parametrize("kind", ["mixed", "positive", "zeros"])
def test_dynamic_quantize_linear(kind, tmp_path, needs_ort):
    """The range widened to hold 0, scale (max - min) / 255, the zero point
    and x quantized; an all-zero x gives scale 0 and zeros."""
    x = {"mixed": X, "positive": np.abs(X) + 1,
         "zeros": np.zeros_like(X)}[kind]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"],
                              ["y", "scale", "zp"])]
    path, got = run_model(
        tmp_path, nodes, {"x": x},
        [("y", TensorProto.UINT8), ("scale", TensorProto.FLOAT),
         ("zp", TensorProto.UINT8)], [], 13)
    low, high = min(x.min(), 0), max(x.max(), 0)
    scale = np.float32((high - low) / 255)
    assert got["scale"] == pytest.approx(scale, rel=1e-6)
    if kind == "zeros":
        assert got["zp"] == 0 and not got["y"].any()
        return
    zero_point = np.uint8(np.clip(np.rint(-low / scale), 0, 255))
    assert got["zp"] == zero_point
    np.testing.assert_array_equal(
        got["y"], quantize_reference(x, scale, zero_point, np.uint8))
    reference = ort.run(path, {"x": x})
    for name in ("y", "scale", "zp"):
        np.testing.assert_array_equal(got[name], reference[name])


def test_fake_quant_matches_pytorch(tmp_path):
    """FakeQuant is torch.fake_quantize_per_tensor_affine, its mask where
    the gradient passes, and FakeQuantGrad that gradient."""
    scale, zero_point, low, high = 0.75, 10.0, -20, 100
    x = X.copy()
    x.flat[:3] = [0.375 * 2, 200, -200]
    dy = RNG.randn(*X.shape).astype(np.float32)
    nodes = [
        helper.make_node("FakeQuant", ["x", "scale", "zp"], ["y", "mask"],
                         domain="com.microsoft", quant_min=low,
                         quant_max=high),
        helper.make_node("FakeQuantGrad", ["dy", "mask"], ["dx"],
                         domain="com.microsoft")]
    inits = [numpy_helper.from_array(np.array(scale, np.float32), "scale"),
             numpy_helper.from_array(np.array(zero_point, np.float32), "zp")]
    _, got = run_model(
        tmp_path, nodes, {"x": x, "dy": dy},
        [("y", TensorProto.FLOAT), ("mask", TensorProto.BOOL),
         ("dx", TensorProto.FLOAT)], inits, 17, domains=["com.microsoft"])
    xt = torch.from_numpy(x).requires_grad_()
    yt = torch.fake_quantize_per_tensor_affine(xt, scale, int(zero_point),
                                               low, high)
    yt.backward(torch.from_numpy(dy))
    np.testing.assert_allclose(got["y"], yt.detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got["dx"], xt.grad.numpy())
    assert 0 < got["mask"].mean() < 1
    np.testing.assert_array_equal(got["mask"], xt.grad.numpy() != 0)
