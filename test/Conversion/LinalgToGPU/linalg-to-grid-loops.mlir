// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{block-size=128}))' | FileCheck %s
// RUN: not amp-opt %s -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{block-size=2048}))' 2>&1 | FileCheck %s --check-prefix=RANGE

// A block size out of range: one error, before any function is rewritten.
// RANGE:     error: amp-linalg-to-grid-loops: block-size must be in [1, 1024], got 2048
// RANGE-NOT: error

// An elementwise op: its 2x300 points are one index space, tiled into
// ceil(600 / 128) = 5 blocks of 128 threads, each guarded.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG:     %[[C600:.*]] = arith.constant 600 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         scf.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[C600]]) step (%[[C128]])
// CHECK:           scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[C128]])
// CHECK:             %[[I:.*]] = arith.addi %[[THREAD]], %[[BLOCK]]
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[C600]]
// CHECK:             scf.if %[[IN]]
// CHECK:               math.exp
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     linalg.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%in: memref<2x300xf32>, %out: memref<2x300xf32>) {
  linalg.generic {indexing_maps = [#map, #map],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<2x300xf32>) outs(%out : memref<2x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A column sum: the parallel dimension is interchanged outermost, so its 8
// columns are 8 threads of one block (no guard: 8 divides 8), each summing
// its column in a loop.
// CHECK-LABEL: func.func @column_sum
// CHECK:         scf.parallel
// CHECK:           scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[C8:.*]]) step
// CHECK-NOT:         scf.if
// CHECK:               scf.for
// CHECK:                 arith.addf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%in: memref<100x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<100x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A full reduction and a named op: a grid of one block of one thread.
// CHECK-LABEL: func.func @full_reduction
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
// CHECK:           scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 arith.addf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @full_reduction(%in: memref<4x5xf32>, %out: memref<f32>) {
  linalg.reduce ins(%in : memref<4x5xf32>) outs(%out : memref<f32>)
      dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
