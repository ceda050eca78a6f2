// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// Conv pads with tensor.pad, gathers the input windows into columns
// [n, g, c*kh*kw, oh*ow] (the strides are in the gather's input map), then
// one GEMM-like generic accumulates in f32 over c*kh*kw; (group, m)
// collapse into channels and the bias is added.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 3 + d2, d5 * 2 + d3, d6 * 2 + d4)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @conv_stride_pad_f16(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         linalg.generic {indexing_maps = [#[[$COL]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<2x3x10x10xf16>) outs(%{{.*}} : tensor<2x1x3x3x3x4x4xf16>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3, 4], [5, 6]] : tensor<2x1x3x3x3x4x4xf16> into tensor<2x1x27x16xf16>
// CHECK:         linalg.generic {indexing_maps = [#[[$W]], #[[$X]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x4x27xf16>, tensor<2x1x27x16xf16>) outs(%{{.*}} : tensor<2x1x4x16xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x1x4x4x4xf32> into tensor<2x4x4x4xf32>
// CHECK:         arith.addf
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @conv_stride_pad_f16(%x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<2x4x4x4xf16> {
  %0 = onnxg.node "Conv"(%x, %w, %b) opset 17 attributes {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<2x4x4x4xf16>
  return %0 : tensor<2x4x4x4xf16>
}

// -----

// ConvTranspose: zero-upsample by the strides, pad by (k - 1) * d - pad,
// and convolve with the flipped kernel whose in/out channels are swapped
// (regrouped to [g, m, c, kh, kw] before the GEMM).
// CHECK-DAG: #[[$WT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 4 + d2, d1, -d3 + 2, -d4 + 2)>
// CHECK-LABEL: func.func @conv_transpose_stride(
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<1x4x7x7xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK:         linalg.generic {indexing_maps = [#[[$WT]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<1x2x4x3x3xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x2x64xf32>)
func.func @conv_transpose_stride(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x8x8xf32> {
  %0 = onnxg.node "ConvTranspose"(%x, %w) opset 17 attributes {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, output_padding = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

// ConvGrad: dX is the transposed convolution of dY (output padding 1 gives
// back 8x8), dW contracts dY [n, g, m, o] with the im2col columns of X over
// n and o, and dB sums dY over n and the spatial dimensions.
// CHECK-DAG: #[[$DY:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d4)>
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d2, d4)>
// CHECK-DAG: #[[$DW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv_grad(
// CHECK:         tensor.insert_slice %{{.*}} [1, 1, 2, 2] : tensor<2x4x4x4xf16> into tensor<2x4x7x7xf16>
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x1x3x64xf32>)
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [2, 1, 4, 16]
// CHECK:         linalg.generic {indexing_maps = [#[[$DY]], #[[$COLS]], #[[$DW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x1x4x16xf16>, tensor<2x1x27x16xf16>) outs(%{{.*}} : tensor<1x4x27xf32>)
// CHECK:         tensor.expand_shape %{{.*}} output_shape [4, 3, 3, 3]
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x4x4x4xf16>) outs(%{{.*}} : tensor<4xf32>)
func.func @conv_grad(%dy: tensor<2x4x4x4xf16>, %x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) {
  %0:3 = onnxg.node "ConvGrad"(%dy, %x, %w) domain "com.microsoft" opset 1 attributes {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>) -> (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>)
  return %0#0, %0#1, %0#2 : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>
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

// MaxPoolGrad adds each dY element at the flat position its index names,
// into f32 zeros of X's size, then reshapes and rounds.
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK:         linalg.fill {{.*}} -> tensor<32xf32>
// CHECK:         %[[POS:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[OLD:.*]] = tensor.extract %{{.*}}[%[[POS]]] : tensor<32xf32>
// CHECK:         %[[SUM:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK:         tensor.insert %[[SUM]] into %{{.*}}[%[[POS]]] : tensor<32xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 2, 4, 4] : tensor<32xf32> into tensor<1x2x4x4xf32>
// CHECK:         arith.truncf
func.func @max_pool_grad(%dy: tensor<1x2x2x2xf16>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf16> {
  %0 = onnxg.node "MaxPoolGrad"(%dy, %i) opset 17 : (tensor<1x2x2x2xf16>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf16>
  return %0 : tensor<1x2x4x4xf16>
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

// -----

// MaxUnpool writes each element at its flat index into zeros of the
// unpooled shape ((2 - 1) * 2 + 2 = 4 per axis), then pads to
// output_shape at the end.
// CHECK-LABEL: func.func @max_unpool(
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<16xf32>
// CHECK:         scf.for
// CHECK:           tensor.insert %{{.*}} into %{{.*}}[%{{.*}}] : tensor<16xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 1, 4, 4] : tensor<16xf32> into tensor<1x1x4x4xf32>
// CHECK:         tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
func.func @max_unpool(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  %shape = onnxg.node "Constant"() opset 11 attributes {value = dense<[1, 1, 5, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnxg.node "MaxUnpool"(%x, %i, %shape) opset 11 attributes {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// LpPool sums |x|^p over each window of the zero-padded input and takes
// the p-th root (p = 2: squares and sqrt; other p: powf); GlobalLpPool the
// same over all spatial positions.
// CHECK-LABEL: func.func @lp_pools(
// CHECK:         tensor.pad
// CHECK:         linalg.generic
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         math.sqrt
// CHECK:         math.absf
// CHECK-NEXT:    %[[P:.*]] = arith.constant 3.0
// CHECK-NEXT:    math.powf %{{.*}}, %[[P]]
// CHECK:         %[[THIRD:.*]] = arith.constant 0.3333
// CHECK-NEXT:    math.powf %{{.*}}, %[[THIRD]]
func.func @lp_pools(%x: tensor<1x2x5x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x1x1xf32>) {
  %0 = onnxg.node "LpPool"(%x) opset 18 attributes {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, p = 2 : i64} : (tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  %1 = onnxg.node "GlobalLpPool"(%x) opset 17 attributes {p = 3 : i64} : (tensor<1x2x5x4xf32>) -> tensor<1x2x1x1xf32>
  return %0, %1 : tensor<1x2x3x4xf32>, tensor<1x2x1x1xf32>
}

// -----

// Col2Im (opset 18) gathers: a generic over the output and the window
// offsets reads, for each offset, the window row c * 4 + kh * 2 + kw at the
// block (y - kh) / 1, (x - kw) / 1 when that block exists, and adds it.
// CHECK-LABEL: func.func @col2im(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.remui
// CHECK:           arith.divui
// CHECK:           tensor.extract %{{.*}} : tensor<1x8x9xf32>
// CHECK:           arith.addf
// CHECK:           arith.select
// CHECK:         -> tensor<1x2x4x4xf32>
func.func @col2im(%x: tensor<1x8x9xf32>) -> tensor<1x2x4x4xf32> {
  %image = onnxg.node "Constant"() opset 18 attributes {value = dense<4> : tensor<2xi64>} : () -> tensor<2xi64>
  %block = onnxg.node "Constant"() opset 18 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnxg.node "Col2Im"(%x, %image, %block) opset 18 : (tensor<1x8x9xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
