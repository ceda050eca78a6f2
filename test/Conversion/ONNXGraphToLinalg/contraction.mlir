// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// Gemm: transB in the indexing map, an f32 accumulator for every operand
// type but f64, and one epilogue for alpha and C that rounds to the output type.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm_f16_trans_b(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:         %[[PROD:.*]] = linalg.generic {indexing_maps = [#[[$A]], #[[$BT]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%[[ACC]] : tensor<4x3xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.mulf %{{.*}} : f32
// CHECK:           arith.addf %{{.*}} : f32
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[PROD]], %{{.*}} : tensor<4x3xf32>, tensor<3xf32>)
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @gemm_f16_trans_b(%a: tensor<4x8xf16>, %b: tensor<3x8xf16>, %c: tensor<3xf32>) -> tensor<4x3xf16> {
  %0 = onnxg.node "Gemm"(%a, %b, %c) opset 17 attributes {transB = 1 : i64, alpha = 2.0 : f32} : (tensor<4x8xf16>, tensor<3x8xf16>, tensor<3xf32>) -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// -----

// f64 operands accumulate in f64, and C joins them in f64.
// CHECK-LABEL: func.func @gemm_f64(
// CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4x3xf64>)
// CHECK:         linalg.generic
// CHECK:           arith.mulf %{{.*}} : f64
// CHECK:           arith.addf %{{.*}} : f64
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<4x3xf64>, tensor<3xf32>)
// CHECK:           arith.extf %{{.*}} : f32 to f64
func.func @gemm_f64(%a: tensor<4x8xf64>, %b: tensor<8x3xf64>, %c: tensor<3xf32>) -> tensor<4x3xf64> {
  %0 = onnxg.node "Gemm"(%a, %b, %c) opset 17 : (tensor<4x8xf64>, tensor<8x3xf64>, tensor<3xf32>) -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

// Batched MatMul broadcasts the batch dimensions of the smaller operand.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @matmul_batch_broadcast(
// CHECK:         linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<2x4x8x16xf32>)
func.func @matmul_batch_broadcast(%a: tensor<2x4x8x32xbf16>, %b: tensor<4x32x16xbf16>) -> tensor<2x4x8x16xbf16> {
  %0 = onnxg.node "MatMul"(%a, %b) opset 17 : (tensor<2x4x8x32xbf16>, tensor<4x32x16xbf16>) -> tensor<2x4x8x16xbf16>
  return %0 : tensor<2x4x8x16xbf16>
}

// -----

// A vector operand is a row on the left, and its dimension is dropped again.
// CHECK-LABEL: func.func @matmul_vector(
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
func.func @matmul_vector(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  %0 = onnxg.node "MatMul"(%a, %b) opset 17 : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Einsum: loops for the output's labels (b, i, k), then the summed one
// (j); two operands multiply-accumulate in f32 as MatMul's do.
// CHECK-DAG: #[[$EA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$EB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$EO:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @einsum_batch_matmul(
// CHECK:         linalg.generic {indexing_maps = [#[[$EA]], #[[$EB]], #[[$EO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:           arith.extf
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         arith.truncf
func.func @einsum_batch_matmul(%a: tensor<5x2x3xf16>, %b: tensor<5x3x4xf16>) -> tensor<5x2x4xf16> {
  %0 = onnxg.node "Einsum"(%a, %b) opset 12 attributes {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf16>, tensor<5x3x4xf16>) -> tensor<5x2x4xf16>
  return %0 : tensor<5x2x4xf16>
}

// -----

// "...ii->...i": the repeated label reads a diagonal; the implicit output
// of "ij" is "ij", of "ji,j" the once-used i (alphabetical).
// CHECK-DAG: #[[$DIAG:.*]] = affine_map<(d0, d1) -> (d0, d1, d1)>
// CHECK-DAG: #[[$TRANSPOSED:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @einsum_forms(
// CHECK:         linalg.generic {indexing_maps = [#[[$DIAG]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK:         linalg.generic {indexing_maps = [#[[$TRANSPOSED]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
func.func @einsum_forms(%x: tensor<3x5x5xf32>, %m: tensor<4x6xf32>, %v: tensor<4xf32>) -> (tensor<3x5xf32>, tensor<6xf32>) {
  %0 = onnxg.node "Einsum"(%x) opset 12 attributes {equation = "...ii ->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  %1 = onnxg.node "Einsum"(%m, %v) opset 12 attributes {equation = "ji,j"} : (tensor<4x6xf32>, tensor<4xf32>) -> tensor<6xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<6xf32>
}
