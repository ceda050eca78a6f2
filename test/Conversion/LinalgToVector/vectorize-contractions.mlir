// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-vectorize-contractions))" -split-input-file | FileCheck %s

// A GEMM (f16 operands, f32 accumulator, transposed weight) becomes 4x16x8
// tiles whose contraction is 8 rows of vector.fma on vector<16xf32>.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @gemm_f16(
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C16]]
// CHECK:             scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C8]]
// CHECK:               vector.transfer_read {{.*}} : tensor<4x8xf16>, vector<4x8xf16>
// CHECK:               arith.extf %{{.*}} : vector<4x8xf16> to vector<4x8xf32>
// CHECK-COUNT-32:      vector.fma %{{.*}} : vector<16xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<4x16xf32>, tensor<4x16xf32>
// CHECK-NOT:     linalg.generic
func.func @gemm_f16(%x: tensor<8x32xf16>, %w: tensor<16x32xf16>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<8x32xf16>, tensor<16x32xf16>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %1 = arith.extf %in : f16 to f32
    %2 = arith.extf %in_0 : f16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tiles divide their loops: 6x10x12 gets 2x2x4 tiles, and a batch loop is
// tiled by 1.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-LABEL: func.func @batched_odd_sizes(
// CHECK:         vector.transfer_read {{.*}} : tensor<1x2x4xf32>, vector<1x2x4xf32>
// CHECK:         vector.transfer_read {{.*}} : tensor<1x4x2xf32>, vector<1x4x2xf32>
// CHECK:         vector.fma %{{.*}} : vector<2xf32>
func.func @batched_odd_sizes(%x: tensor<3x6x12xf32>, %w: tensor<3x12x10xf32>, %acc: tensor<3x6x10xf32>) -> tensor<3x6x10xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x6x12xf32>, tensor<3x12x10xf32>) outs(%acc : tensor<3x6x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x6x10xf32>
  return %0 : tensor<3x6x10xf32>
}

// -----

// A weight gradient whose K was a reshape folded into the op has two
// reduction loops: the outer one is tiled by 1, the inner one by k.
#x = affine_map<(m, n, b, t) -> (t, b, m)>
#y = affine_map<(m, n, b, t) -> (t, b, n)>
#o = affine_map<(m, n, b, t) -> (m, n)>
// CHECK-LABEL: func.func @two_reductions(
// CHECK:         vector.transfer_read {{.*}} : tensor<8x1x4xf32>, vector<8x1x4xf32>
// CHECK:         vector.transfer_read {{.*}} : tensor<8x1x16xf32>, vector<8x1x16xf32>
// CHECK-NOT:     linalg.generic
func.func @two_reductions(%x: tensor<16x2x8xf32>, %y: tensor<16x2x32xf32>, %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.generic {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %y : tensor<16x2x8xf32>, tensor<16x2x32xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Not GEMM-like: a sum reduction (no multiply) and a dynamic GEMM stay.
#in = affine_map<(m, k) -> (m, k)>
#out = affine_map<(m, k) -> (m)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-NOT:     vector.
func.func @left_alone(%x: tensor<8x32xf32>, %s: tensor<8xf32>, %y: tensor<?x32xf32>, %w: tensor<32x16xf32>, %acc: tensor<?x16xf32>) -> (tensor<8xf32>, tensor<?x16xf32>) {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x32xf32>) outs(%s : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %out, %in : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %w : tensor<?x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<?x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<?x16xf32>
  return %0, %2 : tensor<8xf32>, tensor<?x16xf32>
}
