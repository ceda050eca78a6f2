// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-recurrent))' -split-input-file -verify-diagnostics

func.func @dynamic_steps(%x: tensor<?x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{node (RNN): the sequence length (dimension 0 of X) must be static and positive to unroll the steps}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

func.func @unknown_activation(%x: tensor<2x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{node (RNN): activation 'gelu' is none of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign and Softplus}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64, activations = ["Gelu"]} : (tensor<2x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

func.func @activation_count(%x: tensor<2x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{node (GRU): has 1 activations; GRU takes 2 per direction}}
  %y, %yh = onnxg.node "GRU"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64, activations = ["Sigmoid"]} : (tensor<2x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

func.func @unknown_hidden_size(%x: tensor<2x2x3xf32>, %w: tensor<1x?x3xf32>, %r: tensor<1x?x?xf32>) -> tensor<1x2x?xf32> {
  // expected-error @+1 {{node (RNN): the hidden size must be known: give hidden_size or R a static last dimension}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 : (tensor<2x2x3xf32>, tensor<1x?x3xf32>, tensor<1x?x?xf32>) -> (none, tensor<1x2x?xf32>)
  return %yh : tensor<1x2x?xf32>
}

// -----

func.func @wrong_weights(%x: tensor<2x2x3xf32>, %w: tensor<2x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{node (RNN): W must be a float tensor of 1x4x..., not 'tensor<2x4x3xf32>'}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64} : (tensor<2x2x3xf32>, tensor<2x4x3xf32>, tensor<1x4x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

func.func @lengths_opset_8(%x: tensor<2x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %lens: tensor<2xi32>) -> tensor<1x2x4xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (RNN): sequence_lens needs opset 9 or later (Where)}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r, %none, %lens) opset 8 attributes {hidden_size = 4 : i64} : (tensor<2x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, tensor<2xi32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

func.func @bad_direction(%x: tensor<2x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{node (RNN): direction 'sideways' is none of forward, reverse and bidirectional}}
  %y, %yh = onnxg.node "RNN"(%x, %w, %r) opset 14 attributes {hidden_size = 4 : i64, direction = "sideways"} : (tensor<2x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}
