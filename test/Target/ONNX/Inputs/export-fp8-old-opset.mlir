// OPSET: error: FP8 types need ONNX opset 19 or later; the model imports opset 17
module attributes {onnxg.opset_imports = [["", 17]]} {
  func.func @main(%x: tensor<4xf32> loc("x"), %s: tensor<f32> loc("s")) -> tensor<4xf8E4M3FN> {
    %q, %i = amp.quantize %x by %s : tensor<4xf32>, tensor<f32> to tensor<4xf8E4M3FN>
    return %q : tensor<4xf8E4M3FN>
  }
}
