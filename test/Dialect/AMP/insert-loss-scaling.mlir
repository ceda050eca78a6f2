// RUN: amp-opt %s --amp-analyze-training --amp-insert-loss-scaling -split-input-file | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: amp-opt %s --amp-analyze-training --amp-insert-loss-scaling="mode=static init-scale=1024" -split-input-file | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: amp-opt %s --amp-analyze-training --amp-insert-loss-scaling="mode=none" -split-input-file | FileCheck %s --check-prefix=NONE

// The seed is scaled; each gradient is unscaled before the optimizer reads
// it, while the backward op that computes v's gradient from w's keeps the
// scaled value. Dynamic mode checks the unscaled gradients, keeps w after
// an overflow, and updates the scale and count it adds as state.
// CHECK-LABEL: func.func @amp_opt_step
// CHECK-SAME:    %[[SEED:arg[0-9]+]]: tensor<f32>, %[[SCALE:arg[0-9]+]]: tensor<f32> {onnxg.initializer = dense<
// DYN-SAME:      6.553600e+04
// STATIC-SAME:   1.024000e+03
// DYN-SAME:      %[[COUNT:arg[0-9]+]]: tensor<i64> {onnxg.initializer = dense<0> : tensor<i64>}
// DYN-SAME:      {onnxg.name = "amp.loss_scale.updated"}, tensor<i64> {onnxg.name = "amp.growth_count.updated"})
// STATIC-NOT:    amp.growth_count
// STATIC-SAME:   {onnxg.name = "v.grad"}) attributes
// CHECK-SAME:    amp.loss_scaling = "{
// DYN-SAME:      \22mode\22:\22dynamic\22
// STATIC-SAME:   \22mode\22:\22static\22
// CHECK:         %[[SCALED:.*]] = amp.scale_loss %[[SEED]] by %[[SCALE]]
// CHECK:         %[[DY:.*]] = onnxg.node "Mul"(%{{.*}}, %[[SCALED]])
// CHECK:         %[[DW:.*]] = onnxg.node "MatMul"(%{{.*}}, %[[DY]])
// CHECK:         %[[DWU:.*]] = amp.unscale %[[DW]] by %[[SCALE]]
// CHECK:         %[[DV:.*]] = onnxg.node "MatMul"(%{{.*}}, %[[DW]])
// CHECK:         %[[DVU:.*]] = amp.unscale %[[DV]] by %[[SCALE]]
// CHECK:         onnxg.node "Mul"(%{{.*}}, %[[DWU]])
// CHECK:         %[[NEW:.*]] = onnxg.node "Sub"
// DYN:           %[[FINITE:.*]] = amp.all_finite %[[DWU]], %[[DVU]] : tensor<8x8xf32>, tensor<4x8xf32>
// DYN:           %[[KEPT:.*]] = amp.update_if_finite %[[FINITE]], %[[NEW]], %arg1
// DYN:           %[[S:.*]], %[[C:.*]] = amp.update_scale %[[SCALE]], %[[COUNT]], %[[FINITE]] {backoff_factor = 5.000000e-01 : f32, growth_factor = 2.000000e+00 : f32, growth_interval = 2000 : i64, max_scale = 0x4B800000 : f32, min_scale = 1.000000e+00 : f32}
// DYN:           return %{{.*}}, %[[KEPT]], %[[DVU]], %[[S]], %[[C]]
// STATIC-NOT:    amp.all_finite
// STATIC:        return %{{.*}}, %[[NEW]], %[[DVU]] :
// NONE-LABEL:  func.func @amp_opt_step
// NONE-NOT:      amp.{{scale_loss|unscale|all_finite|loss_scale}}
// NONE:          return
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\", \"updated\": \"w.updated\", \"state\": {}, \"state_updated\": {}}, {\"name\": \"v\", \"gradient\": \"v.grad\"}]"]]} {
  func.func @amp_opt_step(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                          %v: tensor<4x8xf32> loc("v"), %seed: tensor<f32> loc("loss.seed"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"}, tensor<4x8xf32> {onnxg.name = "v.grad"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %dy = onnxg.node "Mul"(%y, %seed) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %dv = onnxg.node "MatMul"(%x, %dw) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dv", "v.grad"])
    %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
    %step = onnxg.node "Mul"(%lr, %dw) opset 17 : (tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["scale", "w.step"])
    %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
    return %loss, %new, %dv : tensor<f32>, tensor<8x8xf32>, tensor<4x8xf32>
  }
}

// -----

// An ONNX Runtime artifact: the optimizer runs in another graph, so after an
// overflow the accumulator gets zeros and the step says so in an output.
// CHECK-LABEL: func.func @ort_artifact
// DYN-SAME:      tensor<i1> {onnxg.name = "amp.grads_finite"}
// CHECK:         %[[SEED:.*]] = onnxg.initializer "loss_grad"
// CHECK:         amp.scale_loss %[[SEED]]
// CHECK:         %[[DW:.*]] = onnxg.node "MatMul"
// CHECK:         %[[DWU:.*]] = amp.unscale %[[DW]]
// DYN:           %[[FINITE:.*]] = amp.all_finite %[[DWU]] : tensor<8x8xf32>
// DYN:           %[[ZERO:.*]] = onnxg.initializer "w_grad.unscaled.finite.zero" dense<0.000000e+00> : tensor<f32>
// DYN:           %[[GATED:.*]] = amp.update_if_finite %[[FINITE]], %[[DWU]], %[[ZERO]] : tensor<8x8xf32>, tensor<f32>
// DYN:           "InPlaceAccumulatorV2"(%{{.*}}, %[[GATED]], %{{.*}})
// STATIC:        "InPlaceAccumulatorV2"(%{{.*}}, %[[DWU]], %{{.*}})
// DYN:           return {{.*}}, %[[FINITE]],
func.func @ort_artifact(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                        %buffer: tensor<8x8xf32> loc("w_grad.accumulation.buffer"),
                        %reset: tensor<1xi1> loc("lazy_reset_grad"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<1xi1> {onnxg.name = "w_grad.accumulation.out"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %seed = onnxg.initializer "loss_grad" dense<1.0> : tensor<f32> loc("loss_grad")
  %shape = onnxg.initializer "shape" dense<[4, 8]> : tensor<2xi64> loc("shape")
  %dy = onnxg.node "Expand"(%seed, %shape) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["sum_grad", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  %done = onnxg.node "InPlaceAccumulatorV2"(%buffer, %dw, %reset) domain "com.microsoft" opset 1 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1xi1>) -> tensor<1xi1> loc(fused<"onnx.outputs">["acc", "w_grad.accumulation.out"])
  return %loss, %done : tensor<f32>, tensor<1xi1>
}

// -----

// ONNX's Gradient has its seed inside: it differentiates the scaled loss,
// which it names; the loss output stays unscaled.
// CHECK-LABEL: func.func @onnx_gradient
// CHECK:         %[[C:.*]] = onnxg.node "Add"
// CHECK:         amp.scale_loss %[[C]]
// CHECK:         onnxg.node "Gradient"{{.*}}y = "c.scaled"
// CHECK:         amp.unscale
// CHECK:         amp.unscale
// CHECK:         return %[[C]],
func.func @onnx_gradient(%a: tensor<f32> loc("a"), %b: tensor<f32> loc("b"))
    -> (tensor<f32> {onnxg.name = "c"}, tensor<f32> {onnxg.name = "da"}, tensor<f32> {onnxg.name = "db"}) {
  %c = onnxg.node "Add"(%a, %b) opset 12 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["add", "c"])
  %da, %db = onnxg.node "Gradient"(%a, %b) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["a", "b"], y = "c"} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) loc(fused<"onnx.outputs">["grad", "da", "db"])
  return %c, %da, %db : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A step without markers (amp-analyze-training's `training_step`): the
// constant seed is scaled where the backward reads it; the gradient and the
// input gradient, an output, are unscaled (the analysis's `unscale`); the
// update keeps the weight after an overflow, the buffer `count` still
// counts.
// CHECK-LABEL: func.func @dataflow_step
// CHECK:         %[[ONE:.*]] = onnxg.initializer "one"
// CHECK:         %[[SCALED:.*]] = amp.scale_loss %[[ONE]]
// CHECK:         onnxg.node "Mul"(%[[SCALED]]
// CHECK:         %[[G:.*]] = onnxg.node "Mul"
// CHECK:         %[[GU:.*]] = amp.unscale %[[G]]
// CHECK:         %[[DX:.*]] = onnxg.node "Mul"
// CHECK:         %[[DXU:.*]] = amp.unscale %[[DX]]
// CHECK:         onnxg.node "Mul"(%[[GU]]
// CHECK:         %[[NEW:.*]] = onnxg.node "Sub"
// CHECK:         %[[COUNT:.*]] = onnxg.node "Add"
// DYN:           %[[FINITE:.*]] = amp.all_finite %[[GU]], %[[DXU]]
// DYN:           %[[KEPT:.*]] = amp.update_if_finite %[[FINITE]], %[[NEW]], %arg1
// DYN:           return %{{.*}}, %[[DXU]], %[[KEPT]], %[[COUNT]],
// STATIC:        return %{{.*}}, %[[DXU]], %[[NEW]], %[[COUNT]] :
// NONE-LABEL:  func.func @dataflow_step
// NONE-NOT:      amp.{{scale_loss|unscale}}
func.func @dataflow_step(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"), %count: tensor<1xi64> loc("count"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "dx"},
        tensor<4x8xf32> {onnxg.name = "w_new"}, tensor<1xi64> {onnxg.name = "count_new"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dy = onnxg.node "Mul"(%one, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %dx = onnxg.node "Mul"(%dy, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dxn", "dx"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "w_new"])
  %inc = onnxg.initializer "inc" dense<1> : tensor<1xi64> loc("inc")
  %next = onnxg.node "Add"(%count, %inc) opset 17 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64> loc(fused<"onnx.outputs">["tick", "count_new"])
  return %loss, %dx, %new, %next : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi64>
}
