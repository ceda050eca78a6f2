// RUN: amp-opt %s --amp-analyze-training="remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

// Our exporter's step: the roles come from the amp_opt.* metadata. The
// gradient of w feeds the gradient of v (as BatchNorm's bias gradient feeds
// its input gradient): the op reading it there is backward, the update is
// optimizer.
// CHECK-LABEL: func.func @amp_opt_step
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["w.grad", "v.grad"], kind = "amp_opt.training_step", loss = "loss", parameters = ["w", "v"], seeds = ["loss.seed"], unscale = [], updates = {{\[\["w.updated", "w"\]\]}}}
// CHECK:         "MatMul"{{.*}}amp.region = "forward"
// CHECK:         "ReduceSum"{{.*}}amp.region = "forward"
// CHECK:         "Mul"{{.*}}amp.region = "backward"
// CHECK:         "MatMul"{{.*}}amp.region = "backward"
// CHECK:         "MatMul"{{.*}}amp.region = "backward"
// CHECK:         onnxg.initializer "lr"{{.*}}amp.region = "optimizer"
// CHECK:         "Mul"{{.*}}amp.region = "optimizer"
// CHECK:         "Sub"{{.*}}amp.region = "optimizer"
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\", \"updated\": \"w.updated\", \"state\": {}, \"state_updated\": {}}, {\"name\": \"v\", \"gradient\": \"v.grad\"}]"],
    ["amp_opt.optimizer", "{\"type\": \"sgd\", \"step\": null, \"step_updated\": null}"]]} {
  // expected-remark @+1 {{amp_opt.training_step: loss 'loss', 1 seeds, 2 parameters with gradients, 1 updates, 0 buffers; 2 forward, 3 backward, 3 optimizer ops}}
  func.func @amp_opt_step(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                          %v: tensor<4x8xf32> loc("v"), %seed: tensor<f32> loc("loss.seed"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"}, tensor<4x8xf32> {onnxg.name = "v.grad"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %dy = onnxg.node "Mul"(%y, %seed) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %dx = onnxg.node "MatMul"(%x, %dw) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dv", "v.grad"])
    %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
    %step = onnxg.node "Mul"(%lr, %dw) opset 17 : (tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["scale", "w.step"])
    %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
    return %loss, %new, %dx : tensor<f32>, tensor<8x8xf32>, tensor<4x8xf32>
  }
}

// -----

// ONNX Runtime's training artifact: accumulators read `<param>_grad`, the
// seed of loss `loss` is `loss_grad`.
// CHECK-LABEL: func.func @ort_artifact
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["w_grad"], kind = "ort.training_artifact", loss = "loss", parameters = ["w"], seeds = ["loss_grad"], unscale = [], updates = []}
// CHECK:         "InPlaceAccumulatorV2"{{.*}}amp.region = "optimizer"
// expected-remark @+1 {{ort.training_artifact: loss 'loss', 1 seeds, 1 parameters with gradients, 0 updates, 0 buffers; 2 forward, 4 backward, 1 optimizer ops}}
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

// A training artifact with ONNX Runtime's optimizer graph appended (amp-run
// --optimizer): AdamOptimizer's new step count, moments and weights replace
// the inputs they update.
// CHECK-LABEL: func.func @ort_artifact_with_adam
// CHECK-SAME:    kind = "ort.training_artifact"
// CHECK-SAME:    updates = {{\[\[}}"w.step.out", "step"], ["w.exp_avg.out", "w.exp_avg"], ["w.exp_avg_sq.out", "w.exp_avg_sq"], ["w.out", "w"]]
// expected-remark @+1 {{ort.training_artifact: loss 'loss', 1 seeds, 1 parameters with gradients, 4 updates, 0 buffers}}
func.func @ort_artifact_with_adam(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                        %buffer: tensor<8x8xf32> loc("w_grad.accumulation.buffer"),
                        %reset: tensor<1xi1> loc("lazy_reset_grad"),
                        %lr: tensor<f32> loc("learning_rate"), %step: tensor<i64> loc("step"),
                        %m1: tensor<8x8xf32> loc("w.exp_avg"), %m2: tensor<8x8xf32> loc("w.exp_avg_sq"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<1xi1> {onnxg.name = "w_grad.accumulation.out"}, tensor<i64> {onnxg.name = "w.step.out"}, tensor<8x8xf32> {onnxg.name = "w.exp_avg.out"}, tensor<8x8xf32> {onnxg.name = "w.exp_avg_sq.out"}, tensor<8x8xf32> {onnxg.name = "w.out"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %seed = onnxg.initializer "loss_grad" dense<1.0> : tensor<f32> loc("loss_grad")
  %shape = onnxg.initializer "shape" dense<[4, 8]> : tensor<2xi64> loc("shape")
  %dy = onnxg.node "Expand"(%seed, %shape) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["sum_grad", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  %done = onnxg.node "InPlaceAccumulatorV2"(%buffer, %dw, %reset) domain "com.microsoft" opset 1 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1xi1>) -> tensor<1xi1> loc(fused<"onnx.outputs">["acc", "w_grad.accumulation.out"])
  %s, %n1, %n2, %nw = onnxg.node "AdamOptimizer"(%lr, %step, %w, %dw, %m1, %m2) domain "com.microsoft" opset 1 : (tensor<f32>, tensor<i64>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<i64>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) loc(fused<"onnx.outputs">["adam", "w.step.out", "w.exp_avg.out", "w.exp_avg_sq.out", "w.out"])
  return %loss, %done, %s, %n1, %n2, %nw : tensor<f32>, tensor<1xi1>, tensor<i64>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// ORTModule: YieldOp hands the forward's output out and takes its gradient
// back, the seed; parameter gradients are `<param>_grad` outputs.
// CHECK-LABEL: func.func @ort_module
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["w_grad"], kind = "ort.module", loss = "", parameters = ["w"], seeds = ["y_grad"], unscale = [], updates = []}
// CHECK:         "YieldOp"{{.*}}amp.region = "backward"
// expected-remark @+1 {{ort.module: loss '', 1 seeds, 1 parameters with gradients, 0 updates, 0 buffers; 1 forward, 2 backward, 0 optimizer ops}}
func.func @ort_module(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"))
    -> (tensor<8x8xf32> {onnxg.name = "w_grad"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %dy = onnxg.node "YieldOp"(%y) domain "com.microsoft" opset 1 attributes {full_shape_outputs = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["yield", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  return %dw : tensor<8x8xf32>
}

// -----

// ONNX's Gradient: `y` names the loss, `xs` the parameters.
// CHECK-LABEL: func.func @onnx_gradient
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["da", "db"], kind = "onnx.gradient", loss = "c", parameters = ["a", "b"], seeds = [], unscale = [], updates = []}
// expected-remark @+1 {{onnx.gradient: loss 'c', 0 seeds, 2 parameters with gradients, 0 updates, 0 buffers; 1 forward, 1 backward, 0 optimizer ops}}
func.func @onnx_gradient(%a: tensor<f32> loc("a"), %b: tensor<f32> loc("b"))
    -> (tensor<f32> {onnxg.name = "c"}, tensor<f32> {onnxg.name = "da"}, tensor<f32> {onnxg.name = "db"}) {
  %c = onnxg.node "Add"(%a, %b) opset 12 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["add", "c"])
  %da, %db = onnxg.node "Gradient"(%a, %b) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["a", "b"], y = "c"} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) loc(fused<"onnx.outputs">["grad", "da", "db"])
  return %c, %da, %db : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// An optimizer without backward: parameters and gradients are its inputs,
// the updates its outputs.
// CHECK-LABEL: func.func @optimizer_only
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["G"], kind = "optimizer", loss = "", parameters = ["X"], seeds = [], unscale = [], updates = {{\[\["X_new", "X"\], \["V_new", "V"\]\]}}}
// expected-remark @+1 {{optimizer: loss '', 0 seeds, 1 parameters with gradients, 2 updates, 0 buffers; 0 forward, 0 backward, 1 optimizer ops}}
func.func @optimizer_only(%r: tensor<f32> loc("R"), %t: tensor<i64> loc("T"),
                          %x: tensor<2xf32> loc("X"), %g: tensor<2xf32> loc("G"),
                          %v: tensor<2xf32> loc("V"))
    -> (tensor<2xf32> {onnxg.name = "X_new"}, tensor<2xf32> {onnxg.name = "V_new"}) {
  %xn, %vn = onnxg.node "Momentum"(%r, %t, %x, %g, %v) domain "ai.onnx.preview.training" opset 1 attributes {alpha = 0.9 : f32, beta = 0.1 : f32, mode = "standard", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) loc(fused<"onnx.outputs">["momentum", "X_new", "V_new"])
  return %xn, %vn : tensor<2xf32>, tensor<2xf32>
}

// -----

// ONNX Runtime's AdamWOptimizer over sequences, as amp-run feeds it: the
// weights and gradients pair up through their SequenceConstruct nodes, and
// each output named `<input>.updated` replaces that input.
// CHECK-LABEL: func.func @adamw_sequences
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["a_grad", "b_grad"], kind = "optimizer", loss = "", parameters = ["a", "b"], seeds = [], unscale = [], updates = {{\[\["a.updated", "a"\], \["step.updated", "step"\]\]}}}
// expected-remark @+1 {{optimizer: loss '', 0 seeds, 2 parameters with gradients, 2 updates, 0 buffers}}
func.func @adamw_sequences(%lr: tensor<1xf32> loc("learning_rate"), %step: tensor<1xi64> loc("step"),
                           %a: tensor<2xf32> loc("a"), %b: tensor<3xf32> loc("b"),
                           %ga: tensor<2xf32> loc("a_grad"), %gb: tensor<3xf32> loc("b_grad"),
                           %m: tensor<2xf32> loc("a.momentum0"))
    -> (tensor<2xf32> {onnxg.name = "a.updated"}, tensor<1xi64> {onnxg.name = "step.updated"}, tensor<2xf32> {onnxg.name = "b.updated"}) {
  %params = onnxg.node "SequenceConstruct"(%a, %b) opset 17 : (tensor<2xf32>, tensor<3xf32>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["p", "params"])
  %grads = onnxg.node "SequenceConstruct"(%ga, %gb) opset 17 : (tensor<2xf32>, tensor<3xf32>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["g", "gradients"])
  %moments = onnxg.node "SequenceConstruct"(%m, %m) opset 17 : (tensor<2xf32>, tensor<2xf32>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["m", "moments"])
  %flag, %w, %m1, %m2 = onnxg.node "AdamWOptimizer"(%lr, %step, %params, %grads, %moments, %moments) domain "com.microsoft" opset 1 : (tensor<1xf32>, tensor<1xi64>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>) -> (tensor<1xi1>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>) loc(fused<"onnx.outputs">["adamw", "flag", "w", "m1", "m2"])
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64> loc(fused<"onnx.outputs">["c", "zero"])
  %new_a = onnxg.node "SequenceAt"(%w, %zero) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<i64>) -> tensor<2xf32> loc(fused<"onnx.outputs">["at", "a.updated"])
  %count = onnxg.node "Cast"(%flag) opset 17 attributes {to = 7 : i64} : (tensor<1xi1>) -> tensor<1xi64> loc(fused<"onnx.outputs">["cast", "count"])
  %new_step = onnxg.node "Add"(%step, %count) opset 17 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64> loc(fused<"onnx.outputs">["add", "step.updated"])
  // Not an update: b.updated has another type than b.
  %other = onnxg.node "SequenceAt"(%w, %zero) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<i64>) -> tensor<2xf32> loc(fused<"onnx.outputs">["at2", "other"])
  return %new_a, %new_step, %other : tensor<2xf32>, tensor<1xi64>, tensor<2xf32>
}

// -----

// No backward: converted as a forward graph, ops left without a region.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    kind = "forward"
// CHECK-NOT:     amp.region
// expected-remark @+1 {{no backward found: converted as a forward graph}}
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Gradient ops and nothing that names the loss: the one float output with
// one element is it, and the first backward op reading what the loss op
// computed gives the seed.
// CHECK-LABEL: func.func @implicit_seed
// CHECK-SAME:    kind = "backward", loss = "loss", parameters = ["w"], seeds = ["y_grad"]
// expected-remark @+1 {{backward: loss 'loss', 1 seeds, 1 parameters with gradients}}
func.func @implicit_seed(%x: tensor<4x3xf32> loc("x"), %w: tensor<3x3xf32> loc("w"), %labels: tensor<4xi64> loc("labels"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<3x3xf32> {onnxg.name = "w_grad"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss, %logp = onnxg.node "SoftmaxCrossEntropyLoss"(%y, %labels) opset 17 : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>) loc(fused<"onnx.outputs">["sce", "loss", "log_prob"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dy = onnxg.node "SoftmaxCrossEntropyLossGrad"(%one, %logp, %labels) domain "com.microsoft" opset 1 : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32> loc(fused<"onnx.outputs">["sce_grad", "y_grad"])
  %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<3x3xf32> loc(fused<"onnx.outputs">["mm_grad", "w_grad"])
  return %loss, %dw : tensor<f32>, tensor<3x3xf32>
}

// -----

// The markers checked against seed linearity: the metadata names `v.grad`
// a gradient, but it is quadratic in the seed (dy times dw), and `dy` is
// read by that non-linear MatMul outside the named gradients: both are
// said, `dy` is unscaled too, and `v.grad` is not (computed from the
// unscaled `dy` and `w.grad`, it would be divided twice).
// CHECK-LABEL: func.func @markers_disagree
// CHECK-SAME:    unscale = ["w.grad", "dy"]
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\"}, {\"name\": \"v\", \"gradient\": \"v.grad\"}]"],
    ["amp_opt.optimizer", "{\"type\": \"sgd\", \"step\": null, \"step_updated\": null}"]]} {
  // expected-warning @+3 {{amp_opt.training_step: gradient 'v.grad' is not linear in the backward seeds; the seed-linear values it is computed from are unscaled instead of it}}
  // expected-warning @+2 {{amp_opt.training_step: 'dy' is linear in the backward seeds and read outside the gradients the markers name; it is unscaled too}}
  // expected-remark @+1 {{amp_opt.training_step: loss 'loss', 1 seeds, 2 parameters with gradients, 0 updates, 0 buffers}}
  func.func @markers_disagree(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"),
                              %v: tensor<4x8xf32> loc("v"), %seed: tensor<f32> loc("loss.seed"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.grad"}, tensor<4x8xf32> {onnxg.name = "v.grad"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %dy = onnxg.node "Mul"(%y, %seed) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %dv = onnxg.node "MatMul"(%dy, %dw) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dv", "v.grad"])
    return %loss, %dw, %dv : tensor<f32>, tensor<8x8xf32>, tensor<4x8xf32>
  }
}

// -----

// ONNX Runtime's SGDOptimizerV2 after InplaceClipGradNorm (generate_artifacts
// with clip_grad): the weights pair with the gradients the clip reads,
// tensor by tensor.
// CHECK-LABEL: func.func @clipped_sgd_sequences
// CHECK-SAME:    gradients = ["a_grad", "b_grad"], kind = "optimizer", loss = "", parameters = ["a", "b"]
// expected-remark @+1 {{optimizer: loss '', 0 seeds, 2 parameters with gradients, 0 updates, 0 buffers}}
func.func @clipped_sgd_sequences(%lr: tensor<1xf32> loc("learning_rate"),
                                 %a: tensor<2xf32> loc("a"), %b: tensor<3xf32> loc("b"),
                                 %ga: tensor<2xf32> loc("a_grad"), %gb: tensor<3xf32> loc("b_grad"))
    -> (tensor<1xi1> {onnxg.name = "update_completed"}) {
  %params = onnxg.node "SequenceConstruct"(%a, %b) opset 17 : (tensor<2xf32>, tensor<3xf32>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["p", "params"])
  %grads = onnxg.node "SequenceConstruct"(%ga, %gb) opset 17 : (tensor<2xf32>, tensor<3xf32>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["g", "gradients"])
  %clipped = onnxg.node "InplaceClipGradNorm"(%grads) domain "com.microsoft" opset 1 attributes {max_norm = 1.0 : f32} : (!onnxg.seq<tensor<*xf32>>) -> !onnxg.seq<tensor<*xf32>> loc(fused<"onnx.outputs">["clip", "clipped"])
  %flag = onnxg.node "SGDOptimizerV2"(%lr, %params, %clipped) domain "com.microsoft" opset 1 : (tensor<1xf32>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>) -> tensor<1xi1> loc(fused<"onnx.outputs">["sgd", "update_completed"])
  return %flag : tensor<1xi1>
}

// -----

// Shapes ONNX could not infer (nn.Unfold's backward computes them with
// shape arithmetic): the gradient takes its parameter's type, the update
// the type of the value it replaces, and the function returns it so.
// CHECK-LABEL: func.func @untyped_update
// CHECK-SAME:    -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"})
// CHECK:         onnxg.node "MatMul"{{.*}} -> tensor<8x8xf32>
// CHECK:         onnxg.node "Sub"{{.*}} -> tensor<8x8xf32>
// CHECK:         return {{.*}} : tensor<f32>, tensor<8x8xf32>
module attributes {onnxg.metadata_props = [
    ["amp_opt.format", "amp_opt.training_step.v1"], ["amp_opt.loss", "loss"],
    ["amp_opt.loss_seed", "loss.seed"],
    ["amp_opt.parameters", "[{\"name\": \"w\", \"gradient\": \"w.grad\", \"updated\": \"w.updated\", \"state\": {}, \"state_updated\": {}}]"],
    ["amp_opt.optimizer", "{\"type\": \"sgd\", \"step\": null, \"step_updated\": null}"]]} {
  // expected-remark @+1 {{amp_opt.training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers; 2 forward, 2 backward, 3 optimizer ops}}
  func.func @untyped_update(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"), %seed: tensor<f32> loc("loss.seed"))
      -> (tensor<f32> {onnxg.name = "loss"}, tensor<?x8xf32> {onnxg.name = "w.updated"}) {
    %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
    %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
    %dy = onnxg.node "Mul"(%y, %seed) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
    %dw = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<*xf32> loc(fused<"onnx.outputs">["dw", "w.grad"])
    %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
    %step = onnxg.node "Mul"(%lr, %dw) opset 17 : (tensor<f32>, tensor<*xf32>) -> tensor<*xf32> loc(fused<"onnx.outputs">["scale", "w.step"])
    %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<*xf32>) -> tensor<?x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
    return %loss, %new : tensor<f32>, tensor<?x8xf32>
  }
}
