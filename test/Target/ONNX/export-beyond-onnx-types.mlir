// RUN: rm -f %t.onnx
// RUN: not amp-opt %s -o %t.onnx 2>&1 | FileCheck %s
// RUN: not test -e %t.onnx

// A step converted with onnx-types=false, where an op went low in a type
// its schema does not allow (amp-assign-precision names it), has no ONNX
// form.
// CHECK: error: the step was converted with onnx-types=false, and Conv at node 'conv' holds a low-precision type its ONNX schema does not allow at its opset: amp-compile and amp-run run such a step, an ONNX file cannot hold it
module attributes {amp.beyond_onnx_types = "Conv at node 'conv'"} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
