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

// Booleans (ReduceMax and ReduceMin from opset 20) order false < true:
// an unsigned extreme from false (true), not a signed one (i1 true is -1).
// CHECK-LABEL: func.func @reduce_bool(
// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK:         linalg.fill ins(%[[FALSE]] : i1)
// CHECK:         arith.maxui
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         linalg.fill ins(%[[TRUE]] : i1)
// CHECK:         arith.minui
func.func @reduce_bool(%x: tensor<2x3xi1>) -> (tensor<2xi1>, tensor<2xi1>) {
  %axes = onnxg.node "Constant"() opset 20 attributes {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %any = onnxg.node "ReduceMax"(%x, %axes) opset 20 attributes {keepdims = 0 : i64} : (tensor<2x3xi1>, tensor<1xi64>) -> tensor<2xi1>
  %all = onnxg.node "ReduceMin"(%x, %axes) opset 20 attributes {keepdims = 0 : i64} : (tensor<2x3xi1>, tensor<1xi64>) -> tensor<2xi1>
  return %any, %all : tensor<2xi1>, tensor<2xi1>
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

// -----

// ArgMax: one reduction carrying the best value (from -inf) and its index;
// select_last_index takes an equal value too (oge). NaN goes first: a NaN
// x beats a number, a number never beats a NaN best.
// CHECK-LABEL: func.func @argmax_last(
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xi64>)
// CHECK:           arith.cmpf uno
// CHECK:           arith.cmpf oge
// CHECK:           linalg.index 1 : index
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK:         tensor.expand_shape %{{.*}} output_shape [3, 1] : tensor<3xi64> into tensor<3x1xi64>
func.func @argmax_last(%x: tensor<3x4xf32>) -> tensor<3x1xi64> {
  %0 = onnxg.node "ArgMax"(%x) opset 13 attributes {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  return %0 : tensor<3x1xi64>
}

// -----

// TopK: each element's rank (how many go before it, the lower index first
// among equals: oge before it, ogt after), then for each of the K output
// positions the element of that rank and its index.
// CHECK-LABEL: func.func @top_k(
// CHECK:         %[[RANKS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<3x5xi64>)
// CHECK:           %[[J:.*]] = linalg.index 2 : index
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           arith.cmpi ult, %[[J]], %[[I]] : index
// CHECK:           arith.cmpf oge
// CHECK:           arith.cmpf ogt
// CHECK:           arith.addi
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[RANKS]] : tensor<3x5xf32>, tensor<3x5xi64>) outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK:           arith.cmpi eq
func.func @top_k(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0:2 = onnxg.node "TopK"(%x, %k) opset 11 : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// TopK along more than 128 elements sorts by a bitonic network: the axis
// padded to 256, then 8 * 9 / 2 = 36 compare-exchange stages, each one
// parallel generic that reads its element and the partner at i xor stride,
// then the first K of the sorted values and indices.
// CHECK-LABEL: func.func @top_k_bitonic(
// CHECK:         tensor.pad %{{.*}} low[0, 0] high[0, 56]
// CHECK:         } : tensor<2x200xf32> to tensor<2x256xf32>
// CHECK-COUNT-36: arith.xori %{{.*}}, %{{.*}} : index
// CHECK-NOT:     arith.xori
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [2, 7] [1, 1] : tensor<2x256xf32> to tensor<2x7xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [2, 7] [1, 1] : tensor<2x256xi64> to tensor<2x7xi64>
func.func @top_k_bitonic(%x: tensor<2x200xf32>) -> (tensor<2x7xf32>, tensor<2x7xi64>) {
  %k = onnxg.node "Constant"() opset 17 attributes {value = dense<7> : tensor<1xi64>} : () -> tensor<1xi64>
  %0:2 = onnxg.node "TopK"(%x, %k) opset 11 : (tensor<2x200xf32>, tensor<1xi64>) -> (tensor<2x7xf32>, tensor<2x7xi64>)
  return %0#0, %0#1 : tensor<2x7xf32>, tensor<2x7xi64>
}

// -----

// Hardmax: ArgMax's reduction, then 1 where the index along the axis is it.
// CHECK-LABEL: func.func @hardmax(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           linalg.index 1 : index
// CHECK:           arith.cmpi eq
// CHECK:           arith.uitofp
func.func @hardmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = onnxg.node "Hardmax"(%x) opset 13 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
