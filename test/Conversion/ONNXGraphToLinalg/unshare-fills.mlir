// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-unshare-fills))' | FileCheck %s
// RUN: amp-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(amp-unshare-fills),one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUFFERS

// One zero (CSE merged them) is the accumulator of two GEMMs: the second
// gets a fill of its own, so bufferization writes both in place and
// copies nothing.
// CHECK-LABEL: func.func @two_gemms
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x4xf32>)
// CHECK:         %[[OWN_EMPTY:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK:         %[[OWN_ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OWN_EMPTY]] : tensor<4x4xf32>)
// CHECK:         linalg.matmul ins({{.*}}) outs(%[[OWN_ZERO]] : tensor<4x4xf32>)
// CHECK:         linalg.matmul ins({{.*}}) outs(%[[ZERO]] : tensor<4x4xf32>)
// BUFFERS-LABEL: func.func @two_gemms
// BUFFERS-NOT:     memref.copy
// BUFFERS:         return
func.func @two_gemms(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %ba = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %ab, %ba : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A fill that is also read (an input of the add): every destination gets
// its own fill; the original stays for the reader.
// CHECK-LABEL: func.func @read_and_written
// CHECK:         %[[ZERO:.*]] = linalg.fill
// CHECK:         %[[OWN:.*]] = linalg.fill
// CHECK:         linalg.matmul ins({{.*}}) outs(%[[OWN]] : tensor<4x4xf32>)
// CHECK:         linalg.add ins(%{{.*}}, %[[ZERO]] : tensor<4x4xf32>, tensor<4x4xf32>)
func.func @read_and_written(%a: tensor<4x4xf32>, %out: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %aa = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.add ins(%a, %fill : tensor<4x4xf32>, tensor<4x4xf32>) outs(%out : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %aa, %sum : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// One destination: nothing to do.
// CHECK-LABEL: func.func @one_destination
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @one_destination(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %aa = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %aa : tensor<4x4xf32>
}
