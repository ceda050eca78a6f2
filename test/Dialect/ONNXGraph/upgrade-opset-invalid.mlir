// RUN: amp-opt %s --onnxg-upgrade-opset -split-input-file -verify-diagnostics
// RUN: not amp-opt %s --onnxg-upgrade-opset=opset=20 -split-input-file 2>&1 | FileCheck %s --check-prefix=RANGE

// RANGE: error: onnxg-upgrade-opset: opset=20 is out of range: this pass upgrades to opsets 14 to 19

// Before opset 13 too much changed: an op whose schema changed on the way
// to 13 (ReduceMax at 13) needs ONNX's version converter first, and nothing
// is changed.
module attributes {onnxg.opset_imports = [["", 12]]} {
func.func @too_old(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{cannot upgrade node (ReduceMax) from opset 12: the op changed before opset 13, where this pass starts; upgrade the model to opset 17 first with onnx.version_converter.convert_version}}
  %max = onnxg.node "ReduceMax"(%x) opset 12 attributes {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %max : tensor<4x1xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 13]]} {
func.func @saved_statistics(%x: tensor<2x3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{cannot upgrade node (BatchNormalization) to opset 14 or later: its saved mean and variance outputs no longer exist there}}
  %y, %m, %v, %sm, %sv = onnxg.node "BatchNormalization"(%x, %c, %c, %c, %c) opset 13 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %sm : tensor<3xf32>
}
}
