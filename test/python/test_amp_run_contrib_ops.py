"""ONNX Runtime's training contrib ops that amp-run executes, checked
against numpy: ConcatTraining (with its lengths output), SliceGrad and
DropoutGrad."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api


def test_contrib_training_ops_match_numpy(tmp_path):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    y = np.ones((4, 2), np.float32)
    dy = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    mask = np.array([[True, False, True, True, False, True]] * 4)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("ConcatTraining", ["x", "y"], ["c", "lengths"],
                         domain=ms, axis=1),
        helper.make_node("SliceGrad", ["dy", "shape", "starts", "ends",
                                       "axes", "steps"], ["dx"], domain=ms),
        helper.make_node("DropoutGrad", ["x", "mask", "ratio"], ["dd"],
                         domain=ms),
    ]
    constants = {"shape": [4, 6], "starts": [1, 0], "ends": [3, 6],
                 "axes": [0, 1], "steps": [1, 2]}
    inits = [numpy_helper.from_array(np.array(v, np.int64), k)
             for k, v in constants.items()]
    inits.append(numpy_helper.from_array(np.array(0.25, np.float32), "ratio"))
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "contrib",
        [info("x", TensorProto.FLOAT, [4, 6]),
         info("y", TensorProto.FLOAT, [4, 2]),
         info("dy", TensorProto.FLOAT, [2, 3]),
         info("mask", TensorProto.BOOL, [4, 6])],
        [info("c", TensorProto.FLOAT, [4, 8]),
         info("lengths", TensorProto.INT64, [2]),
         info("dx", TensorProto.FLOAT, [4, 6]),
         info("dd", TensorProto.FLOAT, [4, 6])], inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    path = str(tmp_path / "contrib.onnx")
    onnx.save(model, path)
    args = ["--save-outputs", str(tmp_path / "out")]
    for name, value in dict(x=x, y=y, dy=dy, mask=mask).items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    api.train(path, 1, args=args)

    def out(name):
        return np.load(tmp_path / "out" / f"{name}.npy")

    np.testing.assert_array_equal(out("c"), np.concatenate([x, y], axis=1))
    np.testing.assert_array_equal(out("lengths"), [6, 2])
    expected = np.zeros((4, 6), np.float32)
    expected[1:3, 0:6:2] = dy
    np.testing.assert_array_equal(out("dx"), expected)
    np.testing.assert_allclose(out("dd"), np.where(mask, x / 0.75, 0),
                               rtol=1e-6)
