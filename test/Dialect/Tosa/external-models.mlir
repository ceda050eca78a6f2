// TOSA ops implement PrecisionOpInterface and CastFusionOpInterface through
// external models (lib/Dialect/Tosa/ExternalModels.cpp), so the passes run
// on TOSA input: decisions (remarks), retyping with zero points, constants
// converted in place, clamp bounds retyped, an existing tosa.cast reused.
// RUN: amp-opt %s --amp-assign-precision=remarks=true -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --amp-pipeline -split-input-file 2>/dev/null | FileCheck %s
// RUN: amp-opt %s --test-amp-cost-model -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST
// RUN: amp-opt %s --amp-assign-precision="remarks=true op-class=tosa.matmul:keep-fp32" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=POLICY

// CHECK-LABEL: func.func @mlp
// CHECK-DAG:     %[[W:.*]] = amp.cast %arg1 : tensor<1x1024x1024xf32> to tensor<1x1024x1024xf16>
// CHECK-DAG:     %[[X:.*]] = amp.cast %arg0 : tensor<1x4096x1024xf32> to tensor<1x4096x1024xf16>
// CHECK-DAG:     %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}>
// CHECK-DAG:     %[[BIAS:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x1024xf16>}>
// CHECK:         %[[MM:.*]] = tosa.matmul %[[X]], %[[W]], %[[ZP]], %[[ZP]] {{.*}} -> tensor<1x4096x1024xf16>
// CHECK-NEXT:    %[[ADD:.*]] = tosa.add %[[MM]], %[[BIAS]] {{.*}} -> tensor<1x4096x1024xf16>
// CHECK-NEXT:    %[[RELU:.*]] = tosa.clamp %[[ADD]] {{{.*}}max_val = 6.000000e+00 : f16, min_val = 0.000000e+00 : f16} : (tensor<1x4096x1024xf16>) -> tensor<1x4096x1024xf16>
// CHECK-NEXT:    %[[MM2:.*]] = tosa.matmul %[[RELU]], %[[W]], %[[ZP]], %[[ZP]] {{.*}} -> tensor<1x4096x1024xf16>
// CHECK-NEXT:    %[[UP:.*]] = amp.cast %[[MM2]] : tensor<1x4096x1024xf16> to tensor<1x4096x1024xf32>
// CHECK-NEXT:    tosa.reduce_sum %[[UP]] {{.*}} -> tensor<1x4096x1xf32>
// COST: remark: flops 8.59e+09, fp32 {{.*}}: fp16
// Policies name TOSA ops by their MLIR name.
// POLICY: remark: 'f32' (policy)
// POLICY-NEXT: %mm = tosa.matmul
// COST: remark: flops 4.19e+06, fp32 {{.*}}: fp32
func.func @mlp(%x: tensor<1x4096x1024xf32>, %w: tensor<1x1024x1024xf32>)
    -> tensor<1x4096x1xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}>
      : () -> tensor<1xf32>
  %bias = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1024xf32>}>
      : () -> tensor<1x1x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %mm = tosa.matmul %x, %w, %zp, %zp
      : (tensor<1x4096x1024xf32>, tensor<1x1024x1024xf32>, tensor<1xf32>,
         tensor<1xf32>) -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f16' (infer)}}
  %add = tosa.add %mm, %bias
      : (tensor<1x4096x1024xf32>, tensor<1x1x1024xf32>)
      -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f16' (follow)}}
  %relu = tosa.clamp %add {min_val = 0.0 : f32, max_val = 6.0 : f32}
      : (tensor<1x4096x1024xf32>) -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %mm2 = tosa.matmul %relu, %w, %zp, %zp
      : (tensor<1x4096x1024xf32>, tensor<1x1024x1024xf32>, tensor<1xf32>,
         tensor<1xf32>) -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %sum = tosa.reduce_sum %mm2 {axis = 2 : i32}
      : (tensor<1x4096x1024xf32>) -> tensor<1x4096x1xf32>
  return %sum : tensor<1x4096x1xf32>
}

// -----

// A convolution keeps its FP32 accumulator (acc_type) with FP16 data, bias
// and zero points; the exp after it stays FP32 and stops propagation.
// CHECK-LABEL: func.func @conv
// CHECK:         tosa.conv2d {{.*}}acc_type = f32{{.*}} : (tensor<8x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<8x56x56x64xf16>
// CHECK:         amp.cast %{{.*}} : tensor<8x56x56x64xf16> to tensor<8x56x56x64xf32>
// CHECK-NEXT:    tosa.exp {{.*}} -> tensor<8x56x56x64xf32>
// COST: remark: flops 1.85e+09, fp32 {{.*}}: fp16
func.func @conv(%x: tensor<8x56x56x64xf32>, %w: tensor<64x3x3x64xf32>,
                %b: tensor<64xf32>) -> tensor<8x56x56x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}>
      : () -> tensor<1xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %y = tosa.conv2d %x, %w, %b, %zp, %zp
      {acc_type = f32, dilation = array<i64: 1, 1>,
       pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
      : (tensor<8x56x56x64xf32>, tensor<64x3x3x64xf32>, tensor<64xf32>,
         tensor<1xf32>, tensor<1xf32>) -> tensor<8x56x56x64xf32>
  // expected-remark @+1 {{'f32' (keep-fp32)}}
  %e = tosa.exp %y : (tensor<8x56x56x64xf32>) -> tensor<8x56x56x64xf32>
  return %e : tensor<8x56x56x64xf32>
}

// -----

// An input that the graph already casts to f16 with tosa.cast is not cast a
// second time.
// CHECK-LABEL: func.func @reuse_cast
// CHECK:         %[[C:.*]] = tosa.cast %arg0 : (tensor<1x4096x1024xf32>) -> tensor<1x4096x1024xf16>
// CHECK-NOT:     amp.cast %arg0
// CHECK:         tosa.matmul %[[C]]
func.func @reuse_cast(%x: tensor<1x4096x1024xf32>,
                      %w: tensor<1x1024x1024xf32>)
    -> (tensor<1x4096x1024xf16>, tensor<1x4096x1024xf32>) {
  %x16 = tosa.cast %x : (tensor<1x4096x1024xf32>) -> tensor<1x4096x1024xf16>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}>
      : () -> tensor<1xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %mm = tosa.matmul %x, %w, %zp, %zp
      : (tensor<1x4096x1024xf32>, tensor<1x1024x1024xf32>, tensor<1xf32>,
         tensor<1xf32>) -> tensor<1x4096x1024xf32>
  return %x16, %mm : tensor<1x4096x1024xf16>, tensor<1x4096x1024xf32>
}

// -----

// tosa.mul is an elementwise product and tosa.const gives its largest
// magnitude: a loss-scaled gradient times 1024 stays FP32 (gradient-range),
// and so does the tosa.add computed from it.
// CHECK-LABEL: func.func @gradient_range
// CHECK:         tosa.matmul {{.*}} -> tensor<1x4096x1024xf16>
// CHECK:         tosa.mul {{.*}}amp.reason = "gradient-range"{{.*}} -> tensor<1x4096x1024xf32>
// CHECK-NEXT:    tosa.add {{.*}}amp.reason = "gradient-range"{{.*}} -> tensor<1x4096x1024xf32>
func.func @gradient_range(%seed: tensor<1x1x1xf32>, %scale: tensor<f32>,
                          %d: tensor<1x4096x1024xf32>,
                          %w: tensor<1x1024x1024xf32>)
    -> tensor<1x4096x1024xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}>
      : () -> tensor<1xf32>
  %n = "tosa.const"() <{values = dense<1024.0> : tensor<1x1x1xf32>}>
      : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
      : () -> tensor<1xi8>
  %s = amp.scale_loss %seed by %scale
      : tensor<1x1x1xf32>, tensor<f32> to tensor<1x1x1xf32>
  // expected-remark @+1 {{'f32' (loss-gradient)}}
  %g = tosa.mul %d, %s, %shift
      : (tensor<1x4096x1024xf32>, tensor<1x1x1xf32>, tensor<1xi8>)
      -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f16' (always-list)}}
  %mm = tosa.matmul %g, %w, %zp, %zp
      : (tensor<1x4096x1024xf32>, tensor<1x1024x1024xf32>, tensor<1xf32>,
         tensor<1xf32>) -> tensor<1x4096x1024xf32>
  // expected-remark @+2 {{stays f32: multiplies a loss-scaled gradient by constant operand 1 of magnitude up to 1.024000e+03}}
  // expected-remark @+1 {{'f32' (gradient-range)}}
  %big = tosa.mul %mm, %n, %shift
      : (tensor<1x4096x1024xf32>, tensor<1x1x1xf32>, tensor<1xi8>)
      -> tensor<1x4096x1024xf32>
  // expected-remark @+1 {{'f32' (gradient-range)}}
  %sum = tosa.add %big, %mm
      : (tensor<1x4096x1024xf32>, tensor<1x4096x1024xf32>)
      -> tensor<1x4096x1024xf32>
  return %sum : tensor<1x4096x1024xf32>
}
