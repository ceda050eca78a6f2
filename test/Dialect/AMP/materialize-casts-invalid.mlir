// amp-materialize-casts rejects decisions that are not float types.
// RUN: amp-opt %s --amp-materialize-casts -split-input-file -verify-diagnostics

func.func @string_decision(%x: tensor<4xf32>) {
  // expected-error @+1 {{'onnxg.node' op has amp.precision = "f16"; amp-materialize-casts expects a float type such as f16}}
  %0 = onnxg.node "Relu"(%x) opset 14 {amp.precision = "f16"}
      : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @integer_decision(%x: tensor<4xf32>) {
  // expected-error @+1 {{'onnxg.node' op has amp.precision = i8; amp-materialize-casts expects a float type such as f16}}
  %0 = onnxg.node "Relu"(%x) opset 14 {amp.precision = i8}
      : (tensor<4xf32>) -> tensor<4xf32>
  return
}
