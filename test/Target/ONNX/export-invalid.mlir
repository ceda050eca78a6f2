// Exporting IR that has no ONNX form is an error, and leaves no file.
// RUN: rm -f %t.onnx
// RUN: not amp-opt %s -split-input-file -o %t.onnx 2>&1 | FileCheck %s
// RUN: not test -e %t.onnx

// CHECK: error: 'arith.addf' has no ONNX form and cannot be exported
module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = arith.addf %x, %x : tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
