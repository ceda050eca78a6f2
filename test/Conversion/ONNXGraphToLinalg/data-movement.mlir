// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s

// Reshapes that merge or split dimensions become collapse/expand_shape;
// others go through a flat tensor.
// CHECK-LABEL: func.func @reshapes(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x6xf32>) {
  %s1 = onnxg.node "Constant"() opset 17 attributes {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnxg.node "Reshape"(%x, %s1) opset 17 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %s2 = onnxg.node "Constant"() opset 17 attributes {value = dense<[4, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = onnxg.node "Reshape"(%x, %s2) opset 17 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %0, %1 : tensor<6x4xf32>, tensor<4x6xf32>
}

// -----

// An Expand whose shape ONNX shape inference could not see still gets a
// static result when the shape operand is a constant.
// CHECK-LABEL: func.func @expand_dynamic_result(
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x1xf32>)
// CHECK:         tensor.cast %[[E]] : tensor<8x1xf32> to tensor<?x?xf32>
func.func @expand_dynamic_result(%x: tensor<f32>, %i: tensor<8x1xi64>) -> tensor<?x?xf32> {
  %s = onnxg.node "Shape"(%i) opset 17 : (tensor<8x1xi64>) -> tensor<2xi64>
  %0 = onnxg.node "Expand"(%x, %s) opset 17 : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A Slice of a static Shape (torch.onnx's sizes for Upsample: the batch and
// channels, then constants) folds, so Resize sees constant sizes; a reverse
// Slice folds too.
// CHECK-LABEL: func.func @sliced_shape(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x8x10xf32>)
// CHECK:         arith.constant dense<[5, 4, 3]> : tensor<3xi64>
func.func @sliced_shape(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x8x10xf32>, tensor<3xi64>) {
  %shape = onnxg.node "Shape"(%x) opset 17 : (tensor<2x3x4x5xf32>) -> tensor<4xi64>
  %zero = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %head = onnxg.node "Slice"(%shape, %zero, %two, %zero) opset 17 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %hw = onnxg.node "Constant"() opset 17 attributes {value = dense<[8, 10]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sizes = onnxg.node "Concat"(%head, %hw) opset 17 attributes {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %none = onnxg.none
  %0 = onnxg.node "Resize"(%x, %none, %none, %sizes) opset 17 attributes {mode = "linear"} : (tensor<2x3x4x5xf32>, none, none, tensor<4xi64>) -> tensor<2x3x8x10xf32>
  %last = onnxg.node "Constant"() opset 17 attributes {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %back = onnxg.node "Slice"(%shape, %last, %zero, %zero, %last) opset 17 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %0, %back : tensor<2x3x8x10xf32>, tensor<3xi64>
}

// -----

// A Transpose and an N-D Slice of constant integers (how torch.onnx computes
// reflect padding's pads) fold to constants.
// CHECK-LABEL: func.func @folded_int_transpose_slice(
// CHECK-DAG:     arith.constant dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>
// CHECK-DAG:     arith.constant dense<{{\[\[}}4], [2]]> : tensor<2x1xi64>
func.func @folded_int_transpose_slice() -> (tensor<2x2xi64>, tensor<2x1xi64>) {
  %data = onnxg.node "Constant"() opset 17 attributes {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %t = onnxg.node "Transpose"(%data) opset 17 : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %starts = onnxg.node "Constant"() opset 17 attributes {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ends = onnxg.node "Constant"() opset 17 attributes {value = dense<[-3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = onnxg.node "Constant"() opset 17 attributes {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %steps = onnxg.node "Constant"() opset 17 attributes {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s = onnxg.node "Slice"(%data, %starts, %ends, %axes, %steps) opset 17 : (tensor<2x2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  return %t, %s : tensor<2x2xi64>, tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_concat_split_slice(
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK:         tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [3, 1] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[0, 1] [3, 3] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[1, 0] [1, 4] [2, 1]
func.func @transpose_concat_split_slice(%x: tensor<2x3xf32>) -> (tensor<3x1xf32>, tensor<3x3xf32>, tensor<1x4xf32>) {
  %t = onnxg.node "Transpose"(%x) opset 17 attributes {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c = onnxg.node "Concat"(%t, %t) opset 17 attributes {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %sizes = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a, %b = onnxg.node "Split"(%c, %sizes) opset 17 attributes {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> (tensor<3x1xf32>, tensor<3x3xf32>)
  %starts = onnxg.node "Constant"() opset 17 attributes {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ends = onnxg.node "Constant"() opset 17 attributes {value = dense<[100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = onnxg.node "Constant"() opset 17 attributes {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %steps = onnxg.node "Constant"() opset 17 attributes {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = onnxg.node "Slice"(%c, %starts, %ends, %axes, %steps) opset 17 : (tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4xf32>
  return %a, %b, %s : tensor<3x1xf32>, tensor<3x3xf32>, tensor<1x4xf32>
}

// -----

// Gather reads the table with tensor.extract at the wrapped index.
// CHECK-LABEL: func.func @gather_embedding(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<2x5xi64>) outs(%{{.*}} : tensor<2x5x4xf32>)
// CHECK:           arith.index_cast
// CHECK:           arith.select
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x4xf32>
func.func @gather_embedding(%table: tensor<10x4xf32>, %ids: tensor<2x5xi64>) -> tensor<2x5x4xf32> {
  %0 = onnxg.node "Gather"(%table, %ids) opset 17 : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// ScatterElements is one sequential loop nest over the indices: each
// update is read, its target element extracted, combined ("add") and
// inserted back.
// CHECK-LABEL: func.func @scatter_elements_add(
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[A0:.*]] = %{{.*}}) -> (tensor<8x10xf32>)
// CHECK:           scf.for %[[J:.*]] = {{.*}} iter_args(%[[A1:.*]] = %[[A0]]) -> (tensor<8x10xf32>)
// CHECK:             %[[INDEX:.*]] = tensor.extract %{{.*}}[%[[I]], %[[J]]] : tensor<8x1xi64>
// CHECK:             %[[OLD:.*]] = tensor.extract %[[A1]][%[[I]], %{{.*}}] : tensor<8x10xf32>
// CHECK:             %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK:             tensor.insert %[[NEW]] into %[[A1]][%[[I]], %{{.*}}] : tensor<8x10xf32>
func.func @scatter_elements_add(%d: tensor<8x10xf32>, %i: tensor<8x1xi64>, %u: tensor<8x1xf32>) -> tensor<8x10xf32> {
  %0 = onnxg.node "ScatterElements"(%d, %i, %u) opset 18 attributes {axis = 1 : i64, reduction = "add"} : (tensor<8x10xf32>, tensor<8x1xi64>, tensor<8x1xf32>) -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

// ScatterND loops over the updates: the last dimension of the indices
// names the row, the inner loop the element; "none" replaces it.
// CHECK-LABEL: func.func @scatter_nd_rows(
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[A0:.*]] = %{{.*}}) -> (tensor<4x3xf32>)
// CHECK:           scf.for %[[J:.*]] = {{.*}} iter_args(%[[A1:.*]] = %[[A0]]) -> (tensor<4x3xf32>)
// CHECK:             %[[ROW:.*]] = tensor.extract %{{.*}}[%[[I]], %{{.*}}] : tensor<2x1xi64>
// CHECK:             %[[UPDATE:.*]] = tensor.extract %{{.*}}[%[[I]], %[[J]]] : tensor<2x3xf32>
// CHECK-NEXT:        tensor.insert %[[UPDATE]] into %[[A1]][%{{.*}}, %[[J]]] : tensor<4x3xf32>
func.func @scatter_nd_rows(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = onnxg.node "ScatterND"(%d, %i, %u) opset 18 : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// GatherGrad sums dY into zeros of the gathered shape, in f32 for f16.
// CHECK-LABEL: func.func @gather_grad_f16(
// CHECK:         linalg.fill {{.*}} -> tensor<10x4xf32>
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (tensor<10x4xf32>)
// CHECK:             %[[DY:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:             %[[OLD:.*]] = tensor.extract
// CHECK:             arith.addf %[[OLD]], %[[DY]] : f32
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @gather_grad_f16(%s: tensor<2xi64>, %i: tensor<3xi64>, %dy: tensor<3x4xf16>) -> tensor<10x4xf16> {
  %0 = onnxg.node "GatherGrad"(%s, %i, %dy) domain "com.microsoft" opset 1 : (tensor<2xi64>, tensor<3xi64>, tensor<3x4xf16>) -> tensor<10x4xf16>
  return %0 : tensor<10x4xf16>
}

// -----

// Range with a dynamic result: max(ceil((limit - start) / delta), 0)
// elements, each start + i * delta.
// CHECK-LABEL: func.func @range_dynamic(
// CHECK:         math.ceil %{{.*}} : f64
// CHECK:         arith.maximumf
// CHECK:         %[[N:.*]] = arith.fptosi
// CHECK:         %[[SIZE:.*]] = arith.index_cast %[[N]]
// CHECK:         tensor.empty(%[[SIZE]]) : tensor<?xi64>
// CHECK:         linalg.generic
// CHECK:           linalg.index 0
// CHECK:           arith.muli
// CHECK:           arith.addi
func.func @range_dynamic(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<?xi64> {
  %0 = onnxg.node "Range"(%start, %limit, %delta) opset 11 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Range of constant bounds (shape arithmetic folded while lowering, as
// nn.Unfold's export computes them) has a static size even where ONNX left
// the result untyped: ceil((8 - 1) / 2) = 4 elements. The Unsqueeze and
// the Expand of an untyped result that read it stay static.
// CHECK-LABEL: func.func @range_constant_bounds(
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi64>)
// CHECK:         %[[U:.*]] = tensor.expand_shape %[[R]] {{.*}} : tensor<4xi64> into tensor<1x4xi64>
// CHECK:         linalg.generic {{.*}} ins(%[[U]] : tensor<1x4xi64>) outs(%{{.*}} : tensor<3x4xi64>)
func.func @range_constant_bounds() -> tensor<*xi64> {
  %start = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %limit = onnxg.node "Constant"() opset 17 attributes {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %delta = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %r = onnxg.node "Range"(%start, %limit, %delta) opset 17 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %axes = onnxg.node "Constant"() opset 17 attributes {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnxg.node "Unsqueeze"(%r, %axes) opset 17 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %shape = onnxg.node "Constant"() opset 17 attributes {value = dense<[3, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnxg.node "Expand"(%u, %shape) opset 17 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

// GridSample, bilinear with reflection and align_corners: one generic over
// the output reads the grid's x and y, unnormalizes them to (g + 1) * (W -
// 1) / 2 and (g + 1) * (H - 1) / 2, reflects them over [0, W - 1] (fmod
// by the span, direction by the parity of the flips) and clips, then sums
// the four neighbours weighted.
// CHECK-LABEL: func.func @grid_sample(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x3x6xf32>)
// CHECK:           %[[GX:.*]] = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0] : tensor<1x3x6x2xf32>
// CHECK:           arith.addf %[[GX]]
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           %[[GY:.*]] = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c1] : tensor<1x3x6x2xf32>
// CHECK:           arith.addf %[[GY]]
// CHECK:           arith.constant 1.500000e+00 : f32
// CHECK:           arith.remf %{{.*}}, %{{.*}} : f32
// CHECK:           math.floor
// CHECK:           arith.select
// CHECK:           arith.maximumf
// CHECK:           arith.minimumf
// CHECK-COUNT-4:   tensor.extract %{{.*}} : tensor<1x2x4x5xf32>
// CHECK:           linalg.yield
func.func @grid_sample(%x: tensor<1x2x4x5xf32>, %grid: tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32> {
  %0 = onnxg.node "GridSample"(%x, %grid) opset 16 attributes {mode = "bilinear", padding_mode = "reflection", align_corners = 1 : i64} : (tensor<1x2x4x5xf32>, tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

// ConcatTraining also returns the inputs' lengths along the axis.
// CHECK-LABEL: func.func @concat_training(
// CHECK:         %[[C:.*]] = tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
// CHECK:         %[[L:.*]] = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi64>
// CHECK:         return %[[C]], %[[L]]
func.func @concat_training(%x: tensor<4x6xf32>, %y: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<2xi64>) {
  %0:2 = onnxg.node "ConcatTraining"(%x, %y) domain "com.microsoft" opset 1 attributes {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<2xi64>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<2xi64>
}

// -----

// BroadcastGradientArgs folds the shapes of static operands to the axes of
// the broadcast result (descending) that each gradient sums over: A [2,1,5]
// and B [4,5] broadcast to [2,4,5]; A sums over 1, B over 0. A scalar sums
// over every axis.
// CHECK-LABEL: func.func @broadcast_gradient_args(
// CHECK:         %[[A:.*]] = arith.constant dense<1> : tensor<1xi64>
// CHECK-NEXT:    %[[B:.*]] = arith.constant dense<0> : tensor<1xi64>
// CHECK-NEXT:    tensor.cast %[[A]]
// CHECK-NEXT:    tensor.cast %[[B]]
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<[2, 1, 0]> : tensor<3xi64>
// CHECK-NEXT:    %[[NONE:.*]] = arith.constant dense<> : tensor<0xi64>
// CHECK-NEXT:    tensor.cast %[[S]]
// CHECK-NEXT:    tensor.cast %[[NONE]]
func.func @broadcast_gradient_args(%a: tensor<2x1x5xf32>, %b: tensor<4x5xf32>, %s: tensor<f32>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
  %sa = onnxg.node "Shape"(%a) opset 17 : (tensor<2x1x5xf32>) -> tensor<3xi64>
  %sb = onnxg.node "Shape"(%b) opset 17 : (tensor<4x5xf32>) -> tensor<2xi64>
  %ss = onnxg.node "Shape"(%s) opset 17 : (tensor<f32>) -> tensor<0xi64>
  %0:2 = onnxg.node "BroadcastGradientArgs"(%sa, %sb) domain "com.microsoft" opset 1 : (tensor<3xi64>, tensor<2xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  %1:2 = onnxg.node "BroadcastGradientArgs"(%ss, %sa) domain "com.microsoft" opset 1 : (tensor<0xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
}

// -----

// SliceGrad: dY goes where the Slice read, into zeros of the input shape.
// CHECK-LABEL: func.func @slice_grad(
// CHECK:         %[[ZEROS:.*]] = linalg.fill
// CHECK:         tensor.insert_slice %{{.*}} into %[[ZEROS]][1, 0] [2, 3] [1, 2] : tensor<2x3xf32> into tensor<4x6xf32>
func.func @slice_grad(%dy: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %shape = onnxg.node "Constant"() opset 17 attributes {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %starts = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ends = onnxg.node "Constant"() opset 17 attributes {value = dense<[3, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = onnxg.node "Constant"() opset 17 attributes {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %steps = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnxg.node "SliceGrad"(%dy, %shape, %starts, %ends, %axes, %steps) domain "com.microsoft" opset 1 : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}


// -----

// A large constant of one value, written out in full (an exporter's zeros)
// or as a splat, is filled rather than stored; one of several values stays
// a resource.
// CHECK-LABEL: func.func @uniform_constants(
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<8x10xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<8x10xf32>)
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[ONE]] : f32)
// CHECK:         arith.constant dense_resource<mixed> : tensor<80xf32>
func.func @uniform_constants() -> (tensor<8x10xf32>, tensor<80xf32>, tensor<80xf32>) {
  %zeros = onnxg.node "Constant"() opset 17 attributes {value = dense_resource<zeros> : tensor<8x10xf32>} : () -> tensor<8x10xf32>
  %ones = onnxg.node "Constant"() opset 17 attributes {value = dense<1.0> : tensor<80xf32>} : () -> tensor<80xf32>
  %mixed = onnxg.node "Constant"() opset 17 attributes {value = dense_resource<mixed> : tensor<80xf32>} : () -> tensor<80xf32>
  return %zeros, %ones, %mixed : tensor<8x10xf32>, tensor<80xf32>, tensor<80xf32>
}

{-#
  dialect_resources: {
    builtin: {
      zeros: "0x040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      mixed: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F00000040"
    }
  }
#-}

// -----

// A boolean resource (a byte per element; LLVM has no global of an i1
// resource) becomes dense bools.
// CHECK-LABEL: func.func @boolean_resource(
// CHECK:         arith.constant dense<{{\[}}[true, false], [false, true]]> : tensor<2x2xi1>
func.func @boolean_resource() -> tensor<2x2xi1> {
  %mask = onnxg.node "Constant"() opset 17 attributes {value = dense_resource<mask> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
  return %mask : tensor<2x2xi1>
}

{-#
  dialect_resources: {
    builtin: {
      mask: "0x0100000001000001"
    }
  }
#-}

// -----

// ConstantOfShape of a boolean value (a resource, as the importer keeps
// booleans): a fill of true. The shape folds for integer users too.
// CHECK-LABEL: func.func @boolean_constant_of_shape(
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         linalg.fill ins(%[[TRUE]] : i1) outs(%{{.*}} : tensor<1024xi1>)
// CHECK:         arith.constant dense<1> : tensor<2xi64>
func.func @boolean_constant_of_shape() -> (tensor<1024xi1>, tensor<2xi64>) {
  %n = onnxg.node "Constant"() opset 17 attributes {value = dense<1024> : tensor<1xi64>} : () -> tensor<1xi64>
  %mask = onnxg.node "ConstantOfShape"(%n) opset 17 attributes {value = dense_resource<yes> : tensor<1xi1>} : (tensor<1xi64>) -> tensor<1024xi1>
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %ones = onnxg.node "ConstantOfShape"(%two) opset 17 attributes {value = dense_resource<yes> : tensor<1xi1>} : (tensor<1xi64>) -> tensor<2xi1>
  %wide = onnxg.node "Cast"(%ones) opset 17 attributes {to = 7 : i64} : (tensor<2xi1>) -> tensor<2xi64>
  return %mask, %wide : tensor<1024xi1>, tensor<2xi64>
}

{-#
  dialect_resources: {
    builtin: {
      yes: "0x0100000001"
    }
  }
#-}

// -----

// A negative step reads the positive box from the last element read, then
// reverses it: x[3:0:-2] of 6 elements is x[1], x[3] reversed.
// CHECK-LABEL: func.func @slice_backwards(
// CHECK:         %[[BOX:.*]] = tensor.extract_slice %{{.*}}[0, 1] [2, 2] [1, 2] : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:           %[[J:.*]] = linalg.index 1
// CHECK:           %[[LAST:.*]] = arith.subi %{{.*}}, %c1
// CHECK:           %[[K:.*]] = arith.subi %[[LAST]], %[[J]]
// CHECK:           tensor.extract %[[BOX]][%{{.*}}, %[[K]]]
func.func @slice_backwards(%x: tensor<2x6xf32>) -> tensor<2x2xf32> {
  %starts = onnxg.node "Constant"() opset 17 attributes {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ends = onnxg.node "Constant"() opset 17 attributes {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = onnxg.node "Constant"() opset 17 attributes {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %steps = onnxg.node "Constant"() opset 17 attributes {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnxg.node "Slice"(%x, %starts, %ends, %axes, %steps) opset 17 : (tensor<2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Pad: negative pads crop first; constant mode with a value known only at
// run time reads it in a generic's body (a kernel, not the host) and
// selects it outside the input; edge, reflect and wrap read each element
// from where the mode maps it.
// CHECK-LABEL: func.func @pads(
// CHECK-SAME:      %{{[^:]*}}: tensor<2x5xf32>, %[[V:[^:]*]]: tensor<f32>
// CHECK:         %[[CROP:.*]] = tensor.extract_slice %{{.*}}[0, 1] [2, 4] [1, 1] : tensor<2x5xf32> to tensor<2x4xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x6xf32>)
// CHECK:           %[[ELEMENT:.*]] = tensor.extract %[[CROP]]
// CHECK:           %[[VALUE:.*]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK:           arith.select %{{.*}}, %[[ELEMENT]], %[[VALUE]] : f32
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:           arith.remsi %{{.*}}, %c8
// CHECK:           arith.minsi
// CHECK:           tensor.extract %{{.*}} : tensor<2x5xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x7xf32>)
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x7xf32>)
// CHECK:           arith.remsi %{{.*}}, %c5
// CHECK-NOT:       arith.minsi
// CHECK:           tensor.extract
func.func @pads(%x: tensor<2x5xf32>, %v: tensor<f32>) -> (tensor<3x6xf32>, tensor<2x8xf32>, tensor<2x7xf32>, tensor<2x7xf32>) {
  %crop = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, -1, 0, 2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnxg.node "Pad"(%x, %crop, %v) opset 17 : (tensor<2x5xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>
  %pads = onnxg.node "Constant"() opset 17 attributes {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = onnxg.node "Constant"() opset 18 attributes {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnxg.none
  %1 = onnxg.node "Pad"(%x, %pads, %none, %axes) opset 18 attributes {mode = "reflect"} : (tensor<2x5xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<2x8xf32>
  %two = onnxg.node "Constant"() opset 17 attributes {value = dense<[0, 2, 0, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %2 = onnxg.node "Pad"(%x, %two) opset 17 attributes {mode = "edge"} : (tensor<2x5xf32>, tensor<4xi64>) -> tensor<2x7xf32>
  %3 = onnxg.node "Pad"(%x, %two) opset 19 attributes {mode = "wrap"} : (tensor<2x5xf32>, tensor<4xi64>) -> tensor<2x7xf32>
  return %0, %1, %2, %3 : tensor<3x6xf32>, tensor<2x8xf32>, tensor<2x7xf32>, tensor<2x7xf32>
}

// -----

// DepthToSpace (DCR) splits the channels into [b, b, C/b^2], moves the
// blocks after H and W, and merges them in.
// CHECK-LABEL: func.func @depth_to_space(
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 2, 2, 2, 3, 5] : tensor<1x8x3x5xf32> into tensor<1x2x2x2x3x5xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x2x2x2x3x5xf32>) outs(%{{.*}} : tensor<1x2x3x2x5x2xf32>) permutation = [0, 3, 4, 1, 5, 2]
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<1x2x3x2x5x2xf32> into tensor<1x2x6x10xf32>
func.func @depth_to_space(%x: tensor<1x8x3x5xf32>) -> tensor<1x2x6x10xf32> {
  %0 = onnxg.node "DepthToSpace"(%x) opset 17 attributes {blocksize = 2 : i64} : (tensor<1x8x3x5xf32>) -> tensor<1x2x6x10xf32>
  return %0 : tensor<1x2x6x10xf32>
}

// -----

// Resize, linear: each output element blends the 2^2 neighbours of its
// source coordinate ((x + 0.5) / scale - 0.5) along the resized axes.
// CHECK-LABEL: func.func @resize_linear(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x6xf32>)
// CHECK-COUNT-2:   math.floor
// CHECK-COUNT-4:   tensor.extract %{{.*}} : tensor<1x1x2x3xf32>
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
func.func @resize_linear(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %sizes = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1, 4, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
  %none = onnxg.none
  %0 = onnxg.node "Resize"(%x, %none, %none, %sizes) opset 17 attributes {mode = "linear"} : (tensor<1x1x2x3xf32>, none, none, tensor<4xi64>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// -----

// Resize, cubic: 4 neighbours per resized axis (4^2 reads), weighted by
// Keys' kernel; with exclude_outside, each axis's weights of neighbours
// outside it are zeroed and the rest divided by their sum.
// CHECK-LABEL: func.func @resize_cubic(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x6xf32>)
// CHECK-COUNT-4:   arith.select
// CHECK-COUNT-4:   arith.divf
// CHECK-COUNT-4:   arith.select
// CHECK-COUNT-4:   arith.divf
// CHECK-COUNT-16:  tensor.extract %{{.*}} : tensor<1x1x2x3xf32>
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
func.func @resize_cubic(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %sizes = onnxg.node "Constant"() opset 17 attributes {value = dense<[1, 1, 4, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
  %none = onnxg.none
  %0 = onnxg.node "Resize"(%x, %none, %none, %sizes) opset 17 attributes {mode = "cubic", exclude_outside = 1 : i64} : (tensor<1x1x2x3xf32>, none, none, tensor<4xi64>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// -----

// The deprecated Upsample (opset 7: scales an attribute) is opset 10's
// Resize: asymmetric coordinates (x / scale), nearest truncating when
// upsampling, the ceiling when downsampling (opset 10's Resize).
// CHECK-LABEL: func.func @upsample_nearest(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x6x4xf32>)
// CHECK:           %[[SCALE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK:           arith.divf %{{.*}}, %[[SCALE]] : f32
// CHECK:           math.floor
// CHECK-NOT:       math.floor
// CHECK:           tensor.extract %{{.*}} : tensor<1x1x2x4xf32>
// CHECK-LABEL: func.func @resize10_downsample(
// CHECK:           math.ceil
func.func @upsample_nearest(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x6x4xf32> {
  %0 = onnxg.node "Upsample"(%x) opset 7 attributes {mode = "nearest", scales = array<f32: 1.0, 1.0, 3.0, 1.0>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x6x4xf32>
  return %0 : tensor<1x1x6x4xf32>
}
func.func @resize10_downsample(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x1x2xf32> {
  %scales = onnxg.node "Constant"() opset 10 attributes {value = dense<[1.0, 1.0, 0.6, 0.6]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = onnxg.node "Resize"(%x, %scales) opset 10 attributes {mode = "nearest"} : (tensor<1x1x2x4xf32>, tensor<4xf32>) -> tensor<1x1x1x2xf32>
  return %0 : tensor<1x1x1x2xf32>
}

// -----

// GatherND with batch_dims 1: each index tuple (depth 1) picks a row of
// its batch's data; the tuple is read from indices in the body.
// CHECK-LABEL: func.func @gather_nd(
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x1x2xf32>)
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[T:.*]] = linalg.index 1 : index
// CHECK:           %[[INDEX:.*]] = tensor.extract %{{.*}}[%[[B]], %[[T]], %c0] : tensor<2x1x1xi64>
// CHECK:           tensor.extract %{{.*}}[%[[B]], %{{.*}}, %{{.*}}] : tensor<2x2x2xf32>
func.func @gather_nd(%data: tensor<2x2x2xf32>, %indices: tensor<2x1x1xi64>) -> tensor<2x1x2xf32> {
  %0 = onnxg.node "GatherND"(%data, %indices) opset 13 attributes {batch_dims = 1 : i64} : (tensor<2x2x2xf32>, tensor<2x1x1xi64>) -> tensor<2x1x2xf32>
  return %0 : tensor<2x1x2xf32>
}

// -----

// EyeLike: ones where column - row = k, in dtype's type. A node whose
// results have no elements (Split into empty parts) becomes empty
// constants.
// CHECK-LABEL: func.func @eye_like_and_empty(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xi32>)
// CHECK:           arith.subi
// CHECK:           arith.cmpi eq, %{{.*}}, %c1 : index
// CHECK:           arith.extui %{{.*}} : i1 to i32
// CHECK:         %[[EMPTY:.*]] = arith.constant dense<> : tensor<0xf32>
// CHECK:         return %{{.*}}, %[[EMPTY]], %[[EMPTY]]
func.func @eye_like_and_empty(%x: tensor<3x4xf32>, %e: tensor<0xf32>) -> (tensor<3x4xi32>, tensor<0xf32>, tensor<0xf32>) {
  %0 = onnxg.node "EyeLike"(%x) opset 9 attributes {dtype = 6 : i64, k = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi32>
  %1:2 = onnxg.node "Split"(%e) opset 18 attributes {num_outputs = 2 : i64} : (tensor<0xf32>) -> (tensor<0xf32>, tensor<0xf32>)
  return %0, %1#0, %1#1 : tensor<3x4xi32>, tensor<0xf32>, tensor<0xf32>
}

// -----

// A Hann window of a constant size is a constant (periodic: the cosine's
// period is the size); ReverseSequence reads each batch's first
// sequence_lens elements backwards.
// CHECK-LABEL: func.func @window_and_reverse(
// CHECK:         arith.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01]> : tensor<4xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2xf32>)
// CHECK:           %[[T:.*]] = linalg.index 0
// CHECK:           %[[B:.*]] = linalg.index 1
// CHECK:           %[[LEN:.*]] = tensor.extract %{{.*}}[%[[B]]] : tensor<2xi64>
// CHECK:           arith.cmpi slt, %[[T]], %{{.*}}
// CHECK:           arith.select
// CHECK:           tensor.extract
func.func @window_and_reverse(%x: tensor<3x2xf32>, %lens: tensor<2xi64>) -> (tensor<4xf32>, tensor<3x2xf32>) {
  %size = onnxg.node "Constant"() opset 17 attributes {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0 = onnxg.node "HannWindow"(%size) opset 17 : (tensor<i64>) -> tensor<4xf32>
  %1 = onnxg.node "ReverseSequence"(%x, %lens) opset 17 : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0, %1 : tensor<4xf32>, tensor<3x2xf32>
}

// -----

// Split sizes of more than 64 equal elements (the exporter's 128 ones for
// an unrolled LSTM's steps) lower to a fill, which still reads as the
// constant sizes: 65 slices of one element.
// CHECK-LABEL: func.func @split_by_splat_sizes(
// CHECK:         linalg.fill
// CHECK-COUNT-65: tensor.extract_slice %{{.*}}[{{[0-9]+}}] [1] [1]
// CHECK-NOT:     tensor.extract_slice
func.func @split_by_splat_sizes(%x: tensor<65xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %sizes = onnxg.node "Constant"() opset 17 attributes {value = dense<1> : tensor<65xi64>} : () -> tensor<65xi64>
  %p:65 = onnxg.node "Split"(%x, %sizes) opset 17 attributes {axis = 0 : i64} : (tensor<65xf32>, tensor<65xi64>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  return %p#0, %p#1, %p#2, %p#3, %p#4, %p#5, %p#6, %p#7, %p#8, %p#9, %p#10, %p#11, %p#12, %p#13, %p#14, %p#15, %p#16, %p#17, %p#18, %p#19, %p#20, %p#21, %p#22, %p#23, %p#24, %p#25, %p#26, %p#27, %p#28, %p#29, %p#30, %p#31, %p#32, %p#33, %p#34, %p#35, %p#36, %p#37, %p#38, %p#39, %p#40, %p#41, %p#42, %p#43, %p#44, %p#45, %p#46, %p#47, %p#48, %p#49, %p#50, %p#51, %p#52, %p#53, %p#54, %p#55, %p#56, %p#57, %p#58, %p#59, %p#60, %p#61, %p#62, %p#63, %p#64 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// -----

// AffineGrid (opset 20): each grid element is theta's row times the base
// point (x, y, 1), x = -1 + (2w + 1) / W at pixel centres: theta[n, j, 2]
// plus theta[n, j, 0] x plus theta[n, j, 1] y.
// CHECK-LABEL: func.func @affine_grid(
// CHECK:         linalg.generic
// CHECK:           %[[J:.*]] = linalg.index 3
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %[[J]], %c2]
// CHECK:           arith.constant -8.000000e-01 : f32
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %[[J]], %c0]
// CHECK:         -> tensor<2x4x5x2xf32>
func.func @affine_grid(%theta: tensor<2x2x3xf32>) -> tensor<2x4x5x2xf32> {
  %size = onnxg.node "Constant"() opset 20 attributes {value = dense<[2, 3, 4, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnxg.node "AffineGrid"(%theta, %size) opset 20 : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x4x5x2xf32>
  return %0 : tensor<2x4x5x2xf32>
}

// -----

// CenterCropPad (opset 18): a centered crop (extract_slice from (size -
// target) / 2), then a centered zero pad ((target - size) / 2 before).
// CHECK-LABEL: func.func @center_crop_pad(
// CHECK:         tensor.extract_slice %{{.*}}[0, 1, 0] [2, 3, 7] [1, 1, 1] : tensor<2x6x7xf32> to tensor<2x3x7xf32>
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1] high[0, 0, 2]
func.func @center_crop_pad(%x: tensor<2x6x7xf32>) -> tensor<2x3x10xf32> {
  %shape = onnxg.node "Constant"() opset 18 attributes {value = dense<[3, 10]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnxg.node "CenterCropPad"(%x, %shape) opset 18 attributes {axes = array<i64: 1, -1>} : (tensor<2x6x7xf32>, tensor<2xi64>) -> tensor<2x3x10xf32>
  return %0 : tensor<2x3x10xf32>
}
