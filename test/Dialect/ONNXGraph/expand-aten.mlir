// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-aten))' -split-input-file | FileCheck %s --enable-var-scope

// ORTModule's nn.Embedding: the rows of the weight (the gradient's inputs
// padding_idx, scale_grad_by_freq and sparse do not change the forward).
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:      %[[W:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>)
// CHECK:         %[[ROWS:.*]] = onnxg.node "Gather"(%[[W]], %[[IDS]]) {{.*}}{axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK:         return %[[ROWS]]
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @embedding(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %pad = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %0 = onnxg.node "ATen"(%w, %ids, %pad, %false, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "embedding", overload_name = ""} : (tensor<10x4xf32>, tensor<2x3xi64>, tensor<i64>, tensor<i1>, tensor<i1>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
}

// -----

// Its gradient, with padding_idx 0 and scale_grad_by_freq, num_weights as
// ORTModule computes it (the result's rows, typed at import): the padding
// positions' gradients zeroed, each divided by its index's count (a
// GatherGrad of ones, gathered back), then summed into the rows.
// CHECK-LABEL: func.func @embedding_backward(
// CHECK-SAME:      %[[DY:.*]]: tensor<2x3x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>
// CHECK:         %[[IS_PAD:.*]] = onnxg.node "Equal"(%[[IDS]], %{{.*}}) {{.*}} : (tensor<2x3xi64>, tensor<i64>)
// CHECK:         %[[COLUMN:.*]] = onnxg.node "Reshape"(%[[IS_PAD]], %{{.*}}) {{.*}} -> tensor<2x3x1xi1>
// CHECK:         %[[KEPT:.*]] = onnxg.node "Where"(%[[COLUMN]], %{{.*}}, %[[DY]]) {{.*}} -> tensor<2x3x4xf32>
// CHECK:         %[[ONES:.*]] = onnxg.node "Constant"() {{.*}}dense<1.000000e+00> : tensor<2x3xf32>
// CHECK:         %[[COUNT_SHAPE:.*]] = onnxg.node "Constant"() {{.*}}dense<10> : tensor<1xi64>
// CHECK:         %[[COUNTS:.*]] = onnxg.node "GatherGrad"(%[[COUNT_SHAPE]], %[[IDS]], %[[ONES]]) domain "com.microsoft" {{.*}} -> tensor<10xf32>
// CHECK:         %[[FREQ:.*]] = onnxg.node "Gather"(%[[COUNTS]], %[[IDS]]) {{.*}} -> tensor<2x3xf32>
// CHECK:         %[[FREQ_COLUMN:.*]] = onnxg.node "Reshape"(%[[FREQ]], %{{.*}}) {{.*}} -> tensor<2x3x1xf32>
// CHECK:         %[[SCALED:.*]] = onnxg.node "Div"(%[[KEPT]], %[[FREQ_COLUMN]])
// CHECK:         %[[SHAPE:.*]] = onnxg.node "Constant"() {{.*}}dense<[10, 4]> : tensor<2xi64>
// CHECK:         %[[DW:.*]] = onnxg.node "GatherGrad"(%[[SHAPE]], %[[IDS]], %[[SCALED]]) domain "com.microsoft" {{.*}}{axis = 0 : i64} : {{.*}} -> tensor<10x4xf32>
// CHECK:         return %[[DW]]
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @embedding_backward(%dy: tensor<2x3x4xf32>, %ids: tensor<2x3xi64>, %rows: tensor<i64>) -> tensor<10x4xf32> {
  %pad = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %true = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %0 = onnxg.node "ATen"(%dy, %ids, %rows, %pad, %true, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "aten::embedding_backward", overload_name = ""} : (tensor<2x3x4xf32>, tensor<2x3xi64>, tensor<i64>, tensor<i64>, tensor<i1>, tensor<i1>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
}

// -----

// MaxPool2d: ONNX's MaxPool with PyTorch's window (an empty stride is the
// kernel's; padding on both sides), its Indices (flat over the tensor)
// less each plane's offset, PyTorch's; the gradient adds the offsets back
// for MaxPoolGrad.
// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5xf32>, %[[DY:.*]]: tensor<1x2x3x3xf32>
// CHECK:         %[[Y:.*]], %[[I:.*]] = onnxg.node "MaxPool"(%[[X]]) {{.*}}{ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
// CHECK:         %[[OFFSETS:.*]] = onnxg.node "Constant"() {{.*}}dense<{{\[\[\[\[}}0]], {{\[\[}}25]]]]> : tensor<1x2x1x1xi64>
// CHECK:         %[[PLANE_I:.*]] = onnxg.node "Sub"(%[[I]], %[[OFFSETS]])
// CHECK:         %[[FLAT_I:.*]] = onnxg.node "Add"(%[[PLANE_I]], %{{.*}})
// CHECK:         %[[DX:.*]] = onnxg.node "MaxPoolGrad"(%[[DY]], %[[FLAT_I]]) {{.*}} -> tensor<1x2x5x5xf32>
// CHECK:         return %[[Y]], %[[DX]]
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @max_pool(%x: tensor<1x2x5x5xf32>, %dy: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) {
  %kernel = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %stride = onnxg.node "Constant"() opset 17 attributes {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
  %pad = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %y, %i = onnxg.node "ATen"(%x, %kernel, %stride, %pad, %one, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "max_pool2d_with_indices"} : (tensor<1x2x5x5xf32>, tensor<2xi64>, tensor<0xf32>, tensor<2xi64>, tensor<2xi64>, tensor<i1>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
  %dx = onnxg.node "ATen"(%dy, %x, %kernel, %stride, %pad, %one, %false, %i) domain "org.pytorch.aten" opset 1 attributes {operator = "max_pool2d_with_indices_backward"} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>, tensor<2xi64>, tensor<0xf32>, tensor<2xi64>, tensor<2xi64>, tensor<i1>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
  return %y, %dx : tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>
}
}

// -----

// AvgPool2d without counting the padding, and its gradient; an adaptive
// average pool to 2x2 of 4x4: windows of 2x2.
// CHECK-LABEL: func.func @average_pools(
// CHECK:         %[[Y:.*]] = onnxg.node "AveragePool"(%{{.*}}) {{.*}}{ceil_mode = 0 : i64, count_include_pad = 0 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK:         %[[DX:.*]] = onnxg.node "AveragePoolGrad"(%{{.*}}) {{.*}}count_include_pad = 0 : i64, kernel_shape = array<i64: 3, 3>{{.*}} -> tensor<1x2x4x4xf32>
// CHECK:         %[[A:.*]] = onnxg.node "AveragePool"(%{{.*}}) {{.*}}{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
// CHECK:         %[[DA:.*]] = onnxg.node "AveragePoolGrad"(%{{.*}}) {{.*}}{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK:         return %[[Y]], %[[DX]], %[[A]], %[[DA]]
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @average_pools(%x: tensor<1x2x4x4xf32>, %dy: tensor<1x2x4x4xf32>, %da: tensor<1x2x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %kernel = onnxg.node "Constant"() opset 17 attributes {value = dense<3> : tensor<2xi64>} : () -> tensor<2xi64>
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %none = onnxg.none
  %y = onnxg.node "ATen"(%x, %kernel, %one, %one, %false, %false, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "avg_pool2d"} : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<i1>, tensor<i1>, none) -> tensor<1x2x4x4xf32>
  %dx = onnxg.node "ATen"(%dy, %x, %kernel, %one, %one, %false, %false, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "avg_pool2d_backward"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<i1>, tensor<i1>, none) -> tensor<1x2x4x4xf32>
  %size = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnxg.node "ATen"(%x, %size) domain "org.pytorch.aten" opset 1 attributes {operator = "_adaptive_avg_pool2d"} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<1x2x2x2xf32>
  %dxa = onnxg.node "ATen"(%da, %x) domain "org.pytorch.aten" opset 1 attributes {operator = "_adaptive_avg_pool2d_backward"} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y, %dx, %a, %dxa : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>
}
}

// -----

// .T of unknown rank at export, and argmax over the flattened input
// (no dim) keeping the dimensions.
// CHECK-LABEL: func.func @transpose_and_argmax(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[T:.*]] = onnxg.node "Transpose"(%[[X]]) {{.*}}{perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK:         %[[FLAT:.*]] = onnxg.node "Reshape"(%[[X]], %{{.*}}) {{.*}} -> tensor<24xf32>
// CHECK:         %[[I:.*]] = onnxg.node "ArgMax"(%[[FLAT]]) {{.*}}{axis = 0 : i64, keepdims = 0 : i64} : (tensor<24xf32>) -> tensor<i64>
// CHECK:         %[[KEPT:.*]] = onnxg.node "Reshape"(%[[I]], %{{.*}}) {{.*}} -> tensor<1x1x1xi64>
// CHECK:         %[[J:.*]] = onnxg.node "ArgMax"(%[[X]]) {{.*}}{axis = 2 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
// CHECK:         return %[[T]], %[[KEPT]], %[[J]]
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @transpose_and_argmax(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<1x1x1xi64>, tensor<2x3xi64>) {
  %t = onnxg.node "ATen"(%x) domain "org.pytorch.aten" opset 1 attributes {operator = "numpy_T"} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %none = onnxg.none
  %true = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %i = onnxg.node "ATen"(%x, %none, %true) domain "org.pytorch.aten" opset 1 attributes {operator = "argmax"} : (tensor<2x3x4xf32>, none, tensor<i1>) -> tensor<1x1x1xi64>
  %last = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %j = onnxg.node "ATen"(%x, %last, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "argmax"} : (tensor<2x3x4xf32>, tensor<i64>, tensor<i1>) -> tensor<2x3xi64>
  return %t, %i, %j : tensor<*xf32>, tensor<1x1x1xi64>, tensor<2x3xi64>
}
}

// -----

// max of all elements; min over dim 1 with its first index; the gradient
// of a max over dim 1 (without keepdim) scattered back at the indices.
// CHECK-LABEL: func.func @extremes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[DY:.*]]: tensor<2x4xf32>, %[[I:.*]]: tensor<2x4xi64>
// CHECK:         %[[ALL:.*]] = onnxg.node "ReduceMax"(%[[X]]) {{.*}}{keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK:         %[[LOW:.*]] = onnxg.node "ReduceMin"(%[[X]], %{{.*}}) {{.*}}{keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
// CHECK:         %[[WHERE:.*]] = onnxg.node "ArgMin"(%[[X]]) {{.*}}{axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
// CHECK:         %[[DY_KEPT:.*]] = onnxg.node "Reshape"(%[[DY]], %{{.*}}) {{.*}} -> tensor<2x1x4xf32>
// CHECK:         %[[I_KEPT:.*]] = onnxg.node "Reshape"(%[[I]], %{{.*}}) {{.*}} -> tensor<2x1x4xi64>
// CHECK:         %[[SHAPE:.*]] = onnxg.node "Constant"() {{.*}}dense<[2, 3, 4]> : tensor<3xi64>
// CHECK:         %[[DX:.*]] = onnxg.node "GatherElementsGrad"(%[[DY_KEPT]], %[[SHAPE]], %[[I_KEPT]]) domain "com.microsoft" {{.*}}{axis = 1 : i64} {{.*}} -> tensor<2x3x4xf32>
// CHECK:         return %[[ALL]], %[[LOW]], %[[WHERE]], %[[DX]]
module attributes {onnxg.opset_imports = [["", 18], ["org.pytorch.aten", 1]]} {
func.func @extremes(%x: tensor<2x3x4xf32>, %dy: tensor<2x4xf32>, %i: tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x3x4xf32>) {
  %all = onnxg.node "ATen"(%x) domain "org.pytorch.aten" opset 1 attributes {operator = "max", overload_name = ""} : (tensor<2x3x4xf32>) -> tensor<f32>
  %one = onnxg.node "Constant"() opset 18 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %false = onnxg.node "Constant"() opset 18 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %low, %where = onnxg.node "ATen"(%x, %one, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "min", overload_name = "dim"} : (tensor<2x3x4xf32>, tensor<i64>, tensor<i1>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  %shape = onnxg.node "Shape"(%x) opset 18 : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %dx = onnxg.node "ATen"(%dy, %one, %i, %shape, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "value_selecting_reduction_backward"} : (tensor<2x4xf32>, tensor<i64>, tensor<2x4xi64>, tensor<3xi64>, tensor<i1>) -> tensor<2x3x4xf32>
  return %all, %low, %where, %dx : tensor<f32>, tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x3x4xf32>
}
}

// -----

// Nearest upsampling by whole scale factors (2, 3): each element repeated
// into a 2x3 block; the gradient sums each block.
// CHECK-LABEL: func.func @upsample_nearest(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x3x4xf32>, %[[DY:.*]]: tensor<1x2x6x12xf32>
// CHECK:         %[[COLUMNS:.*]] = onnxg.node "Reshape"(%[[X]], %{{.*}}) {{.*}} -> tensor<1x2x3x1x4x1xf32>
// CHECK:         %[[BLOCKS:.*]] = onnxg.node "Expand"(%[[COLUMNS]], %{{.*}}) {{.*}} -> tensor<1x2x3x2x4x3xf32>
// CHECK:         %[[Y:.*]] = onnxg.node "Reshape"(%[[BLOCKS]], %{{.*}}) {{.*}} -> tensor<1x2x6x12xf32>
// CHECK:         %[[PARTS:.*]] = onnxg.node "Reshape"(%[[DY]], %{{.*}}) {{.*}} -> tensor<1x2x3x2x4x3xf32>
// CHECK:         %[[AXES:.*]] = onnxg.node "Constant"() {{.*}}dense<[3, 5]> : tensor<2xi64>
// CHECK:         %[[DX:.*]] = onnxg.node "ReduceSum"(%[[PARTS]], %[[AXES]]) {{.*}}{keepdims = 0 : i64} {{.*}} -> tensor<1x2x3x4xf32>
// CHECK:         return %[[Y]], %[[DX]]
module attributes {onnxg.opset_imports = [["", 18], ["org.pytorch.aten", 1]]} {
func.func @upsample_nearest(%x: tensor<1x2x3x4xf32>, %dy: tensor<1x2x6x12xf32>) -> (tensor<1x2x6x12xf32>, tensor<1x2x3x4xf32>) {
  %none = onnxg.none
  %factors = onnxg.node "Constant"() opset 18 attributes {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = onnxg.node "ATen"(%x, %none, %factors) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_nearest2d", overload_name = "vec"} : (tensor<1x2x3x4xf32>, none, tensor<2xf32>) -> tensor<1x2x6x12xf32>
  %out = onnxg.node "Constant"() opset 18 attributes {value = dense<[6, 12]> : tensor<2xi64>} : () -> tensor<2xi64>
  %in = onnxg.node "Constant"() opset 18 attributes {value = dense<[1, 2, 3, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %dx = onnxg.node "ATen"(%dy, %out, %in, %none, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_nearest2d_backward"} : (tensor<1x2x6x12xf32>, tensor<2xi64>, tensor<4xi64>, none, none) -> tensor<1x2x3x4xf32>
  return %y, %dx : tensor<1x2x6x12xf32>, tensor<1x2x3x4xf32>
}
}

// -----

// GroupNorm over 2 groups of 2 channels (N, C and HxW inputs are read from
// the static shape): per sample and group mean and 1/sqrt(var + eps), in
// f32; the gradient's dX from the group means of dY*w and dY*w*x^, dweight
// and dbias summed over samples and positions.
// CHECK-LABEL: func.func @group_norm(
// CHECK:         %[[GROUPED:.*]] = onnxg.node "Reshape"(%{{.*}}, %{{.*}}) {{.*}} -> tensor<2x2x18xf32>
// CHECK:         %[[MEAN:.*]] = onnxg.node "ReduceMean"(%[[GROUPED]], %{{.*}}) {{.*}}{keepdims = 1 : i64} {{.*}} -> tensor<2x2x1xf32>
// CHECK:         %[[CENTERED:.*]] = onnxg.node "Sub"(%[[GROUPED]], %[[MEAN]])
// CHECK:         %[[EPS:.*]] = onnxg.node "Constant"() {{.*}}dense<9.99999974E-6> : tensor<f32>
// CHECK:         onnxg.node "Add"(%{{.*}}, %[[EPS]])
// CHECK:         %[[RSTD:.*]] = onnxg.node "Reciprocal"
// CHECK:         %[[Y:.*]] = onnxg.node "Add"({{.*}}) {{.*}} -> tensor<2x4x3x3xf32>
// CHECK:         %[[STAT:.*]] = onnxg.node "Reshape"(%[[MEAN]], %{{.*}}) {{.*}} -> tensor<2x2xf32>
// CHECK:         onnxg.node "ReduceMean"({{.*}}) {{.*}} -> tensor<2x2x1xf32>
// CHECK:         onnxg.node "ReduceMean"({{.*}}) {{.*}} -> tensor<2x2x1xf32>
// CHECK:         %[[DX:.*]] = onnxg.node "Reshape"({{.*}}) {{.*}} -> tensor<2x4x3x3xf32>
// CHECK:         %[[DW:.*]] = onnxg.node "ReduceSum"({{.*}}) {{.*}} -> tensor<4xf32>
// CHECK:         %[[DB:.*]] = onnxg.node "ReduceSum"({{.*}}) {{.*}} -> tensor<4xf32>
// CHECK:         return %[[Y]], %[[STAT]], %[[DX]], %[[DW]], %[[DB]]
module attributes {onnxg.opset_imports = [["", 18], ["org.pytorch.aten", 1]]} {
func.func @group_norm(%x: tensor<2x4x3x3xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>, %n: tensor<i64>, %dy: tensor<2x4x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x2xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %groups = onnxg.node "Constant"() opset 18 attributes {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %eps = onnxg.node "Constant"() opset 18 attributes {value = dense<1.0e-05> : tensor<f64>} : () -> tensor<f64>
  %eps32 = onnxg.node "Cast"(%eps) opset 18 attributes {to = 1 : i64} : (tensor<f64>) -> tensor<f32>
  %y, %mean, %rstd = onnxg.node "ATen"(%x, %w, %b, %n, %n, %n, %groups, %eps32) domain "org.pytorch.aten" opset 1 attributes {operator = "native_group_norm"} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>) -> (tensor<2x4x3x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  %mask = onnxg.node "Constant"() opset 18 attributes {value = dense<true> : tensor<3xi1>} : () -> tensor<3xi1>
  %dx, %dw, %db = onnxg.node "ATen"(%dy, %x, %mean, %rstd, %w, %n, %n, %n, %groups, %mask) domain "org.pytorch.aten" opset 1 attributes {operator = "native_group_norm_backward"} : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<3xi1>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %mean, %dx, %dw, %db : tensor<2x4x3x3xf32>, tensor<2x2xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
}
}

// -----

// BCEWithLogitsLoss (mean) with pos_weight, in f32 from f16 logits:
// (1 - t) x + l (log(1 + exp(-|x|)) + relu(-x)), l = 1 + (pw - 1) t, then
// the mean; its gradient (l sigmoid(x) - pw t) grad / N.
// CHECK-LABEL: func.func @logistic_loss(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3xf16>
// CHECK:         %[[X32:.*]] = onnxg.node "Cast"(%[[X]]) {{.*}} -> tensor<2x3xf32>
// CHECK:         onnxg.node "Abs"(%[[X32]])
// CHECK:         onnxg.node "Log"
// CHECK:         onnxg.node "Relu"
// CHECK:         %[[LOSS:.*]] = onnxg.node "ReduceMean"({{.*}}) {{.*}}{keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK:         onnxg.node "Sigmoid"
// CHECK:         %[[N:.*]] = onnxg.node "Constant"() {{.*}}dense<6.000000e+00> : tensor<f32>
// CHECK:         %[[DX:.*]] = onnxg.node "Div"(%{{.*}}, %[[N]]) {{.*}} -> tensor<2x3xf32>
// CHECK:         %[[DX16:.*]] = onnxg.node "Cast"(%[[DX]]) {{.*}} -> tensor<2x3xf16>
// CHECK:         return %[[LOSS]], %[[DX16]]
module attributes {onnxg.opset_imports = [["", 18], ["org.pytorch.aten", 1]]} {
func.func @logistic_loss(%x: tensor<2x3xf16>, %t: tensor<2x3xf32>, %pw: tensor<3xf32>, %dy: tensor<f32>) -> (tensor<f32>, tensor<2x3xf16>) {
  %none = onnxg.none
  %mean = onnxg.node "Constant"() opset 18 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %loss = onnxg.node "ATen"(%x, %t, %none, %pw, %mean) domain "org.pytorch.aten" opset 1 attributes {operator = "binary_cross_entropy_with_logits"} : (tensor<2x3xf16>, tensor<2x3xf32>, none, tensor<3xf32>, tensor<i64>) -> tensor<f32>
  %dx = onnxg.node "ATen"(%dy, %x, %t, %none, %pw, %mean) domain "org.pytorch.aten" opset 1 attributes {operator = "binary_cross_entropy_with_logits_backward"} : (tensor<f32>, tensor<2x3xf16>, tensor<2x3xf32>, none, tensor<3xf32>, tensor<i64>) -> tensor<2x3xf16>
  return %loss, %dx : tensor<f32>, tensor<2x3xf16>
}
}

// -----

// The diagonal above the main one of dims 1 and 2: they move last and
// flatten (they are last already: no Transpose), and positions 1, 6, 11
// (row k, column k + 1) are gathered; the gradient scatters back. unfold of dim 1 by windows
// of 2 every 2: a Gather of [[0, 1], [2, 3]], the window's axis moved last.
// CHECK-LABEL: func.func @diagonal_and_unfold(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x5x4xf32>, %[[DD:[^:]*]]: tensor<2x3xf32>
// CHECK-NOT:     "Transpose"
// CHECK:         %[[FLAT:.*]] = onnxg.node "Reshape"(%[[X]], %{{.*}}) {{.*}} -> tensor<2x20xf32>
// CHECK:         %[[AT:.*]] = onnxg.node "Constant"() {{.*}}dense<[1, 6, 11]> : tensor<3xi64>
// CHECK:         %[[D:.*]] = onnxg.node "Gather"(%[[FLAT]], %[[AT]]) {{.*}}{axis = 1 : i64} {{.*}} -> tensor<2x3xf32>
// CHECK:         %[[SCATTERED:.*]] = onnxg.node "GatherGrad"(%{{.*}}, %{{.*}}, %[[DD]]) domain "com.microsoft" {{.*}}{axis = 1 : i64} {{.*}} -> tensor<2x20xf32>
// CHECK:         %[[DX:.*]] = onnxg.node "Reshape"(%[[SCATTERED]], %{{.*}}) {{.*}} -> tensor<2x5x4xf32>
// CHECK:         %[[WINDOWS:.*]] = onnxg.node "Constant"() {{.*}}dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>
// CHECK:         %[[G:.*]] = onnxg.node "Gather"(%[[X]], %[[WINDOWS]]) {{.*}}{axis = 1 : i64} {{.*}} -> tensor<2x2x2x4xf32>
// CHECK:         %[[U:.*]] = onnxg.node "Transpose"(%[[G]]) {{.*}}{perm = array<i64: 0, 1, 3, 2>} {{.*}} -> tensor<2x2x4x2xf32>
// CHECK:         return %[[D]], %[[DX]], %[[U]]
module attributes {onnxg.opset_imports = [["", 18], ["org.pytorch.aten", 1]]} {
func.func @diagonal_and_unfold(%x: tensor<2x5x4xf32>, %dd: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x5x4xf32>, tensor<2x2x4x2xf32>) {
  %one = onnxg.node "Constant"() opset 18 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %two = onnxg.node "Constant"() opset 18 attributes {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %d = onnxg.node "ATen"(%x, %one, %one, %two) domain "org.pytorch.aten" opset 1 attributes {operator = "diagonal"} : (tensor<2x5x4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
  %shape = onnxg.node "Shape"(%x) opset 18 : (tensor<2x5x4xf32>) -> tensor<3xi64>
  %dx = onnxg.node "ATen"(%dd, %shape, %one, %one, %two) domain "org.pytorch.aten" opset 1 attributes {operator = "diagonal_backward"} : (tensor<2x3xf32>, tensor<3xi64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x5x4xf32>
  %u = onnxg.node "ATen"(%x, %one, %two, %two) domain "org.pytorch.aten" opset 1 attributes {operator = "unfold"} : (tensor<2x5x4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2x4x2xf32>
  return %d, %dx, %u : tensor<2x3xf32>, tensor<2x5x4xf32>, tensor<2x2x4x2xf32>
}
}
