"""amp-run reproduces the ONNX backend tests of the training ops in the
corpus with their reference inputs and expected outputs (test_data_set_0):
the preview-training optimizers (Adagrad, Momentum, Nesterov, Adam), and
the Gradient op (onnxg-expand-gradients) of the `simple` tests."""
import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from amp_opt import api

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND_TESTS = os.path.normpath(os.path.join(
    HERE, "..", "..", "..", "shared", "corpus", "external", "onnx_onnx",
    "onnx", "backend", "test", "data"))
NODE_TESTS = os.path.join(BACKEND_TESTS, "node")
CASES = sorted(os.path.basename(os.path.dirname(d)) for d in glob.glob(
    os.path.join(NODE_TESTS, "test_*", "test_data_set_0")))
GRADIENT_CASES = sorted(os.path.basename(os.path.dirname(d)) for d in glob.glob(
    os.path.join(BACKEND_TESTS, "simple", "test_gradient_*",
                 "test_data_set_0")))


def read_tensor(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


@pytest.mark.skipif(not CASES, reason=f"the corpus is absent ({NODE_TESTS})")
def test_cases_are_the_optimizers():
    # The corpus ships data only for the optimizer tests; a new case must
    # show up here rather than go untested.
    names = {case.split("_")[1] for case in CASES}
    assert names == {"adagrad", "adam", "momentum", "nesterov"}, CASES


@pytest.mark.skipif(not GRADIENT_CASES,
                    reason=f"the corpus is absent ({BACKEND_TESTS})")
def test_gradient_cases_are_there():
    assert GRADIENT_CASES == ["test_gradient_of_add",
                              "test_gradient_of_add_and_mul"]


@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_node_test(case, tmp_path):
    run_backend_test(os.path.join(NODE_TESTS, case), tmp_path)


# With FP16 dynamic loss scaling, Gradient differentiates the scaled loss
# (amp.scale_loss) and the gradients are unscaled: the same outputs.
@pytest.mark.parametrize("amp_pipeline", [None, "precision=fp16"])
@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_onnx_backend_gradient_test(case, amp_pipeline, tmp_path):
    run_backend_test(os.path.join(BACKEND_TESTS, "simple", case), tmp_path,
                     amp_pipeline)


def run_backend_test(folder, tmp_path, amp_pipeline=None):
    model = onnx.load(os.path.join(folder, "model.onnx"))
    data = os.path.join(folder, "test_data_set_0")
    inputs = {graph_input.name: read_tensor(os.path.join(data,
                                                         f"input_{i}.pb"))
              for i, graph_input in enumerate(model.graph.input)}
    saved = api.run_with_inputs(os.path.join(folder, "model.onnx"), inputs,
                                tmp_path, amp_pipeline=amp_pipeline)
    for i, output in enumerate(model.graph.output):
        expected = read_tensor(os.path.join(data, f"output_{i}.pb"))
        actual = saved[output.name]
        assert actual.dtype == expected.dtype, output.name
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7,
                                   err_msg=output.name)
