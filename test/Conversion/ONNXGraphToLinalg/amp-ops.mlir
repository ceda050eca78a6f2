// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @cast_and_unscale(
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:         linalg.generic
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           %[[INV:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.mulf %{{.*}}, %[[INV]] : f32
func.func @cast_and_unscale(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %h = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %u = amp.unscale %h by %s : tensor<4xf16>, tensor<f32> to tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

// all_finite: an and-reduction of |x| < inf per input, and-ed together.
// CHECK-LABEL: func.func @all_finite(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK:           math.absf
// CHECK:           arith.cmpf olt
// CHECK:           arith.andi
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:         arith.andi
func.func @all_finite(%a: tensor<2x3xf32>, %b: tensor<3xf16>) -> tensor<i1> {
  %0 = amp.all_finite %a, %b : tensor<2x3xf32>, tensor<3xf16>
  return %0 : tensor<i1>
}

// -----

// update_if_finite selects; a 0-d previous value broadcasts.
// CHECK-LABEL: func.func @update_if_finite(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<2x3xf32>, tensor<f32>)
// CHECK:           arith.select
func.func @update_if_finite(%ok: tensor<i1>, %new: tensor<2x3xf32>, %zero: tensor<f32>) -> tensor<2x3xf32> {
  %0 = amp.update_if_finite %ok, %new, %zero : tensor<2x3xf32>, tensor<f32>
  return %0 : tensor<2x3xf32>
}

// -----

// update_scale: grow after growth_interval clean steps, back off after an
// overflow, within [min_scale, max_scale].
// CHECK-LABEL: func.func @update_scale(
// CHECK:         linalg.generic
// CHECK:           arith.cmpi sge
// CHECK:           arith.minimumf
// CHECK:           arith.maximumf
// CHECK:           arith.select
// CHECK:           arith.select
// CHECK:         linalg.generic
// CHECK:           arith.select
// CHECK:           arith.select
func.func @update_scale(%s: tensor<f32>, %c: tensor<i64>, %ok: tensor<i1>) -> (tensor<f32>, tensor<i64>) {
  %0, %1 = amp.update_scale %s, %c, %ok {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, min_scale = 1.0 : f32, max_scale = 16777216.0 : f32}
  return %0, %1 : tensor<f32>, tensor<i64>
}

// -----

// FP8: a block scale reaches each element through d floordiv block; the
// quantized value saturates (clamped to +-448) before it is truncated; the
// amax reduces |x| into the block grid with a NaN-propagating max.
// CHECK-DAG:   #[[$BLOCK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 16)>
// CHECK-LABEL: func.func @quantize_blocks(
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$BLOCK]]], iterator_types = ["reduction", "reduction"]}
// CHECK:           math.absf
// CHECK:           arith.maximumf
// CHECK:         arith.cmpf ogt
// CHECK:         arith.divf
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$BLOCK]], #{{.*}}]
// CHECK:           arith.mulf
// CHECK:           arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f8E4M3FN
func.func @quantize_blocks(%x: tensor<4x32xf32>) -> tensor<4x32xf8E4M3FN> {
  %a = amp.amax %x {block = array<i64: 1, 16>} : tensor<4x32xf32> to tensor<4x2xf32>
  %s = amp.compute_scale %a {max = 448.0 : f32} : tensor<4x2xf32>
  %q, %i = amp.quantize %x by %s {block = array<i64: 1, 16>} : tensor<4x32xf32>, tensor<4x2xf32> to tensor<4x32xf8E4M3FN>
  return %q : tensor<4x32xf8E4M3FN>
}

// -----

// The scaled GEMM contracts the dequantized operands in f32 and rounds once.
// CHECK-LABEL: func.func @scaled_matmul(
// CHECK:         arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK:         arith.extf %{{.*}} : f8E5M2 to f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @scaled_matmul(%a: tensor<4x32xf8E4M3FN>, %b: tensor<32x16xf8E5M2>, %s: tensor<f32>) -> tensor<4x16xbf16> {
  %y = amp.scaled_matmul %a, %s, %b, %s : tensor<4x32xf8E4M3FN>, tensor<f32>, tensor<32x16xf8E5M2>, tensor<f32> to tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// A cast whose result ONNX could not type (a Reshape to a shape computed by
// Shape): the node it feeds sees the cast's ranked source, not the
// unranked result.
// CHECK-LABEL: func.func @cast_to_unranked(
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3x5xbf16>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK:         tensor.extract %[[WIDE]][%{{.*}}, %{{.*}}] : tensor<3x5xf32>
func.func @cast_to_unranked(%x: tensor<3x5xbf16>, %y: tensor<3xi64>) -> tensor<f32> {
  %shape = onnxg.node "Shape"(%x) opset 13 : (tensor<3x5xbf16>) -> tensor<2xi64>
  %r = onnxg.node "Reshape"(%x, %shape) opset 13 : (tensor<3x5xbf16>, tensor<2xi64>) -> tensor<*xbf16>
  %c = amp.cast %r : tensor<*xbf16> to tensor<*xf32>
  %0 = onnxg.node "NegativeLogLikelihoodLoss"(%c, %y) opset 13 : (tensor<*xf32>, tensor<3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
