// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// ReduceMean over a constant axis: an f32 sum, the 1 kept, then the divide
// and the rounding to the output type.
// CHECK-LABEL: func.func @reduce_mean_f16(
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[KEPT]] : tensor<4x1xf32>)
// CHECK:           arith.divf
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @reduce_mean_f16(%x: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %axes = onnxg.node "Constant"() opset 18 attributes {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnxg.node "ReduceMean"(%x, %axes) opset 18 : (tensor<4x8xf16>, tensor<1xi64>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// Without axes every dimension is reduced; keepdims=0 drops them.
// CHECK-LABEL: func.func @reduce_sum_all(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<f32>)
// CHECK-NOT:     tensor.expand_shape
func.func @reduce_sum_all(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = onnxg.node "ReduceSum"(%x) opset 13 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ReduceMax starts from -inf.
// CHECK-LABEL: func.func @reduce_max(
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.maximumf
func.func @reduce_max(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = onnxg.node "ReduceMax"(%x) opset 17 attributes {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Softmax subtracts the row maximum before exp; LogSoftmax ends in
// x - max - log(sum).
// CHECK-LABEL: func.func @softmax_and_log_softmax(
// CHECK:         arith.maximumf
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK:         arith.maximumf
// CHECK:         math.exp
// CHECK:         math.log
func.func @softmax_and_log_softmax(%x: tensor<2x10xf32>) -> (tensor<2x10xf32>, tensor<2x10xf32>) {
  %0 = onnxg.node "Softmax"(%x) opset 13 attributes {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %1 = onnxg.node "LogSoftmax"(%x) opset 13 attributes {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  return %0, %1 : tensor<2x10xf32>, tensor<2x10xf32>
}

// -----

// ORT's SoftmaxGrad_13(dY, Y) = Y * (dY - sum(dY * Y)).
// CHECK-LABEL: func.func @softmax_grad(
// CHECK:         arith.mulf
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         arith.subf
// CHECK:         arith.mulf
func.func @softmax_grad(%dy: tensor<2x10xf32>, %y: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %0 = onnxg.node "SoftmaxGrad_13"(%dy, %y) domain "com.microsoft" opset 1 attributes {axis = -1 : i64} : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}

// -----

// CumSum: a reduction loop k over the axis adds x[k] where k counts towards
// position i (exclusive + reverse: k > i).
// CHECK-LABEL: func.func @cumsum_exclusive_reverse(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           %[[K:.*]] = linalg.index 2 : index
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           arith.cmpi ugt, %[[K]], %[[I]] : index
// CHECK:           arith.select
func.func @cumsum_exclusive_reverse(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %axis = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %0 = onnxg.node "CumSum"(%x, %axis) opset 14 attributes {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
