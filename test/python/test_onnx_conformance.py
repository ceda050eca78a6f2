"""amp-run against ONNX's conformance node tests, as the installed onnx
package generates them (onnx.backend.test.case.node: one small model per
case, numpy reference inputs and outputs). Every case either matches its
reference, on the CPU and in the CUDA backend's grid loops
(test_onnx_conformance_grid.py), or is listed below with the error
amp-run must stop with: one clear `error:` line, never a crash. A case a
newer onnx adds is expected to pass until it is listed.

amp-opt compiles for static shapes: an operand that decides a shape (a
Reshape's shape, TopK's K, a Slice's starts...) that a case feeds as a
graph input is frozen into an initializer first, as `--dim` and onnxsim
make them in real graphs (with the inputs it is computed from)."""
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from amp_opt import api, ort

NOT_IN_TABLE = "has no lowering: the op type is not in amp-opt's op table"
# Op types without a lowering, and what amp-run says of them.
UNLOWERED_OPS = {op: NOT_IN_TABLE for op in (
    "Compress", "ConvInteger",
    "Det",
    "MatMulInteger",
    "NonMaxSuppression", "NonZero", "Optional",
    "OptionalGetElement", "OptionalHasElement", "QLinearConv",
    "QLinearMatMul",
    "RoiAlign", "SequenceMap",
    "StringNormalizer", "TfIdfVectorizer", "Unique")}
STRINGS = "do not lower: only numbers and booleans do"
# Cases of lowered op types that use what does not lower yet.
UNSUPPORTED_CASES = {
    "test_maxpool_2d_uint8": "expects a float tensor",
    "test_cast_FLOAT_to_STRING": STRINGS,
    "test_cast_STRING_to_FLOAT": STRINGS,
    "test_castlike_FLOAT_to_STRING": STRINGS,
    "test_castlike_FLOAT_to_STRING_expanded": STRINGS,
    "test_castlike_STRING_to_FLOAT": STRINGS,
    "test_castlike_STRING_to_FLOAT_expanded": STRINGS,
    "test_resize_tf_crop_and_resize":
        "coordinate_transformation_mode 'tf_crop_and_resize' does not lower",
    "test_maxpool_with_argmax_2d_precomputed_strides":
        "column-major Indices do not lower yet",
    "test_if_seq": "is a sequence: sequences lower only inside the graph",
    # Opset 8's Scan (a batch axis, sequence_lens) was replaced in 2018.
    "test_scan_sum": "is a Scan of opset 8",
    # Model cases: a computed split.
    "test_sequence_model8": "split must be a constant",
}
# Cases whose reference ONNX Runtime (and PyTorch) disagree with: amp-run
# is compared with ONNX Runtime instead.
ALIGN_CORNERS_SCALES = (
    "align_corners with scales: onnx's reference divides by the unrounded "
    "output length, ONNX Runtime and PyTorch by the output size")
ORT_REFERENCE = {
    "test_resize_downsample_scales_linear_align_corners":
        ALIGN_CORNERS_SCALES,
    "test_resize_downsample_scales_cubic_align_corners":
        ALIGN_CORNERS_SCALES,
}


def round_to_bfloat16(x):
    """float32 to bfloat16 bits, rounded to nearest even (NaN kept)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(x), bits >> 16, rounded).astype(np.uint16)


# Cases whose reference rounds otherwise than the ONNX spec, with the
# reference the spec gives.
SPEC_REFERENCE = {
    name: ("onnx 1.12's reference truncates to BF16; the spec, ONNX Runtime "
           "and PyTorch round to nearest even",
           lambda inputs: [round_to_bfloat16(inputs[0])])
    for name in ("test_cast_FLOAT_to_BFLOAT16",
                 "test_castlike_FLOAT_to_BFLOAT16",
                 "test_castlike_FLOAT_to_BFLOAT16_expanded")}
# Cases whose reference is wrong in the installed onnx.
WRONG_REFERENCE = {
    "test_adam_multiple":
        "onnx 1.12's case leaves out the epsilon=0.01 its outputs use (the "
        "corpus's newer copy passes in test_amp_run_onnx_node_tests.py)",
}
# Dropout in training with a ratio: amp-run draws its own mask.
RANDOM_DROPOUT = {"test_training_dropout", "test_training_dropout_mask",
                  "test_training_dropout_default",
                  "test_training_dropout_default_mask"}
# Bernoulli draws: amp-run's differ from numpy's, so the outputs are
# checked for their type, shape and values (0 or 1) only; the
# distributions are checked in test_amp_run_random.py.
RANDOM_BERNOULLI = {f"test_bernoulli{kind}{expanded}"
                    for kind in ("", "_double", "_seed")
                    for expanded in ("", "_expanded")}
# The operands that decide a shape, by op type, frozen when fed as inputs.
SHAPE_OPERANDS = {
    "Reshape": {1}, "Expand": {1}, "Tile": {1}, "Slice": {1, 2, 3, 4},
    "Squeeze": {1}, "Unsqueeze": {1}, "Split": {1}, "Pad": {1, 3},
    "Resize": {1, 2, 3}, "TopK": {1}, "CumSum": {1}, "ConstantOfShape": {0},
    "OneHot": {1}, "Upsample": {1}, "Range": {0, 1, 2}, "MaxUnpool": {2},
    "HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0},
    "Loop": {0, 1},  # the trip count and condition: the loop unrolls
    "DFT": {1}, "STFT": {1, 3}, "MelWeightMatrix": {0, 1, 2, 3, 4},
    **{f"Reduce{kind}": {1} for kind in (
        "Sum", "Mean", "Max", "Min", "Prod", "L1", "L2", "LogSum",
        "LogSumExp", "SumSquare")},
}


def collect_cases():
    """The node cases of the installed onnx, and its model cases that
    carry their data (the rest download models), by name; {} without
    them."""
    # onnx 1.12's case modules use numpy aliases that numpy 1.24 removed.
    for alias, value in (("float", float), ("int", int), ("bool", bool),
                         ("object", object)):
        if alias not in np.__dict__:
            setattr(np, alias, value)
    try:
        from onnx.backend.test.case import model, node
    except ImportError:
        return {}
    np.random.seed(0)  # the cases draw their inputs while collected
    cases = {case.name: case for case in node.collect_testcases(None)}
    cases.update({case.name: case for case in model.collect_testcases()
                  if case.model is not None and case.data_sets})
    return cases


CASES = collect_cases()


def all_nodes(graph):
    """The nodes of `graph` and of its subgraphs (If's branches, Loop's
    body)."""
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attribute.g)


def expected_error(case):
    """The error amp-run must stop with on `case`, or None."""
    for node in all_nodes(case.model.graph):
        if node.op_type in UNLOWERED_OPS:
            return UNLOWERED_OPS[node.op_type]
    return UNSUPPORTED_CASES.get(case.name)


def is_bfloat16(value_info):
    return value_info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16


def bfloat16_bits_to_float(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def prepare_model(model, inputs):
    """`model` with the inputs that feed shape operands as initializers and
    the other tensor inputs declared with the shapes of their data (some
    cases declare symbolic or other sizes); returns it and the (input,
    value) pairs left."""
    names = {graph_input.name for graph_input in model.graph.input}
    producers = {output: node for node in model.graph.node
                 for output in node.output}
    # The inputs a shape operand reads, directly or through the nodes that
    # compute it (not through Shape and Size, which read no values).
    pending = [node.input[i] for node in model.graph.node
               for i in SHAPE_OPERANDS.get(node.op_type, ())
               if i < len(node.input)]
    frozen, seen = set(), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in names:
            frozen.add(name)
        elif name in producers and \
                producers[name].op_type not in ("Shape", "Size"):
            pending.extend(producers[name].input)
    result = onnx.ModelProto()
    result.CopyFrom(model)
    kept = []
    for graph_input, value in zip(result.graph.input, inputs):
        if graph_input.name in frozen and isinstance(
                value, (np.ndarray, np.generic)):
            result.graph.initializer.append(
                numpy_helper.from_array(np.asarray(value), graph_input.name))
            continue
        if isinstance(value, (np.ndarray, np.generic)):
            shape = graph_input.type.tensor_type.shape
            del shape.dim[:]
            for size in np.shape(value):
                shape.dim.add().dim_value = size
        kept.append((graph_input, value))
    inputs_left = [onnx.ValueInfoProto() for _ in kept]
    for copy, (graph_input, _) in zip(inputs_left, kept):
        copy.CopyFrom(graph_input)
    del result.graph.input[:]
    result.graph.input.extend(inputs_left)
    return result, list(zip(inputs_left, (value for _, value in kept)))


def run_case(case, tmp_path, flags=()):
    """Runs `case` through amp-run; returns the process, the outputs and
    the inputs fed ({name: array})."""
    inputs, _ = case.data_sets[0]
    model, inputs = prepare_model(case.model, inputs)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    args = [api.find_tool("amp-run"), str(path), "--steps", "1",
            "--save-outputs", str(tmp_path / "out"), *flags]
    feeds = {}
    for i, (graph_input, value) in enumerate(inputs):
        if not isinstance(value, (np.ndarray, np.generic)):
            continue  # a sequence or optional: amp-run must refuse the graph
        value = np.asarray(value)
        if is_bfloat16(graph_input):
            value = bfloat16_bits_to_float(value)
        np.save(tmp_path / f"input_{i}.npy", value)
        args += ["--input", f"{graph_input.name}={tmp_path}/input_{i}.npy"]
        feeds[graph_input.name] = value
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    outputs = {}
    if proc.returncode == 0:
        for output in case.model.graph.output:
            outputs[output.name] = api.load_saved(tmp_path / "out",
                                                  output.name)
    return proc, outputs, feeds


def assert_clean_error(proc, message):
    assert proc.returncode != 0, "amp-run accepted the case"
    assert "error:" in proc.stderr, proc.stderr[-2000:]
    assert "Stack dump" not in proc.stderr and "PLEASE" not in proc.stderr, \
        proc.stderr[-2000:]
    if message:
        assert message in proc.stderr, proc.stderr[-2000:]


def assert_dropout_consistent(case, outputs):
    """y is x / (1 - ratio) where kept and 0 elsewhere; the mask, when an
    output, says which."""
    x, ratio = (np.asarray(v) for v in case.data_sets[0][0][:2])
    y = outputs[case.model.graph.output[0].name]
    kept = y != 0
    if len(case.model.graph.output) > 1:
        mask = outputs[case.model.graph.output[1].name]
        np.testing.assert_array_equal(mask, kept | (x == 0))
    np.testing.assert_allclose(y[kept], (x / (1 - ratio))[kept], rtol=1e-6)
    assert 0 < kept.mean() < 1


def check_case(name, tmp_path, flags=()):
    case = CASES[name]
    if name in WRONG_REFERENCE:
        pytest.skip(WRONG_REFERENCE[name])
    inputs, expected = case.data_sets[0]
    proc, outputs, feeds = run_case(case, tmp_path, flags)
    message = expected_error(case)
    if message or not all(isinstance(v, (np.ndarray, np.generic))
                          for v in inputs):
        assert_clean_error(proc, message)
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    if name in RANDOM_DROPOUT:
        assert_dropout_consistent(case, outputs)
        return
    if name in RANDOM_BERNOULLI:
        for output, reference in zip(case.model.graph.output, expected):
            actual = outputs[output.name]
            assert actual.shape == reference.shape, output.name
            assert actual.dtype == reference.dtype, output.name
            assert set(np.unique(actual)) <= {0, 1}, actual
        return
    if name in ORT_REFERENCE:
        if not ort.available():
            pytest.skip("ONNX Runtime is not installed (make ort)")
        reference = ort.run(str(tmp_path / "model.onnx"), feeds)
        expected = [reference[output.name]
                    for output in case.model.graph.output]
    if name in SPEC_REFERENCE:
        expected = SPEC_REFERENCE[name][1](inputs)
    for output, reference in zip(case.model.graph.output, expected):
        actual, reference = outputs[output.name], np.asarray(reference)
        if is_bfloat16(output):  # amp-run writes BF16 as float32
            reference = bfloat16_bits_to_float(reference)
        assert actual.shape == reference.shape, output.name
        assert actual.dtype == reference.dtype, output.name
        if reference.dtype.kind in "fc":
            np.testing.assert_allclose(actual, reference, rtol=case.rtol,
                                       atol=max(case.atol, 1e-6),
                                       equal_nan=True, err_msg=output.name)
        else:
            np.testing.assert_array_equal(actual, reference,
                                          err_msg=output.name)


@pytest.mark.skipif(not CASES, reason="the onnx package has no node cases")
def test_lists_name_real_cases():
    """Every listed case exists: a renamed one would pass unnoticed."""
    listed = (set(UNSUPPORTED_CASES) | set(ORT_REFERENCE)
              | set(SPEC_REFERENCE) | set(WRONG_REFERENCE) | RANDOM_DROPOUT
              | RANDOM_BERNOULLI)
    assert listed <= set(CASES), listed - set(CASES)
    ops = {node.op_type for case in CASES.values()
           for node in case.model.graph.node}
    assert set(UNLOWERED_OPS) <= ops | {"Optional"}, set(UNLOWERED_OPS) - ops


@pytest.mark.parametrize("name", sorted(CASES))
def test_conformance_case(name, tmp_path):
    check_case(name, tmp_path)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization(opset, tmp_path):
    """GroupNormalization, which onnx 1.12 has no case for, against numpy:
    opset 18's scale and bias per group, 21's per channel."""
    rng = np.random.RandomState(0)
    x = rng.randn(2, 6, 3, 2).astype(np.float32)
    params = 3 if opset == 18 else 6
    scale = (rng.rand(params) + 0.5).astype(np.float32)
    bias = rng.randn(params).astype(np.float32)
    info = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                               num_groups=3, epsilon=1e-3)], "group_norm",
        [info("x", onnx.TensorProto.FLOAT, x.shape),
         info("s", onnx.TensorProto.FLOAT, [params]),
         info("b", onnx.TensorProto.FLOAT, [params])],
        [info("y", onnx.TensorProto.FLOAT, x.shape)])
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / "group_norm.onnx"
    onnx.save(model, str(path))
    saved = api.run_with_inputs(path, {"x": x, "s": scale, "b": bias},
                                tmp_path)
    groups = x.reshape(2, 3, -1)
    normalized = ((groups - groups.mean(-1, keepdims=True))
                  / np.sqrt(groups.var(-1, keepdims=True) + 1e-3))
    per_channel = (lambda p: np.repeat(p, 2)) if opset == 18 else (
        lambda p: p)
    expected = (normalized.reshape(x.shape)
                * per_channel(scale)[None, :, None, None]
                + per_channel(bias)[None, :, None, None])
    np.testing.assert_allclose(saved["y"], expected, rtol=1e-5, atol=1e-6)
