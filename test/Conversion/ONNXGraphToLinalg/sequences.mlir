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
