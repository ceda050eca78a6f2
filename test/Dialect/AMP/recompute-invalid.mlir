// RUN: not amp-opt %s --amp-recompute="mode=fast" -split-input-file 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %s --amp-recompute="mode=budget memory-budget=lots" -split-input-file 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not amp-opt %s --amp-recompute="mode=budget memory-budget=-1GiB" -split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not amp-opt %s --amp-recompute="mode=mincut memory-budget=50%" -split-input-file 2>&1 | FileCheck %s --check-prefix=NOT-BUDGET
// RUN: not amp-opt %s --amp-recompute="mode=budget" -split-input-file 2>&1 | FileCheck %s --check-prefix=NO-BUDGET
// RUN: not amp-opt %s --amp-recompute="mode=optimal optimal-max-ops=1" -split-input-file 2>&1 | FileCheck %s --check-prefix=TOO-LARGE
// RUN: amp-opt %s --amp-pipeline="precision=fp32 memory-budget=1KiB" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORWARD-ONLY

// MODE: error: amp-recompute: unknown mode 'fast' (none, sqrt, mincut, budget or optimal)
// BUDGET: error: amp-recompute: memory-budget='lots' is not a number of bytes, <n>KiB, <n>MiB, <n>GiB or <n>%
// NEGATIVE: error: amp-recompute: memory-budget='-1GiB' is not a number
// NOT-BUDGET: error: amp-recompute: memory-budget needs mode=budget or mode=optimal, not mode=mincut
// NO-BUDGET: error: amp-recompute: mode=budget needs a memory-budget
// TOO-LARGE: error: amp-recompute: mode=optimal takes at most 1 forward ops (optimal-max-ops); 'step' has 2

func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = onnxg.node "Tanh"(%x) opset 17 {amp.region = "forward"} : (tensor<4xf32>) -> tensor<4xf32>
  %n = onnxg.node "Neg"(%t) opset 17 {amp.region = "forward"} : (tensor<4xf32>) -> tensor<4xf32>
  %g = onnxg.node "Mul"(%n, %x) opset 17 {amp.region = "backward"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %t, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// A graph without a backward has nothing to recompute, and says so.
// FORWARD-ONLY: warning: amp-recompute: no function has forward and backward regions (amp-analyze-training marks them): nothing recomputed
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = onnxg.node "Tanh"(%x) opset 17 : (tensor<4xf32>) -> tensor<4xf32>
  return %t : tensor<4xf32>
}
