// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-raise-contractions))" -split-input-file | FileCheck %s

// A GEMM with f16 operands widened into an f32 accumulator, the weight
// transposed, becomes a linalg.contract with the same maps.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm_f16(
// CHECK-SAME:    %[[X:.*]]: tensor<8x32xf16>, %[[W:.*]]: tensor<16x32xf16>, %[[ACC:.*]]: tensor<8x16xf32>)
// CHECK:         %[[R:.*]] = linalg.contract indexing_maps = [#[[$A]], #[[$B]], #[[$C]]] ins(%[[X]], %[[W]] : tensor<8x32xf16>, tensor<16x32xf16>) outs(%[[ACC]] : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK:         return %[[R]]
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

// The product and the sum in the other order, a batch loop, and a weight
// gradient's two reduction loops (K reshaped into the op) are contractions.
#x = affine_map<(b, m, n, t) -> (b, t, m)>
#y = affine_map<(b, m, n, t) -> (b, t, n)>
#o = affine_map<(b, m, n, t) -> (b, m, n)>
// CHECK-LABEL: func.func @batched_swapped
// CHECK:         linalg.contract
// CHECK-NOT:     linalg.generic
func.func @batched_swapped(%x: tensor<3x12x6xf32>, %y: tensor<3x12x10xf32>, %acc: tensor<3x6x10xf32>) -> tensor<3x6x10xf32> {
  %0 = linalg.generic {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %y : tensor<3x12x6xf32>, tensor<3x12x10xf32>) outs(%acc : tensor<3x6x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in_0, %in : f32
    %4 = arith.addf %3, %out : f32
    linalg.yield %4 : f32
  } -> tensor<3x6x10xf32>
  return %0 : tensor<3x6x10xf32>
}

// -----

#x = affine_map<(m, n, b, t) -> (t, b, m)>
#y = affine_map<(m, n, b, t) -> (t, b, n)>
#o = affine_map<(m, n, b, t) -> (m, n)>
// CHECK-LABEL: func.func @two_reductions
// CHECK:         linalg.contract
func.func @two_reductions(%x: tensor<4x2x8xbf16>, %y: tensor<4x2x16xbf16>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %y : tensor<4x2x8xbf16>, tensor<4x2x16xbf16>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %1 = arith.extf %in : bf16 to f32
    %2 = arith.extf %in_0 : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A batch dimension of size 1 broadcast through the constant 0 is sliced
// away first: linalg.contract takes projected permutations only.
#a = affine_map<(b, m, n, k) -> (0, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-DAG:   #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func.func @broadcast_batch(
// CHECK-SAME:    %[[X:.*]]: tensor<1x6x12xf32>
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [1, 6, 12] [1, 1, 1] : tensor<1x6x12xf32> to tensor<6x12xf32>
// CHECK:         linalg.contract indexing_maps = [#[[$A]], {{.*}}] ins(%[[SLICE]], %{{.*}} : tensor<6x12xf32>, tensor<3x12x10xf32>)
func.func @broadcast_batch(%x: tensor<1x6x12xf32>, %y: tensor<3x12x10xf32>, %acc: tensor<3x6x10xf32>) -> tensor<3x6x10xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %y : tensor<1x6x12xf32>, tensor<3x12x10xf32>) outs(%acc : tensor<3x6x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x6x10xf32>
  return %0 : tensor<3x6x10xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#r = affine_map<(m, k) -> (m, k)>
#v = affine_map<(m, k) -> (m)>
// Left alone: a body that does more than multiply-accumulate, an f32
// accumulator of f64 operands (the runtime has no such GEMM), and batched
// dot products (one 1x1 GEMM per output element).
// CHECK-LABEL: func.func @not_gemms
// CHECK-NOT:     linalg.contract
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.contract
func.func @not_gemms(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %acc: tensor<8x16xf32>,
                     %xd: tensor<8x32xf64>, %wd: tensor<32x16xf64>, %v: tensor<8xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %1 = arith.subf %in, %in_0 : f32
    %2 = arith.mulf %1, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<8x16xf32>
  %4 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xd, %wd : tensor<8x32xf64>, tensor<32x16xf64>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%in: f64, %in_0: f64, %out: f32):
    %5 = arith.truncf %in : f64 to f32
    %6 = arith.truncf %in_0 : f64 to f32
    %7 = arith.mulf %5, %6 : f32
    %8 = arith.addf %out, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<8x16xf32>
  %9 = linalg.generic {indexing_maps = [#r, #r, #v], iterator_types = ["parallel", "reduction"]} ins(%x, %x : tensor<8x32xf32>, tensor<8x32xf32>) outs(%v : tensor<8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %10 = arith.mulf %in, %in_0 : f32
    %11 = arith.addf %out, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  return %0, %4, %9 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>
}
