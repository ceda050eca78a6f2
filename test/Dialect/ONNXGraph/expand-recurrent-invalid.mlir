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

// -----

module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @grad_reverse(%x: tensor<2x3x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %hall: tensor<2x1x3x2xf32>, %call: tensor<2x1x3x2xf32>, %iofc: tensor<2x1x3x8xf32>) -> tensor<2x3x4xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (LSTMGrad): expands for the forward direction only, as ONNX Runtime computes it}}
  %dx = onnxg.node "LSTMGrad"(%x, %w, %r, %none, %none, %none, %hall, %call, %iofc) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64, direction = "reverse"} : (tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, none, none, none, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x8xf32>) -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @grad_activations(%x: tensor<2x3x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %hall: tensor<2x1x3x2xf32>, %zrh: tensor<2x1x3x6xf32>) -> tensor<2x3x4xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (GRUGrad): expands for the default activations only, as ONNX Runtime computes it}}
  %dx = onnxg.node "GRUGrad"(%x, %w, %r, %none, %none, %none, %hall, %zrh) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64, activations = ["Sigmoid", "Relu"]} : (tensor<2x3x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, none, none, none, tensor<2x1x3x2xf32>, tensor<2x1x3x6xf32>) -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @grad_without_states(%x: tensor<2x3x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %hall: tensor<2x1x3x2xf32>) -> tensor<2x3x4xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (GRUGrad): input 7 (states and gates that the forward's GRUTraining returns) is missing}}
  %dx = onnxg.node "GRUGrad"(%x, %w, %r, %none, %none, %none, %hall, %none) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64} : (tensor<2x3x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, none, none, none, tensor<2x1x3x2xf32>, none) -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 14], ["com.microsoft", 1]]} {
func.func @grad_clip(%x: tensor<2x3x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %hall: tensor<2x1x3x2xf32>, %call: tensor<2x1x3x2xf32>, %iofc: tensor<2x1x3x8xf32>) -> tensor<2x3x4xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (LSTMGrad): clip and input_forget do not expand: ONNX Runtime's gradient has neither}}
  %dx = onnxg.node "LSTMGrad"(%x, %w, %r, %none, %none, %none, %hall, %call, %iofc) domain "com.microsoft" opset 1 attributes {hidden_size = 2 : i64, clip = 1.0 : f32} : (tensor<2x3x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, none, none, none, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x8xf32>) -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}
}
