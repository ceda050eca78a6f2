// RUN: amp-opt %s --amp-host-shared-buffers | FileCheck %s

// Allocations become host-shared, freed on a stream of their own; the
// constant that a kernel reads is copied into a host-shared buffer, the
// GEMM record that amp_gemm reads on the host is not.
// CHECK-LABEL: func.func @step
// CHECK:         %[[RECORD:.*]] = memref.get_global @amp_gemm_record
// CHECK:         %[[TABLE:.*]] = memref.get_global @table
// CHECK:         %[[SHARED:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK:         memref.copy %[[TABLE]], %[[SHARED]]
// CHECK:         %[[BUF:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK:         gpu.launch_func @kernels::@scale {{.*}} args(%[[SHARED]] : memref<4xf32>, %[[BUF]] : memref<4xf32>)
// CHECK:         %[[RU:.*]] = memref.cast %[[RECORD]]
// CHECK:         call @amp_gemm_f32_f32_f32(%[[RU]],
// CHECK:         %[[T0:.*]] = gpu.wait async
// CHECK:         %[[T1:.*]] = gpu.dealloc async [%[[T0]]] %[[BUF]]
// CHECK:         gpu.wait [%[[T1]]]
// CHECK:         %[[T2:.*]] = gpu.wait async
// CHECK:         %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[SHARED]]
// CHECK:         gpu.wait [%[[T3]]]
// CHECK-NEXT:    return
// CHECK-NOT:     memref.alloc
module attributes {gpu.container_module} {
  memref.global "private" constant @amp_gemm_record : memref<16xi64> = dense<0>
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func private @amp_gemm_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
  gpu.module @kernels {
    gpu.func @scale(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %record = memref.get_global @amp_gemm_record : memref<16xi64>
    %table = memref.get_global @table : memref<4xf32>
    %buf = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%table : memref<4xf32>, %buf : memref<4xf32>)
    %r = memref.cast %record : memref<16xi64> to memref<*xi64>
    %u = memref.cast %buf : memref<4xf32> to memref<*xf32>
    %v = memref.cast %x : memref<4xf32> to memref<*xf32>
    call @amp_gemm_f32_f32_f32(%r, %u, %u, %v) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    memref.dealloc %buf : memref<4xf32>
    return
  }
}
