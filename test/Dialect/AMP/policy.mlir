// The precision policy: the table's class, overridden by op type, then by
// node name, from a policy file and from pass options (which win over the
// file). Unknown op types are never-touch.
// RUN: amp-opt %s -allow-unregistered-dialect --test-amp-policy -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: amp-opt %s -allow-unregistered-dialect --test-amp-policy="policy=%S/Inputs/policy.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: amp-opt %s -allow-unregistered-dialect --test-amp-policy="policy=%S/Inputs/policy.json op-class=MatMul:infer node-class=/block/Add:keep-fp32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS

func.func @table(%x: tensor<4x4xf32>) {
  %0 = onnxg.node "MatMul"(%x, %x) opset 13
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("/block/MatMul")
  %1 = onnxg.node "MatMul"(%x, %x) opset 13
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("/head/MatMul")
  %2 = onnxg.node "Add"(%0, %1) opset 14
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("/block/Add")
  %3 = onnxg.node "Softmax"(%2) opset 13
      : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = onnxg.node "FusedMatMul"(%x, %x) domain "com.microsoft" opset 1
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = "test.unregistered"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// Remarks come in op order; ops named by a location print the name.
// TABLE: remark: loc("/block/MatMul"): always (table)
// TABLE: remark: loc("/head/MatMul"): always (table)
// TABLE: remark: loc("/block/Add"): infer (table)
// TABLE: remark: keep-fp32 (table)
// TABLE: remark: always (table)
// TABLE: remark: never-touch (unknown-op)

// FILE: remark: loc("/block/MatMul"): keep-fp32 (policy-op-type)
// FILE: remark: loc("/head/MatMul"): always (policy-node)
// FILE: remark: loc("/block/Add"): never-touch (policy-node)
// FILE: remark: always (policy-op-type)
// FILE: remark: keep-fp32 (policy-op-type)
// FILE: remark: never-touch (unknown-op)

// The pass option replaces the file's MatMul entry; the node entry for
// /head/MatMul still wins over both.
// OPTIONS: remark: loc("/block/MatMul"): infer (policy-op-type)
// OPTIONS: remark: loc("/head/MatMul"): always (policy-node)
// OPTIONS: remark: loc("/block/Add"): keep-fp32 (policy-node)
