// RUN: amp-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(amp-linalg-to-grid-loops))'

#map = affine_map<(d0) -> (d0)>
func.func @tensors(%in: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be bufferized before amp-linalg-to-grid-loops}}
  %0 = linalg.generic {indexing_maps = [#map, #map],
                       iterator_types = ["parallel"]}
      ins(%in : tensor<4xf32>) outs(%in : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
