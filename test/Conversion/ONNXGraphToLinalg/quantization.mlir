// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// QuantizeLinear per axis: the scale and zero point become 1x3x1, x / scale
// rounds half to even, the zero point is added in f32, and the sum
// saturates to uint8's range before the conversion (unsigned, through the
// signless i8 that arith computes with).
// CHECK-LABEL: func.func @quantize_per_axis(
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 3, 1] : tensor<3xui8> into tensor<1x3x1xui8>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x2xui8>)
// CHECK:           %[[ZP:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui8 to i8
// CHECK:           %[[ZP32:.*]] = arith.uitofp %[[ZP]] : i8 to f32
// CHECK:           %[[Q:.*]] = arith.divf
// CHECK:           %[[R:.*]] = math.roundeven %[[Q]] : f32
// CHECK:           arith.addf %[[R]], %[[ZP32]] : f32
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK:           arith.maximumf
// CHECK:           arith.constant 2.550000e+02 : f32
// CHECK:           arith.minimumf
// CHECK:           %[[I:.*]] = arith.fptoui %{{.*}} : f32 to i8
// CHECK:           builtin.unrealized_conversion_cast %[[I]] : i8 to ui8
func.func @quantize_per_axis(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xui8> {
  %scale = onnxg.node "Constant"() opset 13 attributes {value = dense<[0.5, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %zp = onnxg.node "Constant"() opset 13 attributes {value = dense<[0, 10, 128]> : tensor<3xui8>} : () -> tensor<3xui8>
  %0 = onnxg.node "QuantizeLinear"(%x, %scale, %zp) opset 13 : (tensor<1x3x2xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<1x3x2xui8>
  return %0 : tensor<1x3x2xui8>
}

// -----

// DequantizeLinear per tensor, signed: (x - zero point) * scale in f32, in
// the scale's type.
// CHECK-LABEL: func.func @dequantize_per_tensor(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf16>)
// CHECK:           %[[SCALE:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:           %[[ZP:.*]] = arith.sitofp %{{.*}} : i8 to f32
// CHECK:           %[[X:.*]] = arith.sitofp %{{.*}} : i8 to f32
// CHECK:           %[[D:.*]] = arith.subf %[[X]], %[[ZP]]
// CHECK:           %[[Y:.*]] = arith.mulf %[[D]], %[[SCALE]]
// CHECK:           arith.truncf %[[Y]] : f32 to f16
func.func @dequantize_per_tensor(%x: tensor<4xi8>) -> tensor<4xf16> {
  %scale = onnxg.node "Constant"() opset 19 attributes {value = dense<0.5> : tensor<f16>} : () -> tensor<f16>
  %zp = onnxg.node "Constant"() opset 19 attributes {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %0 = onnxg.node "DequantizeLinear"(%x, %scale, %zp) opset 19 : (tensor<4xi8>, tensor<f16>, tensor<i8>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// FakeQuant returns the fake-quantized value and the mask of elements in
// [quant_min, quant_max]; FakeQuantGrad passes the gradient there.
// CHECK-LABEL: func.func @fake_quant(
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:           math.roundeven
// CHECK:           arith.constant -8.000000e+00 : f32
// CHECK:           arith.constant 7.000000e+00 : f32
// CHECK:         %[[MASK:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi1>)
// CHECK:           arith.cmpf oge
// CHECK:           arith.cmpf ole
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[MASK]] : tensor<4xf32>, tensor<4xi1>)
// CHECK:           arith.select
func.func @fake_quant(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %scale = onnxg.node "Constant"() opset 17 attributes {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnxg.node "Constant"() opset 17 attributes {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0:2 = onnxg.node "FakeQuant"(%x, %scale, %zp) domain "com.microsoft" opset 1 attributes {quant_min = -8 : i64, quant_max = 7 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>)
  %1 = onnxg.node "FakeQuantGrad"(%dy, %0#1) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  return %0#0, %1 : tensor<4xf32>, tensor<4xf32>
}
