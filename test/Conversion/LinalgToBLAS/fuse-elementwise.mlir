// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-fuse-elementwise))" | FileCheck %s
// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(linalg-fuse-elementwise-ops))" | FileCheck %s --check-prefix=UPSTREAM
// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-fuse-elementwise{multi-use=false}))" | FileCheck %s --check-prefix=SINGLE

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// A weight scaled by a single-use elementwise op and an activation reshaped
// from 3-D feed a contraction: both stay outside it, computed once, and
// the contraction stays a linalg.contract. Upstream's pass folds the
// reshape into it (a generic over 4 loops) and fuses the scaling into the
// multiply-accumulate body. Elementwise chains elsewhere still fuse.
// CHECK-LABEL: func.func @gemm_operands_stay_outside
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<32x16xf32>)
// CHECK:           arith.mulf
// CHECK:         tensor.collapse_shape
// CHECK:         linalg.contract
// CHECK:         linalg.generic
// CHECK:           arith.negf
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
// UPSTREAM-LABEL: func.func @gemm_operands_stay_outside
// UPSTREAM-NOT:   linalg.contract
// UPSTREAM:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// UPSTREAM:         arith.mulf
// UPSTREAM:         arith.mulf
// UPSTREAM:         arith.addf
func.func @gemm_operands_stay_outside(%x: tensor<2x4x32xf32>, %w: tensor<32x16xf32>, %acc: tensor<8x16xf32>, %s: f32) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<32x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<32x16xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x32xf32> into tensor<8x32xf32>
  %y = linalg.contract indexing_maps = [#a, #b, #c] ins(%flat, %scaled : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.negf %in : f32
    linalg.yield %1 : f32
  } -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%n, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    linalg.yield %2 : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// A gradient's unscaling, read by the finiteness check (a reduction) and
// by the update: with `multi-use` (the default) its one multiplication is
// recomputed in both, and the unscaled gradient is never stored: three
// loops become two. Without `multi-use` it stays a loop of its own.
// CHECK-LABEL: func.func @multi_use_producer
// CHECK-SAME:    (%[[G:[^:]*]]: tensor<8x16xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G]] :
// CHECK:           arith.mulf
// CHECK:           math.absf
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[G]] :
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK:           arith.subf
// CHECK-NOT:     linalg.generic
// SINGLE-LABEL: func.func @multi_use_producer
// SINGLE-COUNT-3: linalg.generic
// SINGLE-NOT:     linalg.generic
#r = affine_map<(d0, d1) -> ()>
func.func @multi_use_producer(%g: tensor<8x16xf32>, %p: tensor<8x16xf32>, %inv: f32, %lr: f32) -> (tensor<i1>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %unscaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %inv : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %true = arith.constant true
  %inf = arith.constant 0x7F800000 : f32
  %init = tensor.from_elements %true : tensor<i1>
  %finite = linalg.generic {indexing_maps = [#id, #r], iterator_types = ["reduction", "reduction"]} ins(%unscaled : tensor<8x16xf32>) outs(%init : tensor<i1>) {
  ^bb0(%in: f32, %acc: i1):
    %a = math.absf %in : f32
    %lt = arith.cmpf olt, %a, %inf : f32
    %and = arith.andi %acc, %lt : i1
    linalg.yield %and : i1
  } -> tensor<i1>
  %updated = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %unscaled : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %1 = arith.mulf %in_0, %lr : f32
    %2 = arith.subf %in, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<8x16xf32>
  return %finite, %updated : tensor<i1>, tensor<8x16xf32>
}

// A transpose that one computing op reads folds into it: the division reads
// the transpose's input permuted, one loop instead of two (attention's
// head split, then the scaling of Q). A transpose that a contraction reads
// stays one, and so does one read by a reshape or a conversion, or one of
// a contraction's result: the layouts of a convolution's weight gradient,
// which the convolution record pass folds into cuDNN's call. After a GEMM's
// bias addition too: folded into the multiplication, the transpose would
// let the addition fuse with it, and the GEMM lose its bias epilogue.
// CHECK-LABEL: func.func @transpose_folds_into_reader
// SINGLE-LABEL: func.func @transpose_folds_into_reader
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x3xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[PERM:.*]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK:           arith.divf
// CHECK-NOT:     linalg.transpose
// CHECK-LABEL: func.func @transpose_stays_for_contraction
// CHECK:         linalg.transpose
// CHECK:         linalg.contract
// CHECK-LABEL: func.func @transpose_stays_for_reshape
// CHECK:         linalg.transpose
// CHECK:         tensor.collapse_shape
// CHECK-LABEL: func.func @transpose_stays_for_conversion
// CHECK:         linalg.transpose
// CHECK:         arith.truncf
// CHECK-LABEL: func.func @transpose_of_contraction_stays
// CHECK:         linalg.contract
// CHECK:         linalg.transpose
// CHECK:         arith.mulf
// CHECK-LABEL: func.func @transpose_after_bias_stays
// CHECK:         linalg.contract
// CHECK:         arith.addf
// CHECK:         linalg.transpose
// CHECK:         arith.mulf
func.func @transpose_folds_into_reader(%x: tensor<2x3xf32>, %s: f32) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<3x2xf32>
  return %d : tensor<3x2xf32>
}
func.func @transpose_stays_for_contraction(%x: tensor<16x8xf32>, %w: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%x : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%t, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
func.func @transpose_stays_for_reshape(%x: tensor<2x3x4xf32>) -> tensor<12x2xf32> {
  %e = tensor.empty() : tensor<3x4x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<3x4x2xf32>) permutation = [1, 2, 0]
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x4x2xf32> into tensor<12x2xf32>
  return %c : tensor<12x2xf32>
}
func.func @transpose_stays_for_conversion(%x: tensor<2x3xf32>) -> tensor<3x2xf16> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %e16 = tensor.empty() : tensor<3x2xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<3x2xf32>) outs(%e16 : tensor<3x2xf16>) {
  ^bb0(%in: f32, %out: f16):
    %q = arith.truncf %in : f32 to f16
    linalg.yield %q : f16
  } -> tensor<3x2xf16>
  return %h : tensor<3x2xf16>
}
func.func @transpose_of_contraction_stays(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %acc: tensor<4x2xf32>, %s: f32) -> tensor<2x4xf32> {
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %t = linalg.transpose ins(%y : tensor<4x2xf32>) outs(%e : tensor<2x4xf32>) permutation = [1, 0]
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.mulf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}
func.func @transpose_after_bias_stays(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %acc: tensor<4x2xf32>, %bias: tensor<2xf32>, %s: f32) -> tensor<2x4xf32> {
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : tensor<4x2xf32>, tensor<2xf32>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %q = arith.addf %in, %bi : f32
    linalg.yield %q : f32
  } -> tensor<4x2xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %t = linalg.transpose ins(%z : tensor<4x2xf32>) outs(%e : tensor<2x4xf32>) permutation = [1, 0]
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.mulf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}
