// RUN: amp-opt %s --amp-analyze-training="remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

// Training steps without markers, as other exporters write them: the
// updates come from the output names, the seed from the dataflow
// (docs/TrainingGraphs.md). Each step computes y = x * w and
// loss = mean(y * y); its backward reads the activation y and the data x.

// The seed as torch.onnx writes ones_like(loss): ConstantOfShape of the
// Shape of what the loss reshapes. `param.w` is updated by `new_param.w`.
// CHECK-LABEL: func.func @seed_constant_of_shape
// CHECK-SAME:    amp.training = {buffers = [], gradients = ["g"], kind = "training_step", loss = "loss", parameters = ["param.w"], seeds = ["ones"], unscale = ["g"], updates = {{\[\["new_param.w", "param.w"\]\]}}}
// CHECK:         "Mul"{{.*}}amp.region = "forward"
// CHECK:         "ConstantOfShape"{{.*}}amp.region = "backward"
// CHECK:         onnxg.initializer "lr"{{.*}}amp.region = "optimizer"
// CHECK:         "Sub"{{.*}}amp.region = "optimizer"
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers; 5 forward, 10 backward, 3 optimizer ops}}
func.func @seed_constant_of_shape(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("param.w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "new_param.w"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %mean = onnxg.node "ReduceMean"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["mean.node", "mean"])
  %empty = onnxg.initializer "empty" dense<> : tensor<0xi64> loc("empty")
  %loss = onnxg.node "Reshape"(%mean, %empty) opset 17 : (tensor<f32>, tensor<0xi64>) -> tensor<f32> loc(fused<"onnx.outputs">["reshape", "loss"])
  %shape = onnxg.node "Shape"(%mean) opset 17 : (tensor<f32>) -> tensor<0xi64> loc(fused<"onnx.outputs">["shape.node", "shape"])
  %ones = onnxg.node "ConstantOfShape"(%shape) opset 17 attributes {value = dense<1.0> : tensor<1xf32>} : (tensor<0xi64>) -> tensor<f32> loc(fused<"onnx.outputs">["ones.node", "ones"])
  %n = onnxg.initializer "n" dense<32.0> : tensor<f32> loc("n")
  %dmean = onnxg.node "Div"(%ones, %n) opset 17 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["dmean.node", "dmean"])
  %dims = onnxg.initializer "dims" dense<[4, 8]> : tensor<2xi64> loc("dims")
  %dsq = onnxg.node "Expand"(%dmean, %dims) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dsq.node", "dsq"])
  %two = onnxg.initializer "two" dense<2.0> : tensor<f32> loc("two")
  %y2 = onnxg.node "Mul"(%y, %two) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["y2.node", "y2"])
  %dy = onnxg.node "Mul"(%dsq, %y2) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "new_param.w"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// Expand of a constant 1 to Shape(loss); `w` is updated by `w_new`. The
// constant 1 is a seed form too, and the Expand depends on it: only the
// constant is scaled. The gradient is `g`, not `lr * g` on the way to the
// update.
// CHECK-LABEL: func.func @seed_expand
// CHECK-SAME:    gradients = ["g"], kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["one"], unscale = ["g"], updates = {{\[\["w_new", "w"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers}}
func.func @seed_expand(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w_new"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %shape = onnxg.node "Shape"(%loss) opset 17 : (tensor<f32>) -> tensor<0xi64> loc(fused<"onnx.outputs">["shape.node", "shape"])
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1.0> : tensor<f32>} : () -> tensor<f32> loc(fused<"onnx.outputs">["one.node", "one"])
  %ones = onnxg.node "Expand"(%one, %shape) opset 17 : (tensor<f32>, tensor<0xi64>) -> tensor<f32> loc(fused<"onnx.outputs">["ones.node", "ones"])
  %dims = onnxg.initializer "dims" dense<[4, 8]> : tensor<2xi64> loc("dims")
  %dsq = onnxg.node "Expand"(%ones, %dims) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dsq.node", "dsq"])
  %dy = onnxg.node "Mul"(%dsq, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%lr, %g) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "w_new"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// ones_like(loss) as an integer ConstantOfShape cast to float: the Cast is
// the seed.
// CHECK-LABEL: func.func @seed_cast_integer_ones
// CHECK-SAME:    kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["ones"], unscale = ["g"]
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers}}
func.func @seed_cast_integer_ones(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w.new"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %shape = onnxg.node "Shape"(%loss) opset 17 : (tensor<f32>) -> tensor<0xi64> loc(fused<"onnx.outputs">["shape.node", "shape"])
  %ints = onnxg.node "ConstantOfShape"(%shape) opset 17 attributes {value = dense<1> : tensor<1xi64>} : (tensor<0xi64>) -> tensor<i64> loc(fused<"onnx.outputs">["ints.node", "ints"])
  %ones = onnxg.node "Cast"(%ints) opset 17 attributes {to = 1 : i64} : (tensor<i64>) -> tensor<f32> loc(fused<"onnx.outputs">["ones.node", "ones"])
  %dy = onnxg.node "Mul"(%ones, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "w.new"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// A constant 1 of the loss's shape read only by the backward. The
// optimizer's own constant 1 (`g * 1.0`, SGD's 1 - dampening) reads no
// activation or data and is no seed. Momentum SGD: `next_w` and `next_m`,
// the buffer is state, the gradient is `g`.
// CHECK-LABEL: func.func @seed_constant
// CHECK-SAME:    gradients = ["g"], kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["one"], unscale = ["g"], updates = {{\[\["next_w", "w"\], \["next_m", "m"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 2 updates, 0 buffers}}
func.func @seed_constant(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"), %m: tensor<4x8xf32> loc("m"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "next_w"}, tensor<4x8xf32> {onnxg.name = "next_m"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dims = onnxg.initializer "dims" dense<[4, 8]> : tensor<2xi64> loc("dims")
  %dsq = onnxg.node "Expand"(%one, %dims) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dsq.node", "dsq"])
  %dy = onnxg.node "Mul"(%dsq, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %mu = onnxg.initializer "mu" dense<0.9> : tensor<f32> loc("mu")
  %decayed = onnxg.node "Mul"(%m, %mu) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["decay", "decayed"])
  %undamped = onnxg.initializer "undamped" dense<1.0> : tensor<f32> loc("undamped")
  %fresh = onnxg.node "Mul"(%g, %undamped) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fresh.node", "fresh"])
  %buf = onnxg.node "Add"(%decayed, %fresh) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["momentum", "next_m"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%buf, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "next_w"])
  return %loss, %new, %buf : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An explicit seed input named as one; `w.updated` (our exporter's names
// without its metadata).
// CHECK-LABEL: func.func @seed_input
// CHECK-SAME:    kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["loss_seed"], unscale = ["g"], updates = {{\[\["w.updated", "w"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers}}
func.func @seed_input(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"), %seed: tensor<f32> loc("loss_seed"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w.updated"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %dy = onnxg.node "Mul"(%seed, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// The mean's 1/N folded into a constant of the squared values' shape. The
// GELU-like constant 0.5 times the activation is linear in 0.5 only up to
// an Add: what reads the data after it is not, so 0.5 is no seed. `w'`
// updates `w`.
// CHECK-LABEL: func.func @seed_folded
// CHECK-SAME:    kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["inv_n"], unscale = ["g"], updates = {{\[\["w'", "w"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers}}
func.func @seed_folded(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w'"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceMean"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["mean", "loss"])
  %invn = onnxg.initializer "inv_n" dense<0.03125> : tensor<4x8xf32> loc("inv_n")
  %half = onnxg.initializer "half" dense<0.5> : tensor<f32> loc("half")
  %t = onnxg.node "Tanh"(%y) opset 17 : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["tanh", "t"])
  %ht = onnxg.node "Mul"(%half, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["ht.node", "ht"])
  %d = onnxg.node "Add"(%ht, %t) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["d.node", "d"])
  %dy = onnxg.node "Mul"(%invn, %d) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "w'"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// A tied weight: w is read twice, its gradient is the sum of both paths.
// `updated_w` updates `w`.
// CHECK-LABEL: func.func @tied_weight
// CHECK-SAME:    gradients = ["g"], kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["one"], unscale = ["g"], updates = {{\[\["updated_w", "w"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers}}
func.func @tied_weight(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "updated_w"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd1", "y"])
  %z = onnxg.node "Mul"(%y, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd2", "z"])
  %loss = onnxg.node "ReduceSum"(%z) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dims = onnxg.initializer "dims" dense<[4, 8]> : tensor<2xi64> loc("dims")
  %dz = onnxg.node "Expand"(%one, %dims) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dz.node", "dz"])
  %g2 = onnxg.node "Mul"(%dz, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw2", "g2"])
  %dy = onnxg.node "Mul"(%dz, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g1 = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw1", "g1"])
  %g = onnxg.node "Add"(%g1, %g2) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%g, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["step.node", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "updated_w"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// Weight decay (g + wd * w is affine in the seed) and clipping by the global
// norm of two gradients (g * g is not linear): each gradient is unscaled
// before either reads it. `w_out`/`b.out` with a role prefix `param.`.
// CHECK-LABEL: func.func @decay_and_clipping
// CHECK-SAME:    gradients = ["gw", "gb"], kind = "training_step", loss = "loss", parameters = ["param.w", "param.b"], seeds = ["one"], unscale = ["gw", "gb"], updates = {{\[\["w_out", "param.w"\], \["b.out", "param.b"\]\]}}
// CHECK:         "ReduceSumSquare"{{.*}}amp.region = "optimizer"
// CHECK:         "Sqrt"{{.*}}amp.region = "optimizer"
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 2 parameters with gradients, 2 updates, 0 buffers}}
func.func @decay_and_clipping(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("param.w"), %b: tensor<4x8xf32> loc("param.b"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w_out"}, tensor<4x8xf32> {onnxg.name = "b.out"}) {
  %xw = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "xw"])
  %y = onnxg.node "Add"(%xw, %b) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["bias", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dy = onnxg.node "Mul"(%one, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %gw = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "gw"])
  %gb = onnxg.node "Identity"(%dy) opset 17 : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["db", "gb"])
  %nw = onnxg.node "ReduceSumSquare"(%gw) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["nw.node", "nw"])
  %nb = onnxg.node "ReduceSumSquare"(%gb) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["nb.node", "nb"])
  %n2 = onnxg.node "Add"(%nw, %nb) opset 17 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["n2.node", "n2"])
  %norm = onnxg.node "Sqrt"(%n2) opset 17 : (tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["norm.node", "norm"])
  %maxnorm = onnxg.initializer "max_norm" dense<1.0> : tensor<f32> loc("max_norm")
  %ratio = onnxg.node "Div"(%maxnorm, %norm) opset 17 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["ratio.node", "ratio"])
  %coef = onnxg.node "Min"(%ratio, %maxnorm) opset 17 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["coef.node", "coef"])
  %cw = onnxg.node "Mul"(%gw, %coef) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["cw.node", "cw"])
  %cb = onnxg.node "Mul"(%gb, %coef) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["cb.node", "cb"])
  %wd = onnxg.initializer "wd" dense<0.01> : tensor<f32> loc("wd")
  %decay = onnxg.node "Mul"(%w, %wd) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["decay.node", "decay"])
  %dw = onnxg.node "Add"(%cw, %decay) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dwd.node", "dwd"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %sw = onnxg.node "Mul"(%dw, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["sw.node", "sw"])
  %nw2 = onnxg.node "Sub"(%w, %sw) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["uw", "w_out"])
  %sb = onnxg.node "Mul"(%cb, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["sb.node", "sb"])
  %nb2 = onnxg.node "Sub"(%b, %sb) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["ub", "b.out"])
  return %loss, %nw2, %nb2 : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The loss is not the only output: the logits and the gradient of the
// input are too. The input gradient is linear in the seed and an output, so
// it is unscaled as well; a buffer (`count`, updated by `count_new` without
// the seed) is carried but not a parameter.
// CHECK-LABEL: func.func @more_outputs
// CHECK-SAME:    buffers = {{\[\["count_new", "count"\]\]}}, gradients = ["g"], kind = "training_step", loss = "loss", parameters = ["w"], seeds = ["one"], unscale = ["g", "dx"], updates = {{\[\["w_new", "w"\]\]}}
// expected-remark @+1 {{training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 1 updates, 1 buffers}}
func.func @more_outputs(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"), %count: tensor<1xi64> loc("count"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "logits"}, tensor<4x8xf32> {onnxg.name = "dx"},
        tensor<4x8xf32> {onnxg.name = "w_new"}, tensor<1xi64> {onnxg.name = "count_new"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "logits"])
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
  return %loss, %y, %dx, %new, %next : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi64>
}

// -----

// Names alone do not make a training step: a forward graph whose output
// `x_out` matches input `x` has no loss and stays a forward graph.
// CHECK-LABEL: func.func @forward_with_update_names
// CHECK-SAME:    kind = "forward"
// CHECK-SAME:    updates = []
// expected-remark @+1 {{no backward found: converted as a forward graph}}
func.func @forward_with_update_names(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<4x8xf32> {onnxg.name = "x_out"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "x_out"])
  return %y : tensor<4x8xf32>
}

// -----

// No seed: the updates are found and carried, and one warning says why
// there is no loss scaling and what to pass.
// expected-warning @+2 {{training step with 1 updated inputs and loss 'loss', but no backward seed found: no ones_like('loss')}}
// expected-remark @+1 {{training_step: loss 'loss', 0 seeds, 0 parameters with gradients, 1 updates, 0 buffers}}
func.func @no_seed(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "new_w"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %g = onnxg.node "Sigmoid"(%y) opset 17 : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %new = onnxg.node "Sub"(%w, %g) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "new_w"])
  return %loss, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

// Two candidate losses: the updates make this a training step, so the
// loss must be named.
// expected-error @+1 {{found 2 candidate losses: 'loss' 'grad_norm'; name the loss with loss=<tensor>}}
func.func @two_losses(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<f32> {onnxg.name = "grad_norm"}, tensor<4x8xf32> {onnxg.name = "new_w"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %n = onnxg.node "ReduceMax"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["max", "grad_norm"])
  %new = onnxg.node "Sub"(%w, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["update", "new_w"])
  return %loss, %n, %new : tensor<f32>, tensor<f32>, tensor<4x8xf32>
}

// -----

// An output that may update two inputs by their names without a role
// prefix is an error that lists them.
// expected-error @+1 {{output 'new_w' may update several inputs: 'param.w' 'state.w'; say which with updates=<input>:<output>}}
func.func @ambiguous_output(%w: tensor<4x8xf32> loc("param.w"), %m: tensor<4x8xf32> loc("state.w"))
    -> (tensor<4x8xf32> {onnxg.name = "new_w"}) {
  return %w : tensor<4x8xf32>
}

// -----

// An input that two outputs may update is an error too.
// expected-error @+1 {{input 'w' may be updated by 'new_w' and by 'w_new'; say which with updates=<input>:<output>}}
func.func @ambiguous_input(%w: tensor<4x8xf32> loc("w"))
    -> (tensor<4x8xf32> {onnxg.name = "w_new"}, tensor<4x8xf32> {onnxg.name = "new_w"}) {
  %a = onnxg.node "Neg"(%w) opset 17 : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["a", "w_new"])
  %b = onnxg.node "Abs"(%w) opset 17 : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["b", "new_w"])
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A backward but no update (a gradient graph): converted as a forward
// graph, and a warning says so. `dy * x` is no update of `x`.
// expected-remark @+2 {{no backward found: converted as a forward graph}}
// expected-warning @+1 {{'loss' has a backward (seed 'one'), but no output updates an input by a known name: converted as a forward graph, without loss scaling; name the updates with updates=<input>:<output>}}
func.func @backward_without_updates(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "w_grad"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "y"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "sq"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dy = onnxg.node "Mul"(%one, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dy.node", "dy"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["dw", "w_grad"])
  return %loss, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// Names that say nothing (torch.onnx's defaults): each update is found by
// its arithmetic, as a term of an addition scaled by one-element factors
// (`w - lr * g`, `m * 0.9 + g`, `step + 1`), and counts because the step has
// a backward seed. The loss is the one-element output that updates nothing.
// The counter feeds no update of a parameter: a buffer.
// CHECK-LABEL: func.func @updates_by_arithmetic
// CHECK-SAME:    buffers = {{\[\["31", "onnx::Add_3"\]\]}}, gradients = ["g"], kind = "training_step", loss = "21", parameters = ["onnx::Mul_1"], seeds = ["one"], unscale = ["g"], updates = {{\[\["30", "onnx::Mul_1"\], \["28", "onnx::Mul_2"\]\]}}
// expected-remark @+1 {{training_step: loss '21', 1 seeds, 1 parameters with gradients, 2 updates, 1 buffers}}
func.func @updates_by_arithmetic(%x: tensor<4x8xf32> loc("input.1"), %w: tensor<4x8xf32> loc("onnx::Mul_1"),
                                 %m: tensor<4x8xf32> loc("onnx::Mul_2"), %step: tensor<1xf32> loc("onnx::Add_3"))
    -> (tensor<f32> {onnxg.name = "21"}, tensor<4x8xf32> {onnxg.name = "30"}, tensor<4x8xf32> {onnxg.name = "28"}, tensor<1xf32> {onnxg.name = "31"}) {
  %y = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_4", "18"])
  %sq = onnxg.node "Mul"(%y, %y) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_5", "19"])
  %loss = onnxg.node "ReduceSum"(%sq) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["ReduceSum_6", "21"])
  %one = onnxg.initializer "one" dense<1.0> : tensor<f32> loc("one")
  %dy = onnxg.node "Mul"(%one, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_7", "24"])
  %g = onnxg.node "Mul"(%dy, %x) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_8", "g"])
  %mu = onnxg.initializer "mu" dense<0.9> : tensor<f32> loc("mu")
  %decayed = onnxg.node "Mul"(%m, %mu) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_9", "27"])
  %buf = onnxg.node "Add"(%decayed, %g) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Add_10", "28"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %stepped = onnxg.node "Mul"(%buf, %lr) opset 17 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Mul_11", "29"])
  %new = onnxg.node "Sub"(%w, %stepped) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["Sub_12", "30"])
  %inc = onnxg.initializer "inc" dense<1.0> : tensor<1xf32> loc("inc")
  %count = onnxg.node "Add"(%step, %inc) opset 17 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32> loc(fused<"onnx.outputs">["Add_13", "31"])
  return %loss, %new, %buf, %count : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xf32>
}

// -----

// Arithmetic alone does not make a training step: a residual forward graph
// (y = x + x * w) with a one-element output has no backward seed and stays
// a forward graph, without a warning.
// CHECK-LABEL: func.func @residual_forward
// CHECK-SAME:    kind = "forward"
// CHECK-SAME:    updates = []
// expected-remark @+1 {{no backward found: converted as a forward graph}}
func.func @residual_forward(%x: tensor<4x8xf32> loc("x"), %w: tensor<4x8xf32> loc("w"))
    -> (tensor<4x8xf32> {onnxg.name = "y"}, tensor<f32> {onnxg.name = "score"}) {
  %xw = onnxg.node "Mul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["fwd", "xw"])
  %y = onnxg.node "Add"(%x, %xw) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["residual", "y"])
  %score = onnxg.node "ReduceMax"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["max", "score"])
  return %y, %score : tensor<4x8xf32>, tensor<f32>
}
