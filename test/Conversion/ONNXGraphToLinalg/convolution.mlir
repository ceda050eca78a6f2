// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// Conv pads with tensor.pad, accumulates in f32 over (c, kh, kw) with the
// strides in the input map, collapses (group, m) into channels and adds
// the bias.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 3 + d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1 * 4 + d2, d5, d6, d7)>
// CHECK-LABEL: func.func @conv_stride_pad_f16(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<2x1x4x4x4xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x1x4x4x4xf32> into tensor<2x4x4x4xf32>
// CHECK:         arith.addf
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @conv_stride_pad_f16(%x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<2x4x4x4xf16> {
  %0 = onnxg.node "Conv"(%x, %w, %b) opset 17 attributes {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<2x4x4x4xf16>
  return %0 : tensor<2x4x4x4xf16>
}

// -----

// ConvTranspose: zero-upsample by the strides, pad by (k - 1) * d - pad,
// and convolve with the flipped kernel whose in/out channels are swapped.
// CHECK-DAG: #[[$WT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1 * 4 + d5, d2, -d6 + 2, -d7 + 2)>
// CHECK-LABEL: func.func @conv_transpose_stride(
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<1x4x7x7xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$WT]], #{{.*}}, #{{.*}}]
// CHECK-SAME:      outs(%{{.*}} : tensor<1x1x2x8x8xf32>)
func.func @conv_transpose_stride(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x8x8xf32> {
  %0 = onnxg.node "ConvTranspose"(%x, %w) opset 17 attributes {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, output_padding = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

// MaxPool pads with -inf; the Indices output is the flat position of the
// first maximum.
// CHECK-LABEL: func.func @max_pool_indices(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.cmpf ogt
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i64
func.func @max_pool_indices(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  %0:2 = onnxg.node "MaxPool"(%x) opset 17 attributes {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %0#0, %0#1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

// GlobalAveragePool sums over the spatial dimensions and divides.
// CHECK-LABEL: func.func @global_average_pool(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:         tensor.expand_shape
// CHECK:         arith.divf
func.func @global_average_pool(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32> {
  %0 = onnxg.node "GlobalAveragePool"(%x) opset 17 : (tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}
