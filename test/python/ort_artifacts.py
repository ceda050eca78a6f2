"""Helpers that build graphs in ONNX Runtime's training-artifact form."""
from onnx import TensorProto, helper


def add_gradient_accumulators(params, nodes, inputs, outputs):
    """What generate_artifacts appends for each parameter P (name ->
    shape): an InPlaceAccumulatorV2 of P_grad into the input buffer
    P_grad.accumulation.buffer, whose updated flag is an output, and the
    lazy_reset_grad input they share."""
    info = helper.make_tensor_value_info
    for name, shape in params.items():
        nodes.append(helper.make_node(
            "InPlaceAccumulatorV2",
            [f"{name}_grad.accumulation.buffer", f"{name}_grad",
             "lazy_reset_grad"],
            [f"{name}_grad.accumulation.out"], domain="com.microsoft"))
        inputs.append(info(f"{name}_grad.accumulation.buffer",
                           TensorProto.FLOAT, shape))
        # The accumulator's output is its updated flag; amp-run carries the
        # buffer it updates in place.
        outputs.append(info(f"{name}_grad.accumulation.out",
                            TensorProto.BOOL, [1]))
    inputs.append(info("lazy_reset_grad", TensorProto.BOOL, [1]))


def artifact_io(data, params, nodes):
    """The inputs and outputs of an artifact's graph: the `data` inputs
    ({name: (TensorProto type, shape)}), then the parameters ({name:
    shape}, float), the loss output, and each parameter's gradient
    accumulator (add_gradient_accumulators, appended to `nodes`)."""
    info = helper.make_tensor_value_info
    inputs = [info(name, kind, shape) for name, (kind, shape) in data.items()]
    inputs += [info(name, TensorProto.FLOAT, shape)
               for name, shape in params.items()]
    outputs = [info("loss", TensorProto.FLOAT, [])]
    add_gradient_accumulators(params, nodes, inputs, outputs)
    return inputs, outputs


def make_artifact(name, nodes, inputs, outputs, initializers, contrib):
    """The model, as ONNX Runtime writes one at opset 14 with com.microsoft
    ops: the types of what its contrib ops compute (`contrib`, name ->
    shape) in value_info, ONNX's shape inference for the rest."""
    import onnx
    graph = helper.make_graph(
        nodes, name, inputs, outputs, initializers,
        value_info=[helper.make_tensor_value_info(value, TensorProto.FLOAT,
                                                  shape)
                    for value, shape in contrib.items()])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 7
    return onnx.shape_inference.infer_shapes(model)
