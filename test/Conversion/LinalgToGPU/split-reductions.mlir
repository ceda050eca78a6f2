// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-split-reductions))' | FileCheck %s

// Dynamic loss scaling's all-finite check over a 768x3072 gradient: the
// two reduction loops collapse into one, split 16384 ways (neighbouring
// threads read neighbouring elements, 144 each), the partials 128 ways,
// then the last 128 combined: 144 + 128 + 128 sequential iterations where
// one thread took 2359296 (1024 ways took 2304 + 1024).
// CHECK-LABEL: func.func @all_finite
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<768x3072xf32> into tensor<2359296xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [144, 16384]
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[TRUE]] : i1) outs(%{{.*}} : tensor<16384xi1>)
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} outs(%[[INIT]] : tensor<16384xi1>)
// CHECK:         tensor.expand_shape %[[PARTIAL]] {{\[\[}}0, 1]] output_shape [128, 128]
// CHECK:         %[[PARTIAL2:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<128xi1>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PARTIAL2]] : tensor<128xi1>)
func.func @all_finite(%g: tensor<768x3072xf32>, %init: tensor<i1>) -> tensor<i1> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%g : tensor<768x3072xf32>) outs(%init : tensor<i1>) {
  ^bb0(%x: f32, %acc: i1):
    %a = math.absf %x : f32
    %inf = arith.constant 0x7F800000 : f32
    %finite = arith.cmpf olt, %a, %inf : f32
    %and = arith.andi %acc, %finite : i1
    linalg.yield %and : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}

// -----

// A per-channel sum over a large batch (BatchNorm's): 64 outputs, so each
// gets 256 partial sums (64 * 256 = threads).
// CHECK-LABEL: func.func @per_channel
// CHECK:         tensor.expand_shape %{{.*}} output_shape [64, 784, 256]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @per_channel(%x: tensor<64x200704xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x200704xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// BatchNorm's sum over an NCHW batch: the batch and spatial loops do not
// collapse across the channels, so the spatial ones (the larger group,
// 224*224) are reduced first, with the batch loop parallel (8x64 partials
// from the neutral element), and those split 32 ways (8 * 64 * 32 =
// threads); then the 8 partials per channel are summed into the output.
// CHECK-LABEL: func.func @nchw_channel_sum
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64x224x224xf32>, %[[INIT:.*]]: tensor<64xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<64x8xf32>)
// CHECK:         tensor.collapse_shape %[[X]] {{\[\[}}0], [1], [2, 3]] : tensor<8x64x224x224xf32> into tensor<8x64x50176xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [8, 64, 1568, 32]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%[[PINIT]] : tensor<64x8xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<64x8xf32>) outs(%[[INIT]] : tensor<64xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[SUM]]
func.func @nchw_channel_sum(%x: tensor<8x64x224x224xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<8x64x224x224xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// Not split: enough outputs already, a reduction below 2048 elements, and
// maps that are not projected permutations (splitting made GPT-2's
// invalid).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @kept(%many: tensor<8192x64xf32>, %small: tensor<1024xf32>, %column: tensor<65536x4xf32>, %o1: tensor<8192xf32>, %o2: tensor<f32>) -> (tensor<8192xf32>, tensor<f32>, tensor<f32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%many : tensor<8192x64xf32>) outs(%o1 : tensor<8192xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%small : tensor<1024xf32>) outs(%o2 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%column : tensor<65536x4xf32>) outs(%o2 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %a, %b, %d : tensor<8192xf32>, tensor<f32>, tensor<f32>
}

// -----

// A contraction stays whole, whatever its K: it becomes a GEMM record.
// CHECK-LABEL: func.func @contraction_kept
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.contract
// CHECK-NOT:     linalg.generic
func.func @contraction_kept(%a: tensor<27x401408xf32>, %b: tensor<401408x64xf32>, %c: tensor<27x64xf32>) -> tensor<27x64xf32> {
  %r = linalg.contract
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<27x401408xf32>, tensor<401408x64xf32>)
      outs(%c : tensor<27x64xf32>) -> tensor<27x64xf32>
  return %r : tensor<27x64xf32>
}

// -----

// So does a Linear layer's bias gradient, the sum of dY over the batch that
// its weight gradient contracts (the GEMM's BGRADB epilogue); the same sum
// next to a contraction over the other dimension is split.
// CHECK-LABEL: func.func @bias_gradient_kept
// CHECK:         linalg.contract
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.*}} : tensor<8192x64xf32>)
// CHECK:         linalg.contract
// CHECK:         tensor.expand_shape
// CHECK:         return
func.func @bias_gradient_kept(%dy: tensor<8192x64xf32>, %x: tensor<8192x32xf32>, %w: tensor<64x32xf32>, %dy2: tensor<8192x64xf32>, %w2: tensor<64x32xf32>, %b: tensor<64xf32>, %dx: tensor<8192x32xf32>) -> (tensor<64x32xf32>, tensor<64xf32>, tensor<8192x32xf32>, tensor<64xf32>) {
  %dw = linalg.contract
      indexing_maps = [affine_map<(o, i, b) -> (b, o)>,
                       affine_map<(o, i, b) -> (b, i)>,
                       affine_map<(o, i, b) -> (o, i)>]
      ins(%dy, %x : tensor<8192x64xf32>, tensor<8192x32xf32>)
      outs(%w : tensor<64x32xf32>) -> tensor<64x32xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(b, o) -> (b, o)>, affine_map<(b, o) -> (o)>], iterator_types = ["reduction", "parallel"]} ins(%dy : tensor<8192x64xf32>) outs(%b : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %dx2 = linalg.contract
      indexing_maps = [affine_map<(b, i, o) -> (b, o)>,
                       affine_map<(b, i, o) -> (o, i)>,
                       affine_map<(b, i, o) -> (b, i)>]
      ins(%dy2, %w2 : tensor<8192x64xf32>, tensor<64x32xf32>)
      outs(%dx : tensor<8192x32xf32>) -> tensor<8192x32xf32>
  %db2 = linalg.generic {indexing_maps = [affine_map<(b, o) -> (b, o)>, affine_map<(b, o) -> (o)>], iterator_types = ["reduction", "parallel"]} ins(%dy2 : tensor<8192x64xf32>) outs(%b : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %dw, %db, %dx2, %db2 : tensor<64x32xf32>, tensor<64xf32>, tensor<8192x32xf32>, tensor<64xf32>
}

// -----

// A softmax's sum of exponentials over a 50257-word vocabulary (29 * 1733),
// reading each row's max from a [rows, 1] tensor at column 0: that unit
// dimension is dropped first (splitReduction cannot invert a constant
// index), then the sum is split 1733 ways (29 terms each; 29 ways, 1733
// terms each, is as long a chain with fewer threads).
// CHECK-LABEL: func.func @softmax_denominator
// CHECK:         %[[MAX:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [4, 29, 1733]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%{{.*}}, %[[MAX]] : tensor<4x29x1733xf32>, tensor<4xf32>)
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @softmax_denominator(%x: tensor<4x50257xf32>, %max: tensor<4x1xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %max : tensor<4x50257xf32>, tensor<4x1xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// FP8's amax of a tensor read transposed, to a 0-d scale: the two
// reduction loops do not collapse, so the larger group is reduced first
// (768 partials, split 16 ways), then the partials into the 0-d output,
// whose map has no results (it crashed: a null map): split again, 32 ways.
// CHECK-LABEL: func.func @transposed_amax
// CHECK-SAME:    (%[[X:.*]]: tensor<3072x768xf32>, %[[INIT:.*]]: tensor<f32>)
// CHECK:         %[[PINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<768xf32>)
// CHECK:         tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [192, 16, 768]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:           math.absf
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[PINIT]] : tensor<768xf32>)
// CHECK:         tensor.expand_shape %[[PARTIAL]] {{\[\[}}0, 1]] output_shape [24, 32]
// CHECK:         %[[PARTIAL2:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<32xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR:.*]]], iterator_types = ["reduction"]} ins(%[[PARTIAL2]] : tensor<32xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK:           arith.maximumf
// CHECK:         return %[[MAX]]
func.func @transposed_amax(%x: tensor<3072x768xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<3072x768xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A reduction that reads its own loop indices (a gather fused into a sum,
// NLL's weighted loss): after loop 1 is split into loops 1 (288 reduced)
// and 2 (8192 parallel), the old index 1 is 8192 * index 1 + index 2.
// CHECK-LABEL: func.func @indexed_sum
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:           %[[OUTER:.*]] = linalg.index 1 : index
// CHECK:           %[[INNER:.*]] = linalg.index 2 : index
// CHECK:           %[[RATIO:.*]] = arith.constant 8192 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[OUTER]], %[[RATIO]] : index
// CHECK:           %[[OLD:.*]] = arith.addi %[[SCALED]], %[[INNER]] : index
// CHECK:           arith.index_cast %[[OLD]] : index to i64
func.func @indexed_sum(%x: tensor<2x2359296xf32>, %init: tensor<2xi64>) -> tensor<2xi64> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x2359296xf32>) outs(%init : tensor<2xi64>) {
  ^bb0(%in: f32, %acc: i64):
    %k = linalg.index 1 : index
    %i = arith.index_cast %k : index to i64
    %s = arith.addi %i, %acc : i64
    linalg.yield %s : i64
  } -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// A size with a large prime factor (65521 is prime) has no divisor to
// split by: its first 65408 elements are split 128 ways, and the last 113
// reduced after the partials, from their result; an index of the split
// loop in the tail counts from 65408.
// CHECK-LABEL: func.func @prime_tail
// CHECK-SAME:    (%[[X:.*]]: tensor<2x65521xf32>, %[[INIT:.*]]: tensor<2xi64>)
// CHECK:         %[[HEAD:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 65408] [1, 1]
// CHECK:         tensor.expand_shape %[[HEAD]] {{\[\[}}0], [1, 2]] output_shape [2, 511, 128]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x128xi64>) outs(%[[INIT]] : tensor<2xi64>)
// CHECK:         %[[TAIL:.*]] = tensor.extract_slice %[[X]][0, 65408] [2, 113] [1, 1]
// CHECK:         %[[ALL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[TAIL]] : tensor<2x113xf32>) outs(%[[FIRST]] : tensor<2xi64>)
// CHECK:           %[[INDEX:.*]] = linalg.index 1 : index
// CHECK:           %[[OFFSET:.*]] = arith.constant 65408 : index
// CHECK:           arith.addi %[[INDEX]], %[[OFFSET]] : index
// CHECK:         return %[[ALL]]
func.func @prime_tail(%x: tensor<2x65521xf32>, %init: tensor<2xi64>) -> tensor<2xi64> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x65521xf32>) outs(%init : tensor<2xi64>) {
  ^bb0(%in: f32, %acc: i64):
    %k = linalg.index 1 : index
    %i = arith.index_cast %k : index to i64
    %s = arith.addi %i, %acc : i64
    linalg.yield %s : i64
  } -> tensor<2xi64>
  return %r : tensor<2xi64>
}
