// Our exporter's step with one more state tensor that its metadata does not
// list (analyze-training-options.mlir adds it with updates=).
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\", \"updated\": \"w.updated\", \"state\": {}, \"state_updated\": {}}]"],
    ["amp_opt.optimizer", "{\"type\": \"sgd\", \"step\": null, \"step_updated\": null}"]]} {
  func.func @step(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                  %seed: tensor<f32> loc("loss.seed"), %ema: tensor<8x8xf32> loc("ema"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"}, tensor<8x8xf32> {onnxg.name = "ema_after"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %dy = onnxg.node "Mul"(%y, %seed) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
    %step = onnxg.node "Mul"(%lr, %dw) opset 17 : (tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["scale", "w.step"])
    %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
    %avg = onnxg.node "Add"(%ema, %new) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["average", "ema_after"])
    return %loss, %new, %avg : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
