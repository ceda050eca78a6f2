// Input of report.mlir: a MatMul whose batch dimension is named (ONNX
// dim_param "batch") and a Relu whose dynamic dimension has no name.
func.func @f(%x: tensor<?x32xf32> {onnxg.dims = ["batch", ""]},
             %w: tensor<32x32xf32>, %y: tensor<?xf32>)
    -> (tensor<?x32xf32>, tensor<?xf32>) {
  %m = onnxg.node "MatMul"(%x, %w) opset 13
      {amp.precision = f32, amp.reason = "cost-model",
       onnxg.dims = [["batch", ""]]}
      : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32> loc("mm")
  %r = onnxg.node "Relu"(%y) opset 14
      {amp.precision = f32, amp.reason = "follow"}
      : (tensor<?xf32>) -> tensor<?xf32> loc("relu")
  return %m, %r : tensor<?x32xf32>, tensor<?xf32>
}
