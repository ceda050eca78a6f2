// RUN: amp-opt %s --amp-outline-loop-nests -split-input-file | FileCheck %s
// RUN: amp-opt %s --amp-outline-loop-nests="min-loops=1" -split-input-file | FileCheck %s --check-prefix=SINGLE

// Two loop nests: each becomes a private function that LLVM does not
// inline, with internal linkage, taking the memrefs and the value computed
// above as arguments and recomputing the constants; the inner loop stays in
// its nest. The second loop's result comes back from its function.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4xf32>, %[[S:.*]]: f32)
// CHECK:         %[[T:.*]] = arith.mulf %[[S]], %[[S]]
// CHECK-NEXT:    call @step_loop0(%[[A]], %[[T]], %[[B]]) : (memref<4x8xf32>, f32, memref<4xf32>) -> ()
// CHECK-NEXT:    %[[R:.*]] = call @step_loop1(%[[B]]) : (memref<4xf32>) -> f32
// CHECK-NEXT:    return %[[R]]
// CHECK:       func.func private @step_loop0(%[[A0:.*]]: memref<4x8xf32>, %[[T0:.*]]: f32, %[[B0:.*]]: memref<4xf32>)
// CHECK-SAME:    attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:         scf.for %[[I:.*]] = %[[ZERO]] to %[[FOUR]] step %[[ONE]] {
// CHECK:           scf.for %{{.*}} = %[[ZERO]] to %[[EIGHT]] step %[[ONE]] iter_args
// CHECK:             memref.load %[[A0]]
// CHECK:             arith.addf %{{.*}}, %[[T0]]
// CHECK:           memref.store %{{.*}}, %[[B0]][%[[I]]]
// CHECK:         return
// CHECK:       func.func private @step_loop1(%[[B1:.*]]: memref<4xf32>) -> f32
// CHECK-SAME:    attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} iter_args
// CHECK:           memref.load %[[B1]]
// CHECK:         return %[[SUM]] : f32
func.func @step(%a: memref<4x8xf32>, %b: memref<4xf32>, %s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %t = arith.mulf %s, %s : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %row = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %z = arith.addf %row, %t : f32
    memref.store %z, %b[%i] : memref<4xf32>
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  return %sum : f32
}

// -----

// One loop nest: the function is that nest already, and stays as it is
// unless min-loops is 1. Parallel loops are loop nests too.
// CHECK-LABEL: func.func @one_nest(
// CHECK-NOT:     call
// CHECK:         scf.parallel
// CHECK:         return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// SINGLE-LABEL:   func.func @one_nest(
// SINGLE:           call @one_nest_loop0(%{{.*}}) : (memref<16xf32>) -> ()
// SINGLE:         func.func private @one_nest_loop0(
// SINGLE:           scf.parallel
func.func @one_nest(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    memref.store %one, %a[%i] : memref<16xf32>
  }
  return
}

// -----

// Names do not collide with existing symbols.
// CHECK-LABEL: func.func @taken(
// CHECK:         call @taken_loop0_0(
// CHECK:         call @taken_loop1(
// CHECK:       func.func private @taken_loop0_0(
func.func private @taken_loop0()
func.func @taken(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %a[%i] : memref<4xf32>
  }
  return
}
