"""amp-run reproduces the ONNX backend tests of the training ops in the
corpus: the preview-training optimizers (Adagrad, Momentum, Nesterov, Adam)
with their reference inputs and expected outputs (test_data_set_0)."""
import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from amp_opt import api

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_TESTS = os.path.normpath(os.path.join(
    HERE, "..", "..", "..", "shared", "corpus", "external", "onnx_onnx",
    "onnx", "backend", "test", "data", "node"))
CASES = sorted(os.path.basename(os.path.dirname(d)) for d in glob.glob(
    os.path.join(NODE_TESTS, "test_*", "test_data_set_0")))


def read_tensor(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


@pytest.mark.skipif(not CASES, reason=f"the corpus is absent ({NODE_TESTS})")
def test_cases_are_the_optimizers():
    # The corpus ships data only for the optimizer tests; a new case must
    # show up here rather than go untested.
    names = {case.split("_")[1] for case in CASES}
    assert names == {"adagrad", "adam", "momentum", "nesterov"}, CASES


@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_node_test(case, tmp_path):
    folder = os.path.join(NODE_TESTS, case)
    model = onnx.load(os.path.join(folder, "model.onnx"))
    data = os.path.join(folder, "test_data_set_0")
    args = ["--save-outputs", str(tmp_path / "out")]
    for i, graph_input in enumerate(model.graph.input):
        path = str(tmp_path / f"input_{i}.npy")
        np.save(path, read_tensor(os.path.join(data, f"input_{i}.pb")))
        args += ["--input", f"{graph_input.name}={path}"]
    api.train(os.path.join(folder, "model.onnx"), 1, args=args)
    for i, output in enumerate(model.graph.output):
        expected = read_tensor(os.path.join(data, f"output_{i}.pb"))
        actual = np.load(tmp_path / "out" / f"{output.name}.npy")
        assert actual.dtype == expected.dtype, output.name
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7,
                                   err_msg=output.name)
