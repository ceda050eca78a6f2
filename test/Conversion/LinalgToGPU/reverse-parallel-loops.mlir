// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-reverse-parallel-loops))' | FileCheck %s

// A grid: the body of each loop sees its induction variable mirrored,
// `lb + last - iv` (here 0 + 3 - iv and 0 + 255 - iv), so that a sequential
// run visits block 3, thread 255 first. Everything else stays.
// CHECK-LABEL: func.func @grid
// CHECK:         %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    scf.parallel (%[[B:.*]]) = {{.*}} {
// CHECK-NEXT:      %[[RB:.*]] = arith.subi %[[C3]], %[[B]] : index
// CHECK-NEXT:      %[[C255:.*]] = arith.constant 255 : index
// CHECK-NEXT:      scf.parallel (%[[T:.*]]) = {{.*}} {
// CHECK-NEXT:        %[[RT:.*]] = arith.subi %[[C255]], %[[T]] : index
// CHECK-NEXT:        %[[I:.*]] = affine.apply #{{.*}}(%[[RB]], %[[RT]])
// CHECK:             memref.load %{{.*}}[%[[I]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @grid(%in: memref<1000xf32>, %out: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1000 = arith.constant 1000 : index
  scf.parallel (%b) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      %i = affine.apply affine_map<(d0, d1) -> (d0 * 256 + d1)>(%b, %t)
      %inside = arith.cmpi ult, %i, %c1000 : index
      scf.if %inside {
        %x = memref.load %in[%i] : memref<1000xf32>
        memref.store %x, %out[%i] : memref<1000xf32>
      }
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Lower bounds and steps other than 0 and 1, in two dimensions: from 1 to
// 10 by 3 the values are 1, 4, 7, so the body sees 1 + 7 - j; from 2 to 6
// by 2 (2, 4), 2 + 4 - k.
// CHECK-LABEL: func.func @strided
// CHECK:         arith.constant 10 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    scf.parallel (%[[J:.*]], %[[K:.*]]) =
// CHECK-NEXT:      %[[RJ:.*]] = arith.subi %[[C8]], %[[J]] : index
// CHECK-NEXT:      %[[RK:.*]] = arith.subi %[[C6]], %[[K]] : index
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[RJ]], %[[RK]]]
func.func @strided(%out: memref<10x6xf32>, %x: f32) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  scf.parallel (%j, %k) = (%c1, %c2) to (%c10, %c6) step (%c3, %c2) {
    memref.store %x, %out[%j, %k] : memref<10x6xf32>
    scf.reduce
  }
  return
}

// -----

// Dynamic bounds: lb + last is computed before the loop,
// 2 lb + ((n - lb - 1) floordiv 2) * 2.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%{{.*}}: memref<?xf32>, %[[LB:.*]]: index, %[[N:.*]]: index, %{{.*}}: f32)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[LENGTH:.*]] = arith.subi %[[N]], %[[LB]] : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %[[LENGTH]], %[[C1]] : index
// CHECK-NEXT:    %[[STEPS:.*]] = arith.floordivsi %[[SPAN]], %[[C2]] : index
// CHECK-NEXT:    %[[OFFSET:.*]] = arith.muli %[[STEPS]], %[[C2]] : index
// CHECK-NEXT:    %[[TWICE:.*]] = arith.addi %[[LB]], %[[LB]] : index
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[TWICE]], %[[OFFSET]] : index
// CHECK-NEXT:    scf.parallel (%[[I:.*]]) =
// CHECK-NEXT:      %[[R:.*]] = arith.subi %[[SUM]], %[[I]] : index
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[R]]]
func.func @dynamic(%out: memref<?xf32>, %lb: index, %n: index, %x: f32) {
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%lb) to (%n) step (%c2) {
    memref.store %x, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
