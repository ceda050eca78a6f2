// RUN: amp-opt %s | amp-opt | FileCheck %s
// RUN: amp-opt %s --mlir-print-op-generic | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @nodes(
func.func @nodes(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %c: tensor<i1>)
    -> (tensor<2x4xf32>, !onnxg.seq<tensor<2x3xf32>>, !onnxg.unknown) {
  // CHECK: %[[NONE:.*]] = onnxg.none
  %none = onnxg.none
  // CHECK: onnxg.initializer "bias" dense<0.000000e+00> : tensor<4xf32>
  %b = onnxg.initializer "bias" dense<0.0> : tensor<4xf32>
  // CHECK: onnxg.node "Gemm"(%{{.*}}, %{{.*}}, %{{.*}}) opset 13 attributes {alpha = 1.000000e+00 : f32, transB = 1 : i64} doc "fc"
  %y = onnxg.node "Gemm"(%x, %w, %b) opset 13
      attributes {alpha = 1.0 : f32, transB = 1 : i64} doc "fc"
      : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: onnxg.node "SequenceConstruct"
  %s = onnxg.node "SequenceConstruct"(%x) opset 17
      : (tensor<2x3xf32>) -> !onnxg.seq<tensor<2x3xf32>>
  // CHECK: onnxg.node "Clip"(%{{.*}}, %[[NONE]], %[[NONE]])
  %clip = onnxg.node "Clip"(%x, %none, %none) opset 13
      : (tensor<2x3xf32>, none, none) -> tensor<2x3xf32>
  // CHECK: onnxg.node "Custom"(%{{.*}}) domain "com.example" opset 1 attributes {names = ["a", "b"], scales = array<f32: 1.000000e+00>, shape = array<i64: 2, 3>, type = tensor<?xf16>}
  %u = onnxg.node "Custom"(%x) domain "com.example" opset 1
      attributes {names = ["a", "b"], scales = array<f32: 1.0>,
                  shape = array<i64: 2, 3>, type = tensor<?xf16>}
      : (tensor<2x3xf32>) -> !onnxg.unknown
  // CHECK: onnxg.node "If"(%{{.*}}) opset 13 attributes {else_branch = 1 : index, then_branch = 0 : index} subgraphs {
  // CHECK:   onnxg.yield ["t"] %{{.*}} : tensor<2x3xf32>
  %i = onnxg.node "If"(%c) opset 13
      attributes {then_branch = 0 : index, else_branch = 1 : index} subgraphs {
    onnxg.yield ["t"] %x : tensor<2x3xf32>
  }, {
    onnxg.yield ["e"] %clip : tensor<2x3xf32>
  } : (tensor<i1>) -> tensor<2x3xf32>
  return %y, %s, %u : tensor<2x4xf32>, !onnxg.seq<tensor<2x3xf32>>, !onnxg.unknown
}

// CHECK-LABEL: func.func @types(
// CHECK-SAME: !onnxg.opt<tensor<f32>>
// CHECK-SAME: !onnxg.map<i64, tensor<f32>>
// CHECK-SAME: tensor<3x!onnxg.string>
func.func @types(%a: !onnxg.opt<tensor<f32>>, %b: !onnxg.map<i64, tensor<f32>>,
                 %c: tensor<3x!onnxg.string>) {
  return
}
