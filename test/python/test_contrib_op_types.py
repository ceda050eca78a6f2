"""ONNX Runtime's contrib ops typed without value_info
(lib/Target/ONNX/ContribSchemas.cpp): libonnx has no schema for them, so
a training graph that ONNX Runtime wrote without value_info (the older
training API's gradient_graph.onnx) kept them, and all they feed, untyped:
its whole backward FP32 under --amp-pipeline. The importer now types
them as ONNX Runtime does. Checked three ways: every contrib op of the op
table on a graph whose expected types are written by hand; the corpus's
ONNX Runtime graphs and our ONNX Runtime-style artifacts with their
value_info removed give the types they give with it; and the corpus's
gradient_graph.onnx converts its backward to FP16 and trains."""
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_opt import api

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXTERNAL = os.path.join(REPO, "..", "shared", "corpus", "external")
AMP_OPT = os.path.join(REPO, "build", "bin", "amp-opt")
MS = "com.microsoft"
F, H, I64, B = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64,
                TensorProto.BOOL)


def exported_types(model, tmp_path, name):
    """The types amp-opt's plain import and export give every value of
    `model`: {value: (element type, dims)}, a dim an int, a name or None."""
    source, output = tmp_path / f"{name}.onnx", tmp_path / f"{name}.out.onnx"
    onnx.save(model, source)
    proc = subprocess.run([AMP_OPT, str(source), "-o", str(output)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    graph = onnx.load(output).graph
    types = {}
    for info in [*graph.value_info, *graph.output]:
        tensor = info.type.tensor_type
        dims = None
        if tensor.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else
                    (d.dim_param or None) for d in tensor.shape.dim]
        types[info.name] = (tensor.elem_type, dims)
    return types


def without_value_info(model):
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    del stripped.graph.value_info[:]
    return stripped


def contrib_ops_graph():
    """A node per typing rule, each output's type as ONNX Runtime gives it
    (its contrib op schemas), in `expected`."""
    inputs, initializers, nodes, expected = [], [], [], {}

    def given(name, kind, shape):
        inputs.append(helper.make_tensor_value_info(name, kind, shape))
        return name

    def constant(name, values):
        initializers.append(numpy_helper.from_array(
            np.array(values, np.int64), name))
        return name

    def node(op, ins, outs, domain=MS, **attrs):
        nodes.append(helper.make_node(op, ins, [o for o, _, _ in outs],
                                      domain=domain, **attrs))
        for name, kind, shape in outs:
            if name:
                expected[name] = (kind, shape)

    x = given("x", F, [4, 8])
    xh = given("xh", H, [4, 8])
    image = given("image", F, [4, 3, 6, 6])
    node("Gelu", [xh], [("gelu", H, [4, 8])])
    node("FastGelu", [x, given("bias", F, [8])], [("fast_gelu", F, [4, 8])])
    node("BiasGelu", [x, "bias"], [("bias_gelu", F, [4, 8])])
    node("QuickGelu", [x], [("quick_gelu", F, [4, 8])], alpha=1.702)
    node("Scale", [x, given("s", F, [])], [("scaled", F, [4, 8])])
    node("Trilu", [given("square", F, [4, 4])], [("lower", F, [4, 4])],
         upper=0)
    for op in ["ReluGrad", "LeakyReluGrad", "TanhGrad", "SigmoidGrad",
               "GeluGrad", "FastGeluGrad", "QuickGeluGrad", "SoftmaxGrad",
               "SoftmaxGrad_13", "LogSoftmaxGrad", "LogSoftmaxGrad_13"]:
        node(op, [xh, xh], [(f"{op}_dx", H, [4, 8])])
    node("BiasGeluGrad_dX", [x, x, "bias"], [("bias_gelu_dx", F, [4, 8])])
    node("BiasFastGeluGrad_dX", [x, x, "bias"],
         [("bias_fast_gelu_dx", F, [4, 8])])
    node("DropoutGrad", [x, given("mask", B, [4, 8])],
         [("dropout_dx", F, [4, 8])])
    node("FakeQuantGrad", [x, "mask"], [("fake_quant_dx", F, [4, 8])])
    node("InPlaceAccumulator", [x, x], [("accumulated", F, [4, 8])])
    # Gradients shaped like a forward input.
    node("DivGrad", [x, x, "bias"],
         [("div_da", F, [4, 8]), ("div_db", F, [8])])
    node("ResizeGrad", [given("big", F, [1, 1, 8, 8]),
                        given("small", F, [1, 1, 4, 4])],
         [("resize_dx", F, [1, 1, 4, 4])], mode="linear")
    node("ConvGrad", [given("conv_dy", F, [4, 5, 4, 4]), image,
                      given("conv_w", F, [5, 3, 3, 3])],
         [("conv_dx", F, [4, 3, 6, 6]), ("conv_dw", F, [5, 3, 3, 3]),
          ("conv_db", F, [5])])
    node("ConvTransposeGrad", [given("deconv_dy", F, [4, 4, 8, 8]),
                               given("deconv_x", F, [4, 8, 4, 4]),
                               given("deconv_w", F, [8, 2, 2, 2])],
         [("deconv_dx", F, [4, 8, 4, 4]), ("deconv_dw", F, [8, 2, 2, 2]),
          ("deconv_db", F, [4])], group=2, strides=[2, 2])
    channel = given("channel", F, [3])
    node("BatchNormalizationGrad", [image, image, channel, channel, channel],
         [("bn_dx", F, [4, 3, 6, 6]), ("bn_dscale", F, [3]),
          ("bn_dbias", F, [3])], epsilon=1e-5)
    stat = given("stat", F, [4, 1])
    node("LayerNormalizationGrad", [xh, xh, given("gamma", F, [8]), stat,
                                    stat],
         [("ln_dx", H, [4, 8]), ("ln_dscale", F, [8]), ("ln_dbias", F, [8])])
    node("SimplifiedLayerNormalizationGrad", [x, x, "gamma", stat],
         [("rms_dx", F, [4, 8]), ("rms_dscale", F, [8])])
    node("SoftmaxCrossEntropyLossGrad",
         [given("dloss", F, []), given("log_prob", F, [4, 10]),
          given("labels", I64, [4])], [("dlogits", F, [4, 10])])
    node("SoftmaxCrossEntropyLossInternalGrad", ["dloss", "log_prob",
                                                 "labels"],
         [("dlogits16", H, [4, 10])], output_type=H)
    # Gradients shaped by a shape input.
    node("GatherGrad", [constant("table_shape", [10, 8]),
                        given("rows", I64, [4]), x],
         [("gather_dx", F, [10, 8])])
    node("GatherElementsGrad", [x, constant("x_shape", [4, 8]),
                                given("cols", I64, [4, 8])],
         [("gather_elements_dx", F, [4, 8])])
    node("GatherNDGrad", ["x_shape", given("where", I64, [4, 1]), x],
         [("gather_nd_dx", F, [4, 8])])
    node("SliceGrad", [given("part", F, [4, 4]), "x_shape",
                       constant("starts", [0]), constant("ends", [4]),
                       constant("axes", [1])],
         [("slice_dx", F, [4, 8])])
    # Pooling gradients: X's sizes from the forward pool (MaxPool's whose
    # Indices they read, the AveragePool's with their attributes and dY's
    # shape at its output); without one, the rank only.
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    node("MaxPool", [image], [("max_pooled", F, [4, 3, 3, 3]),
                              ("argmax", I64, [4, 3, 3, 3])], domain="", **pool)
    node("MaxPoolGrad", [given("pooled", F, [4, 3, 3, 3]), "argmax"],
         [("max_pool_dx", F, [4, 3, 6, 6])], domain="")
    node("AveragePool", [given("image7", F, [4, 3, 7, 7])],
         [("average_pooled", F, [4, 3, 3, 3])], domain="", **pool)
    node("AveragePoolGrad", ["pooled"], [("average_pool_dx", F, [4, 3, 7, 7])],
         domain="", **pool)
    node("AveragePoolGrad", ["pooled"], [("pool_dx", F, [None] * 4)],
         domain="", kernel_shape=[3, 3], strides=[2, 2])
    # Forward and runtime ops.
    node("FusedMatMul", [given("a3", H, [2, 4, 8]), given("b", H, [8, 6])],
         [("fused", H, [2, 4, 6])])
    node("FusedMatMul", [given("at", F, [2, 8, 4]), given("bt", F, [6, 8])],
         [("fused_t", F, [2, 4, 6])], transA=1, transB=1, alpha=0.5)
    node("SimplifiedLayerNormalization", [x, "gamma"],
         [("rms", F, [4, 8]), ("rms_inv_std", F, [4, 1])], axis=-1)
    node("BatchNormInternal", [image, channel, channel, channel, channel],
         [("bn_y", F, [4, 3, 6, 6]), ("running_mean", F, [3]),
          ("running_var", F, [3]), ("saved_mean", F, [3]),
          ("saved_inv_std", F, [3])], epsilon=1e-5, momentum=0.9)
    node("SoftmaxCrossEntropyLossInternal", [given("scores", F, [4, 10]),
                                             "labels"],
         [("sce_loss", F, []), ("sce_log_prob", F, [4, 10])])
    node("ConcatTraining", [x, given("wide", F, [4, 5])],
         [("joined", F, [4, 13]), ("lengths", I64, [2])], axis=1)
    node("SplitTraining", [x, constant("split", [3, 5])],
         [("left", F, [4, 3]), ("right", F, [4, 5])], axis=1)
    node("BitmaskDropout", [given("x40", F, [4, 10])],
         [("bitmask_y", F, [4, 10]), ("bitmask", TensorProto.UINT32, [2])])
    node("BitmaskDropoutGrad", ["x40", "bitmask"],
         [("bitmask_dx", F, [4, 10])])
    node("BiasDropout", [x, "bias", x],
         [("bias_dropout_y", F, [4, 8]), ("bias_dropout_mask", B, [4, 8])])
    node("FakeQuant", [x, "s", "s"],
         [("fake_quant", F, [4, 8]), ("fake_quant_mask", B, [4, 8])])
    node("LSTMTraining", [given("seq", F, [5, 4, 8]),
                          given("lstm_w", F, [1, 12, 8]),
                          given("lstm_r", F, [1, 12, 3])],
         [("hall", F, [5, 1, 4, 3]), ("hfinal", F, [1, 4, 3]),
          ("cfinal", F, [1, 4, 3]), ("call", F, [5, 1, 4, 3]),
          ("iofc", F, [5, 1, 4, 12])], hidden_size=3)
    node("LSTMGrad", ["seq", "lstm_w", "lstm_r", "", "", "", "hall", "call",
                      "iofc", "", "hfinal", ""],
         [("lstm_dx", F, [5, 4, 8]), ("lstm_dw", F, [1, 12, 8]),
          ("lstm_dr", F, [1, 12, 3]), ("lstm_db", F, [1, 24])],
         hidden_size=3)
    node("GRUTraining", ["seq", given("gru_w", F, [2, 9, 8]),
                         given("gru_r", F, [2, 9, 3])],
         [("gru_hall", F, [5, 2, 4, 3]), ("gru_hfinal", F, [2, 4, 3]),
          ("zrh", F, [5, 2, 4, 9])], hidden_size=3,
         direction="bidirectional")
    node("InPlaceAccumulatorV2", [x, x],
         [("acc_updated", B, [1]), ("acc_buffer", F, [4, 8])])
    node("AdamOptimizer", [given("lr", F, []), given("step", I64, []),
                           "bias", "bias", "bias", "bias"],
         [("adam_step", I64, []), ("adam_m", F, [8]), ("adam_v", F, [8]),
          ("adam_w", F, [8])])
    node("BroadcastGradientArgs", [constant("a_shape", [4, 8]),
                                   constant("b_shape", [8])],
         [("a_axes", I64, [None]), ("b_axes", I64, [None])])
    node("YieldOp", [x, "bias", "s"], [("x_grad", F, [4, 8]),
                                       ("s_grad", F, None)],
         non_differentiable_outputs=[1], full_shape_outputs=[0])
    node("Recv", [given("signal", B, []), given("rank", I64, [])],
         [("recv_signal", B, []), ("received", H, None)],
         element_types=[H], tag=0)
    # ONNX needs an output: one that amp-opt keeps as it is.
    nodes.append(helper.make_node("Identity", ["x"], ["y"]))
    graph = helper.make_graph(
        nodes, "contrib_ops", inputs,
        [helper.make_tensor_value_info("y", F, [4, 8])], initializers)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model, expected


def op_table_contrib_ops():
    """The op types of the op table's com.microsoft rows."""
    table = os.path.join(REPO, "include", "amp", "Dialect", "ONNXGraph", "IR",
                         "OpTable.def")
    with open(table) as f:
        return set(re.findall(r'AMP_OP\("com\.microsoft", "(\w+)"',
                              f.read()))


def test_every_contrib_op_is_typed_as_onnx_runtime_types_it(tmp_path):
    model, expected = contrib_ops_graph()
    typed = {n.op_type for n in model.graph.node if n.domain == MS}
    untested = op_table_contrib_ops() - typed - {
        # No output ONNX Runtime types, or sequences.
        "AdamWOptimizer", "SGDOptimizerV2", "InplaceClipGradNorm", "Send",
        "GRUGrad"}
    assert not untested, f"contrib ops of the op table without a case: " \
                         f"{sorted(untested)}"
    types = exported_types(model, tmp_path, "contrib")
    wrong = {}
    for name, (kind, shape) in expected.items():
        got = types.get(name)
        # None: a size ONNX Runtime does not know (any name).
        if got is None or got[0] != kind or (shape is not None and (
                got[1] is None or len(got[1]) != len(shape) or any(
                    isinstance(g, int) != isinstance(w, int) or
                    (isinstance(w, int) and g != w)
                    for g, w in zip(got[1], shape)))):
            wrong[name] = (got, (kind, shape))
    assert not wrong, "\n".join(f"{name}: got {got}, expected {want}"
                                for name, (got, want) in wrong.items())


def compatible(original, stripped):
    """Whether the type `stripped` (no value_info) agrees with `original`
    (as the file gives it): the element type, the rank, and every size the
    original states (names may differ)."""
    if stripped is None or stripped[0] != original[0]:
        return False
    if original[1] is None:
        return True
    if stripped[1] is None or len(stripped[1]) != len(original[1]):
        return False
    return all(not isinstance(want, int) or got == want
               for want, got in zip(original[1], stripped[1]))


CORPUS_GRAPHS = [
    "onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/training_api/"
    "training_model.onnx",
    "onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/transform/"
    "recompute/recompute_gelu.onnx",
    "onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/transform/"
    "recompute/recompute_tile.onnx",
    "onnxruntime_onnxruntime-qnn/onnxruntime/test/testdata/"
    "avoid_reuse_of_buffer_for_node_output_with_no_consumers.onnx",
]
# Not compared: custom_ops/training_model.onnx (its test.customop op has no
# schema anywhere) and test_training_model_1.onnx (what Recv receives has a
# shape only the pipeline partition knows).


def ort_style_artifact(name):
    """One of our ONNX Runtime-style artifacts (value_info as ONNX Runtime
    writes it): "lstm" (LSTMTraining and LSTMGrad), "generator"
    (ConvTransposeGrad, LeakyReluGrad and AveragePoolGrad) or
    "log_softmax" (LogSoftmaxGrad)."""
    from test_recurrent_ops import lstm_training_artifact
    from test_training_graphs import (generator_artifact,
                                      log_softmax_classifier_artifact)
    build = {"lstm": lambda: lstm_training_artifact(5, 4, 6, 3, 4),
             "generator": lambda: generator_artifact(4),
             "log_softmax": lambda: log_softmax_classifier_artifact(4, 6, 5,
                                                                    3)}
    return build[name]()


@pytest.mark.parametrize("graph", CORPUS_GRAPHS + ["lstm", "generator",
                                                   "log_softmax"])
def test_types_without_value_info_match_the_files(graph, tmp_path):
    """A graph's contrib-op outputs get, without value_info, the types that
    ONNX Runtime wrote into it; no value stays untyped."""
    if graph in ("lstm", "generator", "log_softmax"):
        model = ort_style_artifact(graph)
    else:
        path = os.path.join(EXTERNAL, graph)
        if not os.path.isfile(path):
            pytest.skip(f"{path} is absent (../shared/corpus)")
        model = onnx.load(path)
    producers = {out: n.op_type for n in model.graph.node for out in n.output}
    contrib = {out for n in model.graph.node if n.domain == MS
               for out in n.output if out}
    original = exported_types(model, tmp_path, "original")
    stripped = exported_types(without_value_info(model), tmp_path, "stripped")
    typed_by_file = {v.name for v in model.graph.value_info} & contrib
    assert typed_by_file or graph in CORPUS_GRAPHS[-1:], \
        "the file gives no contrib op output a type: nothing is compared"
    wrong = {name: (original[name], stripped.get(name))
             for name in original
             if not compatible(original[name], stripped.get(name))}
    assert not wrong, "\n".join(f"{name} ({producers.get(name)}): file "
                                f"{want}, without value_info {got}"
                                for name, (want, got) in wrong.items())
    print(f"{graph}: {len(original)} values, {len(typed_by_file)} contrib "
          f"outputs typed by the file, the same without it")


GRADIENT_GRAPH = os.path.join(
    EXTERNAL, "onnxruntime_onnxruntime-qnn@8890461", "onnxruntime", "test",
    "testdata", "training_api", "gradient_graph.onnx")
OLD_API_ARGS = ["--optimizer", os.path.join(
    os.path.dirname(GRADIENT_GRAPH), "optimizer_graph.onnx"),
    "--dim", "input1_dim0=4", "--dim", "input1_dim1=784",
    "--dim", "output-0_dim0=4", "--learning-rate", "0.001"]


@pytest.mark.skipif(not os.path.isfile(GRADIENT_GRAPH),
                    reason=f"the corpus is absent ({GRADIENT_GRAPH})")
def test_gradient_graph_backward_converts_and_trains():
    """ONNX Runtime's older gradient_graph.onnx has no value_info: its
    backward (SoftmaxCrossEntropyLossGrad, ReluGrad and the Gemms they
    feed) stayed FP32 with the GEMMs forced to FP16 (3 of 21 ops). Now
    its backward GEMMs are FP16 too, and amp-run trains the converted step
    with its optimizer graph: the loss falls, and differs from FP32's."""
    _, report = api.convert(GRADIENT_GRAPH, "fp16", op_class="Gemm:always")
    decisions = report["decisions"]
    backward = [d for d in decisions if d["op_type"] == "Gemm"
                and "_Grad/" in d["name"]]
    assert len(backward) == 3, decisions
    assert all(d["precision"] == "f16" for d in backward), backward
    assert not [d for d in decisions if d["reason"] == "unknown-type"]
    relu_grad, = [d for d in decisions if "ReluGrad" in d["op_type"]]
    assert relu_grad["precision"] == "f16"
    pipeline = "precision=fp16 op-class=Gemm:always"
    curves = {precision: api.train(GRADIENT_GRAPH, 30, amp_pipeline=pipe,
                                   args=OLD_API_ARGS)[0]
              for precision, pipe in [("fp32", None), ("fp16", pipeline)]}
    losses = {p: [r["loss"] for r in c] for p, c in curves.items()}
    print({p: (l[0], l[-1]) for p, l in losses.items()})
    for precision, curve in losses.items():
        assert np.isfinite(curve).all() and curve[-1] < 0.5 * curve[0]
    assert losses["fp16"] != losses["fp32"]
    assert abs(losses["fp16"][-1] - losses["fp32"][-1]) <= \
        0.05 * losses["fp32"][0]


@pytest.mark.parametrize("graph", ["generator", "lstm"])
def test_artifact_without_value_info_trains_as_with_it(graph, tmp_path):
    """The path a user runs: amp-run on our ONNX Runtime-style artifacts
    with their value_info removed (AveragePoolGrad takes X's sizes from
    its forward AveragePool; LSTMTraining's states from hidden_size)
    trains as with it, FP32 and FP16, loss for loss; before, the stripped
    generator stopped ("AveragePoolGrad needs a static dX type") and the
    stripped FP16 steps kept their backward FP32."""
    model = ort_style_artifact(graph)
    paths = {"file": tmp_path / "with.onnx",
             "stripped": tmp_path / "without.onnx"}
    onnx.save(model, paths["file"])
    onnx.save(without_value_info(model), paths["stripped"])
    args = ["--sgd-lr", "0.05"]
    pipeline = "precision=fp16 op-class=Conv:always,ConvTranspose:always," \
               "Gemm:always,MatMul:always,LSTM:always"
    for amp_pipeline in [None, pipeline]:
        losses = {kind: [r["loss"] for r in api.train(
            str(path), 4, amp_pipeline=amp_pipeline, args=args)[0]]
            for kind, path in paths.items()}
        print(graph, amp_pipeline and "fp16", losses)
        assert losses["stripped"] == losses["file"]
        assert losses["file"][-1] < losses["file"][0]
