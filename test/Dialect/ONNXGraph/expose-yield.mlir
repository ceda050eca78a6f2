// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expose-yield))' -split-input-file --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --enable-var-scope

// ORTModule: YieldOp hands the logits to PyTorch and takes their gradient.
// The step returns the logits after the parameter gradient and takes the
// gradient as its last input, named as YieldOp's output.
// CHECK-LABEL: func.func @ortmodule(
// CHECK-SAME:      %[[X:arg[0-9]+]]: tensor<2x4xf32> loc("x"), %[[W:arg[0-9]+]]: tensor<3x4xf32> loc("w"), %[[SEED:arg[0-9]+]]: tensor<2x3xf32> loc("output-0_grad"))
// CHECK-SAME:      -> (tensor<3x4xf32> {onnxg.name = "w_grad"}, tensor<2x3xf32> {onnxg.name = "logits"})
// CHECK-NOT:     YieldOp
// CHECK:         %[[LOGITS:.*]] = onnxg.node "Gemm"(%[[X]], %[[W]])
// CHECK:         %[[DW:.*]] = onnxg.node "Gemm"(%[[SEED]], %[[X]])
// CHECK:         return %[[DW]], %[[LOGITS]]
module attributes {onnxg.opset_imports = [["", 17], ["com.microsoft", 1]]} {
func.func @ortmodule(%x: tensor<2x4xf32> loc("x"), %w: tensor<3x4xf32> loc("w")) -> (tensor<3x4xf32> {onnxg.name = "w_grad"}) {
  %logits = onnxg.node "Gemm"(%x, %w) opset 17 attributes {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32> loc(fused<"onnx.outputs">["gemm", "logits"])
  %seed = onnxg.node "YieldOp"(%logits) domain "com.microsoft" opset 1 attributes {full_shape_outputs = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(fused<"onnx.outputs">["yield", "output-0_grad"])
  %dw = onnxg.node "Gemm"(%seed, %x) opset 17 attributes {transA = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32> loc(fused<"onnx.outputs">["dw", "w_grad"])
  return %dw : tensor<3x4xf32>
}
}

// -----

// A module that returns its loss: the loss is returned once (it is an
// output already), and a non-differentiable output (the labels' count) has
// no gradient to take.
// CHECK-LABEL: func.func @loss_returned(
// CHECK-SAME:      %{{arg[0-9]+}}: tensor<f32> loc("loss_grad"))
// CHECK-SAME:      -> (tensor<f32> {onnxg.name = "loss"}, tensor<3x4xf32> {onnxg.name = "w_grad"}, tensor<i64> {onnxg.name = "count"})
module attributes {onnxg.opset_imports = [["", 17], ["com.microsoft", 1]]} {
func.func @loss_returned(%w: tensor<3x4xf32> loc("w"), %count: tensor<i64> loc("count")) -> (tensor<f32> {onnxg.name = "loss"}, tensor<3x4xf32> {onnxg.name = "w_grad"}) {
  %loss = onnxg.node "ReduceSum"(%w) opset 17 attributes {keepdims = 0 : i64} : (tensor<3x4xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %seed = onnxg.node "YieldOp"(%loss, %count) domain "com.microsoft" opset 1 attributes {full_shape_outputs = array<i64: 0>, non_differentiable_outputs = array<i64: 1>} : (tensor<f32>, tensor<i64>) -> tensor<f32> loc(fused<"onnx.outputs">["yield", "loss_grad"])
  %dw = onnxg.node "Expand"(%seed, %w) opset 17 : (tensor<f32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc(fused<"onnx.outputs">["dw", "w_grad"])
  return %loss, %dw : tensor<f32>, tensor<3x4xf32>
}
}
