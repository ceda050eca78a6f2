// RUN: amp-opt %s --amp-recompute -split-input-file | FileCheck %s
// RUN: amp-opt %s --amp-recompute="mode=optimal" -split-input-file | FileCheck %s

// The backward reads r and s (256 bytes); both are cheap to compute again
// from h, the MatMul's FP16 result (64 bytes: FP16 counts two bytes an
// element), which is not recomputed. The min-cut (and the MILP) keep h and
// clone Cast and Mul before the first backward reader, named with a
// `.recompute` suffix; the forward keeps its own for the loss.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    amp.recompute = {{{.*}}mode = "{{mincut|optimal}}"{{.*}}recomputed = 2 : i64, recomputed_by_type = {Cast = 1 : i64, Mul = 1 : i64}, saved_bytes_after = 6.400000e+01 : f64, saved_bytes_before = 2.560000e+02 : f64, us_before = {{.*}}}
// CHECK:         %[[H:.*]] = onnxg.node "MatMul"
// CHECK:         %[[R:.*]] = onnxg.node "Cast"(%[[H]]) {{.*}}{amp.region = "forward"}
// CHECK:         %[[S:.*]] = onnxg.node "Mul"(%[[R]], %[[R]]) {{.*}}{amp.region = "forward"}
// CHECK:         onnxg.node "ReduceSum"(%[[S]])
// CHECK:         %r.recompute = onnxg.node "Cast"(%[[H]]) {{.*}}{amp.recomputed, amp.region = "backward"}
// CHECK:         %s.recompute = onnxg.node "Mul"(%r.recompute, %r.recompute) {{.*}}{amp.recomputed, amp.region = "backward"}
// CHECK:         %[[G1:.*]] = onnxg.node "Mul"(%s.recompute, %{{.*}}) {{.*}}{amp.region = "backward"}
// CHECK:         onnxg.node "Mul"(%r.recompute, %[[G1]])
func.func @chain(%x: tensor<4x8xf16> loc("x"), %w: tensor<8x8xf16> loc("w"), %dy: tensor<4x8xf32> loc("dy"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<4x8xf32> {onnxg.name = "g"}) {
  %h = onnxg.node "MatMul"(%x, %w) opset 17 {amp.region = "forward"} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16> loc(fused<"onnx.outputs">["mm", "h"])
  %r = onnxg.node "Cast"(%h) opset 17 attributes {to = 1 : i64} {amp.region = "forward"} : (tensor<4x8xf16>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["cast", "r"])
  %s = onnxg.node "Mul"(%r, %r) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["square", "s"])
  %loss = onnxg.node "ReduceSum"(%s) opset 17 attributes {keepdims = 0 : i64} {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %g1 = onnxg.node "Mul"(%s, %dy) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["g1", "g1"])
  %g2 = onnxg.node "Mul"(%r, %g1) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["g2", "g2"])
  return %loss, %g2 : tensor<f32>, tensor<4x8xf32>
}

// -----

// A value the step returns stays live anyway: keeping it costs nothing,
// so it is not recomputed, and neither is a Constant. A forward op only
// the backward read moves there (the forward's copy is erased).
// CHECK-LABEL: func.func @live_anyway(
// CHECK-NOT:     amp.recomputed
// CHECK-NOT:     "Neg"
// CHECK:         %n.recompute = onnxg.node "Neg"(%{{.*}}) {{.*}}{amp.recomputed, amp.region = "backward"}
// CHECK-NOT:     amp.recomputed
// CHECK:         return
func.func @live_anyway(%x: tensor<4xf32> loc("x"))
    -> (tensor<4xf32> {onnxg.name = "t"}, tensor<4xf32> {onnxg.name = "g"}) {
  %c = onnxg.node "Constant"() opset 17 attributes {value = dense<2.0> : tensor<4xf32>} {amp.region = "forward"} : () -> tensor<4xf32> loc(fused<"onnx.outputs">["c", "c"])
  %t = onnxg.node "Tanh"(%x) opset 17 {amp.region = "forward"} : (tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["tanh", "t"])
  %n = onnxg.node "Neg"(%x) opset 17 {amp.region = "forward"} : (tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["neg", "n"])
  %g0 = onnxg.node "Mul"(%t, %c) opset 17 {amp.region = "backward"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["g0", "g0"])
  %g = onnxg.node "Mul"(%g0, %n) opset 17 {amp.region = "backward"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["g", "g"])
  return %t, %g : tensor<4xf32>, tensor<4xf32>
}
