// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-gradients))' -split-input-file -verify-diagnostics

func.func @not_differentiable(%x: tensor<1x1x4x4xf32> loc("x"), %w: tensor<1x1x3x3xf32> loc("w")) -> tensor<1x1x3x3xf32> {
  %y = onnxg.node "Conv"(%x, %w) opset 17 : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> loc(fused<"onnx.outputs">["conv", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'conv' (Conv): amp-opt differentiates Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Pow (constant exponent), MatMul, Gemm, ReduceSum, ReduceMean, Softmax, LogSoftmax, Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Cast}}
  %dw = onnxg.node "Gradient"(%w) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w"], y = "y"} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %dw : tensor<1x1x3x3xf32>
}

// -----

func.func @vector_matmul(%x: tensor<3xf32> loc("x"), %w: tensor<3x5xf32> loc("w")) -> tensor<3x5xf32> {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32> loc(fused<"onnx.outputs">["mm", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'mm' (MatMul): MatMul is differentiated for operands of one rank of at least 2 with equal batch dimensions}}
  %dw = onnxg.node "Gradient"(%w) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w"], y = "y"} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %dw : tensor<3x5xf32>
}

// -----

func.func @dynamic_y(%x: tensor<?xf32> loc("x")) -> tensor<?xf32> {
  %y = onnxg.node "Exp"(%x) opset 17 : (tensor<?xf32>) -> tensor<?xf32> loc(fused<"onnx.outputs">["exp", "y"])
  // expected-error @+1 {{node (Gradient): 'y' has type 'tensor<?xf32>'; its seed of ones needs a float tensor of static shape}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<?xf32>) -> tensor<?xf32>
  return %dx : tensor<?xf32>
}

// -----

func.func @unknown_x(%x: tensor<3xf32> loc("x")) -> tensor<3xf32> {
  %y = onnxg.node "Exp"(%x) opset 17 : (tensor<3xf32>) -> tensor<3xf32> loc(fused<"onnx.outputs">["exp", "y"])
  // expected-error @+1 {{node (Gradient): 'xs' names 'z', which is no value of the graph}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["z"], y = "y"} : (tensor<3xf32>) -> tensor<3xf32>
  return %dx : tensor<3xf32>
}
