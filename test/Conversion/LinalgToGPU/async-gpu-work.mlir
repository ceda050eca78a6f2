// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-async-gpu-work))' | FileCheck %s

// Allocations, copies, launches, GEMM and convolution calls and frees go
// on one stream; the host waits once, before the return.
// CHECK-LABEL: func.func @step
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[BUF:.*]], %{{.*}} = gpu.alloc async [%[[S]]] () : memref<4xf32>
// CHECK-NEXT:    gpu.memcpy async [%[[S]]] %[[BUF]], %{{.*}}
// CHECK-NEXT:    gpu.launch_func async [%[[S]]] @kernels::@scale
// CHECK-NEXT:    memref.cast
// CHECK-NEXT:    call @amp_gemm_f32_f32_f32
// CHECK-NEXT:    call @amp_conv_f32_f32_f32
// CHECK-NEXT:    gpu.launch_func async [%[[S]]] @kernels::@scale
// CHECK-NEXT:    gpu.dealloc async [%[[S]]] %[[BUF]]
// CHECK-NEXT:    gpu.wait [%[[S]]]
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  func.func private @amp_gemm_f32_f32_f32(memref<*xf32>)
  func.func private @amp_conv_f32_f32_f32(memref<*xf32>)
  gpu.module @kernels {
    gpu.func @scale(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %buf = gpu.alloc () : memref<4xf32>
    gpu.memcpy %buf, %x : memref<4xf32>, memref<4xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    %u = memref.cast %buf : memref<4xf32> to memref<*xf32>
    call @amp_gemm_f32_f32_f32(%u) : (memref<*xf32>) -> ()
    call @amp_conv_f32_f32_f32(%u) : (memref<*xf32>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    gpu.dealloc %buf : memref<4xf32>
    return
  }
}

// -----

// The host waits before it reads a buffer, and starts a new stream after;
// a host-shared allocation stays synchronous; a loop that launches gets
// streams of its own inside, and the host waits before it.
// CHECK-LABEL: func.func @host_reads
// CHECK:         %[[SHARED:.*]] = gpu.alloc  host_shared ()
// CHECK-NEXT:    %[[S0:.*]] = gpu.wait async
// CHECK-NEXT:    gpu.launch_func async [%[[S0]]]
// CHECK-NEXT:    gpu.wait [%[[S0]]]
// CHECK-NEXT:    memref.load %[[SHARED]]
// CHECK-NEXT:    %[[S1:.*]] = gpu.wait async
// CHECK-NEXT:    gpu.launch_func async [%[[S1]]]
// CHECK-NEXT:    gpu.wait [%[[S1]]]
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[S2:.*]] = gpu.wait async
// CHECK-NEXT:      gpu.launch_func async [%[[S2]]]
// CHECK-NEXT:      gpu.wait [%[[S2]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S3:.*]] = gpu.wait async
// CHECK-NEXT:    gpu.dealloc async [%[[S3]]] %[[SHARED]]
// CHECK-NEXT:    gpu.wait [%[[S3]]]
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @host_reads() -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %buf = gpu.alloc host_shared () : memref<4xf32>
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    %x = memref.load %buf[%c0] : memref<4xf32>
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    }
    gpu.dealloc %buf : memref<4xf32>
    return %x : f32
  }
}
