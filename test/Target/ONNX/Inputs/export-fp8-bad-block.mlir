// BLOCK: error: block scaling of 'tensor<4x300xf32>' in blocks of [1, 128] has no ONNX form: each dimension must be static and a multiple of its block
module attributes {onnxg.opset_imports = [["", 19]]} {
  func.func @main(%x: tensor<4x300xf32> loc("x"), %s: tensor<4x3xf32> loc("s")) -> tensor<4x300xf8E4M3FN> {
    %q, %i = amp.quantize %x by %s {block = array<i64: 1, 128>} : tensor<4x300xf32>, tensor<4x3xf32> to tensor<4x300xf8E4M3FN>
    return %q : tensor<4x300xf8E4M3FN>
  }
}
