// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-free-dead-buffers))' -split-input-file | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-free-dead-buffers{early=false}))' -split-input-file | FileCheck %s --check-prefix=LATE

// Each allocation is freed after the last op that uses it or a view of it;
// the bufferization.dealloc at the end is gone.
// CHECK-LABEL: func.func @free_after_last_use(
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4xf32>)
// CHECK:         %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK:         memref.copy %[[V]], %[[B]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK:         memref.copy %[[B]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NOT:     bufferization.dealloc
// CHECK:         return
// LATE-LABEL: func.func @free_after_last_use(
// LATE-SAME:    %[[OUT:.*]]: memref<2x2xf32>)
// LATE:         memref.copy %{{.*}}, %[[OUT]]
// LATE-NEXT:    memref.dealloc
// LATE-NEXT:    memref.dealloc
// LATE-NEXT:    return
func.func @free_after_last_use(%out: memref<2x2xf32>) {
  %true = arith.constant true
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  memref.copy %v, %b : memref<2x2xf32> to memref<2x2xf32>
  memref.copy %b, %out : memref<2x2xf32> to memref<2x2xf32>
  bufferization.dealloc (%a, %b : memref<4xf32>, memref<2x2xf32>) if (%true, %true)
  return
}

// -----

// A buffer that an scf.if may yield, and one freed only under a run-time
// condition, stay in the bufferization.dealloc; the other is freed.
// CHECK-LABEL: func.func @escaping_buffers_stay(
// CHECK-SAME:    %[[C:.*]]: i1
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         %[[D:.*]] = memref.alloc()
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : memref<4xf32>)
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK:         bufferization.dealloc (%[[A]], %[[B]] : memref<4xf32>, memref<4xf32>) if (%{{.*}}, %[[C]])
func.func @escaping_buffers_stay(%c: i1, %out: memref<4xf32>) {
  %true = arith.constant true
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<4xf32>)
  %r = scf.if %c -> memref<4xf32> {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %out : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  bufferization.dealloc (%a, %b, %d : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%true, %c, %true)
  return
}

// -----

// A dealloc that retains a buffer is left alone.
// CHECK-LABEL: func.func @retaining_dealloc(
// CHECK-NOT:     memref.dealloc
// CHECK:         bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%{{.*}}) retain (%{{.*}} : memref<4xf32>)
func.func @retaining_dealloc(%keep: memref<4xf32>) -> i1 {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %r = bufferization.dealloc (%a : memref<4xf32>) if (%true) retain (%keep : memref<4xf32>)
  return %r : i1
}
