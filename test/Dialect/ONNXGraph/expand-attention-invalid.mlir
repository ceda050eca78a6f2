// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(onnxg-expand-attention))' -split-input-file -verify-diagnostics

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @qk_output(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{node (Attention): qk_matmul_output does not lower yet}}
  %0:4 = onnxg.node "Attention"(%q, %q, %q) opset 23 attributes {qk_matmul_output_mode = 3 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, none, none, tensor<1x2x3x3xf32>)
  return %0#3 : tensor<1x2x3x3xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @heads_not_a_multiple(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32> {
  // expected-error @+1 {{node (Attention): the query heads (3) must be a static multiple of the key heads (2)}}
  %0 = onnxg.node "Attention"(%q, %k, %k) opset 23 : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32>
  return %0 : tensor<1x3x4x8xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @three_d_without_heads(%q: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{node (Attention): a 3-D Q needs q_num_heads and kv_num_heads that divide its hidden size}}
  %0 = onnxg.node "Attention"(%q, %q, %q) opset 23 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @causal_dynamic(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{node (Attention): is_causal needs static sequence lengths}}
  %0 = onnxg.node "Attention"(%q, %q, %q) opset 23 attributes {is_causal = 1 : i64} : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @mask_too_long(%q: tensor<1x2x3x8xf32>, %m: tensor<3x9xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{node (Attention): attn_mask covers 9 keys, not the 3 of past and present}}
  %0 = onnxg.node "Attention"(%q, %q, %q, %m) opset 23 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<3x9xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @rotary_odd(%x: tensor<1x2x3x8xf32>, %c: tensor<1x3x4xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{node (RotaryEmbedding): rotary_embedding_dim 5 must be even and at most the head size 8}}
  %0 = onnxg.node "RotaryEmbedding"(%x, %c, %c) opset 23 attributes {rotary_embedding_dim = 5 : i64} : (tensor<1x2x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}
}

// -----

module attributes {onnxg.opset_imports = [["", 23]]} {
func.func @rotary_cache_shape(%x: tensor<1x2x3x8xf32>, %c: tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{node (RotaryEmbedding): the caches must give [batch, sequence, 4] values, not 'tensor<1x3x2xf32>'}}
  %0 = onnxg.node "RotaryEmbedding"(%x, %c, %c) opset 23 : (tensor<1x2x3x8xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}
}
