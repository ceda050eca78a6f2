// RUN: amp-opt %s --amp-pipeline="precision=fp16 op-class=MatMul:always" -split-input-file 2>/dev/null | FileCheck %s
// RUN: amp-opt %s --amp-pipeline="precision=bf16 op-class=MatMul:always" -split-input-file 2>/dev/null | FileCheck %s --check-prefix=BF16

// Nothing after amp.unscale becomes low precision, in every kind of training
// graph: here a MatMul that the policy makes always-low reads the unscaled
// gradient and stays FP32 (reason barrier), while the backward MatMul that
// computes the gradient goes FP16. With bf16 there is no loss scaling, and
// the optimizer region is the barrier.

// CHECK-LABEL: func.func @amp_opt_step
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "policy", amp.region = "backward"
// CHECK:         amp.unscale
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"
// CHECK-SAME:    (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK:         onnxg.node "Sub"{{.*}}amp.reason = "barrier"
// BF16-LABEL:  func.func @amp_opt_step
// BF16-NOT:      amp.unscale
// BF16:          onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\", \"updated\": \"w.updated\", \"state\": {}, \"state_updated\": {}}]"]]} {
  func.func @amp_opt_step(%x: tensor<8x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                          %seed: tensor<f32> loc("loss.seed"), %p: tensor<8x8xf32> loc("preconditioner"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<8x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %shape = onnxg.initializer "shape" dense<8> : tensor<2xi64> loc("shape")
    %dy = onnxg.node "Expand"(%seed, %shape) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %step = onnxg.node "MatMul"(%p, %dw) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["precondition", "w.step"])
    %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
    return %loss, %new : tensor<f32>, tensor<8x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @ort_artifact
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "policy", amp.region = "backward"
// CHECK:         amp.unscale
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"
// CHECK:         "InPlaceAccumulatorV2"
func.func @ort_artifact(%x: tensor<8x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                        %buffer: tensor<8x8xf32> loc("w_grad.accumulation.buffer"),
                        %reset: tensor<1xi1> loc("lazy_reset_grad"), %p: tensor<8x8xf32> loc("p"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<1xi1> {onnxg.name = "w_grad.accumulation.out"}, tensor<8x8xf32> {onnxg.name = "w_grad.clipped"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<8x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %seed = onnxg.initializer "loss_grad" dense<1.0> : tensor<f32> loc("loss_grad")
  %shape = onnxg.initializer "shape" dense<8> : tensor<2xi64> loc("shape")
  %dy = onnxg.node "Expand"(%seed, %shape) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["sum_grad", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  %clipped = onnxg.node "MatMul"(%p, %dw) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["clip", "w_grad.clipped"])
  %done = onnxg.node "InPlaceAccumulatorV2"(%buffer, %dw, %reset) domain "com.microsoft" opset 1 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1xi1>) -> tensor<1xi1> loc(fused<"onnx.outputs">["acc", "w_grad.accumulation.out"])
  return %loss, %done, %clipped : tensor<f32>, tensor<1xi1>, tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @ort_module
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "policy", amp.region = "backward"
// CHECK:         amp.unscale
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"
func.func @ort_module(%x: tensor<8x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"), %p: tensor<8x8xf32> loc("p"))
    -> (tensor<8x8xf32> {onnxg.name = "w_grad"}, tensor<8x8xf32> {onnxg.name = "w_grad.clipped"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %dy = onnxg.node "YieldOp"(%y) domain "com.microsoft" opset 1 attributes {full_shape_outputs = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["yield", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  %clipped = onnxg.node "MatMul"(%p, %dw) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["clip", "w_grad.clipped"])
  return %dw, %clipped : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @onnx_gradient
// CHECK:         amp.unscale
// CHECK:         onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"
func.func @onnx_gradient(%a: tensor<8x8xf32> loc("a"), %b: tensor<8x8xf32> loc("b"))
    -> (tensor<f32> {onnxg.name = "c"}, tensor<8x8xf32> {onnxg.name = "step"}) {
  %m = onnxg.node "MatMul"(%a, %b) opset 12 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm", "m"])
  %c = onnxg.node "ReduceSum"(%m) opset 12 attributes {keepdims = 0 : i64} : (tensor<8x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "c"])
  %da = onnxg.node "Gradient"(%a, %b) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["a"], y = "c"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["grad", "da"])
  %step = onnxg.node "MatMul"(%b, %da) opset 12 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["precondition", "step"])
  return %c, %step : tensor<f32>, tensor<8x8xf32>
}
