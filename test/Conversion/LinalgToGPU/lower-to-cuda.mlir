// REQUIRES: cuda-toolkit
// RUN: amp-opt %s --amp-lower-to-cuda | FileCheck %s
// RUN: amp-opt %s --amp-lower-to-cuda --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTLINED
// RUN: not amp-opt %s --amp-lower-to-cuda=chips=sm_70 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not amp-opt %s --amp-lower-to-cuda=toolkit=%t.none 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not amp-opt %s --amp-lower-to-cuda=block-size=0 2>&1 | FileCheck %s --check-prefix=BLOCK

// A bias add and Tanh after a GEMM: the GEMM is a record that overwrites
// its output (its zeroing folded in: overwrite=1, the third field from the
// end; no bias epilogue, bias=0, since Tanh follows in the same kernel and
// cuBLASLt has no Tanh epilogue), the fused bias add and Tanh one kernel, compiled for sm_80 and sm_90 into
// one fatbin (magic 0xBA55ED50); the host code is LLVM dialect, which
// queues the GEMM and the kernel on one stream and waits for it once.
// CHECK-NOT: func.func
// CHECK:     llvm.mlir.global private constant @amp_gemm_record(dense<[32, 8, 16, 1, 0, 0, 32, 16, 32, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]>
// CHECK:     llvm.func @main(
// CHECK:       llvm.call @amp_gemm_f32_f32_f32(
// CHECK:       %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK:       gpu.launch_func <%[[STREAM]] : !llvm.ptr> @main_kernel::@main_kernel blocks in
// CHECK:       llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK-NOT:   llvm.call @mgpuStreamSynchronize
// CHECK:     gpu.binary @main_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, "P\EDU\BA
// CHECK-NOT: gpu.binary

// The kernel takes its buffers only: its constants (bounds, the block
// size) are sunk into it (gpu-launch-sink-index-computations), not passed.
// OUTLINED:      gpu.launch_func @main_kernel::@main_kernel
// OUTLINED-SAME: args({{%[^ ]+}} : memref<8x32xf32>, {{%[^ ]+}} : memref<32xf32>){{$}}
// OUTLINED:      gpu.func @main_kernel
// OUTLINED:        arith.constant 256 : index

// CHIP:    amp-lower-to-cuda: unknown chip 'sm_70' (sm_80 or sm_90)
// TOOLKIT: amp-lower-to-cuda: no ptxas in the CUDA toolkit '{{.*}}.none'
// BLOCK:   error: amp-linalg-to-grid-loops: block-size must be in [1, 1024], got 0
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = onnxg.node "MatMul"(%x, %w) opset 19 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %z = onnxg.node "Add"(%y, %b) opset 19 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = onnxg.node "Tanh"(%z) opset 19 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
