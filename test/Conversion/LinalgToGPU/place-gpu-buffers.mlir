// RUN: amp-opt %s -split-input-file --amp-place-gpu-buffers | FileCheck %s

// Allocations that only kernels, GEMMs, convolutions and frees use go to
// device memory; the constant that a kernel reads is copied into a device
// buffer, the GEMM and convolution records that amp_gemm and amp_conv read
// on the host are not.
// CHECK-LABEL: func.func @step
// CHECK:         %[[RECORD:.*]] = memref.get_global @amp_gemm_record
// CHECK:         %[[CONV_RECORD:.*]] = memref.get_global @amp_conv_record
// CHECK:         %[[TABLE:.*]] = memref.get_global @table
// CHECK:         %[[CONST:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK:         gpu.memcpy  %[[CONST]], %[[TABLE]]
// CHECK:         %[[BUF:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK:         gpu.launch_func @kernels::@scale {{.*}} args(%[[CONST]] : memref<4xf32>, %[[BUF]] : memref<4xf32>)
// CHECK:         %[[RU:.*]] = memref.cast %[[RECORD]]
// CHECK:         call @amp_gemm_f32_f32_f32(%[[RU]],
// CHECK:         %[[CRU:.*]] = memref.cast %[[CONV_RECORD]]
// CHECK:         call @amp_conv_f32_f32_f32(%[[CRU]],
// CHECK:         gpu.dealloc  %[[BUF]]
// CHECK:         gpu.dealloc  %[[CONST]]
// CHECK-NEXT:    return
// CHECK-NOT:     memref.alloc
module attributes {gpu.container_module} {
  memref.global "private" constant @amp_gemm_record : memref<16xi64> = dense<0>
  memref.global "private" constant @amp_conv_record : memref<25xi64> = dense<0>
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func private @amp_gemm_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
  func.func private @amp_conv_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
  gpu.module @kernels {
    gpu.func @scale(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %record = memref.get_global @amp_gemm_record : memref<16xi64>
    %conv_record = memref.get_global @amp_conv_record : memref<25xi64>
    %table = memref.get_global @table : memref<4xf32>
    %buf = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%table : memref<4xf32>, %buf : memref<4xf32>)
    %r = memref.cast %record : memref<16xi64> to memref<*xi64>
    %u = memref.cast %buf : memref<4xf32> to memref<*xf32>
    %v = memref.cast %x : memref<4xf32> to memref<*xf32>
    call @amp_gemm_f32_f32_f32(%r, %u, %u, %v) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    %cr = memref.cast %conv_record : memref<25xi64> to memref<*xi64>
    call @amp_conv_f32_f32_f32(%cr, %u, %u, %v) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    memref.dealloc %buf : memref<4xf32>
    return
  }
}

// -----

// What host code reads (through a view) is host-shared, and so is a
// constant that both a kernel and the host read: copied on the host.
// CHECK-LABEL: func.func @host_reads
// CHECK:         %[[TABLE:.*]] = memref.get_global @table
// CHECK:         %[[CONST:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK:         memref.copy %[[TABLE]], %[[CONST]]
// CHECK:         gpu.alloc  host_shared () : memref<2x2xf32>
// CHECK-NOT:     gpu.memcpy
module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  gpu.module @kernels {
    gpu.func @fill(%a: memref<4xf32>, %b: memref<2x2xf32>) kernel {
      gpu.return
    }
  }
  func.func @host_reads() -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %table = memref.get_global @table : memref<4xf32>
    %buf = memref.alloc() : memref<2x2xf32>
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%table : memref<4xf32>, %buf : memref<2x2xf32>)
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<2x2xf32> into memref<4xf32>
    %x = memref.load %flat[%c0] : memref<4xf32>
    %y = memref.load %table[%c0] : memref<4xf32>
    %z = arith.addf %x, %y : f32
    memref.dealloc %buf : memref<2x2xf32>
    return %z : f32
  }
}
