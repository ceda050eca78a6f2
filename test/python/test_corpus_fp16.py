"""FP16 conversion of real forward graphs of ../shared/corpus, run in ONNX
Runtime against the FP32 graph (bench/corpus_fp16.py measures all of them
and compares with onnxconverter-common)."""
import os
import sys

import onnx
import pytest

from amp_opt import AmpOptError, api, casts, ort

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import corpus_fp16  # noqa: E402

EXTERNAL = os.path.join(corpus_fp16.CORPUS, "external")

# (path under external/, forced): forced sends every MatMul, Gemm and Conv
# to FP16, which these small graphs would not pay for on the cost model.
MODELS = [
    ("onnxruntime_onnxruntime-qnn/java/testdata/cnn_mnist_pytorch.onnx", True),
    ("onnx_onnx/onnx/backend/test/data/light/light_densenet121.onnx", True),
    ("onnx_onnx/onnx/backend/test/data/light/light_resnet50.onnx", True),
    ("onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/"
     "bert_toy_optimized.onnx", True),
    ("onnxruntime_onnxruntime-qnn/onnxruntime/test/python/transformers/"
     "test_data/models/gpt2_past.onnx", True),
    ("onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/transform/"
     "model_parallel/mlp_megatron_basic_test.onnx", True),
    ("onnx_onnx/onnx/backend/test/data/light/light_inception_v2.onnx", False),
]


def _corpus_file_and_amp_opt(path):
    """The corpus file at `path` under external/ and amp-opt; skips the test
    when either is missing."""
    path = os.path.join(EXTERNAL, path)
    if not os.path.isfile(path):
        pytest.skip(f"corpus file missing: {path} (../shared/corpus absent)")
    try:
        return path, api.find_amp_opt()
    except AmpOptError as error:
        pytest.skip(str(error))


@pytest.mark.parametrize("path,forced", MODELS,
                         ids=[os.path.basename(m[0]) for m in MODELS])
def test_fp16_graph_matches_fp32_in_ort(path, forced, tmp_path, needs_ort):
    path, amp_opt = _corpus_file_and_amp_opt(path)
    out, _, report = corpus_fp16.convert_ours(
        amp_opt, path, str(tmp_path), corpus_fp16.FORCED if forced else "")
    assert report["ops"]["low_precision"] > 0
    model, converted = onnx.load(path), onnx.load(out)
    if corpus_fp16.checker_passes(model):
        onnx.checker.check_model(converted)
    assert casts.lossy_round_trips(converted) == []
    feeds = corpus_fp16.random_feeds(model)
    error = corpus_fp16.relative_error(ort.run(path, feeds),
                                       ort.run(out, feeds))
    assert error < 2e-3


def _cast_chain(source, via, to):
    from onnx import helper
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=via, name="down"),
         helper.make_node("Cast", ["y"], ["z"], to=to, name="up")], "g",
        [helper.make_tensor_value_info("x", source, [2])],
        [helper.make_tensor_value_info("z", to, [2])])
    return helper.make_model(graph)


def test_lossy_round_trips_are_counted():
    from onnx import TensorProto as T
    assert casts.lossy_round_trips(_cast_chain(T.FLOAT, T.FLOAT16, T.FLOAT)) \
        == [("down", "up")]
    assert casts.lossy_round_trips(
        _cast_chain(T.FLOAT16, T.FLOAT, T.FLOAT16)) == []
    assert casts.count_casts(_cast_chain(T.FLOAT, T.FLOAT16, T.FLOAT)) == 2


@pytest.mark.parametrize("path", [m[0] for m in MODELS],
                         ids=[os.path.basename(m[0]) for m in MODELS])
def test_bf16_graph_is_valid_onnx(path, tmp_path):
    """BF16 with every GEMM and convolution forced low writes a model that
    onnx.checker accepts: ops whose schema at their opset has no bfloat16
    (MatMul before opset 13) stay FP32. (ONNX Runtime's CPU provider has no
    BF16 GEMM kernels, so the numbers are checked in FP16 above.)"""
    path, amp_opt = _corpus_file_and_amp_opt(path)
    out, _, _ = corpus_fp16.convert_ours(amp_opt, path, str(tmp_path),
                                         corpus_fp16.FORCED, precision="bf16")
    model, converted = onnx.load(path), onnx.load(out)
    if corpus_fp16.checker_passes(model):
        onnx.checker.check_model(converted, full_check=True)
    assert casts.lossy_round_trips(converted) == []
