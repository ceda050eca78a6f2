// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// A real DFT of length 2 on the axis next to the channels: no transpose,
// one contraction against W[n][2k + part] = (cos, -sin) of 2 pi k n / 2,
// exact at quarter turns, then the bins' (re, im) pairs unflattened.
// CHECK-LABEL: func.func @dft_real(
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, -0.000000e+00, 1.000000e+00, -0.000000e+00], [1.000000e+00, -0.000000e+00, -1.000000e+00, -0.000000e+00]]> : tensor<2x4xf32>
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<3x2x1xf32> into tensor<3x2xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<3x2xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         tensor.expand_shape %[[Y]] {{\[\[}}0], [1, 2]] output_shape [3, 2, 2] : tensor<3x4xf32> into tensor<3x2x2xf32>
func.func @dft_real(%x: tensor<3x2x1xf32>) -> tensor<3x2x2xf32> {
  %0 = onnxg.node "DFT"(%x) opset 17 : (tensor<3x2x1xf32>) -> tensor<3x2x2xf32>
  return %0 : tensor<3x2x2xf32>
}

// -----

// The inverse of a complex signal of length 4: rows (n, re) and (n, im),
// conjugate twiddles divided by 4.
// CHECK-LABEL: func.func @dft_inverse_complex(
// CHECK:         arith.constant dense<{{\[\[}}2.500000e-01, 0.000000e+00, 2.500000e-01, 0.000000e+00, 2.500000e-01, 0.000000e+00, 2.500000e-01, 0.000000e+00], [-0.000000e+00, 2.500000e-01, -0.000000e+00, 2.500000e-01, -0.000000e+00, 2.500000e-01, -0.000000e+00, 2.500000e-01], [2.500000e-01, 0.000000e+00, 0.000000e+00, 2.500000e-01, -2.500000e-01, 0.000000e+00, 0.000000e+00, -2.500000e-01], {{.*}} : tensor<8x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8xf32>)
func.func @dft_inverse_complex(%x: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %0 = onnxg.node "DFT"(%x) opset 17 attributes {inverse = 1 : i64} : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// -----

// Another axis: moved next to the channels and back; f16 transforms in f32
// and rounds once. A dft_length of 6 over 4 samples pads (4 rows of W),
// onesided keeps bins 0 to 3.
// CHECK-LABEL: func.func @dft_axis_padded_onesided(
// CHECK:         arith.extf
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x4x5x1xf32>) outs(%{{.*}} : tensor<2x5x4x1xf32>) permutation = [0, 2, 1, 3]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x5x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<2x5x8xf32>)
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x5x4x2xf32>) outs(%{{.*}} : tensor<2x4x5x2xf32>) permutation = [0, 2, 1, 3]
// CHECK:         arith.truncf {{.*}} : f32 to f16
func.func @dft_axis_padded_onesided(%x: tensor<2x4x5x1xf16>) -> tensor<2x4x5x2xf16> {
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<6> : tensor<i64>} : () -> tensor<i64>
  %0 = onnxg.node "DFT"(%x, %n) opset 17 attributes {axis = 1 : i64, onesided = 1 : i64} : (tensor<2x4x5x1xf16>, tensor<i64>) -> tensor<2x4x5x2xf16>
  return %0 : tensor<2x4x5x2xf16>
}

// -----

// STFT reads frame f's sample t at f * 4 + t, times the window, in one
// generic, then transforms the 7 frames of 8 samples into 5 bins.
// CHECK-DAG:     #[[$FRAME:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 4 + d2, d3)>
// CHECK-DAG:     #[[$WINDOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-LABEL: func.func @stft(
// CHECK:         %[[F:.*]] = linalg.generic {indexing_maps = [#[[$FRAME]], #[[$WINDOW]], {{.*}}]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x32x1xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<1x7x8x1xf32>)
// CHECK:           arith.mulf
// CHECK:         tensor.collapse_shape %[[F]]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x7x8xf32>, tensor<8x10xf32>) outs(%{{.*}} : tensor<1x7x10xf32>)
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 7, 5, 2]
func.func @stft(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>) -> tensor<1x7x5x2xf32> {
  %step = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0 = onnxg.node "STFT"(%x, %step, %w) opset 17 : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>) -> tensor<1x7x5x2xf32>
  return %0 : tensor<1x7x5x2xf32>
}

// -----

// ONNX's MelWeightMatrix case (8 bands, dft_length 16, 8192 Hz, 0 to
// 4096 Hz) as a constant.
// CHECK-LABEL: func.func @mel_weight_matrix(
// CHECK:         %[[M:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], {{.*}}]> : tensor<9x8xf32>
// CHECK:         return %[[M]]
func.func @mel_weight_matrix() -> tensor<9x8xf32> {
  %bins = onnxg.node "Constant"() opset 17 attributes {value = dense<8> : tensor<i32>} : () -> tensor<i32>
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<16> : tensor<i32>} : () -> tensor<i32>
  %rate = onnxg.node "Constant"() opset 17 attributes {value = dense<8192> : tensor<i32>} : () -> tensor<i32>
  %lo = onnxg.node "Constant"() opset 17 attributes {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnxg.node "Constant"() opset 17 attributes {value = dense<4096.0> : tensor<f32>} : () -> tensor<f32>
  %0 = onnxg.node "MelWeightMatrix"(%bins, %n, %rate, %lo, %hi) opset 17 : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}
