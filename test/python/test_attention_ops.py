"""Opset 23's Attention and RotaryEmbedding through amp-run
(onnxg-expand-attention): every attribute against ONNX Runtime on the CPU
and in the CUDA backend's grid loops, a mask shorter than the keys against
ONNX's reference formula, and the FP16 pipeline on an attention block."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort

RNG = np.random.RandomState(0)


def f32(*shape):
    return RNG.randn(*shape).astype(np.float32)


def rope_cache(positions, half):
    angles = np.arange(positions)[:, None] / 10000 ** (
        np.arange(half) / half)[None]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


COS8, SIN8 = rope_cache(16, 8)
COS4, SIN4 = rope_cache(16, 4)
CACHE8 = [numpy_helper.from_array(COS8, "c"), numpy_helper.from_array(SIN8, "s")]
CACHE4 = [numpy_helper.from_array(COS4, "c"), numpy_helper.from_array(SIN4, "s")]
POSITIONS = RNG.randint(0, 16, (2, 5)).astype(np.int64)

# name: (node, inputs, outputs, initializers)
CASES = {
    "4d_value_size": (
        helper.make_node("Attention", ["q", "k", "v"], ["y"]),
        dict(q=f32(2, 3, 4, 8), k=f32(2, 3, 6, 8), v=f32(2, 3, 6, 10)),
        ["y"], []),
    "gqa_causal": (
        helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1),
        dict(q=f32(2, 6, 5, 8), k=f32(2, 2, 5, 8), v=f32(2, 2, 5, 8)),
        ["y"], []),
    "3d_heads_scale": (
        helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=4,
                         kv_num_heads=2, scale=0.3),
        dict(q=f32(2, 5, 32), k=f32(2, 7, 16), v=f32(2, 7, 16)), ["y"], []),
    "bool_mask": (
        helper.make_node("Attention", ["q", "k", "v", "m"], ["y"]),
        dict(q=f32(2, 3, 4, 8), k=f32(2, 3, 6, 8), v=f32(2, 3, 6, 8),
             m=(RNG.rand(2, 1, 4, 6) > 0.3) | np.eye(4, 6, dtype=bool)),
        ["y"], []),
    "float_mask_softcap": (
        helper.make_node("Attention", ["q", "k", "v", "m"], ["y"],
                         softcap=2.0),
        dict(q=f32(2, 3, 4, 8), k=f32(2, 3, 6, 8), v=f32(2, 3, 6, 8),
             m=f32(4, 6)), ["y"], []),
    "past_causal": (
        helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"],
                         ["y", "present_k", "present_v"], is_causal=1),
        dict(q=f32(1, 2, 3, 8), k=f32(1, 2, 3, 8), v=f32(1, 2, 3, 8),
             pk=f32(1, 2, 4, 8), pv=f32(1, 2, 4, 8)),
        ["y", "present_k", "present_v"], []),
    "rope_4d_positions": (
        helper.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"]),
        dict(x=f32(2, 3, 5, 16), p=POSITIONS), ["y"], CACHE8),
    "rope_3d_interleaved_partial": (
        helper.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"],
                         interleaved=1, num_heads=3, rotary_embedding_dim=8),
        dict(x=f32(2, 5, 48), p=POSITIONS), ["y"], CACHE4),
    "rope_caches_per_batch": (
        helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"]),
        dict(x=f32(2, 3, 5, 16), c=np.stack([COS8[:5], COS8[3:8]]),
             s=np.stack([SIN8[:5], SIN8[3:8]])), ["y"], []),
}


def save_model(path, nodes, inputs, outputs, initializers=(), elem=None,
               opset=23, ir_version=10):
    """A model of `nodes` with `inputs` ({name: array}) and `outputs`
    (names, of type `elem`, float by default; shapes left to inference)."""
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "nodes",
        [info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype],
              value.shape) for name, value in inputs.items()],
        [info(name, elem or TensorProto.FLOAT, None) for name in outputs],
        list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    onnx.save(model, str(path))
    return str(path)


def run_amp(path, inputs, tmp_path, flags=(), pipeline=None):
    saved = api.run_with_inputs(path, inputs, tmp_path, amp_pipeline=pipeline,
                                args=flags)
    return saved.__getitem__


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnx_runtime(name, grid, tmp_path, needs_ort):
    node, inputs, outputs, inits = CASES[name]
    path = save_model(tmp_path / "model.onnx", [node], inputs, outputs, inits)
    got = run_amp(path, inputs, tmp_path, ["--grid-loops"] if grid else [])
    reference = ort.run(path, inputs)
    for output in outputs:
        np.testing.assert_allclose(got(output), reference[output], rtol=1e-5,
                                   atol=1e-6, err_msg=output)


def reference_attention(q, k, v, bias):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + bias
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return (scores / scores.sum(-1, keepdims=True)) @ v


def test_mask_shorter_than_the_keys(tmp_path):
    """A mask covering the present keys only (ONNX's reference pads it with
    -inf over the past ones; ONNX Runtime refuses it)."""
    q, k, v = f32(1, 2, 3, 8), f32(1, 2, 3, 8), f32(1, 2, 3, 8)
    past_k, past_v, mask = f32(1, 2, 4, 8), f32(1, 2, 4, 8), f32(3, 5)
    node = helper.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"],
                            ["y"])
    inputs = dict(q=q, k=k, v=v, m=mask, pk=past_k, pv=past_v)
    got = run_amp(save_model(tmp_path / "m.onnx", [node], inputs, ["y"]),
                  inputs, tmp_path)("y")
    bias = np.concatenate([mask, np.full((3, 2), -np.inf, np.float32)], -1)
    expected = reference_attention(q, np.concatenate([past_k, k], 2), np.
                                   concatenate([past_v, v], 2), bias)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_attention_block_in_fp16(tmp_path, needs_ort):
    """Projections, Attention (3-D, GQA, causal) and RotaryEmbedding: the
    FP16 pipeline decides the Attention node low, amp-run computes it within
    FP16's rounding of FP32 (not the same bits), and the converted file
    runs in ONNX Runtime."""
    hidden, heads, kv_heads, sequence = 256, 8, 2, 64
    head = hidden // heads
    cos, sin = rope_cache(sequence, head // 2)
    weights = {name: (f32(hidden, size) / np.sqrt(hidden))
               for name, size in (("wq", hidden), ("wk", kv_heads * head),
                                  ("wv", kv_heads * head), ("wo", hidden))}
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "pos"],
                         ["q_rot"], num_heads=heads),
        helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "pos"],
                         ["k_rot"], num_heads=kv_heads),
        helper.make_node("Attention", ["q_rot", "k_rot", "v"], ["a"],
                         q_num_heads=heads, kv_num_heads=kv_heads,
                         is_causal=1),
        helper.make_node("MatMul", ["a", "wo"], ["y"])]
    inits = [numpy_helper.from_array(value, name)
             for name, value in weights.items()]
    inits += [numpy_helper.from_array(cos, "cos"),
              numpy_helper.from_array(sin, "sin"),
              numpy_helper.from_array(
                  np.tile(np.arange(sequence), (4, 1)).astype(np.int64),
                  "pos")]
    inputs = dict(x=f32(4, sequence, hidden))
    path = save_model(tmp_path / "block.onnx", nodes, inputs, ["y"], inits)
    (tmp_path / "fp32").mkdir()
    fp32 = run_amp(path, inputs, tmp_path / "fp32")("y")
    # At this size the cost model may keep FP32; the op classes force FP16.
    forced = "MatMul:always,Attention:always"
    converted, report = api.convert(path, "fp16", op_class=forced)
    decided = {d["op_type"]: d["precision"] for d in report["decisions"]}
    assert decided["Attention"] == "f16", decided
    (tmp_path / "fp16").mkdir()
    fp16 = run_amp(path, inputs, tmp_path / "fp16",
                   pipeline=f"precision=fp16 op-class={forced}")("y")
    assert not np.array_equal(fp16, fp32)
    np.testing.assert_allclose(fp16, fp32, rtol=2e-2, atol=2e-2)
    converted_path = str(tmp_path / "block.fp16.onnx")
    onnx.save(converted, converted_path)
    reference = ort.run(converted_path, inputs)["y"]
    np.testing.assert_allclose(reference, fp32, rtol=2e-2, atol=2e-2)
