// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-recurrent))' -split-input-file | FileCheck %s --enable-var-scope

// Two RNN steps: one MatMul projects both steps' inputs; the first step,
// without an initial state, is the activation of its input part, the
// second adds the state times Rᵀ. Only Y_h is used: no Y is built.
// CHECK-LABEL: func.func @rnn_two_steps(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3x4xf32>{{.*}}, %[[W:[^:]*]]: tensor<1x5x4xf32>{{.*}}, %[[R:[^:]*]]: tensor<1x5x5xf32>
// CHECK:         %[[W0:.*]] = onnxg.node "Gather"(%[[W]], %{{.*}}) opset 14 attributes {axis = 0 : i64} {{.*}} -> tensor<5x4xf32>
// CHECK:         %[[WT:.*]] = onnxg.node "Transpose"(%[[W0]]) {{.*}} -> tensor<4x5xf32>
// CHECK:         %[[XW:.*]] = onnxg.node "MatMul"(%[[X]], %[[WT]]) {{.*}} -> tensor<2x3x5xf32>
// CHECK:         %[[GATES:.*]] = onnxg.node "Reshape"(%[[XW]], %{{.*}}) {{.*}} -> tensor<2x3x1x5xf32>
// CHECK:         %[[R0:.*]] = onnxg.node "Gather"(%[[R]], %{{.*}})
// CHECK:         %[[RT:.*]] = onnxg.node "Transpose"(%[[R0]])
// CHECK:         %[[STEP0:.*]] = onnxg.node "Gather"(%[[GATES]], %{{.*}}) opset 14 attributes {axis = 0 : i64} {{.*}} -> tensor<3x1x5xf32>
// CHECK:         %[[PRE0:.*]] = onnxg.node "Gather"(%[[STEP0]], %{{.*}}) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<3x5xf32>
// CHECK:         %[[H1:.*]] = onnxg.node "Tanh"(%[[PRE0]])
// CHECK:         %[[STEP1:.*]] = onnxg.node "Gather"(%[[GATES]], %{{.*}}) opset 14 attributes {axis = 0 : i64}
// CHECK:         %[[HR:.*]] = onnxg.node "MatMul"(%[[H1]], %[[RT]]) {{.*}} -> tensor<3x5xf32>
// CHECK:         %[[HR3:.*]] = onnxg.node "Reshape"(%[[HR]], %{{.*}}) {{.*}} -> tensor<3x1x5xf32>
// CHECK:         %[[SUM:.*]] = onnxg.node "Add"(%[[STEP1]], %[[HR3]])
// CHECK:         %[[PRE1:.*]] = onnxg.node "Gather"(%[[SUM]], %{{.*}}) opset 14 attributes {axis = 1 : i64}
// CHECK:         %[[H2:.*]] = onnxg.node "Tanh"(%[[PRE1]])
// CHECK:         %[[YH:.*]] = onnxg.node "Reshape"(%[[H2]], %{{.*}}) {{.*}} -> tensor<1x3x5xf32>
// CHECK-NOT:     "Concat"
// CHECK-NOT:     "RNN"
// CHECK:         return %[[YH]]
module attributes {onnxg.opset_imports = [["", 14]]} {
func.func @rnn_two_steps(%x: tensor<2x3x4xf32> loc("x"), %w: tensor<1x5x4xf32> loc("w"), %r: tensor<1x5x5xf32> loc("r")) -> tensor<1x3x5xf32> {
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 5 : i64} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>) -> (none, tensor<1x3x5xf32>) loc(fused<"onnx.outputs">["rnn", "", "yh"])
  return %yh : tensor<1x3x5xf32>
}
}

// -----

// An FP16 LSTM: its GEMMs stay FP16, the gates and the cell state are
// FP32 (gate order i, o, f, c; the initial states cast once their direction
// is picked), the hidden state is rounded to FP16 for Y.
// CHECK-LABEL: func.func @lstm_f16(
// CHECK:         %[[XW:.*]] = onnxg.node "MatMul"({{.*}}) {{.*}} -> tensor<1x2x8xf16>
// CHECK:         %[[XW32:.*]] = onnxg.node "Cast"(%[[XW]]) opset 14 attributes {to = 1 : i64} {{.*}} -> tensor<1x2x8xf32>
// CHECK:         %[[H0:.*]] = onnxg.node "Cast"({{.*}}) opset 14 attributes {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK:         %[[C0:.*]] = onnxg.node "Cast"({{.*}}) opset 14 attributes {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK:         %[[H016:.*]] = onnxg.node "Cast"(%[[H0]]) opset 14 attributes {to = 10 : i64}
// CHECK:         %[[HR:.*]] = onnxg.node "MatMul"(%[[H016]], {{.*}}) {{.*}} -> tensor<2x8xf16>
// CHECK:         %[[GATES:.*]] = onnxg.node "Add"
// CHECK:         %[[I:.*]] = onnxg.node "Gather"(%[[GATES]], %{{.*}}) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<2x2xf32>
// CHECK:         %[[O:.*]] = onnxg.node "Gather"(%[[GATES]]
// CHECK:         %[[F:.*]] = onnxg.node "Gather"(%[[GATES]]
// CHECK:         %[[C:.*]] = onnxg.node "Gather"(%[[GATES]]
// CHECK:         %[[CAND:.*]] = onnxg.node "Tanh"(%[[C]])
// CHECK:         %[[IS:.*]] = onnxg.node "Sigmoid"(%[[I]])
// CHECK:         %[[FS:.*]] = onnxg.node "Sigmoid"(%[[F]])
// CHECK:         %[[IC:.*]] = onnxg.node "Mul"(%[[IS]], %[[CAND]])
// CHECK:         %[[FC:.*]] = onnxg.node "Mul"(%[[FS]], %[[C0]])
// CHECK:         %[[CELL:.*]] = onnxg.node "Add"(%[[FC]], %[[IC]]) {{.*}} -> tensor<2x2xf32>
// CHECK:         %[[OS:.*]] = onnxg.node "Sigmoid"(%[[O]])
// CHECK:         %[[CT:.*]] = onnxg.node "Tanh"(%[[CELL]])
// CHECK:         %[[H:.*]] = onnxg.node "Mul"(%[[OS]], %[[CT]])
// CHECK:         %[[H16:.*]] = onnxg.node "Cast"(%[[H]]) opset 14 attributes {to = 10 : i64} {{.*}} -> tensor<2x2xf16>
// CHECK:         %[[Y:.*]] = onnxg.node "Reshape"(%[[H16]], %{{.*}}) {{.*}} -> tensor<1x1x2x2xf16>
// CHECK:         %[[C16:.*]] = onnxg.node "Cast"(%[[CELL]]) opset 14 attributes {to = 10 : i64}
// CHECK:         %[[YC:.*]] = onnxg.node "Reshape"(%[[C16]], %{{.*}}) {{.*}} -> tensor<1x2x2xf16>
// CHECK:         return %[[Y]], %[[YC]]
module attributes {onnxg.opset_imports = [["", 14]]} {
func.func @lstm_f16(%x: tensor<1x2x3xf16> loc("x"), %w: tensor<1x8x3xf16> loc("w"), %r: tensor<1x8x2xf16> loc("r"), %h0: tensor<1x2x2xf16> loc("h0"), %c0: tensor<1x2x2xf16> loc("c0")) -> (tensor<1x1x2x2xf16>, tensor<1x2x2xf16>) {
  %none = onnxg.none
  %y, %yh, %yc = onnxg.node "LSTM"(%x, %w, %r, %none, %none, %h0, %c0) opset 14 attributes {hidden_size = 2 : i64} : (tensor<1x2x3xf16>, tensor<1x8x3xf16>, tensor<1x8x2xf16>, none, none, tensor<1x2x2xf16>, tensor<1x2x2xf16>) -> (tensor<1x1x2x2xf16>, none, tensor<1x2x2xf16>) loc(fused<"onnx.outputs">["lstm", "y", "", "yc"])
  return %y, %yc : tensor<1x1x2x2xf16>, tensor<1x2x2xf16>
}
}

// -----

// sequence_lens masks each step: a sequence's state stops at its end and
// its outputs after it are zero. The reverse direction starts at the last
// step; the directions stack on Y's axis 1.
// CHECK-LABEL: func.func @gru_lengths_bidirectional(
// CHECK-SAME:      %[[LENS:[^:]*]]: tensor<3xi32>
// CHECK:         %[[T0:.*]] = onnxg.node "Constant"() opset 14 attributes {value = dense<0> : tensor<i32>}
// CHECK:         %[[LESS0:.*]] = onnxg.node "Less"(%[[T0]], %[[LENS]]) {{.*}} -> tensor<3xi1>
// CHECK:         %[[RUN0:.*]] = onnxg.node "Reshape"(%[[LESS0]], %{{.*}}) {{.*}} -> tensor<3x1xi1>
// CHECK:         %[[ZERO:.*]] = onnxg.node "Constant"() opset 14 attributes {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[Y0:.*]] = onnxg.node "Where"(%[[RUN0]], %{{.*}}, %[[ZERO]])
// CHECK:         %[[T1:.*]] = onnxg.node "Constant"() opset 14 attributes {value = dense<1> : tensor<i32>}
// CHECK:         %[[LESS1:.*]] = onnxg.node "Less"(%[[T1]], %[[LENS]])
// CHECK:         %[[RUN1:.*]] = onnxg.node "Reshape"(%[[LESS1]]
// CHECK:         onnxg.node "Where"(%[[RUN1]], %{{.*}}, %[[ZERO]])
// CHECK:         onnxg.node "Where"(%[[RUN1]], %{{.*}}, %[[Y0]])
// CHECK:         %[[FORWARD:.*]] = onnxg.node "Concat"({{.*}}) opset 14 attributes {axis = 0 : i64} {{.*}} -> tensor<2x1x3x2xf32>
// CHECK:         onnxg.node "Where"(%[[RUN1]], %{{.*}}, %[[ZERO]])
// CHECK:         onnxg.node "Where"(%[[RUN0]], %{{.*}}, %[[ZERO]])
// CHECK:         %[[BACKWARD:.*]] = onnxg.node "Concat"({{.*}}) opset 14 attributes {axis = 0 : i64}
// CHECK:         %[[Y:.*]] = onnxg.node "Concat"(%[[FORWARD]], %[[BACKWARD]]) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<2x2x3x2xf32>
// CHECK:         return %[[Y]]
module attributes {onnxg.opset_imports = [["", 14]]} {
func.func @gru_lengths_bidirectional(%x: tensor<2x3x4xf32> loc("x"), %w: tensor<2x6x4xf32> loc("w"), %r: tensor<2x6x2xf32> loc("r"), %lens: tensor<3xi32> loc("lens")) -> tensor<2x2x3x2xf32> {
  %none = onnxg.none
  %y, %yh = onnxg.node "GRU"(%x, %w, %r, %none, %lens) opset 14 attributes {hidden_size = 2 : i64, direction = "bidirectional", linear_before_reset = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x6x2xf32>, none, tensor<3xi32>) -> (tensor<2x2x3x2xf32>, none) loc(fused<"onnx.outputs">["gru", "y", ""])
  return %y : tensor<2x2x3x2xf32>
}
}

// -----

// Lengths that are all the sequence length mask nothing. Before opset 11,
// Clip takes its bounds as attributes.
// CHECK-LABEL: func.func @full_lengths_clip_opset_10(
// CHECK-NOT:     "Where"
// CHECK:         %[[CLIPPED:.*]] = onnxg.node "Clip"(%{{.*}}) opset 10 attributes {max = 5.000000e-01 : f32, min = -5.000000e-01 : f32}
// CHECK:         onnxg.node "Tanh"(%[[CLIPPED]])
// CHECK-NOT:     "Where"
module attributes {onnxg.opset_imports = [["", 10]]} {
func.func @full_lengths_clip_opset_10(%x: tensor<1x2x3xf32> loc("x"), %w: tensor<1x2x3xf32> loc("w"), %r: tensor<1x2x2xf32> loc("r")) -> tensor<1x2x2xf32> {
  %full = onnxg.initializer "full" dense<1> : tensor<2xi32>
  %none = onnxg.none
  %y, %yh = onnxg.node "RNN"(%x, %w, %r, %none, %full) opset 10 attributes {hidden_size = 2 : i64, clip = 0.5 : f32} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x2xf32>, none, tensor<2xi32>) -> (none, tensor<1x2x2xf32>) loc(fused<"onnx.outputs">["rnn", "", "yh"])
  return %yh : tensor<1x2x2xf32>
}
}

// -----

// Layout 1 (batch first): X is transposed to time first, Y back to
// [batch, steps, directions, hidden]. The batch may be dynamic.
// CHECK-LABEL: func.func @batch_first(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x2x3xf32>
// CHECK:         %[[XT:.*]] = onnxg.node "Transpose"(%[[X]]) opset 14 attributes {perm = array<i64: 1, 0, 2>} {{.*}} -> tensor<2x?x3xf32>
// CHECK:         onnxg.node "MatMul"(%[[XT]]
// CHECK:         %[[Y:.*]] = onnxg.node "Concat"({{.*}}) opset 14 attributes {axis = 0 : i64} {{.*}} -> tensor<2x1x?x4xf32>
// CHECK:         %[[YT:.*]] = onnxg.node "Transpose"(%[[Y]]) opset 14 attributes {perm = array<i64: 2, 0, 1, 3>} {{.*}} -> tensor<?x2x1x4xf32>
// CHECK:         return %[[YT]]
module attributes {onnxg.opset_imports = [["", 14]]} {
func.func @batch_first(%x: tensor<?x2x3xf32> loc("x"), %w: tensor<1x4x3xf32> loc("w"), %r: tensor<1x4x4xf32> loc("r")) -> tensor<?x2x1x4xf32> {
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64, layout = 1 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<?x2x1x4xf32>, none) loc(fused<"onnx.outputs">["rnn", "y", ""])
  return %y : tensor<?x2x1x4xf32>
}
}

// -----

// ONNX Runtime's LSTMTraining also returns every step's cell state and its
// activated gates i, o, f, c side by side.
// CHECK-LABEL: func.func @lstm_training(
// CHECK:         %[[I:.*]] = onnxg.node "Sigmoid"
// CHECK:         %[[F:.*]] = onnxg.node "Sigmoid"
// CHECK:         %[[CELL:.*]] = onnxg.node "Mul"(%[[I]], %{{.*}})
// CHECK:         %[[O:.*]] = onnxg.node "Sigmoid"
// CHECK:         %[[GATES:.*]] = onnxg.node "Concat"(%[[I]], %[[O]], %[[F]], %{{.*}}) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<3x8xf32>
// CHECK:         %[[CALL:.*]] = onnxg.node "Reshape"(%[[CELL]], %{{.*}}) {{.*}} -> tensor<1x1x3x2xf32>
// CHECK:         %[[IOFC:.*]] = onnxg.node "Reshape"(%[[GATES]], %{{.*}}) {{.*}} -> tensor<1x1x3x8xf32>
// CHECK:         return %[[CALL]], %[[IOFC]]
module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @lstm_training(%x: tensor<1x3x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3x8xf32>) {
  %hall, %hf, %cf, %call, %iofc = onnxg.node "LSTMTraining"(%x, %w, %r) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64} : (tensor<1x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x8xf32>)
  return %call, %iofc : tensor<1x1x3x2xf32>, tensor<1x1x3x8xf32>
}
}

// -----

// LSTMGrad goes back through the steps: per step the gates' gradients side
// by side and one GEMM by R for the hidden state's; then one GEMM over all
// steps for each of dX, dW and dR (without h0, R met only the first
// state), and dB sums the gates' gradients into both of its halves.
// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3x4xf32>{{.*}}, %[[W:[^:]*]]: tensor<1x8x4xf32>{{.*}}, %[[R:[^:]*]]: tensor<1x8x2xf32>
// CHECK:         %[[W0:.*]] = onnxg.node "Gather"(%[[W]]
// CHECK:         %[[R0:.*]] = onnxg.node "Gather"(%[[R]]
// CHECK:         %[[DA1:.*]] = onnxg.node "Concat"({{.*}}) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<3x8xf32>
// CHECK:         onnxg.node "MatMul"(%[[DA1]], %[[R0]]) {{.*}} -> tensor<3x2xf32>
// CHECK:         %[[DA0:.*]] = onnxg.node "Concat"({{.*}}) opset 14 attributes {axis = 1 : i64} {{.*}} -> tensor<3x8xf32>
// CHECK:         %[[DA:.*]] = onnxg.node "Concat"(%[[DA0]], %[[DA1]]) opset 14 attributes {axis = 0 : i64} {{.*}} -> tensor<6x8xf32>
// CHECK:         %[[STEPS:.*]] = onnxg.node "Reshape"(%[[DA]], %{{.*}}) {{.*}} -> tensor<2x3x8xf32>
// CHECK:         %[[DX:.*]] = onnxg.node "MatMul"(%[[STEPS]], %[[W0]]) {{.*}} -> tensor<2x3x4xf32>
// CHECK:         %[[DAT:.*]] = onnxg.node "Transpose"(%[[DA]])
// CHECK:         %[[DW:.*]] = onnxg.node "MatMul"(%[[DAT]], %{{.*}}) {{.*}} -> tensor<8x4xf32>
// CHECK:         %[[DA1T:.*]] = onnxg.node "Transpose"(%[[DA1]])
// CHECK:         %[[DR:.*]] = onnxg.node "MatMul"(%[[DA1T]], %{{.*}}) {{.*}} -> tensor<8x2xf32>
// CHECK:         %[[SUM:.*]] = onnxg.node "ReduceSum"(%[[DA]], %{{.*}}) opset 14 attributes {keepdims = 0 : i64} {{.*}} -> tensor<8xf32>
// CHECK:         onnxg.node "Concat"(%[[SUM]], %[[SUM]]) {{.*}} -> tensor<16xf32>
// CHECK:         return %[[DX]],
module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @lstm_grad(%x: tensor<2x3x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %hall: tensor<2x1x3x2xf32>, %call: tensor<2x1x3x2xf32>, %iofc: tensor<2x1x3x8xf32>, %dhall: tensor<2x1x3x2xf32>) -> (tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>) {
  %none = onnxg.none
  %dx, %dw, %dr, %db = onnxg.node "LSTMGrad"(%x, %w, %r, %none, %none, %none, %hall, %call, %iofc, %dhall) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64} : (tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, none, none, none, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x2xf32>) -> (tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>)
  return %dx, %dw, %dr, %db : tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>
}
}
