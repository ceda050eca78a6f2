// RUN: amp-opt %s --amp-insert-loss-scaling -split-input-file -verify-diagnostics
// RUN: not amp-opt %s --amp-insert-loss-scaling="mode=sometimes" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %s --amp-insert-loss-scaling="backoff-factor=2" 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not amp-opt %s --amp-insert-loss-scaling="init-scale=1e40" 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not amp-opt %s --amp-insert-loss-scaling="min-scale=8 max-scale=4" 2>&1 | FileCheck %s --check-prefix=BOUNDS

// MODE: error: amp-insert-loss-scaling: mode='sometimes' is not dynamic, static or none
// BACKOFF: error: amp-insert-loss-scaling: backoff-factor=2 does not lie in (0, 1)
// INIT: error: amp-insert-loss-scaling: init-scale=1e+40 is not a positive finite FP32 number
// BOUNDS: error: amp-insert-loss-scaling: min-scale=8 and max-scale=4 do not satisfy 0 < min <= max < inf

// expected-error @+1 {{the function has no amp.training attribute: run amp-analyze-training first}}
func.func @not_analyzed(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-warning @+1 {{no gradients found: loss scaling was not inserted and no barrier was placed}}
func.func @no_gradients(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {amp.training = {kind = "backward", loss = "", seeds = [], parameters = [], gradients = [], updates = []}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{amp.training names 'w_grad', which is no value of the graph}}
func.func @stale_names(%x: tensor<4xf32> loc("x")) -> tensor<4xf32>
    attributes {amp.training = {kind = "backward", loss = "", seeds = ["x"], parameters = ["x"], gradients = ["w_grad"], updates = []}} {
  return %x : tensor<4xf32>
}

// -----

// A step amp-opt converted before: its seeds are scaled already.
// expected-error @+1 {{the step already has loss scaling (metadata amp_opt.loss_scaling: amp-opt converted it before); convert the original step, or pass loss-scale=none}}
module attributes {onnxg.metadata_props = [["amp_opt.loss_scaling", "{\22mode\22:\22dynamic\22}"]]} {
  func.func @converted(%x: tensor<4xf32> loc("x")) -> tensor<4xf32>
      attributes {amp.training = {kind = "backward", loss = "", seeds = ["x"], parameters = ["x"], gradients = ["x"], updates = []}} {
    return %x : tensor<4xf32>
  }
}
