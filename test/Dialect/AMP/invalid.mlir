// RUN: amp-opt %s -split-input-file -verify-diagnostics

func.func @cast_to_fp8_without_scale(%x: tensor<16xf32>) {
  // expected-error @+1 {{'amp.cast' op requires a 'scale' attribute when casting to 'f8E4M3FN'}}
  %0 = amp.cast %x : tensor<16xf32> to tensor<16xf8E4M3FN>
  return
}

// -----

func.func @scale_on_fp16(%x: tensor<16xf32>) {
  // expected-error @+1 {{'amp.cast' op takes a 'scale' attribute only when casting to an 8-bit float, not to 'f16'}}
  %0 = amp.cast %x {scale = 2.0 : f32} : tensor<16xf32> to tensor<16xf16>
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
  // expected-error @+1 {{'amp.cast' op operand #0 must be tensor of floating-point values}}
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
