// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-gradients))' -split-input-file | FileCheck %s --enable-var-scope

// d = (a + b) * a: the seed of ones flows back through Mul and Add; the
// gradients of a add up.
// CHECK-LABEL: func.func @add_and_mul(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<f32>{{.*}}, %[[B:[^:]*]]: tensor<f32>
// CHECK:         %[[C:.*]] = onnxg.node "Add"(%[[A]], %[[B]])
// CHECK:         %[[D:.*]] = onnxg.node "Mul"(%[[C]], %[[A]])
// CHECK:         %[[SEED:.*]] = onnxg.node "Constant"() opset 12 attributes {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:         %[[DC:.*]] = onnxg.node "Mul"(%[[SEED]], %[[A]])
// CHECK:         %[[DA1:.*]] = onnxg.node "Mul"(%[[SEED]], %[[C]])
// CHECK:         %[[DA:.*]] = onnxg.node "Add"(%[[DA1]], %[[DC]])
// CHECK-NOT:     "Gradient"
// CHECK:         return %[[D]], %[[DA]], %[[DC]]
module attributes {onnxg.opset_imports = [["", 12], ["ai.onnx.preview.training", 1]]} {
func.func @add_and_mul(%a: tensor<f32> loc("a"), %b: tensor<f32> loc("b")) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %c = onnxg.node "Add"(%a, %b) opset 12 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["add", "c"])
  %d = onnxg.node "Mul"(%c, %a) opset 12 : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(fused<"onnx.outputs">["mul", "d"])
  %da, %db = onnxg.node "Gradient"(%a, %b) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["a", "b"], y = "d"} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) loc(fused<"onnx.outputs">["grad", "da", "db"])
  return %d, %da, %db : tensor<f32>, tensor<f32>, tensor<f32>
}
}

// -----

// A broadcast bias: its gradient is summed over the broadcast dimension
// (ReduceSum's axes an input from opset 13) and reshaped. MatMul's operands
// get dy times the other's transpose. An x that y does not read gets zeros.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x3xf32>{{.*}}, %[[W:[^:]*]]: tensor<3x5xf32>
// CHECK:         %[[SEED:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<1.000000e+00> : tensor<4x5xf32>}
// CHECK:         %[[AXES:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<1xi64>}
// CHECK:         %[[SUM:.*]] = onnxg.node "ReduceSum"(%[[SEED]], %[[AXES]]) opset 17 attributes {keepdims = 1 : i64} : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<1x5xf32>
// CHECK:         %[[DB:.*]] = onnxg.node "Reshape"(%[[SUM]], %{{.*}}) {{.*}} -> tensor<5xf32>
// CHECK:         %[[WT:.*]] = onnxg.node "Transpose"(%[[W]]) opset 17 attributes {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK:         %[[DX:.*]] = onnxg.node "MatMul"(%[[SEED]], %[[WT]]) {{.*}} -> tensor<4x3xf32>
// CHECK:         %[[XT:.*]] = onnxg.node "Transpose"(%[[X]])
// CHECK:         %[[DW:.*]] = onnxg.node "MatMul"(%[[XT]], %[[SEED]]) {{.*}} -> tensor<3x5xf32>
// CHECK:         %[[ZERO:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<0.000000e+00> : tensor<2xf32>}
// CHECK:         return %[[DX]], %[[DW]], %[[DB]], %[[ZERO]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @linear(%x: tensor<4x3xf32> loc("x"), %w: tensor<3x5xf32> loc("w"), %bias: tensor<5xf32> loc("bias"), %u: tensor<2xf32> loc("u")) -> (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<2xf32>) {
  %h = onnxg.node "MatMul"(%x, %w) opset 17 : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["mm", "h"])
  %y = onnxg.node "Add"(%h, %bias) opset 17 : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["add", "y"])
  %dx, %dw, %db, %du = onnxg.node "Gradient"(%x, %w, %bias, %u) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x", "w", "bias", "u"], y = "y"} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<2xf32>) -> (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<2xf32>) loc(fused<"onnx.outputs">["grad", "dx", "dw", "db", "du"])
  return %dx, %dw, %db, %du : tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<2xf32>
}
}

// -----

// Before opset 13 ReduceSum takes its axes as an attribute.
// CHECK-LABEL: func.func @bias_opset_12(
// CHECK:         onnxg.node "ReduceSum"(%{{.*}}) opset 12 attributes {axes = array<i64: 0>, keepdims = 1 : i64} : (tensor<4x5xf32>) -> tensor<1x5xf32>
module attributes {onnxg.opset_imports = [["", 12], ["ai.onnx.preview.training", 1]]} {
func.func @bias_opset_12(%h: tensor<4x5xf32> loc("h"), %bias: tensor<5xf32> loc("bias")) -> tensor<5xf32> {
  %y = onnxg.node "Add"(%h, %bias) opset 12 : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["add", "y"])
  %db = onnxg.node "Gradient"(%bias) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["bias"], y = "y"} : (tensor<5xf32>) -> tensor<5xf32> loc(fused<"onnx.outputs">["grad", "db"])
  return %db : tensor<5xf32>
}
}

// -----

// ReduceMean's dy, reshaped back to the kept axes, expanded over them and
// divided by their count; Softmax's y * (dy - sum(dy * y)) over its axis.
// CHECK-LABEL: func.func @mean_of_softmax(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x5xf32>
// CHECK:         %[[P:.*]] = onnxg.node "Softmax"(%[[X]])
// CHECK:         %[[SEED:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<1.000000e+00> : tensor<4xf32>}
// CHECK:         %[[KEPT:.*]] = onnxg.node "Reshape"(%[[SEED]], %{{.*}}) {{.*}} -> tensor<4x1xf32>
// CHECK:         %[[WIDE:.*]] = onnxg.node "Expand"(%[[KEPT]], %{{.*}}) {{.*}} -> tensor<4x5xf32>
// CHECK:         %[[DP:.*]] = onnxg.node "Div"(%[[WIDE]], %{{.*}}) {{.*}} -> tensor<4x5xf32>
// CHECK:         %[[PROD:.*]] = onnxg.node "Mul"(%[[DP]], %[[P]])
// CHECK:         %[[SUM:.*]] = onnxg.node "ReduceSum"(%[[PROD]], %{{.*}}) opset 17 attributes {keepdims = 1 : i64} {{.*}} -> tensor<4x1xf32>
// CHECK:         %[[CENTERED:.*]] = onnxg.node "Sub"(%[[DP]], %[[SUM]])
// CHECK:         %[[DX:.*]] = onnxg.node "Mul"(%[[P]], %[[CENTERED]])
// CHECK:         return %[[DX]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @mean_of_softmax(%x: tensor<4x5xf32> loc("x")) -> tensor<4x5xf32> {
  %p = onnxg.node "Softmax"(%x) opset 17 attributes {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["softmax", "p"])
  %y = onnxg.node "ReduceMean"(%p) opset 17 attributes {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<4x5xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["mean", "y"])
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<4x5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["grad", "dx"])
  return %dx : tensor<4x5xf32>
}
}

// -----

// Gemm with transB: dA = alpha dy B (transB cleared), dB = alpha dy^T A,
// dC beta dy summed to C's shape.
// CHECK-LABEL: func.func @gemm_trans_b(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<4x3xf32>{{.*}}, %[[B:[^:]*]]: tensor<5x3xf32>{{.*}}, %[[C:[^:]*]]: tensor<5xf32>
// CHECK:         %[[SEED:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<1.000000e+00> : tensor<4x5xf32>}
// CHECK:         %[[DA:.*]] = onnxg.node "Gemm"(%[[SEED]], %[[B]]) opset 17 attributes {alpha = 5.000000e-01 : f32, transA = 0 : i64, transB = 0 : i64} : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[DB:.*]] = onnxg.node "Gemm"(%[[SEED]], %[[A]]) opset 17 attributes {alpha = 5.000000e-01 : f32, transA = 1 : i64, transB = 0 : i64} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[SCALED:.*]] = onnxg.node "Mul"(%[[SEED]], %{{.*}})
// CHECK:         onnxg.node "ReduceSum"(%[[SCALED]], %{{.*}})
// CHECK:         %[[DC:.*]] = onnxg.node "Reshape"({{.*}} -> tensor<5xf32>
// CHECK:         return %[[DA]], %[[DB]], %[[DC]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @gemm_trans_b(%a: tensor<4x3xf32> loc("a"), %b: tensor<5x3xf32> loc("b"), %c: tensor<5xf32> loc("c")) -> (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) {
  %y = onnxg.node "Gemm"(%a, %b, %c) opset 17 attributes {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transB = 1 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc(fused<"onnx.outputs">["gemm", "y"])
  %da, %db, %dc = onnxg.node "Gradient"(%a, %b, %c) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["a", "b", "c"], y = "y"} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) loc(fused<"onnx.outputs">["grad", "da", "db", "dc"])
  return %da, %db, %dc : tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>
}
}

// -----

// A CNN's layers through ONNX Runtime's gradient ops: the loss's
// SoftmaxCrossEntropyLossGrad reads a LogSoftmax of the scores (the node has
// no log_prob output), MaxPoolGrad the Indices of a MaxPool copy, ConvGrad
// the convolution's attributes and gives dW and dB.
// CHECK-LABEL: func.func @cnn_layers(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3x4x4xf32>{{.*}}, %[[W:[^:]*]]: tensor<2x3x3x3xf32>{{.*}}, %[[B:[^:]*]]: tensor<2xf32>{{.*}}, %[[L:[^:]*]]: tensor<2xi64>
// CHECK:         %[[H:.*]] = onnxg.node "Conv"(%[[X]], %[[W]], %[[B]])
// CHECK:         %[[P:.*]] = onnxg.node "MaxPool"(%[[H]])
// CHECK:         %[[S:.*]] = onnxg.node "Reshape"(%[[P]]
// CHECK:         %[[LOGP:.*]] = onnxg.node "LogSoftmax"(%[[S]]) opset 17 attributes {axis = 1 : i64}
// CHECK:         %[[DS:.*]] = onnxg.node "SoftmaxCrossEntropyLossGrad"(%{{.*}}, %[[LOGP]], %[[L]]) domain "com.microsoft" opset 1 attributes {reduction = "sum"} : (tensor<f32>, tensor<2x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK:         %[[DP:.*]] = onnxg.node "Reshape"(%[[DS]]
// CHECK:         %{{.*}}, %[[IDX:.*]] = onnxg.node "MaxPool"(%[[H]]) opset 17 attributes {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x2x2x2xf32>) -> (tensor<2x2x1x1xf32>, tensor<2x2x1x1xi64>)
// CHECK:         %[[DH:.*]] = onnxg.node "MaxPoolGrad"(%[[DP]], %[[IDX]]) opset 17 : (tensor<2x2x1x1xf32>, tensor<2x2x1x1xi64>) -> tensor<2x2x2x2xf32>
// CHECK:         %{{.*}}, %[[DW:.*]], %[[DB:.*]] = onnxg.node "ConvGrad"(%[[DH]], %[[X]], %[[W]]) domain "com.microsoft" opset 1 attributes {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x2x2x2xf32>, tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>)
// CHECK:         return %[[DW]], %[[DB]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @cnn_layers(%x: tensor<2x3x4x4xf32> loc("x"), %w: tensor<2x3x3x3xf32> loc("w"), %b: tensor<2xf32> loc("b"), %labels: tensor<2xi64> loc("labels")) -> (tensor<2x3x3x3xf32>, tensor<2xf32>) {
  %h = onnxg.node "Conv"(%x, %w, %b) opset 17 attributes {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<2x2x2x2xf32> loc(fused<"onnx.outputs">["conv", "h"])
  %p = onnxg.node "MaxPool"(%h) opset 17 attributes {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x2x2x2xf32>) -> tensor<2x2x1x1xf32> loc(fused<"onnx.outputs">["pool", "p"])
  %shape = onnxg.node "Constant"() opset 17 attributes {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64> loc(fused<"onnx.outputs">["shape", "shape"])
  %s = onnxg.node "Reshape"(%p, %shape) opset 17 : (tensor<2x2x1x1xf32>, tensor<2xi64>) -> tensor<2x2xf32> loc(fused<"onnx.outputs">["reshape", "s"])
  %y = onnxg.node "SoftmaxCrossEntropyLoss"(%s, %labels) opset 17 attributes {reduction = "sum"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> loc(fused<"onnx.outputs">["loss", "y"])
  %dw, %db = onnxg.node "Gradient"(%w, %b) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["w", "b"], y = "y"} : (tensor<2x3x3x3xf32>, tensor<2xf32>) -> (tensor<2x3x3x3xf32>, tensor<2xf32>) loc(fused<"onnx.outputs">["grad", "dw", "db"])
  return %dw, %db : tensor<2x3x3x3xf32>, tensor<2xf32>
}
}

// -----

// ReduceMax shares dy among the elements equal to its result (the Tile's
// copies tie): a mask of them, over their count. Tile sums dy over its
// repeats, [4, 3] as [2, 2, 1, 3].
// CHECK-LABEL: func.func @tile_and_max(
// CHECK:         %[[T:.*]] = onnxg.node "Tile"
// CHECK:         %[[M:.*]] = onnxg.node "ReduceMax"(%[[T]])
// CHECK:         %[[MK:.*]] = onnxg.node "Reshape"(%[[M]], %{{.*}}) {{.*}} -> tensor<1x3xf32>
// CHECK:         %[[EQ:.*]] = onnxg.node "Equal"(%[[T]], %[[MK]])
// CHECK:         %[[MASK:.*]] = onnxg.node "Cast"(%[[EQ]]) opset 17 attributes {to = 1 : i64} : (tensor<4x3xi1>) -> tensor<4x3xf32>
// CHECK:         %[[COUNT:.*]] = onnxg.node "ReduceSum"(%[[MASK]], %{{.*}}) {{.*}} -> tensor<1x3xf32>
// CHECK:         %[[SHARE:.*]] = onnxg.node "Div"(%{{.*}}, %[[COUNT]])
// CHECK:         %[[DT:.*]] = onnxg.node "Mul"(%[[MASK]], %[[SHARE]]) {{.*}} -> tensor<4x3xf32>
// CHECK:         %[[SPLIT:.*]] = onnxg.node "Reshape"(%[[DT]], %{{.*}}) {{.*}} -> tensor<2x2x1x3xf32>
// CHECK:         %[[REPEATS:.*]] = onnxg.node "Constant"() opset 17 attributes {value = dense<[0, 2]> : tensor<2xi64>}
// CHECK:         %[[DX:.*]] = onnxg.node "ReduceSum"(%[[SPLIT]], %[[REPEATS]]) opset 17 attributes {keepdims = 0 : i64} {{.*}} -> tensor<2x3xf32>
// CHECK:         return %[[DX]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @tile_and_max(%x: tensor<2x3xf32> loc("x")) -> tensor<2x3xf32> {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64> loc(fused<"onnx.outputs">["reps", "r"])
  %t = onnxg.node "Tile"(%x, %r) opset 17 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32> loc(fused<"onnx.outputs">["tile", "t"])
  %m = onnxg.node "ReduceMax"(%t) opset 17 attributes {axes = array<i64: 0>, keepdims = 0 : i64} : (tensor<4x3xf32>) -> tensor<3xf32> loc(fused<"onnx.outputs">["max", "m"])
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "m"} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(fused<"onnx.outputs">["grad", "dx"])
  return %dx : tensor<2x3xf32>
}
}

// -----

// A training-mode Dropout without its mask output: the mask cannot be
// drawn again, so the node is replaced by one that returns it (with the
// node's and output's names), and dy goes where it kept the element.
// CHECK-LABEL: func.func @dropout_without_mask(
// CHECK:         %[[D:d]], %[[MASK:d_mask]] = onnxg.node "Dropout"({{.*}}) opset 17 : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
// CHECK-NOT:     "Dropout"
// CHECK:         %[[KEPT:.*]] = onnxg.node "Where"(%[[MASK]],
// CHECK:         %[[DX:.*]] = onnxg.node "Div"(%[[KEPT]],
// CHECK:         return %[[D]], %[[DX]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @dropout_without_mask(%x: tensor<4xf32> loc("x")) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32> loc(fused<"onnx.outputs">["ratio", "r"])
  %t = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1> loc(fused<"onnx.outputs">["train", "t"])
  %d = onnxg.node "Dropout"(%x, %r, %t) opset 17 : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32> loc(fused<"onnx.outputs">["drop", "d"])
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "d"} : (tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["grad", "dx"])
  return %d, %dx : tensor<4xf32>, tensor<4xf32>
}
}

// -----

// Resize: ONNX Runtime's ResizeGrad of dy and x, with the roi and scales
// and the forward's attributes.
// CHECK-LABEL: func.func @nearest_resize(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<3x2xf32>
// CHECK:         %[[S:.*]] = onnxg.node "Constant"
// CHECK:         %[[N:.*]] = onnxg.node "Constant"
// CHECK:         %[[DX:.*]] = onnxg.node "ResizeGrad"(%{{.*}}, %[[X]], %[[N]], %[[S]]) domain "com.microsoft" opset 1 attributes {coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor"} : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<0xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK:         return %[[DX]]
module attributes {onnxg.opset_imports = [["", 17], ["ai.onnx.preview.training", 1]]} {
func.func @nearest_resize(%x: tensor<3x2xf32> loc("x")) -> tensor<3x2xf32> {
  %s = onnxg.node "Constant"() opset 17 attributes {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32> loc(fused<"onnx.outputs">["scales", "s"])
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32> loc(fused<"onnx.outputs">["roi", "n"])
  %y = onnxg.node "Resize"(%x, %n, %s) opset 17 attributes {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<3x2xf32>, tensor<0xf32>, tensor<2xf32>) -> tensor<3x4xf32> loc(fused<"onnx.outputs">["resize", "y"])
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<3x2xf32>) -> tensor<3x2xf32> loc(fused<"onnx.outputs">["grad", "dx"])
  return %dx : tensor<3x2xf32>
}
}
