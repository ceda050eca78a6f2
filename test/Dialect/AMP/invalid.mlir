// RUN: amp-opt %s -split-input-file -verify-diagnostics

func.func @cast_to_fp8(%x: tensor<16xf32>) {
  // expected-error @+1 {{'amp.cast' op result #0 must be tensor of f16, bf16, f32 or f64 values}}
  %0 = amp.cast %x : tensor<16xf32> to tensor<16xf8E4M3FN>
  return
}

// -----

func.func @shape_mismatch(%x: tensor<16xf32>) {
  // expected-error @+1 {{'amp.cast' op requires the same shape for all operands and results}}
  %0 = amp.cast %x : tensor<16xf32> to tensor<8xf16>
  return
}

// -----

func.func @integer_input(%x: tensor<16xi32>) {
  // expected-error @+1 {{'amp.cast' op operand #0 must be tensor of f16, bf16, f32 or f64 values}}
  %0 = amp.cast %x : tensor<16xi32> to tensor<16xf16>
  return
}

// -----

func.func @unscale_to_fp16(%g: tensor<4xf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.unscale' op result #0 must be tensor of 32-bit float values}}
  %0 = amp.unscale %g by %s : tensor<4xf16>, tensor<f32> to tensor<4xf16>
  return
}

// -----

func.func @unscale_scale_not_scalar(%g: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'amp.unscale' op operand #1 must be 0D tensor of 32-bit float values}}
  %0 = amp.unscale %g by %s : tensor<4xf32>, tensor<1xf32> to tensor<4xf32>
  return
}

// -----

func.func @unscale_shape_mismatch(%g: tensor<4xf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.unscale' op failed to verify that all of {input, result} have same shape}}
  %0 = amp.unscale %g by %s : tensor<4xf16>, tensor<f32> to tensor<8xf32>
  return
}

// -----

func.func @quantize_to_fp16(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.quantize' op result #0 must be tensor of an FP8 type (f8E4M3FN or f8E5M2) values}}
  %q, %i = amp.quantize %x by %s : tensor<4xf32>, tensor<f32> to tensor<4xf16>
  return
}

// -----

func.func @quantize_vector_scale(%x: tensor<4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'amp.quantize' op takes a 0-d scale without a 'block' attribute, not 'tensor<4xf32>'}}
  %q, %i = amp.quantize %x by %s : tensor<4xf32>, tensor<4xf32> to tensor<4xf8E4M3FN>
  return
}

// -----

func.func @quantize_block_rank(%x: tensor<4x256xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'amp.quantize' op block of rank 1 does not match the data's type 'tensor<4x256xf32>'}}
  %q, %i = amp.quantize %x by %s {block = array<i64: 128>} : tensor<4x256xf32>, tensor<4x2xf32> to tensor<4x256xf8E4M3FN>
  return
}

// -----

func.func @quantize_block_grid(%x: tensor<4x300xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'amp.quantize' op scale of type 'tensor<4x2xf32>' does not have the block grid's shape 'tensor<4x3xf32>'}}
  %q, %i = amp.quantize %x by %s {block = array<i64: 1, 128>} : tensor<4x300xf32>, tensor<4x2xf32> to tensor<4x300xf8E4M3FN>
  return
}

// -----

func.func @dequantize_from_fp16(%x: tensor<4xf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.dequantize' op operand #0 must be tensor of an FP8 type (f8E4M3FN or f8E5M2) values}}
  %d = amp.dequantize %x by %s : tensor<4xf16>, tensor<f32> to tensor<4xf32>
  return
}

// -----

func.func @amax_block_grid(%x: tensor<4x256xf32>) {
  // expected-error @+1 {{'amp.amax' op result of type 'tensor<4x1xf32>' does not have the block grid's shape 'tensor<4x2xf32>'}}
  %a = amp.amax %x {block = array<i64: 1, 128>} : tensor<4x256xf32> to tensor<4x1xf32>
  return
}

// -----

func.func @compute_scale_previous(%a: tensor<f32>, %p: tensor<2xf32>) {
  // expected-error @+1 {{'amp.compute_scale' op previous scale of type 'tensor<2xf32>' does not match the amax's type 'tensor<f32>'}}
  %s = amp.compute_scale %a previous %p {max = 448.0 : f32} : tensor<f32>, tensor<2xf32>
  return
}

// -----

func.func @compute_scale_max(%a: tensor<f32>) {
  // expected-error @+1 {{'amp.compute_scale' op max must be positive and finite, not 0}}
  %s = amp.compute_scale %a {max = 0.0 : f32} : tensor<f32>
  return
}

// -----

func.func @update_maxes(%h: tensor<16xf32>, %a: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.fp8_update' op has 2 maxes for 1 tensors}}
  %h1, %s1 = amp.fp8_update histories(%h) amaxes(%a) scales(%s) {maxes = array<f32: 448.0, 448.0>} : tensor<16xf32>
  return
}

// -----

func.func @update_algo(%h: tensor<16xf32>, %a: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.fp8_update' op algo must be "max" or "most_recent", not "mean"}}
  %h1, %s1 = amp.fp8_update histories(%h) amaxes(%a) scales(%s) {maxes = array<f32: 448.0>, algo = "mean"} : tensor<16xf32>
  return
}

// -----

func.func @update_history_rank(%h: tensor<4x4xf32>, %a: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.fp8_update' op history #0 must be a non-empty 1-d tensor, not 'tensor<4x4xf32>'}}
  %h1, %s1 = amp.fp8_update histories(%h) amaxes(%a) scales(%s) {maxes = array<f32: 448.0>} : tensor<4x4xf32>
  return
}

// -----

func.func @matmul_two_e5m2(%a: tensor<16x32xf8E5M2>, %b: tensor<32x16xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.scaled_matmul' op does not take two E5M2 operands}}
  %y = amp.scaled_matmul %a, %s, %b, %s : tensor<16x32xf8E5M2>, tensor<f32>, tensor<32x16xf8E5M2>, tensor<f32> to tensor<16x16xbf16>
  return
}

// -----

func.func @matmul_k(%a: tensor<16x24xf8E4M3FN>, %b: tensor<24x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.scaled_matmul' op FP8 GEMMs need K to be a multiple of 16, not 24}}
  %y = amp.scaled_matmul %a, %s, %b, %s : tensor<16x24xf8E4M3FN>, tensor<f32>, tensor<24x16xf8E4M3FN>, tensor<f32> to tensor<16x16xbf16>
  return
}

// -----

func.func @matmul_n(%a: tensor<16x32xf8E4M3FN>, %b: tensor<8x32xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.scaled_matmul' op FP8 GEMMs need N to be a multiple of 16, not 8}}
  %y = amp.scaled_matmul %a, %s, %b, %s {transpose_b} : tensor<16x32xf8E4M3FN>, tensor<f32>, tensor<8x32xf8E4M3FN>, tensor<f32> to tensor<16x8xbf16>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<16x32xf8E4M3FN>, %b: tensor<48x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.scaled_matmul' op contraction sizes differ: K = 32 in a, 48 in b}}
  %y = amp.scaled_matmul %a, %s, %b, %s : tensor<16x32xf8E4M3FN>, tensor<f32>, tensor<48x16xf8E4M3FN>, tensor<f32> to tensor<16x16xbf16>
  return
}

// -----

func.func @matmul_result(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'amp.scaled_matmul' op result type 'tensor<32x16xbf16>' does not match the product's shape}}
  %y = amp.scaled_matmul %a, %s, %b, %s : tensor<16x32xf8E4M3FN>, tensor<f32>, tensor<32x16xf8E4M3FN>, tensor<f32> to tensor<32x16xbf16>
  return
}

// -----

func.func @matmul_bias(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x16xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<32xbf16>) {
  // expected-error @+1 {{'amp.scaled_matmul' op bias must be [N] = [16], not 'tensor<32xbf16>'}}
  %y = amp.scaled_matmul %a, %s, %b, %s bias %bias : tensor<16x32xf8E4M3FN>, tensor<f32>, tensor<32x16xf8E4M3FN>, tensor<f32>, tensor<32xbf16> to tensor<16x16xbf16>
  return
}
