// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expose-yield))' -split-input-file -verify-diagnostics

module attributes {onnxg.opset_imports = [["", 17], ["com.microsoft", 1]]} {
func.func @unranked_gradient(%w: tensor<3x4xf32> loc("w")) -> tensor<*xf32> {
  %loss = onnxg.node "ReduceSum"(%w) opset 17 attributes {keepdims = 0 : i64} : (tensor<3x4xf32>) -> tensor<f32>
  // expected-error @+1 {{node (YieldOp): output 0 ('') needs a name and a ranked type to become an input}}
  %seed = onnxg.node "YieldOp"(%loss) domain "com.microsoft" opset 1 : (tensor<f32>) -> tensor<*xf32>
  return %seed : tensor<*xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["com.microsoft", 1]]} {
func.func @in_subgraph(%c: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = onnxg.node "If"(%c) opset 17
      attributes {then_branch = 0 : index, else_branch = 1 : index} subgraphs {
    // expected-error @+1 {{node (YieldOp): YieldOp inside a subgraph cannot become the step's inputs and outputs}}
    %seed = onnxg.node "YieldOp"(%x) domain "com.microsoft" opset 1 : (tensor<f32>) -> tensor<f32>
    onnxg.yield ["t"] %seed : tensor<f32>
  }, {
    onnxg.yield ["e"] %x : tensor<f32>
  } : (tensor<i1>) -> tensor<f32>
  return %0 : tensor<f32>
}
}
