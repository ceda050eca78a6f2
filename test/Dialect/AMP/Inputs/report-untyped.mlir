// Input of report.mlir: an op of a custom domain that ONNX shape inference
// could not type, and the MatMul and Relu it feeds, which kept their types
// (unknown-type).
func.func @f(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = onnxg.node "CustomOpOne"(%x) domain "test.customop" opset 1
      : (tensor<64x64xf32>) -> !onnxg.unknown loc("custom")
  %m = onnxg.node "MatMul"(%c, %w) opset 13
      {amp.precision = f32, amp.reason = "unknown-type"}
      : (!onnxg.unknown, tensor<64x64xf32>) -> !onnxg.unknown loc("mm")
  %r = onnxg.node "Relu"(%m) opset 14
      {amp.precision = f32, amp.reason = "unknown-type"}
      : (!onnxg.unknown) -> tensor<64x64xf32> loc("relu")
  return %r : tensor<64x64xf32>
}
