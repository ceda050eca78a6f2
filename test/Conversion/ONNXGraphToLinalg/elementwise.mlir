// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// Broadcasting follows ONNX: the vector is read along the last dimension.
// FP16 operands are widened for the op and its result rounded once.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast_f16(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK:           %[[ROUNDED:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK:           linalg.yield %[[ROUNDED]] : f16
func.func @add_broadcast_f16(%a: tensor<2x3xf16>, %b: tensor<3xf16>) -> tensor<2x3xf16> {
  %0 = onnxg.node "Add"(%a, %b) opset 17 : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// A size-1 dimension broadcasts through a constant index.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @mul_column(
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$COL]], #{{.*}}]
// CHECK:           arith.mulf
func.func @mul_column(%a: tensor<4x5xf32>, %b: tensor<4x1xf32>) -> tensor<4x5xf32> {
  %0 = onnxg.node "Mul"(%a, %b) opset 17 : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Integer arithmetic stays integer.
// CHECK-LABEL: func.func @div_int(
// CHECK:         arith.divsi
func.func @div_int(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = onnxg.node "Div"(%a, %b) opset 17 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @relu_where(
// CHECK:         arith.maximumf
// CHECK:         arith.cmpf ole
// CHECK:         arith.select
func.func @relu_where(%x: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %r = onnxg.node "Relu"(%x) opset 17 : (tensor<8xf32>) -> tensor<8xf32>
  %m = onnxg.node "LessOrEqual"(%r, %zero) opset 17 : (tensor<8xf32>, tensor<f32>) -> tensor<8xi1>
  %w = onnxg.node "Where"(%m, %zero, %g) opset 17 : (tensor<8xi1>, tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

// Cast rounds once to the target type; casts to FP8 saturate first.
// CHECK-LABEL: func.func @cast_to_fp8(
// CHECK:         arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.truncf %{{.*}} : f32 to f8E4M3FN
func.func @cast_to_fp8(%x: tensor<8xf32>) -> tensor<8xf8E4M3FN> {
  %0 = onnxg.node "Cast"(%x) opset 19 attributes {to = 17 : i64} : (tensor<8xf32>) -> tensor<8xf8E4M3FN>
  return %0 : tensor<8xf8E4M3FN>
}

// -----

// saturate=0 keeps the plain (overflowing) truncation.
// CHECK-LABEL: func.func @cast_to_fp8_no_saturate(
// CHECK-NOT:     arith.minimumf
// CHECK:         arith.truncf %{{.*}} : f32 to f8E5M2
func.func @cast_to_fp8_no_saturate(%x: tensor<8xf32>) -> tensor<8xf8E5M2> {
  %0 = onnxg.node "Cast"(%x) opset 19 attributes {to = 19 : i64, saturate = 0 : i64} : (tensor<8xf32>) -> tensor<8xf8E5M2>
  return %0 : tensor<8xf8E5M2>
}

// -----

// CHECK-LABEL: func.func @erf_pow_sqrt(
// CHECK:         math.erf
// CHECK:         math.powf
// CHECK:         math.sqrt
func.func @erf_pow_sqrt(%x: tensor<8xf32>, %e: tensor<f32>) -> tensor<8xf32> {
  %0 = onnxg.node "Erf"(%x) opset 17 : (tensor<8xf32>) -> tensor<8xf32>
  %1 = onnxg.node "Pow"(%0, %e) opset 17 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = onnxg.node "Sqrt"(%1) opset 17 : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// ORT's ReluGrad(dY, X) passes dY where X > 0.
// CHECK-LABEL: func.func @relu_grad(
// CHECK:         %[[POS:.*]] = arith.cmpf ogt
// CHECK:         arith.select %[[POS]]
func.func @relu_grad(%dy: tensor<8xf32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = onnxg.node "ReluGrad"(%dy, %x) domain "com.microsoft" opset 1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Shape arithmetic on constants folds to a constant.
// CHECK-LABEL: func.func @folded_shape(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[EQ:.*]] = arith.constant dense<false> : tensor<2xi1>
// CHECK-NEXT:    %[[SHAPE:.*]] = arith.constant dense<[16, 32]> : tensor<2xi64>
// CHECK-NEXT:    return %[[EQ]], %[[SHAPE]]
func.func @folded_shape() -> (tensor<2xi1>, tensor<2xi64>) {
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %ones = onnxg.node "ConstantOfShape"(%n) opset 17 attributes {value = dense<1> : tensor<1xi64>} : (tensor<1xi64>) -> tensor<2xi64>
  %m1 = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %neg = onnxg.node "Mul"(%ones, %m1) opset 17 : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %shape = onnxg.node "Constant"() opset 17 attributes {value = dense<[16, 32]> : tensor<2xi64>} : () -> tensor<2xi64>
  %eq = onnxg.node "Equal"(%shape, %neg) opset 17 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %w = onnxg.node "Where"(%eq, %ones, %shape) opset 17 : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %eq, %w : tensor<2xi1>, tensor<2xi64>
}

// -----

// Size arithmetic in floats on constants folds too: an output size from a
// scale (Cast, Mul, Floor, Cast back, as torch.onnx writes interpolate),
// each value rounded once to its type (1/3 in f16), and a Cast of 0.5 to
// bool is true.
// CHECK-LABEL: func.func @folded_float_sizes(
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[SIZES:.*]] = arith.constant dense<[1, 3, 10, 13]> : tensor<4xi64>
// CHECK-DAG:     %[[THIRD:.*]] = arith.constant dense<3.332520e-01> : tensor<f16>
// CHECK-DAG:     %[[TRUE:.*]] = arith.constant dense<true> : tensor<i1>
// CHECK:         return %[[SIZES]], %[[THIRD]], %[[TRUE]]
func.func @folded_float_sizes() -> (tensor<4xi64>, tensor<f16>, tensor<i1>) {
  %shape = arith.constant dense<[1, 3, 7, 9]> : tensor<4xi64>
  %scales = arith.constant dense<[1.0, 1.0, 1.5, 1.5]> : tensor<4xf32>
  %0 = onnxg.node "Cast"(%shape) opset 17 attributes {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32>
  %1 = onnxg.node "Mul"(%0, %scales) opset 17 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = onnxg.node "Floor"(%1) opset 17 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = onnxg.node "Cast"(%2) opset 17 attributes {to = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  %one = arith.constant dense<1.0> : tensor<f16>
  %three = arith.constant dense<3.0> : tensor<f16>
  %4 = onnxg.node "Div"(%one, %three) opset 17 : (tensor<f16>, tensor<f16>) -> tensor<f16>
  %half = arith.constant dense<0.5> : tensor<f32>
  %5 = onnxg.node "Cast"(%half) opset 17 attributes {to = 9 : i64} : (tensor<f32>) -> tensor<i1>
  return %3, %4, %5 : tensor<4xi64>, tensor<f16>, tensor<i1>
}

// -----

// Mod: fmod=1 is the remainder (the dividend's sign); fmod=0 moves a
// remainder whose sign differs from the divisor's by one divisor.
// CHECK-LABEL: func.func @mod(
// CHECK:         linalg.generic
// CHECK:           arith.remf
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield
// CHECK:         linalg.generic
// CHECK:           %[[REM:.*]] = arith.remsi %[[X:.*]], %[[Y:.*]] : i64
// CHECK:           %[[NONZERO:.*]] = arith.cmpi ne, %[[REM]]
// CHECK:           %[[REMNEG:.*]] = arith.cmpi slt, %[[REM]]
// CHECK:           %[[YNEG:.*]] = arith.cmpi slt, %[[Y]]
// CHECK:           %[[DIFFER:.*]] = arith.xori %[[REMNEG]], %[[YNEG]]
// CHECK:           %[[SHIFT:.*]] = arith.andi %[[NONZERO]], %[[DIFFER]]
// CHECK:           %[[MOVED:.*]] = arith.addi %[[REM]], %[[Y]]
// CHECK:           arith.select %[[SHIFT]], %[[MOVED]], %[[REM]]
func.func @mod(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>, %j: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = onnxg.node "Mod"(%a, %b) opset 17 attributes {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = onnxg.node "Mod"(%i, %j) opset 17 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// Trilu (lower, k computed): x where column - row <= k, read from a
// one-element k broadcast to every element.
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @trilu_lower(
// CHECK:         tensor.collapse_shape %{{.*}} [] : tensor<1xi64> into tensor<i64>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$K]], #{{.*}}]
// CHECK:           %[[ROW:.*]] = linalg.index 1 : index
// CHECK:           %[[R:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK:           %[[COLUMN:.*]] = linalg.index 2 : index
// CHECK:           %[[C:.*]] = arith.index_cast %[[COLUMN]] : index to i64
// CHECK:           %[[DIAGONAL:.*]] = arith.subi %[[C]], %[[R]] : i64
// CHECK:           arith.cmpi sle, %[[DIAGONAL]], %{{.*}} : i64
// CHECK:           arith.select
func.func @trilu_lower(%x: tensor<2x3x4xf32>, %k: tensor<1xi64>) -> tensor<2x3x4xf32> {
  %0 = onnxg.node "Trilu"(%x, %k) opset 14 attributes {upper = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CastLike takes its result type from operand 1 and reads only operand 0;
// Celu, ThresholdedRelu and Shrink are elementwise bodies.
// CHECK-LABEL: func.func @castlike_and_activations(
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         math.expm1
// CHECK:         arith.cmpf ogt
// CHECK:         arith.cmpf olt
// CHECK:         arith.cmpf ogt
// CHECK:         math.asinh
func.func @castlike_and_activations(%x: tensor<4xf32>, %like: tensor<2xf16>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = onnxg.node "CastLike"(%x, %like) opset 15 : (tensor<4xf32>, tensor<2xf16>) -> tensor<4xf16>
  %1 = onnxg.node "Celu"(%x) opset 12 attributes {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = onnxg.node "ThresholdedRelu"(%x) opset 10 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = onnxg.node "Shrink"(%x) opset 9 attributes {bias = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = onnxg.node "Asinh"(%x) opset 9 : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An integer Pow is raised in f64 and truncated (no pass lowers
// math.ipowi).
// CHECK-LABEL: func.func @pow_int(
// CHECK:         arith.sitofp %{{.*}} : i64 to f64
// CHECK:         math.powf %{{.*}}, %{{.*}} : f64
// CHECK:         arith.fptosi %{{.*}} : f64 to i64
func.func @pow_int(%x: tensor<3xi64>, %y: tensor<3xi64>) -> tensor<3xi64> {
  %0 = onnxg.node "Pow"(%x, %y) opset 15 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Unsigned integers: the body casts them to signless ones of their width,
// takes the unsigned division and comparison, and casts the result back.
// CHECK-LABEL: func.func @unsigned_div(
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[A:.*]]: ui8, %[[B:.*]]: ui8, %{{.*}}: ui8):
// CHECK:           %[[X:.*]] = builtin.unrealized_conversion_cast %[[A]] : ui8 to i8
// CHECK:           %[[Y:.*]] = builtin.unrealized_conversion_cast %[[B]] : ui8 to i8
// CHECK:           %[[Q:.*]] = arith.divui %[[X]], %[[Y]] : i8
// CHECK:           %[[R:.*]] = builtin.unrealized_conversion_cast %[[Q]] : i8 to ui8
// CHECK:           linalg.yield %[[R]] : ui8
// CHECK:         arith.cmpi ugt
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
func.func @unsigned_div(%x: tensor<4xui8>, %y: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %0 = onnxg.node "Div"(%x, %y) opset 17 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = onnxg.node "Greater"(%x, %y) opset 17 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = onnxg.node "Cast"(%x) opset 17 attributes {to = 1 : i64} : (tensor<4xui8>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// -----

// BitShift: a logical shift of unsigned integers, 0 from the width on.
// CHECK-LABEL: func.func @bit_shift(
// CHECK:         linalg.generic
// CHECK:           %[[S:.*]] = arith.shrui %[[X:.*]], %[[Y:.*]] : i16
// CHECK:           %[[FAR:.*]] = arith.cmpi uge, %[[Y]], %{{.*}} : i16
// CHECK:           arith.select %[[FAR]], %{{.*}}, %[[S]] : i16
func.func @bit_shift(%x: tensor<4xui16>, %y: tensor<4xui16>) -> tensor<4xui16> {
  %0 = onnxg.node "BitShift"(%x, %y) opset 17 attributes {direction = "RIGHT"} : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

// Outputs ONNX could not type take their element type from the op: a
// comparison gives booleans and a Cast its target, not the operands' f32.
// CHECK-LABEL: func.func @untyped_comparison_and_cast(
// CHECK:         arith.cmpf ogt
// CHECK-NEXT:    linalg.yield %{{.*}} : i1
// CHECK:         } -> tensor<4xi1>
// CHECK:         arith.uitofp %{{.*}} : i1 to f16
// CHECK:         } -> tensor<4xf16>
func.func @untyped_comparison_and_cast(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<*xi1>, tensor<*xf16>) {
  %0 = onnxg.node "Greater"(%x, %y) opset 17 : (tensor<4xf32>, tensor<4xf32>) -> tensor<*xi1>
  %1 = onnxg.node "Cast"(%0) opset 17 attributes {to = 10 : i64} : (tensor<*xi1>) -> tensor<*xf16>
  return %0, %1 : tensor<*xi1>, tensor<*xf16>
}

// Outputs ONNX could not type at all take the element type the op's schema
// fixes: Where its branches' i64 (not the condition's i1), IsNaN and Not
// booleans (not the operand's f32).
// CHECK-LABEL: func.func @unknown_result_types(
// CHECK:         arith.select %{{.*}} : i64
// CHECK:         } -> tensor<4xi64>
// CHECK:         arith.cmpf uno
// CHECK:         } -> tensor<4xi1>
// CHECK:         arith.xori
// CHECK:         } -> tensor<4xi1>
func.func @unknown_result_types(%c: tensor<4xi1>, %a: tensor<4xi64>, %b: tensor<4xi64>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = onnxg.node "Where"(%c, %a, %b) opset 17 : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> !onnxg.unknown
  %1 = onnxg.node "Cast"(%0) opset 17 attributes {to = 1 : i64} : (!onnxg.unknown) -> tensor<4xf32>
  %2 = onnxg.node "IsNaN"(%x) opset 17 : (tensor<4xf32>) -> !onnxg.unknown
  %3 = onnxg.node "Not"(%2) opset 17 : (!onnxg.unknown) -> !onnxg.unknown
  %4 = onnxg.node "Cast"(%3) opset 17 attributes {to = 1 : i64} : (!onnxg.unknown) -> tensor<4xf32>
  return %1, %4 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Mish (opset 18) is x tanh(log1p(exp(x))); the bitwise ops (opset 18)
// are arith's integer ops, BitwiseNot an xor with all ones.
// CHECK-LABEL: func.func @mish_and_bitwise(
// CHECK:         math.exp
// CHECK-NEXT:    math.log1p
// CHECK-NEXT:    math.tanh
// CHECK-NEXT:    arith.mulf
// CHECK:         arith.andi
// CHECK:         arith.ori
// CHECK:         arith.xori
// CHECK:         %[[ONES:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    arith.xori %{{.*}}, %[[ONES]] : i32
func.func @mish_and_bitwise(%x: tensor<4xf32>, %a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = onnxg.node "Mish"(%x) opset 18 : (tensor<4xf32>) -> tensor<4xf32>
  %1 = onnxg.node "BitwiseAnd"(%a, %b) opset 18 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = onnxg.node "BitwiseOr"(%a, %b) opset 18 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = onnxg.node "BitwiseXor"(%a, %b) opset 18 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = onnxg.node "BitwiseNot"(%a) opset 18 : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}
