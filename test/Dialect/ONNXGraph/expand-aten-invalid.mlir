// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-aten))' -split-input-file -verify-diagnostics

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @unknown_operator(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{node (ATen): ATen 'upsample_bicubic2d': has no expansion (expanded: embedding, embedding_backward,}}
  %0 = onnxg.node "ATen"(%x) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_bicubic2d"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @overload(%x: tensor<1x1x2x2xf32>, %sizes: tensor<2xi64>, %none: none) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{node (ATen): ATen 'upsample_bilinear2d': overload 'vec' has no expansion}}
  %0 = onnxg.node "ATen"(%x, %sizes, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_bilinear2d", overload_name = "vec"} : (tensor<1x1x2x2xf32>, tensor<2xi64>, none) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @sparse_gradient(%dy: tensor<3x4xf32>, %ids: tensor<3xi64>) -> tensor<10x4xf32> {
  %rows = onnxg.node "Constant"() opset 17 attributes {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %pad = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %true = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+1 {{node (ATen): ATen 'embedding_backward': sparse gradients are not supported}}
  %0 = onnxg.node "ATen"(%dy, %ids, %rows, %pad, %false, %true) domain "org.pytorch.aten" opset 1 attributes {operator = "embedding_backward"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<i64>, tensor<i64>, tensor<i1>, tensor<i1>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @unknown_rows(%dy: tensor<3x4xf32>, %ids: tensor<3xi64>, %rows: tensor<i64>) -> tensor<?x4xf32> {
  // expected-error @+1 {{node (ATen): ATen 'embedding_backward': needs a known num_weights (a constant, or the rows of a static weight)}}
  %0 = onnxg.node "ATen"(%dy, %ids, %rows) domain "org.pytorch.aten" opset 1 attributes {operator = "embedding_backward"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<i64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @computed_flag(%dy: tensor<3x4xf32>, %ids: tensor<3xi64>, %flag: tensor<i1>) -> tensor<10x4xf32> {
  %rows = onnxg.node "Constant"() opset 17 attributes {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %pad = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (ATen): ATen 'embedding_backward': input 4 must be a constant bool}}
  %0 = onnxg.node "ATen"(%dy, %ids, %rows, %pad, %flag) domain "org.pytorch.aten" opset 1 attributes {operator = "embedding_backward"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<i64>, tensor<i64>, tensor<i1>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @divisor_override(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<2xi64>} : () -> tensor<2xi64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %three = onnxg.node "Constant"() opset 17 attributes {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (ATen): ATen 'avg_pool2d': divisor_override is not supported}}
  %0 = onnxg.node "ATen"(%x, %two, %two, %zero, %false, %false, %three) domain "org.pytorch.aten" opset 1 attributes {operator = "avg_pool2d"} : (tensor<1x1x4x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<i1>, tensor<i1>, tensor<i64>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @ceil_window_in_padding(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %true = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+1 {{node (ATen): ATen 'max_pool2d_with_indices': with ceil_mode has a last window that starts in the padding, which PyTorch drops and ONNX keeps}}
  %0:2 = onnxg.node "ATen"(%x, %two, %two, %one, %one, %true) domain "org.pytorch.aten" opset 1 attributes {operator = "max_pool2d_with_indices"} : (tensor<1x1x5x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<i1>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xi64>)
  return %0#0 : tensor<1x1x3x3xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @uneven_adaptive(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32> {
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (ATen): ATen '_adaptive_avg_pool2d': needs output sizes that divide the input's (5 by 2)}}
  %0 = onnxg.node "ATen"(%x, %two) domain "org.pytorch.aten" opset 1 attributes {operator = "_adaptive_avg_pool2d"} : (tensor<1x1x5x5xf32>, tensor<2xi64>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @dynamic_pool_input(%x: tensor<1x1x?x5xf32>) -> tensor<1x1x?x2xf32> {
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<2xi64>} : () -> tensor<2xi64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %none = onnxg.none
  // expected-error @+1 {{node (ATen): ATen 'avg_pool2d': needs a static 4-D input and constant kernel_size, stride, padding}}
  %0 = onnxg.node "ATen"(%x, %two, %two, %zero, %false, %false, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "avg_pool2d"} : (tensor<1x1x?x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<i1>, tensor<i1>, none) -> tensor<1x1x?x2xf32>
  return %0 : tensor<1x1x?x2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @fractional_upsample(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
  %none = onnxg.none
  %factors = onnxg.node "Constant"() opset 17 attributes {value = dense<1.5> : tensor<2xf32>} : () -> tensor<2xf32>
  // expected-error @+1 {{node (ATen): ATen 'upsample_nearest2d': needs whole scale factors, not 1.5}}
  %0 = onnxg.node "ATen"(%x, %none, %factors) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_nearest2d", overload_name = "vec"} : (tensor<1x1x2x2xf32>, none, tensor<2xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @uneven_upsample(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x5x4xf32> {
  %sizes = onnxg.node "Constant"() opset 17 attributes {value = dense<[5, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = onnxg.none
  // expected-error @+1 {{node (ATen): ATen 'upsample_nearest2d': needs output sizes that are multiples of the input's (5 of 2)}}
  %0 = onnxg.node "ATen"(%x, %sizes, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "upsample_nearest2d", overload_name = "vec"} : (tensor<1x1x2x2xf32>, tensor<2xi64>, none) -> tensor<1x1x5x4xf32>
  return %0 : tensor<1x1x5x4xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @groups_not_dividing(%x: tensor<1x4x2x2xf32>, %w: tensor<4xf32>, %n: tensor<i64>) -> tensor<1x4x2x2xf32> {
  %groups = onnxg.node "Constant"() opset 17 attributes {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %eps = onnxg.node "Constant"() opset 17 attributes {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{node (ATen): ATen 'native_group_norm': needs a group count that divides the channels (4 by 3)}}
  %y, %mean, %rstd = onnxg.node "ATen"(%x, %w, %w, %n, %n, %n, %groups, %eps) domain "org.pytorch.aten" opset 1 attributes {operator = "native_group_norm"} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>) -> (tensor<1x4x2x2xf32>, tensor<1x3xf32>, tensor<1x3xf32>)
  return %y : tensor<1x4x2x2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @unknown_sizes(%dy: tensor<2x4xf32>, %i: tensor<2x4xi64>, %sizes: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %one = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+1 {{node (ATen): ATen 'value_selecting_reduction_backward': needs static grad, indices and sizes (typed from the input's shape)}}
  %dx = onnxg.node "ATen"(%dy, %one, %i, %sizes, %false) domain "org.pytorch.aten" opset 1 attributes {operator = "value_selecting_reduction_backward"} : (tensor<2x4xf32>, tensor<i64>, tensor<2x4xi64>, tensor<3xi64>, tensor<i1>) -> tensor<?x?x?xf32>
  return %dx : tensor<?x?x?xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @draws_without_replacement(%w: tensor<2x5xf32>) -> tensor<2x3xi64> {
  %three = onnxg.node "Constant"() opset 17 attributes {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %false = onnxg.node "Constant"() opset 17 attributes {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %none = onnxg.none
  // expected-error @+1 {{node (ATen): ATen 'multinomial': draws without replacement only one sample per row}}
  %0 = onnxg.node "ATen"(%w, %three, %false, %none) domain "org.pytorch.aten" opset 1 attributes {operator = "multinomial"} : (tensor<2x5xf32>, tensor<i64>, tensor<i1>, none) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}
}

// -----

// Malformed nodes are errors, not crashes: no inputs, no outputs.
module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @without_operands() -> tensor<2xf32> {
  // expected-error @+1 {{node (ATen): ATen 'numpy_T': needs a ranked input}}
  %0 = onnxg.node "ATen"() domain "org.pytorch.aten" opset 1 attributes {operator = "numpy_T"} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @embedding_without_indices(%w: tensor<10x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{node (ATen): ATen 'embedding': needs a static 2-D weight and ranked indices}}
  %0 = onnxg.node "ATen"(%w) domain "org.pytorch.aten" opset 1 attributes {operator = "embedding"} : (tensor<10x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 17], ["org.pytorch.aten", 1]]} {
func.func @without_results(%x: tensor<2xf32>) {
  // expected-error @+1 {{node (ATen): ATen 'numpy_T': has no outputs}}
  onnxg.node "ATen"(%x) domain "org.pytorch.aten" opset 1 attributes {operator = "numpy_T"} : (tensor<2xf32>) -> ()
  return
}
}
