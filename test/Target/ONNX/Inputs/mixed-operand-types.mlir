// An Add of f32 and f16, which the verifier allows and onnx.checker does
// not (checker.test).
module attributes {onnxg.opset_imports = [["", 17]]} {
func.func @main(%a: tensor<4xf32> loc("a"), %b: tensor<4xf16> loc("b")) -> (tensor<4xf32> {onnxg.name = "y"}) {
  %y = onnxg.node "Add"(%a, %b) opset 17 : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32> loc(fused<"onnx.outputs">["add", "y"])
  return %y : tensor<4xf32>
}
}
