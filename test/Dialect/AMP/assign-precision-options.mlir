// amp-assign-precision's options: a policy overrides the table (reason
// "policy"); bad options are errors.
// RUN: amp-opt %s --amp-assign-precision="remarks=true op-class=Softmax:always" -verify-diagnostics=only-expected -o /dev/null
// RUN: amp-opt %s --amp-assign-precision="op-class=Softmax:always node-class=/head/MatMul:keep-fp32" 2>&1 | FileCheck %s --check-prefix=NODE
// RUN: not amp-opt %s --amp-assign-precision="precision=fp8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not amp-opt %s --amp-assign-precision="rule=sideways" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: not amp-opt %s --amp-assign-precision="device=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not amp-opt %s --amp-assign-precision="device=v100 precision=bf16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=V100
// RUN: not amp-opt %s --amp-assign-precision="op-class=MatMul:always,MatMul:infer" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: amp-opt %S/Inputs/named-dims.mlir --amp-assign-precision="remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GUESS
// RUN: amp-opt %S/Inputs/named-dims.mlir --amp-assign-precision="remarks=true dim=batch:8192" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not amp-opt %s --amp-assign-precision="dim=batch:many" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-DIM
// RUN: amp-opt %s --amp-assign-precision="remarks=true node-class=/head/MatMul:keep-fp32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME

// PRECISION: error: amp-assign-precision: unknown precision 'fp8'; expected fp16 or bf16
// RULE: error: amp-assign-precision: unknown rule 'sideways'; expected between or downstream
// DEVICE: error: amp-assign-precision: unknown device 'tpu'; expected h100, a100 or v100
// V100: error: amp-assign-precision: device v100 has no bf16
// NODE: onnxg.node "MatMul"{{.*}}amp.precision = f16, amp.reason = "always-list"
// NODE: onnxg.node "Softmax"{{.*}}amp.precision = f16, amp.reason = "policy"
// NODE: onnxg.node "MatMul"{{.*}}amp.precision = f32, amp.reason = "policy"
// BAD-DIM: error: amp-assign-precision: bad dim 'batch:many'; expected <name>:<size> with a positive size
// A named dynamic dimension takes its size from `dim`; without one the
// decision rests on the default size and its remark says so.
// GUESS: remark: 'f32' (cost-model); guessed sizes of dims batch
// NAMED: remark: 'f16' (always-list){{$}}
// Remarks name the ONNX node, since imported graphs have no source lines.
// NAME: remark: {{.*}}'f32' (policy) at node '/head/MatMul'
// TWO: error: op type 'MatMul' is in two lists: 'always' (pass option) and 'infer' (pass option)

func.func @policy(%x: tensor<8192x1024xf32>, %w: tensor<1024x1024xf32>) {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = onnxg.node "MatMul"(%x, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32>
  // expected-remark @+1 {{'f16' (policy)}}
  %1 = onnxg.node "Softmax"(%0) opset 13
      : (tensor<8192x1024xf32>) -> tensor<8192x1024xf32>
  // Named by its location, so checked in the NODE run only.
  %2 = onnxg.node "MatMul"(%1, %w) opset 13
      : (tensor<8192x1024xf32>, tensor<1024x1024xf32>) -> tensor<8192x1024xf32> loc("/head/MatMul")
  return
}
