// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// Adagrad: the decayed learning rate is one 0-d computation; H' = H + g*g,
// then X' = X - r * g / (sqrt(H') + epsilon).
// CHECK-LABEL: func.func @adagrad(
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<i64>) outs(%{{.*}} : tensor<f32>)
// CHECK:           arith.sitofp
// CHECK:           arith.divf
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[H]], %[[R]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>)
// CHECK:           math.sqrt
// CHECK:         return %[[X]], %[[H]]
func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = onnxg.node "Adagrad"(%r, %t, %x, %g, %h) domain "ai.onnx.preview.training" opset 1 attributes {decay_factor = 1.0e-01 : f32, epsilon = 1.0e-05 : f32, norm_coefficient = 1.0e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Momentum over two tensors: the gradient's coefficient is 1 at T == 0;
// Nesterov adds alpha * V' to the step.
// CHECK-LABEL: func.func @nesterov(
// CHECK:         %[[BETA:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<i64>) outs(%{{.*}} : tensor<f32>)
// CHECK:           arith.cmpf ole
// CHECK:           arith.select
// CHECK:         %[[V1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>)
// CHECK:         %[[X1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[V1]], %{{.*}} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>)
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           arith.subf
// CHECK:         %[[V2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[X2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:         return %[[X1]], %[[X2]], %[[V1]], %[[V2]]
func.func @nesterov(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<4xf32>, %g1: tensor<2xf32>, %g2: tensor<4xf32>, %v1: tensor<2xf32>, %v2: tensor<4xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>) {
  %0:4 = onnxg.node "Momentum"(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2) domain "ai.onnx.preview.training" opset 1 attributes {alpha = 0.949999988 : f32, beta = 1.000000e-01 : f32, mode = "nesterov", norm_coefficient = 0.00999999977 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
}

// -----

// Adam: the bias-corrected learning rate is computed once (math.powf of
// the step count), the moments elementwise; X' is scaled by
// 1 - norm_coefficient_post.
// CHECK-LABEL: func.func @adam(
// CHECK:         %[[RATE:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<i64>) outs(%{{.*}} : tensor<f32>)
// CHECK:           math.powf
// CHECK:           math.sqrt
// CHECK:           arith.select
// CHECK:         %[[V:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK:         %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[V]], %[[H]], %[[RATE]] :
// CHECK:         return %[[X]], %[[V]], %[[H]]
func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = onnxg.node "Adam"(%r, %t, %x, %g, %v, %h) domain "ai.onnx.preview.training" opset 1 attributes {norm_coefficient_post = 1.0e-02 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// ONNX Runtime's AdamOptimizer with a bool update signal in input 6 (the
// training_api artifacts): every output is selected between the update and
// its input, and the step count grows by one.
// CHECK-LABEL: func.func @adam_optimizer(
// CHECK:         %[[STEP_IN:.*]] = tensor.collapse_shape %{{.*}} [] : tensor<1xi64> into tensor<i64>
// CHECK:         %[[SIGNAL:.*]] = tensor.collapse_shape %{{.*}} [] : tensor<1xi1> into tensor<i1>
// CHECK:         math.powf
// CHECK:         %[[STEP:.*]] = linalg.generic {{.*}} ins(%[[STEP_IN]] : tensor<i64>) outs(%{{.*}} : tensor<i64>)
// CHECK:           arith.addi
// CHECK:         %[[NEXT:.*]] = tensor.expand_shape %[[STEP]]
// CHECK:         linalg.generic {{.*}} ins(%[[SIGNAL]], %[[NEXT]], %[[STEP_IN]] : tensor<i1>, tensor<1xi64>, tensor<i64>)
// CHECK:           arith.select
func.func @adam_optimizer(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w: tensor<4xf32>, %g: tensor<4xf32>, %m1: tensor<4xf32>, %m2: tensor<4xf32>, %update: tensor<1xi1>) -> (tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0:4 = onnxg.node "AdamOptimizer"(%lr, %step, %w, %g, %m1, %m2, %update) domain "com.microsoft" opset 1 attributes {alpha = 0.899999976 : f32, beta = 0.999000012 : f32, do_bias_correction = 1 : i64, epsilon = 9.99999997E-7 : f32, lambda = 0.000000e+00 : f32, max_norm_clip = 1 : i64, weight_decay_mode = 1 : i64} : (tensor<1xf32>, tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xi1>) -> (tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// ONNX Runtime's AdamWOptimizer over sequences of two tensors (adam_mode 1,
// Hugging Face): per tensor the moments, the f32 change and the weight, as
// for AdamOptimizer; SequenceAt reads the updated sequences, and the flag
// is 1 without an update signal.
// CHECK-LABEL: func.func @adamw_optimizer(
// CHECK-SAME:      %{{[^:]*}}: tensor<1xf32>, %{{[^:]*}}: tensor<1xi64>, %[[W1:[^:]*]]: tensor<4xf32>, %[[W2:[^:]*]]: tensor<2x3xf32>,
// CHECK:         math.powf
// CHECK:         math.powf
// CHECK:         %[[M1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[V1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[D1:.*]] = linalg.generic {{.*}} ins(%[[W1]], %[[M1]], %[[V1]], {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK:           math.sqrt
// CHECK:         %[[X1:.*]] = linalg.generic {{.*}} ins(%[[W1]], %[[D1]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[M2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[V2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[D2:.*]] = linalg.generic {{.*}} ins(%[[W2]], %[[M2]], %[[V2]], {{.*}}) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[X2:.*]] = linalg.generic {{.*}} ins(%[[W2]], %[[D2]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:         %[[FLAG:.*]] = linalg.fill ins(%true : i1) outs(%{{.*}} : tensor<1xi1>)
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         return %[[FLAG]], %[[X1]], %[[X2]], %[[M2]], %[[V1]]
func.func @adamw_optimizer(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w1: tensor<4xf32>, %w2: tensor<2x3xf32>, %g1: tensor<4xf32>, %g2: tensor<2x3xf32>, %m1: tensor<4xf32>, %m2: tensor<2x3xf32>, %v1: tensor<4xf32>, %v2: tensor<2x3xf32>) -> (tensor<1xi1>, tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>) {
  %w = onnxg.node "SequenceConstruct"(%w1, %w2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %g = onnxg.node "SequenceConstruct"(%g1, %g2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %m = onnxg.node "SequenceConstruct"(%m1, %m2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %v = onnxg.node "SequenceConstruct"(%v1, %v2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %0:4 = onnxg.node "AdamWOptimizer"(%lr, %step, %w, %g, %m, %v) domain "com.microsoft" opset 1 attributes {adam_mode = 1 : i64, alpha = 0.899999976 : f32, beta = 0.999000012 : f32, correct_bias = 1 : i64, epsilon = 9.99999997E-7 : f32, weight_decay = 0.01 : f32} : (tensor<1xf32>, tensor<1xi64>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>) -> (tensor<1xi1>, !onnxg.unknown, !onnxg.unknown, !onnxg.unknown)
  %i0 = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %x1 = onnxg.node "SequenceAt"(%0#1, %i0) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<4xf32>
  %x2 = onnxg.node "SequenceAt"(%0#1, %i1) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<2x3xf32>
  %n2 = onnxg.node "SequenceAt"(%0#2, %i1) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<2x3xf32>
  %h1 = onnxg.node "SequenceAt"(%0#3, %i0) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<4xf32>
  return %0#0, %x1, %x2, %n2, %h1 : tensor<1xi1>, tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>
}

// -----

// ONNX Runtime's InplaceClipGradNorm then SGDOptimizerV2 over sequences of
// two tensors: the sum of squares of each gradient, their total's norm,
// min(max_norm / (norm + 1e-6), 1), each gradient scaled, then w - lr g.
// CHECK-LABEL: func.func @clipped_sgd(
// CHECK-SAME:      %[[LR:[^:]*]]: tensor<1xf32>, %[[W1:[^:]*]]: tensor<4xf32>, %[[W2:[^:]*]]: tensor<2x3xf32>,
// CHECK:         %[[S1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[S2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[TOTAL:.*]] = linalg.generic {{.*}} ins(%[[S1]], %[[S2]] : tensor<f32>, tensor<f32>)
// CHECK:         %[[COEFFICIENT:.*]] = linalg.generic {{.*}} ins(%[[TOTAL]] : tensor<f32>)
// CHECK:           math.sqrt
// CHECK:           arith.constant 9.99999997E-7 : f32
// CHECK:           arith.constant 5.000000e-01 : f32
// CHECK:           arith.minimumf
// CHECK:         %[[C1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[COEFFICIENT]] : tensor<4xf32>, tensor<f32>)
// CHECK:         %[[C2:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[COEFFICIENT]] : tensor<2x3xf32>, tensor<f32>)
// CHECK:         %[[X1:.*]] = linalg.generic {{.*}} ins(%[[W1]], %[[C1]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// CHECK:           arith.mulf
// CHECK:           arith.subf
// CHECK:         %[[X2:.*]] = linalg.generic {{.*}} ins(%[[W2]], %[[C2]], %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>)
// CHECK:         %[[FLAG:.*]] = linalg.fill ins(%true : i1) outs(%{{.*}} : tensor<1xi1>)
// CHECK:         return %[[FLAG]], %[[X1]], %[[X2]]
func.func @clipped_sgd(%lr: tensor<1xf32>, %w1: tensor<4xf32>, %w2: tensor<2x3xf32>, %g1: tensor<4xf32>, %g2: tensor<2x3xf32>) -> (tensor<1xi1>, tensor<4xf32>, tensor<2x3xf32>) {
  %w = onnxg.node "SequenceConstruct"(%w1, %w2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %g = onnxg.node "SequenceConstruct"(%g1, %g2) opset 17 : (tensor<4xf32>, tensor<2x3xf32>) -> !onnxg.seq<tensor<*xf32>>
  %c = onnxg.node "InplaceClipGradNorm"(%g) domain "com.microsoft" opset 1 attributes {max_norm = 0.5 : f32} : (!onnxg.seq<tensor<*xf32>>) -> !onnxg.seq<tensor<*xf32>>
  %0:2 = onnxg.node "SGDOptimizerV2"(%lr, %w, %c) domain "com.microsoft" opset 1 : (tensor<1xf32>, !onnxg.seq<tensor<*xf32>>, !onnxg.seq<tensor<*xf32>>) -> (tensor<1xi1>, !onnxg.unknown)
  %i0 = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %x1 = onnxg.node "SequenceAt"(%0#1, %i0) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<4xf32>
  %x2 = onnxg.node "SequenceAt"(%0#1, %i1) opset 17 : (!onnxg.unknown, tensor<i64>) -> tensor<2x3xf32>
  return %0#0, %x1, %x2 : tensor<1xi1>, tensor<4xf32>, tensor<2x3xf32>
}
