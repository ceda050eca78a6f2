// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-plan-buffers))' | FileCheck %s
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-plan-buffers{remarks=true}))' -verify-diagnostics -o /dev/null
// RUN: not amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-plan-buffers{alignment=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN

// Three temporaries of a chain of grids, freed at the end as bufferization
// leaves them: %a (4096 bytes) lives while the first two grids run, %b
// (1024) while the second and third, %c (4096) while the third and the
// GEMM. %a and %c never live at once and share offset 0; %b goes after %a,
// at the next multiple of 256. One arena of 5120 bytes instead of 9216.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64} : memref<5120xi8>
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<5120xi8> to memref<1024xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<5120xi8> to memref<256xf32>
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<5120xi8> to memref<32x32xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<5120xi8>
// CHECK-NEXT:    return
func.func private @amp_gemm_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
// expected-remark @below {{planned 3 buffers of 9216 bytes into an arena of 5120 bytes}}
func.func @chain(%x: memref<1024xf32>, %r: memref<*xi64>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %v = memref.load %x[%i] : memref<1024xf32>
    memref.store %v, %a[%i] : memref<1024xf32>
    scf.reduce
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %v = memref.load %a[%i] : memref<1024xf32>
    memref.store %v, %b[%i] : memref<256xf32>
    scf.reduce
  }
  %c = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  %flat = memref.collapse_shape %c [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %v = memref.load %b[%i] : memref<256xf32>
    memref.store %v, %flat[%i] : memref<1024xf32>
    scf.reduce
  }
  %u = memref.cast %c : memref<32x32xf32> to memref<*xf32>
  call @amp_gemm_f32_f32_f32(%r, %u, %u, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<32x32xf32>
  return
}

// -----

// A buffer the host reads (a memref.load outside any grid) keeps its own
// allocation: amp-place-gpu-buffers puts it where the host reaches it. So
// does one with a dynamic size. Nothing left to plan: no arena.
// CHECK-LABEL: func.func @host(
// CHECK-NOT:     memref.view
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
func.func @host(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %cst, %a[%i] : memref<4xf32>
    scf.reduce
  }
  %v = memref.load %a[%c0] : memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %d[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %d : memref<?xf32>
  return %v : f32
}

// ALIGN: error: amp-plan-buffers: alignment must be positive
