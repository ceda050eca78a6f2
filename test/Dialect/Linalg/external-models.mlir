// linalg contractions and convolutions implement PrecisionOpInterface
// through external models (lib/Dialect/Linalg/ExternalModels.cpp): in low
// precision they read FP16 inputs and keep their FP32 output, the body
// widening each input element; other linalg ops keep their types.
// RUN: amp-opt %s --amp-assign-precision="remarks=true default-dim-size=4096" -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --amp-pipeline=default-dim-size=4096 --mlir-print-op-generic -split-input-file 2>/dev/null | FileCheck %s
// RUN: amp-opt %s --test-amp-cost-model -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST

// CHECK-LABEL: sym_name = "matmul"
// CHECK:         %[[B:.*]] = "amp.cast"(%arg1) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf16>
// CHECK-NEXT:    %[[A:.*]] = "amp.cast"(%arg0) : (tensor<4096x1024xf32>) -> tensor<4096x1024xf16>
// CHECK-NEXT:    "linalg.matmul"(%[[A]], %[[B]], %arg2)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[XW:.*]] = "arith.extf"(%[[X]]) : (f16) -> f32
// CHECK-NEXT:      %[[YW:.*]] = "arith.extf"(%[[Y]]) : (f16) -> f32
// CHECK-NEXT:      %[[M:.*]] = "arith.mulf"(%[[XW]], %[[YW]])
// CHECK-NEXT:      "arith.addf"(%[[ACC]], %[[M]])
// CHECK:         (tensor<4096x1024xf16>, tensor<1024x1024xf16>, tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
// COST: remark: flops 8.59e+09, fp32 131 us, fp16 {{.*}}: fp16
func.func @matmul(%a: tensor<4096x1024xf32>, %b: tensor<1024x1024xf32>,
                  %c: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  // expected-remark @+1 {{'f16' (always-list)}}
  %0 = linalg.matmul
      ins(%a, %b : tensor<4096x1024xf32>, tensor<1024x1024xf32>)
      outs(%c : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}

// -----

// A linalg.generic that is a contraction counts as one; an elementwise
// generic is never touched. The dynamic size is default-dim-size.
// CHECK-LABEL: sym_name = "generic"
// CHECK:         "linalg.generic"
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      "arith.extf"(%[[X]]) : (f16) -> f32
// CHECK-NEXT:      "arith.extf"(%[[Y]]) : (f16) -> f32
// CHECK:         (tensor<?x1024xf16>, tensor<1024x1024xf16>, tensor<?x1024xf32>) -> tensor<?x1024xf32>
// CHECK:         "linalg.generic"
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// COST: remark: flops 2.1e+06, {{.*}} (guessed sizes of ?)
// COST: remark: flops 1.02e+03, {{.*}}: fp32
#mm = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
       affine_map<(m, n, k) -> (m, n)>]
#ew = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>]
func.func @generic(%a: tensor<?x1024xf32>, %b: tensor<1024x1024xf32>,
                   %c: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  // expected-remark @+1 {{'f16' (always-list); guessed sizes of dims ?}}
  %0 = linalg.generic {indexing_maps = #mm,
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x1024xf32>, tensor<1024x1024xf32>)
      outs(%c : tensor<?x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x1024xf32>
  // expected-remark @+1 {{'f32' (never-touch)}}
  %1 = linalg.generic {indexing_maps = #ew,
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<?x1024xf32>) outs(%c : tensor<?x1024xf32>) {
  ^bb0(%x: f32, %out: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<?x1024xf32>
  return %1 : tensor<?x1024xf32>
}
