// RUN: amp-opt %s -split-input-file -verify-diagnostics

func.func @attribute_without_kind(%x: tensor<2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Relu): attribute 'bad' has no ONNX attribute kind: 1 : i32}}
  %0 = onnxg.node "Relu"(%x) opset 14 attributes {bad = 1 : i32}
      : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @graph_attribute_out_of_range(%c: tensor<i1>) {
  // expected-error @+1 {{'onnxg.node' op node (If): graph attribute 'then_branch' must name a distinct region below 0}}
  %0 = onnxg.node "If"(%c) opset 13 attributes {then_branch = 0 : index}
      : (tensor<i1>) -> tensor<2xf32>
  return
}

// -----

func.func @region_without_attribute(%c: tensor<i1>, %x: tensor<2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Custom): every region must be named by a graph attribute}}
  %0 = onnxg.node "Custom"(%c) domain "com.example" opset 1 subgraphs {
    onnxg.yield ["x"] %x : tensor<2xf32>
  } : (tensor<i1>) -> tensor<2xf32>
  return
}

// -----

func.func @region_without_block(%c: tensor<i1>) {
  // expected-error @+1 {{'onnxg.node' op node (Custom): a subgraph region must have one block}}
  %0 = onnxg.node "Custom"(%c) domain "com.example" opset 1
      attributes {body = 0 : index} subgraphs {
  } : (tensor<i1>) -> tensor<2xf32>
  return
}

// -----

func.func @schema_arity(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Gemm): expects 2 to 3 inputs, got 1}}
  %0 = onnxg.node "Gemm"(%x) opset 13 : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @schema_outputs(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Relu): expects 1 outputs, got 2}}
  %0:2 = onnxg.node "Relu"(%x) opset 14 : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @schema_attribute_kind(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Gemm): attribute 'alpha' must be FLOAT, got INT}}
  %0 = onnxg.node "Gemm"(%x, %x) opset 13 attributes {alpha = 2 : i64}
      : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @schema_unknown_attribute(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Relu): unknown attribute 'gamma'}}
  %0 = onnxg.node "Relu"(%x) opset 14 attributes {gamma = 2 : i64}
      : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @schema_required_attribute(%x: tensor<2xf32>) {
  // expected-error @+1 {{'onnxg.node' op node (Cast): missing required attribute 'to'}}
  %0 = onnxg.node "Cast"(%x) opset 13 : (tensor<2xf32>) -> tensor<2xf16>
  return
}

// -----

func.func @initializer_without_name() {
  // expected-error @+1 {{'onnxg.initializer' op requires a non-empty name}}
  %0 = onnxg.initializer "" dense<1.0> : tensor<2xf32>
  return
}

// -----

func.func @yield_names(%c: tensor<i1>, %x: tensor<2xf32>) {
  %0 = onnxg.node "If"(%c) opset 13
      attributes {then_branch = 0 : index, else_branch = 1 : index} subgraphs {
    // expected-error @+1 {{'onnxg.yield' op has 1 values but 2 names}}
    onnxg.yield ["a", "b"] %x : tensor<2xf32>
  }, {
    onnxg.yield ["c"] %x : tensor<2xf32>
  } : (tensor<i1>) -> tensor<2xf32>
  return
}

// -----

func.func @yield_outside_node(%x: tensor<2xf32>) {
  // expected-error @+1 {{'onnxg.yield' op expects parent op 'onnxg.node'}}
  onnxg.yield ["x"] %x : tensor<2xf32>
}
