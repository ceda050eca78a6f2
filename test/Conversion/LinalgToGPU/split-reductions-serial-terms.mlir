// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-split-reductions{serial-terms=32}))' | FileCheck %s --check-prefixes=CHECK,KEPT
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-split-reductions{serial-terms=32 split-bias-gradients=true}))' | FileCheck %s --check-prefixes=CHECK,SPLIT

// A sum of 512 terms per output: two levels of about its square root,
// partial sums of 32 strided terms (16 per row), then 16 of them.
// CHECK-LABEL: func.func @two_levels
// CHECK:         tensor.expand_shape %{{.*}} output_shape [4, 32, 16]
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<4x16xf32>)
// CHECK:         return %[[SUM]]
func.func @two_levels(%x: tensor<4x512xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x512xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// 25088 terms (a 112x112 image, batch 2): its largest divisor up to 32
// first, then the 784-term partials again in two levels of 28: sums of 28,
// 28 and 32 terms in sequence instead of one of 25088. The prologue
// (a square, mixed-precision's extension) goes with the first level.
// CHECK-LABEL: func.func @three_levels
// CHECK:         tensor.expand_shape %{{.*}} output_shape [784, 32]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [28, 28, 32]
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<28x28x32xf16>)
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         } -> tensor<28x32xf32>
// CHECK:         %[[SECOND:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[FIRST]] : tensor<28x32xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[SECOND]] : tensor<32xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         return %[[SUM]]
func.func @three_levels(%x: tensor<25088xf16>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<25088xf16>) outs(%init : tensor<f32>) {
  ^bb0(%in: f16, %acc: f32):
    %e = arith.extf %in : f16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// BatchNorm's per-channel sum over an NCHW batch: the spatial loops
// (256 terms) are summed first per image, in two levels of 16, then the
// two images' sums.
// CHECK-LABEL: func.func @nchw_channel_sum
// CHECK:         tensor.expand_shape %{{.*}} output_shape [2, 8, 16, 16]
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<8x2x16xf32>)
// CHECK:         %[[IMAGES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FIRST]] : tensor<8x2x16xf32>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[IMAGES]] : tensor<8x2xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         return %[[SUM]]
func.func @nchw_channel_sum(%x: tensor<2x8x16x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Left whole: sums of at most 32 terms and reductions that round nothing
// (max).
// CHECK-LABEL: func.func @whole
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @whole(%small: tensor<4x32xf32>, %big: tensor<4x4096xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%small : tensor<4x32xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%big : tensor<4x4096xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %a, %c : tensor<4xf32>, tensor<4xf32>
}

// -----

// A sum of a prime number of terms (1031), which no block size divides:
// its first 1024 terms in blocks of 32, the last 7 added after (they were
// one sum of 1031 terms in order).
// CHECK-LABEL: func.func @prime
// CHECK-SAME:    (%[[X:.*]]: tensor<4x1031xf32>, %[[INIT:.*]]: tensor<4xf32>)
// CHECK:         %[[HEAD:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 1024] [1, 1]
// CHECK:         tensor.expand_shape %[[HEAD]] {{\[\[}}0], [1, 2]] output_shape [4, 32, 32]
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[PARTIAL]] : tensor<4x32xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK:         %[[TAIL:.*]] = tensor.extract_slice %[[X]][0, 1024] [4, 7] [1, 1]
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[TAIL]] : tensor<4x7xf32>) outs(%[[FIRST]] : tensor<4xf32>)
// CHECK:         return %[[SUM]]
func.func @prime(%x: tensor<4x1031xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x1031xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A Linear layer's bias gradient, a sum of dY over the 256 rows that its
// weight gradient contracts: left whole for the GEMM's epilogue (the GEMM
// records' path), split with split-bias-gradients (the BLAS path).
// CHECK-LABEL: func.func @bias_gradient
// CHECK:         linalg.contract
// KEPT-NOT:      tensor.expand_shape
// KEPT:          linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<256x64xf32>)
// SPLIT:         tensor.expand_shape %{{.*}} output_shape [16, 16, 64]
// SPLIT:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<16x16x64xf32>)
// SPLIT:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<16x64xf32>)
func.func @bias_gradient(%dy: tensor<256x64xf32>, %x: tensor<256x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> (tensor<64x32xf32>, tensor<64xf32>) {
  %dw = linalg.contract
      indexing_maps = [affine_map<(o, i, b) -> (b, o)>,
                       affine_map<(o, i, b) -> (b, i)>,
                       affine_map<(o, i, b) -> (o, i)>]
      ins(%dy, %x : tensor<256x64xf32>, tensor<256x32xf32>)
      outs(%w : tensor<64x32xf32>) -> tensor<64x32xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(b, o) -> (b, o)>, affine_map<(b, o) -> (o)>], iterator_types = ["reduction", "parallel"]} ins(%dy : tensor<256x64xf32>) outs(%b : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %dw, %db : tensor<64x32xf32>, tensor<64xf32>
}
