// Bad policies are errors that name the file, the list and the entry.
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/policy-two-lists.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not amp-opt %s --test-amp-policy="op-class=MatMul:always,MatMul:keep-fp32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO-OPTIONS
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/policy-bad-class.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CLASS
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/policy-bad-key.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/policy-not-list.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/policy-truncated.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not amp-opt %s --test-amp-policy="policy=%S/Inputs/missing.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not amp-opt %s --test-amp-policy="op-class=MatMul" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not amp-opt %s --test-amp-policy="node-class=/a/b:fp8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION-CLASS

// TWO: error: op type 'MatMul' is in two lists: 'always' (policy file '{{.*}}policy-two-lists.json') and 'keep-fp32' (policy file '{{.*}}policy-two-lists.json')
// TWO-OPTIONS: error: op type 'MatMul' is in two lists: 'always' (pass option) and 'keep-fp32' (pass option)
// CLASS: error: policy file '{{.*}}policy-bad-class.json', op_types: unknown precision class 'fp16'; expected always, follow, infer, keep-fp32 or never-touch
// KEY: error: policy file '{{.*}}policy-bad-key.json': unknown key 'ops'; expected op_types, nodes or fp8
// LIST: error: policy file '{{.*}}policy-not-list.json', nodes.always must be a list of strings
// JSON: error: policy file '{{.*}}policy-truncated.json' is not valid JSON: {{.+}}
// MISSING: error: cannot read policy file '{{.*}}missing.json': {{.+}}
// FORM: error: policy override 'MatMul' must be written name:class
// OPTION-CLASS: error: policy override '/a/b:fp8': unknown precision class 'fp8'

func.func @f(%x: tensor<4xf32>) {
  %0 = onnxg.node "Relu"(%x) opset 14 : (tensor<4xf32>) -> tensor<4xf32>
  return
}
