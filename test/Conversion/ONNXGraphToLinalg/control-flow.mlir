// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// An If whose condition is a constant becomes its branch's ops; the other
// branch is dropped.
// CHECK-LABEL: func.func @if_constant(
// CHECK-NOT:     scf.if
// CHECK:         arith.maximumf
// CHECK-NOT:     arith.negf
// CHECK:         return
func.func @if_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<true> : tensor<i1>
  %0 = onnxg.node "If"(%c) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    %e = onnxg.node "Neg"(%x) opset 17 : (tensor<4xf32>) -> tensor<4xf32>
    onnxg.yield ["e"] %e : tensor<4xf32>
  }, {
    %t = onnxg.node "Relu"(%x) opset 17 : (tensor<4xf32>) -> tensor<4xf32>
    onnxg.yield ["t"] %t : tensor<4xf32>
  } : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A condition computed at run time: an scf.if on the extracted flag, each
// branch lowered inside it (then_branch is region 1: regions follow the
// attributes' names). A branch may yield an outer value.
// CHECK-LABEL: func.func @if_runtime(
// CHECK-SAME:    %[[C:.*]]: tensor<1xi1>, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[FLAG:.*]] = tensor.extract %[[C]][%{{.*}}] : tensor<1xi1>
// CHECK:         %[[R:.*]] = scf.if %[[FLAG]] -> (tensor<4xf32>) {
// CHECK-NEXT:      scf.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK:           %[[NEG:.*]] = linalg.generic
// CHECK:             arith.negf
// CHECK:           scf.yield %[[NEG]] : tensor<4xf32>
// CHECK:         return %[[R]]
func.func @if_runtime(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnxg.node "If"(%c) opset 17 attributes {else_branch = 0 : index, then_branch = 1 : index} subgraphs {
    %e = onnxg.node "Neg"(%x) opset 17 : (tensor<4xf32>) -> tensor<4xf32>
    onnxg.yield ["e"] %e : tensor<4xf32>
  }, {
    onnxg.yield ["x"] %x : tensor<4xf32>
  } : (tensor<1xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A Loop of a constant trip count unrolls: the body once per iteration,
// with the iteration number a constant (0, 1, 2) and the carried value of
// the iteration before; the scan output stacks the iterations' values with
// one tensor.concat.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME:    %[[Y:.*]]: tensor<2xf32>)
// CHECK:         %[[I0:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK:         %[[V1:.*]] = linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<2xf32>, tensor<f32>)
// CHECK:         %[[I1:.*]] = arith.constant dense<1> : tensor<i64>
// CHECK:         %[[V2:.*]] = linalg.generic {{.*}} ins(%[[V1]], %{{.*}} : tensor<2xf32>, tensor<f32>)
// CHECK:         %[[I2:.*]] = arith.constant dense<2> : tensor<i64>
// CHECK:         %[[V3:.*]] = linalg.generic {{.*}} ins(%[[V2]], %{{.*}} : tensor<2xf32>, tensor<f32>)
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[R1:.*]] = tensor.expand_shape %[[V1]] {{.*}} into tensor<1x2xf32>
// CHECK-DAG:     %[[R2:.*]] = tensor.expand_shape %[[V2]] {{.*}} into tensor<1x2xf32>
// CHECK-DAG:     %[[R3:.*]] = tensor.expand_shape %[[V3]] {{.*}} into tensor<1x2xf32>
// CHECK:         %[[SCAN:.*]] = tensor.concat dim(0) %[[R1]], %[[R2]], %[[R3]]
// CHECK:         return %[[V3]], %[[SCAN]]
func.func @loop(%y: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %m = arith.constant dense<3> : tensor<i64>
  %none = onnxg.none
  %0:2 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %f = onnxg.node "Cast"(%i) opset 16 attributes {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
    %w = onnxg.node "Add"(%v, %f) opset 16 : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    onnxg.yield ["cond", "w", "scan"] %cond, %w, %w : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  } : (tensor<i64>, none, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// A Loop with a condition ends at the first iteration whose condition,
// computed from the iteration number, is false: 2 iterations of at most 10.
// CHECK-LABEL: func.func @loop_until(
// CHECK-COUNT-2: arith.mulf
// CHECK-NOT:     arith.mulf
// CHECK:         return
func.func @loop_until(%y: tensor<2xf32>) -> tensor<2xf32> {
  %m = arith.constant dense<10> : tensor<i64>
  %true = arith.constant dense<true> : tensor<i1>
  %one = arith.constant dense<1> : tensor<i64>
  %0 = onnxg.node "Loop"(%m, %true, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %w = onnxg.node "Mul"(%v, %v) opset 16 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %c = onnxg.node "Less"(%i, %one) opset 16 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    onnxg.yield ["c", "w"] %c, %w : tensor<i1>, tensor<2xf32>
  } : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Without a trip count, a condition computed from the iteration number
// folds in each copy; still true after 256 copies, the unroll is dropped
// for an scf.while, which runs the 299 iterations.
// CHECK-LABEL: func.func @loop_until_past_unroll_limit(
// CHECK:         scf.while
// CHECK-COUNT-1: arith.mulf
// CHECK-NOT:     arith.mulf
// CHECK:         return
func.func @loop_until_past_unroll_limit(%y: tensor<2xf32>) -> tensor<2xf32> {
  %none = onnxg.none
  %limit = arith.constant dense<299> : tensor<i64>
  %0 = onnxg.node "Loop"(%none, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %w = onnxg.node "Mul"(%v, %v) opset 16 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %c = onnxg.node "Less"(%i, %limit) opset 16 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    onnxg.yield ["c", "w"] %c, %w : tensor<i1>, tensor<2xf32>
  } : (none, none, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A condition computed from the data: an scf.while over (iteration number,
// condition, carried value) that stops at the trip count or when the
// body's condition is false; the body lowers in its "after" region, its
// iteration number and condition rebuilt as tensors.
// CHECK-LABEL: func.func @loop_while(
// CHECK-SAME:    %[[Y:.*]]: tensor<2xf32>)
// CHECK:         %[[LIMIT:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK:         %[[FLAG:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[W:.*]]:3 = scf.while (%[[I:.*]] = %[[ZERO]], %[[C:.*]] = %[[FLAG]], %[[V:.*]] = %[[Y]]) : (i64, i1, tensor<2xf32>) -> (i64, i1, tensor<2xf32>) {
// CHECK:           %[[LESS:.*]] = arith.cmpi slt, %[[I]], %[[LIMIT]] : i64
// CHECK:           %[[KEEP:.*]] = arith.andi %[[C]], %[[LESS]] : i1
// CHECK:           scf.condition(%[[KEEP]]) %[[I]], %[[C]], %[[V]]
// CHECK:         } do {
// CHECK:         ^bb0(%[[I2:.*]]: i64, %[[C2:.*]]: i1, %[[V2:.*]]: tensor<2xf32>):
// CHECK:           %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[V2]], %{{.*}} : tensor<2xf32>, tensor<f32>)
// CHECK:             arith.mulf
// CHECK:           arith.cmpf olt
// CHECK:           %[[NEXT:.*]] = arith.addi %[[I2]], %{{.*}} : i64
// CHECK:           %[[NEXTC:.*]] = tensor.extract
// CHECK:           scf.yield %[[NEXT]], %[[NEXTC]], %[[NEW]] : i64, i1, tensor<2xf32>
// CHECK:         return %[[W]]#2
func.func @loop_while(%y: tensor<2xf32>) -> tensor<2xf32> {
  %m = arith.constant dense<100> : tensor<i64>
  %true = arith.constant dense<true> : tensor<i1>
  %0 = onnxg.node "Loop"(%m, %true, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %two = arith.constant dense<2.0> : tensor<f32>
    %w = onnxg.node "Mul"(%v, %two) opset 16 : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    %s = onnxg.node "ReduceSum"(%w) opset 13 attributes {keepdims = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
    %lim = arith.constant dense<1000.0> : tensor<f32>
    %c = onnxg.node "Less"(%s, %lim) opset 16 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnxg.yield ["c", "w"] %c, %w : tensor<i1>, tensor<2xf32>
  } : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A Scan unrolls: one copy of the body per element, the state carried from
// copy to copy; the reversed input is read last element first, and the
// reversed output, stacked along axis 1, is written last iteration first.
// CHECK-LABEL: func.func @scan_unrolled(
// CHECK-SAME:    %[[S:.*]]: tensor<2xf32>, %[[X:.*]]: tensor<3x2xf32>, %[[XR:.*]]: tensor<2x3xf32>)
// CHECK:         %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK:         %[[R0:.*]] = tensor.extract_slice %[[XR]][0, 2] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2xf32>
// CHECK:         %[[S1:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[X0]] :
// CHECK:         %[[Y0:.*]] = linalg.generic {{.*}} ins(%[[S1]], %[[R0]] :
// CHECK:         tensor.extract_slice %[[X]][1, 0]
// CHECK:         tensor.extract_slice %[[XR]][0, 1]
// CHECK:         tensor.extract_slice %[[X]][2, 0]
// CHECK:         tensor.extract_slice %[[XR]][0, 0]
// CHECK:         linalg.generic
// CHECK:         %[[Y2:.*]] = linalg.generic
// CHECK:         %[[E0:.*]] = tensor.expand_shape %[[Y0]] {{\[\[}}0, 1]] output_shape [2, 1]
// CHECK:         %[[E1:.*]] = tensor.expand_shape
// CHECK:         %[[E2:.*]] = tensor.expand_shape %[[Y2]]
// CHECK:         %[[Y:.*]] = tensor.concat dim(1) %[[E2]], %[[E1]], %[[E0]] : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK:         return %{{.*}}, %[[Y]]
func.func @scan_unrolled(%s: tensor<2xf32>, %x: tensor<3x2xf32>, %xr: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %0:2 = onnxg.node "Scan"(%s, %x, %xr) opset 16 attributes {body = 0 : index, num_scan_inputs = 2 : i64, scan_input_axes = array<i64: 0, -1>, scan_input_directions = array<i64: 0, 1>, scan_output_axes = array<i64: 1>, scan_output_directions = array<i64: 1>} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>, %ri: tensor<2xf32>):
    %so = onnxg.node "Add"(%si, %xi) opset 14 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %y = onnxg.node "Mul"(%so, %ri) opset 14 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnxg.yield ["so", "y"] %so, %y : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2x3xf32>
}

// -----

// A Scan of more than 256 elements is an scf.for carrying the state and
// the output, into which each iteration inserts its element (at 299 - i
// for a reversed input).
// CHECK-LABEL: func.func @scan_loop(
// CHECK-SAME:    %[[S:.*]]: tensor<2xf32>, %[[X:.*]]: tensor<300x2xf32>)
// CHECK-DAG:     %[[EMPTY:.*]] = tensor.empty() : tensor<300x2xf32>
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 299 : index
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[SI:.*]] = %[[S]], %[[ACC:.*]] = %[[EMPTY]]) -> (tensor<2xf32>, tensor<300x2xf32>) {
// CHECK:           %[[J:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:           %[[XI:.*]] = tensor.extract_slice %[[X]][%[[J]], 0] [1, 2] [1, 1] : tensor<300x2xf32> to tensor<2xf32>
// CHECK:           %[[SO:.*]] = linalg.generic {{.*}} ins(%[[SI]], %[[XI]] :
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[SO]] into %[[ACC]][%[[I]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<300x2xf32>
// CHECK:           scf.yield %[[SO]], %[[NEXT]] : tensor<2xf32>, tensor<300x2xf32>
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @scan_loop(%s: tensor<2xf32>, %x: tensor<300x2xf32>) -> (tensor<2xf32>, tensor<300x2xf32>) {
  %0:2 = onnxg.node "Scan"(%s, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    %so = onnxg.node "Add"(%si, %xi) opset 14 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnxg.yield ["so", "y"] %so, %so : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2xf32>, tensor<300x2xf32>) -> (tensor<2xf32>, tensor<300x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<300x2xf32>
}

// -----

// A body that yields its own arguments: the loops yield their region's
// arguments (the condition re-read from its tensor), the scan inserts the
// element it read.
// CHECK-LABEL: func.func @bodies_yield_their_arguments(
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:         ^bb0(%[[I:.*]]: i64, %[[C:.*]]: i1, %[[V:.*]]: tensor<2xf32>):
// CHECK:           %[[CT:.*]] = tensor.from_elements %[[C]] : tensor<i1>
// CHECK:           %[[NEXTC:.*]] = tensor.extract %[[CT]][] : tensor<i1>
// CHECK:           scf.yield %{{.*}}, %[[NEXTC]], %[[V]] : i64, i1, tensor<2xf32>
// CHECK:         scf.for
// CHECK:           %[[E:.*]] = tensor.extract_slice
// CHECK:           tensor.insert_slice %[[E]]
func.func @bodies_yield_their_arguments(%m: tensor<i64>, %y: tensor<2xf32>, %x: tensor<300x2xf32>) -> (tensor<2xf32>, tensor<300x2xf32>) {
  %none = onnxg.none
  %0 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    onnxg.yield ["cond", "v"] %cond, %v : tensor<i1>, tensor<2xf32>
  } : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  %1:2 = onnxg.node "Scan"(%y, %x) opset 16 attributes {body = 0 : index, num_scan_inputs = 1 : i64} subgraphs {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    onnxg.yield ["si", "xi"] %si, %xi : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2xf32>, tensor<300x2xf32>) -> (tensor<2xf32>, tensor<300x2xf32>)
  return %0, %1#1 : tensor<2xf32>, tensor<300x2xf32>
}

// -----

// A Dropout in a body that lowers once draws by the iteration number too:
// its stream key mixes in the while loop's iteration.
// CHECK-LABEL: func.func @dropout_in_while_body(
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:         ^bb0(%[[I:.*]]: i64, %{{.*}}: i1, %{{.*}}: tensor<4xf32>):
// CHECK:           %[[IT:.*]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK:           linalg.generic
// CHECK:             %[[N:.*]] = tensor.extract %[[IT]][] : tensor<i64>
// CHECK:             arith.xori %{{.*}}, %[[N]] : i64
func.func @dropout_in_while_body(%m: tensor<i64>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %none = onnxg.none
  %ratio = arith.constant dense<0.5> : tensor<f32>
  %train = arith.constant dense<true> : tensor<i1>
  %0 = onnxg.node "Loop"(%m, %none, %y) opset 16 attributes {body = 0 : index} subgraphs {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<4xf32>):
    %d = onnxg.node "Dropout"(%v, %ratio, %train) opset 13 : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
    onnxg.yield ["cond", "d"] %cond, %d : tensor<i1>, tensor<4xf32>
  } : (tensor<i64>, none, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
