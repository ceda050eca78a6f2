// amp-fuse-casts folds a cast into its producer when the producer can write
// the cast's type (constants converted in place, Cast nodes retargeted) and
// into consumers that read the narrower value of an exact widening.
// RUN: amp-opt %s --amp-fuse-casts -split-input-file | FileCheck %s

// An initializer read only through casts to f16 becomes f16, rounded to
// nearest even like the cast (0.1 -> 0.099975586).
// CHECK-LABEL: func.func @initializer
// CHECK-SAME:    attributes {amp.casts_fused = 1 : i64}
// CHECK-NEXT:    %[[W:.*]] = onnxg.initializer "w" dense<[1.000000e+00, 9.997550e-02, 6.550400e+04]> : tensor<3xf16>
// CHECK-NEXT:    onnxg.node "Mul"(%{{.*}}, %[[W]])
func.func @initializer(%x: tensor<3xf16>) -> tensor<3xf16> {
  %w = onnxg.initializer "w" dense<[1.0, 0.1, 65504.0]> : tensor<3xf32>
  %w16 = amp.cast %w : tensor<3xf32> to tensor<3xf16>
  %y = onnxg.node "Mul"(%x, %w16) opset 14
      : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  return %y : tensor<3xf16>
}

// -----

// A weight that FP32 ops also read keeps its one cast.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %[[W:.*]] = onnxg.initializer "w" {{.*}} : tensor<3xf32>
// CHECK-NEXT:    amp.cast %[[W]] : tensor<3xf32> to tensor<3xf16>
func.func @shared(%x: tensor<3xf16>) -> (tensor<3xf16>, tensor<3xf32>) {
  %w = onnxg.initializer "w" dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %w16 = amp.cast %w : tensor<3xf32> to tensor<3xf16>
  %y = onnxg.node "Mul"(%x, %w16) opset 14
      : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %z = onnxg.node "Softmax"(%w) opset 13 : (tensor<3xf32>) -> tensor<3xf32>
  return %y, %z : tensor<3xf16>, tensor<3xf32>
}

// -----

// Large weights are dense_resource blobs; the converted blob is new.
// CHECK-LABEL: func.func @resource
// CHECK-NEXT:    onnxg.initializer "big" dense_resource<big_f16> : tensor<2xf16>
// CHECK:         big_f16: "0x02000000003C00C0"
func.func @resource() -> tensor<2xf16> {
  %w = onnxg.initializer "big" dense_resource<big> : tensor<2xf32>
  %w16 = amp.cast %w : tensor<2xf32> to tensor<2xf16>
  return %w16 : tensor<2xf16>
}
{-#
  dialect_resources: {
    builtin: {
      big: "0x040000000000803F000000C0"
    }
  }
#-}

// -----

// Constant nodes convert their value; two casts of one value to one type
// both go.
// CHECK-LABEL: func.func @constant_node
// CHECK-SAME:    attributes {amp.casts_fused = 2 : i64}
// CHECK-NEXT:    %[[C:.*]] = onnxg.node "Constant"() opset 13 attributes {value = dense<5.000000e-01> : tensor<2xbf16>} : () -> tensor<2xbf16>
// CHECK-NEXT:    return %[[C]], %[[C]]
func.func @constant_node() -> (tensor<2xbf16>, tensor<2xbf16>) {
  %c = onnxg.node "Constant"() opset 13
      attributes {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = amp.cast %c : tensor<2xf32> to tensor<2xbf16>
  %1 = amp.cast %c : tensor<2xf32> to tensor<2xbf16>
  return %0, %1 : tensor<2xbf16>, tensor<2xbf16>
}

// -----

// A constant converts only to a type its schema allows at its opset:
// ConstantOfShape holds float16 from opset 9, bfloat16 only from opset 20.
// CHECK-LABEL: func.func @constant_of_shape_opset
// CHECK-SAME:    attributes {amp.casts_fused = 1 : i64}
// CHECK:         "ConstantOfShape"(%{{.*}}) opset 9 attributes {value = dense<5.000000e-01> : tensor<1xf32>}
// CHECK-NEXT:    amp.cast %{{.*}} : tensor<2xf32> to tensor<2xbf16>
// CHECK:         "ConstantOfShape"(%{{.*}}) opset 9 attributes {value = dense<5.000000e-01> : tensor<1xf16>} {{.*}} -> tensor<2xf16>
func.func @constant_of_shape_opset(%shape: tensor<1xi64>)
    -> (tensor<2xbf16>, tensor<2xf16>) {
  %a = onnxg.node "ConstantOfShape"(%shape) opset 9
      attributes {value = dense<0.5> : tensor<1xf32>}
      : (tensor<1xi64>) -> tensor<2xf32>
  %0 = amp.cast %a : tensor<2xf32> to tensor<2xbf16>
  %b = onnxg.node "ConstantOfShape"(%shape) opset 9
      attributes {value = dense<0.5> : tensor<1xf32>}
      : (tensor<1xi64>) -> tensor<2xf32>
  %1 = amp.cast %b : tensor<2xf32> to tensor<2xf16>
  return %0, %1 : tensor<2xbf16>, tensor<2xf16>
}

// -----

// A Cast of opset 9 cannot write bfloat16 (opset 13 can): it stays.
// CHECK-LABEL: func.func @cast_opset
// CHECK:         %[[C:.*]] = onnxg.node "Cast"(%{{.*}}) opset 9 attributes {to = 1 : i64}
// CHECK-NEXT:    amp.cast %[[C]] : tensor<4xf32> to tensor<4xbf16>
func.func @cast_opset(%i: tensor<4xi64>) -> tensor<4xbf16> {
  %c = onnxg.node "Cast"(%i) opset 9 attributes {to = 1 : i64}
      : (tensor<4xi64>) -> tensor<4xf32>
  %0 = amp.cast %c : tensor<4xf32> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Existing Cast nodes are retargeted when rounding once gives what rounding
// twice gave: int64 -> f32 -> f16 (24 >= 2 * 11 + 2 bits) but not
// f64 -> f32 -> bf16 (bf16's subnormals are below f32's full precision).
// CHECK-LABEL: func.func @retarget
// CHECK-NEXT:    %[[A:.*]] = onnxg.node "Cast"(%{{.*}}) opset 13 attributes {to = 10 : i64} : (tensor<4xi64>) -> tensor<4xf16>
// CHECK-NEXT:    %[[B:.*]] = onnxg.node "Cast"(%{{.*}}) opset 13 attributes {to = 1 : i64} : (tensor<4xf64>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B16:.*]] = amp.cast %[[B]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT:    return %[[A]], %[[B16]]
func.func @retarget(%i: tensor<4xi64>, %d: tensor<4xf64>)
    -> (tensor<4xf16>, tensor<4xbf16>) {
  %a = onnxg.node "Cast"(%i) opset 13 attributes {to = 1 : i64}
      : (tensor<4xi64>) -> tensor<4xf32>
  %a16 = amp.cast %a : tensor<4xf32> to tensor<4xf16>
  %b = onnxg.node "Cast"(%d) opset 13 attributes {to = 1 : i64}
      : (tensor<4xf64>) -> tensor<4xf32>
  %b16 = amp.cast %b : tensor<4xf32> to tensor<4xbf16>
  return %a16, %b16 : tensor<4xf16>, tensor<4xbf16>
}

// -----

// A Cast node reads the f16 value an exact widening came from; the widening
// stays for its other users.
// CHECK-LABEL: func.func @consumer
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT:    %[[W:.*]] = amp.cast %[[X]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT:    onnxg.node "Cast"(%[[X]]) opset 13 attributes {to = 7 : i64} : (tensor<4xf16>) -> tensor<4xi64>
// CHECK-NEXT:    onnxg.node "Cast"(%[[X]])
// CHECK-NEXT:    onnxg.node "Softmax"(%[[W]])
func.func @consumer(%x: tensor<4xf16>)
    -> (tensor<4xi64>, tensor<4xi1>, tensor<4xf32>) {
  %w = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %i = onnxg.node "Cast"(%w) opset 13 attributes {to = 7 : i64}
      : (tensor<4xf32>) -> tensor<4xi64>
  %b = onnxg.node "Cast"(%w) opset 13 attributes {to = 9 : i64}
      : (tensor<4xf32>) -> tensor<4xi1>
  %s = onnxg.node "Softmax"(%w) opset 13 : (tensor<4xf32>) -> tensor<4xf32>
  return %i, %b, %s : tensor<4xi64>, tensor<4xi1>, tensor<4xf32>
}

// -----

// A narrowing cast cannot be read around.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME:    attributes {amp.casts_fused = 0 : i64}
// CHECK:         amp.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
func.func @untouched(%x: tensor<4xf32>) -> tensor<4xi64> {
  %h = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %i = onnxg.node "Cast"(%h) opset 13 attributes {to = 7 : i64}
      : (tensor<4xf16>) -> tensor<4xi64>
  return %i : tensor<4xi64>
}

// -----

// A cast of a value that the input graph already converts to the same type
// reuses that Cast node, moved up when it came later; a Cast to another type
// is not reused.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME:    attributes {amp.casts_fused = 2 : i64}
// CHECK-NEXT:    %[[EARLY:.*]] = onnxg.node "Cast"(%arg0) opset 13 attributes {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %[[A:.*]] = onnxg.node "Relu"(%[[EARLY]])
// CHECK-NEXT:    %[[LATE:.*]] = onnxg.node "Cast"(%arg1) opset 13 attributes {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %[[OTHER:.*]] = amp.cast %arg1 : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT:    %[[B:.*]] = onnxg.node "Relu"(%[[LATE]])
// CHECK-NEXT:    %[[C:.*]] = onnxg.node "Relu"(%[[LATE]])
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]], %[[OTHER]]
func.func @reuse(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xbf16>) {
  %x16 = onnxg.node "Cast"(%x) opset 13 attributes {to = 10 : i64}
      : (tensor<4xf32>) -> tensor<4xf16>
  %x16b = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %a = onnxg.node "Relu"(%x16b) opset 14 : (tensor<4xf16>) -> tensor<4xf16>
  %y16 = amp.cast %y : tensor<4xf32> to tensor<4xf16>
  %ybf = amp.cast %y : tensor<4xf32> to tensor<4xbf16>
  %b = onnxg.node "Relu"(%y16) opset 14 : (tensor<4xf16>) -> tensor<4xf16>
  %y16b = onnxg.node "Cast"(%y) opset 13 attributes {to = 10 : i64}
      : (tensor<4xf32>) -> tensor<4xf16>
  %c = onnxg.node "Relu"(%y16b) opset 14 : (tensor<4xf16>) -> tensor<4xf16>
  return %a, %b, %c, %ybf
      : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xbf16>
}

// -----

// A Cast(to=FLOAT) between two f16 values would end up converting f16 to
// f16 (its input read narrow, its result retargeted): it goes, as some
// runtimes reject such a Cast (ONNX Runtime CPU does). A Cast that still
// widens stays.
// CHECK-LABEL: func.func @identity
// CHECK-SAME:    attributes {amp.casts_fused = 3 : i64}
// CHECK-NEXT:    %[[R:.*]] = onnxg.node "Relu"(%arg0)
// CHECK-NEXT:    %[[KEPT:.*]] = onnxg.node "Cast"(%arg0) opset 13 attributes {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[R]], %[[KEPT]]
func.func @identity(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf32>) {
  %w = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %c = onnxg.node "Cast"(%w) opset 13 attributes {to = 1 : i64}
      : (tensor<4xf32>) -> tensor<4xf32>
  %d = amp.cast %c : tensor<4xf32> to tensor<4xf16>
  %r = onnxg.node "Relu"(%d) opset 14 : (tensor<4xf16>) -> tensor<4xf16>
  %kept = onnxg.node "Cast"(%w) opset 13 attributes {to = 1 : i64}
      : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %kept : tensor<4xf16>, tensor<4xf32>
}
