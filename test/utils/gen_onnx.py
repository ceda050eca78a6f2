#!/usr/bin/python3
"""Writes small ONNX models for the lit tests: gen_onnx.py CASE OUT.onnx.

Each case builds one model with onnx.helper: an op family, a quirk seen in
real exported training graphs, or a bad input. `gen_onnx.py --list` lists
the cases. Models are written without running onnx's checker, since several
are invalid on purpose or newer than onnx 1.12 accepts.
"""
import os
import sys

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64

CASES = {}


def case(fn):
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def model(nodes, inputs, outputs, inits=(), opsets=(("", 17),), ir=8,
          name="test", value_info=(), **kw):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                              value_info=list(value_info))
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        **kw)
    m.ir_version = ir
    return m


def vi(name, elt, shape):
    return helper.make_tensor_value_info(name, elt, shape)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- op families -----------------------------------------------------------

@case
def elementwise(out):
    return model([helper.make_node("Add", ["x", "y"], ["s"], name="add"),
                  helper.make_node("Mul", ["s", "y"], ["p"], name="mul"),
                  helper.make_node("Relu", ["p"], ["r"], name="relu"),
                  helper.make_node("Cast", ["r"], ["h"], name="cast", to=10)],
                 [vi("x", F, [2, 3]), vi("y", F, [2, 3])],
                 [vi("h", TensorProto.FLOAT16, [2, 3])])


@case
def contraction(out):
    w = numpy_helper.from_array(rand(4, 3), "fc.weight")
    b = numpy_helper.from_array(rand(4), "fc.bias")
    return model([helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"],
                                   name="fc", alpha=0.5, transB=1),
                  helper.make_node("MatMul", ["y", "m"], ["z"], name="mm")],
                 [vi("x", F, [8, 3]), vi("m", F, [4, 2])],
                 [vi("z", F, [8, 2])], inits=[w, b])


@case
def convolution(out):
    w = numpy_helper.from_array(rand(4, 2, 3, 3), "conv.weight")
    return model([helper.make_node("Conv", ["x", "conv.weight"], ["c"],
                                   name="conv", pads=[1, 1, 1, 1],
                                   strides=[1, 1], kernel_shape=[3, 3]),
                  helper.make_node("MaxPool", ["c"], ["p"], name="pool",
                                   kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("GlobalAveragePool", ["p"], ["g"],
                                   name="gap")],
                 [vi("x", F, ["N", 2, 8, 8])], [vi("g", F, ["N", 4, 1, 1])],
                 inits=[w])


@case
def normalization(out):
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n)
             for n in ("scale", "bias", "mean", "var")]
    return model([helper.make_node("BatchNormalization",
                                   ["x", "scale", "bias", "mean", "var"],
                                   ["y", "running_mean", "running_var"],
                                   name="bn", training_mode=1, momentum=0.9),
                  helper.make_node("LayerNormalization", ["y", "scale", "bias"],
                                   ["z"], name="ln", axis=-1, epsilon=1e-5)],
                 [vi("x", F, [2, 3, 3])],
                 [vi("z", F, [2, 3, 3]), vi("running_mean", F, [3]),
                  vi("running_var", F, [3])], inits=inits)


@case
def reduction(out):
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    return model([helper.make_node("ReduceSum", ["x", "axes"], ["s"],
                                   name="sum", keepdims=0),
                  helper.make_node("ReduceMean", ["x"], ["m"], name="mean",
                                   axes=[0, 1])],
                 [vi("x", F, [2, 3])], [vi("s", F, [2]), vi("m", F, [1, 1])],
                 inits=[axes])


@case
def data_movement(out):
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    idx = numpy_helper.from_array(np.array([0, 2], np.int64), "idx")
    return model([helper.make_node("Reshape", ["x", "shape"], ["r"],
                                   name="reshape"),
                  helper.make_node("Transpose", ["r"], ["t"], name="tr",
                                   perm=[1, 0]),
                  helper.make_node("Gather", ["t", "idx"], ["g"], name="gather",
                                   axis=1),
                  helper.make_node("Split", ["g"], ["a", "b"], name="split",
                                   axis=0)],
                 [vi("x", F, [2, 3])], [vi("a", F, [1, 2]), vi("b", F, [1, 2])],
                 inits=[shape, idx])


@case
def constants(out):
    small = numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "")
    big = numpy_helper.from_array(np.arange(64, dtype=np.float32), "")
    flag = numpy_helper.from_array(np.array([True, False]), "")
    strs = helper.make_tensor("", TensorProto.STRING, [2], [b"a", b"bc"])
    return model([helper.make_node("Constant", [], ["c_small"], value=small),
                  helper.make_node("Constant", [], ["c_big"], value=big),
                  helper.make_node("Constant", [], ["c_bool"], value=flag),
                  helper.make_node("Constant", [], ["c_str"], value=strs),
                  helper.make_node("Constant", [], ["c_int"], value_int=7)],
                 [], [vi("c_small", F, [2]), vi("c_big", F, [64]),
                      vi("c_bool", TensorProto.BOOL, [2]),
                      vi("c_str", TensorProto.STRING, [2]),
                      vi("c_int", I64, [])])


@case
def control_flow(out):
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["t"], name="then_add")],
        "then_body", [], [vi("t", F, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"], name="else_neg")],
        "else_body", [], [vi("e", F, [2])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc", "x"], ["acc_out"], name="loop_add")],
        "loop_body", [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []),
                      vi("acc", F, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [2])])
    return model([helper.make_node("If", ["c"], ["y"], name="if",
                                   then_branch=then_g, else_branch=else_g),
                  helper.make_node("Loop", ["n", "", "y"], ["z"], name="loop",
                                   body=body)],
                 [vi("c", TensorProto.BOOL, []), vi("x", F, [2]),
                  vi("n", I64, [])], [vi("z", F, [2])])


@case
def training_ops(out):
    """ONNX Runtime training-artifact ops: contrib gradients, accumulation."""
    return model([
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                         ["loss", "log_prob"], name="sce", reduction="mean"),
        helper.make_node("SoftmaxCrossEntropyLossGrad",
                         ["dloss", "log_prob", "labels"], ["dlogits"],
                         name="sce_grad", domain="com.microsoft",
                         reduction="mean"),
        helper.make_node("InPlaceAccumulatorV2", ["acc", "dlogits"],
                         ["updated", "acc_out"], name="accumulate",
                         domain="com.microsoft"),
        helper.make_node("YieldOp", ["loss"], ["dloss"], name="yield",
                         domain="com.microsoft", full_shape_outputs=[0])],
        [vi("logits", F, [4, 10]), vi("labels", I64, [4]),
         vi("acc", F, [4, 10])],
        [vi("loss", F, []), vi("updated", TensorProto.BOOL, [1]),
         vi("acc_out", F, [4, 10])],
        opsets=[("", 17), ("com.microsoft", 1)])


@case
def preview_training(out):
    return model([helper.make_node("Adagrad", ["R", "T", "X", "G", "H"],
                                   ["X_new", "H_new"], name="adagrad",
                                   domain="ai.onnx.preview.training",
                                   decay_factor=0.1, epsilon=1e-5,
                                   norm_coefficient=0.001)],
                 [vi("R", F, []), vi("T", I64, []), vi("X", F, [3]),
                  vi("G", F, [3]), vi("H", F, [3])],
                 [vi("X_new", F, [3]), vi("H_new", F, [3])],
                 opsets=[("", 17), ("ai.onnx.preview.training", 1)])


@case
def custom_domains(out):
    return model([helper.make_node("ATen", ["x"], ["a"], name="aten",
                                   domain="org.pytorch.aten",
                                   operator="embedding_backward"),
                  helper.make_node("MyOp", ["a"], ["b"], name="mine",
                                   domain="com.example.custom", alpha=2,
                                   mode="fast")],
                 [vi("x", F, [4])], [vi("b", F, [4])],
                 opsets=[("", 17), ("org.pytorch.aten", 1),
                         ("com.example.custom", 3)])


@case
def sequences(out):
    return model([helper.make_node("SequenceConstruct", ["x", "y"], ["s"],
                                   name="seq")],
                 [vi("x", F, [2]), vi("y", F, [2])],
                 [helper.make_tensor_sequence_value_info("s", F, [2])])


def local_function(name, inputs, outputs, nodes, domain="local",
                   attributes=(), opsets=(("", 17),)):
    return helper.make_function(
        domain, name, inputs, outputs, nodes,
        [helper.make_opsetid(d, v) for d, v in opsets], list(attributes))


@case
def local_functions(out):
    """torch.onnx's export_modules_as_functions: a Block function calls a
    Linear function (its alpha from the call's attribute), twice; their
    inner value names repeat and shadow the graph's."""
    linear = local_function(
        "Linear", ["x", "w"], ["y"],
        [_ref_node("Gemm", ["x", "w"], ["y"], "gemm", "alpha", "scale")],
        attributes=["scale"])
    block = local_function(
        "Block", ["x", "w"], ["out"],
        [helper.make_node("Linear", ["x", "w"], ["h"], name="fc",
                          domain="local", scale=0.5),
         helper.make_node("Relu", ["h"], ["a"], name="relu"),
         helper.make_node("Add", ["x", "a"], ["out"], name="add")])
    return model([helper.make_node("Block", ["x", "w1"], ["h"], name="b1",
                                   domain="local"),
                  helper.make_node("Block", ["h", "w2"], ["y"], name="b2",
                                   domain="local")],
                 [vi("x", F, [2, 4])], [vi("y", F, [2, 4])],
                 inits=[numpy_helper.from_array(rand(4, 4, seed=1), "w1"),
                        numpy_helper.from_array(rand(4, 4, seed=2), "w2")],
                 opsets=[("", 17), ("local", 1)], functions=[linear, block])


def _ref_node(op_type, inputs, outputs, name, attribute, ref):
    """A node whose `attribute` is the calling node's `ref` (onnx 1.12 has
    no helper.make_attribute_ref)."""
    node = helper.make_node(op_type, inputs, outputs, name=name, transB=1)
    reference = node.attribute.add()
    reference.name = attribute
    reference.ref_attr_name = ref
    reference.type = AttributeProto.FLOAT
    return node


@case
def bad_recursive_function(out):
    loop = local_function("Loop", ["x"], ["y"], [
        helper.make_node("Loop", ["x"], ["y"], name="again", domain="local")])
    return model([helper.make_node("Loop", ["x"], ["y"], name="call",
                                   domain="local")],
                 [vi("x", F, [2])], [vi("y", F, [2])],
                 opsets=[("", 17), ("local", 1)], functions=[loop])


@case
def bad_function_arity(out):
    neg = local_function("Neg2", ["x"], ["y"], [
        helper.make_node("Neg", ["x"], ["y"], name="neg")])
    return model([helper.make_node("Neg2", ["x", "x"], ["y"], name="call",
                                   domain="local")],
                 [vi("x", F, [2])], [vi("y", F, [2])],
                 opsets=[("", 17), ("local", 1)], functions=[neg])


@case
def bad_function_opset(out):
    neg = local_function("Neg2", ["x"], ["y"], [
        helper.make_node("Neg", ["x"], ["y"], name="neg")],
        opsets=(("", 13),))
    return model([helper.make_node("Neg2", ["x"], ["y"], name="call",
                                   domain="local")],
                 [vi("x", F, [2])], [vi("y", F, [2])],
                 opsets=[("", 17), ("local", 1)], functions=[neg])


# --- quirks of real files ---------------------------------------------------

@case
def ir10_opset18(out):
    """IR 10 / opset 18 (newer than onnx 1.12): ReduceMean takes axes input."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    return model([helper.make_node("ReduceMean", ["x", "axes"], ["m"],
                                   name="mean")],
                 [vi("x", F, [2, 3])], [vi("m", F, [2, 1])], inits=[axes],
                 opsets=[("", 18)], ir=10)


@case
def opset23_attention(out):
    """Opset 23's ops that libonnx 1.12 does not know, and an output
    declared without a shape: RMSNormalization, RotaryEmbedding, GQA
    Attention with past keys (present outputs), MatMul."""
    angles = np.arange(8)[:, None] * np.ones(4)[None]
    inits = [numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"),
             numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin"),
             numpy_helper.from_array(np.ones(32, np.float32), "gamma"),
             numpy_helper.from_array(rand(32, 32), "w")]
    nodes = [
        helper.make_node("RMSNormalization", ["x", "gamma"], ["n"],
                         name="norm"),
        helper.make_node("RotaryEmbedding", ["n", "cos", "sin", "pos"],
                         ["q"], name="rope", num_heads=4),
        helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"],
                         ["a", "present_k", "present_v"], name="attention",
                         q_num_heads=4, kv_num_heads=2),
        helper.make_node("MatMul", ["a", "w"], ["y"], name="out")]
    return model(nodes,
                 [vi("x", F, [2, 3, 32]), vi("pos", I64, [2, 3]),
                  vi("k", F, [2, 3, 16]), vi("v", F, [2, 3, 16]),
                  vi("pk", F, [2, 2, 5, 8]), vi("pv", F, [2, 2, 5, 8])],
                 [helper.make_tensor_value_info("y", F, None),
                  vi("present_k", F, None), vi("present_v", F, None)],
                 inits=inits, opsets=[("", 23)], ir=10)


@case
def stft_onesided(out):
    """A onesided STFT whose frame count libonnx 1.12's shape inference gets
    wrong: (704 - 64) / 16 + 1 = 41 frames of 33 bins, not 42, and the
    ReduceSum that reads it."""
    inits = [numpy_helper.from_array(np.array(16, np.int64), "step"),
             numpy_helper.from_array(np.hanning(64).astype(np.float32),
                                     "window")]
    nodes = [helper.make_node("STFT", ["x", "step", "window"], ["s"],
                              name="stft", onesided=1),
             helper.make_node("ReduceSum", ["s"], ["y"], name="power",
                              keepdims=0)]
    return model(nodes, [vi("x", F, [2, 704, 1])], [vi("y", F, None)],
                 inits=inits)


@case
def avgpool19_dilations(out):
    """AveragePool-19's dilations, which libonnx 1.12's AveragePool-11
    shape inference ignores: a kernel of 2 dilated by 2 over 5 columns
    gives 3 windows, not 4; ceil_mode with a stride of 2 over 6 rows gives
    3."""
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], name="pool",
                              kernel_shape=[3, 2], strides=[2, 1],
                              dilations=[1, 2], ceil_mode=1)]
    return model(nodes, [vi("x", F, [1, 2, 6, 5])], [vi("y", F, None)],
                 opsets=(("", 19),), ir=9)


@case
def unsorted(out):
    return model([helper.make_node("Relu", ["a"], ["b"], name="second"),
                  helper.make_node("Neg", ["x"], ["a"], name="first"),
                  helper.make_node("Exp", ["b"], ["y"], name="third")],
                 [vi("x", F, [2])], [vi("y", F, [2])])


@case
def layernorm_opset13(out):
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n)
             for n in ("gamma", "beta")]
    return model([helper.make_node("LayerNormalization", ["x", "gamma", "beta"],
                                   ["y", "mean", "inv_std"], name="ln",
                                   axis=-1, epsilon=1e-5)],
                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], inits=inits,
                 opsets=[("", 13)])


@case
def maxpoolgrad_default_domain(out):
    return model([helper.make_node("MaxPoolGrad", ["dy", "indices"], ["dx"],
                                   name="mpg")],
                 [vi("dy", F, [1, 1, 2, 2]), vi("indices", I64, [1, 1, 2, 2])],
                 [vi("dx", F, [1, 1, 4, 4])], opsets=[("", 12)])


@case
def params_as_inputs(out):
    """ORT artifacts: parameters are graph inputs without initializers."""
    return model([helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"],
                                   name="fc", transB=1)],
                 [vi("x", F, ["batch", 3]), vi("fc.weight", F, [4, 3]),
                  vi("fc.bias", F, [4])], [vi("y", F, ["batch", 4])])


@case
def initializer_inputs(out):
    """Parameters as graph inputs with initial values (our exporter's form)."""
    w = numpy_helper.from_array(rand(4, 3), "w")
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", F, [2, 4]), vi("w", F, [4, 3])], [vi("y", F, [2, 3])],
                 inits=[w])


@case
def typed_fields(out):
    """Initializers stored in typed fields rather than raw_data."""
    f32 = helper.make_tensor("f32", F, [2], [1.0, -2.5])
    # onnx.helper stores FLOAT16 values as their bits in int32_data.
    f16 = helper.make_tensor("f16", TensorProto.FLOAT16, [2], [1.0, -2.5])
    i64 = helper.make_tensor("i64", I64, [3], [1, -2, 3])
    flag = helper.make_tensor("flag", TensorProto.BOOL, [2], [1, 0])
    return model([helper.make_node("Identity", [n], [n + "_out"])
                  for n in ("f32", "f16", "i64", "flag")],
                 [], [vi("f32_out", F, [2]),
                      vi("f16_out", TensorProto.FLOAT16, [2]),
                      vi("i64_out", I64, [3]),
                      vi("flag_out", TensorProto.BOOL, [2])],
                 inits=[f32, f16, i64, flag])


@case
def optional_io(out):
    """A missing optional input ("") and a missing middle output."""
    w = numpy_helper.from_array(rand(1, 8, 2), "W")
    r = numpy_helper.from_array(rand(1, 8, 2), "R")
    return model([helper.make_node("LSTM", ["x", "W", "R", "", "", "h0"],
                                   ["", "Y_h"], name="lstm", hidden_size=2)],
                 [vi("x", F, [3, 1, 2]), vi("h0", F, [1, 1, 2])],
                 [vi("Y_h", F, [1, 1, 2])], inits=[w, r])


@case
def metadata(out):
    m = model([helper.make_node("Identity", ["x"], ["y"], name="id",
                                doc_string="copies x")],
              [vi("x", F, [1])], [vi("y", F, [1])], producer_name="amp-tests",
              producer_version="1.0", doc_string="a model doc")
    m.graph.doc_string = "a graph doc"
    m.model_version = 3
    helper.set_model_props(m, {"amp.loss": "loss", "amp.optimizer": "adam"})
    return m


@case
def external_data(out):
    w = numpy_helper.from_array(rand(16, 16), "big.weight")
    m = model([helper.make_node("MatMul", ["x", "big.weight"], ["y"],
                                name="mm")],
              [vi("x", F, [2, 16])], [vi("y", F, [2, 16])], inits=[w])
    onnx.save(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
              location=os.path.basename(out) + ".data", size_threshold=0)
    return None


@case
def unused_opset_import(out):
    return model([helper.make_node("Neg", ["x"], ["y"], name="neg")],
                 [vi("x", F, [2])], [vi("y", F, [2])],
                 opsets=[("", 17), ("com.microsoft", 1), ("ai.onnx.ml", 3)])


# --- bad inputs -------------------------------------------------------------

@case
def redefined_names(out):
    """Names defined twice (invalid ONNX, as in gpt2_past.onnx): 't' by two
    nodes, each reader reading the latest definition before it, and 'k' by
    two Constants, whose readers all read the last (as ONNX Runtime does)."""
    def constant(name, value):
        return helper.make_node(
            "Constant", [], ["k"], name=name,
            value=numpy_helper.from_array(np.full(2, value, np.float32)))
    return model([helper.make_node("Neg", ["x"], ["t"], name="first"),
                  helper.make_node("Relu", ["t"], ["y1"], name="reads_first"),
                  helper.make_node("Exp", ["x"], ["t"], name="second"),
                  helper.make_node("Abs", ["t"], ["y2"], name="reads_second"),
                  constant("k_first", 1.0),
                  helper.make_node("Add", ["x", "k"], ["y3"], name="adds_k"),
                  constant("k_last", 10.0)],
                 [vi("x", F, [2])],
                 [vi("y1", F, [2]), vi("y2", F, [2]), vi("y3", F, [2])])


@case
def large_tensors(out):
    """A 64x64 weight (16 KiB) and a Constant of 1024 floats (4 KiB), which
    --onnx-external-data writes to the data file, and a small bias, which
    stays inline."""
    constant = helper.make_node(
        "Constant", [], ["k"], name="k",
        value=numpy_helper.from_array(rand(1024).reshape(16, 64), "k"))
    return model([helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
                  constant,
                  helper.make_node("Add", ["xw", "k"], ["xk"], name="add_k"),
                  helper.make_node("Add", ["xk", "b"], ["y"], name="add_b")],
                 [vi("x", F, [16, 64])], [vi("y", F, [16, 64])],
                 inits=[numpy_helper.from_array(rand(64, 64), "w"),
                        numpy_helper.from_array(rand(64), "b")])


def nested_ifs(depth):
    """An If whose then-branch is an If, `depth` levels deep; the innermost
    body and every else-branch read the outer `x`."""
    def identity(name):
        return helper.make_graph([helper.make_node("Identity", ["x"], [name])],
                                 name, [], [vi(name, F, [2])])
    body = identity("y0")
    for level in range(1, depth + 1):
        name = "y" if level == depth else f"y{level}"
        node = helper.make_node("If", ["c"], [name], name=f"if{level}",
                                then_branch=body,
                                else_branch=identity(f"e{level}"))
        if level == depth:
            break
        body = helper.make_graph([node], f"g{level}", [], [vi(name, F, [2])])
    return model([node], [vi("c", TensorProto.BOOL, []), vi("x", F, [2])],
                 [vi("y", F, [2])])


@case
def nested_subgraphs(out):
    """Subgraphs 30 levels deep: as deep as protobuf reads (docs/Reliability.md)."""
    return nested_ifs(30)


@case
def bad_nesting_too_deep(out):
    """Subgraphs 40 levels deep: deeper than protobuf's recursion limit."""
    return nested_ifs(40)


@case
def bad_undefined_value(out):
    return model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add1")],
                 [vi("x", F, [2])], [vi("y", F, [2])])


@case
def bad_cycle(out):
    return model([helper.make_node("Add", ["x", "b"], ["a"], name="node_a"),
                  helper.make_node("Relu", ["a"], ["b"], name="node_b")],
                 [vi("x", F, [2])], [vi("b", F, [2])])


@case
def bad_duplicate_output(out):
    return model([helper.make_node("Split", ["x"], ["y", "y"], name="split2",
                                   axis=0)],
                 [vi("x", F, [2])], [vi("y", F, [1])])


@case
def bad_duplicate_graph_output(out):
    return model([helper.make_node("Neg", ["x"], ["y"], name="neg")],
                 [vi("x", F, [2])], [vi("y", F, [2]), vi("y", F, [2])])


@case
def bad_element_type(out):
    return model([helper.make_node("Neg", ["x"], ["y"], name="neg")],
                 [vi("x", 99, [2])], [vi("y", F, [2])])


@case
def bad_external_data(out):
    external_data(out)
    os.remove(out + ".data")
    return None


@case
def bad_attribute_type(out):
    return model([helper.make_node("Gemm", ["a", "b"], ["c"], name="gemm1",
                                   alpha=2)],
                 [vi("a", F, [2, 2]), vi("b", F, [2, 2])], [vi("c", F, [2, 2])])


@case
def bad_arity(out):
    return model([helper.make_node("Gemm", ["a"], ["c"], name="gemm1")],
                 [vi("a", F, [2, 2])], [vi("c", F, [2, 2])])


@case
def bad_missing_attribute(out):
    return model([helper.make_node("Cast", ["a"], ["c"], name="cast1")],
                 [vi("a", F, [2])], [vi("c", F, [2])])


@case
def bad_raw_data_size(out):
    t = numpy_helper.from_array(rand(4), "w")
    t.raw_data = t.raw_data[:6]
    return model([helper.make_node("Neg", ["w"], ["y"], name="neg")],
                 [], [vi("y", F, [4])], inits=[t])


def main(argv):
    if argv[:1] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(argv) != 2 or argv[0] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    m = CASES[argv[0]](argv[1])
    if m is not None:
        onnx.save(m, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
