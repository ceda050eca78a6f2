// RUN: amp-opt %s -split-input-file --amp-recompute="mode=mincut" | FileCheck %s --check-prefixes=CHECK,MINCUT
// RUN: amp-opt %s -split-input-file --amp-recompute="mode=sqrt" | FileCheck %s --check-prefixes=CHECK
// RUN: amp-opt %s -split-input-file --amp-recompute="mode=budget memory-budget=0" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefixes=CHECK,BUDGET
// RUN: not amp-opt %s -split-input-file --amp-recompute="mode=optimal memory-budget=0" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOPLAN

// The rules every mode keeps. Dropout is never cloned: a clone would draw
// another mask; its output and mask are saved. amp.amax (FP8 state) is
// never cloned. A recomputed amp.quantize reads the forward's scale, the
// same value, and records no amax. The BF16 copy of the parameter w costs
// its bytes (the FP32 master is live anyway): the plans recompute it.
// GEMMs stay unless the budget needs them: memory-budget=0 cannot be met
// (Dropout's results stay), so budget mode warns and applies the smallest
// plan, which recomputes the MatMul; the MILP finds no plan within 0.
// BUDGET: warning: amp-recompute: cannot reduce the saved activations below the budget of 0 bytes; reached 160, from 388 (random, stateful and live values stay)
// NOPLAN: error: amp-recompute: mode=optimal: no plan fits the budget
// CHECK-LABEL: func.func @rules(%arg0
// CHECK-SAME:    : tensor<4x8xf32>, %[[W:arg[0-9]+]]: tensor<8x8xf32>, %[[SCALE:arg[0-9]+]]: tensor<f32>
// CHECK:         amp.cast %[[W]] {{.*}}amp.region = "forward"
// CHECK:         onnxg.node "MatMul"
// CHECK:         onnxg.node "Dropout"
// CHECK-NOT:     onnxg.node "Dropout"
// CHECK:         amp.amax
// CHECK-NOT:     amp.amax
// MINCUT:        %[[WL:.*]] = amp.cast %[[W]] {{.*}}amp.recomputed, amp.region = "backward"
// BUDGET:        onnxg.node "MatMul"{{.*}}amp.recomputed
// MINCUT-NOT:    "MatMul"{{.*}}amp.recomputed
// CHECK:         amp.quantize %{{.*}} by %[[SCALE]] {{.*}}amp.recomputed
// CHECK:         return
func.func @rules(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %scale: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<4x8xbf16>, tensor<4x8xf32>) {
  %wl = amp.cast %w {amp.region = "forward"} : tensor<8x8xf32> to tensor<8x8xbf16>
  %xl = amp.cast %x {amp.region = "forward"} : tensor<4x8xf32> to tensor<4x8xbf16>
  %h = onnxg.node "MatMul"(%xl, %wl) opset 17 {amp.region = "forward"} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %hf = amp.cast %h {amp.region = "forward"} : tensor<4x8xbf16> to tensor<4x8xf32>
  %ratio = onnxg.node "Constant"() opset 17 attributes {value = dense<0.5> : tensor<f32>} {amp.region = "forward"} : () -> tensor<f32>
  %train = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} {amp.region = "forward"} : () -> tensor<i1>
  %d, %mask = onnxg.node "Dropout"(%hf, %ratio, %train) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  %r = onnxg.node "Relu"(%d) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %amax = amp.amax %r {amp.region = "forward"} : tensor<4x8xf32> to tensor<f32>
  %q, %inv = amp.quantize %r by %scale {amp.region = "forward"} : tensor<4x8xf32>, tensor<f32> to tensor<4x8xf8E4M3FN>
  %loss = onnxg.node "ReduceSum"(%r) opset 17 attributes {keepdims = 0 : i64} {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<f32>
  // The backward reads the BF16 weight, the mask, the FP8 copy and r.
  %gx = onnxg.node "MatMul"(%h, %wl) opset 17 {amp.region = "backward"} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %qf = amp.dequantize %q by %inv {amp.region = "backward"} : tensor<4x8xf8E4M3FN>, tensor<f32> to tensor<4x8xf32>
  %m = onnxg.node "Cast"(%mask) opset 17 attributes {to = 1 : i64} {amp.region = "backward"} : (tensor<4x8xi1>) -> tensor<4x8xf32>
  %g = onnxg.node "Mul"(%m, %qf) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = onnxg.node "Mul"(%g, %r) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %loss, %amax, %gx, %g2 : tensor<f32>, tensor<f32>, tensor<4x8xbf16>, tensor<4x8xf32>
}

// -----

// Never cloned either, whatever the budget: loss scaling and optimizer ops
// (here in the forward, read by the backward), even where recomputing them
// would save bytes.
// CHECK-LABEL: func.func @stateful(
// CHECK-COUNT-1: amp.scale_loss
// CHECK-NOT:     amp.scale_loss
// CHECK-COUNT-1: "Momentum"
// CHECK-NOT:     "Momentum"
// CHECK:         return
func.func @stateful(%x: tensor<4x8xf32>, %s: tensor<f32>, %r: tensor<f32>, %t: tensor<i64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %scaled = amp.scale_loss %x by %s {amp.region = "forward"} : tensor<4x8xf32>, tensor<f32> to tensor<4x8xf32>
  %m = onnxg.node "Momentum"(%r, %t, %x, %x, %x) domain "ai.onnx.preview.training" opset 1 attributes {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "standard", norm_coefficient = 0.0 : f32} {amp.region = "forward"} : (tensor<f32>, tensor<i64>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = onnxg.node "Add"(%scaled, %m) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g1 = onnxg.node "Mul"(%scaled, %x) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = onnxg.node "Mul"(%m, %g1) opset 17 {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %g2 : tensor<4x8xf32>, tensor<4x8xf32>
}
