// RUN: amp-opt %s --amp-recompute="remarks=true" -verify-diagnostics -o /dev/null

// The plan's reasons as remarks: each recomputed op names its first
// backward reader, each saved op says why it is kept, and the function
// sums up (the planner's bytes before and after, FLOPs added). The peak
// stays: it moves into the backward, where the clones and h are live.
// expected-remark @below {{amp-recompute: mode=mincut: saved activations 384 -> 128 bytes, peak 1028 -> 1028 bytes, 2 ops recomputed, +9.51% FLOPs}}
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @below {{saved for the backward (compute-intensive)}}
  %h = onnxg.node "MatMul"(%x, %w) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{recomputed before 'Mul'}}
  %r = onnxg.node "Relu"(%h) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{recomputed before 'Mul'}}
  %t = onnxg.node "Tanh"(%r) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = onnxg.node "ReduceSum"(%t) opset 17 attributes {keepdims = 0 : i64} {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<f32>
  %g1 = onnxg.node "Mul"(%t, %dy) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = onnxg.node "Mul"(%r, %g1) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g3 = onnxg.node "Mul"(%h, %g2) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %loss, %g3, %dy : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}
