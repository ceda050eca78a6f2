"""TopK along long axes (over 128 elements: a bitonic sorting network; the
shorter ones count ranks): values and indices equal a stable sort's, ties
by the lower index as ONNX specifies and NaN largest as in PyTorch, on the
CPU and as the CUDA backend's kernels (grid loops), and ONNX Runtime's
where there is no NaN (it orders NaNs otherwise)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api, ort
from test_attention_ops import save_model

RNG = np.random.RandomState(0)


def with_nans(x, where):
    x = x.copy()
    x[where] = np.nan
    return x


# name: (x, k, axis, largest)
CASES = {
    "random_1000_top17": (RNG.randn(3, 1000).astype(np.float32), 17, -1, 1),
    "ties_300_all_smallest": (RNG.randint(0, 5, (2, 300)).astype(np.float32),
                              300, 1, 0),
    "axis0_257": (RNG.randint(0, 9, (257, 3)).astype(np.float32), 40, 0, 1),
    "power_of_two_256": (RNG.randn(1, 256).astype(np.float32), 256, 1, 1),
    "nans_largest": (with_nans(RNG.randn(2, 200).astype(np.float32),
                               (0, [3, 50, 199])), 10, 1, 1),
    "nans_smallest": (with_nans(RNG.randn(2, 200).astype(np.float32),
                                (1, [0, 7])), 200, 1, 0),
    "short_rank_counting": (RNG.randint(0, 3, (4, 9)).astype(np.float32), 5,
                            1, 1),
}


def reference(x, k, axis, largest):
    """A stable sort's first k: ties by the lower index, NaN largest."""
    moved = np.moveaxis(x, axis, -1)
    key = np.where(np.isnan(moved), np.inf, moved)
    order = np.argsort(-key if largest else key, axis=-1, kind="stable")
    indices = np.moveaxis(order[..., :k], -1, axis)
    return np.take_along_axis(x, indices, axis), indices


def save_topk(path, x, k, axis, largest):
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis,
                            largest=largest)
    save_model(path, [node], {"x": x}, ["v"],
               [numpy_helper.from_array(np.array([k], np.int64), "k")],
               opset=17, ir_version=8)
    # The indices output is int64.
    model = onnx.load(str(path))
    model.graph.output.append(helper.make_tensor_value_info(
        "i", TensorProto.INT64, None))
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.parametrize("grid", [False, True], ids=["cpu", "grid"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_topk_is_a_stable_sort(name, grid, tmp_path):
    x, k, axis, largest = CASES[name]
    path = save_topk(tmp_path / "topk.onnx", x, k, axis, largest)
    got = api.run_with_inputs(path, {"x": x}, tmp_path,
                              args=["--grid-loops"] if grid else [])
    values, indices = reference(x, k, axis, largest)
    np.testing.assert_array_equal(got["i"], indices)
    np.testing.assert_array_equal(got["v"], values)


@pytest.mark.parametrize("name", [name for name in sorted(CASES)
                                  if "nan" not in name])
def test_topk_matches_onnx_runtime(name, tmp_path, needs_ort):
    x, k, axis, largest = CASES[name]
    path = save_topk(tmp_path / "topk.onnx", x, k, axis, largest)
    got = api.run_with_inputs(path, {"x": x}, tmp_path)
    expected = ort.run(path, {"x": x})
    np.testing.assert_array_equal(got["i"], expected["i"])
    np.testing.assert_array_equal(got["v"], expected["v"])
