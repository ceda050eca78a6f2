// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-gradients))' -split-input-file -verify-diagnostics

func.func @not_differentiable(%x: tensor<2x3xf32> loc("x"), %w: tensor<2x3xf32> loc("w")) -> tensor<2x3xf32> {
  %m = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc(fused<"onnx.outputs">["mul", "m"])
  %y = onnxg.node "Einsum"(%m) opset 17 attributes {equation = "ij->i"} : (tensor<2x3xf32>) -> tensor<2xf32> loc(fused<"onnx.outputs">["einsum", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'einsum' (Einsum): amp-opt differentiates Add, Sub, Mul, Div, Neg, Identity, Sum, Mean, Relu, LeakyRelu, Sigmoid, Tanh, Softplus, Exp, Log, Sqrt, Abs, Erf, Sin, Cos, HardSigmoid, Clip, Dropout, Pow (constant exponent), Where, MatMul, Gemm, Conv, ConvTranspose, MaxPool, AveragePool, LayerNormalization, BatchNormalization, ReduceSum, ReduceMean, ReduceMax, ReduceMin, Softmax, LogSoftmax, SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile, Resize, Concat, Split, Slice, Pad, Gather, GatherElements and Cast}}
  %dw = onnxg.node "Gradient"(%w) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w"], y = "y"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %dw : tensor<2x3xf32>
}

// -----

// Of other nodes than Split only the first result carries a gradient:
// LSTM's last state Y_h here does.
func.func @second_result_differentiated(%x: tensor<3x2x4xf32> loc("x"), %w: tensor<1x20x4xf32> loc("w"), %r: tensor<1x20x5xf32> loc("r")) -> tensor<1x20x4xf32> {
  %y, %h = onnxg.node "LSTM"(%x, %w, %r) opset 17 attributes {hidden_size = 5 : i64} : (tensor<3x2x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>) loc(fused<"onnx.outputs">["lstm", "y", "h"])
  %s = onnxg.node "Neg"(%h) opset 17 : (tensor<1x2x5xf32>) -> tensor<1x2x5xf32> loc(fused<"onnx.outputs">["neg", "s"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'lstm' (LSTM) between 'xs' and 'y'}}
  %dw = onnxg.node "Gradient"(%w) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w"], y = "s"} : (tensor<1x20x4xf32>) -> tensor<1x20x4xf32>
  return %dw : tensor<1x20x4xf32>
}

// -----

func.func @vector_matmul(%x: tensor<3xf32> loc("x"), %w: tensor<3x5xf32> loc("w")) -> tensor<3x5xf32> {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32> loc(fused<"onnx.outputs">["mm", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'mm' (MatMul): MatMul is differentiated for operands of rank 2 or more}}
  %dw = onnxg.node "Gradient"(%w) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w"], y = "y"} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %dw : tensor<3x5xf32>
}

// -----

// Repeats the graph computes.
func.func @computed_repeats(%x: tensor<2x3xf32> loc("x"), %r: tensor<2xi64> loc("r")) -> tensor<2x3xf32> {
  %t = onnxg.node "Tile"(%x, %r) opset 17 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32> loc(fused<"onnx.outputs">["tile", "t"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'tile' (Tile): Tile is differentiated for constant repeats}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "t"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %dx : tensor<2x3xf32>
}

// -----

// Bounds the graph computes.
func.func @computed_slice(%x: tensor<4xf32> loc("x"), %s: tensor<1xi64> loc("s")) -> tensor<4xf32> {
  %e = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64> loc(fused<"onnx.outputs">["end", "e"])
  %y = onnxg.node "Slice"(%x, %s, %e) opset 17 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32> loc(fused<"onnx.outputs">["slice", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'slice' (Slice): Slice is differentiated for constant bounds and nonzero steps}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<4xf32>) -> tensor<4xf32>
  return %dx : tensor<4xf32>
}

// -----

// A cubic Resize.
func.func @cubic_resize(%x: tensor<1x1x2x2xf32> loc("x")) -> tensor<1x1x2x2xf32> {
  %s = onnxg.node "Constant"() opset 17 attributes {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32> loc(fused<"onnx.outputs">["scales", "s"])
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32> loc(fused<"onnx.outputs">["roi", "n"])
  %y = onnxg.node "Resize"(%x, %n, %s) opset 17 attributes {mode = "cubic"} : (tensor<1x1x2x2xf32>, tensor<0xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32> loc(fused<"onnx.outputs">["resize", "y"])
  // expected-error @+1 {{node (Gradient): cannot differentiate node 'resize' (Resize): Resize is differentiated from opset 11, in modes nearest and linear, with coordinate_transformation_mode half_pixel, pytorch_half_pixel, asymmetric or align_corners, without antialias or axes}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %dx : tensor<1x1x2x2xf32>
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
