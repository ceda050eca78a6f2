// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file -verify-diagnostics

func.func @runtime_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (YieldOp) is not executable: it only exists for ONNX Runtime's own scheduling}}
  %0 = onnxg.node "YieldOp"(%x) domain "com.microsoft" opset 1 : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @custom_domain(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (CustomOpOne) has no lowering: the op type is not in amp-opt's op table (custom domain?) (and 1 more CustomOpOne nodes)}}
  %0 = onnxg.node "CustomOpOne"(%x) domain "test.customop" opset 1 : (tensor<4xf32>) -> tensor<4xf32>
  %1 = onnxg.node "CustomOpOne"(%0) domain "test.customop" opset 1 : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @dropout_ratio_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %ratio = onnxg.node "Constant"() opset 13 attributes {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %training = onnxg.node "Constant"() opset 13 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+1 {{node (Dropout): the ratio must be in [0, 1), not 1}}
  %0 = onnxg.node "Dropout"(%x, %ratio, %training) opset 13 : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic_reshape(%x: tensor<?x4xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (Reshape): the shape operand must be a constant}}
  %0 = onnxg.node "Reshape"(%x, %shape) opset 17 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{node (Conv): the input has 4 channels, the weight 3 per group with group 1}}
  %0 = onnxg.node "Conv"(%x, %w) opset 17 : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @broadcast_mismatch(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (Add): operand shapes do not broadcast to 'tensor<4xf32>'}}
  %0 = onnxg.node "Add"(%a, %b) opset 17 : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = onnxg.node "Constant"() opset 17 attributes {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnxg.node "Constant"() opset 17 attributes {value = dense<[-100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnxg.node "Constant"() opset 17 attributes {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st = onnxg.node "Constant"() opset 17 attributes {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{node (Slice): a step is 0}}
  %0 = onnxg.node "Slice"(%x, %s, %e, %a, %st) opset 17 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_mode(%x: tensor<4xf32>) -> tensor<6xf32> {
  %p = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Pad): unknown mode 'mirror'; expects constant, edge, reflect or wrap}}
  %0 = onnxg.node "Pad"(%x, %p) opset 17 attributes {mode = "mirror"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @pad_count(%x: tensor<4x4xf32>) -> tensor<6x4xf32> {
  %p = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Pad): expects 4 pads (2 per padded axis), not 2}}
  %0 = onnxg.node "Pad"(%x, %p) opset 17 : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

func.func @pad_not_constant(%x: tensor<4xf32>, %p: tensor<2xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{node (Pad): pads and axes must be constants}}
  %0 = onnxg.node "Pad"(%x, %p) opset 17 : (tensor<4xf32>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @pad_value_of_two(%x: tensor<4xf32>, %v: tensor<2xf32>) -> tensor<6xf32> {
  %p = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Pad): constant_value (input 2) must be a tensor of one element}}
  %0 = onnxg.node "Pad"(%x, %p, %v) opset 17 : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @pad_edge_of_nothing(%x: tensor<0xf32>) -> tensor<2xf32> {
  %p = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Pad): the padded dimensions must be static and not empty in mode 'edge'}}
  %0 = onnxg.node "Pad"(%x, %p) opset 17 attributes {mode = "edge"} : (tensor<0xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @resize_unknown_mode(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %scales = onnxg.node "Constant"() opset 17 attributes {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %none = onnxg.none
  // expected-error @+1 {{node (Resize): mode 'lanczos' does not lower yet}}
  %0 = onnxg.node "Resize"(%x, %none, %scales) opset 17 attributes {mode = "lanczos"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @resize_without_sizes(%x: tensor<1x1x2x2xf32>, %scales: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (Resize): needs constant scales or sizes, one per dimension}}
  %0 = onnxg.node "Resize"(%x, %none, %scales) opset 17 : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @resize_linear_ints(%x: tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xi64> {
  %scales = onnxg.node "Constant"() opset 17 attributes {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %none = onnxg.none
  // expected-error @+1 {{node (Resize): mode 'linear' needs a float tensor}}
  %0 = onnxg.node "Resize"(%x, %none, %scales) opset 17 attributes {mode = "linear"} : (tensor<1x1x2x2xi64>, none, tensor<4xf32>) -> tensor<1x1x4x4xi64>
  return %0 : tensor<1x1x4x4xi64>
}

// -----

func.func @depth_to_space_channels(%x: tensor<1x6x2x2xf32>) -> tensor<1x?x4x4xf32> {
  // expected-error @+1 {{node (DepthToSpace): blocksize 2 squared does not divide the channels}}
  %0 = onnxg.node "DepthToSpace"(%x) opset 17 attributes {blocksize = 2 : i64} : (tensor<1x6x2x2xf32>) -> tensor<1x?x4x4xf32>
  return %0 : tensor<1x?x4x4xf32>
}

// -----

func.func @momentum_mode(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{node (Momentum): mode must be 'standard' or 'nesterov', not 'heavy-ball'}}
  %0:2 = onnxg.node "Momentum"(%r, %t, %x, %g, %v) domain "ai.onnx.preview.training" opset 1 attributes {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "heavy-ball", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<3xf32>
}

// -----

func.func @adagrad_groups(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{node (Adagrad): expects R, T and 3 groups of equally many tensors}}
  %0 = onnxg.node "Adagrad"(%r, %t, %x, %g) domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @adam_learning_rate(%r: tensor<2xf32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>, %h: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{node (Adam): R (input 0) must be a tensor of one element}}
  %0:3 = onnxg.node "Adam"(%r, %t, %x, %g, %v, %h) domain "ai.onnx.preview.training" opset 1 : (tensor<2xf32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<3xf32>
}

// -----

func.func @adam_optimizer_clipping(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %scale: tensor<1xf32>, %norm: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (AdamOptimizer): gradient-norm clipping (input 8) does not lower yet}}
  %0:4 = onnxg.node "AdamOptimizer"(%lr, %step, %w, %g, %m, %m, %w, %scale, %norm) domain "com.microsoft" opset 1 : (tensor<1xf32>, tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}

// -----

func.func @dropout_grad_ratio(%dy: tensor<4xf32>, %mask: tensor<4xi1>, %ratio: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (DropoutGrad): the ratio must be a float scalar}}
  %0 = onnxg.node "DropoutGrad"(%dy, %mask, %ratio) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xi1>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_grad_shape(%dy: tensor<2x3xf32>, %shape: tensor<2xi64>, %starts: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (SliceGrad): the input shape must be a constant of dY's rank}}
  %0 = onnxg.node "SliceGrad"(%dy, %shape, %starts, %starts) domain "com.microsoft" opset 1 : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @conv_grad_dy_shape(%dy: tensor<1x4x5x5xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{node (ConvGrad): dY must be a float tensor of the Conv's output shape}}
  %0:3 = onnxg.node "ConvGrad"(%dy, %x, %w) domain "com.microsoft" opset 1 attributes {kernel_shape = array<i64: 3, 3>} : (tensor<1x4x5x5xf32>, tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  return %0#0 : tensor<1x3x8x8xf32>
}

// -----

func.func @scatter_nd_reduction(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{node (ScatterND): unknown reduction 'mean'}}
  %0 = onnxg.node "ScatterND"(%d, %i, %u) opset 18 attributes {reduction = "mean"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @max_pool_grad_dynamic(%dy: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x?x?xf32> {
  // expected-error @+1 {{node (MaxPoolGrad): needs a static dX type (X's shape)}}
  %0 = onnxg.node "MaxPoolGrad"(%dy, %i) opset 17 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x?x?xf32>
  return %0 : tensor<1x2x?x?xf32>
}

// -----

func.func @broadcast_gradient_args_dynamic(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{node (BroadcastGradientArgs): needs constant shapes (static input shapes)}}
  %0:2 = onnxg.node "BroadcastGradientArgs"(%a, %b) domain "com.microsoft" opset 1 : (tensor<2xi64>, tensor<2xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %0#0 : tensor<?xi64>
}

// -----

// expected-error @+1 {{graph input #0 'params' is a sequence: sequences lower only inside the graph, as the tensors that SequenceConstruct collects}}
func.func @sequence_input(%s: !onnxg.seq<tensor<*xf32>> loc("params"), %i: tensor<i64>) -> tensor<4xf32> {
  %0 = onnxg.node "SequenceAt"(%s, %i) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sequence_at_position(%a: tensor<4xf32>, %i: tensor<i64>) -> tensor<4xf32> {
  %s = onnxg.node "SequenceConstruct"(%a) opset 17 : (tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  // expected-error @+1 {{node (SequenceAt): the position (input 1) must be a constant of one element}}
  %0 = onnxg.node "SequenceAt"(%s, %i) opset 17 : (!onnxg.seq<tensor<4xf32>>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sequence_at_range(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = onnxg.node "SequenceConstruct"(%a, %a) opset 17 : (tensor<4xf32>, tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  %i = onnxg.node "Constant"() opset 17 attributes {value = dense<-3> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (SequenceAt): position -3 is outside a sequence of 2 tensors}}
  %0 = onnxg.node "SequenceAt"(%s, %i) opset 17 : (!onnxg.seq<tensor<4xf32>>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sequence_construct_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{node (SequenceConstruct): input 1 has element type 'f16', input 0 'f32'}}
  %s = onnxg.node "SequenceConstruct"(%a, %b) opset 17 : (tensor<4xf32>, tensor<4xf16>) -> !onnxg.seq<tensor<*xf32>>
  %i = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0 = onnxg.node "SequenceAt"(%s, %i) opset 17 : (!onnxg.seq<tensor<*xf32>>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @adamw_counts(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w: tensor<4xf32>) -> tensor<1xi1> {
  %one = onnxg.node "SequenceConstruct"(%w) opset 17 : (tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  %two = onnxg.node "SequenceConstruct"(%w, %w) opset 17 : (tensor<4xf32>, tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  // expected-error @+1 {{node (AdamWOptimizer): input 3 holds 2 tensors, the weights 1}}
  %0 = onnxg.node "AdamWOptimizer"(%lr, %step, %one, %two, %one, %one) domain "com.microsoft" opset 1 : (tensor<1xf32>, tensor<1xi64>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>) -> tensor<1xi1>
  return %0 : tensor<1xi1>
}

// -----

func.func @adamw_moment_shape(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w: tensor<4xf32>, %m: tensor<2x2xf32>) -> tensor<1xi1> {
  %s = onnxg.node "SequenceConstruct"(%w) opset 17 : (tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  %bad = onnxg.node "SequenceConstruct"(%m) opset 17 : (tensor<2x2xf32>) -> !onnxg.seq<tensor<2x2xf32>>
  // expected-error @+1 {{node (AdamWOptimizer): tensor 0 of the second moments must be a float tensor of its weight's shape}}
  %0 = onnxg.node "AdamWOptimizer"(%lr, %step, %s, %s, %s, %bad) domain "com.microsoft" opset 1 : (tensor<1xf32>, tensor<1xi64>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<2x2xf32>>) -> tensor<1xi1>
  return %0 : tensor<1xi1>
}

// -----

func.func @adamw_mode(%lr: tensor<1xf32>, %step: tensor<1xi64>, %w: tensor<4xf32>) -> tensor<1xi1> {
  %s = onnxg.node "SequenceConstruct"(%w) opset 17 : (tensor<4xf32>) -> !onnxg.seq<tensor<4xf32>>
  // expected-error @+1 {{node (AdamWOptimizer): adam_mode must be 0 or 1, not 2}}
  %0 = onnxg.node "AdamWOptimizer"(%lr, %step, %s, %s, %s, %s) domain "com.microsoft" opset 1 attributes {adam_mode = 2 : i64} : (tensor<1xf32>, tensor<1xi64>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>, !onnxg.seq<tensor<4xf32>>) -> tensor<1xi1>
  return %0 : tensor<1xi1>
}

// -----

func.func @gradient(%x: tensor<3xf32> loc("x")) -> tensor<3xf32> {
  %y = onnxg.node "Exp"(%x) opset 17 : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{node (Gradient) is differentiated by --onnxg-expand-gradients, which must run first (amp-lower-to-cpu runs it)}}
  %dx = onnxg.node "Gradient"(%x) domain "ai.onnx.preview.training" opset 1 attributes {xs = ["x"], y = "y"} : (tensor<3xf32>) -> tensor<3xf32>
  return %dx : tensor<3xf32>
}

// -----

func.func @string_cast(%x: tensor<3xf32>) -> tensor<3x!onnxg.string> {
  // expected-error @+1 {{node (Cast): tensors of '!onnxg.string' do not lower: only numbers and booleans do}}
  %0 = onnxg.node "Cast"(%x) opset 13 attributes {to = 8 : i64} : (tensor<3xf32>) -> tensor<3x!onnxg.string>
  return %0 : tensor<3x!onnxg.string>
}

// -----

func.func @einsum_rank(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{node (Einsum): equation: term 'ijk' does not fit an operand of rank 2}}
  %0 = onnxg.node "Einsum"(%a, %b) opset 12 attributes {equation = "ijk,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{node (Einsum): equation: a label has sizes 3 and 5}}
  %0 = onnxg.node "Einsum"(%a, %b) opset 12 attributes {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @einsum_output(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (Einsum): equation: output label 'k' is in no operand term}}
  %0 = onnxg.node "Einsum"(%a) opset 12 attributes {equation = "ij->k"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @top_k_computed(%x: tensor<3x5xf32>, %k: tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  // expected-error @+1 {{node (TopK): K must be a one-element constant}}
  %0:2 = onnxg.node "TopK"(%x, %k) opset 11 : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return %0#0, %0#1 : tensor<3x?xf32>, tensor<3x?xi64>
}

// -----

func.func @top_k_too_many(%x: tensor<3x5xf32>) -> (tensor<3x6xf32>, tensor<3x6xi64>) {
  %k = onnxg.node "Constant"() opset 17 attributes {value = dense<6> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{node (TopK): K = 6 is not in [0, 5], the size of axis 1}}
  %0:2 = onnxg.node "TopK"(%x, %k) opset 11 : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x6xf32>, tensor<3x6xi64>)
  return %0#0, %0#1 : tensor<3x6xf32>, tensor<3x6xi64>
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+1 {{node (GroupNormalization): num_groups 4 does not divide the 6 channels}}
  %0 = onnxg.node "GroupNormalization"(%x, %s, %s) opset 21 attributes {num_groups = 4 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

func.func @gather_nd_depth(%data: tensor<2x2xf32>, %indices: tensor<1x3xi64>) -> tensor<1xf32> {
  // expected-error @+1 {{node (GatherND): batch_dims 0 and depth 3 do not fit data of rank 2 and indices of rank 2}}
  %0 = onnxg.node "GatherND"(%data, %indices) opset 13 : (tensor<2x2xf32>, tensor<1x3xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @accumulator_flag_type(%buffer: tensor<3xf32>, %g: tensor<3xf32>, %reset: tensor<1xi1>) -> tensor<3xf32> {
  // expected-error @+1 {{node (InPlaceAccumulatorV2): the updated flag (output 0) must be a bool tensor of static shape, not 'tensor<3xf32>'}}
  %0 = onnxg.node "InPlaceAccumulatorV2"(%buffer, %g, %reset) domain "com.microsoft" opset 1 : (tensor<3xf32>, tensor<3xf32>, tensor<1xi1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @bit_shift_direction(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{node (BitShift): direction must be LEFT or RIGHT, not 'UP'}}
  %0 = onnxg.node "BitShift"(%x, %y) opset 17 attributes {direction = "UP"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @random_normal_of_integers(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{node (RandomNormalLike): generates floats, not 'i32'}}
  %0 = onnxg.node "RandomNormalLike"(%x) opset 1 attributes {dtype = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @bernoulli_of_integers(%p: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{node (Bernoulli): expects float probabilities}}
  %0 = onnxg.node "Bernoulli"(%p) opset 15 : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @random_uniform_bad_dtype() -> tensor<4xf32> {
  // expected-error @+1 {{node (RandomUniform): dtype 99 is not a tensor element type}}
  %0 = onnxg.node "RandomUniform"() opset 1 attributes {shape = array<i64: 4>, dtype = 99 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @quantize_scale_per_other_axis(%x: tensor<2x3xf32>, %scale: tensor<2xf32>) -> tensor<2x3xui8> {
  // expected-error @+1 {{node (QuantizeLinear): the scale must have one element or one per element of axis 1 (3), not 'tensor<2xf32>'}}
  %0 = onnxg.node "QuantizeLinear"(%x, %scale) opset 13 : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

func.func @quantize_blocked(%x: tensor<2x4xf32>, %scale: tensor<2x2xf32>) -> tensor<2x4xi8> {
  // expected-error @+1 {{node (QuantizeLinear): blocked quantization (block_size) does not lower yet}}
  %0 = onnxg.node "QuantizeLinear"(%x, %scale) opset 21 attributes {block_size = 2 : i64, output_dtype = 3 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xi8>
  return %0 : tensor<2x4xi8>
}

// -----

func.func @fake_quant_per_channel(%x: tensor<2x3xf32>, %scale: tensor<3xf32>, %zp: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{node (FakeQuant): the scale and zero point must be float tensors of one element}}
  %0:2 = onnxg.node "FakeQuant"(%x, %scale, %zp) domain "com.microsoft" opset 1 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %0#0 : tensor<2x3xf32>
}

// -----

func.func @fake_quant_grad_float_mask(%dy: tensor<4xf32>, %mask: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (FakeQuantGrad): expects a float gradient and a bool mask of its shape}}
  %0 = onnxg.node "FakeQuantGrad"(%dy, %mask) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dft_channels(%x: tensor<2x8x3xf32>) -> tensor<2x8x2xf32> {
  // expected-error @+1 {{node (DFT): the last dimension of the input must be 1 (real) or 2 (complex), not 3}}
  %0 = onnxg.node "DFT"(%x) opset 17 : (tensor<2x8x3xf32>) -> tensor<2x8x2xf32>
  return %0 : tensor<2x8x2xf32>
}

// -----

func.func @dft_onesided_complex(%x: tensor<2x8x2xf32>) -> tensor<2x5x2xf32> {
  // expected-error @+1 {{node (DFT): onesided needs a real input (last dimension 1)}}
  %0 = onnxg.node "DFT"(%x) opset 17 attributes {onesided = 1 : i64} : (tensor<2x8x2xf32>) -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

func.func @dft_onesided_inverse(%x: tensor<2x8x1xf32>) -> tensor<2x5x2xf32> {
  // expected-error @+1 {{node (DFT): onesided inverse transforms do not lower: implementations disagree on their input}}
  %0 = onnxg.node "DFT"(%x) opset 17 attributes {onesided = 1 : i64, inverse = 1 : i64} : (tensor<2x8x1xf32>) -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

func.func @dft_axis(%x: tensor<2x8x1xf32>) -> tensor<2x8x2xf32> {
  // expected-error @+1 {{node (DFT): axis 2 is not a signal dimension of an input of rank 3}}
  %0 = onnxg.node "DFT"(%x) opset 17 attributes {axis = 2 : i64} : (tensor<2x8x1xf32>) -> tensor<2x8x2xf32>
  return %0 : tensor<2x8x2xf32>
}

// -----

func.func @dft_length_computed(%x: tensor<2x8x1xf32>, %n: tensor<i64>) -> tensor<*xf32> {
  // expected-error @+1 {{node (DFT): dft_length must be a constant scalar of at least 1}}
  %0 = onnxg.node "DFT"(%x, %n) opset 17 : (tensor<2x8x1xf32>, tensor<i64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @dft_dynamic(%x: tensor<?x8x1xf32>) -> tensor<?x8x2xf32> {
  // expected-error @+1 {{node (DFT): expects a float input of static shape and rank >= 2}}
  %0 = onnxg.node "DFT"(%x) opset 17 : (tensor<?x8x1xf32>) -> tensor<?x8x2xf32>
  return %0 : tensor<?x8x2xf32>
}

// -----

func.func @stft_step_computed(%x: tensor<1x32x1xf32>, %step: tensor<i64>, %w: tensor<8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{node (STFT): frame_step must be a constant scalar of at least 1}}
  %0 = onnxg.node "STFT"(%x, %step, %w) opset 17 : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @stft_window_length(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>) -> tensor<*xf32> {
  %step = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (STFT): the window has 8 elements, frame_length is 16}}
  %0 = onnxg.node "STFT"(%x, %step, %w, %n) opset 17 : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>, tensor<i64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @stft_no_length(%x: tensor<1x32x1xf32>) -> tensor<*xf32> {
  %step = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (STFT): needs a window or frame_length}}
  %0 = onnxg.node "STFT"(%x, %step) opset 17 : (tensor<1x32x1xf32>, tensor<i64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @stft_long_frame(%x: tensor<1x6x1xf32>, %w: tensor<8xf32>) -> tensor<*xf32> {
  %step = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (STFT): frame_length 8 is longer than the signal (6)}}
  %0 = onnxg.node "STFT"(%x, %step, %w) opset 17 : (tensor<1x6x1xf32>, tensor<i64>, tensor<8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @mel_computed(%bins: tensor<i64>) -> tensor<*xf32> {
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  %hz = onnxg.node "Constant"() opset 17 attributes {value = dense<100.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{node (MelWeightMatrix): every input must be a constant scalar}}
  %0 = onnxg.node "MelWeightMatrix"(%bins, %n, %n, %hz, %hz) opset 17 : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @grid_sample_mode(%x: tensor<1x2x4x5xf32>, %grid: tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32> {
  // expected-error @+1 {{node (GridSample): mode 'area' is not bilinear, nearest or bicubic}}
  %0 = onnxg.node "GridSample"(%x, %grid) opset 16 attributes {mode = "area"} : (tensor<1x2x4x5xf32>, tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

func.func @grid_sample_padding(%x: tensor<1x2x4x5xf32>, %grid: tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32> {
  // expected-error @+1 {{node (GridSample): padding_mode 'wrap' is not zeros, border or reflection}}
  %0 = onnxg.node "GridSample"(%x, %grid) opset 16 attributes {padding_mode = "wrap"} : (tensor<1x2x4x5xf32>, tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

func.func @grid_sample_batch(%x: tensor<1x2x4x5xf32>, %grid: tensor<2x3x6x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{node (GridSample): the grid 'tensor<2x3x6x2xf32>' does not sample 'tensor<1x2x4x5xf32>'}}
  %0 = onnxg.node "GridSample"(%x, %grid) opset 16 : (tensor<1x2x4x5xf32>, tensor<2x3x6x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @grid_sample_volume(%x: tensor<1x2x3x4x5xf32>, %grid: tensor<1x3x6x2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{node (GridSample): expects a float X [N, C, H, W] and grid [N, H_out, W_out, 2] of static shapes}}
  %0 = onnxg.node "GridSample"(%x, %grid) opset 20 : (tensor<1x2x3x4x5xf32>, tensor<1x3x6x2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @multinomial_of_rank_1(%x: tensor<4xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{node (Multinomial): expects float log-probabilities of rank 2}}
  %0 = onnxg.node "Multinomial"(%x) opset 7 : (tensor<4xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @multinomial_negative_samples(%x: tensor<2x4xf32>) -> tensor<2x1xi32> {
  // expected-error @+1 {{node (Multinomial): sample_size must be positive, not -1}}
  %0 = onnxg.node "Multinomial"(%x) opset 7 attributes {sample_size = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x1xi32>
  return %0 : tensor<2x1xi32>
}

// -----

func.func @multinomial_of_floats(%x: tensor<2x4xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{node (Multinomial): generates int32 or int64, not 'f32'}}
  %0 = onnxg.node "Multinomial"(%x) opset 7 attributes {dtype = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @loop_runtime_trip_count_with_scans(%m: tensor<i64>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %none = onnxg.none
  // expected-error @+1 {{node (Loop): has scan outputs, which need the loop unrolled: a constant trip count and condition, and at most 256 iterations}}
  %0:2 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    onnxg.yield ["cond", "v", "scan"] %cond, %v, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  } : (tensor<i64>, none, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

func.func @loop_without_end(%y: tensor<2xf32>) -> tensor<2xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (Loop): never ends: it has no trip count, and its condition stays true for 256 iterations and reads neither the iteration number nor a carried value}}
  %0 = onnxg.node "Loop"(%none, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    onnxg.yield ["cond", "v"] %cond, %v : tensor<i1>, tensor<2xf32>
  } : (none, none, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_carried_shape_changes(%y: tensor<2xf32>) -> tensor<?xf32> {
  %m = arith.constant dense<2> : tensor<i64>
  %none = onnxg.none
  // expected-error @+1 {{node (Loop): carried value #0 changes from 'tensor<2xf32>' to 'tensor<4xf32>'}}
  %0 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %w = onnxg.node "Concat"(%v, %v) opset 13 attributes {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    onnxg.yield ["cond", "w"] %cond, %w : tensor<i1>, tensor<4xf32>
  } : (tensor<i64>, none, tensor<2xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @scan_opset_8(%s: tensor<1x2xf32>, %x: tensor<1x3x2xf32>) -> tensor<1x2xf32> {
  %none = onnxg.none
  // expected-error @+1 {{node (Scan): is a Scan of opset 8 (a batch axis and sequence_lens), which does not lower: opset 9 and later do}}
  %0 = onnxg.node "Scan"(%none, %s, %x) opset 8 attributes {body = 0 : index, num_scan_inputs = 1 : i64} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si"] %si : tensor<2xf32>
  } : (none, tensor<1x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

func.func @scan_lengths_differ(%s: tensor<2xf32>, %x: tensor<3x2xf32>, %y: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (Scan): scan input #1 has 4 elements along its axis, the first 3}}
  %0 = onnxg.node "Scan"(%s, %x, %y) opset 16 attributes {body = 0 : index, num_scan_inputs = 2 : i64} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>, %yi: tensor<2xf32>):
    onnxg.yield ["si"] %si : tensor<2xf32>
  } : (tensor<2xf32>, tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_axes_count(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (Scan): scan_input_axes has 2 entries, for 1 scan values}}
  %0 = onnxg.node "Scan"(%s, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64, scan_input_axes = array<i64: 0, 1>} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si"] %si : tensor<2xf32>
  } : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_output_axis(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{node (Scan): scan output #0 has axis 2, outside [-2, 1]}}
  %0:2 = onnxg.node "Scan"(%s, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64, scan_output_axes = array<i64: 2>} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si", "xi"] %si, %xi : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_dynamic_length(%s: tensor<2xf32>, %x: tensor<?x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (Scan): scan input #0 is 'tensor<?x2xf32>': the scanned axis needs a static size}}
  %0 = onnxg.node "Scan"(%s, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si"] %si : tensor<2xf32>
  } : (tensor<2xf32>, tensor<?x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @if_branches_differ(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{node (If): output #0 is 'tensor<2xf32>' in then_branch and 'tensor<4xf32>' in else_branch: an If whose condition is computed at run time needs one static type per output}}
  %0 = onnxg.node "If"(%c) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    onnxg.yield ["x"] %x : tensor<4xf32>
  }, {
    onnxg.yield ["y"] %y : tensor<2xf32>
  } : (tensor<i1>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @if_condition_not_a_flag(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{node (If): the condition must be a boolean of one element}}
  %0 = onnxg.node "If"(%c) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    onnxg.yield ["x"] %x : tensor<4xf32>
  }, {
    onnxg.yield ["x"] %x : tensor<4xf32>
  } : (tensor<2xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @col2im_wrong_block_count(%x: tensor<1x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %image = onnxg.node "Constant"() opset 18 attributes {value = dense<4> : tensor<2xi64>} : () -> tensor<2xi64>
  %block = onnxg.node "Constant"() opset 18 attributes {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Col2Im): the input has 8 rows and 8 blocks; expected a multiple of 4 rows and 9 blocks}}
  %0 = onnxg.node "Col2Im"(%x, %image, %block) opset 18 : (tensor<1x8x8xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @affine_grid_mismatch(%theta: tensor<2x2x3xf32>) -> tensor<2x3x4x5x3xf32> {
  %size = onnxg.node "Constant"() opset 20 attributes {value = dense<[2, 1, 3, 4, 5]> : tensor<5xi64>} : () -> tensor<5xi64>
  // expected-error @+1 {{node (AffineGrid): theta 'tensor<2x2x3xf32>' does not map a grid of 3 spatial dimensions}}
  %0 = onnxg.node "AffineGrid"(%theta, %size) opset 20 : (tensor<2x2x3xf32>, tensor<5xi64>) -> tensor<2x3x4x5x3xf32>
  return %0 : tensor<2x3x4x5x3xf32>
}
