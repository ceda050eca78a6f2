// RUN: not amp-translate --export-onnx %s 2>&1 | FileCheck %s
// CHECK: error: the module has no 'func.func @main' with a body to export
module {
  func.func @step(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
