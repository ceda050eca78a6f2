#!/usr/bin/python3
"""Writes examples/mlp_training_step.onnx, the graph `make demo` imports.

One SGD training step of a two-layer MLP in plain ONNX ops: forward (Gemm,
Relu, Gemm), softmax cross-entropy loss, the backward pass written out by
hand, and the parameter update. Parameters are graph inputs with their
current values as initializers; metadata_props records the roles in the
format of amp_opt.export (docs/TrainingStepFormat.md), including the
backward seed `loss.seed` (the gradient of the loss, 1), which loss scaling
multiplies. Options give other widths and another output file (`make demo`
writes a wider MLP to build/ for its FP16 conversion).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--features", type=int, default=4)
parser.add_argument("--hidden", type=int, default=8)
parser.add_argument("--classes", type=int, default=3)
parser.add_argument("-o", "--output", default=os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "mlp_training_step.onnx"))
args = parser.parse_args()
N, D, H, C = 16, args.features, args.hidden, args.classes
rng = np.random.default_rng(0)
params = {
    "fc1.weight": rng.standard_normal((H, D)).astype(np.float32) * 0.5,
    "fc1.bias": np.zeros(H, np.float32),
    "fc2.weight": rng.standard_normal((C, H)).astype(np.float32) * 0.5,
    "fc2.bias": np.zeros(C, np.float32),
}
consts = {
    "lr": np.array(0.1, np.float32),
    "zero": np.array(0.0, np.float32),
    "batch": np.array(float(N), np.float32),
    "axis0": np.array([0], np.int64),
    "depth": np.array(C, np.int64),
    "onehot_values": np.array([0.0, 1.0], np.float32),
}
n = helper.make_node
nodes = [
    # forward and loss
    n("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
    n("Relu", ["h"], ["a"], name="relu"),
    n("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], name="fc2", transB=1),
    n("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"], name="loss",
      reduction="mean"),
    # backward: d(loss)/d(logits) = seed * (softmax - onehot) / N
    n("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    n("OneHot", ["labels", "depth", "onehot_values"], ["onehot"], name="onehot"),
    n("Sub", ["probs", "onehot"], ["diff"], name="dlogits_sub"),
    n("Mul", ["diff", "loss.seed"], ["seeded"], name="dlogits_seed"),
    n("Div", ["seeded", "batch"], ["dlogits"], name="dlogits"),
    n("Gemm", ["dlogits", "a"], ["fc2.weight_grad"], name="fc2_dw", transA=1),
    n("ReduceSum", ["dlogits", "axis0"], ["fc2.bias_grad"], name="fc2_db",
      keepdims=0),
    n("MatMul", ["dlogits", "fc2.weight"], ["da"], name="fc2_dx"),
    n("Greater", ["h", "zero"], ["active"], name="relu_mask"),
    n("Where", ["active", "da", "zero"], ["dh"], name="relu_grad"),
    n("Gemm", ["dh", "x"], ["fc1.weight_grad"], name="fc1_dw", transA=1),
    n("ReduceSum", ["dh", "axis0"], ["fc1.bias_grad"], name="fc1_db",
      keepdims=0),
]
# SGD: p_new = p - lr * grad
for p in params:
    nodes += [n("Mul", ["lr", p + "_grad"], [p + "_step"], name=p + "_scale"),
              n("Sub", [p, p + "_step"], [p + "_new"], name=p + "_update")]

inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", D]),
          helper.make_tensor_value_info("labels", TensorProto.INT64,
                                        ["batch"])]
inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
           for k, v in params.items()]
inputs.append(helper.make_tensor_value_info("loss.seed", TensorProto.FLOAT, []))
outputs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])]
outputs += [helper.make_tensor_value_info(k + "_new", TensorProto.FLOAT,
                                          v.shape) for k, v in params.items()]
seed = {"loss.seed": np.array(1.0, np.float32)}
inits = [numpy_helper.from_array(v, k)
         for k, v in {**params, **seed, **consts}.items()]
graph = helper.make_graph(nodes, "mlp_training_step", inputs, outputs, inits)
model = helper.make_model(graph, producer_name="amp-opt examples",
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
# The roles, as amp_opt.export writes them (docs/TrainingStepFormat.md).
roles = {
    "amp_opt.format": "amp_opt.training_step.v1",
    "amp_opt.loss": "loss",
    "amp_opt.loss_seed": "loss.seed",
    "amp_opt.inputs": ["x"],
    "amp_opt.targets": ["labels"],
    "amp_opt.parameters": [
        {"name": p, "aliases": [p], "gradient": p + "_grad",
         "updated": p + "_new", "state": {}, "state_updated": {}}
        for p in params],
    "amp_opt.buffers": [],
    "amp_opt.optimizer": {"type": "sgd", "step": None, "step_updated": None,
                          "lr": 0.1, "momentum": 0.0, "dampening": 0.0,
                          "weight_decay": 0.0, "nesterov": False,
                          "maximize": False},
}
helper.set_model_props(model, {
    key: value if isinstance(value, str) else json.dumps(value)
    for key, value in roles.items()})
onnx.checker.check_model(model)
out = args.output
onnx.save(model, out)
print(f"wrote {out}: {len(nodes)} nodes")
