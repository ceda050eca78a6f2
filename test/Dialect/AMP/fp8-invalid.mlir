// amp-fp8's options are checked before anything changes.
// RUN: not amp-opt %s --amp-fp8="fp8=sometimes" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %s --amp-fp8="recipe=mxfp8" 2>&1 | FileCheck %s --check-prefix=RECIPE
// RUN: not amp-opt %s --amp-fp8="format=e5m2" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not amp-opt %s --amp-fp8="amax-algo=mean" 2>&1 | FileCheck %s --check-prefix=ALGO
// RUN: not amp-opt %s --amp-fp8="fp8-op=MatMul:sometimes" 2>&1 | FileCheck %s --check-prefix=CHOICE
// RUN: not amp-opt %s --amp-fp8="amax-history=0" 2>&1 | FileCheck %s --check-prefix=HISTORY

// MODE: error: amp-fp8: bad fp8 'sometimes'; expected auto, always or never
// RECIPE: error: amp-fp8: bad recipe 'mxfp8'; expected delayed, current or block
// FORMAT: error: amp-fp8: bad format 'e5m2'; expected auto, hybrid or e4m3 (E5M2 everywhere is not a training recipe)
// ALGO: error: amp-fp8: bad amax-algo 'mean'; expected max or most_recent
// CHOICE: error: policy override 'MatMul:sometimes': unknown FP8 choice 'sometimes'; expected always or never
// HISTORY: error: amp-fp8: amax-history must be positive and margin in [0, 64]
func.func @f(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  return %x : tensor<16x16xf32>
}
