// REQUIRES: cuda-toolkit
// RUN: amp-opt %s --amp-lower-to-cuda --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s
// RUN: amp-opt %s --amp-lower-to-cuda=row-lanes=1 --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE

// A softmax over rows of 128: one kernel, 32 lanes per row and 8 rows per
// block, so 2 blocks of 256 threads. Its two reductions (the row's maximum
// and sum) combine their lanes' partial results through shared memory (a
// workgroup attribution each), with a barrier between the kernel's phases.
// With row-lanes=1, one thread per row and no shared memory.
// CHECK:     gpu.launch_func {{ *}}@main_kernel::@main_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: gpu.launch_func
// CHECK:     gpu.func @main_kernel({{.*}}) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:  known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME:  known_grid_size = array<i32: 2, 1, 1>
// CHECK:       gpu.barrier
// CHECK:       gpu.return
// ONE:         gpu.func @main_kernel
// ONE-NOT:     workgroup
// ONE-NOT:     gpu.barrier
// ONE:         gpu.return
func.func @main(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %y = onnxg.node "Softmax"(%x) opset 19 {axis = -1 : si64} : (tensor<16x128xf32>) -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}
