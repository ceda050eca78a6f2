// RUN: amp-opt %s --onnxg-upgrade-opset -split-input-file -verify-diagnostics | FileCheck %s
// RUN: amp-opt %s --onnxg-upgrade-opset=opset=18 -split-input-file 2>/dev/null | FileCheck %s --check-prefix=TO18

// Opset 17 to 19, with the IR version opset 19 needs (9; 8 for opset 18): the
// reductions' axes become a Constant input (opset 18); ReduceSum's already is
// one, and a reduction without axes keeps none.
// CHECK-LABEL: module attributes {onnxg.ir_version = 9 : i64, onnxg.opset_imports = {{\[}}["", 19], ["com.microsoft", 1]]}
// CHECK:         %[[AXES:.*]] = onnxg.node "Constant"() opset 19 attributes {value = dense<1> : tensor<1xi64>}
// CHECK:         onnxg.node "ReduceMax"(%{{.*}}, %[[AXES]]) opset 19 attributes {keepdims = 0 : i64}
// CHECK:         onnxg.node "ReduceMean"(%{{.*}}) opset 19 attributes {keepdims = 0 : i64} :
// CHECK:         onnxg.node "ReduceSum"(%{{.*}}, %{{.*}}) opset 19 attributes {keepdims = 0 : i64}
// CHECK:         onnxg.node "FusedMatMul"({{.*}}) domain "com.microsoft" opset 1
// TO18-LABEL: module attributes {onnxg.ir_version = 8 : i64, onnxg.opset_imports = {{\[}}["", 18], ["com.microsoft", 1]]}
// TO18:         onnxg.node "ReduceMax"(%{{.*}}, %{{.*}}) opset 18
// expected-remark @+1 {{upgraded the default ONNX domain to opset 19 (the model imported opset 17): 5 nodes, 1 reductions given their axes as an input}}
module attributes {onnxg.opset_imports = [["", 17], ["com.microsoft", 1]]} {
func.func @reductions(%x: tensor<4x8xf32> loc("x"), %axes: tensor<1xi64> loc("axes")) -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4x4xf32>) {
  %max = onnxg.node "ReduceMax"(%x) opset 17 attributes {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<4xf32> loc(fused<"onnx.outputs">["max", "max_out"])
  %mean = onnxg.node "ReduceMean"(%x) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["mean", "mean_out"])
  %sum = onnxg.node "ReduceSum"(%x, %axes) opset 17 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4xf32> loc(fused<"onnx.outputs">["sum", "sum_out"])
  %t = onnxg.node "Transpose"(%x) opset 17 : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %mm = onnxg.node "FusedMatMul"(%x, %t) domain "com.microsoft" opset 1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %id = onnxg.node "Identity"(%mm) opset 17 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %max, %mean, %sum, %id : tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4x4xf32>
}
}

// -----

// Opset 13 to 19: BatchNormalization's running-statistics outputs meant
// training mode (opset 14 says so), RoiAlign keeps its old default
// coordinate mode (opset 16).
// CHECK-LABEL: module attributes {onnxg.ir_version = 9 : i64, onnxg.opset_imports = {{\[}}["", 19]]}
// CHECK:         onnxg.node "BatchNormalization"({{.*}}) opset 19 attributes {epsilon = {{.*}}, training_mode = 1 : i64}
// CHECK:         onnxg.node "BatchNormalization"({{.*}}) opset 19 :
// CHECK:         onnxg.node "RoiAlign"({{.*}}) opset 19 attributes {coordinate_transformation_mode = "output_half_pixel"}
// expected-remark @+1 {{upgraded the default ONNX domain to opset 19 (the model imported opset 13): 3 nodes, 0 reductions given their axes as an input}}
module attributes {onnxg.opset_imports = [["", 13]]} {
func.func @changed_defaults(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %rois: tensor<1x4xf32>, %idx: tensor<1xi64>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>) {
  %y, %mean, %var = onnxg.node "BatchNormalization"(%x, %c, %c, %c, %c) opset 13 attributes {epsilon = 1.0e-05 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %z = onnxg.node "BatchNormalization"(%x, %c, %c, %c, %c) opset 13 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %r = onnxg.node "RoiAlign"(%x, %rois, %idx) opset 13 : (tensor<2x3x4x4xf32>, tensor<1x4xf32>, tensor<1xi64>) -> tensor<1x3x1x1xf32>
  return %y, %mean, %z, %r : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>
}
}

// -----

// A module at the opset already is left as it is, without a remark.
// CHECK-LABEL: module attributes {onnxg.opset_imports = {{\[}}["", 19]]}
// CHECK:         onnxg.node "ReduceMax"(%{{.*}}) opset 19 attributes {keepdims = 0 : i64}
module attributes {onnxg.opset_imports = [["", 19]]} {
func.func @current(%x: tensor<4x8xf32>) -> tensor<f32> {
  %max = onnxg.node "ReduceMax"(%x) opset 19 attributes {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32>
  return %max : tensor<f32>
}
}

// -----

// Before opset 13, an op whose schema did not change up to 13 (Acos's is
// opset 7's) is upgraded like the others.
// CHECK-LABEL: module attributes {onnxg.ir_version = 9 : i64, onnxg.opset_imports = {{\[}}["", 19]]}
// CHECK:         onnxg.node "Acos"(%{{.*}}) opset 19
// expected-remark @+1 {{upgraded the default ONNX domain to opset 19 (the model imported opset 7): 1 nodes, 0 reductions given their axes as an input}}
module attributes {onnxg.opset_imports = [["", 7]]} {
func.func @unchanged_since_7(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = onnxg.node "Acos"(%x) opset 7 : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
}
