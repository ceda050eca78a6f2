// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// A sequence built in the graph is its elements: SequenceAt takes one, at a
// constant position (negative counts from the end), and nothing is left of
// the sequence.
// CHECK-LABEL: func.func @construct_at(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<2xf32>, %[[B:[^:]*]]: tensor<3xf32>, %[[C:[^:]*]]: tensor<2x2xf32>)
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         return %[[B]], %[[C]] : tensor<3xf32>, tensor<2x2xf32>
func.func @construct_at(%a: tensor<2xf32>, %b: tensor<3xf32>, %c: tensor<2x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>) {
  %s = onnxg.node "SequenceConstruct"(%a, %b, %c) opset 17 : (tensor<2xf32>, tensor<3xf32>, tensor<2x2xf32>) -> !onnxg.seq<tensor<*xf32>>
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %last = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnxg.node "SequenceAt"(%s, %one) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<i64>) -> tensor<3xf32>
  %1 = onnxg.node "SequenceAt"(%s, %last) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<1xi64>) -> tensor<2x2xf32>
  return %0, %1 : tensor<3xf32>, tensor<2x2xf32>
}

// -----

// SplitToSequence (parts of 2 and 1 along axis 1), SequenceInsert at the
// front, SequenceErase of the last, SequenceLength, and ConcatFromSequence
// with new_axis stacking along a new axis 0; all on the element lists.
// CHECK-LABEL: func.func @split_edit_concat(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3xf32>, %[[Y:[^:]*]]: tensor<2x2xf32>)
// CHECK:         %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 2] [1, 1]
// CHECK:         tensor.extract_slice %[[X]][0, 2] [2, 1] [1, 1]
// CHECK:         %[[LENGTH:.*]] = arith.constant dense<2> : tensor<i64>
// CHECK:         %[[Y3:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 2]
// CHECK:         %[[F3:.*]] = tensor.expand_shape %[[FIRST]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 2]
// CHECK:         tensor.concat dim(0) %[[Y3]], %[[F3]] : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<2x2x2xf32>
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         return %{{.*}}, %[[LENGTH]] : tensor<2x2x2xf32>, tensor<i64>
func.func @split_edit_concat(%x: tensor<2x3xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2x2xf32>, tensor<i64>) {
  %split = onnxg.node "Constant"() opset 17 attributes {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %s = onnxg.node "SplitToSequence"(%x, %split) opset 17 attributes {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> !onnxg.seq<tensor<*xf32>>
  %i = onnxg.node "SequenceInsert"(%s, %y, %zero) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<2x2xf32>, tensor<i64>) -> !onnxg.seq<tensor<*xf32>>
  %e = onnxg.node "SequenceErase"(%i) opset 17 : (!onnxg.seq<tensor<*xf32>>) -> !onnxg.seq<tensor<*xf32>>
  %n = onnxg.node "SequenceLength"(%e) opset 17 : (!onnxg.seq<tensor<*xf32>>) -> tensor<i64>
  %c = onnxg.node "ConcatFromSequence"(%e) opset 17 attributes {axis = 0 : i64, new_axis = 1 : i64} : (!onnxg.seq<tensor<*xf32>>) -> tensor<2x2x2xf32>
  return %c, %n : tensor<2x2x2xf32>, tensor<i64>
}
