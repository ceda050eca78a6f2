// RUN: amp-opt %s --amp-analyze-training -split-input-file -verify-diagnostics
// RUN: not amp-opt %s --amp-analyze-training="loss=nothing" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADNAME

// BADNAME: error: loss='nothing' names no value of the graph

// Two float outputs with one element and nothing that says which is the
// loss.
// expected-error @+1 {{found 2 candidate losses: 'a' 'b'; name the loss with loss=<tensor>}}
func.func @two_losses(%x: tensor<4xf32> loc("x"), %dy: tensor<4xf32> loc("dy"))
    -> (tensor<f32> {onnxg.name = "a"}, tensor<f32> {onnxg.name = "b"}, tensor<4xf32> {onnxg.name = "dx"}) {
  %a = onnxg.node "ReduceSum"(%x) opset 17 : (tensor<4xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sa", "a"])
  %b = onnxg.node "ReduceMax"(%x) opset 17 : (tensor<4xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sb", "b"])
  %dx = onnxg.node "ReluGrad"(%dy, %x) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["rg", "dx"])
  return %a, %b, %dx : tensor<f32>, tensor<f32>, tensor<4xf32>
}

// -----

// A backward without any loss: a warning, and no barrier later.
// expected-warning @+1 {{no loss found: name it with loss=<tensor>; without it no loss scaling or barrier is placed}}
func.func @no_loss(%x: tensor<4xf32> loc("x"), %dy: tensor<4xf32> loc("dy"))
    -> (tensor<4xf32> {onnxg.name = "dx"}) {
  %dx = onnxg.node "ReluGrad"(%dy, %x) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["rg", "dx"])
  return %dx : tensor<4xf32>
}

// -----

// The loss reads a gradient.
// expected-error @+1 {{gradient 'w_grad' feeds the forward computation of loss 'loss'}}
func.func @gradient_feeds_forward(%x: tensor<4x4xf32> loc("x"), %w: tensor<4x4xf32> loc("w"),
                                  %buffer: tensor<4x4xf32> loc("buffer"), %reset: tensor<1xi1> loc("reset"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<1xi1> {onnxg.name = "done"}) {
  %seed = onnxg.initializer "loss_grad" dense<1.0> : tensor<f32> loc("loss_grad")
  %dw = onnxg.node "Mul"(%w, %seed) opset 17 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32> loc(fused<"onnx.outputs">["g", "w_grad"])
  %y = onnxg.node "MatMul"(%x, %dw) opset 17 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x4xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %done = onnxg.node "InPlaceAccumulatorV2"(%buffer, %dw, %reset) domain "com.microsoft" opset 1 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<1xi1>) -> tensor<1xi1> loc(fused<"onnx.outputs">["acc", "done"])
  return %loss, %done : tensor<f32>, tensor<1xi1>
}

// -----

module attributes {onnxg.metadata_props = [["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.parameters", "[{"]]} {
  // expected-error-re @+1 {{metadata 'amp_opt.parameters' is not valid JSON: {{.*}}}}
  func.func @bad_metadata(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
