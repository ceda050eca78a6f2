// amp-eliminate-casts removes cast chains that round-trip exactly, merges
// chains that round once as they rounded twice, and keeps every lossy chain.
// RUN: amp-opt %s --amp-eliminate-casts | FileCheck %s

// CHECK-LABEL: func.func @exact_round_trip
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT:    return %[[X]], %[[X]]
func.func @exact_round_trip(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %1 = amp.cast %0 : tensor<4xf32> to tensor<4xf16>
  %2 = amp.cast %x : tensor<4xf16> to tensor<4xf16>
  return %1, %2 : tensor<4xf16>, tensor<4xf16>
}

// f32 -> f16 -> f32 rounds: it stays.
// CHECK-LABEL: func.func @lossy_round_trip
// CHECK-NEXT:    %[[H:.*]] = amp.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT:    %[[F:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT:    return %[[F]]
func.func @lossy_round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = amp.cast %0 : tensor<4xf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// f16 -> f32 is exact, so f16 -> f32 -> bf16 is one rounding: f16 -> bf16.
// bf16 -> f16 rounds (fewer exponent bits), so that chain stays.
// CHECK-LABEL: func.func @merged_chain
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf16>, %[[Y:.*]]: tensor<4xbf16>)
// CHECK-DAG:     %[[B:.*]] = amp.cast %[[X]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-DAG:     %[[H:.*]] = amp.cast %[[Y]] : tensor<4xbf16> to tensor<4xf16>
// CHECK-DAG:     %[[F:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK:         return %[[B]], %[[F]]
func.func @merged_chain(%x: tensor<4xf16>, %y: tensor<4xbf16>)
    -> (tensor<4xbf16>, tensor<4xf32>) {
  %0 = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %1 = amp.cast %0 : tensor<4xf32> to tensor<4xbf16>
  %2 = amp.cast %y : tensor<4xbf16> to tensor<4xf16>
  %3 = amp.cast %2 : tensor<4xf16> to tensor<4xf32>
  return %1, %3 : tensor<4xbf16>, tensor<4xf32>
}

// f64 -> f32 rounds, but to 24 bits, at least 2p + 2 for f16 (p = 11): f16
// from f32 from f64 equals f16 from f64. bf16 subnormals lie below f32's
// full precision, so f64 -> f32 -> bf16 stays.
// CHECK-LABEL: func.func @innocuous_double_rounding
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>)
// CHECK-DAG:     %[[H:.*]] = amp.cast %[[X]] : tensor<4xf64> to tensor<4xf16>
// CHECK-DAG:     %[[S:.*]] = amp.cast %[[X]] : tensor<4xf64> to tensor<4xf32>
// CHECK-DAG:     %[[B:.*]] = amp.cast %[[S]] : tensor<4xf32> to tensor<4xbf16>
// CHECK:         return %[[H]], %[[B]]
func.func @innocuous_double_rounding(%x: tensor<4xf64>)
    -> (tensor<4xf16>, tensor<4xbf16>) {
  %0 = amp.cast %x : tensor<4xf64> to tensor<4xf32>
  %1 = amp.cast %0 : tensor<4xf32> to tensor<4xf16>
  %2 = amp.cast %0 : tensor<4xf32> to tensor<4xbf16>
  return %1, %2 : tensor<4xf16>, tensor<4xbf16>
}

// A cast that an FP8 quantize reads stays.
// CHECK-LABEL: func.func @quantized
// CHECK:         amp.cast %{{.*}} : tensor<4xf16> to tensor<4xf32>
// CHECK:         amp.quantize
func.func @quantized(%x: tensor<4xf16>, %s: tensor<f32>) -> tensor<4xf8E4M3FN> {
  %0 = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %1, %2 = amp.quantize %0 by %s : tensor<4xf32>, tensor<f32> to tensor<4xf8E4M3FN>
  return %1 : tensor<4xf8E4M3FN>
}

// Only casts are touched: an unused node stays (a graph may define a name
// twice and leave the first definition unread).
// CHECK-LABEL: func.func @other_ops_stay
// CHECK-NEXT:    onnxg.node "Constant"
// CHECK-NEXT:    return
func.func @other_ops_stay() {
  %c = onnxg.node "Constant"() opset 13
      attributes {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  return
}
