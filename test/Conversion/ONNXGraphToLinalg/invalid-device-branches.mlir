// RUN: amp-opt %s --convert-onnxg-to-linalg=host-branches=false -split-input-file -verify-diagnostics

// Without host-branches (the CUDA pipeline) an If of a run-time condition
// is an error, and so is a Loop that does not unroll; an If of a constant
// condition still lowers.
func.func @if_runtime(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.constant dense<true> : tensor<i1>
  %0 = onnxg.node "If"(%t) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    onnxg.yield ["x"] %x : tensor<4xf32>
  }, {
    onnxg.yield ["x"] %x : tensor<4xf32>
  } : (tensor<i1>) -> tensor<4xf32>
  // expected-error @+1 {{node (If): the condition is computed at run time, and the host would read it from device memory: an If lowers for CUDA only when its condition is a constant}}
  %1 = onnxg.node "If"(%c) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    onnxg.yield ["x"] %0 : tensor<4xf32>
  }, {
    onnxg.yield ["x"] %x : tensor<4xf32>
  } : (tensor<i1>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @loop_runtime_trip_count(%m: tensor<i64>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (Loop): the trip count or condition is computed at run time, and the host would read it from device memory: a Loop lowers for CUDA only when they are constants}}
  %0 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    onnxg.yield ["cond", "v"] %cond, %v : tensor<i1>, tensor<2xf32>
  } : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_too_long_to_unroll(%s: tensor<2xf32>, %x: tensor<300x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (Scan): scans 300 elements: a Scan lowers for CUDA only when it unrolls, at most 256}}
  %0 = onnxg.node "Scan"(%s, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si"] %si : tensor<2xf32>
  } : (tensor<2xf32>, tensor<300x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
