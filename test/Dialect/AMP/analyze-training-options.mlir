// A step whose names follow no convention: `w_after` updates `w`, the loss
// is `objective` beside another one-element output, and the seed is an
// unnamed input. Options (or a roles file) say what the names do not.
// RUN: amp-opt %s --amp-analyze-training="remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: amp-opt %s --amp-analyze-training="remarks=true loss=objective updates=w:w_after" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UPDATES
// RUN: amp-opt %s --amp-analyze-training="remarks=true loss=objective updates=w:w_after seed=dl" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: amp-opt %s --amp-analyze-training="remarks=true roles=%S/Inputs/roles-step.json seed=dl" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: amp-opt %s --amp-pipeline="precision=fp16 loss=objective updates=w:w_after seed=dl" --mlir-print-debuginfo=false 2>/dev/null | FileCheck %s --check-prefix=PIPELINE

// updates= adds to what our exporter's metadata lists.
// RUN: amp-opt %S/Inputs/amp-opt-step-extra-state.mlir --amp-analyze-training="remarks=true updates=ema:ema_after" -o /dev/null 2>&1 | FileCheck %s --check-prefix=METADATA

// NONE: remark: no backward found: converted as a forward graph

// METADATA: remark: amp_opt.training_step: loss 'loss', 1 seeds, 1 parameters with gradients, 2 updates, 0 buffers

// UPDATES: warning: training step with 1 updated inputs and loss 'objective', but no backward seed found
// UPDATES: remark: training_step: loss 'objective', 0 seeds, 0 parameters with gradients, 1 updates, 0 buffers

// SEED: remark: training_step: loss 'objective', 1 seeds, 1 parameters with gradients, 1 updates, 0 buffers; 3 forward, 2 backward, 3 optimizer ops

// PIPELINE:      %[[SCALED:.*]] = amp.scale_loss %arg2 by
// PIPELINE:      onnxg.node "Mul"(%[[SCALED]]
// PIPELINE:      %[[G:.*]] = onnxg.node "MatMul"
// PIPELINE:      amp.unscale %[[G]]
// PIPELINE:      amp.update_if_finite

// Bad options are errors that name them.
// RUN: not amp-opt %s --amp-analyze-training="updates=w:nothing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-UPDATE
// RUN: not amp-opt %s --amp-analyze-training="updates=w" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-UPDATE
// RUN: not amp-opt %s --amp-analyze-training="updates=x:w_after" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-TYPE
// RUN: not amp-opt %s --amp-analyze-training="updates=w:w_after,w:w_after" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not amp-opt %s --amp-analyze-training="loss=objective seed=nothing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-SEED
// RUN: not amp-opt %s --amp-analyze-training="updates=w:w_after" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO-LOSSES
// RUN: not amp-opt %s --amp-analyze-training="roles=%S/Inputs/roles-bad-key.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-KEY
// RUN: not amp-opt %s --amp-analyze-training="roles=%S/Inputs/missing.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING

// BAD-UPDATE: error: updates='w{{.*}}': expected <input>:<output> naming an input and an output of the graph
// BAD-TYPE: error: updates='x:w_after': input type 'tensor<4x8xf32>' differs from output type 'tensor<8x8xf32>'
// TWICE: error: updates='w:w_after': 'w' or its output is named in another update
// BAD-SEED: error: seed='nothing' names no float tensor of the graph
// TWO-LOSSES: error: found 2 candidate losses: 'objective' 'accuracy'; name the loss with loss=<tensor>
// BAD-KEY: error: roles file '{{.*}}roles-bad-key.json': unknown key 'parameters'; expected loss, seed or updates
// MISSING: error: roles file '{{.*}}missing.json': No such file or directory

func.func @step(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"), %dl: tensor<f32> loc("dl"))
    -> (tensor<f32> {onnxg.name = "objective"}, tensor<f32> {onnxg.name = "accuracy"}, tensor<8x8xf32> {onnxg.name = "w_after"}) {
  %y = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "y"])
  %loss = onnxg.node "ReduceSum"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "objective"])
  %acc = onnxg.node "ReduceMax"(%y) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["max", "accuracy"])
  %dy = onnxg.node "Mul"(%dl, %y) opset 17 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["seed", "dy"])
  %g = onnxg.node "MatMul"(%x, %dy) opset 17 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["dw", "g"])
  %lr = onnxg.initializer "lr" dense<0.1> : tensor<f32> loc("lr")
  %step = onnxg.node "Mul"(%lr, %g) opset 17 : (tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["scale", "step"])
  %new = onnxg.node "Sub"(%w, %step) opset 17 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w_after"])
  return %loss, %acc, %new : tensor<f32>, tensor<f32>, tensor<8x8xf32>
}
