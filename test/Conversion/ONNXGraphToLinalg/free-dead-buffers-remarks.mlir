// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-free-dead-buffers{remarks=true}))' -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-free-dead-buffers{early=false remarks=true}))' -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=LATE

// Three buffers of 16, 64 and 16 bytes: the first is dead before the
// third is written, so at most 80 bytes live at once, not 96.
// LATE: remark: freed 3 buffers: at most 96 of their 96 bytes live at once
// expected-remark @+1 {{freed 3 buffers: at most 80 of their 96 bytes live at once}}
func.func @peak(%out: memref<4xf32>) {
  %true = arith.constant true
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4xf32>)
  %v = memref.subview %b[0] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1]>>
  memref.copy %v, %out : memref<4xf32, strided<[1]>> to memref<4xf32>
  memref.copy %c, %out : memref<4xf32> to memref<4xf32>
  bufferization.dealloc (%a, %b, %c : memref<4xf32>, memref<16xf32>, memref<4xf32>) if (%true, %true, %true)
  return
}
