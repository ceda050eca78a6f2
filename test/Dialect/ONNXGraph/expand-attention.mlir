// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-attention))' -split-input-file | FileCheck %s --enable-var-scope

// 3-D group query attention, causal, in FP16 (as after --amp-pipeline): the
// heads are split and transposed, the 2 key heads repeated for 4 query
// heads, Q and K scaled by sqrt(1 / sqrt(8)) and multiplied in f16, the
// scores cast to f32 for the causal mask and the softmax, the
// probabilities cast back to f16 for the MatMul by V, and the heads
// merged.
// CHECK-LABEL: func.func @gqa_causal_fp16(
// CHECK:         %[[Q:.*]] = onnxg.node "Transpose"({{.*}}) {{.*}} -> tensor<2x4x5x8xf16>
// CHECK:         onnxg.node "Expand"({{.*}}) {{.*}} -> tensor<2x2x2x5x8xf16>
// CHECK:         %[[K:.*]] = onnxg.node "Reshape"({{.*}}) {{.*}} -> tensor<2x4x5x8xf16>
// CHECK:         %[[V:.*]] = onnxg.node "Reshape"({{.*}}) {{.*}} -> tensor<2x4x5x8xf16>
// CHECK:         %[[ROOT:.*]] = onnxg.node "Constant"() {{.*}} {value = dense<5.947{{[0-9]*}}e-01> : tensor<f16>}
// CHECK:         %[[QS:.*]] = onnxg.node "Mul"(%[[Q]], %[[ROOT]])
// CHECK:         %[[KS:.*]] = onnxg.node "Mul"(%[[K]], %{{.*}})
// CHECK:         %[[KT:.*]] = onnxg.node "Transpose"(%[[KS]]) {{.*}}perm = array<i64: 0, 1, 3, 2>
// CHECK:         %[[S:.*]] = onnxg.node "MatMul"(%[[QS]], %[[KT]]) {{.*}} -> tensor<2x4x5x5xf16>
// CHECK:         %[[S32:.*]] = onnxg.node "Cast"(%[[S]]) {{.*}} -> tensor<2x4x5x5xf32>
// CHECK:         %[[CAUSAL:.*]] = onnxg.node "Constant"() {{.*}} : () -> tensor<5x5xf32>
// CHECK:         %[[MASKED:.*]] = onnxg.node "Add"(%[[S32]], %[[CAUSAL]])
// CHECK:         %[[P:.*]] = onnxg.node "Softmax"(%[[MASKED]]) {{.*}} {axis = -1 : i64}
// CHECK:         %[[P16:.*]] = onnxg.node "Cast"(%[[P]]) {{.*}} -> tensor<2x4x5x5xf16>
// CHECK:         %[[Y:.*]] = onnxg.node "MatMul"(%[[P16]], %[[V]]) {{.*}} -> tensor<2x4x5x8xf16>
// CHECK:         %[[YT:.*]] = onnxg.node "Transpose"(%[[Y]]) {{.*}} -> tensor<2x5x4x8xf16>
// CHECK:         %[[OUT:.*]] = onnxg.node "Reshape"(%[[YT]], %{{.*}}) {{.*}} -> tensor<2x5x32xf16>
// CHECK:         return %[[OUT]]
module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @gqa_causal_fp16(%q: tensor<2x5x32xf16>, %k: tensor<2x5x16xf16>, %v: tensor<2x5x16xf16>) -> tensor<2x5x32xf16> {
  %0 = onnxg.node "Attention"(%q, %k, %v) opset 23 attributes {is_causal = 1 : i64, q_num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<2x5x32xf16>, tensor<2x5x16xf16>, tensor<2x5x16xf16>) -> tensor<2x5x32xf16>
  return %0 : tensor<2x5x32xf16>
}
}

// -----

// A bool mask becomes 0 where it attends and -inf elsewhere (Where); the
// past keys and values come first and are the present outputs.
// CHECK-LABEL: func.func @mask_and_past(
// CHECK-SAME:      %[[PK:[^:]*]]: tensor<1x2x4x8xf32>, %[[PV:[^:]*]]: tensor<1x2x4x8xf32>
// CHECK:         %[[KEYS:.*]] = onnxg.node "Concat"(%[[PK]], %{{.*}}) {{.*}} -> tensor<1x2x7x8xf32>
// CHECK:         %[[VALUES:.*]] = onnxg.node "Concat"(%[[PV]], %{{.*}}) {{.*}} -> tensor<1x2x7x8xf32>
// CHECK:         onnxg.node "Where"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<3x7xf32>
// CHECK:         return %{{.*}}, %[[KEYS]], %[[VALUES]]
module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @mask_and_past(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %m: tensor<3x7xi1>, %pk: tensor<1x2x4x8xf32>, %pv: tensor<1x2x4x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>) {
  %0:3 = onnxg.node "Attention"(%q, %k, %v, %m, %pk, %pv) opset 23 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<3x7xi1>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x2x3x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>
}
}

// -----

// RotaryEmbedding, 4-D, with position ids: the caches gathered and shaped
// [batch, 1, sequence, half], the halves rotated, the untouched rest of
// each head concatenated back.
// CHECK-LABEL: func.func @rotary(
// CHECK:         %[[COS:.*]] = onnxg.node "Gather"({{.*}}) {{.*}} -> tensor<2x5x4xf32>
// CHECK:         onnxg.node "Reshape"(%[[COS]], %{{.*}}) {{.*}} -> tensor<2x1x5x4xf32>
// CHECK:         %[[X1:.*]] = onnxg.node "Slice"({{.*}}) {{.*}} -> tensor<2x3x5x4xf32>
// CHECK:         %[[X2:.*]] = onnxg.node "Slice"({{.*}}) {{.*}} -> tensor<2x3x5x4xf32>
// CHECK:         %[[REAL:.*]] = onnxg.node "Sub"
// CHECK:         %[[IMAGINARY:.*]] = onnxg.node "Add"
// CHECK:         %[[ROTATED:.*]] = onnxg.node "Concat"(%[[REAL]], %[[IMAGINARY]])
// CHECK:         %[[REST:.*]] = onnxg.node "Slice"({{.*}}) {{.*}} -> tensor<2x3x5x8xf32>
// CHECK:         onnxg.node "Concat"(%[[ROTATED]], %[[REST]]) {{.*}} -> tensor<2x3x5x16xf32>
module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @rotary(%x: tensor<2x3x5x16xf32>, %c: tensor<16x4xf32>, %s: tensor<16x4xf32>, %p: tensor<2x5xi64>) -> tensor<2x3x5x16xf32> {
  %0 = onnxg.node "RotaryEmbedding"(%x, %c, %s, %p) opset 23 attributes {rotary_embedding_dim = 8 : i64} : (tensor<2x3x5x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<2x5xi64>) -> tensor<2x3x5x16xf32>
  return %0 : tensor<2x3x5x16xf32>
}
}
