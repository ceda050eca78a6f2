// Input of report.mlir: a contrib op that ONNX shape inference could not
// type, and the MatMul it feeds, both kept their types (unknown-type).
func.func @f(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %g = onnxg.node "Gelu"(%x) domain "com.microsoft" opset 1
      {amp.precision = f32, amp.reason = "unknown-type"}
      : (tensor<64x64xf32>) -> !onnxg.unknown loc("gelu")
  %m = onnxg.node "MatMul"(%g, %w) opset 13
      {amp.precision = f32, amp.reason = "unknown-type"}
      : (!onnxg.unknown, tensor<64x64xf32>) -> tensor<64x64xf32> loc("mm")
  return %m : tensor<64x64xf32>
}
