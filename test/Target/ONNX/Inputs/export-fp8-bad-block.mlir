// BLOCK: error: block scaling of 'tensor<?x256xf32>' in blocks of [1, 128] has no ONNX form: each dimension must be static
module attributes {onnxg.opset_imports = [["", 19]]} {
  func.func @main(%x: tensor<?x256xf32> loc("x"), %s: tensor<?x2xf32> loc("s")) -> tensor<?x256xf8E4M3FN> {
    %q, %i = amp.quantize %x by %s {block = array<i64: 1, 128>} : tensor<?x256xf32>, tensor<?x2xf32> to tensor<?x256xf8E4M3FN>
    return %q : tensor<?x256xf8E4M3FN>
  }
}
