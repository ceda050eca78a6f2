"""Mixed precision inside ONNX subgraphs: a Loop whose body multiplies its
carried state by a weight, and an If whose branches hold GEMMs. The GEMMs
go FP16 inside the bodies, loop-carried values and branch outputs keep
their FP32 type (one precision per carried value), the weight's cast is
made once outside the loop, and ONNX Runtime agrees with the FP32 graph."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import AmpOptError, api, casts, ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                "bench"))

import corpus_fp16  # noqa: E402

F = TensorProto.FLOAT


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _loop_and_if_model():
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(
        (rng.standard_normal((16, 16)) / 4).astype(np.float32), "w")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["h", "w"], ["hw"], name="loop_matmul"),
         helper.make_node("Tanh", ["hw"], ["h_out"], name="loop_tanh")],
        "loop_body",
        [_vi("i", TensorProto.INT64, []), _vi("cond_in", TensorProto.BOOL, []),
         _vi("h", F, [8, 16])],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("h_out", F, [8, 16])])
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["z", "w"], ["t"], name="then_matmul")],
        "then_body", [], [_vi("t", F, [8, 16])])
    else_g = helper.make_graph(
        [helper.make_node("Relu", ["z"], ["e"], name="else_relu")],
        "else_body", [], [_vi("e", F, [8, 16])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["z"], name="loop",
                          body=body),
         helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                          else_branch=else_g)],
        "subgraphs",
        [_vi("x", F, [8, 16]), _vi("n", TensorProto.INT64, []),
         _vi("c", TensorProto.BOOL, [])],
        [_vi("y", F, [8, 16])], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _subgraph(model, node_name, attribute):
    node = next(n for n in model.graph.node if n.name == node_name)
    return next(a.g for a in node.attribute if a.name == attribute)


def test_gemms_in_subgraphs_go_fp16_and_match_fp32(tmp_path, needs_ort):
    try:
        amp_opt = api.find_amp_opt()
    except AmpOptError as error:
        pytest.skip(str(error))
    path, out = str(tmp_path / "model.onnx"), str(tmp_path / "amp.onnx")
    onnx.save(_loop_and_if_model(), path)
    subprocess.run([amp_opt, path, "-o", out,
                    f"--amp-pipeline=precision=fp16 {corpus_fp16.FORCED}"],
                   check=True, capture_output=True)
    converted = onnx.load(out)
    onnx.checker.check_model(converted, full_check=True)
    assert casts.lossy_round_trips(converted) == []

    # The weight is converted once, outside the loop (an initializer cast in
    # place), and the loop body casts its carried state at its edges.
    loop_body = _subgraph(converted, "loop", "body")
    matmul = next(n for n in loop_body.node if n.name == "loop_matmul")
    assert [n.op_type for n in loop_body.node].count("Cast") == 2
    assert "w" not in [i for n in loop_body.node if n.op_type == "Cast"
                       for i in n.input]
    then_body = _subgraph(converted, "if", "then_branch")
    assert "Cast" in [n.op_type for n in then_body.node]
    weights = {i.name: i for i in converted.graph.initializer}
    assert matmul.input[1] == "w"
    assert weights["w"].data_type == TensorProto.FLOAT16
    # Loop-carried values and branch outputs keep their type.
    assert loop_body.output[1].type.tensor_type.elem_type == F
    assert then_body.output[0].type.tensor_type.elem_type == F

    rng = np.random.default_rng(1)
    for branch in (True, False):
        feeds = {"x": rng.standard_normal((8, 16)).astype(np.float32),
                 "n": np.array(3, dtype=np.int64),
                 "c": np.array(branch)}
        error = corpus_fp16.relative_error(ort.run(path, feeds),
                                           ort.run(out, feeds))
        assert error < 2e-3, f"branch {branch}: error {error}"


def test_amp_run_runs_loops_and_ifs(tmp_path, needs_ort):
    """amp-run lowers the Loop (its trip count a constant: unrolled) and the
    If (its condition a graph input: an scf.if), in FP32 and through the
    FP16 pipeline, whose GEMMs inside the bodies change the result within
    AMP's bounds; ONNX Runtime gives the reference on both branches."""
    model = _loop_and_if_model()
    trip_count = next(i for i in model.graph.input if i.name == "n")
    model.graph.input.remove(trip_count)
    model.graph.initializer.append(
        numpy_helper.from_array(np.array(3, np.int64), "n"))
    path = str(tmp_path / "model.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(2)
    for branch in (True, False):
        x = rng.standard_normal((8, 16)).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "c.npy", np.array(branch))
        reference = ort.run(path, {"x": x, "c": np.array(branch)})["y"]
        outputs = {}
        for precision, pipeline in (
                ("fp32", None),
                ("fp16", f"precision=fp16 {corpus_fp16.FORCED}")):
            folder = tmp_path / f"{precision}-{branch}"
            api.train(path, 1, amp_pipeline=pipeline, args=[
                "--input", f"x={tmp_path / 'x.npy'}",
                "--input", f"c={tmp_path / 'c.npy'}",
                "--save-outputs", str(folder)])
            outputs[precision] = api.load_saved(folder, "y")
        assert not np.allclose(reference, x), "the loop changed nothing"
        np.testing.assert_allclose(outputs["fp32"], reference, rtol=1e-5,
                                   atol=1e-5)
        assert not np.array_equal(outputs["fp16"], outputs["fp32"]), \
            "the FP16 pipeline converted nothing"
        error = corpus_fp16.relative_error({"y": reference},
                                           {"y": outputs["fp16"]})
        assert error < 2e-3, f"branch {branch}: error {error}"


def test_gemm_in_scan_goes_fp16(tmp_path, needs_ort):
    """A Scan's body GEMM goes FP16 with casts inside the body, its state
    and scan outputs keep FP32; ONNX Runtime on the converted file and
    amp-run through the FP16 pipeline agree with the FP32 graph within
    AMP's bounds."""
    from test_control_flow import _amp_run_outputs, _scan_model
    path, out = str(tmp_path / "scan.onnx"), str(tmp_path / "amp.onnx")
    onnx.save(_scan_model(6), path)
    pipeline = f"precision=fp16 {corpus_fp16.FORCED}"
    subprocess.run([api.find_amp_opt(), path, "-o", out,
                    f"--amp-pipeline={pipeline}"], check=True,
                   capture_output=True)
    converted = onnx.load(out)
    onnx.checker.check_model(converted, full_check=True)
    body = _subgraph(converted, next(
        n.name for n in converted.graph.node if n.op_type == "Scan"), "body")
    matmul = next(n for n in body.node if n.op_type == "MatMul")
    casts_to_fp16 = {n.output[0] for n in body.node if n.op_type == "Cast"
                     and helper.get_attribute_value(n.attribute[0]) ==
                     TensorProto.FLOAT16}
    assert matmul.input[0] in casts_to_fp16, [n.op_type for n in body.node]
    assert {o.type.tensor_type.elem_type for o in body.output} == {F}

    rng = np.random.default_rng(4)
    feeds = {"h0": rng.standard_normal((3, 4)).astype(np.float32),
             "X": rng.standard_normal((6, 3, 4)).astype(np.float32),
             "XR": rng.standard_normal((3, 4, 6)).astype(np.float32)}
    reference = ort.run(path, feeds)
    assert corpus_fp16.relative_error(reference, ort.run(out, feeds)) < 2e-3
    got = _amp_run_outputs(path, tmp_path, feeds, reference,
                           amp_pipeline=pipeline)
    assert not np.array_equal(got["Y"], reference["Y"]), \
        "the FP16 pipeline converted nothing"
    assert corpus_fp16.relative_error(reference, got) < 2e-3
