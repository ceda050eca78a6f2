// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// SoftmaxCrossEntropyLoss: log-softmax over the classes, -logp[label] per
// sample with the ignored label weighted 0, divided by the weight sum.
// CHECK-LABEL: func.func @softmax_cross_entropy(
// CHECK:         math.log
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4xi64>)
// CHECK:           arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK:           tensor.extract %{{.*}} : tensor<4x5xf32>
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:         arith.divf
func.func @softmax_cross_entropy(%x: tensor<4x5xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<4x5xf32>) {
  %0:2 = onnxg.node "SoftmaxCrossEntropyLoss"(%x, %y) opset 13 attributes {ignore_index = -1 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x5xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4x5xf32>
}

// -----

// Its ONNX Runtime gradient: (softmax - onehot) * dY / weight sum.
// CHECK-LABEL: func.func @softmax_cross_entropy_grad(
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:           linalg.index 1
// CHECK:           arith.subf
func.func @softmax_cross_entropy_grad(%dy: tensor<f32>, %logp: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  %0 = onnxg.node "SoftmaxCrossEntropyLossGrad"(%dy, %logp, %y) domain "com.microsoft" opset 1 attributes {reduction = "mean"} : (tensor<f32>, tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// InPlaceAccumulatorV2 adds, or overwrites when its flag is set.
// CHECK-LABEL: func.func @accumulator(
// CHECK:         %[[ACC:.*]] = linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.select
// CHECK:         %[[FLAG:.*]] = arith.constant dense<true> : tensor<1xi1>
// CHECK:         return %[[FLAG]], %[[ACC]]
func.func @accumulator(%buffer: tensor<3xf32>, %g: tensor<3xf32>, %overwrite: tensor<1xi1>) -> (tensor<1xi1>, tensor<3xf32>) {
  %0:2 = onnxg.node "InPlaceAccumulatorV2"(%buffer, %g, %overwrite) domain "com.microsoft" opset 1 : (tensor<3xf32>, tensor<3xf32>, tensor<1xi1>) -> (tensor<1xi1>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<1xi1>, tensor<3xf32>
}

// -----

// DivGrad: dA = dY / B summed over A's broadcast dimension (1), dB =
// -dY * A / B^2 summed over B's (0).
// CHECK-LABEL: func.func @div_grad(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           arith.divf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [3, 1]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           arith.negf
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 4]
func.func @div_grad(%dy: tensor<3x4xf32>, %a: tensor<3x1xf32>, %b: tensor<1x4xf32>) -> (tensor<3x1xf32>, tensor<1x4xf32>) {
  %0:2 = onnxg.node "DivGrad"(%dy, %a, %b) domain "com.microsoft" opset 1 : (tensor<3x4xf32>, tensor<3x1xf32>, tensor<1x4xf32>) -> (tensor<3x1xf32>, tensor<1x4xf32>)
  return %0#0, %0#1 : tensor<3x1xf32>, tensor<1x4xf32>
}

// -----

// SimplifiedLayerNormalizationGrad: RMS normalization's dX has no mean(g)
// term (a 0-d zero in its place) and no bias gradient.
// CHECK-LABEL: func.func @rms_norm_grad(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT:     tensor<8xf32>, tensor<8xf32>)
// CHECK:         return %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8xf32>
func.func @rms_norm_grad(%dy: tensor<2x8xf32>, %x: tensor<2x8xf32>, %s: tensor<8xf32>, %r: tensor<2x1xf32>) -> (tensor<2x8xf32>, tensor<8xf32>) {
  %0:2 = onnxg.node "SimplifiedLayerNormalizationGrad"(%dy, %x, %s, %r) domain "com.microsoft" opset 1 attributes {axis = -1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x1xf32>) -> (tensor<2x8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<8xf32>
}
