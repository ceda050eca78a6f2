// RUN: amp-opt %s | amp-opt | FileCheck %s
// RUN: amp-opt %s --mlir-print-op-generic | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @casts(
// CHECK:         amp.cast %{{.*}} : tensor<8xf32> to tensor<8xf16>
// CHECK:         amp.cast %{{.*}} : tensor<8xf32> to tensor<8xbf16>
func.func @casts(%x: tensor<8xf32>) -> (tensor<8xf16>, tensor<8xbf16>) {
  %h = amp.cast %x : tensor<8xf32> to tensor<8xf16>
  %b = amp.cast %x : tensor<8xf32> to tensor<8xbf16>
  return %h, %b : tensor<8xf16>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @unscale(
// CHECK:         amp.unscale %{{.*}} by %{{.*}} : tensor<8x4xf16>, tensor<f32> to tensor<8x4xf32>
// CHECK:         amp.unscale %{{.*}} by %{{.*}} : tensor<8x4xf32>, tensor<f32> to tensor<8x4xf32>
func.func @unscale(%g16: tensor<8x4xf16>, %g32: tensor<8x4xf32>,
                   %scale: tensor<f32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = amp.unscale %g16 by %scale : tensor<8x4xf16>, tensor<f32> to tensor<8x4xf32>
  %1 = amp.unscale %g32 by %scale : tensor<8x4xf32>, tensor<f32> to tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}
