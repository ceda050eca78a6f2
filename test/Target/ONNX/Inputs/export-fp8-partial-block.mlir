// A dimension that its block does not divide is padded with zeros to whole
// blocks (no amax changes), and the scaled tensor sliced back.
// PARTIAL:      node 'a/padded' Pad(x, a/pads) -> (a/padded)
// PARTIAL:      node 'a/abs' Abs(
// PARTIAL:      node 'q/scaled/padded' Pad(x, q/scaled/pads) -> (q/scaled/padded)
// PARTIAL-NEXT: node 'q/scaled/blocked' Reshape(q/scaled/padded, q/scaled/blocks)
// PARTIAL:      node 'q/scaled/blocked_product' Mul(
// PARTIAL-NEXT: node 'q/scaled/unblocked' Reshape(q/scaled/blocked_product, q/scaled/padded_shape)
// PARTIAL-NEXT: node 'q/scaled' Slice(q/scaled/unblocked, q/scaled/starts, q/scaled/ends) -> (q/scaled)
// PARTIAL-NEXT: node 'q' Cast(q/scaled) -> (q) to=17
module attributes {onnxg.opset_imports = [["", 19]]} {
  func.func @main(%x: tensor<4x300xf32> loc("x"), %s: tensor<4x3xf32> loc("s")) -> (tensor<4x3xf32> {onnxg.name = "a"}, tensor<4x300xf8E4M3FN> {onnxg.name = "q"}) {
    %a = amp.amax %x {block = array<i64: 1, 128>} : tensor<4x300xf32> to tensor<4x3xf32> loc("a")
    %q, %i = amp.quantize %x by %s {block = array<i64: 1, 128>} : tensor<4x300xf32>, tensor<4x3xf32> to tensor<4x300xf8E4M3FN> loc(fused<"onnx.outputs">["quantize", "q", "q_inv"])
    return %a, %q : tensor<4x3xf32>, tensor<4x300xf8E4M3FN>
  }
}
