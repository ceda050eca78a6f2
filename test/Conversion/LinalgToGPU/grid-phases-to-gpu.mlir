// RUN: amp-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(amp-grid-phases-to-gpu))' | FileCheck %s

// A row sum shared by 32 lanes (amp-linalg-to-grid-loops{row-lanes}): two
// rows per block, 3 blocks. The block loop becomes one launch of 3 blocks
// of 64 threads, its scratch buffer a workgroup attribution, its two
// phases one after the other with a barrier between them; the block index
// is the block id times the loop's step.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME:    (%[[IN:.*]]: memref<6x64xf32>, %[[SUM:.*]]: memref<6xf32>)
// CHECK:         %[[GRID:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[THREADS:.*]] = arith.constant 64 : index
// CHECK-NEXT:    gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-NEXT:      %[[STEP:.*]] = arith.muli %[[BX]], %{{.*}}
// CHECK-NEXT:      %[[BLOCK:.*]] = arith.addi %{{.*}}, %[[STEP]]
// CHECK:           %[[LANE:.*]] = arith.remui %[[TX]]
// CHECK:           %[[PART:.*]] = scf.for %{{.*}} = %[[LANE]]
// CHECK:           memref.store %[[PART]], %[[SHARED]][%[[TX]]]
// CHECK-NEXT:      gpu.barrier
// CHECK:           memref.load %[[SHARED]]
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK-NOT:       gpu.barrier
// CHECK:           gpu.terminator
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     memref.alloc
// CHECK:         return
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
func.func @row_sum(%in: memref<6x64xf32>, %sum: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b) = (%c0) to (%c6) step (%c2) {
    %scratch = memref.alloc() : memref<64xf32>
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      %r = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %b, %r : index
      %part = scf.for %k = %lane to %c64 step %c32 iter_args(%acc = %zero) -> (f32) {
        %x = memref.load %in[%row, %k] : memref<6x64xf32>
        %s = arith.addf %x, %acc : f32
        scf.yield %s : f32
      }
      memref.store %part, %scratch[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      %r = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %start = arith.muli %r, %c32 : index
      %row = arith.addi %b, %r : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        %total = scf.for %l = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (f32) {
          %at = arith.addi %start, %l : index
          %p = memref.load %scratch[%at] : memref<64xf32>
          %s = arith.addf %p, %acc : f32
          scf.yield %s : f32
        }
        memref.store %total, %sum[%row] : memref<6xf32>
      }
      scf.reduce
    } {mapping = [#thread]}
    memref.dealloc %scratch : memref<64xf32>
    scf.reduce
  } {mapping = [#block]}
  return
}

// -----

// A grid without scratch buffers is left to convert-parallel-loops-to-gpu.
// CHECK-LABEL: func.func @plain_grid
// CHECK-NOT:     gpu.launch
// CHECK:         scf.parallel
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
func.func @plain_grid(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b) = (%c0) to (%c64) step (%c64) {
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %out[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    scf.reduce
  } {mapping = [#block]}
  return
}

// -----

#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
func.func @phases_of_other_lengths(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b) = (%c0) to (%c64) step (%c64) {
    %scratch = memref.alloc() : memref<64xf32>
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %scratch[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    // expected-error @+1 {{must be a thread loop from 0 by 1, as long as the other phases}}
    scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
      %x = memref.load %scratch[%t] : memref<64xf32>
      memref.store %x, %out[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    memref.dealloc %scratch : memref<64xf32>
    scf.reduce
  } {mapping = [#block]}
  return
}

// -----

#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
func.func @store_beside_phases(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b) = (%c0) to (%c64) step (%c64) {
    %scratch = memref.alloc() : memref<64xf32>
    // expected-error @+1 {{cannot run beside a grid's phases}}
    memref.store %zero, %out[%b] : memref<64xf32>
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %scratch[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    memref.dealloc %scratch : memref<64xf32>
    scf.reduce
  } {mapping = [#block]}
  return
}

// -----

#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
func.func @dynamic_blocks(%out: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{with phases needs constant bounds}}
  scf.parallel (%b) = (%c0) to (%n) step (%c64) {
    %scratch = memref.alloc() : memref<64xf32>
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %scratch[%t] : memref<64xf32>
      scf.reduce
    } {mapping = [#thread]}
    memref.dealloc %scratch : memref<64xf32>
    scf.reduce
  } {mapping = [#block]}
  return
}
