// amp-assign-precision with assign=propagate: which ops go low precision by
// the anchors' rules, and why (assign-precision-optimal.mlir has the min-cut).
// RUN: amp-opt %s --amp-assign-precision="assign=propagate remarks=true casts=kernels" -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --amp-assign-precision="assign=propagate rule=downstream" -split-input-file 2>&1 | FileCheck %s --check-prefix=DOWN
// RUN: amp-opt %s --amp-assign-precision="assign=propagate precision=bf16" -split-input-file 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: amp-opt %s --amp-assign-precision="assign=propagate precision=bf16 onnx-types=false" -split-input-file 2>&1 | FileCheck %s --check-prefix=LOWERED
// RUN: amp-opt %s --amp-assign-precision="assign=propagate" -split-input-file 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: amp-opt %s --amp-assign-precision="assign=propagate op-class=MatMul:always" -split-input-file 2>&1 | FileCheck %s --check-prefix=FORCED

// TensorFlow's rule (fp16's default): infer ops go low only between two low
// ops; keep-fp32 ops deny low precision downstream.
// DOWN-LABEL: func.func @mlp
// BF16-LABEL: func.func @mlp
func.func @mlp(%x: tensor<8192x1024xf32>, %w1: tensor<1024x1024xf32>,
               %b: tensor<1024xf32>, %w2: tensor<1024x1024xf32>)
    -> tensor<8192x1024xf32> {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w1) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %1 = onnxg.node "Add"(%0, %b) opset 14
      : (tensor<8192x1024xf32>, tensor<1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %2 = onnxg.node "Relu"(%1) opset 14
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %3 = onnxg.node "MatMul"(%2, %w2) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // Not between two low ops: FP32 under "between", low under "downstream".
  // expected-remark @+1 {{'f32' (infer)}}
  %4 = onnxg.node "Add"(%3, %b) opset 14
      : (tensor<8192x1024xf32>, tensor<1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %5 = onnxg.node "Softmax"(%4) opset 13
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // Denied: downstream of a keep-fp32 op.
  // expected-remark @+1 {{'f32' (infer)}}
  %6 = onnxg.node "Add"(%5, %5) opset 14
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  return %6 : tensor<8192x1024xf32>
}
// DOWN: onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "always-list"
// DOWN: onnxg.node "Add"{{.*}}amp.precision = f16, amp.reason = "infer"
// DOWN: onnxg.node "Relu"{{.*}}amp.precision = f16, amp.reason = "follow"
// DOWN: onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "always-list"
// DOWN: onnxg.node "Add"{{.*}}amp.precision = f16, amp.reason = "infer"
// DOWN: onnxg.node "Softmax"{{.*}}amp.precision = f32, amp.reason = "keep-fp32"
// DOWN: onnxg.node "Add"{{.*}}amp.precision = f32, amp.reason = "infer"
// bf16 defaults to PAI's downstream rule.
// BF16: onnxg.node "MatMul"{{.*}}amp.precision = bf16
// BF16: onnxg.node "Add"{{.*}}amp.precision = bf16
// BF16: onnxg.node "Relu"{{.*}}amp.precision = bf16
// BF16: onnxg.node "MatMul"{{.*}}amp.precision = bf16
// BF16: onnxg.node "Add"{{.*}}amp.precision = bf16
// BF16: onnxg.node "Softmax"{{.*}}amp.precision = f32

// -----

// A GEMM too small to pay for its casts stays FP32; one whose input an
// earlier low GEMM produces pays no cast for it.
func.func @cost(%x: tensor<8x16xf32>, %v: tensor<16x16xf32>,
                %a: tensor<8192x1024xf32>, %w: tensor<1024x1024xf32>) {
  // expected-remark @+1 {{'f32' (cost-model)}}
  %0 = onnxg.node "MatMul"(%x, %v) opset 13
      : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %1 = onnxg.node "MatMul"(%a, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %2 = onnxg.node "MatMul"(%1, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  return
}

// -----

// amp.unscale is the barrier: nothing after it goes low, not even a GEMM.
func.func @barrier(%g: tensor<8192x1024xf32>, %w: tensor<1024x1024xf32>,
                   %scale: tensor<f32>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%g, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %1 = amp.unscale %0 by %scale
      : tensor<8192x1024xf32>, tensor<f32> to tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (barrier)}}
  %2 = onnxg.node "Mul"(%1, %1) opset 14
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (barrier)}}
  %3 = onnxg.node "MatMul"(%2, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  return
}

// -----

// Fixed slots: BatchNormalization follows its data input; its statistics
// are never data. Shape ops are never touched.
func.func @fixed_slots(%x: tensor<32x64x56x56xf32>, %w: tensor<64x64x3x3xf32>,
                       %s: tensor<64xf32>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "Conv"(%x, %w) opset 11 attributes {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<32x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<32x64x56x56xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %1 = onnxg.node "BatchNormalization"(%0, %s, %s, %s, %s) opset 15
      : (tensor<32x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
         tensor<64xf32>, tensor<64xf32>) -> tensor<32x64x56x56xf32>
  // expected-remark @+1 {{'f32' (never-touch)}}
  %2 = onnxg.node "Shape"(%1) opset 15
      : (tensor<32x64x56x56xf32>) -> tensor<4xi64>
  return
}

// -----

// The attention-score GEMM alone would not pay for casting its inputs, but
// they come through follow ops from a low GEMM, so they will be low: it goes
// low too.
func.func @through_follow(%x: tensor<1024x768xf32>, %w: tensor<768x768xf32>,
                          %shape: tensor<4xi64>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %q = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<1024x768xf32>, tensor<768x768xf32>) -> tensor<1024x768xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %r = onnxg.node "Reshape"(%q, %shape) opset 14
      : (tensor<1024x768xf32>, tensor<4xi64>) -> tensor<8x128x12x64xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %t = onnxg.node "Transpose"(%r) opset 13 attributes {perm = array<i64: 0, 2, 1, 3>}
      : (tensor<8x128x12x64xf32>) -> tensor<8x12x128x64xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %k = onnxg.node "Transpose"(%r) opset 13 attributes {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<8x128x12x64xf32>) -> tensor<8x12x64x128xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %s = onnxg.node "MatMul"(%t, %k) opset 13
      : (tensor<8x12x128x64xf32>, tensor<8x12x64x128xf32>) -> tensor<8x12x128x128xf32>
  return
}

// -----

// Range: an op whose constant input would overflow (-1e9, an attention
// mask) or flush to zero (1e-12, an epsilon) in fp16 stays FP32, with a
// remark; bf16 has FP32's range, so there they go low.
// BF16-LABEL: func.func @range
// BF16: onnxg.node "Add"{{.*}}amp.precision = bf16, amp.reason = "infer"
// BF16: onnxg.node "MatMul"{{.*}}amp.precision = bf16, amp.reason = "always-list"
// BF16: onnxg.node "Add"{{.*}}amp.precision = bf16, amp.reason = "infer"
func.func @range(%x: tensor<1024x1024xf32>, %w: tensor<1024x1024xf32>) {
  %mask = onnxg.initializer "mask" dense<-1.0e9> : tensor<1024xf32>
  // expected-remark @+1 {{'f32' (follow)}}
  %big = onnxg.node "Constant"() opset 13
      attributes {value = dense<1.0e5> : tensor<1024x1024xf32>}
      : () -> tensor<1024x1024xf32>
  %eps = onnxg.initializer "eps" dense<1.0e-12> : tensor<1xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  // expected-remark @+2 {{stays f32: constant operand 1 has values outside the range of 'f16' (they would overflow or flush to zero)}}
  // expected-remark @+1 {{'f32' (range)}}
  %1 = onnxg.node "Add"(%0, %mask) opset 14
      : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
  // expected-remark @+2 {{stays f32: constant operand 1}}
  // expected-remark @+1 {{'f32' (range)}}
  %2 = onnxg.node "MatMul"(%1, %big) opset 13
      : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  // expected-remark @+2 {{stays f32: constant operand 1}}
  // expected-remark @+1 {{'f32' (range)}}
  %3 = onnxg.node "Add"(%0, %eps) opset 14
      : (tensor<1024x1024xf32>, tensor<1xf32>) -> tensor<1024x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %4 = onnxg.node "MatMul"(%3, %w) opset 13
      : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return
}

// -----

// An op with a data slot of unknown type (a contrib op shape inference could
// not type) cannot be retyped consistently: it keeps its types, even when a
// policy forces it.
// FORCED-LABEL: func.func @unknown_type
// FORCED: onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "unknown-type"
func.func @unknown_type(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) {
  // expected-remark @+1 {{'f32' (unknown-type)}}
  %g = onnxg.node "Gelu"(%x) domain "com.microsoft" opset 1
      : (tensor<64x64xf32>) -> !onnxg.unknown
  // expected-remark @+1 {{'f32' (unknown-type)}}
  %m = onnxg.node "MatMul"(%g, %w) opset 13
      : (!onnxg.unknown, tensor<64x64xf32>) -> tensor<64x64xf32>
  return
}

// -----

// Loops: the body is decided like a function body. Its arguments (the
// loop-carried state) and its results keep their types, so each carried
// value has one precision; the Loop node itself is never touched. After
// amp.unscale, a body stays FP32 too.
func.func @loop(%n: tensor<i64>, %x: tensor<4096x1024xf32>,
                %w: tensor<1024x1024xf32>, %s: tensor<f32>)
    -> (tensor<4096x1024xf32>, tensor<4096x1024xf32>) {
  %none = onnxg.none
  // expected-remark @+1 {{'f32' (never-touch)}}
  %out = onnxg.node "Loop"(%n, %none, %x) opset 17 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %h: tensor<4096x1024xf32>):
    // expected-remark @+1 {{'f16' (always-list)}}
    %m = onnxg.node "MatMul"(%h, %w) opset 13
        : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
    // expected-remark @+1 {{'f16' (follow)}}
    %r = onnxg.node "Relu"(%m) opset 14
        : (tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
    // expected-remark @+1 {{'f32' (keep-fp32)}}
    %sm = onnxg.node "Softmax"(%r) opset 13
        : (tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
    onnxg.yield ["c", "sm"] %c, %sm : tensor<i1>, tensor<4096x1024xf32>
  } : (tensor<i64>, none, tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %u = amp.unscale %x by %s
      : tensor<4096x1024xf32>, tensor<f32> to tensor<4096x1024xf32>
  // expected-remark @+1 {{'f32' (never-touch)}}
  %after = onnxg.node "Loop"(%n, %none, %u) opset 17 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %h: tensor<4096x1024xf32>):
    // expected-remark @+1 {{'f32' (barrier)}}
    %m = onnxg.node "MatMul"(%h, %w) opset 13
        : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
    onnxg.yield ["c", "m"] %c, %m : tensor<i1>, tensor<4096x1024xf32>
  } : (tensor<i64>, none, tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  return %out, %after : tensor<4096x1024xf32>, tensor<4096x1024xf32>
}

// -----

// The casts an op needs include casting its result back up for users that
// surely read FP32 (a keep-fp32 op, the function's results): with a launch
// per cast (casts=kernels), a 740^3 GEMM pays for casting its inputs down
// (3.98 + 7.96 us < 15.1 us in FP32) but not also its result up when
// Softmax reads it. Feeding another GEMM, which may go low too, it goes low.
// Inside neighbouring kernels (FUSED, the default) the three casts cost
// their bytes only, and both go low.
// FUSED-LABEL: func.func @output_casts
// FUSED: "MatMul"{{.*}}amp.precision = f16
// FUSED: "Softmax"{{.*}}amp.precision = f32
// FUSED: "MatMul"{{.*}}amp.precision = f16
func.func @output_casts(%x: tensor<740x740xf32>, %w: tensor<740x740xf32>)
    -> (tensor<740x740xf32>, tensor<740x740xf32>) {
  // expected-remark @+1 {{'f32' (cost-model)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<740x740xf32>, tensor<740x740xf32>) -> tensor<740x740xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %1 = onnxg.node "Softmax"(%0) opset 13
      : (tensor<740x740xf32>) -> tensor<740x740xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %2 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<740x740xf32>, tensor<740x740xf32>) -> tensor<740x740xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %3 = onnxg.node "MatMul"(%2, %w) opset 13
      : (tensor<740x740xf32>, tensor<740x740xf32>) -> tensor<740x740xf32>
  return %1, %3 : tensor<740x740xf32>, tensor<740x740xf32>
}

// -----

// FP64 computations (an optimizer's bias correction in double) are never
// touched, even when a GEMM.
func.func @fp64(%x: tensor<4096x1024xf64>, %w: tensor<1024x1024xf64>) {
  // expected-remark @+1 {{'f32' (fp64)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<4096x1024xf64>, tensor<1024x1024xf64>) -> tensor<4096x1024xf64>
  return
}

// -----

// An op whose ONNX schema at its opset does not allow the low type stays
// FP32 and stops propagation: MatMul takes bfloat16 only from opset 13, but
// float16 from opset 1. A node newer than libonnx's schemas (opset 19, after
// onnxg-upgrade-opset) is judged by the newest it knows: Conv takes no
// bfloat16 before opset 22. With onnx-types=false (steps that are lowered,
// never exported) the schemas are not asked, and the module names the first
// op beyond them for the ONNX exporter to refuse.
// LOWERED: module attributes {amp.beyond_onnx_types = "MatMul"}
// LOWERED-LABEL: func.func @schema_types
// LOWERED: onnxg.node "MatMul"{{.*}}amp.precision = bf16, amp.reason = "always-list"
// LOWERED: onnxg.node "MatMul"{{.*}}amp.precision = bf16, amp.reason = "always-list"
// LOWERED: onnxg.node "Conv"{{.*}}amp.precision = bf16, amp.reason = "always-list"
// BF16-LABEL: func.func @schema_types
// BF16: onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "unsupported-type"
// BF16: onnxg.node "MatMul"{{.*}}amp.precision = bf16, amp.reason = "always-list"
// BF16: onnxg.node "Conv"{{.*}}amp.precision = f32, amp.reason = "unsupported-type"
func.func @schema_types(%x: tensor<4096x1024xf32>, %w: tensor<1024x1024xf32>,
                        %img: tensor<8x64x56x56xf32>, %k: tensor<64x64x3x3xf32>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 9
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %1 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %2 = onnxg.node "Conv"(%img, %k) opset 19
      : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x54x54xf32>
  return
}

// -----

// Constants follow their users: a ConstantOfShape and the Unsqueeze of it
// (a BatchNorm-style scale) go low with the Mul that reads them, so the
// cast lands on the constant, converted in place, not after the Unsqueeze.
// The range check looks through such follow ops: a scale of 1e10 keeps its
// Mul FP32.
func.func @constants_follow(%x: tensor<4096x1024xf32>,
                            %w: tensor<1024x1024xf32>, %shape: tensor<1xi64>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %m = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %c = onnxg.node "ConstantOfShape"(%shape) opset 9
      attributes {value = dense<2.0> : tensor<1xf32>}
      : (tensor<1xi64>) -> tensor<1024xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %u = onnxg.node "Unsqueeze"(%c) opset 11 attributes {axes = array<i64: 0>}
      : (tensor<1024xf32>) -> tensor<1x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %y = onnxg.node "Mul"(%m, %u) opset 14
      : (tensor<4096x1024xf32>, tensor<1x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %z = onnxg.node "MatMul"(%y, %w) opset 13
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{'f32' (follow)}}
  %big = onnxg.node "ConstantOfShape"(%shape) opset 9
      attributes {value = dense<1.0e10> : tensor<1xf32>}
      : (tensor<1xi64>) -> tensor<1024xf32>
  // expected-remark @+2 {{stays f32: constant operand 0 has values outside the range of 'f16'}}
  // expected-remark @+1 {{'f32' (range)}}
  %ub = onnxg.node "Unsqueeze"(%big) opset 11 attributes {axes = array<i64: 0>}
      : (tensor<1024xf32>) -> tensor<1x1024xf32>
  // expected-remark @+2 {{stays f32: constant operand 1 has values outside the range of 'f16'}}
  // expected-remark @+1 {{'f32' (range)}}
  %yb = onnxg.node "Mul"(%z, %ub) opset 14
      : (tensor<4096x1024xf32>, tensor<1x1024xf32>) -> tensor<4096x1024xf32>
  return
}

// -----

// The loss's gradient, from the scaled seed up to the first always op, stays
// FP32 (autocast runs a loss's backward in FP32): scaled by 65536 before the
// loss's own division, it would overflow FP16. Past the GEMM the rules
// decide again: the Mul between two FP16 GEMMs goes low.
func.func @loss_gradient(%seed: tensor<f32>, %scale: tensor<f32>,
                         %d: tensor<8192x1024xf32>,
                         %w: tensor<1024x1024xf32>) -> tensor<8192x1024xf32> {
  %s = amp.scale_loss %seed by %scale : tensor<f32>, tensor<f32> to tensor<f32>
  // expected-remark @+1 {{'f32' (loss-gradient)}}
  %g = onnxg.node "Mul"(%d, %s) opset 13
      : (tensor<8192x1024xf32>, tensor<f32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (loss-gradient)}}
  %n = onnxg.node "Neg"(%g) opset 13
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%n, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %1 = onnxg.node "Mul"(%0, %d) opset 13
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %2 = onnxg.node "MatMul"(%1, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  return %2 : tensor<8192x1024xf32>
}

// -----

// A scaled gradient multiplied by a constant above 2 (a decomposed
// LayerNorm's backward multiplies dy * gamma by the row size) stays FP32,
// and so does what is computed from it up to the next always op: the loss
// scale keeps gradients within a factor of 2 of FP16's largest value. A
// factor of 2, and a large factor on a forward value, go low as before.
func.func @gradient_range(%seed: tensor<f32>, %scale: tensor<f32>,
                          %x: tensor<8192x1024xf32>,
                          %w: tensor<1024x1024xf32>, %rstd: tensor<8192x1xf32>,
                          %shape: tensor<2xi64>)
    -> (tensor<8192x1024xf32>, tensor<8192x1024xf32>) {
  %s = amp.scale_loss %seed by %scale : tensor<f32>, tensor<f32> to tensor<f32>
  // expected-remark @+1 {{'f32' (loss-gradient)}}
  %d = onnxg.node "Expand"(%s, %shape) opset 13
      : (tensor<f32>, tensor<2xi64>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %dy = onnxg.node "MatMul"(%d, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (follow)}}
  %n = onnxg.node "Constant"() opset 13 attributes {value = dense<1024.0> : tensor<f32>}
      : () -> tensor<f32>
  // expected-remark @+1 {{'f16' (follow)}}
  %two = onnxg.node "Constant"() opset 13 attributes {value = dense<2.0> : tensor<f32>}
      : () -> tensor<f32>
  // expected-remark @+2 {{stays f32: multiplies a loss-scaled gradient by constant operand 1 of magnitude up to 1.024000e+03}}
  // expected-remark @+1 {{'f32' (gradient-range)}}
  %big = onnxg.node "Mul"(%dy, %n) opset 14
      : (tensor<8192x1024xf32>, tensor<f32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (gradient-range)}}
  %centered = onnxg.node "Sub"(%big, %dy) opset 14
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (gradient-range)}}
  %dx = onnxg.node "Mul"(%centered, %rstd) opset 14
      : (tensor<8192x1024xf32>, tensor<8192x1xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %dw = onnxg.node "MatMul"(%dx, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %doubled = onnxg.node "Mul"(%dw, %two) opset 14
      : (tensor<8192x1024xf32>, tensor<f32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %fwd = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %scaled = onnxg.node "Mul"(%fwd, %n) opset 14
      : (tensor<8192x1024xf32>, tensor<f32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %out = onnxg.node "MatMul"(%scaled, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %out2 = onnxg.node "MatMul"(%doubled, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  return %out, %out2 : tensor<8192x1024xf32>, tensor<8192x1024xf32>
}

// -----

// A value times itself is a square, keep-fp32 as Pow even between FP16
// GEMMs (a decomposed BatchNorm's variance squares x - mean; FP16 overflows
// beyond 256); the Mul of two values beside it goes low.
func.func @square(%x: tensor<8192x1024xf32>, %w: tensor<1024x1024xf32>)
    -> (tensor<8192x1024xf32>, tensor<8192x1024xf32>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %1 = onnxg.node "Mul"(%0, %0) opset 13
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %2 = onnxg.node "Mul"(%0, %x) opset 13
      : (tensor<8192x1024xf32>, tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %3 = onnxg.node "MatMul"(%2, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  return %1, %3 : tensor<8192x1024xf32>, tensor<8192x1024xf32>
}
