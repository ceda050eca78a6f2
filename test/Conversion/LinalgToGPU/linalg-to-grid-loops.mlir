// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{block-size=128}))' | FileCheck %s
// RUN: not amp-opt %s -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{block-size=2048}))' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{fuse=false}))' | FileCheck %s --check-prefix=FUSEOFF
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{fuse-independent=false}))' | FileCheck %s --check-prefix=INDEPOFF
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{max-parameter-bytes=200}))' | FileCheck %s --check-prefix=BUDGET
// RUN: not amp-opt %s -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{max-parameter-bytes=-1}))' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{row-lanes=1}))' | FileCheck %s --check-prefix=LANESOFF
// RUN: not amp-opt %s -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops{row-lanes=48}))' 2>&1 | FileCheck %s --check-prefix=LANES48

// A block size out of range, a negative parameter budget: one error,
// before any function is rewritten.
// NEGATIVE:     error: amp-linalg-to-grid-loops: max-parameter-bytes must not be negative, got -1
// NEGATIVE-NOT: error
// RANGE:     error: amp-linalg-to-grid-loops: block-size must be in [1, 1024], got 2048
// RANGE-NOT: error
// LANES48:     error: amp-linalg-to-grid-loops: row-lanes must be a power of two in [1, block-size], got 48
// LANES48-NOT: error

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
// its column in a loop that carries the sum in a register: the output is
// loaded once before the loop and stored once after it.
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME:    (%[[IN:.*]]: memref<100x8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:         scf.parallel
// CHECK:           scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[C8:.*]]) step
// CHECK-NOT:         scf.if
// CHECK:             %[[COL:.*]] = arith.addi %[[THREAD]]
// CHECK:             %[[INIT:.*]] = memref.load %[[OUT]][%[[COL]]]
// CHECK:             %[[SUM:.*]] = scf.for %[[ROW:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[IN]][%[[ROW]], %[[COL]]]
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addf %[[X]], %[[ACC]]
// CHECK-NEXT:          scf.yield %[[NEXT]]
// CHECK:             memref.store %[[SUM]], %[[OUT]][%[[COL]]]
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
// CHECK:             %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK:             %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[OUTER:.*]] = %[[INIT]])
// CHECK:               %[[ROW:.*]] = scf.for {{.*}} iter_args(%[[INNER:.*]] = %[[OUTER]])
// CHECK:                 arith.addf %{{.*}}, %[[INNER]]
// CHECK:               scf.yield %[[ROW]]
// CHECK:             memref.store %[[SUM]], %{{.*}}[] : memref<f32>
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

// -----

// An argmax over rows: two outputs carried together, and linalg.index
// read as the loop's induction variable.
// CHECK-LABEL: func.func @row_argmax
// CHECK:         %[[INITV:.*]] = memref.load %{{.*}} : memref<6xf32>
// CHECK:         %[[INITI:.*]] = memref.load %{{.*}} : memref<6xi64>
// CHECK:         %[[BEST:.*]]:2 = scf.for %[[J:.*]] = {{.*}} iter_args(%[[V:.*]] = %[[INITV]], %[[I:.*]] = %[[INITI]])
// CHECK:           arith.index_cast %[[J]] : index to i64
// CHECK-NOT:       linalg.index
// CHECK:           scf.yield
// CHECK:         memref.store %[[BEST]]#0
// CHECK:         memref.store %[[BEST]]#1
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_argmax(%in: memref<6x9xf32>, %value: memref<6xf32>,
                      %index: memref<6xi64>) {
  linalg.generic {indexing_maps = [#rows, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<6x9xf32>) outs(%value, %index : memref<6xf32>, memref<6xi64>) {
  ^bb0(%x: f32, %best: f32, %at: i64):
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %greater = arith.cmpf ogt, %x, %best : f32
    %v = arith.select %greater, %x, %best : f32
    %i = arith.select %greater, %j64, %at : i64
    linalg.yield %v, %i : f32, i64
  }
  return
}

// -----

// An input that reads the output's buffer sees the sum change during the
// loop: the output stays in memory, loaded and stored at each iteration.
// CHECK-LABEL: func.func @input_reads_the_output
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{[^ ]*}} {
// CHECK:           memref.load
// CHECK:           memref.load
// CHECK:           arith.addf
// CHECK:           memref.store
#whole = affine_map<(d0, d1) -> (d1)>
#each = affine_map<(d0, d1) -> (d0)>
func.func @input_reads_the_output(%acc: memref<16xf32>) {
  %view = memref.subview %acc[0] [16] [1] : memref<16xf32> to memref<16xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#whole, #each],
                  iterator_types = ["parallel", "reduction"]}
      ins(%view : memref<16xf32, strided<[1]>>) outs(%acc : memref<16xf32>) {
  ^bb0(%x: f32, %a: f32):
    %s = arith.addf %x, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A parallel loop without a mapping (amp-parallelize-loop-nests' scatter
// rows) is tiled like a linalg op's parallel dimensions: its 2x3 points
// are 6 threads of one block; its sequential loop stays in each thread.
// CHECK-LABEL: func.func @unmapped_parallel_loop
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C6:.*]]) step (%[[C6]])
// CHECK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C6]]) step
// CHECK:             scf.for
// CHECK:               memref.store
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @unmapped_parallel_loop(%idx: memref<2x3x5xindex>, %out: memref<2x3x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%n, %c) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    scf.for %o = %c0 to %c5 step %c1 {
      %i = memref.load %idx[%n, %c, %o] : memref<2x3x5xindex>
      memref.store %one, %out[%n, %c, %i] : memref<2x3x7xf32>
    }
  }
  return
}

// -----

// A column sum into a buffer zeroed just before: the sum starts from the
// zero in a register, and the zeroing (one more grid) goes. A zeroing that
// something reads before the sum stays, and the sum loads its output.
// CHECK-LABEL: func.func @sums_from_fills
// CHECK-SAME:    (%[[IN:.*]]: memref<100x8xf32>, %[[OUT:.*]]: memref<8xf32>, %[[KEPT:.*]]: memref<8xf32>, %[[COPY:.*]]: memref<8xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:     memref.store %[[ZERO]], %[[OUT]]
// CHECK:         scf.for %{{.*}} = {{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:         memref.store %{{.*}}, %[[OUT]]
// CHECK:         memref.store %[[ZERO]], %[[KEPT]]
// CHECK:         memref.load %[[KEPT]]
// CHECK:         memref.store %{{.*}}, %[[COPY]]
// CHECK:         %[[INIT:.*]] = memref.load %[[KEPT]]
// CHECK:         scf.for %{{.*}} = {{.*}} iter_args(%{{.*}} = %[[INIT]])
#sum_in = affine_map<(d0, d1) -> (d0, d1)>
#sum_out = affine_map<(d0, d1) -> (d1)>
#copy_map = affine_map<(d0) -> (d0)>
func.func @sums_from_fills(%in: memref<100x8xf32>, %out: memref<8xf32>,
                           %kept: memref<8xf32>, %copy: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<8xf32>)
  linalg.generic {indexing_maps = [#sum_in, #sum_out],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<100x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%kept : memref<8xf32>)
  linalg.generic {indexing_maps = [#copy_map, #copy_map],
                  iterator_types = ["parallel"]}
      ins(%kept : memref<8xf32>) outs(%copy : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#sum_in, #sum_out],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<100x8xf32>) outs(%kept : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// f16 elementwise with an even innermost loop: each thread takes two
// adjacent elements (2 x 150 pairs in ceil(300 / 128) = 3 blocks): the f16
// input and output as one 4-byte aligned vector<2xf16> access each, the f32
// input (broadcast along the rows) per element, the body once per element.
// CHECK-LABEL: func.func @half_pairs
// CHECK-SAME:    (%[[A:.*]]: memref<2x300xf16>, %[[B:.*]]: memref<300xf32>, %[[OUT:.*]]: memref<2x300xf16>)
// CHECK-DAG:     %[[C300:.*]] = arith.constant 300 : index
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C300]]) step
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               %[[PAIR:.*]] = vector.load %[[A]][%[[ROW:[0-9]+]], %[[COL:[0-9]+]]] {alignment = 4 : i64} : memref<2x300xf16>, vector<2xf16>
// CHECK-DAG:           %[[A0:.*]] = vector.extract %[[PAIR]][0]
// CHECK-DAG:           %[[A1:.*]] = vector.extract %[[PAIR]][1]
// CHECK-DAG:           %[[B0:.*]] = memref.load %[[B]][%[[COL]]]
// CHECK-DAG:           %[[B1:.*]] = memref.load %[[B]][%[[COL1:[0-9]+]]]
// CHECK-DAG:           %[[T0:.*]] = arith.truncf %[[B0]]
// CHECK-DAG:           %[[S0:.*]] = arith.addf %[[A0]], %[[T0]]
// CHECK-DAG:           %[[T1:.*]] = arith.truncf %[[B1]]
// CHECK-DAG:           %[[S1:.*]] = arith.addf %[[A1]], %[[T1]]
// CHECK:               %[[SUMS:.*]] = vector.from_elements %[[S0]], %[[S1]] : vector<2xf16>
// CHECK:               vector.store %[[SUMS]], %[[OUT]][%[[ROW]], %[[COL]]] {alignment = 4 : i64}
#pair = affine_map<(d0, d1) -> (d0, d1)>
#pair_row = affine_map<(d0, d1) -> (d1)>
func.func @half_pairs(%a: memref<2x300xf16>, %b: memref<300xf32>, %out: memref<2x300xf16>) {
  linalg.generic {indexing_maps = [#pair, #pair_row, #pair],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<2x300xf16>, memref<300xf32>) outs(%out : memref<2x300xf16>) {
  ^bb0(%x: f16, %y: f32, %z: f16):
    %t = arith.truncf %y : f32 to f16
    %s = arith.addf %x, %t : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// No pairs for an odd innermost loop. An input with an odd row stride
// (rows 2-byte aligned) is read per element; the output is still paired.
// CHECK-LABEL: func.func @no_half_pairs
// CHECK-NOT:     vector.
// CHECK:         memref.load %{{.*}} : memref<2x4xf16, strided<[5, 1]>>
// CHECK:         memref.load %{{.*}} : memref<2x4xf16, strided<[5, 1]>>
// CHECK-NOT:     vector.load
// CHECK:         vector.store {{.*}} : memref<2x4xf16>, vector<2xf16>
#pair2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @no_half_pairs(%a: memref<2x301xf16>, %out: memref<2x301xf16>, %b: memref<2x4xf16, strided<[5, 1]>>, %out2: memref<2x4xf16>) {
  linalg.generic {indexing_maps = [#pair2, #pair2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<2x301xf16>) outs(%out : memref<2x301xf16>) {
  ^bb0(%x: f16, %z: f16):
    %s = arith.addf %x, %x : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#pair2, #pair2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<2x4xf16, strided<[5, 1]>>) outs(%out2 : memref<2x4xf16>) {
  ^bb0(%x: f16, %z: f16):
    %s = arith.addf %x, %x : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// Pairs over a dynamic outer loop: the bounds come from the buffer's size.
// CHECK-LABEL: func.func @half_pairs_dynamic_rows
// CHECK:         %[[ROWS:.*]] = memref.dim
// CHECK:         %[[PAIRS:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[PAIRS]]) step
// CHECK:           vector.load {{.*}} : memref<?x300xf16>, vector<2xf16>
// CHECK:           vector.store {{.*}} : memref<?x300xf16>, vector<2xf16>
#pair3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @half_pairs_dynamic_rows(%a: memref<?x300xf16>, %out: memref<?x300xf16>) {
  linalg.generic {indexing_maps = [#pair3, #pair3],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x300xf16>) outs(%out : memref<?x300xf16>) {
  ^bb0(%x: f16, %z: f16):
    %s = arith.addf %x, %x : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// A row sum and the elementwise op on its result: the same 6 parallel
// points, the second reading what the first wrote at its own index. One
// grid: each thread sums its row, stores it, then divides it.
// CHECK-LABEL: func.func @fused_reduction_epilogue
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.for
// CHECK:               arith.addf
// CHECK:             memref.store %{{.*}}, %[[SUM:.*]][
// CHECK:             %[[S:.*]] = memref.load %[[SUM]][
// CHECK:             arith.divf %[[S]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     scf.parallel
#epi_in = affine_map<(d0, d1) -> (d0, d1)>
#epi_out = affine_map<(d0, d1) -> (d0)>
#epi_vec = affine_map<(d0) -> (d0)>
func.func @fused_reduction_epilogue(%in: memref<6x9xf32>, %out: memref<6xf32>) {
  %n = arith.constant 9.0 : f32
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<6xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<6xf32>)
  linalg.generic {indexing_maps = [#epi_in, #epi_out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<6x9xf32>) outs(%sum : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#epi_vec, #epi_vec],
                  iterator_types = ["parallel"]}
      ins(%sum : memref<6xf32>) outs(%out : memref<6xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Two sums over the same rows (LayerNorm's backward), into distinct
// buffers: one grid, each thread running both loops.
// CHECK-LABEL: func.func @fused_sibling_reductions
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.for
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NOT:     scf.parallel
#sib_in = affine_map<(d0, d1) -> (d0, d1)>
#sib_out = affine_map<(d0, d1) -> (d0)>
func.func @fused_sibling_reductions(%in: memref<6x9xf32>, %sum: memref<6xf32>,
                                    %squares: memref<6xf32>) {
  linalg.generic {indexing_maps = [#sib_in, #sib_out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<6x9xf32>) outs(%sum : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#sib_in, #sib_out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<6x9xf32>) outs(%squares : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The two ops reach the buffer through two equal collapses of it (what
// linalg-fold-unit-extent-dims makes for each op): the same memref, fused.
// CHECK-LABEL: func.func @fused_through_equal_views
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
#v_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fused_through_equal_views(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %tmp = memref.alloc() : memref<4x4x1xf32>
  %write = memref.collapse_shape %tmp [[0], [1, 2]] : memref<4x4x1xf32> into memref<4x4xf32>
  linalg.generic {indexing_maps = [#v_id, #v_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%write : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  %read = memref.collapse_shape %tmp [[0], [1, 2]] : memref<4x4x1xf32> into memref<4x4xf32>
  linalg.generic {indexing_maps = [#v_id, #v_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%read : memref<4x4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Softmax's division after the row sums: the sum's 4 threads each run their
// row's 8 divisions after the sum (4x8 points over 4 rows, as long as the
// sum's loop), reading the sum each just stored.
// CHECK-LABEL: func.func @fused_row_epilogue
// CHECK:         scf.parallel
// CHECK:           scf.parallel (%[[T:.*]]) =
// CHECK:             %[[ROW:.*]] = arith.addi %[[T]]
// CHECK:             %[[SUM:.*]] = scf.for
// CHECK:             memref.store %[[SUM]], %[[BUF:.*]][%[[ROW]]]
// CHECK:             scf.for %[[COL:.*]] =
// CHECK:               %[[S:.*]] = memref.load %[[BUF]][%[[ROW]]]
// CHECK:               arith.divf %{{.*}}, %[[S]]
// CHECK:               memref.store %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NOT:     scf.parallel
// FUSEOFF-LABEL: func.func @fused_row_epilogue
// FUSEOFF-COUNT-2: processor = block_x
#r_id = affine_map<(d0, d1) -> (d0, d1)>
#r_row = affine_map<(d0, d1) -> (d0)>
func.func @fused_row_epilogue(%in: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %sum = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#r_id, #r_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x8xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#r_id, #r_row, #r_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in, %sum : memref<4x8xf32>, memref<4xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %s: f32, %y: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The other way round: the exponentials over 4x8 points, then the row sums
// that read them. Each of the sum's 4 threads computes its row's 8
// exponentials first.
// CHECK-LABEL: func.func @fused_row_prologue
// CHECK:         scf.parallel
// CHECK:           scf.parallel (%[[T:.*]]) =
// CHECK:             %[[ROW:.*]] = arith.addi %[[T]]
// CHECK:             scf.for %[[COL:.*]] =
// CHECK:               math.exp
// CHECK:               memref.store %{{.*}}, %[[EXP:.*]][%[[ROW]], %[[COL]]]
// CHECK:             scf.for
// CHECK:               memref.load %[[EXP]][%[[ROW]],
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NOT:     scf.parallel
#p_id = affine_map<(d0, d1) -> (d0, d1)>
#p_row = affine_map<(d0, d1) -> (d0)>
func.func @fused_row_prologue(%in: memref<4x8xf32>, %sum: memref<4xf32>) {
  %exp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#p_id, #p_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x8xf32>) outs(%exp : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#p_id, #p_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%exp : memref<4x8xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// What stays two grids:
// - @transposed_read: the second op reads the first's result transposed,
//   an element that another thread writes;
// - @longer_rows: an op that reads a row's sum at each of 16 elements of
//   the row, after a sum over 8: it would more than double each thread's
//   sequential work;
// - @column_broadcast: an op reads a column's sum at every element of a
//   row: its first dimension is not the sum's;
// - @call_between: a call between the two may touch their buffers;
// - @fuse_off: fuse=false (FUSEOFF prefix) keeps one grid per op.
// CHECK-LABEL: func.func @transposed_read
// CHECK-COUNT-2: processor = block_x
// CHECK-LABEL: func.func @longer_rows
// CHECK-COUNT-2: processor = block_x
// CHECK-LABEL: func.func @column_broadcast
// CHECK-COUNT-2: processor = block_x
// CHECK-LABEL: func.func @call_between
// CHECK-COUNT-2: processor = block_x
// CHECK-LABEL: func.func @fuse_off
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
// FUSEOFF-LABEL: func.func @fuse_off
// FUSEOFF-COUNT-2: processor = block_x
#f_id = affine_map<(d0, d1) -> (d0, d1)>
#f_tr = affine_map<(d0, d1) -> (d1, d0)>
#f_row = affine_map<(d0, d1) -> (d0)>
#f_col = affine_map<(d0, d1) -> (d1)>
func.func @transposed_read(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %tmp = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#f_id, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%tmp : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#f_tr, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp : memref<4x4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
func.func @longer_rows(%in: memref<4x8xf32>, %wide: memref<4x16xf32>,
                       %out: memref<4x16xf32>) {
  %sum = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#f_id, #f_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x8xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#f_id, #f_row, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%wide, %sum : memref<4x16xf32>, memref<4xf32>) outs(%out : memref<4x16xf32>) {
  ^bb0(%x: f32, %s: f32, %y: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  }
  return
}
func.func @column_broadcast(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %sum = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#f_tr, #f_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x4xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#f_id, #f_col, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in, %sum : memref<4x4xf32>, memref<4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%x: f32, %s: f32, %y: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  }
  return
}
func.func private @touch(memref<4x4xf32>)
func.func @call_between(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %tmp = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#f_id, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%tmp : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  func.call @touch(%tmp) : (memref<4x4xf32>) -> ()
  linalg.generic {indexing_maps = [#f_id, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp : memref<4x4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}
func.func @fuse_off(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %tmp = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#f_id, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%tmp : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#f_id, #f_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp : memref<4x4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Three independent ops over 20, 1 and 7 points (an exponential, a full
// reduction, row sums), into distinct buffers: one grid of 96 threads, each
// op on its own 32 (a warp), picked by the point's segment, the padding
// guarded, the indices delinearized from the point's offset in the segment.
// With fuse-independent=false (INDEPOFF), three grids; with a budget of 200
// bytes of kernel parameters (the first two ops' descriptors take 192), two.
// CHECK-LABEL: func.func @fused_independent
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C96:.*]] = arith.constant 96 : index
// CHECK:         scf.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[C96]]) step (%[[C96]])
// CHECK:           scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[C96]])
// CHECK:             %[[POINT:.*]] = arith.addi %[[THREAD]], %[[BLOCK]]
// CHECK:             arith.cmpi uge, %[[POINT]], %[[C32]]
// CHECK:             arith.cmpi uge, %[[POINT]], %[[C64]]
// CHECK:             scf.index_switch
// CHECK:             case 0 {
// CHECK:               %[[IN20:.*]] = arith.cmpi ult, %[[POINT]], %{{.*}}
// CHECK:               scf.if %[[IN20]]
// CHECK:                 arith.remui %[[POINT]]
// CHECK:                 math.exp
// CHECK:             case 1 {
// CHECK:               arith.subi %[[POINT]], %[[C32]]
// CHECK:               scf.if
// CHECK:                 scf.for
// CHECK:                   scf.for
// CHECK:                 memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK:             default {
// CHECK:               arith.subi %[[POINT]], %[[C64]]
// CHECK:               scf.if
// CHECK:                 scf.for
// CHECK:                   arith.mulf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     scf.parallel
// INDEPOFF-LABEL: func.func @fused_independent
// INDEPOFF-COUNT-3: processor = block_x
// INDEPOFF-NOT:   scf.index_switch
// BUDGET-LABEL:  func.func @fused_independent
// BUDGET:        scf.index_switch
// BUDGET-COUNT-2: processor = block_x
// BUDGET-NOT:    processor = block_x
#i_2d = affine_map<(d0, d1) -> (d0, d1)>
#i_row = affine_map<(d0, d1) -> (d0)>
func.func @fused_independent(%a: memref<4x5xf32>, %exp: memref<4x5xf32>,
                             %b: memref<2x3xf32>, %sum: memref<f32>,
                             %c: memref<7x3xf32>, %rows: memref<7xf32>) {
  linalg.generic {indexing_maps = [#i_2d, #i_2d],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x5xf32>) outs(%exp : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.reduce ins(%b : memref<2x3xf32>) outs(%sum : memref<f32>)
      dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  linalg.generic {indexing_maps = [#i_2d, #i_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<7x3xf32>) outs(%rows : memref<7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two independent ops with a dependent one between them: the second reads
// what the first wrote, so the first two stay apart; the third, independent
// of both, moves up into the first's grid.
// CHECK-LABEL: func.func @independent_after_dependent
// BUDGET-LABEL: func.func @independent_after_dependent
// CHECK:         scf.index_switch
// CHECK:           arith.negf
// CHECK:           arith.negf
// CHECK:         processor = block_x
// CHECK:         memref.load %arg1
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
func.func @independent_after_dependent(%a: memref<8xf32>, %b: memref<8xf32>,
                                       %c: memref<8xf32>, %d: memref<5xf32>,
                                       %e: memref<5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (7 - d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%d : memref<5xf32>) outs(%e : memref<5xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Writes into the two slices of a concatenation (columns 0-3 and 4-11 of
// one buffer) are independent: one grid. Slices that share column 3 are
// not: two.
// CHECK-LABEL: func.func @disjoint_slices
// CHECK:         scf.index_switch
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
// CHECK-LABEL: func.func @overlapping_slices
// CHECK-NOT:     scf.index_switch
// CHECK-COUNT-2: processor = block_x
#s_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @disjoint_slices(%a: memref<4x4xf32>, %b: memref<4x8xf32>) {
  %buf = memref.alloc() : memref<4x12xf32>
  %left = memref.subview %buf[0, 0] [4, 4] [1, 1] : memref<4x12xf32> to memref<4x4xf32, strided<[12, 1]>>
  %right = memref.subview %buf[0, 4] [4, 8] [1, 1] : memref<4x12xf32> to memref<4x8xf32, strided<[12, 1], offset: 4>>
  linalg.generic {indexing_maps = [#s_id, #s_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%left : memref<4x4xf32, strided<[12, 1]>>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#s_id, #s_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4x8xf32>) outs(%right : memref<4x8xf32, strided<[12, 1], offset: 4>>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}
func.func @overlapping_slices(%a: memref<4x4xf32>, %b: memref<4x8xf32>) {
  %buf = memref.alloc() : memref<4x12xf32>
  %left = memref.subview %buf[0, 0] [4, 4] [1, 1] : memref<4x12xf32> to memref<4x4xf32, strided<[12, 1]>>
  %right = memref.subview %buf[0, 3] [4, 8] [1, 1] : memref<4x12xf32> to memref<4x8xf32, strided<[12, 1], offset: 3>>
  linalg.generic {indexing_maps = [#s_id, #s_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%left : memref<4x4xf32, strided<[12, 1]>>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#s_id, #s_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4x8xf32>) outs(%right : memref<4x8xf32, strided<[12, 1], offset: 3>>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Two independent full reductions (one thread each) run in two warps of
// one grid, not one after the other in one thread; a full reduction that
// reads another's result runs after it in its thread.
// CHECK-LABEL: func.func @independent_full_reductions
// CHECK:         scf.index_switch
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
// CHECK-LABEL: func.func @dependent_full_reductions
// CHECK-NOT:     scf.index_switch
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
func.func @independent_full_reductions(%a: memref<64xf32>, %b: memref<32xf32>,
                                       %sa: memref<f32>, %sb: memref<f32>) {
  linalg.reduce ins(%a : memref<64xf32>) outs(%sa : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%b : memref<32xf32>) outs(%sb : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
func.func @dependent_full_reductions(%a: memref<64xf32>, %sa: memref<f32>,
                                     %out: memref<f32>) {
  linalg.reduce ins(%a : memref<64xf32>) outs(%sa : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%sa : memref<f32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// FP8's end of step for two scaling states: each state's amax goes into its
// history (one-point loops from amp-host-data-to-kernels), then the history
// moves on by one (16 points). The first history is independent of the
// second store, so it moves down to the second history and runs in its 16
// points; the second store, independent of the first history, moves up
// into the first store's grid: two grids, not four (A1 B1 | A2 B2).
// CHECK-LABEL: func.func @hoisted_past_independent
// CHECK:         scf.index_switch
// CHECK:           memref.store %{{.*}}, %arg1[%{{.*}}]
// CHECK:           memref.store %{{.*}}, %arg4[%{{.*}}]
// CHECK:         processor = block_x
// CHECK-NOT:     scf.index_switch
// CHECK:           memref.store %{{.*}}, %arg2[%{{.*}}]
// CHECK:           memref.store %{{.*}}, %arg5[%{{.*}}]
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
// INDEPOFF-LABEL: func.func @hoisted_past_independent
// INDEPOFF-COUNT-4: processor = block_x
#hist_next = affine_map<(d0) -> ((d0 + 15) mod 16)>
#hist_id = affine_map<(d0) -> (d0)>
func.func @hoisted_past_independent(%amax1: memref<f32>, %history1: memref<16xf32>,
                                    %next1: memref<16xf32>, %amax2: memref<f32>,
                                    %history2: memref<16xf32>, %next2: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %a = memref.load %amax1[] : memref<f32>
    memref.store %a, %history1[%c0] : memref<16xf32>
  }
  linalg.generic {indexing_maps = [#hist_next, #hist_id], iterator_types = ["parallel"]}
      ins(%history1 : memref<16xf32>) outs(%next1 : memref<16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %a = memref.load %amax2[] : memref<f32>
    memref.store %a, %history2[%c0] : memref<16xf32>
  }
  linalg.generic {indexing_maps = [#hist_next, #hist_id], iterator_types = ["parallel"]}
      ins(%history2 : memref<16xf32>) outs(%next2 : memref<16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// An op moves up past a GEMM (a library call) that touches none of its
// buffers, into the first grid; an op that reads the GEMM's result does
// not. An op that writes a buffer of the step's (@temporary_joins_nearest:
// %t, with the op that reads it, fused first) joins the nearest grid it
// can, with the buffer's allocation, so that the buffer does not live
// longer.
// CHECK-LABEL: func.func @hoisted_past_call
// CHECK:         scf.index_switch
// CHECK:           math.exp
// CHECK:           arith.negf
// CHECK:         processor = block_x
// CHECK:         call @amp_gemm_f32_f32_f32
// CHECK:         math.sqrt
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
// CHECK-LABEL: func.func @temporary_joins_nearest
// CHECK:         math.exp
// CHECK:         processor = block_x
// CHECK:         call @amp_gemm_f32_f32_f32
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         scf.index_switch
// CHECK:           math.sqrt
// CHECK:           arith.negf
// CHECK:           math.absf
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
#h_id = affine_map<(d0) -> (d0)>
func.func private @amp_gemm_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func @hoisted_past_call(%record: memref<*xi64>, %a: memref<*xf32>, %b: memref<*xf32>,
                             %c: memref<8xf32>, %x: memref<8xf32>, %y: memref<8xf32>,
                             %z: memref<8xf32>, %w: memref<4xf32>, %v: memref<4xf32>) {
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %cc = memref.cast %c : memref<8xf32> to memref<*xf32>
  func.call @amp_gemm_f32_f32_f32(%record, %a, %b, %cc) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%c : memref<8xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sqrt %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%w : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}
func.func @temporary_joins_nearest(%record: memref<*xi64>, %a: memref<*xf32>, %b: memref<*xf32>,
                                   %c: memref<8xf32>, %x: memref<8xf32>, %y: memref<8xf32>,
                                   %z: memref<8xf32>, %w: memref<4xf32>, %v: memref<4xf32>) {
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %cc = memref.cast %c : memref<8xf32> to memref<*xf32>
  func.call @amp_gemm_f32_f32_f32(%record, %a, %b, %cc) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%c : memref<8xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sqrt %in : f32
    linalg.yield %r : f32
  }
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%w : memref<4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#h_id, #h_id], iterator_types = ["parallel"]}
      ins(%t : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = math.absf %in : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// The third op, independent of the first, would move up into its grid, but
// it writes what the second reads: it stays after the second. Three grids.
// CHECK-LABEL: func.func @not_hoisted_past_reader
// CHECK-NOT:     scf.index_switch
// CHECK-COUNT-3: processor = block_x
// CHECK-NOT:     processor = block_x
#n_id = affine_map<(d0) -> (d0)>
func.func @not_hoisted_past_reader(%a: memref<8xf32>, %b: memref<8xf32>,
                                   %e: memref<4xf32>, %f: memref<4xf32>,
                                   %g: memref<2xf32>) {
  linalg.generic {indexing_maps = [#n_id, #n_id], iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %b4 = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#n_id, #n_id, #n_id], iterator_types = ["parallel"]}
      ins(%b4, %e : memref<4xf32, strided<[1]>>, memref<4xf32>) outs(%f : memref<4xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  }
  %e2 = memref.subview %e[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#n_id, #n_id], iterator_types = ["parallel"]}
      ins(%g : memref<2xf32>) outs(%e2 : memref<2xf32, strided<[1]>>) {
  ^bb0(%in: f32, %out: f32):
    %n = math.absf %in : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A reduction whose body loads from a buffer defined above (NLL's gather of
// each row's log-probability at its target) depends on the op that writes
// that buffer, though no operand says so: two grids, not one whose warps
// would race.
// CHECK-LABEL: func.func @gather_from_written
// CHECK-NOT:     scf.index_switch
// CHECK-COUNT-2: processor = block_x
// CHECK-NOT:     processor = block_x
#g_rows = affine_map<(d0, d1) -> (d0, d1)>
#g_row = affine_map<(d0) -> (d0)>
#g_all = affine_map<(d0) -> ()>
func.func @gather_from_written(%x: memref<8x10xf32>, %t: memref<8xindex>,
                               %logp: memref<8x10xf32>, %loss: memref<f32>) {
  linalg.generic {indexing_maps = [#g_rows, #g_rows],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x10xf32>) outs(%logp : memref<8x10xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#g_row, #g_all],
                  iterator_types = ["reduction"]}
      ins(%t : memref<8xindex>) outs(%loss : memref<f32>) {
  ^bb0(%target: index, %acc: f32):
    %i = linalg.index 0 : index
    %p = memref.load %logp[%i, %target] : memref<8x10xf32>
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction whose body reads its own output through a memref from above
// loads and stores the output at each iteration, not in a register.
// CHECK-LABEL: func.func @reads_own_output
// CHECK-NOT:     iter_args
// CHECK:         memref.load %[[OUT:.*]][%{{.*}}] : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<4xf32>
func.func @reads_own_output(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %first = memref.load %out[%c0] : memref<4xf32>
    %m = arith.mulf %a, %first : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows of 64 elements, at least row-lanes (32) long: 32 lanes share each
// row, 128 / 32 = 4 rows per block, so 6 rows take two blocks (guarded).
// The block allocates a scratch buffer of one partial sum per thread and
// runs three phases: each lane sums every 32nd element of its row from the
// neutral 0 into its scratch slot; the row's first lane combines the 32
// partial sums from the fill's 0 and stores the sum and the mean (the op
// over the same rows); each lane then subtracts the mean from every 32nd
// element. With row-lanes=1 (LANESOFF) one thread runs each row.
// CHECK-LABEL: func.func @row_lanes
// CHECK-SAME:    (%[[IN:.*]]: memref<6x64xf32>, %[[SUM:.*]]: memref<6xf32>, %[[MEAN:.*]]: memref<6xf32>, %[[OUT:.*]]: memref<6x64xf32>)
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[C6]]) step (%[[C4]])
// CHECK-NEXT:      %[[SCRATCH:.*]] = memref.alloc() : memref<128xf32>
// CHECK-NEXT:      scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C128]])
// CHECK-NEXT:        %[[R:.*]] = arith.divui %[[T]], %[[C32]]
// CHECK-NEXT:        %[[LANE:.*]] = arith.remui %[[T]], %[[C32]]
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %[[BLOCK]], %[[R]]
// CHECK-NEXT:        %[[INSIDE:.*]] = arith.cmpi ult, %[[ROW]], %[[C6]]
// CHECK-NEXT:        scf.if %[[INSIDE]]
// CHECK-NEXT:          %[[PART:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %{{.*}} step %[[C32]] iter_args(%{{.*}} = %[[ZERO]])
// CHECK-NEXT:            memref.load %[[IN]][%[[ROW]], %[[K]]]
// CHECK:               memref.store %[[PART]], %[[SCRATCH]][%[[T]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NEXT:      scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C128]])
// CHECK:             %[[START:.*]] = arith.muli %{{.*}}, %[[C32]]
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        scf.if %[[FIRST]]
// CHECK-NEXT:          %[[TOTAL:.*]] = scf.for %[[L:.*]] = %{{.*}} to %[[C32]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK-NEXT:            %[[AT:.*]] = arith.addi %[[START]], %[[L]]
// CHECK-NEXT:            %[[P:.*]] = memref.load %[[SCRATCH]][%[[AT]]]
// CHECK-NEXT:            arith.addf %[[P]], %[[ACC]]
// CHECK:               memref.store %[[TOTAL]], %[[SUM]]
// CHECK:               arith.divf
// CHECK:               memref.store %{{.*}}, %[[MEAN]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NEXT:      scf.parallel
// CHECK:               scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32]] {
// CHECK:                 arith.subf
// CHECK:                 memref.store %{{.*}}, %[[OUT]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NEXT:      memref.dealloc %[[SCRATCH]]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// LANESOFF-LABEL: func.func @row_lanes
// LANESOFF-NOT:     memref.alloc
// LANESOFF-COUNT-1: processor = thread_x
// LANESOFF-NOT:     processor = thread_x
// LANESOFF:         return
#lanes_all = affine_map<(d0, d1) -> (d0, d1)>
#lanes_row = affine_map<(d0, d1) -> (d0)>
#lanes_vec = affine_map<(d0) -> (d0)>
func.func @row_lanes(%in: memref<6x64xf32>, %sum: memref<6xf32>,
                     %mean: memref<6xf32>, %out: memref<6x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<6xf32>)
  linalg.generic {indexing_maps = [#lanes_all, #lanes_row], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<6x64xf32>) outs(%sum : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lanes_vec, #lanes_vec], iterator_types = ["parallel"]}
      ins(%sum : memref<6xf32>) outs(%mean : memref<6xf32>) {
  ^bb0(%s: f32, %m: f32):
    %d = arith.divf %s, %n : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#lanes_all, #lanes_row, #lanes_all], iterator_types = ["parallel", "parallel"]}
      ins(%in, %mean : memref<6x64xf32>, memref<6xf32>) outs(%out : memref<6x64xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Rows that lanes would read across: a sum over the 64 rows of each of 8
// columns keeps one thread per column (neighbouring threads read
// neighbouring columns). A row whose reduction combines with a select (an
// argmax's value and index) keeps one thread per row too. Without lanes,
// the two independent grids join one (fuse-independent).
// CHECK-LABEL: func.func @no_row_lanes
// CHECK-NOT:     memref.alloc
// CHECK:         scf.index_switch
#across_in = affine_map<(d0, d1) -> (d0, d1)>
#across_col = affine_map<(d0, d1) -> (d1)>
#across_row = affine_map<(d0, d1) -> (d0)>
func.func @no_row_lanes(%in: memref<64x8xf32>, %sums: memref<8xf32>,
                        %x: memref<6x64xf32>, %value: memref<6xf32>,
                        %index: memref<6xindex>) {
  linalg.generic {indexing_maps = [#across_in, #across_col], iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<64x8xf32>) outs(%sums : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#across_in, #across_row, #across_row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x64xf32>) outs(%value, %index : memref<6xf32>, memref<6xindex>) {
  ^bb0(%a: f32, %best: f32, %at: index):
    %i = linalg.index 1 : index
    %greater = arith.cmpf ogt, %a, %best : f32
    %v = arith.select %greater, %a, %best : f32
    %j = arith.select %greater, %i, %at : index
    linalg.yield %v, %j : f32, index
  }
  return
}

// -----

// Steps stacked into one buffer (an unrolled LSTM's outputs): ops over the
// same points run as one grid, unless its parameters would pass
// max-parameter-bytes: with 200 bytes, each 3-D memref 72, two copies do
// not fit.
// CHECK-LABEL: func.func @stacked_steps
// CHECK-COUNT-1: processor = block_x
// CHECK-NOT:     processor = block_x
// BUDGET-LABEL: func.func @stacked_steps
// BUDGET-COUNT-3: processor = block_x
// BUDGET-NOT:    processor = block_x
#st_id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @stacked_steps(%a: memref<1x4x4xf32>, %b: memref<1x4x4xf32>, %c: memref<1x4x4xf32>) {
  %buf = memref.alloc() : memref<3x4x4xf32>
  %s0 = memref.subview %buf[0, 0, 0] [1, 4, 4] [1, 1, 1] : memref<3x4x4xf32> to memref<1x4x4xf32, strided<[16, 4, 1]>>
  %s1 = memref.subview %buf[1, 0, 0] [1, 4, 4] [1, 1, 1] : memref<3x4x4xf32> to memref<1x4x4xf32, strided<[16, 4, 1], offset: 16>>
  %s2 = memref.subview %buf[2, 0, 0] [1, 4, 4] [1, 1, 1] : memref<3x4x4xf32> to memref<1x4x4xf32, strided<[16, 4, 1], offset: 32>>
  linalg.generic {indexing_maps = [#st_id, #st_id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<1x4x4xf32>) outs(%s0 : memref<1x4x4xf32, strided<[16, 4, 1]>>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#st_id, #st_id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : memref<1x4x4xf32>) outs(%s1 : memref<1x4x4xf32, strided<[16, 4, 1], offset: 16>>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#st_id, #st_id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<1x4x4xf32>) outs(%s2 : memref<1x4x4xf32, strided<[16, 4, 1], offset: 32>>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A BatchNorm's centering (%centered), its running mean's update (8
// points, independent of the centering) and its normalization of the
// centered values: the centering moves down past the update into the
// normalization's grid (then the update joins that grid as an independent
// case): one grid. In @sink_blocked the op between reads the centered
// values, so the centering stays a grid of its own, before it.
// CHECK-LABEL: func.func @sink_past_independent
// CHECK:         scf.index_switch
// CHECK:           memref.store %{{.*}}, %arg4[
// CHECK:           arith.subf
// CHECK-NEXT:      memref.store %{{.*}}, %arg5[
// CHECK:           arith.mulf
// CHECK-NEXT:      memref.store %{{.*}}, %arg6[
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
// CHECK-LABEL: func.func @sink_blocked
// CHECK:           arith.subf
// CHECK-NEXT:      memref.store %{{.*}}, %arg4[
// CHECK-NOT:       arith.mulf
// CHECK:         processor = block_x
// CHECK:           arith.mulf
// CHECK:         processor = block_x
// CHECK-NOT:     processor = block_x
// BUDGET-LABEL: func.func @sink_past_independent
// INDEPOFF-LABEL: func.func @sink_past_independent
// LANESOFF-LABEL: func.func @sink_past_independent
// FUSEOFF-LABEL: func.func @sink_past_independent
// FUSEOFF-COUNT-3: processor = block_x
#bn_x = affine_map<(d0, d1) -> (d0, d1)>
#bn_c = affine_map<(d0, d1) -> (d1)>
#bn_1 = affine_map<(d0) -> (d0)>
func.func @sink_past_independent(%x: memref<4x8xf32>, %mean: memref<8xf32>,
                                 %running: memref<8xf32>, %scale: memref<8xf32>,
                                 %newRunning: memref<8xf32>,
                                 %centered: memref<4x8xf32>,
                                 %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#bn_x, #bn_c, #bn_x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<4x8xf32>, memref<8xf32>) outs(%centered : memref<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#bn_1, #bn_1, #bn_1], iterator_types = ["parallel"]}
      ins(%mean, %running : memref<8xf32>, memref<8xf32>) outs(%newRunning : memref<8xf32>) {
  ^bb0(%m: f32, %r: f32, %o: f32):
    %s = arith.addf %m, %r : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#bn_x, #bn_c, #bn_x], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %scale : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%c: f32, %s: f32, %o: f32):
    %p = arith.mulf %c, %s : f32
    linalg.yield %p : f32
  }
  return
}
func.func @sink_blocked(%x: memref<4x8xf32>, %mean: memref<8xf32>,
                        %scale: memref<8xf32>, %first: memref<8xf32>,
                        %centered: memref<4x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#bn_x, #bn_c, #bn_x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<4x8xf32>, memref<8xf32>) outs(%centered : memref<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  }
  %row = memref.subview %centered[0, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#bn_1, #bn_1], iterator_types = ["parallel"]}
      ins(%row : memref<8xf32, strided<[1]>>) outs(%first : memref<8xf32>) {
  ^bb0(%c: f32, %o: f32):
    linalg.yield %c : f32
  }
  linalg.generic {indexing_maps = [#bn_x, #bn_c, #bn_x], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %scale : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%c: f32, %s: f32, %o: f32):
    %p = arith.mulf %c, %s : f32
    linalg.yield %p : f32
  }
  return
}
