// amp-materialize-casts applies amp.precision: data operands of low ops are
// cast down (one cast per value and type, shared), their data results
// retyped; FP32 consumers, undecided ops and the function results read the
// value cast back up. Other slots keep their types.
// RUN: amp-opt %s --amp-materialize-casts -split-input-file | FileCheck %s
// RUN: amp-opt %s --amp-materialize-casts=keep-io-types=false -split-input-file | FileCheck %s --check-prefix=IO

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[X:.*]]: tensor<64x32xf32>, %[[W:.*]]: tensor<32x32xf32>)
// CHECK-DAG:     %[[W16:.*]] = amp.cast %[[W]] : tensor<32x32xf32> to tensor<32x32xf16>
// CHECK-DAG:     %[[X16:.*]] = amp.cast %[[X]] : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK:         %[[M:.*]] = onnxg.node "MatMul"(%[[X16]], %[[W16]]) {{.*}} -> tensor<64x32xf16>
// CHECK-NEXT:    %[[M32:.*]] = amp.cast %[[M]] : tensor<64x32xf16> to tensor<64x32xf32>
// CHECK-NEXT:    %[[R:.*]] = onnxg.node "Relu"(%[[M]]) {{.*}} -> tensor<64x32xf16>
// CHECK-NEXT:    %[[R32:.*]] = amp.cast %[[R]] : tensor<64x32xf16> to tensor<64x32xf32>
// The second low consumer of W shares its cast.
// CHECK-NEXT:    %[[N:.*]] = onnxg.node "MatMul"(%[[R]], %[[W16]]) {{.*}} -> tensor<64x32xf16>
// CHECK-NEXT:    %[[N32:.*]] = amp.cast %[[N]] : tensor<64x32xf16> to tensor<64x32xf32>
// CHECK-NEXT:    %[[S:.*]] = onnxg.node "Softmax"(%[[N32]]) {{.*}} -> tensor<64x32xf32>
// An op without a decision reads the FP32 value.
// CHECK-NEXT:    onnxg.node "Mystery"(%[[M32]])
// CHECK-NEXT:    return %[[S]], %[[R32]] : tensor<64x32xf32>, tensor<64x32xf32>
func.func @chain(%x: tensor<64x32xf32>, %w: tensor<32x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %m = onnxg.node "MatMul"(%x, %w) opset 13 {amp.precision = f16}
      : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %r = onnxg.node "Relu"(%m) opset 14 {amp.precision = f16}
      : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %n = onnxg.node "MatMul"(%r, %w) opset 13 {amp.precision = f16}
      : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %s = onnxg.node "Softmax"(%n) opset 13 {amp.precision = f32}
      : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %u = onnxg.node "Mystery"(%m) domain "com.example" opset 1
      : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return %s, %r : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// Shape and statistics slots keep their types.
// CHECK-LABEL: func.func @slots
// CHECK:         %[[Y:.*]] = onnxg.node "Reshape"(%{{.*}}, %[[SHAPE:.*]]) {{.*}} : (tensor<8x4xbf16>, tensor<2xi64>) -> tensor<4x8xbf16>
// CHECK:         onnxg.node "BatchNormalization"(%{{.*}}, %[[ST:[^,]*]], %[[ST]], %[[ST]], %[[ST]]) {{.*}} : (tensor<2x4x3x3xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xbf16>
func.func @slots(%x: tensor<8x4xf32>, %shape: tensor<2xi64>,
                 %img: tensor<2x4x3x3xf32>, %stat: tensor<4xf32>) {
  %0 = onnxg.node "Reshape"(%x, %shape) opset 14 {amp.precision = bf16}
      : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  %1 = onnxg.node "BatchNormalization"(%img, %stat, %stat, %stat, %stat)
      opset 15 {amp.precision = bf16}
      : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
         tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return
}

// -----

// keep-io-types=false: an input only low ops read takes the low type, and a
// low result is returned as it is; an input an FP32 op also reads keeps its
// type and its cast.
// CHECK-LABEL: func.func @io_types
// CHECK-SAME:    -> (tensor<8x8xf32>, tensor<8x8xf32>)
// IO-LABEL: func.func @io_types
// IO-SAME:    (%[[X:.*]]: tensor<8x8xf16>, %[[W:.*]]: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>)
// IO-NEXT:    %[[W16:.*]] = amp.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xf16>
// IO-NEXT:    %[[M:.*]] = onnxg.node "MatMul"(%[[X]], %[[W16]])
// IO-NEXT:    %[[S:.*]] = onnxg.node "Softmax"(%[[W]])
// IO-NEXT:    return %[[M]], %[[S]] : tensor<8x8xf16>, tensor<8x8xf32>
func.func @io_types(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = onnxg.node "MatMul"(%x, %w) opset 13 {amp.precision = f16}
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = onnxg.node "Softmax"(%w) opset 13 {amp.precision = f32}
      : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m, %s : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Subgraphs: a value from the enclosing block is cast there, once per step
// rather than once per iteration; the loop-carried state is cast at the
// body's edges and keeps its type.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT:    %[[W:.*]] = amp.cast %arg2 : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK:         onnxg.node "Loop"
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %[[H:.*]]: tensor<8x8xf32>):
// CHECK-NEXT:      %[[H16:.*]] = amp.cast %[[H]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT:      %[[M:.*]] = onnxg.node "MatMul"(%[[H16]], %[[W]]) {{.*}} -> tensor<8x8xf16>
// CHECK-NEXT:      %[[M32:.*]] = amp.cast %[[M]] : tensor<8x8xf16> to tensor<8x8xf32>
// CHECK-NEXT:      onnxg.yield ["c", "m"] %{{.*}}, %[[M32]] : tensor<i1>, tensor<8x8xf32>
// CHECK-NEXT:    } {{.*}}: (tensor<i64>, none, tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @loop(%n: tensor<i64>, %x: tensor<8x8xf32>, %w: tensor<8x8xf32>)
    -> tensor<8x8xf32> {
  %none = onnxg.none
  %out = onnxg.node "Loop"(%n, %none, %x) opset 17 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %h: tensor<8x8xf32>):
    %m = onnxg.node "MatMul"(%h, %w) opset 13 {amp.precision = f16}
        : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    onnxg.yield ["c", "m"] %c, %m : tensor<i1>, tensor<8x8xf32>
  } {amp.precision = f32} : (tensor<i64>, none, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %out : tensor<8x8xf32>
}

// -----

// A Constant decided low (by a policy: it has no data inputs to follow)
// holds its value in the low type.
// CHECK-LABEL: func.func @constant
// CHECK-NEXT:    onnxg.node "Constant"() opset 13 attributes {value = dense<9.997550e-02> : tensor<2xf16>} {{.*}} : () -> tensor<2xf16>
func.func @constant() -> tensor<2xf32> {
  %c = onnxg.node "Constant"() opset 13
      attributes {value = dense<0.1> : tensor<2xf32>} {amp.precision = f16}
      : () -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// An op decided FP32 keeps its types: an f64 input is not narrowed to f32
// and an f16 graph value is not widened; only values this pass made low are
// cast back up for it.
// CHECK-LABEL: func.func @fp32_keeps_types
// CHECK-NEXT:    %[[D:.*]] = onnxg.node "Mul"(%arg0, %arg0) {{.*}} : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %[[H:.*]] = onnxg.node "Softmax"(%arg1) {{.*}} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    return %[[D]], %[[H]]
func.func @fp32_keeps_types(%d: tensor<4xf64>, %h: tensor<4xf16>)
    -> (tensor<4xf64>, tensor<4xf16>) {
  %0 = onnxg.node "Mul"(%d, %d) opset 14 {amp.precision = f32}
      : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %1 = onnxg.node "Softmax"(%h) opset 13 {amp.precision = f32}
      : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf64>, tensor<4xf16>
}
