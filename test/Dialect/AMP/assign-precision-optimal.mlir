// amp-assign-precision with assign=optimal (the default): one min-cut over
// the modeled time of every op at each label and of the casts between them
// (docs/OptimalAssignment.md).
// RUN: amp-opt %s --amp-assign-precision="remarks=true" -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --amp-pipeline --mlir-print-debuginfo=false -split-input-file 2>/dev/null | FileCheck %s
// RUN: amp-opt %s --amp-assign-precision="rule=downstream" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: not amp-opt %s --amp-assign-precision="assign=sideways" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODE

// RULE: warning: amp-assign-precision: rule=downstream applies to assign=propagate; assign=optimal decides infer and follow ops by their cost
// MODE: error: amp-assign-precision: unknown assign 'sideways'; expected optimal or propagate

// PAI's embedding case, small table and many lookups: casting the 64x512
// table costs less than casting the 16384 rows gathered, so the Gather runs
// in FP16 on a cast of the table.
// CHECK-LABEL: func.func @embedding_small_table
// CHECK:       %[[TABLE:.*]] = amp.cast %arg0 : tensor<64x512xf32> to tensor<64x512xf16>
// CHECK:       onnxg.node "Gather"(%[[TABLE]], %arg1) {{.*}} -> tensor<16384x512xf16>
func.func @embedding_small_table(%table: tensor<64x512xf32>,
                                 %ids: tensor<16384xi64>,
                                 %w: tensor<512x512xf32>)
    -> tensor<16384x512xf32> {
  // expected-remark @+1 {{'f16' (follow)}}
  %0 = onnxg.node "Gather"(%table, %ids) opset 13
      : (tensor<64x512xf32>, tensor<16384xi64>) -> tensor<16384x512xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %1 = onnxg.node "MatMul"(%0, %w) opset 13
      : (tensor<16384x512xf32>, tensor<512x512xf32>) -> tensor<16384x512xf32>
  return %1 : tensor<16384x512xf32>
}

// -----

// A 1,000,000-row table and the same lookups: the Gather stays FP32 and its
// result is cast for the FP16 MatMul.
// CHECK-LABEL: func.func @embedding_large_table
// CHECK-NOT:   amp.cast %arg0 
// CHECK:       %[[ROWS:.*]] = onnxg.node "Gather"(%arg0, %arg1) {{.*}} -> tensor<16384x512xf32>
// CHECK-NEXT:  %[[LOW:.*]] = amp.cast %[[ROWS]] : tensor<16384x512xf32> to tensor<16384x512xf16>
// CHECK-NEXT:  onnxg.node "MatMul"(%[[LOW]],
func.func @embedding_large_table(%table: tensor<1000000x512xf32>,
                                 %ids: tensor<16384xi64>,
                                 %w: tensor<512x512xf32>)
    -> tensor<16384x512xf32> {
  // expected-remark @+1 {{'f32' (follow)}}
  %0 = onnxg.node "Gather"(%table, %ids) opset 13
      : (tensor<1000000x512xf32>, tensor<16384xi64>) -> tensor<16384x512xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %1 = onnxg.node "MatMul"(%0, %w) opset 13
      : (tensor<16384x512xf32>, tensor<512x512xf32>) -> tensor<16384x512xf32>
  return %1 : tensor<16384x512xf32>
}

// -----

// A CNN block at a training batch: each convolution alone would pay for
// casting its output back, but BatchNormalization and Relu between them can
// run in FP16 too, so the whole chain does: casts of the weights and the
// input in, one cast out.
// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-COUNT-3: amp.cast %arg
// CHECK-NOT:   amp.cast %
// CHECK:       onnxg.node "Relu"{{.*}} -> tensor<32x64x32x32xf16>
// CHECK:       amp.cast {{.*}} : tensor<32x64x32x32xf16> to tensor<32x64x32x32xf32>
// CHECK-NOT:   amp.cast %
func.func @conv_bn_relu(%x: tensor<32x64x32x32xf32>,
                        %w1: tensor<64x64x3x3xf32>, %w2: tensor<64x64x3x3xf32>,
                        %s: tensor<64xf32>, %b: tensor<64xf32>,
                        %m: tensor<64xf32>, %v: tensor<64xf32>)
    -> tensor<32x64x32x32xf32> {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "Conv"(%x, %w1) opset 17 {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<32x64x32x32xf32>, tensor<64x64x3x3xf32>)
      -> tensor<32x64x32x32xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %1 = onnxg.node "BatchNormalization"(%0, %s, %b, %m, %v) opset 15
      : (tensor<32x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>,
         tensor<64xf32>, tensor<64xf32>) -> tensor<32x64x32x32xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %2 = onnxg.node "Relu"(%1) opset 14
      : (tensor<32x64x32x32xf32>) -> tensor<32x64x32x32xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %3 = onnxg.node "Conv"(%2, %w2) opset 17 {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<32x64x32x32xf32>, tensor<64x64x3x3xf32>)
      -> tensor<32x64x32x32xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %4 = onnxg.node "Relu"(%3) opset 14
      : (tensor<32x64x32x32xf32>) -> tensor<32x64x32x32xf32>
  return %4 : tensor<32x64x32x32xf32>
}

// -----

// An elementwise op between two FP32 ops stays FP32: in FP16 it would need a
// cast on each side.
// CHECK-LABEL: func.func @between_fp32
// CHECK-NOT:   amp.cast %
func.func @between_fp32(%x: tensor<8192x1024xf32>) -> tensor<8192x1024xf32> {
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %0 = onnxg.node "Exp"(%x) opset 13
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (follow)}}
  %1 = onnxg.node "Relu"(%0) opset 14
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %2 = onnxg.node "Log"(%1) opset 13
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  return %2 : tensor<8192x1024xf32>
}

// -----

// Ties break toward FP32: a GEMM so small that a kernel launch is all it
// costs gains nothing in FP16.
// CHECK-LABEL: func.func @tie
// CHECK-NOT:   amp.cast %
func.func @tie(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>)
    -> tensor<8x16xf32> {
  // expected-remark @+1 {{'f32' (cost-model)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Where the propagation rules stop ("between": the last Add is not between
// two FP16 ops), the cut goes on when that is cheaper: the Add runs in FP16
// and the one cast back moves after it.
// CHECK-LABEL: func.func @mlp_tail
// CHECK:       onnxg.node "Add"{{.*}} -> tensor<8192x1024xf16>
// CHECK-NEXT:  amp.cast {{.*}} : tensor<8192x1024xf16> to tensor<8192x1024xf32>
func.func @mlp_tail(%x: tensor<8192x1024xf32>, %w: tensor<1024x1024xf32>,
                    %b: tensor<1024xf32>) -> tensor<8192x1024xf32> {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %1 = onnxg.node "Add"(%0, %b) opset 14
      : (tensor<8192x1024xf32>, tensor<1024xf32>) -> tensor<8192x1024xf32>
  return %1 : tensor<8192x1024xf32>
}
