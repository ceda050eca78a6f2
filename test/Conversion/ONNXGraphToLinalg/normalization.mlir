// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// LayerNormalization: mean and variance in f32 over the last axis, then
// (x - mean) * rsqrt(var + eps) * scale + bias rounded to the output type.
// CHECK-LABEL: func.func @layer_norm_bf16(
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         arith.constant 9.99999974E-6 : f32
// CHECK:         math.rsqrt
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
func.func @layer_norm_bf16(%x: tensor<4x16xbf16>, %s: tensor<16xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = onnxg.node "LayerNormalization"(%x, %s, %b) opset 17 attributes {axis = -1 : i64} : (tensor<4x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

// BatchNormalization in training mode reduces over N and the spatial
// dimensions and updates the running statistics with the momentum.
// CHECK-LABEL: func.func @batch_norm_training(
// CHECK:         iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK:         arith.constant 0.899999976 : f32
// CHECK:         arith.constant 0.100000024 : f32
func.func @batch_norm_training(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = onnxg.node "BatchNormalization"(%x, %s, %b, %m, %v) opset 15 attributes {training_mode = 1 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Inference mode uses the given statistics: no reduction.
// CHECK-LABEL: func.func @batch_norm_inference(
// CHECK-NOT:     "reduction"
// CHECK:         math.rsqrt
// CHECK:         return
func.func @batch_norm_inference(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = onnxg.node "BatchNormalization"(%x, %s, %b, %m, %v) opset 15 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// LayerNormalizationGrad: means over the normalized axis feed dX; dscale
// and dbias are sums over the outer axes.
// CHECK-LABEL: func.func @layer_norm_grad(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         %[[DX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         %[[DSCALE:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:         %[[DBIAS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:         return %[[DX]], %[[DSCALE]], %[[DBIAS]] : tensor<4x8xf16>, tensor<8xf32>, tensor<8xf32>
func.func @layer_norm_grad(%dy: tensor<4x8xf16>, %x: tensor<4x8xf16>, %scale: tensor<8xf32>, %mean: tensor<4x1xf32>, %inv: tensor<4x1xf32>) -> (tensor<4x8xf16>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = onnxg.node "LayerNormalizationGrad"(%dy, %x, %scale, %mean, %inv) domain "com.microsoft" opset 1 attributes {axis = -1 : i64} : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x8xf16>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x8xf16>, tensor<8xf32>, tensor<8xf32>
}

// -----

// BatchNormalizationGrad: per-channel statistics over N and the spatial
// axes, so the means and the parameter sums reduce the same axes.
// CHECK-LABEL: func.func @batch_norm_grad(
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK:         %[[DBIAS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         return %{{.*}}, %{{.*}}, %[[DBIAS]] : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
func.func @batch_norm_grad(%dy: tensor<2x3x4xf32>, %x: tensor<2x3x4xf32>, %scale: tensor<3xf32>, %mean: tensor<3xf32>, %inv: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = onnxg.node "BatchNormalizationGrad"(%dy, %x, %scale, %mean, %inv) domain "com.microsoft" opset 1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// InstanceNormalization: statistics of each (n, c) over the spatial
// dimensions, scale and B read per channel.
// CHECK-DAG: #[[$CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @instance_norm(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:         math.rsqrt
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[$CHANNEL]], #[[$CHANNEL]], #{{.*}}]
func.func @instance_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = onnxg.node "InstanceNormalization"(%x, %s, %b) opset 6 attributes {epsilon = 1.0e-2 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// GroupNormalization: [2, 6, 4] as [2, 3 groups, 2 channels, 4]; opset 21's
// per-channel scale as [1, 3, 2, 1], opset 18's per-group one as [1, 3, 1, 1].
// CHECK-LABEL: func.func @group_norm(
// CHECK:         tensor.expand_shape %{{.*}} output_shape [2, 3, 2, 4] : tensor<2x6x4xf32> into tensor<2x3x2x4xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 3, 2, 1] : tensor<6xf32> into tensor<1x3x2x1xf32>
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<2x3x2x4xf32> into tensor<2x6x4xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 3, 1, 1] : tensor<3xf32> into tensor<1x3x1x1xf32>
func.func @group_norm(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>, %gs: tensor<3xf32>, %gb: tensor<3xf32>) -> (tensor<2x6x4xf32>, tensor<2x6x4xf32>) {
  %0 = onnxg.node "GroupNormalization"(%x, %s, %b) opset 21 attributes {num_groups = 3 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  %1 = onnxg.node "GroupNormalization"(%x, %gs, %gb) opset 18 attributes {num_groups = 3 : i64} : (tensor<2x6x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x6x4xf32>
  return %0, %1 : tensor<2x6x4xf32>, tensor<2x6x4xf32>
}

// -----

// LRN: the squares padded with zeros along C (1 before, 1 after for size
// 3), a window reduction reading channel c + j, then x / (bias + alpha /
// size * sum)^beta.
// CHECK-LABEL: func.func @lrn(
// CHECK:         tensor.pad %{{.*}} low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:         math.powf
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = onnxg.node "LRN"(%x) opset 13 attributes {size = 3 : i64} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over 0, 2, 3.
// CHECK-LABEL: func.func @mvn(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK:         math.sqrt
// CHECK:         arith.constant 9.99999971E-10 : f32
func.func @mvn(%x: tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32> {
  %0 = onnxg.node "MeanVarianceNormalization"(%x) opset 13 : (tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32>
  return %0 : tensor<3x3x3x1xf32>
}
