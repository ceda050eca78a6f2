// The FP8 ops print and parse back, in the custom and the generic form.
// RUN: amp-opt %s | amp-opt | FileCheck %s
// RUN: amp-opt %s --mlir-print-op-generic | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @per_tensor(
// CHECK:         %{{.*}}, %[[INV:.*]] = amp.quantize %{{.*}} by %{{.*}} : tensor<64x128xbf16>, tensor<f32> to tensor<64x128xf8E4M3FN>
// CHECK:         amp.dequantize %{{.*}} by %[[INV]] : tensor<64x128xf8E4M3FN>, tensor<f32> to tensor<64x128xf32>
// CHECK:         amp.amax %{{.*}} : tensor<64x128xbf16> to tensor<f32>
// CHECK:         amp.compute_scale %{{.*}} previous %{{.*}} {margin = 1 : i64, max = 4.480000e+02 : f32} : tensor<f32>, tensor<f32>
// CHECK:         amp.compute_scale %{{.*}} {max = 5.734400e+04 : f32} : tensor<f32>
// CHECK:         amp.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} {transpose_b} : tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<256x128xf8E5M2>, tensor<f32>, tensor<256xbf16> to tensor<64x256xbf16>
func.func @per_tensor(%x: tensor<64x128xbf16>, %w: tensor<256x128xf8E5M2>,
                      %s: tensor<f32>, %bias: tensor<256xbf16>)
    -> (tensor<64x128xf32>, tensor<f32>, tensor<f32>, tensor<64x256xbf16>) {
  %q, %inv = amp.quantize %x by %s
      : tensor<64x128xbf16>, tensor<f32> to tensor<64x128xf8E4M3FN>
  %d = amp.dequantize %q by %inv
      : tensor<64x128xf8E4M3FN>, tensor<f32> to tensor<64x128xf32>
  %a = amp.amax %x : tensor<64x128xbf16> to tensor<f32>
  %s1 = amp.compute_scale %a previous %s {max = 448.0 : f32, margin = 1 : i64}
      : tensor<f32>, tensor<f32>
  %s2 = amp.compute_scale %a {max = 57344.0 : f32} : tensor<f32>
  %y = amp.scaled_matmul %q, %inv, %w, %s2 bias %bias {transpose_b}
      : tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<256x128xf8E5M2>,
        tensor<f32>, tensor<256xbf16> to tensor<64x256xbf16>
  return %d, %s1, %s2, %y
      : tensor<64x128xf32>, tensor<f32>, tensor<f32>, tensor<64x256xbf16>
}

// Block scaling: one scale per 1x128 block of the activation and per
// 128x128 block of the weight; a batched GEMM.
// CHECK-LABEL: func.func @blocks(
// CHECK:         amp.amax %{{.*}} {block = array<i64: 1, 128>} : tensor<8x300xf32> to tensor<8x3xf32>
// CHECK:         amp.compute_scale %{{.*}} {max = 4.480000e+02 : f32, pow2} : tensor<8x3xf32>
// CHECK:         amp.quantize %{{.*}} by %{{.*}} {block = array<i64: 1, 128>} : tensor<8x300xf32>, tensor<8x3xf32> to tensor<8x300xf8E4M3FN>
// CHECK:         amp.scaled_matmul {{.*}} {a_block = array<i64: 1, 1, 128>, b_block = array<i64: 1, 128, 128>} : tensor<2x32x256xf8E4M3FN>, tensor<2x32x2xf32>, tensor<2x256x64xf8E4M3FN>, tensor<2x2x1xf32> to tensor<2x32x64xf32>
func.func @blocks(%x: tensor<8x300xf32>, %a: tensor<2x32x256xf8E4M3FN>,
                  %ai: tensor<2x32x2xf32>, %b: tensor<2x256x64xf8E4M3FN>,
                  %bi: tensor<2x2x1xf32>)
    -> (tensor<8x300xf8E4M3FN>, tensor<2x32x64xf32>) {
  %amax = amp.amax %x {block = array<i64: 1, 128>}
      : tensor<8x300xf32> to tensor<8x3xf32>
  %s = amp.compute_scale %amax {max = 448.0 : f32, pow2} : tensor<8x3xf32>
  %q, %inv = amp.quantize %x by %s {block = array<i64: 1, 128>}
      : tensor<8x300xf32>, tensor<8x3xf32> to tensor<8x300xf8E4M3FN>
  %y = amp.scaled_matmul %a, %ai, %b, %bi
      {a_block = array<i64: 1, 1, 128>, b_block = array<i64: 1, 128, 128>}
      : tensor<2x32x256xf8E4M3FN>, tensor<2x32x2xf32>,
        tensor<2x256x64xf8E4M3FN>, tensor<2x2x1xf32> to tensor<2x32x64xf32>
  return %q, %y : tensor<8x300xf8E4M3FN>, tensor<2x32x64xf32>
}

// CHECK-LABEL: func.func @update(
// CHECK:         %{{.*}}:2, %{{.*}}:2 = amp.fp8_update histories(%{{.*}}, %{{.*}}) amaxes(%{{.*}}, %{{.*}}) scales(%{{.*}}, %{{.*}}) {algo = "most_recent", maxes = array<f32: 4.480000e+02, 5.734400e+04>} : tensor<1024xf32>, tensor<16xf32>
func.func @update(%h0: tensor<1024xf32>, %h1: tensor<16xf32>,
                  %a0: tensor<f32>, %a1: tensor<f32>, %s0: tensor<f32>,
                  %s1: tensor<f32>) -> (tensor<1024xf32>, tensor<f32>) {
  %h:2, %s:2 = amp.fp8_update histories(%h0, %h1) amaxes(%a0, %a1)
      scales(%s0, %s1)
      {maxes = array<f32: 448.0, 57344.0>, margin = 0 : i64,
       algo = "most_recent"} : tensor<1024xf32>, tensor<16xf32>
  return %h#0, %s#1 : tensor<1024xf32>, tensor<f32>
}
