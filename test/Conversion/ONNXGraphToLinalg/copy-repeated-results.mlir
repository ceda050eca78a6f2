// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-copy-repeated-results,cse))' | FileCheck %s --enable-var-scope

// A tensor returned twice: the second result is a copy, tagged with its
// result number, which CSE keeps apart from a third one.
// CHECK-LABEL: func.func @repeated(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         %[[COPY1:.*]] = linalg.copy {amp.result = 1 : i64} ins(%[[X]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK:         %[[COPY3:.*]] = linalg.copy {amp.result = 3 : i64} ins(%[[X]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK:         return %[[X]], %[[COPY1]], %[[Y]], %[[COPY3]]
func.func @repeated(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  return %x, %x, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
