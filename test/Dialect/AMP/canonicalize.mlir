// RUN: amp-opt %s -canonicalize -split-input-file | FileCheck %s

// A cast to the type it already has folds away.
// CHECK-LABEL: func.func @same_type(
// CHECK-SAME:    %[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    return %[[X]]
func.func @same_type(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = amp.cast %x : tensor<8xf32> to tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A real cast stays.
// CHECK-LABEL: func.func @negative_f32_to_f16(
// CHECK:         amp.cast
func.func @negative_f32_to_f16(%x: tensor<8xf32>) -> tensor<8xf16> {
  %0 = amp.cast %x : tensor<8xf32> to tensor<8xf16>
  return %0 : tensor<8xf16>
}
