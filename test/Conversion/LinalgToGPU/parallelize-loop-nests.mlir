// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-parallelize-loop-nests))' | FileCheck %s
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-parallelize-loop-nests{atomic-updates=true}))' | FileCheck %s --check-prefix=ATOMIC

// A ScatterElements along the last axis with add: each (n, c) writes its
// own row of the result, so those loops are parallel; the loop over the
// updates stays sequential (two updates may name one element).
// CHECK-LABEL: func.func @scatter_rows
// CHECK-SAME:    (%[[IDX:.*]]: memref<2x3x5xi64>, %[[UPD:.*]]: memref<2x3x5xf32>, %[[OUT:.*]]: memref<2x3x7xf32>)
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step
// CHECK-NEXT:      scf.for %[[O:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[I:.*]] = memref.load %[[IDX]][%[[N]], %[[C]], %[[O]]]
// CHECK:             memref.load %[[OUT]][%[[N]], %[[C]], %{{.*}}]
// CHECK:             memref.store %{{.*}}, %[[OUT]][%[[N]], %[[C]], %{{.*}}]
// With atomic updates, the loop over the updates is parallel too, each
// addition atomic.
// ATOMIC-LABEL: func.func @scatter_rows
// ATOMIC-SAME:    (%[[IDX:.*]]: memref<2x3x5xi64>, %[[UPD:.*]]: memref<2x3x5xf32>, %[[OUT:.*]]: memref<2x3x7xf32>)
// ATOMIC:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[O:.*]]) = (%{{.*}}, %{{.*}}, %{{.*}}) to
// ATOMIC-NOT:       scf.for
// ATOMIC:           %[[U:.*]] = memref.load %[[UPD]][%[[N]], %[[C]], %[[O]]]
// ATOMIC-NEXT:      memref.atomic_rmw addf %[[U]], %[[OUT]][%[[N]], %[[C]], %{{.*}}] : (f32, memref<2x3x7xf32>) -> f32
// ATOMIC-NOT:       memref.store
func.func @scatter_rows(%idx: memref<2x3x5xi64>, %upd: memref<2x3x5xf32>,
                        %out: memref<2x3x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %c = %c0 to %c3 step %c1 {
      scf.for %o = %c0 to %c5 step %c1 {
        %i64 = memref.load %idx[%n, %c, %o] : memref<2x3x5xi64>
        %i = arith.index_cast %i64 : i64 to index
        %u = memref.load %upd[%n, %c, %o] : memref<2x3x5xf32>
        %old = memref.load %out[%n, %c, %i] : memref<2x3x7xf32>
        %new = arith.addf %old, %u : f32
        memref.store %new, %out[%n, %c, %i] : memref<2x3x7xf32>
      }
    }
  }
  return
}

// -----

// An embedding gradient (GatherGrad): the token loops feed the row index,
// the feature loop indexes the columns itself, so it becomes the parallel
// loop, outside the token loops.
// CHECK-LABEL: func.func @embedding_gradient
// CHECK:         scf.parallel (%[[D:.*]]) = (%{{.*}}) to (%[[C16:.*]]) step
// CHECK-NEXT:      scf.for %[[B:.*]] =
// CHECK-NEXT:        scf.for %[[S:.*]] =
// CHECK:               memref.load %{{.*}}[%[[B]], %[[S]], %[[D]]] : memref<2x4x16xf32>
// CHECK:               memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[D]]] : memref<10x16xf32>
// ATOMIC-LABEL: func.func @embedding_gradient
// ATOMIC:         scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) =
// ATOMIC:           memref.atomic_rmw addf
func.func @embedding_gradient(%tokens: memref<2x4xi64>, %dy: memref<2x4x16xf32>,
                              %dw: memref<10x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.for %b = %c0 to %c2 step %c1 {
    scf.for %s = %c0 to %c4 step %c1 {
      scf.for %d = %c0 to %c16 step %c1 {
        %t64 = memref.load %tokens[%b, %s] : memref<2x4xi64>
        %t = arith.index_cast %t64 : i64 to index
        %g = memref.load %dy[%b, %s, %d] : memref<2x4x16xf32>
        %old = memref.load %dw[%t, %d] : memref<10x16xf32>
        %new = arith.addf %old, %g : f32
        memref.store %new, %dw[%t, %d] : memref<10x16xf32>
      }
    }
  }
  return
}

// -----

// Nests left as they are: every iteration adds into one element; the
// written buffer is read through another view; a loop carries a value; a
// call may write anything.
// CHECK-LABEL: func.func @dependent_nests
// CHECK-NOT:     scf.parallel
// With atomic updates, only the sum into one element becomes parallel:
// the others store, or read the buffer through another view.
// ATOMIC-LABEL: func.func @dependent_nests
// ATOMIC:         scf.parallel
// ATOMIC-NEXT:      memref.load
// ATOMIC-NEXT:      memref.atomic_rmw addf
// ATOMIC-NOT:     scf.parallel
func.func @dependent_nests(%x: memref<8xf32>, %acc: memref<1xf32>,
                           %buf: memref<8xf32>, %s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %a = memref.load %acc[%c0] : memref<1xf32>
    %sum = arith.addf %a, %v : f32
    memref.store %sum, %acc[%c0] : memref<1xf32>
  }
  %view = memref.subview %buf[0] [8] [1] : memref<8xf32> to memref<8xf32, strided<[1]>>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %view[%i] : memref<8xf32, strided<[1]>>
    memref.store %v, %buf[%i] : memref<8xf32>
  }
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%t = %s) -> (f32) {
    memref.store %t, %buf[%i] : memref<8xf32>
    %n = arith.addf %t, %s : f32
    scf.yield %n : f32
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %s, %buf[%i] : memref<8xf32>
    func.call @opaque(%buf) : (memref<8xf32>) -> ()
  }
  return %r : f32
}
func.func private @opaque(memref<8xf32>)

// -----

// Additions that are not atomic ones: f16 elements (no native atomic add
// on sm_80), a value added to itself, a second store to the buffer.
// ATOMIC-LABEL: func.func @not_atomic_additions
// ATOMIC-NOT:     atomic_rmw
// ATOMIC-NOT:     scf.parallel
func.func @not_atomic_additions(%idx: memref<8xi64>, %h: memref<4xf16>,
                                %u: memref<8xf16>, %f: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %j64 = memref.load %idx[%i] : memref<8xi64>
    %j = arith.index_cast %j64 : i64 to index
    %v = memref.load %u[%i] : memref<8xf16>
    %old = memref.load %h[%j] : memref<4xf16>
    %new = arith.addf %old, %v : f16
    memref.store %new, %h[%j] : memref<4xf16>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %j64 = memref.load %idx[%i] : memref<8xi64>
    %j = arith.index_cast %j64 : i64 to index
    %old = memref.load %f[%j] : memref<4xf32>
    %new = arith.addf %old, %old : f32
    memref.store %new, %f[%j] : memref<4xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %j64 = memref.load %idx[%i] : memref<8xi64>
    %j = arith.index_cast %j64 : i64 to index
    %old = memref.load %f[%j] : memref<4xf32>
    %new = arith.addf %old, %zero : f32
    memref.store %new, %f[%j] : memref<4xf32>
    memref.store %zero, %f[%c0] : memref<4xf32>
  }
  return
}
