"""Cast statistics of an ONNX graph, to compare FP16 converters.

A lossy round trip is a Cast to a narrower float type whose result is cast
straight back to the wider type: the value loses bits and no op computes in
the narrow type in between (f32 -> f16 -> f32).
"""
import onnx
from onnx import TensorProto

# Significand bits per float type: a cast loses bits when it narrows them.
_PRECISION = {TensorProto.DOUBLE: 53, TensorProto.FLOAT: 24,
              TensorProto.FLOAT16: 11, TensorProto.BFLOAT16: 8}


def _element_types(model):
    """Value name -> element type, after shape inference, for every value
    whose type is known."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # inference is best-effort; declared types suffice
        inferred = model
    graph = inferred.graph
    types = {}
    for info in list(graph.input) + list(graph.output) + \
            list(graph.value_info):
        if info.type.HasField("tensor_type"):
            types[info.name] = info.type.tensor_type.elem_type
    for tensor in graph.initializer:
        types[tensor.name] = tensor.data_type
    return types


def _cast_to(node):
    for attribute in node.attribute:
        if attribute.name == "to":
            return attribute.i
    return None


def count_casts(model):
    """Cast nodes of the top-level graph."""
    return sum(node.op_type == "Cast" and node.domain in ("", "ai.onnx")
               for node in model.graph.node)


def lossy_round_trips(model):
    """(narrowing cast, widening cast) name pairs of the top-level graph
    where a float value is narrowed and cast straight back."""
    types = _element_types(model)
    producers = {}
    for node in model.graph.node:
        for output in node.output:
            producers[output] = node
    pairs = []
    for node in model.graph.node:
        if node.op_type != "Cast" or not node.input:
            continue
        first = producers.get(node.input[0])
        if first is None or first.op_type != "Cast" or not first.input:
            continue
        source = types.get(first.input[0])
        via, to = _cast_to(first), _cast_to(node)
        if source in _PRECISION and via in _PRECISION and to in _PRECISION \
                and _PRECISION[via] < _PRECISION[source] \
                and _PRECISION[via] < _PRECISION[to]:
            pairs.append((first.name or first.output[0],
                          node.name or node.output[0]))
    return pairs
