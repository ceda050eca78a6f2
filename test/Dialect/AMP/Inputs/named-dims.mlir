// Input of assign-precision-options.mlir: a MatMul whose batch dimension
// is the ONNX dim_param "batch".
func.func @f(%x: tensor<?x1024xf32> {onnxg.dims = ["batch", ""]},
             %w: tensor<1024x1024xf32>) -> tensor<?x1024xf32> {
  %m = onnxg.node "MatMul"(%x, %w) opset 13 {onnxg.dims = [["batch", ""]]}
      : (tensor<?x1024xf32>, tensor<1024x1024xf32>) -> tensor<?x1024xf32>
  return %m : tensor<?x1024xf32>
}
